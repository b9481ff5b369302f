// Probe write-back (paper Def. 3.1: b_{t+1} ← g_t), the release's missing piece (reference §0.1):
// a probe of a wrongly believed field makes it right in the next step's beliefs and changes the
// agent's next action; with writeBack off (the release's behaviour) nothing changes.
import { describe, expect, it } from "vitest";
import { handlersByType, type Emitted } from "../actors/actor.ts";
import { agentHandlers, initialAgentContext, type AgentContext } from "../actors/envprobe/agent.ts";
import { envprobeWorld, inputsOf } from "../actors/envprobe/world.ts";
import { NAV } from "../actors/envprobe/kinds/graphnav.ts";
import { probe } from "../actors/envprobe/kinds/operations.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import type { EnvprobeConfig } from "../actors/envprobe/config.ts";

const deliver = (ctx: AgentContext, type: string, payload: unknown, t: number): Emitted[] =>
  handlersByType(agentHandlers)[type]!(ctx, { type, payload, from: "env/envprobe", tick: t - 1, seq: 0 });

const decided = (out: Emitted[]) => out[0]!.payload as { action: string; kind: string; field: number };

/**
 * A graphnav seed whose no-probe agent's first move crosses an edge it wrongly believes open. The
 * paper's agent starts with b₀ = g₀ (no wrong belief at step 0), so the scenario takes the guessed
 * priors (option initialBeliefs "guess"), where edges are assumed open.
 */
function scenario(writeBack: boolean) {
  const base = envprobeWorld.resolveConfig({ world: "graphnav", regime: "medium", writeBack, initialBeliefs: "guess" });
  const config: EnvprobeConfig = envprobeWorld.applyCondition(base, "no-probe");
  for (let seed = 0; seed < 500; seed++) {
    const { agent, env } = inputsOf(config, seed);
    const ctx = initialAgentContext(agent);
    const first = decided(deliver(ctx, "tick.started", { clock: {}, tick: 0 }, 1));
    const m = /^move_to\(n_(\d+)\)$/.exec(first.action);
    if (m === null) continue;
    const to = Number(m[1]);
    const e = agent.layout.edges.findIndex(([a, b]) => (a === 0 && b === to) || (a === to && b === 0));
    const field = NAV.edge(agent.layout, e);
    if (env.spec.initial[field] !== "locked") continue;
    const [a, b] = agent.layout.edges[e]!;
    return { seed, env, ctx, first, field, probeText: `check_edge(n_${a},n_${b})` };
  }
  throw new Error("no seed whose first move crosses a locked edge");
}

const probeStep = (action: string, answer: ReturnType<typeof probe>) => ({
  action, answer: answer.pairs, done: false, extra: answer.extra, kind: "probe",
  obs: [[0, "n_0"]], probesUsed: 1, reason: "ok", seen: [], success: false, t: 1, useful: true, valid: true,
});

describe("envprobe probe write-back", () => {
  it("a probe of a wrong field makes it right in the next step's beliefs and changes the next action", () => {
    const { env, ctx, first, field, probeText } = scenario(true);
    expect(ctx.values[field]).toBe("open"); // the prior: wrong
    const answer = probe(env.spec, env.spec.initial, probeText);
    expect(answer.pairs).toEqual([[field, "locked"]]);
    const believed = deliver(ctx, "envprobe.stepped", probeStep(probeText, answer), 1);
    expect(ctx.values[field]).toBe("locked");
    expect(ctx.verified[field]).toBe(1);
    expect((believed[0]!.payload as { set: [number, string, number, number][] }).set).toContainEqual([field, "locked", 1, 2]);
    const next = decided(deliver(ctx, "tick.started", { clock: {}, tick: 1 }, 2));
    expect(next.action).not.toBe(first.action);
  });

  it("without write-back (the release's defect) the belief stays wrong and the agent walks into the locked edge", () => {
    const { env, ctx, first, field, probeText } = scenario(false);
    deliver(ctx, "envprobe.stepped", probeStep(probeText, probe(env.spec, env.spec.initial, probeText)), 1);
    expect(ctx.values[field]).toBe("open");
    expect(decided(deliver(ctx, "tick.started", { clock: {}, tick: 1 }, 2)).action).toBe(first.action);
  });

  it("in whole episodes every answered field is written back and scored right unless that step's mutation changed it", () => {
    let checked = 0;
    for (const world of ["objectstate", "tooldag", "graphnav"]) {
      for (let seed = 0; seed < 6; seed++) {
        const r = runDirect({ config: { world, regime: "medium" }, policy: "envprobe-simple", seed });
        const recs = r.lines.map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
        for (let i = 0; i < recs.length; i++) {
          const s = recs[i]!;
          if (s.type !== "envprobe.stepped" || s.payload.kind !== "probe") continue;
          const t = s.payload.t as number;
          const mutated = new Set(recs.filter((x) => x.type === "envprobe.mutated" && x.payload.t === t).flatMap((x) => (x.payload.changes as [number][]).map((c) => c[0])));
          const believed = recs.slice(i).find((x) => x.type === "envprobe.believed")!.payload.set as [number, string, number, number][];
          const scored = recs.slice(i).find((x) => x.type === "envprobe.scored")!.payload.wrong as number[];
          for (const [field, value] of s.payload.answer as [number, string][]) {
            const entries = believed.filter((b) => b[0] === field);
            // Written back first (the observation that follows may override it: a mutation, or noise).
            expect(entries[0]?.[1]).toBe(value);
            const overridden = entries.some((e) => e[1] !== value);
            if (!mutated.has(field) && !overridden) expect(scored).not.toContain(field);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
