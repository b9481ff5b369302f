// RQ2 factual grounding offline: the rule judge on hand-made answers (verdicts, completeness from
// `requires`, the accuracy formula), the loader's errors, the full 50-query run on paired
// AURATown snapshots for Fixed-Probe and GapRouted over seeds 42/123/456 (the acceptance),
// per-query snapshots and rotating askers, cells that verify, reruns served from logs, the report,
// and a held-out phrasing set written for these tests.
import { describe, expect, it } from "vitest";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AnswerFactPayload } from "../actors/aura/events.ts";
import type { LogRecord } from "../events/record.ts";
import { factualTruth, judgeFactual, loadFactualBenchmark, needsOf, unrecognisedTags, verdictOf, FactualBenchmarkInvalid, type FactualQuery, type FactualTruth } from "../services/aura/benchmarks/factual.ts";
import { runFactualEval } from "../services/aura/factualEval.ts";
import { loadResults } from "../services/analysis/results.ts";
import { analyze } from "../services/analysis/report.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { analyseFactual } from "../actors/aura/factual.ts";
import { tempDir } from "./helpers.ts";

const FACTUAL = join(import.meta.dirname, "..", "data/aura/factual_queries.json");
const HELD_OUT = join(import.meta.dirname, "fixtures", "aura-heldout-factual.json");

const truth: FactualTruth = {
  time: "09:30",
  asker: "Lin Wei",
  askerLocation: "Sunrise Cafe",
  askerAction: "serve coffee",
  nearby: ["Zhang Hao"],
  agents: [
    { name: "Chen Mei", location: "Chen's General Store", action: "open the shop" },
    { name: "Lin Wei", location: "Sunrise Cafe", action: "serve coffee" },
    { name: "Zhang Hao", location: "Sunrise Cafe", action: "write" },
  ],
  events: ["Zhang Hao arrived at Sunrise Cafe.", "Chen Mei and Lin Wei had a conversation at Town Square."],
  memories: ["Had a conversation with Chen Mei at Town Square: hello."],
  plan: ["09:00 serve coffee (Sunrise Cafe)", "18:00 close up (Sunrise Cafe)"],
  places: { "Sunrise Cafe": "cafe", "Town Library": "library", "Town Park": "park", "Chen's General Store": "shop" },
};

const fact = (kind: AnswerFactPayload["kind"], agent: string | null, field: string, value: string, target: string | null = null): AnswerFactPayload => ({ kind, agent, field, value, target, source: "probe:test" });

const recordsWith = (facts: AnswerFactPayload[], probes = 0): LogRecord[] => {
  const rec = (type: string, payload: unknown) => ({ type, payload }) as unknown as LogRecord;
  return [
    ...Array.from({ length: probes }, (_, i) => rec("probe.requested", { tool: "get_time", call: i + 1 })),
    ...Array.from({ length: probes }, () => rec("probe.answered", { tool: "get_time", disclosure: 0 })),
    rec("answer.given", { facts, backend: "deterministic", text: "" }),
  ];
};

const query = (requires: string[], text = "Where am I right now?"): FactualQuery => ({ id: "q", category: "spatial", text, requires });

describe("factual rule judge", () => {
  it("checks each claim against the snapshot's truth: correct, contradicted, unverifiable", () => {
    expect(verdictOf(fact("time", null, "time", "09:30"), truth)).toBe("correct");
    expect(verdictOf(fact("time", null, "time", "10:00"), truth)).toBe("contradicted");
    expect(verdictOf(fact("public", "Zhang Hao", "location", "Sunrise Cafe"), truth)).toBe("correct");
    expect(verdictOf(fact("public", "Zhang Hao", "location", "Town Library"), truth)).toBe("contradicted");
    expect(verdictOf(fact("public", "Chen Mei", "action", "open the shop"), truth)).toBe("correct");
    expect(verdictOf(fact("public", "Nobody Known", "location", "Town Park"), truth)).toBe("unverifiable");
    expect(verdictOf(fact("plan", "Lin Wei", "plan", truth.plan.join("; ")), truth)).toBe("correct");
    expect(verdictOf(fact("plan", "Lin Wei", "plan", "nap"), truth)).toBe("contradicted");
    expect(verdictOf(fact("plan", "Chen Mei", "plan", "anything"), truth)).toBe("unverifiable");
    expect(verdictOf(fact("event", null, "event", truth.events[0]!), truth)).toBe("correct");
    expect(verdictOf(fact("event", null, "event", "A parade."), truth)).toBe("unverifiable");
    expect(verdictOf(fact("memory", "Lin Wei", "memory", truth.memories[0]!), truth)).toBe("correct");
    expect(verdictOf(fact("place", null, "type", "cafe", "Sunrise Cafe"), truth)).toBe("correct");
    expect(verdictOf(fact("place", null, "type", "park", "Sunrise Cafe"), truth)).toBe("contradicted");
    expect(verdictOf(fact("place", null, "type", "park", "Moon Base"), truth)).toBe("contradicted");
    expect(verdictOf(fact("place", null, "people", "Lin Wei, Zhang Hao", "Sunrise Cafe"), truth)).toBe("correct");
    expect(verdictOf(fact("place", null, "people", "nobody", "Sunrise Cafe"), truth)).toBe("contradicted");
    expect(verdictOf(fact("place", null, "people", "nobody", "Town Park"), truth)).toBe("correct");
    expect(verdictOf(fact("place", "Lin Wei", "others", "Zhang Hao"), truth)).toBe("correct");
    // Private state is not in the factual ground truth.
    expect(verdictOf(fact("state", "Zhang Hao", "availability", "busy"), truth)).toBe("unverifiable");
  });

  it("accuracy = 0.7·precision + 0.3·completeness, 0.5 precision without verifiable claims, StrictP and recall", () => {
    const right = judgeFactual(query(["agent_location"]), truth, recordsWith([fact("public", "Lin Wei", "location", "Sunrise Cafe")], 1));
    expect(right).toMatchObject({ precision: 1, completeness: 1, strictPrecision: 1, claimRecall: 1, hallucination: false, perfect: true, probes: 1 });
    expect(right.accuracy).toBeCloseTo(1, 10);

    const wrong = judgeFactual(query(["agent_location"]), truth, recordsWith([fact("public", "Lin Wei", "location", "Town Park"), fact("time", null, "time", "09:30")]));
    expect(wrong).toMatchObject({ correctClaims: 1, contradictedClaims: 1, precision: 0.5, completeness: 1, hallucination: true, perfect: false });
    expect(wrong.accuracy).toBeCloseTo(0.7 * 0.5 + 0.3, 10);

    const deflect = judgeFactual(query(["agent_location"]), truth, recordsWith([]));
    expect(deflect).toMatchObject({ precision: 0.5, strictPrecision: null, claimRecall: null, completeness: 0 });
    expect(deflect.accuracy).toBeCloseTo(0.35, 10);

    const unverifiable = judgeFactual(query(["agent_location"]), truth, recordsWith([fact("state", "Lin Wei", "availability", "busy")]));
    expect(unverifiable).toMatchObject({ precision: 0.5, strictPrecision: null, claimRecall: 0, completeness: 0 });
  });

  it("completeness: all items, some items (partial), an item no snapshot holds (partial at best)", () => {
    const both = query(["agent_location", "library_location"], "How do I get to the library from here?");
    const half = judgeFactual(both, truth, recordsWith([fact("public", "Lin Wei", "location", "Sunrise Cafe")]));
    expect(half.completeness).toBe(0.5);
    expect(half.requirements).toEqual([{ item: "agent_location", met: true, supported: true }, { item: "library_location", met: false, supported: true }]);
    const full = judgeFactual(both, truth, recordsWith([fact("public", "Lin Wei", "location", "Sunrise Cafe"), fact("place", null, "people", "nobody", "Town Library")]));
    expect(full.completeness).toBe(1);
    const occupation = query(["agent_occupation"], "What does Chen Mei do for a living?");
    expect(judgeFactual(occupation, truth, recordsWith([fact("public", "Chen Mei", "action", "open the shop")])).completeness).toBe(0.5);
    expect(judgeFactual(occupation, truth, recordsWith([])).completeness).toBe(0);
  });

  it("reads requires tags by their words, resolving the person or place from the query", () => {
    expect(needsOf("specific_agent_location", "Where is Zhang Hao?", truth)).toEqual([{ kind: "agent", name: "Zhang Hao", field: "location" }]);
    expect(needsOf("library_location", "How do I get there?", truth)).toEqual([{ kind: "place", place: "Town Library" }]);
    expect(needsOf("location_existence", "Is there a park in town?", truth)).toEqual([{ kind: "place", place: "Town Park" }]);
    expect(needsOf("nearby_agents", "Who is around?", truth)).toEqual([{ kind: "company" }]);
    expect(needsOf("current_time", "What time is it?", truth)).toEqual([{ kind: "clock" }]);
    expect(needsOf("latest_event", "…", truth)).toEqual([{ kind: "events", latest: true }]);
    expect(needsOf("remaining_plan", "…", truth)).toEqual([{ kind: "plan" }]);
    expect(needsOf("agent_personality", "What is Chen Mei like?", truth)[0]!.kind).toBe("unsupported");
  });

  it("takes the truth from the cell's config: the asker's plan, memories and company, no private state", () => {
    const config = {
      scene: { name: "s", summary: "AURATown at 09:30, day 1.", public_state: { A: { location: "P", action: "x" }, B: { location: "P", action: "y" }, C: { location: "Q", action: "z" } }, private_state: { A: { availability: "busy" }, B: {}, C: {} }, beliefs_about_others: {}, plans: { A: ["09:00 x (P)"] } },
      queries: [{ id: "1", text: "?", asker: "A" }],
      town: { events: ["e1"], memories: { A: ["m1"], B: ["m2"] }, places: { P: "cafe", Q: "park" } },
      order: ["1"], labels: {}, maxSteps: 5, registry: "environment", policy: { allow: ["*"], deny: [] }, strategy: { kind: "fixed-probe", maxSteps: 8, memory: false, inferrer: "deterministic" },
    } as unknown as Parameters<typeof factualTruth>[0];
    const t = factualTruth(config, "1");
    expect(t).toMatchObject({ time: "09:30", asker: "A", askerLocation: "P", nearby: ["B"], memories: ["m1"], plan: ["09:00 x (P)"], events: ["e1"] });
    expect(JSON.stringify(t)).not.toContain("busy");
  });
});

describe("factual loader", () => {
  it("names requires tags it cannot read at all (a typo would silently count as an unsupported need); the paper's file has none", () => {
    const queries = loadFactualBenchmark(join(import.meta.dirname, "..", "data/aura/factual_queries.json"));
    expect(unrecognisedTags(queries)).toEqual([]);
    const typo: FactualQuery[] = [{ ...queries[0]!, requires: ["agnet_locaton", "current_time"] }, { ...queries[1]!, id: "x", requires: ["agnet_locaton"] }];
    expect(unrecognisedTags(typo)).toEqual([{ tag: "agnet_locaton", queries: [queries[0]!.id, "x"] }]);
  });

  it("loads the 50 queries, ten per category", () => {
    const qs = loadFactualBenchmark(FACTUAL);
    expect(qs).toHaveLength(50);
    expect(new Set(qs.map((q) => q.category))).toEqual(new Set(["spatial", "social", "temporal", "memory", "planning"]));
    expect(qs[12]).toEqual({ id: "13", category: "social", text: "Where is Zhang Hao?", requires: ["specific_agent_location"] });
  });

  it("names the file, the query and the field of a bad entry", () => {
    const dir = tempDir("factual-bad");
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ queries: [{ id: 1, category: "spatial", query: "Where?", requires: ["agent_location"] }, { id: 2, category: "social", requires: ["x"] }, { id: 1, category: "x", query: "again", requires: [] }] }));
    let message = "";
    try {
      loadFactualBenchmark(file);
    } catch (e) {
      expect(e).toBeInstanceOf(FactualBenchmarkInvalid);
      message = (e as Error).message;
    }
    expect(message).toContain(file);
    expect(message).toMatch(/query 2: .*query/);
    expect(message).toContain("query 1: id: duplicate id '1'");
  });
});

describe("factual benchmark on paired AURATown snapshots", () => {
  it("GapRouted stays within 0.05 of Fixed-Probe's accuracy at ≤ 25% of its probes (seeds 42/123/456, 50 queries)", async () => {
    const out = tempDir("factual-acceptance");
    const r = await runFactualEval({ file: FACTUAL, conditions: ["fixed-probe", "aura-gap-routed", "vanilla"], seeds: [42, 123, 456], out });
    expect(r.rows).toHaveLength(3 * 50 * 3);
    const by = Object.fromEntries(r.conditions.map((c) => [c.condition, c.overall]));
    expect(by["fixed-probe"]!.probesPerQuery).toBe(8);
    expect(by.vanilla!.accuracy).toBeCloseTo(0.35, 10);
    expect(r.acceptance).not.toBeNull();
    expect(r.acceptance!.accuracyGap).toBeLessThanOrEqual(0.05);
    expect(r.acceptance!.probeShare).toBeLessThanOrEqual(0.25);
    expect(r.acceptance!.pass).toBe(true);
    expect(by["aura-gap-routed"]!.accuracy).toBeGreaterThan(by.vanilla!.accuracy + 0.4);

    // Query i is asked by resident i mod 5 on the town after warm-up + i ticks; every condition sees the same snapshot.
    const cells = r.rows.filter((x) => x.seed === 42 && x.condition === "aura-gap-routed");
    expect(new Set(cells.map((x) => x.snapshot)).size).toBe(50);
    expect(cells[0]!.snapshot).toBe("auratown-s42-t9");
    expect(cells[49]!.snapshot).toBe("auratown-s42-t58");
    expect(cells[0]!.asker).toBe(cells[5]!.asker);
    expect(new Set(cells.slice(0, 5).map((x) => x.asker)).size).toBe(5);
    for (const row of r.rows.filter((x) => x.seed === 42 && x.condition === "fixed-probe")) expect(row.snapshot).toBe(cells.find((c) => c.queryId === row.queryId)!.snapshot);
    expect(new Set(r.rows.filter((x) => x.queryId === "21" && x.condition === "fixed-probe").map((x) => x.snapshot)).size).toBe(3);

    // Results rows in the report schema; the report reads them (judge accuracy is the metric).
    const rows = loadResults(r.results);
    expect(rows).toHaveLength(450);
    const analysis = analyze(rows, { reference: ["fixed-probe"] });
    expect(analysis.benchmarks[0]!.metric).toBe("accuracy");

    // A cell's log verifies (replays with the same state hashes).
    expect((await verifyEpisode(cells[12]!.log)).exitCode).toBe(0);

    // A rerun serves every cell from its log: nothing runs, same rows.
    const before = readFileSync(r.results, "utf8");
    const again = await runFactualEval({ file: FACTUAL, conditions: ["fixed-probe", "aura-gap-routed", "vanilla"], seeds: [42, 123, 456], out });
    expect(again.ran).toBe(0);
    expect(again.reused).toBe(450);
    expect(readFileSync(again.results, "utf8")).toBe(before);

    // A damaged cell log stops a rerun with its file named, and is left as it was (never run over).
    const segment = join(cells[3]!.log, "log", "000000000000.jsonl");
    const lines = readFileSync(segment, "utf8").split("\n");
    lines[1] = lines[1]!.replace('{"clock":{},"tick":0}', '{"clock":{},"tick":5}');
    writeFileSync(segment, lines.join("\n"));
    const tampered = readFileSync(segment, "utf8");
    await expect(runFactualEval({ file: FACTUAL, conditions: ["aura-gap-routed"], seeds: [42], out })).rejects.toThrow(/000000000000\.jsonl: seq 1 \(line 2\): hash mismatch/);
    expect(readFileSync(segment, "utf8")).toBe(tampered);
    // So is a damaged town warm-up log, which a rerun with a cell to run would otherwise rewrite.
    writeFileSync(segment, lines.join("\n").replace('{"clock":{},"tick":5}', '{"clock":{},"tick":0}'));
    const town = join(out, "factual_queries", "town-s42-w10", "log", "000000000000.jsonl");
    const townText = readFileSync(town, "utf8");
    writeFileSync(town, townText.replace('"tick":3,', '"tick":4,'));
    rmSync(cells[5]!.log, { recursive: true });
    await expect(runFactualEval({ file: FACTUAL, conditions: ["aura-gap-routed"], seeds: [42], out })).rejects.toThrow(/town-s42-w10\/log\/000000000000\.jsonl: seq \d+ \(line \d+\): hash mismatch/);
    expect(readFileSync(town, "utf8")).toBe(townText.replace('"tick":3,', '"tick":4,'));
  }, 120_000);

  it("a cell whose log holds another episode (other warm-up or budget) is refused naming the fields, not run over; --fresh reruns it", async () => {
    const out = tempDir("factual-other");
    const file = join(out, "q.json");
    const all = JSON.parse(readFileSync(FACTUAL, "utf8")) as { queries: unknown[] };
    writeFileSync(file, JSON.stringify({ queries: all.queries.slice(0, 3) }));
    const run = (o: { conditions?: string[]; warmup?: number; maxSteps?: number; fresh?: boolean } = {}) => runFactualEval({ file, seeds: [42], out, ...o, conditions: o.conditions ?? ["fixed-probe"] });
    expect(await run()).toMatchObject({ ran: 3, reused: 0 });
    // Nothing changed: served; a condition added runs alone, the others are the same episodes.
    expect(await run()).toMatchObject({ ran: 0, reused: 3 });
    expect(await run({ conditions: ["fixed-probe", "vanilla"] })).toMatchObject({ ran: 3, reused: 3 });
    const cell = join(out, "q", "s42", "q1-fixed-probe", "log", "000000000000.jsonl");
    const before = readFileSync(cell, "utf8");
    await expect(run({ warmup: 11 })).rejects.toThrow(/q1-fixed-probe: holds another episode \(warmup: 10 in the log, 11 asked for\); pass --fresh to rerun it/);
    await expect(run({ maxSteps: 2 })).rejects.toThrow(/holds another episode \(maxSteps: 5 in the log, 2 asked for\); pass --fresh/);
    expect(readFileSync(cell, "utf8")).toBe(before);
    // A log without one whole record (a full disk before its header) is a cell never started.
    writeFileSync(cell, "");
    expect(await run()).toMatchObject({ ran: 1, reused: 2 });
    expect(readFileSync(cell, "utf8").replace(/,"meta":\{[^}]*\}/g, "")).toBe(before.replace(/,"meta":\{[^}]*\}/g, ""));
    expect(await run({ warmup: 11, fresh: true })).toMatchObject({ ran: 3, reused: 0 });
    expect((await run({ warmup: 11 })).rows.map((r) => r.snapshot)).toEqual(["auratown-s42-t10", "auratown-s42-t11", "auratown-s42-t12"]);
  }, 60_000);

  it("generalises to phrasings written for the tests (held-out set): GapRouted answers most with few probes", async () => {
    const r = await runFactualEval({ file: HELD_OUT, conditions: ["fixed-probe", "aura-gap-routed"], seeds: [42], out: tempDir("factual-heldout") });
    const a = r.acceptance!;
    expect(a.probeShare).toBeLessThanOrEqual(0.25);
    expect(a.gapRoutedAccuracy).toBeGreaterThan(0.85);
    expect(a.accuracyGap).toBeLessThanOrEqual(0.1);
  }, 60_000);

  it("the analyser reads a named resident as a person, not as their home", () => {
    const places = { "Zhang Hao's Home": "home", "Town Park": "park", "Sunrise Cafe": "cafe" };
    const roster = ["Lin Wei", "Zhang Hao"];
    expect(analyseFactual("Where is Zhang Hao?", Object.keys(places), places, roster).tools.map((t) => t.tool)).toEqual(["get_all_agents"]);
    expect(analyseFactual("Is anyone at Zhang Hao's Home?", Object.keys(places), places, roster).tools[0]).toEqual({ tool: "get_location_info", location: "Zhang Hao's Home" });
    expect(analyseFactual("What happened in the last hour?", Object.keys(places), places, roster).tools.map((t) => t.tool)).toEqual(["get_recent_events"]);
  });
});
