// Model rows of docs/fidelity.md: a record made from an eval's JSON and its logs counts the model
// calls the logs hold (valid at once, valid after the repair turn, failed), and renders beside the
// deterministic figures. The model is the fake OpenAI-compatible server.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runImplicitEval } from "../services/aura/eval.ts";
import { modelRunRecord, modelRunsSection, readModelRuns } from "../services/aura/modelRuns.ts";
import { fakeServer } from "./fakeLlmServer.ts";
import { tempDir } from "./helpers.ts";

const SCENE_A = join(import.meta.dirname, "..", "data", "aura", "implicit_intent_scene_a.json");
const DEV17 = join(import.meta.dirname, "..", "data", "aura", "implicit", "dev17.json");
const DEV17_FIRST = "PA_polling_station_morning";
const FRAME = JSON.stringify({ literal_need: "where", implicit_need: ["free?"], gap: 0.5, recommended_probes: ["get_agent_private_state"], should_alert: true, confidence: 0.7, rationale: "r" });

describe("model-run records for the fidelity report", () => {
  it("counts valid, repaired and failed calls from the logs and renders them beside the deterministic rows", async () => {
    // Of the 25 first answers every fifth is not JSON (its repair turn then answers a frame), and
    // the 3rd's repair is not JSON either: that call fails and the deterministic backend answers.
    let first = 0;
    const server = await fakeServer((b) => {
      const repairTurn = b.messages.length > 2;
      if (!repairTurn) first++;
      if (!repairTurn && (first % 5 === 0 || first === 3)) return { content: "not json" };
      if (repairTurn && first === 3) return { content: "still not json" };
      return { content: FRAME };
    });
    try {
      const dir = tempDir("model-runs");
      const out = join(dir, "runs");
      const result = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [1], out, llm: { baseURL: server.url, apiKey: "k", models: { intent: "m", planner: null, answer: null }, maxAttempts: 1 } });
      const evalJson = join(dir, "eval.json");
      writeFileSync(evalJson, JSON.stringify({ file: SCENE_A, conditions: result.conditions }));
      const record = modelRunRecord(evalJson, out, { label: "fake", model: "m", size: "0 B", measured: "2026-11-29", command: "eval implicit --llm fake", notes: ["a note"] });
      const { requested, validFirst, repaired, failed } = record.llm;
      expect(requested).toBe(25);
      expect({ validFirst, repaired, failed }).toEqual({ validFirst: 19, repaired: 5, failed: 1 });
      expect(record.splits[0]!.conditions[0]!.fallbacks).toBe(failed);
      const records = join(dir, "records");
      mkdirSync(records);
      writeFileSync(join(records, "fake.json"), JSON.stringify(record));
      const md = modelRunsSection(readModelRuns(records), () => ({ implicit: 0.98, literal: 0.96, probes: 1.48 })).join("\n");
      expect(md).toContain(`Model calls: 25 requested, ${validFirst} valid at once, ${repaired} valid after repair, ${failed} failed`);
      expect(md).toMatch(/\| implicit_intent_scene_a\.json \| aura-intent \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 0 \| \d+ \| 0\.960 \| 0\.980 \| 1\.48 \|/);
      expect(md).toContain("- a note");
    } finally {
      await server.close();
    }
  });

  it("keeps a subset of a split's scenes, labels the rows [model] with seed, commit and load, and asks for the same scenes' deterministic figures", async () => {
    const dir = tempDir("model-runs-subset");
    const out = join(dir, "runs");
    // A deterministic run stands in for the model's: what is tested is the record and its rendering.
    const result = await runImplicitEval({ file: DEV17, scenes: [DEV17_FIRST], conditions: ["aura-intent"], seeds: [1], out });
    const evalJson = join(dir, "eval.json");
    writeFileSync(evalJson, JSON.stringify({ file: DEV17, seeds: [1], conditions: result.conditions }));
    const record = modelRunRecord(evalJson, out, { label: "subset", model: "m", size: "1 B, Q4_K_M", measured: "2026-11-29", command: "eval implicit --scene …", commit: "abc1234", load: "6–9", notes: [] });
    expect(record.seeds).toEqual([1]);
    expect(record.splits[0]!.scenes).toEqual([DEV17_FIRST]);
    // Every scene of the file ran: no subset is kept.
    const wholeJson = join(dir, "whole.json");
    const every = ["PA_polling_station_morning", "PB_bike_coop_evening", "PC_campsite_night"];
    writeFileSync(wholeJson, JSON.stringify({ file: DEV17, conditions: [{ condition: "aura-intent", overall: {}, perScene: Object.fromEntries(every.map((s) => [s, {}])) }] }));
    expect(modelRunRecord(wholeJson, out, { label: "", model: "", size: "", measured: "", command: "", notes: [] }).splits[0]!.scenes).toBeUndefined();
    const asked: Array<readonly string[] | undefined> = [];
    const md = modelRunsSection([record], (_file, _condition, scenes) => (asked.push(scenes), { implicit: 0.5, literal: 1, probes: 1 })).join("\n");
    expect(asked).toEqual([[DEV17_FIRST]]);
    expect(md).toContain("**[model] subset** — model `m` (1 B, Q4_K_M), seed 1, commit abc1234, measured 2026-11-29, load 6–9:");
    expect(md).toContain(`| dev17.json (only ${DEV17_FIRST}) | aura-intent |`);
  });

  it("a run on a subset file cut from a split records the split and the queries that ran, and asks for their deterministic figures", async () => {
    const dir = tempDir("model-runs-split");
    const bench = JSON.parse(readFileSync(DEV17, "utf8")) as { scenes: Record<string, unknown>; queries: Array<{ id: number; scene: string; subcategory: string }> };
    const firstOfEach = bench.queries.filter((q) => q.scene === DEV17_FIRST).filter((q, i, qs) => qs.findIndex((o) => o.subcategory === q.subcategory) === i);
    const cut = join(dir, "dev17.json");
    writeFileSync(cut, JSON.stringify({ ...bench, scenes: { [DEV17_FIRST]: bench.scenes[DEV17_FIRST] }, queries: firstOfEach }));
    const out = join(dir, "runs");
    const result = await runImplicitEval({ file: cut, conditions: ["no-intent"], seeds: [1], out });
    const evalJson = join(dir, "eval.json");
    writeFileSync(evalJson, JSON.stringify({ file: cut, seeds: [1], conditions: result.conditions }));
    const meta = { label: "cut", model: "m", size: "s", measured: "2026-11-29", command: "c", notes: [] };
    const record = modelRunRecord(evalJson, out, meta, DEV17);
    const ids = firstOfEach.map((q) => String(q.id));
    expect(ids).toHaveLength(5);
    expect(record.splits[0]).toMatchObject({ file: "data/aura/implicit/dev17.json", scenes: [DEV17_FIRST], queries: ids });
    const asked: unknown[] = [];
    const md = modelRunsSection([record], (file, _c, scenes, queries) => (asked.push([file, scenes, queries]), null)).join("\n");
    expect(asked).toEqual([["data/aura/implicit/dev17.json", [DEV17_FIRST], ids]]);
    expect(md).toContain(`| dev17.json (only ${DEV17_FIRST}; 5 queries: ${ids.join(", ")}) | no-intent |`);
    // A query the split does not hold is refused, naming it.
    writeFileSync(cut, JSON.stringify({ ...bench, scenes: { [DEV17_FIRST]: bench.scenes[DEV17_FIRST] }, queries: [{ ...firstOfEach[0]!, id: 999999 }] }));
    expect(() => modelRunRecord(evalJson, out, meta, DEV17)).toThrow(/--split: queries 999999 of .* are not in/);
  });

  it("names the flag and what was expected when the inputs are missing", () => {
    const dir = tempDir("model-runs-bad");
    expect(() => modelRunRecord(join(dir, "none.json"), dir, { label: "", model: "", size: "", measured: "", command: "", notes: [] })).toThrow(/--eval-json: .*none\.json does not exist/);
  });
});
