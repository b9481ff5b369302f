// The implicit-intent benchmark: loader errors, the rule judge on hand-made answers, the
// acceptance figures on scene A (computed from episode logs, checked against thresholds), a
// held-out scene written for these tests, and eval logs that verify and run from the CLI.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AnswerFactPayload } from "../actors/aura/events.ts";
import type { LogRecord } from "../events/record.ts";
import { BenchmarkInvalid, loadImplicitBenchmark, parseImplicitBenchmark } from "../services/aura/benchmarks/implicit.ts";
import { judgeQuery } from "../services/aura/benchmarks/judge.ts";
import { loadPrivacyBenchmark } from "../services/aura/benchmarks/privacy.ts";
import { runImplicitEval, runPrivacyEval, type ResultRow } from "../services/aura/eval.ts";
import { loadResults } from "../services/analysis/results.ts";
import { analyze } from "../services/analysis/report.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { runCliAsSpawned, tempDir } from "./helpers.ts";

const SCENE_A = join(import.meta.dirname, "..", "data/aura/implicit_intent_scene_a.json");
const HELD_OUT = join(import.meta.dirname, "fixtures", "aura-heldout-scene.json");
const SEEDS = [42, 123, 456];
const raw = () => JSON.parse(readFileSync(SCENE_A, "utf8")) as { scenes: Record<string, Record<string, unknown>>; queries: Array<Record<string, unknown>> };

function problemsOf(data: unknown): string {
  try {
    parseImplicitBenchmark(data, "bench.json");
  } catch (e) {
    expect(e).toBeInstanceOf(BenchmarkInvalid);
    return (e as Error).message;
  }
  throw new Error("expected the benchmark to be rejected");
}

describe("implicit-intent loader", () => {
  it("loads scene A: 25 queries, one scene, gold and forbidden tools", () => {
    const b = loadImplicitBenchmark(SCENE_A);
    expect(b.queries).toHaveLength(25);
    expect(Object.keys(b.scenes)).toEqual(["A_cafe_morning"]);
    expect(b.queries.find((q) => q.id === "121")).toMatchObject({ subject: "Lin Wei", target: "Zhang Hao", forbidden: ["get_agent_private_state"] });
  });

  it("names the file, the query id and the field of each problem", () => {
    const d = raw();
    delete d.queries[2]!.query;
    d.queries[4]!.agent_subject = "Nobody Here";
    d.queries[6]!.gold_required_tools = ["get_agent_secrets"];
    d.queries[21]!.forbidden_tools = [];
    d.queries[22]!.scene = "Z_nowhere";
    d.queries[23]!.id = 101;
    const message = problemsOf(d);
    expect(message).toMatch(/^bench\.json: invalid implicit-intent benchmark/);
    expect(message).toMatch(/query 103: .*Missing key.*\["query"\]/);
    expect(message).toMatch(/query 105: agent_subject: 'Nobody Here' is not in scene A_cafe_morning/);
    expect(message).toMatch(/query 107: gold_required_tools: unknown tool 'get_agent_secrets'/);
    expect(message).toMatch(/query 122: forbidden_tools: a second_order query must forbid get_agent_private_state/);
    expect(message).toMatch(/query 123: scene: no scene named 'Z_nowhere'/);
    expect(message).toMatch(/query 101: id: duplicate id/);
  });

  it("refuses requires items the judge has no gold for (a typo was left out of the score without a word)", () => {
    const d = raw();
    d.queries[0]!.literal_requires = ["agent_locaton"];
    d.queries[1]!.implicit_requires = ["availabilty", "mood", "secrets", "beliefs_about_others.Lin Wei.availability"];
    const message = problemsOf(d);
    expect(message).toMatch(/query 101: literal_requires: unknown item 'agent_locaton' \(known: agent_location, .*relationships, agent_history\)/);
    expect(message).toMatch(/query 102: implicit_requires: 'availabilty' is a private field of no one in scene A_cafe_morning \(fields: availability, emotional_state, unspoken_goal; or beliefs_about_others\.<name>\.<field>\)/);
    // Aliases (mood, secrets) and belief items are not typos.
    expect(message.split("\n")).toHaveLength(3);
  });

  it("checks scenes: roster consistency and belief targets", () => {
    const d = raw();
    const s = d.scenes.A_cafe_morning! as { private_state: Record<string, unknown>; beliefs_about_others: Record<string, Record<string, unknown>> };
    delete s.private_state["Wang Jun"];
    s.beliefs_about_others["Lin Wei"]!["Ghost"] = { availability: "x", emotional_state: "y" };
    const message = problemsOf(d);
    expect(message).toMatch(/scene A_cafe_morning: private_state has no entry for 'Wang Jun'/);
    expect(message).toMatch(/beliefs_about_others\.Lin Wei: target 'Ghost' is not in the roster/);
    expect(problemsOf({ scenes: {}, queries: "no" })).toMatch(/top level:.*queries/);
  });

  it("reports unreadable and malformed files as usage errors naming --file", () => {
    expect(() => loadImplicitBenchmark("/nonexistent/q.json")).toThrow(/--file \/nonexistent\/q\.json: cannot read \(ENOENT\)/);
    const bad = join(tempDir("aura-bad"), "bad.json");
    writeFileSync(bad, "{ nope");
    expect(() => loadImplicitBenchmark(bad)).toThrow(/not valid JSON/);
  });
});

describe("rule judge", () => {
  const b = loadImplicitBenchmark(SCENE_A);
  const scene = b.scenes.A_cafe_morning!;
  const q = (id: string) => b.queries.find((x) => x.id === id)!;
  let seq = 0;
  const rec = (type: string, payload: unknown): LogRecord => ({ v: 1, episode: "e", seq: seq++, tick: 0, type, from: "x", to: null, payload, cause: null, hash: "", meta: undefined } as unknown as LogRecord);
  const fact = (kind: AnswerFactPayload["kind"], agent: string | null, field: string, value: string, target: string | null = null): AnswerFactPayload => ({ kind, agent, field, value, target, source: "test" });
  const answer = (facts: AnswerFactPayload[]) => rec("answer.given", { queryId: "x", condition: "t", backend: "t", text: "", alert: null, facts, probes: 0, disclosure: 0 });
  const probe = (tool: string, target: string | null) => [
    rec("probe.requested", { queryId: "x", call: 1, tool, target, field: null, args: {}, budgetBefore: 1 }),
    rec("probe.answered", { queryId: "x", call: 1, tool, target, ok: true, result: {}, disclosure: 3, budgetAfter: 0 }),
  ];

  it("scores literal and implicit coverage against the scene's values", () => {
    const full = judgeQuery(q("101"), scene, [...probe("get_agent_private_state", "Lin Wei"), answer([fact("public", "Lin Wei", "location", "Sunrise Cafe"), fact("state", "Lin Wei", "availability", "busy"), fact("state", "Lin Wei", "emotional_state", "cheerful")])]);
    expect(full).toMatchObject({ literalCoverage: 1, implicitCoverage: 1, probes: 1, disclosure: 3, goldToolRecall: 1, forbiddenViolations: 0 });
    const wrong = judgeQuery(q("101"), scene, [answer([fact("public", "Lin Wei", "location", "Town Library"), fact("state", "Lin Wei", "availability", "available")])]);
    expect(wrong).toMatchObject({ literalCoverage: 0, implicitCoverage: 0, goldToolRecall: 0 });
    const half = judgeQuery(q("101"), scene, [answer([fact("state", "Lin Wei", "availability", "busy")])]);
    expect(half.implicitCoverage).toBe(0.5);
  });

  it("averages a subject-less query over the people at the place it names", () => {
    // 105: "Who's at the Sunrise Cafe right now?" → Lin Wei, Zhang Hao, Chen Mei.
    const r = judgeQuery(q("105"), scene, [answer([fact("state", "Zhang Hao", "availability", "available"), fact("public", "Zhang Hao", "location", "Sunrise Cafe")])]);
    expect(r.implicitCoverage).toBeCloseTo(1 / 3);
    expect(r.literalCoverage).toBeCloseTo(1 / 3);
  });

  it("second-order: the belief earns credit, the target's truth is conflation, a private read is a violation", () => {
    const belief = judgeQuery(q("123"), scene, [...probe("get_agent_belief_about", "Chen Mei"), answer([fact("belief", "Chen Mei", "availability", "do_not_disturb", "Lin Wei")])]);
    expect(belief).toMatchObject({ implicitCoverage: 1, beliefConflated: false, targetPrivateRead: false, forbiddenViolations: 0, goldToolRecall: 1 });
    const truth = judgeQuery(q("123"), scene, [...probe("get_agent_private_state", "Lin Wei"), answer([fact("state", "Lin Wei", "availability", "busy")])]);
    expect(truth).toMatchObject({ implicitCoverage: 0, beliefConflated: true, targetPrivateRead: true, forbiddenViolations: 1, goldToolRecall: 0 });
  });

  it("maps secrets to the unspoken goal and leaves uncheckable literal items out", () => {
    // 119: literal [all_agents_location, relationships]; implicit [secrets, emotional_state] over everyone.
    const facts = ["Lin Wei", "Zhang Hao", "Chen Mei", "Wang Jun"].flatMap((n) => [
      fact("public", n, "location", scene.public_state[n]!.location),
      fact("state", n, "unspoken_goal", scene.private_state[n]!.unspoken_goal!),
    ]);
    const r = judgeQuery(q("119"), scene, [answer(facts)]);
    expect(r.literalItems.map((i) => i.item)).toEqual(["all_agents_location"]);
    expect(r.implicitItems).toEqual([{ item: "secrets", score: 1 }, { item: "emotional_state", score: 0 }]);
  });
});

const meanOf = (rows: readonly ResultRow[], pick: (r: ResultRow) => number | null) => {
  const xs = rows.map(pick).filter((x): x is number => x !== null);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};

describe("implicit-intent evaluation (offline, deterministic backends, rule judge, seeds 42/123/456)", () => {
  it("scene A: AURA Intent ≥ 0.85 implicit coverage at ≤ 1.6 probes/query (≤ 0.5 with reuse), beats NoIntent and Literal, level with Fixed-private stating less beyond the need, no private reads on second-order", async () => {
    const out = tempDir("aura-eval-a");
    const r = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent", "no-intent", "literal", "fixed-private", "plan-and-solve", "oracle-intent", "aura-intent-reuse"], seeds: SEEDS, out });
    const of = (c: string) => r.rows.filter((x) => x.condition === c);
    const aura = of("aura-intent");
    expect(aura).toHaveLength(75);
    const auraImplicit = meanOf(aura, (x) => x.implicitCoverage);
    const auraProbes = meanOf(aura, (x) => x.probes);
    expect(auraImplicit).toBeGreaterThanOrEqual(0.85);
    // The default does not reuse probe answers across queries: every query probes for itself.
    expect(auraProbes).toBeLessThanOrEqual(1.6);
    expect(aura.every((x) => x.implicitCoverage === null || x.implicitCoverage === 0 || x.probes > 0)).toBe(true);
    // Reuse is a named condition: the same coverage from far fewer probes.
    const reuse = of("aura-intent-reuse");
    expect(meanOf(reuse, (x) => x.implicitCoverage)).toBeGreaterThanOrEqual(auraImplicit);
    expect(meanOf(reuse, (x) => x.probes)).toBeLessThanOrEqual(0.5);
    // Clearly ahead of NoIntent and Literal on the same query × seed cells (paired: never behind).
    for (const base of ["no-intent", "literal"]) {
      const rows = of(base);
      expect(auraImplicit - meanOf(rows, (x) => x.implicitCoverage)).toBeGreaterThan(0.3);
      const paired = aura.map((a) => (a.implicitCoverage ?? 0) - (rows.find((b) => b.queryId === a.queryId && b.seed === a.seed)!.implicitCoverage ?? 0));
      expect(paired.filter((d) => d < 0)).toHaveLength(0);
      expect(paired.filter((d) => d > 0).length).toBeGreaterThan(30);
    }
    const fixed = of("fixed-private");
    expect(auraImplicit).toBeGreaterThanOrEqual(meanOf(fixed, (x) => x.implicitCoverage) - 1e-9);
    // Fixed-private's cost: it states every private field it reads, AURA only what its frame needs.
    expect(meanOf(aura, (x) => x.disclosedBeyondNeedAnswer)).toBeLessThan(meanOf(fixed, (x) => x.disclosedBeyondNeedAnswer) - 0.5);
    const second = aura.filter((x) => x.subcategory === "second_order");
    expect(second).toHaveLength(15);
    for (const x of second) expect(x).toMatchObject({ targetPrivateRead: false, forbiddenViolations: 0, beliefConflated: false });
    expect(aura.every((x) => x.forbiddenViolations === 0)).toBe(true);
    // Every baseline reads the query with the same analyser: a second-order question's literal
    // request is the belief, so NoIntent and Plan-and-Solve do not read the target either.
    for (const c of ["no-intent", "plan-and-solve"]) expect(of(c).some((x) => x.targetPrivateRead), c).toBe(false);
    // NoIntent probes only what the wording asks: less implicit coverage than AURA, little stated beyond the need.
    expect(meanOf(of("no-intent"), (x) => x.disclosedBeyondNeedAnswer)).toBeLessThan(meanOf(aura, (x) => x.disclosedBeyondNeedAnswer));
    // Seeds are real: the query order differs between seeds.
    const orders = SEEDS.map((s) => aura.filter((x) => x.seed === s).sort((a, b) => a.order - b.order).map((x) => x.queryId).join(","));
    expect(new Set(orders).size).toBe(3);
    // Every condition's log replays to the same records and state hashes.
    for (const log of new Set(r.rows.filter((x) => x.seed === 456).map((x) => x.log))) expect((await verifyEpisode(log)).ok, log).toBe(true);
    // One JSONL line per query × seed × condition.
    expect(readFileSync(r.results, "utf8").trim().split("\n")).toHaveLength(7 * 75);
    // ... in the results schema the report reads.
    const loaded = loadResults(r.results);
    expect(loaded.filter((x) => x.condition === "aura-intent" && x.benchmark === "implicit_intent_scene_a")).toHaveLength(75);
    expect(loaded.every((x) => x.resultKind === "deterministic" && typeof x.disclosedBeyondNeed === "number")).toBe(true);
    // The acceptance's statistics: AURA Intent beats NoIntent and Literal with paired p < 0.01
    // (paired t over queries, Holm-adjusted, and Wilcoxon), from the rows the report reads.
    const analysis = analyze(loaded, { reference: "aura-intent", bootstrapIterations: 200 });
    for (const base of ["no-intent", "literal"]) {
      const c = analysis.benchmarks[0]!.comparisons.find((x) => x.arm === base)!;
      expect(c.queryT.meanDiff, base).toBeLessThan(0);
      expect(c.pHolm, base).toBeLessThan(0.01);
      expect(c.wilcoxon.p, base).toBeLessThan(0.01);
    }
  });

  it("held-out scene (other names, places and wording): sensible coverage without memory, no violations", async () => {
    const r = await runImplicitEval({ file: HELD_OUT, conditions: ["aura-intent-nomemory", "aura-intent", "no-intent"], seeds: SEEDS, out: tempDir("aura-eval-h") });
    for (const c of ["aura-intent-nomemory", "aura-intent"]) {
      const rows = r.rows.filter((x) => x.condition === c);
      expect(meanOf(rows, (x) => x.implicitCoverage), c).toBeGreaterThanOrEqual(0.85);
      expect(meanOf(rows, (x) => x.literalCoverage), c).toBeGreaterThanOrEqual(0.9);
      expect(meanOf(rows, (x) => x.probes), c).toBeLessThanOrEqual(1.5);
      expect(rows.every((x) => x.forbiddenViolations === 0 && !x.targetPrivateRead)).toBe(true);
      for (const sub of ["availability", "mood", "appropriateness", "latent_goal", "second_order"]) {
        expect(meanOf(rows.filter((x) => x.subcategory === sub), (x) => x.implicitCoverage), `${c} ${sub}`).toBeGreaterThanOrEqual(0.7);
      }
    }
  });

  it("eval logs verify, and the CLI prints the JSON summary", async () => {
    const out = tempDir("aura-eval-cli");
    const cli = await runCliAsSpawned(["eval", "implicit", "--file", SCENE_A, "--condition", "aura-intent", "--seeds", "42,123", "--out", out, "--json"]);
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stderr).toMatch(/\[2\/2\] aura-intent A_cafe_morning s123/);
    const summary = JSON.parse(cli.stdout) as { backend: string; judge: string; conditions: Array<{ condition: string; overall: { implicitCoverage: number; probesPerQuery: number }; perScene: object; perSubcategory: object }> };
    expect(summary).toMatchObject({ backend: "deterministic", judge: "rule" });
    expect(Object.keys(summary.conditions[0]!.perSubcategory)).toHaveLength(5);
    expect(Object.keys(summary.conditions[0]!.perScene)).toEqual(["A_cafe_morning"]);
    const report = await verifyEpisode(join(out, "implicit_intent_scene_a", "A_cafe_morning-s42-aura-intent"));
    expect(report.ok, report.text).toBe(true);
    expect(report.ticks).toBe(25);
    const bad = await runCliAsSpawned(["eval", "implicit", "--file", SCENE_A, "--condition", "telepathy"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--condition: unknown 'telepathy'/);
    // The kept-cells notice comes once the inputs are checked, never before a usage error.
    expect(bad.stderr).not.toMatch(/every finished cell is kept/);
    expect(cli.stderr).not.toMatch(/every finished cell is kept/);
    const again = await runCliAsSpawned(["eval", "implicit", "--file", SCENE_A, "--condition", "aura-intent", "--seeds", "42,123", "--out", out]);
    expect(again.status, again.stderr).toBe(0);
    const lines = again.stderr.split("\n");
    const notice = lines.indexOf("eval implicit: every finished cell is kept: after a Ctrl-C or a crash, the same command continues from them");
    expect(notice).toBeGreaterThanOrEqual(0);
    expect(notice).toBeLessThan(lines.findIndex((l) => l.startsWith("eval: [1/2]")));
    expect(again.stderr).not.toMatch(/\[0\//);
  });
});

describe("an interrupted implicit-intent cell", () => {
  it("is continued by the rerun (log cut mid-episode, torn last line): rows and log equal an undisturbed run's", async () => {
    const run = (out: string, notes?: string[]) => runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out, ...(notes === undefined ? {} : { onResumeNote: (note: string) => void notes.push(note) }) });
    const undisturbed = await run(tempDir("aura-eval-whole"));
    const out = tempDir("aura-eval-cut");
    const first = await run(out);
    const cell = join(out, "implicit_intent_scene_a", "A_cafe_morning-s42-aura-intent");
    const segment = join(cell, "log", "000000000000.jsonl");
    const lines = readFileSync(segment, "utf8").split("\n").filter((l) => l.length > 0);
    const committed = lines.map((l, i) => [l, i] as const).filter(([l]) => l.includes('"type":"tick.committed"'));
    // Keep ten committed ticks and half of the next record: the state a kill mid-write leaves.
    const cut = committed[9]![1] + 1;
    writeFileSync(segment, lines.slice(0, cut).join("\n") + "\n" + lines[cut]!.slice(0, 40));
    const notes: string[] = [];
    const again = await run(out, notes);
    // The cut is said as `run --resume` says it (it was made without a word), then the snapshot it outlived.
    const offset = Buffer.byteLength(lines.slice(0, cut).join("\n")) + 1;
    expect(notes[0]).toBe(`${segment}: line ${cut + 1}: torn final record (40 bytes without a complete JSON line; last good record seq ${cut - 1})\ncut back to the last good record; the cut bytes are kept in ${segment}.torn-${offset}`);
    expect(notes.slice(1)).toEqual([expect.stringMatching(/^the latest snapshot, of tick 24 .* is past the log's end \(its last committed tick is 9, .*continuing from the episode's start, checking the logged records$/)]);
    const strip = (rows: readonly ResultRow[]) => rows.map(({ log: _log, ...rest }) => rest);
    expect(strip(again.rows)).toEqual(strip(undisturbed.rows));
    expect(strip(again.rows)).toEqual(strip(first.rows));
    const withoutMeta = (l: string) => l.replace(/,"meta":\{[^}]*\}/, "");
    expect(readFileSync(segment, "utf8").split("\n").map(withoutMeta)).toEqual(lines.concat([""]).map(withoutMeta));
    expect((await verifyEpisode(cell)).ok).toBe(true);
  });

  it("with a log that holds not one whole record (stopped on a full disk before its header) is run anew, not called another episode", async () => {
    const out = tempDir("aura-eval-empty");
    const first = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out });
    const cell = join(out, "implicit_intent_scene_a", "A_cafe_morning-s42-aura-intent");
    writeFileSync(join(cell, "log", "000000000000.jsonl"), "");
    const again = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out });
    const strip = (rows: readonly ResultRow[]) => rows.map(({ log: _log, ...rest }) => rest);
    expect(strip(again.rows)).toEqual(strip(first.rows));
    expect((await verifyEpisode(cell)).ok).toBe(true);
  });

  it("of another episode is not run over without --fresh, and the message says what to do", async () => {
    const out = tempDir("aura-eval-other");
    const first = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out, maxSteps: 3 });
    const results = readFileSync(first.results, "utf8");
    await expect(runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out, maxSteps: 2 })).rejects.toThrow(/holds another episode \(config\.\S+: 3 in the log, 2 asked for\); pass --fresh/);
    // The refused eval leaves the last run's results as they were (it emptied them before its first cell).
    expect(readFileSync(first.results, "utf8")).toBe(results);
  });
});

describe("a privacy cell of another episode", () => {
  it("is refused before any town runs, naming the warm-up; the results stay; eval privacy --fresh reruns it", async () => {
    const out = tempDir("privacy-other");
    const privacy = async (...more: string[]) => await runCliAsSpawned(["eval", "privacy", "--file", join(import.meta.dirname, "..", "data/aura/privacy_queries.json"), "--condition", "aura-gap-routed", "--seeds", "42", "--out", out, "-q", ...more]);
    const first = await privacy();
    expect(first.status, first.stderr).toBe(0);
    const root = join(out, "privacy_queries");
    const results = readFileSync(join(root, "results-aura-gap-routed.jsonl"), "utf8");
    const other = await privacy("--warmup", "13");
    expect(other.status).toBe(2);
    // It named the whole snapshot scene and town that differ, after the town had run; and the flag it told of did not exist.
    expect(other.stderr).toMatch(/s42-aura-gap-routed: holds another episode \(warmup: 12 in the log, 13 asked for\); pass --fresh to rerun it/);
    expect(existsSync(join(root, "town-s42-t13"))).toBe(false);
    expect(readFileSync(join(root, "results-aura-gap-routed.jsonl"), "utf8")).toBe(results);
    const fresh = await privacy("--warmup", "13", "--fresh");
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(readFileSync(join(root, "s42-aura-gap-routed", "log", "000000000000.jsonl"), "utf8")).toContain('"name":"auratown-s42-t12"');
  });
});

describe("privacy slice file", () => {
  it("names the file and each problem: duplicate ids, empty queries, an empty list", () => {
    const dir = tempDir("privacy-file");
    const good = JSON.parse(readFileSync(join(import.meta.dirname, "..", "data/aura/privacy_queries.json"), "utf8")) as { queries: { id: number; query: string }[] };
    const file = join(dir, "p.json");
    writeFileSync(file, JSON.stringify({ queries: [good.queries[0], { ...good.queries[1], id: good.queries[0]!.id }, { ...good.queries[2], query: " " }] }));
    expect(() => loadPrivacyBenchmark(file)).toThrow(new RegExp(`^${file.replace(/[.]/g, "\\.")}: invalid privacy benchmark:\n  - query ${good.queries[0]!.id}: id: duplicate id '${good.queries[0]!.id}'\n  - query ${good.queries[2]!.id}: query: empty$`));
    writeFileSync(file, JSON.stringify({ queries: [] }));
    expect(() => loadPrivacyBenchmark(file)).toThrow(/invalid privacy benchmark:\n  - queries: empty/);
  });
});

describe("--warmup", () => {
  it("is an integer ≥ 1 everywhere: the flag parser says so and rejects 0 naming the flag, as the API does", async () => {
    for (const [benchmark, file] of [["privacy", "data/aura/privacy_queries.json"], ["factual", "data/aura/factual_queries.json"]] as const) {
      const zero = await runCliAsSpawned(["eval", benchmark, "--file", join(import.meta.dirname, "..", file), "--condition", "vanilla", "--warmup", "0", "--out", tempDir(`warmup-${benchmark}`)]);
      expect(zero.status, zero.stderr).toBe(2);
      expect(zero.stderr, benchmark).toMatch(/--warmup expects an integer ≥ 1, got '0'/);
    }
    await expect(runPrivacyEval({ file: join(import.meta.dirname, "..", "data/aura/privacy_queries.json"), conditions: ["vanilla"], seeds: [42], warmup: 0, out: tempDir("warmup-api") })).rejects.toThrow(/^--warmup: expected an integer ≥ 1, got 0$/);
  });

  it("too long for the heap is refused up front, naming the flag (or the spec's field), as run --days is: it ran until the heap or the disk gave out", async () => {
    for (const [benchmark, file] of [["privacy", "data/aura/privacy_queries.json"], ["factual", "data/aura/factual_queries.json"]] as const) {
      const out = tempDir(`warmup-long-${benchmark}`);
      const long = await runCliAsSpawned(["eval", benchmark, "--file", join(import.meta.dirname, "..", file), "--condition", "vanilla", "--seeds", "1", "--warmup", "100000000", "--out", out]);
      expect(long.status, long.stderr).toBe(2);
      expect(long.stderr, benchmark).toMatch(/--warmup 100000000: 5 residents over [\d,.]+ days need about [\d.]+ GiB of heap .* at most [\d,]+ days \([\d,]+ ticks\) of this town fit; run fewer/);
      expect(readdirSync(out), benchmark).toEqual([]);
    }
    const dir = tempDir("warmup-long-spec");
    writeFileSync(join(dir, "w.yaml"), `benchmark: privacy\nfile: ${join(import.meta.dirname, "..", "data/aura/privacy_queries.json")}\nseeds: [1]\nconditions: [vanilla]\nforks: { warmup: 100000000 }\nout: out\n`);
    const spec = await runCliAsSpawned(["experiment", join(dir, "w.yaml")]);
    expect(spec.status, spec.stderr).toBe(2);
    expect(spec.stderr).toMatch(/w\.yaml: field 'forks\.warmup' 100000000: 5 residents over/);
    expect(existsSync(join(dir, "out"))).toBe(false);
  });
});

describe("privacy slice (paired AURATown snapshots, seeds 42/123/456)", () => {
  it("AURA GapRouted fires no forbidden tool at ≤ 1.0 probes/query; Fixed-Probe and Plan-and-Solve do", async () => {
    const r = await runPrivacyEval({ file: join(import.meta.dirname, "..", "data/aura/privacy_queries.json"), conditions: ["aura-gap-routed", "fixed-probe", "plan-and-solve", "aura-no-probe"], seeds: SEEDS, out: tempDir("aura-privacy") });
    const by = (c: string) => r.conditions.find((x) => x.condition === c)!.overall;
    expect(by("aura-gap-routed")).toMatchObject({ cells: 90, forbiddenViolations: 0, cellsWithViolation: 0 });
    expect(by("aura-gap-routed").probesPerQuery).toBeLessThanOrEqual(1.0);
    expect(by("aura-gap-routed").allowedRecall!).toBeGreaterThanOrEqual(0.75);
    expect(by("fixed-probe").cellsWithViolation).toBe(90);
    expect(by("plan-and-solve").forbiddenViolations).toBeGreaterThan(0);
    expect(by("aura-no-probe").probesPerQuery).toBe(0);
    // The snapshot comes from a real AURATown episode whose log verifies.
    const town = r.rows[0]!.log.replace(/s42-aura-gap-routed$/, "town-s42-t12");
    expect((await verifyEpisode(town)).ok).toBe(true);
    for (const log of new Set(r.rows.filter((x) => x.seed === 123).map((x) => x.log))) expect((await verifyEpisode(log)).ok, log).toBe(true);
  });
});
