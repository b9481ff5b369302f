// The Memory stage (actors/aura/memory.ts: the paper's A23 retrieval), answer reuse as a named
// condition, the baselines' shared analysis (no keyword lists of their own), disclosure beyond the
// need in the rule judge, and per-file (split) reporting of `eval implicit`.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { importanceOf, recencyOf, relevanceOf, remember, retrieve, scoreOf, type MemoryItem } from "../actors/aura/memory.ts";
import { analyseQuery } from "../actors/aura/intent.ts";
import type { AnswerGivenPayload, IntentInferredPayload, ProbeRequestedPayload } from "../actors/aura/events.ts";
import type { LogRecord } from "../events/record.ts";
import { loadImplicitBenchmark } from "../services/aura/benchmarks/implicit.ts";
import { judgeQuery, needOf } from "../services/aura/benchmarks/judge.ts";
import { recordsByQuery, runImplicitEvals, sceneConfig } from "../services/aura/eval.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { logRecords, runCliAsSpawned, tempDir } from "./helpers.ts";

const root = join(import.meta.dirname, "..");
const SCENE_A = join(root, "data/aura/implicit_intent_scene_a.json");
const HELD_OUT = join(root, "test/fixtures/aura-heldout-scene.json");
const MINI = join(root, "test/fixtures/aura-split-mini.json");

const item = (over: Partial<MemoryItem>): MemoryItem => ({ content: "x", t: 1, importance: 5, kind: "observation", ...over });

describe("memory retrieval (paper A23)", () => {
  it("scores 0.3·exp(−0.01·Δt) + 0.4·importance/10 + 0.3·relevance, relevance as the release's word overlap", () => {
    expect(recencyOf(11, 1)).toBeCloseTo(Math.exp(-0.1), 12);
    expect(recencyOf(0, 5)).toBe(1); // current_time ≤ 0: recency 1, as TownMemory.retrieve
    expect(recencyOf(3, 5)).toBe(1); // an item from the future is not older than now
    expect(relevanceOf("where is lin wei", "lin wei is busy")).toBe(0.75);
    expect(relevanceOf("Where is Lin Wei?", "Lin Wei: busy")).toBe(0.25); // whitespace tokens, punctuation kept
    expect(relevanceOf("", "anything")).toBe(0.5);
    const m = item({ content: "lin wei is busy", t: 1, importance: 8 });
    expect(scoreOf(m, "where is lin wei", 11)).toBeCloseTo(0.3 * Math.exp(-0.1) + 0.4 * 0.8 + 0.3 * 0.75, 4);
  });

  it("the importance rule: queries 3, refusals 1, answers 2 + 2·disclosure cost (private state 8, belief 6, plan 4, public 2)", () => {
    expect(importanceOf({ kind: "query" })).toBe(3);
    expect(importanceOf({ kind: "observation", ok: false, disclosure: 3 })).toBe(1);
    expect([0, 1, 2, 3, 9].map((d) => importanceOf({ kind: "observation", ok: true, disclosure: d }))).toEqual([2, 4, 6, 8, 10]);
  });

  it("retrieves the best 5, earlier-stored first on ties, and drops the lowest (importance, t) beyond capacity", () => {
    const items = [1, 2, 3, 4, 5, 6, 7].map((t) => item({ content: `item ${t}`, t, importance: t === 2 ? 9 : 4 }));
    const got = retrieve(items, "nothing in common", 7);
    expect(got).toHaveLength(5);
    expect(got[0]!.content).toBe("item 2"); // importance outweighs recency here
    expect(got.slice(1).map((x) => x.t)).toEqual([7, 6, 5, 4]); // then the most recent
    const tie = retrieve([item({ content: "a" }), item({ content: "b" })], "z", 1);
    expect(tie.map((x) => x.content)).toEqual(["a", "b"]);
    let store: MemoryItem[] = [];
    for (const [t, importance] of [[1, 5], [2, 1], [3, 1], [4, 7]] as const) store = remember(store, item({ t, importance }), 3);
    expect(store.map((x) => [x.t, x.importance])).toEqual([[1, 5], [3, 1], [4, 7]]);
  });
});

describe("the Memory stage in the controller, and reuse as a named condition", () => {
  const bench = loadImplicitBenchmark(SCENE_A);
  const scene = bench.scenes.A_cafe_morning!;
  const queries = bench.queries.filter((q) => q.scene === "A_cafe_morning");
  const run = async (condition: string): Promise<LogRecord[]> => {
    const dir = join(tempDir(`aura-mem-${condition}`), "ep");
    await runEpisode({ world: "aura-scene", seed: 42, condition, dir, config: sceneConfig(bench, scene, queries, 42, 3, { allow: ["*"], deny: [] }), trace: { exporter: "none" }, snapshotEvery: 0 });
    expect((await verifyEpisode(dir)).ok).toBe(true);
    return logRecords(dir);
  };
  const intents = (records: readonly LogRecord[]) => records.filter((r) => r.type === "intent.inferred").map((r) => r.payload as IntentInferredPayload);

  it("aura-intent logs what it retrieved with each frame (≤ 5, best first, earlier queries and probe answers) and reuses no answer", async () => {
    const records = await run("aura-intent");
    const frames = intents(records);
    expect(frames).toHaveLength(25);
    expect(frames[0]!.memories).toEqual([]); // nothing perceived before the first query
    for (const f of frames.slice(1)) {
      expect(f.memories!.length).toBeGreaterThan(0);
      expect(f.memories!.length).toBeLessThanOrEqual(5);
      const scores = f.memories!.map((m) => m.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(f.fromMemory).toEqual([]);
    }
    const kinds = new Set(frames.flatMap((f) => f.memories!.map((m) => m.kind)));
    expect(kinds).toEqual(new Set(["query", "observation"]));
    // Private-state answers (importance 8) outrank the queries (3) that asked for them.
    expect(frames.at(-1)!.memories![0]).toMatchObject({ kind: "observation", importance: 8 });
    // Without reuse, every answer's private facts come from this query's own probes.
    for (const r of records.filter((x) => x.type === "answer.given")) for (const f of (r.payload as AnswerGivenPayload).facts) expect(f.source.startsWith("memory:")).toBe(false);
  });

  it("aura-intent-reuse answers from earlier reads (fewer probes), aura-intent-nomemory retrieves nothing", async () => {
    const [plain, reuse, none] = [await run("aura-intent"), await run("aura-intent-reuse"), await run("aura-intent-nomemory")];
    const probes = (rs: readonly LogRecord[]) => rs.filter((r) => r.type === "probe.requested").length;
    expect(probes(reuse)).toBeLessThan(probes(plain) / 2);
    expect(intents(reuse).some((f) => f.fromMemory.length > 0)).toBe(true);
    expect(reuse.some((r) => r.type === "answer.given" && (r.payload as AnswerGivenPayload).facts.some((f) => f.source.startsWith("memory:")))).toBe(true);
    for (const f of intents(none)) expect(f.memories).toBeUndefined();
    expect(probes(none)).toBe(probes(plain));
  });
});

describe("baselines read the query with the shared analyser", () => {
  for (const file of [SCENE_A, HELD_OUT]) {
    it(`NoIntent and Plan-and-Solve probe the literal request only (${file.split("/").at(-1)})`, async () => {
      const bench = loadImplicitBenchmark(file);
      for (const [name, scene] of Object.entries(bench.scenes)) {
        const queries = bench.queries.filter((q) => q.scene === name);
        const perceived = { summary: scene.summary, time: null, focus: "", public: scene.public_state };
        const byCondition: Record<string, Map<string, string[]>> = {};
        for (const condition of ["no-intent", "plan-and-solve"]) {
          const dir = join(tempDir(`aura-literal-${condition}`), "ep");
          await runEpisode({ world: "aura-scene", seed: 5, condition, dir, config: sceneConfig(bench, scene, queries, 5, 3, { allow: ["*"], deny: [] }), trace: { exporter: "none" }, snapshotEvery: 0 });
          const m = new Map<string, string[]>();
          for (const [id, { records }] of recordsByQuery(logRecords(dir))) {
            const q = queries.find((x) => String(x.id) === id)!;
            const a = analyseQuery(q.text, perceived);
            const calls = records.filter((r) => r.type === "probe.requested").map((r) => r.payload as ProbeRequestedPayload);
            // Who in a group is asked first comes from each condition's own tie-break stream.
            m.set(id, calls.map((c) => c.tool).sort());
            for (const c of calls) {
              if (c.tool === "get_agent_belief_about") expect(a.secondOrder, `${id} belief`).not.toBeNull();
              else if (c.tool === "get_agent_private_state") expect(a.asked.length > 0 && a.secondOrder === null, `${id} private`).toBe(true);
              else if (c.tool === "get_agent_plan") expect(a.literal.includes("plan"), `${id} plan`).toBe(true);
              else throw new Error(`${condition} ${id}: unexpected ${c.tool}`);
            }
            if (a.secondOrder !== null) expect(calls.map((c) => c.tool)).toEqual(["get_agent_belief_about"]);
            if (a.secondOrder === null && a.asked.length === 0 && !a.literal.includes("plan")) expect(calls).toEqual([]);
            // The answer states only the private fields the wording asked for.
            const answer = records.find((r) => r.type === "answer.given")!.payload as AnswerGivenPayload;
            for (const f of answer.facts.filter((x) => x.kind === "state")) expect(a.asked.some((k) => f.field === k || (k === "emotional_state" && f.field === "mood")), `${id} ${f.field}`).toBe(true);
          }
          byCondition[condition] = m;
        }
        // The same request, planned once or explored step by step: the same tools offline.
        expect([...byCondition["plan-and-solve"]!]).toEqual([...byCondition["no-intent"]!]);
      }
    });
  }
});

describe("disclosure beyond the need (rule judge)", () => {
  const bench = loadImplicitBenchmark(MINI);
  const scene = bench.scenes.M_harbour_dusk!;
  const q = (id: number) => bench.queries.find((x) => x.id === String(id))!;
  let seq = 0;
  const rec = (type: string, payload: unknown): LogRecord => ({ type, payload, tick: 0, seq: seq++, from: "x", to: null } as unknown as LogRecord);
  const state = (agent: string, field: string, value: string) => ({ agent, field, kind: "state" as const, source: "probe", target: null, value });
  const answer = (facts: unknown[]) => rec("answer.given", { alert: null, backend: "deterministic", condition: "c", disclosure: 0, facts, probes: 0, queryId: "1", text: "" });
  const privateRead = (agent: string) => [
    rec("probe.requested", { args: { agent_name: agent }, budgetBefore: 3, call: 1, field: null, queryId: "1", target: agent, tool: "get_agent_private_state" }),
    rec("probe.answered", { budgetAfter: 2, call: 1, disclosure: 3, ok: true, queryId: "1", result: { agent, ...scene.private_state[agent] }, target: agent, tool: "get_agent_private_state" }),
  ];

  it("the need is the query's private items; stated and read items beyond it are counted once each", () => {
    expect([...needOf(q(801), scene)]).toEqual(["state:Iris Vale:availability"]);
    expect([...needOf(q(803), scene)]).toEqual(["belief:Iris Vale:Odo Brann:availability"]);
    const exact = judgeQuery(q(801), scene, [answer([state("Iris Vale", "availability", "available")])]);
    expect(exact).toMatchObject({ implicitCoverage: 1, disclosedBeyondNeed: 0, disclosedBeyondNeedAnswer: 0, disclosedBeyondNeedProbes: 0 });
    // The probe reads three fields (two beyond); the answer states one of them and someone else's mood.
    const over = judgeQuery(q(801), scene, [...privateRead("Iris Vale"), ...privateRead("Iris Vale"), answer([state("Iris Vale", "availability", "available"), state("Iris Vale", "emotional_state", "content"), state("Odo Brann", "mood", "irritable")])]);
    expect(over).toMatchObject({ disclosedBeyondNeedAnswer: 2, disclosedBeyondNeedProbes: 2, disclosedBeyondNeed: 3 });
    // Second order: the belief asked for is the need; the other belief field and the target's truth are not.
    const belief = judgeQuery(q(803), scene, [answer([{ agent: "Iris Vale", field: "availability", kind: "belief", source: "probe", target: "Odo Brann", value: "available" }, { agent: "Iris Vale", field: "emotional_state", kind: "belief", source: "probe", target: "Odo Brann", value: "calm" }, state("Odo Brann", "availability", "busy")])]);
    expect(belief).toMatchObject({ implicitCoverage: 1, disclosedBeyondNeedAnswer: 2, beliefConflated: true });
  });
});

describe("eval implicit over several files (splits)", () => {
  it("reports each file apart and pooled; the CLI takes a comma-separated or repeated --file", async () => {
    const out = tempDir("aura-splits");
    const r = await runImplicitEvals({ files: [MINI, HELD_OUT], conditions: ["aura-intent", "fixed-private"], seeds: [42], out });
    expect(r.files.map((f) => [f.benchmark, f.rows.length])).toEqual([["aura-split-mini", 6], ["aura-heldout-scene", 30]]);
    const pooled = r.conditions.find((c) => c.condition === "fixed-private")!;
    expect(pooled.overall.cells).toBe(3 + 15);
    expect(Object.keys(pooled.perScene)).toEqual(["aura-split-mini/M_harbour_dusk", "aura-heldout-scene/H_market_noon"]);
    const per = r.files.map((f) => f.conditions.find((c) => c.condition === "fixed-private")!.overall.disclosedBeyondNeed);
    expect(pooled.overall.disclosedBeyondNeed).toBeCloseTo((per[0]! * 3 + per[1]! * 15) / 18, 10);
    await expect(runImplicitEvals({ files: [MINI, join(tempDir("aura-dup"), "../aura-split-mini.json")], conditions: ["literal"], seeds: [1], out })).rejects.toThrow(/--file: .* share the name 'aura-split-mini'/);

    const cli = async (args: string[]) => await runCliAsSpawned(["eval", "implicit", ...args, "--condition", "aura-intent,fixed-private", "--seeds", "42", "--out", out, "-q"]);
    const json = await cli(["--file", `${MINI},${HELD_OUT}`, "--json"]);
    expect(json.status, json.stderr).toBe(0);
    const summary = JSON.parse(json.stdout) as { files: Array<{ benchmark: string; conditions: Array<{ condition: string; resultKind: string; overall: { implicitCoverage: number; literalCoverage: number; probesPerQuery: number; forbiddenViolations: number; disclosedBeyondNeed: number } }> }>; conditions: Array<{ overall: { cells: number; disclosedBeyondNeed: number } }> };
    expect(summary.files.map((f) => f.benchmark)).toEqual(["aura-split-mini", "aura-heldout-scene"]);
    expect(summary.conditions[0]!.overall.cells).toBe(18);
    for (const f of summary.files) for (const c of f.conditions) {
      expect(c.resultKind).toBe("deterministic");
      expect(Object.keys(c.overall)).toEqual(expect.arrayContaining(["implicitCoverage", "literalCoverage", "probesPerQuery", "forbiddenViolations", "disclosedBeyondNeed"]));
    }
    const text = await cli(["--file", MINI, "--file", HELD_OUT]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(`implicit intent · ${MINI} ·`);
    expect(text.stdout).toContain(`implicit intent · ${HELD_OUT} ·`);
    expect(text.stdout).toContain("implicit intent · all 2 files pooled (aura-split-mini, aura-heldout-scene)");
    expect(text.stdout).toMatch(/fixed-private \[deterministic\]/);
    expect(text.stdout).toMatch(/literal\s+implicit\s+probes\s+disclo\s+beyond\s+b\.ans\s+b\.prb/);
  });
});
