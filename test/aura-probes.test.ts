// Probe registries, the policy (a denied probe never reads state), the gap→budget map, the
// deterministic inferrer's structure rules, and the controller's budget ceiling.
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { Emitted } from "../actors/actor.ts";
import { sceneAgentLogic } from "../actors/aura/agent.ts";
import { sceneEnvLogic } from "../actors/aura/environment.ts";
import { analyseQuery, gapToBudget, type PerceivedScene } from "../actors/aura/intent.ts";
import { ENVIRONMENT_TOOLS, AGENT_STATE_TOOLS, policyDenies } from "../actors/aura/tools.ts";
import { auraSceneWorld, defaultSceneConfig } from "../actors/aura/world.ts";
import type { ProbeRequestedPayload } from "../actors/aura/events.ts";
import { recordsByQuery, sceneConfig } from "../services/aura/eval.ts";
import { loadImplicitBenchmark } from "../services/aura/benchmarks/implicit.ts";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { logRecords, tempDir } from "./helpers.ts";
import { join } from "node:path";

const SCENE_A = join(import.meta.dirname, "..", "data/aura/implicit_intent_scene_a.json");

/** State that throws when anything reads it: proves a denied probe never touches it. */
const untouchable = <T extends object>(label: string): T =>
  new Proxy({} as T, {
    get(_t, key) {
      if (typeof key === "symbol" || key === "toJSON") return undefined;
      throw new Error(`${label}.${String(key)} was read`);
    },
    ownKeys() {
      throw new Error(`${label} was enumerated`);
    },
    has() {
      throw new Error(`${label} was queried`);
    },
  });

function ask(logic: typeof sceneAgentLogic | typeof sceneEnvLogic, input: unknown, payload: Partial<ProbeRequestedPayload>): Emitted[] & { error?: unknown } {
  const out: Emitted[] & { error?: unknown } = [];
  const actor = createActor(logic as typeof sceneAgentLogic, { input: input as never });
  actor.on("*", (e: Emitted) => void out.push(e));
  actor.subscribe({ error: (e) => (out.error = e) });
  actor.start();
  actor.send({ type: "probe.requested", from: "probe/aura", tick: 0, seq: 1, payload: { queryId: "q", call: 1, target: null, field: null, args: {}, budgetBefore: 2, tool: "get_agent_private_state", ...payload } } as never);
  actor.stop();
  return out;
}

describe("probe registries and policy", () => {
  it("lists the 8 environment tools with the paper's disclosure costs and the 5 agent-state probes", () => {
    expect(Object.fromEntries(Object.values(ENVIRONMENT_TOOLS).map((t) => [t.name, t.disclosure]))).toEqual({
      get_time: 0, get_location: 0, get_nearby_agents: 0, get_all_agents: 1, get_recent_memories: 2, get_recent_events: 1, get_agent_plan: 1, get_location_info: 0,
    });
    expect(Object.keys(AGENT_STATE_TOOLS).sort()).toEqual(["get_agent_belief_about", "get_agent_plan", "get_agent_private_state", "get_all_agents", "get_nearby_agents"]);
  });

  it("matches globs case-insensitively, deny before allow, on the tool or tool:agent", () => {
    expect(policyDenies({ allow: ["*"], deny: [] }, "get_agent_private_state", "lin-wei")).toBeNull();
    expect(policyDenies({ allow: ["*"], deny: ["GET_AGENT_*"] }, "get_agent_private_state", null)).toMatch(/GET_AGENT_\*/);
    expect(policyDenies({ allow: ["*"], deny: ["get_agent_private_state:wang-*"] }, "get_agent_private_state", "wang-jun")).not.toBeNull();
    expect(policyDenies({ allow: ["*"], deny: ["get_agent_private_state:wang-*"] }, "get_agent_private_state", "lin-wei")).toBeNull();
    expect(policyDenies({ allow: ["get_time"], deny: [] }, "get_all_agents", null)).toMatch(/allow list/);
    expect(policyDenies({ allow: [], deny: [] }, "get_all_agents", null)).toBeNull();
  });

  it("a denied agent probe is answered with probe.denied and never reads the agent's state", () => {
    const input = { name: "Lin Wei", private: untouchable("private"), beliefs: untouchable("beliefs"), plan: untouchable("plan"), memories: untouchable("memories"), policy: { allow: ["*"], deny: ["get_agent_*"] } };
    for (const tool of ["get_agent_private_state", "get_agent_belief_about", "get_agent_plan"]) {
      const out = ask(sceneAgentLogic, input, { tool, target: "Lin Wei", args: { agent_name: "Lin Wei", believer: "Lin Wei", target: "Zhang Hao" } });
      expect(out.map((e) => e.type)).toEqual(["probe.denied"]);
      expect(out[0]!.to).toBe("probe/aura");
      expect((out[0]!.payload as { budgetAfter: number }).budgetAfter).toBe(1);
    }
    // Allowed, the same input is read (and throws): the proxy really guards the state.
    const allowed = ask(sceneAgentLogic, { ...input, policy: { allow: ["*"], deny: [] } }, { tool: "get_agent_private_state", target: "Lin Wei" });
    expect(String((allowed.error as Error | undefined)?.message)).toMatch(/was read|was enumerated/);
  });

  it("a denied environment probe never reads the public layer", () => {
    const scene = { ...defaultSceneConfig.scene };
    const env = createActor(sceneEnvLogic, { input: { scene, policy: { allow: ["*"], deny: ["get_all_agents"] }, asker: null, events: [] } });
    const out: Emitted[] = [];
    env.on("*", (e: Emitted) => void out.push(e));
    env.start();
    // Swap the public layer for one that throws when read, after construction.
    (env.getSnapshot().context as { public: unknown }).public = untouchable("public");
    env.send({ type: "probe.requested", from: "probe/aura", tick: 0, seq: 1, payload: { queryId: "q", call: 1, target: null, field: null, args: {}, budgetBefore: 1, tool: "get_all_agents" } } as never);
    expect(out.map((e) => e.type)).toEqual(["probe.denied"]);
    expect(env.getSnapshot().context.answered).toBe(0);
    env.stop();
  });
});

describe("gap → budget", () => {
  it("maps [0,.2)→0, [.2,.4)→1, [.4,.6)→2, [.6,.8)→3, [.8,1]→5, capped by maxSteps and clamped", () => {
    const cases: Array<[number, number]> = [[0, 0], [0.19, 0], [0.2, 1], [0.39, 1], [0.4, 2], [0.59, 2], [0.6, 3], [0.79, 3], [0.8, 5], [1, 5], [1.7, 5], [-1, 0], [Number.NaN, 0]];
    for (const [g, b] of cases) expect(gapToBudget(g, 10)).toBe(b);
    expect(gapToBudget(0.9, 3)).toBe(3);
    expect(gapToBudget(0.5, 1)).toBe(1);
    expect(gapToBudget(0.9, -2)).toBe(0);
  });
});

describe("deterministic inferrer", () => {
  const scene: PerceivedScene = {
    summary: "Quay, 08:05.",
    time: "08:05",
    focus: "Fish Quay",
    public: { "Ola Nordmann": { location: "Fish Quay", action: "mending nets" }, "Kari Hansen": { location: "Fish Quay", action: "selling cod" }, "Per Olsen": { location: "Lighthouse", action: "painting" } },
  };
  it("routes mental-state questions to the believer's belief about the other, never the other's state", () => {
    for (const q of ["Does Kari Hansen reckon Per Olsen is annoyed with her?", "According to Per Olsen, is Ola Nordmann around?", "From Ola Nordmann's point of view, is Kari Hansen free?"]) {
      const a = analyseQuery(q, scene);
      expect(a.secondOrder, q).not.toBeNull();
      expect(a.hidden).toEqual([]);
    }
    expect(analyseQuery("Does Kari Hansen reckon Per Olsen is annoyed with her?", scene).secondOrder).toMatchObject({ believer: "Kari Hansen", target: "Per Olsen", fields: ["availability", "emotional_state"] });
    expect(analyseQuery("Does Kari Hansen think Per Olsen is planning to leave?", scene).secondOrder?.fields).toContain("unspoken_goal");
    expect(analyseQuery("I think Kari Hansen and Per Olsen are busy?", scene).secondOrder).toBeNull();
  });
  it("reads the topic from structure: a named person, a place's occupants, or everyone", () => {
    expect(analyseQuery("Where's Per Olsen?", scene).scope).toEqual({ kind: "person", agents: ["Per Olsen"] });
    expect(analyseQuery("Who is down at the quay?", scene).scope).toMatchObject({ kind: "location", location: "Fish Quay" });
    expect(analyseQuery("Is anybody upset this morning?", scene).scope).toMatchObject({ kind: "all" });
    expect(analyseQuery("What time is it?", scene).scope).toEqual({ kind: "none" });
    expect(analyseQuery("Should I ask Ola Nordmann for help?", scene).hidden).toEqual(["availability", "emotional_state", "unspoken_goal"]);
    expect(analyseQuery("What is Kari Hansen planning for tonight?", scene).wantsPlan).toBe(true);
  });
});

describe("controller", () => {
  const bench = loadImplicitBenchmark(SCENE_A);
  const scene = bench.scenes.A_cafe_morning!;
  const queries = bench.queries.filter((q) => q.scene === "A_cafe_morning");

  for (const maxSteps of [0, 1, 2]) {
    it(`never makes more probes than B(gap) capped at maxSteps = ${maxSteps}`, async () => {
      for (const condition of ["aura-intent-nomemory", "no-intent", "plan-and-solve", "fixed-private"]) {
        const dir = join(tempDir(`aura-budget-${maxSteps}`), condition);
        await runEpisode({ world: "aura-scene", seed: 7, condition, dir, config: sceneConfig(bench, scene, queries, 7, maxSteps, { allow: ["*"], deny: [] }), trace: { exporter: "none" }, snapshotEvery: 0 });
        for (const [, { records }] of recordsByQuery(logRecords(dir))) {
          const probes = records.filter((r) => r.type === "probe.requested");
          expect(probes.length).toBeLessThanOrEqual(maxSteps);
          const intent = records.find((r) => r.type === "intent.inferred")?.payload as { maxSteps: number } | undefined;
          if (intent !== undefined) expect(probes.length).toBeLessThanOrEqual(intent.maxSteps);
          for (const p of probes) expect((p.payload as ProbeRequestedPayload).budgetBefore).toBeGreaterThan(0);
          expect(records.filter((r) => r.type === "answer.given")).toHaveLength(1);
        }
      }
    });
  }

  it("a deny policy is enforced by the answering actor: denied probes are logged and read nothing", async () => {
    const dir = join(tempDir("aura-deny"), "ep");
    await runEpisode({ world: "aura-scene", seed: 1, condition: "fixed-private", dir, config: sceneConfig(bench, scene, queries, 1, 3, { allow: ["*"], deny: ["get_agent_private_state"] }), trace: { exporter: "none" }, snapshotEvery: 0 });
    const records = logRecords(dir);
    expect(records.filter((r) => r.type === "probe.denied").length).toBeGreaterThan(0);
    expect(records.filter((r) => r.type === "probe.answered" && (r.payload as { tool: string }).tool === "get_agent_private_state")).toHaveLength(0);
    expect(auraSceneWorld.conditions["aura-intent"]).toBeDefined();
  });
});

describe("forks of a scene", () => {
  it("a fork into another condition runs that condition: its answers after the fork are a fresh run's of it, and the parent's own condition reproduces the parent", async () => {
    const bench = loadImplicitBenchmark(SCENE_A);
    const scene = bench.scenes.A_cafe_morning!;
    const queries = bench.queries.filter((q) => q.scene === "A_cafe_morning").slice(0, 3);
    const config = sceneConfig(bench, scene, queries, 5, 3, { allow: ["*"], deny: [] });
    const work = tempDir("aura-fork");
    const run = (condition: string) => runEpisode({ world: "aura-scene", seed: 5, condition, dir: join(work, condition), config, trace: { exporter: "none" } });
    await run("aura-intent");
    await run("literal");
    const answers = (dir: string) => logRecords(dir).filter((r) => r.type === "answer.given" && r.tick > 0).map((r) => r.payload);
    const probes = (dir: string) => logRecords(dir).filter((r) => r.type === "probe.requested" && r.tick > 0).length;
    expect(probes(join(work, "aura-intent"))).toBeGreaterThan(0);
    const child = join(work, "to-literal");
    await forkEpisode({ parent: join(work, "aura-intent"), atTick: 0, condition: "literal", dir: child, trace: { exporter: "none" } });
    expect(probes(child)).toBe(0);
    expect(answers(child)).toEqual(answers(join(work, "literal")));
    expect((await verifyEpisode(child)).ok).toBe(true);
    const back = join(work, "back-to-intent");
    await forkEpisode({ parent: join(work, "literal"), atTick: 0, condition: "aura-intent", dir: back, trace: { exporter: "none" } });
    expect(probes(back)).toBeGreaterThan(0);
    const same = join(work, "same");
    await forkEpisode({ parent: join(work, "aura-intent"), atTick: 0, condition: "aura-intent", dir: same, trace: { exporter: "none" } });
    expect(answers(same)).toEqual(answers(join(work, "aura-intent")));
  });
});

describe("telemetry", () => {
  it("every probe has a `probe <tool>` span with target, allowed and budget before/after", async () => {
    const bench = loadImplicitBenchmark(SCENE_A);
    const scene = bench.scenes.A_cafe_morning!;
    const queries = bench.queries.filter((q) => q.scene === "A_cafe_morning");
    const dir = join(tempDir("aura-spans"), "ep");
    const trace = join(dir, "..", "trace.jsonl");
    await runEpisode({ world: "aura-scene", seed: 3, condition: "fixed-private", dir, config: sceneConfig(bench, scene, queries, 3, 3, { allow: ["*"], deny: ["get_agent_belief_about"] }), trace: { exporter: "jsonl", file: trace }, snapshotEvery: 0 });
    const { readFileSync } = await import("node:fs");
    const spans = readFileSync(trace, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown> });
    const probes = spans.filter((s) => s.name.startsWith("probe "));
    const records = logRecords(dir).filter((r) => r.type === "probe.requested");
    expect(probes).toHaveLength(records.length);
    const denied = probes.filter((s) => s.attributes["probetown.probe.allowed"] === false);
    expect(denied.length).toBe(5); // the five second-order queries
    expect(denied[0]).toMatchObject({ name: "probe get_agent_belief_about", attributes: { "probetown.probe.budget_before": 3, "probetown.probe.budget_after": 2, "probetown.probe.useful": false } });
  });
});
