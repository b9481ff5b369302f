// Option `tracking` (not the paper's; absent by default): the scripted agent's imperfect tracking.
// Off, every episode's records are what they were before the option existed; on, a field the agent
// can see goes stale when a step does not take it in, and a probe answer repairs it; the lapses are
// the same for every policy of a (world, seed) (paired conditions).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { handlersByType, type Emitted } from "../actors/actor.ts";
import { agentHandlers, initialAgentContext, type AgentContext } from "../actors/envprobe/agent.ts";
import { GRID_POLICIES, type EnvprobeConfig } from "../actors/envprobe/config.ts";
import { DAG } from "../actors/envprobe/kinds/tooldag.ts";
import { envprobeWorld, inputsOf, worldSpecOf } from "../actors/envprobe/world.ts";
import { runDirect } from "../services/envprobe/direct.ts";

const configOf = (raw: object, policy: string): EnvprobeConfig => envprobeWorld.applyCondition(envprobeWorld.resolveConfig(raw), policy);
const deliver = (ctx: AgentContext, type: string, payload: unknown, t: number): Emitted[] =>
  handlersByType(agentHandlers)[type]!(ctx, { type, payload, from: "env/envprobe", tick: t - 1, seq: 0 });
interface Payload { t?: number; kind?: string; seen?: string[]; set?: [number, string][]; answer?: [number, string][]; wrong?: number[] }
const sha = (lines: readonly string[]) => createHash("sha256").update(lines.join("")).digest("hex").slice(0, 16);

describe("option tracking (imperfect tracking; off by default)", () => {
  it("off: an episode's records are byte-identical to those written before the option existed", () => {
    // Hashes of the whole logs written by the code before this option (commit 152160f).
    const before: Array<[string, string, number, number, string]> = [
      ["tooldag", "envprobe-simple", 3, 139, "c2cb2eacd7e58121"],
      ["tooldag", "periodic", 7, 100, "103b3e832160c522"],
      ["objectstate", "self-uncertainty", 2, 190, "086b68ce1852121d"],
      ["graphnav", "random", 4, 126, "fea4c48b3f9c2c7f"],
    ];
    for (const [world, policy, seed, records, hash] of before) {
      const r = runDirect({ config: { world, regime: "medium" }, policy, seed });
      expect([r.records, sha(r.lines)], `${world} ${policy} s${seed}`).toEqual([records, hash]);
      expect(JSON.parse(r.lines[0]!).payload.config).not.toHaveProperty("tracking");
    }
    expect(initialAgentContext(inputsOf(configOf({ world: "tooldag" }, "periodic"), 1).agent)).not.toHaveProperty("tracking");
    // lapse 0 behaves as off (only the header, which records the option, differs).
    const off = runDirect({ config: { world: "tooldag", regime: "medium" }, policy: "envprobe-simple", seed: 3 });
    const zero = runDirect({ config: { world: "tooldag", regime: "medium", tracking: { lapse: 0 } }, policy: "envprobe-simple", seed: 3 });
    expect(zero.metrics).toEqual(off.metrics);
  });

  it("refuses probabilities outside 0..1 and the LLM agent (whose model does its own tracking)", () => {
    expect(() => envprobeWorld.resolveConfig({ world: "tooldag", tracking: { lapse: 1.5 } })).toThrow(/tracking\.lapse: expected a probability 0\.\.1, got 1\.5/);
    expect(() => envprobeWorld.resolveConfig({ world: "tooldag", tracking: { lapse: 0.2, persist: -1 } })).toThrow(/tracking\.persist/);
    expect(() => envprobeWorld.resolveConfig({ world: "tooldag", tracking: { lapse: 0.2 }, llm: { belief: "m" } })).toThrow(/tracking: models the scripted agent/);
  });

  it("a step not taken in leaves a visible field as it was (value and last-verified step); a probe answer repairs it", () => {
    // lapse 1: no step is ever taken in, so only probe answers reach the table.
    const { agent } = inputsOf(configOf({ world: "tooldag", regime: "medium", tracking: { lapse: 1, persist: 1 } }, "no-probe"), 0);
    const ctx = initialAgentContext(agent);
    const l = agent.layout;
    const v0 = DAG.v(l, 0);
    const done0 = DAG.done(l, 0);
    expect([ctx.values[v0], ctx.values[done0]]).toEqual(["0", "0"]);
    deliver(ctx, "tick.started", { clock: {}, tick: 0 }, 1);
    // The agent called t_0: the outcome and the observation both show v_0 available and t_0 done.
    const stepped = { t: 1, kind: "act", action: "call_tool(t_0)", valid: true, reason: "ok", answer: [], extra: {}, obs: [], seen: ["v_0", "t_0"], done: false, success: false, useful: false, probesUsed: 0 };
    const out = deliver(ctx, "envprobe.stepped", stepped, 1);
    expect([ctx.values[v0], ctx.values[done0], ctx.verified[v0]]).toEqual(["0", "0", 0]); // stale: as it was at step 0
    expect((out[0]!.payload as { set: unknown[] }).set).toEqual([]);
    expect(ctx.stale[v0]).toBe(1); // its age grows: the agent's own record says it was not checked
    // A probe of the variable: the answer is taken in.
    deliver(ctx, "tick.started", { clock: {}, tick: 1 }, 2);
    deliver(ctx, "envprobe.stepped", { ...stepped, t: 2, kind: "probe", action: "check_variable_exists(v_0)", answer: [[v0, "1"]], seen: ["v_0", "t_0"] }, 2);
    expect([ctx.values[v0], ctx.verified[v0], ctx.values[done0]]).toEqual(["1", 2, "0"]);

    // Without the option the same step is taken in at once.
    const plain = initialAgentContext(inputsOf(configOf({ world: "tooldag", regime: "medium" }, "no-probe"), 0).agent);
    deliver(plain, "tick.started", { clock: {}, tick: 0 }, 1);
    deliver(plain, "envprobe.stepped", stepped, 1);
    expect([plain.values[v0], plain.values[done0]]).toEqual(["1", "1"]);
  });

  it("in an episode (ToolDAG, lapse 0.3, fixed seed): a field the observation showed goes stale, and a probe repairs it", () => {
    const raw = { world: "tooldag", regime: "medium", tracking: { lapse: 0.3 } };
    const found = (() => {
      for (let seed = 0; seed < 40; seed++) {
        const names = worldSpecOf(envprobeWorld.resolveConfig(raw), seed).layout.fields.map((f) => f.name);
        const r = runDirect({ config: raw, policy: "oracle", seed });
        const belief = [...worldSpecOf(envprobeWorld.resolveConfig(raw), seed).initial];
        let seen: string[] = [];
        const stale = new Map<number, number>(); // field → step it was seen but not taken in
        for (const line of r.lines) {
          const { type, payload: p } = JSON.parse(line) as { type: string; payload: Payload };
          if (type === "envprobe.stepped") seen = p.seen!;
          if (type === "envprobe.believed") for (const [i, v] of p.set!) belief[i] = v;
          if (type === "envprobe.stepped" && p.kind === "probe") {
            for (const [i, v] of p.answer!) {
              const since = stale.get(i);
              if (since !== undefined && belief[i] !== v) return { seed, field: names[i]!, since, repairedAt: p.t!, i };
            }
          }
          if (type === "envprobe.scored") {
            for (const i of p.wrong!) {
              const m = /^(var|done):[vt]_(\d+)$/.exec(names[i]!);
              if (m === null) continue;
              // What the step's observation showed (a completed tool implies its variable).
              const shown = seen.includes(`t_${m[2]}`) || (m[1] === "var" && seen.includes(`v_${m[2]}`)) ? "1" : "0";
              if (shown !== belief[i] && !stale.has(i)) stale.set(i, p.t!);
            }
          }
        }
      }
      return null;
    })();
    expect(found).not.toBeNull();
    const { seed, field, since, repairedAt } = found!;
    expect({ seed, field, since, repairedAt }).toEqual({ seed: 0, field: expect.stringMatching(/^(var|done):/), since: expect.any(Number), repairedAt: expect.any(Number) });
    expect(repairedAt).toBeGreaterThan(since);
    // The repair is real: the probed field is right in the step's score.
    const r = runDirect({ config: raw, policy: "oracle", seed });
    const scored = r.lines.map((x) => JSON.parse(x) as { type: string; payload: { t: number; wrong: number[] } }).find((x) => x.type === "envprobe.scored" && x.payload.t === repairedAt)!;
    expect(scored.payload.wrong).not.toContain(found!.i);
  });

  it("every policy of a (world, seed) sees the same lapses, step by step (paired conditions)", () => {
    // The table is wrapped in place (runDirect looks handlers up in it): its entries are not readonly here.
    const table: { -readonly [K in keyof typeof agentHandlers]: (typeof agentHandlers)[K] } = agentHandlers;
    const handler = table["envprobe.stepped"];
    const seen: string[][] = [];
    let current: string[] = [];
    table["envprobe.stepped"] = (ctx, e) => {
      const out = handler(ctx, e);
      current.push(ctx.tracking!.lapsed.join(""));
      return out;
    };
    try {
      for (const policy of [...GRID_POLICIES, "envprobe-minus-c", "envprobe-minus-d"]) {
        current = [];
        runDirect({ config: { world: "tooldag", regime: "medium", tracking: { lapse: 0.3, persist: 0.6 } }, policy, seed: 11 });
        seen.push(current);
      }
    } finally {
      table["envprobe.stepped"] = handler;
    }
    // Episodes end at different steps (success); up to the shorter one, the lapses are identical.
    const shortest = Math.min(...seen.map((s) => s.length));
    expect(shortest).toBeGreaterThan(5);
    for (const s of seen) expect(s.slice(0, shortest)).toEqual(seen[0]!.slice(0, shortest));
    // … and they are not trivial: some fields lapse, some do not.
    expect(seen[0]!.join("")).toMatch(/1/);
    expect(seen[0]!.join("")).toMatch(/0/);
  });
});
