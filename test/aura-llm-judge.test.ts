// The paper's LLM judges (§7.1 factual accuracy, §7.3 implicit intent) through the gateway against
// a fake OpenAI-compatible server (real HTTP, the real `openai` client): well-formed replies become
// row scores computed from the judge's counts; a malformed reply gets one repair attempt, then the
// row records the failure with no score; a rerun is served from each cell's judge.jsonl with zero
// HTTP requests; an experiment with an LLM judge regenerates its report without HTTP.
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runFactualEval } from "../services/aura/factualEval.ts";
import { runImplicitEval, runPrivacyEval } from "../services/aura/eval.ts";
import { loadResults } from "../services/analysis/results.ts";
import { loadSpec, runExperiment } from "../services/aura/experiment.ts";
import { parseFactualJudge, parseImplicitJudge, readJudgeLog, runJudgeCalls } from "../services/aura/llmJudge.ts";
import { llmRequest } from "../events/llm.ts";
import { truncateSync } from "node:fs";
import { makeLlmGateway } from "../services/llm/index.ts";
import type { LlmConfig } from "../services/llm/index.ts";
import { analyze, renderReport } from "../services/analysis/report.ts";
import { fakeServer, type ChatBody } from "./fakeLlmServer.ts";
import { logRecords, runCli, tempDir, until } from "./helpers.ts";
import { askEpisode } from "../services/aura/ask.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
/** The CLI, in this process (the fake servers live here too), with no endpoint or key from the environment. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args, ROOT, { PROBETOWN_LLM_BASE_URL: "", OPENAI_BASE_URL: "", PROBETOWN_LLM_API_KEY: "", OPENAI_API_KEY: "", ...env });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

const ROOT = join(import.meta.dirname, "..");
const FACTUAL = join(ROOT, "data/aura/factual_queries.json");
const SCENE_A = join(ROOT, "data/aura/implicit_intent_scene_a.json");
const PRIVACY = join(ROOT, "data/aura/privacy_queries.json");

/** The judge alone on a model: the controller's roles stay deterministic. */
const judgeOnly = (url: string, extra: Partial<LlmConfig> = {}): LlmConfig => ({ baseURL: url, apiKey: null, models: { intent: null, planner: null, answer: null, judge: "fake-judge" }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2, ...extra });

const FACTUAL_REPLY = { total_claims: 4, correct_claims: 3, contradicted_claims: 1, unverifiable_claims: 0, precision: 0.75, completeness: 1, accuracy: 0.99, hallucinations: ["x"], reasoning: "fake" };

/** A two-query factual file (a shorter warm-up keeps the town run short). */
function smallFactual(dir: string, n = 2): string {
  const file = join(dir, "factual2.json");
  const all = JSON.parse(readFileSync(FACTUAL, "utf8")) as { queries: unknown[] };
  writeFileSync(file, JSON.stringify({ queries: all.queries.slice(0, n) }));
  return file;
}

const system = (b: ChatBody) => b.messages[0]!.content;

describe("LLM judge parsers", () => {
  it("factual: scores come from the counts (not the judge's own accuracy), completeness snapped to 1/0.5/0", () => {
    const r = parseFactualJudge(JSON.stringify(FACTUAL_REPLY));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.scores).toMatchObject({ claims: 4, correct: 3, contradicted: 1, precision: 0.75, completeness: 1, strictPrecision: 0.75, claimRecall: 0.75, hallucination: true, perfect: false, reportedAccuracy: 0.99 });
    expect(r.scores.accuracy).toBeCloseTo(0.7 * 0.75 + 0.3, 10);
    const none = parseFactualJudge(JSON.stringify({ total_claims: 2, correct_claims: 0, contradicted_claims: 0, unverifiable_claims: 2, completeness: 0.5 }));
    expect(none.ok && none.scores).toMatchObject({ precision: 0.5, strictPrecision: null, claimRecall: 0, completeness: 0.5, hallucination: false, perfect: false });
    expect(parseFactualJudge("```json\n" + JSON.stringify({ ...FACTUAL_REPLY, completeness: 0.4 }) + "\n```").ok).toBe(true);
    expect(parseFactualJudge(JSON.stringify({ correct_claims: 1 }))).toEqual({ ok: false, error: "field 'contradicted_claims' must be an integer ≥ 0" });
    expect(parseFactualJudge("accuracy: high").ok).toBe(false);
  });

  it("implicit: two scores clamped to [0, 1]; a missing score is an error", () => {
    expect(parseImplicitJudge('{"literal_score": 1.4, "implicit_score": "0.5", "rationale": "r"}')).toEqual({ ok: true, scores: { literal: 1, implicit: 0.5 } });
    expect(parseImplicitJudge('{"literal_score": 1}')).toEqual({ ok: false, error: "field 'implicit_score' must be a number in [0, 1]" });
  });
});

describe("the judge log", () => {
  it("serves recorded answers by request hash; a torn last line is asked again and the file stays line-per-record", async () => {
    const server = await fakeServer(() => ({ content: '{"literal_score": 1, "implicit_score": 0}' }));
    try {
      const log = join(tempDir("judge-log"), "judge.jsonl");
      const req = (text: string) => llmRequest("judge", "fake-judge", [{ role: "user", content: text }], { temperature: 0.1, maxTokens: 200, json: true, output: "judge-implicit" }, null);
      const gateway = makeLlmGateway(judgeOnly(server.url), { outputs: { "judge-implicit": () => null } });
      const calls = [{ log, request: req("a") }, { log, request: req("b") }, { log, request: req("a") }];
      const first = await runJudgeCalls(calls, gateway);
      expect(first).toMatchObject({ served: 0, asked: 2 });
      expect(server.requests).toBe(2);
      expect(readFileSync(log, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { seq: number; type: string }).type)).toEqual(["llm.requested", "llm.completed", "llm.requested", "llm.completed"]);
      const again = await runJudgeCalls(calls, null);
      expect(again).toMatchObject({ served: 3, asked: 0 });
      // Cut the last answer in half: the unfinished line is dropped and its request asked again.
      const size = readFileSync(log).length;
      truncateSync(log, size - 40);
      const torn = await runJudgeCalls(calls, gateway);
      expect(torn).toMatchObject({ served: 2, asked: 1 });
      expect(server.requests).toBe(3);
      const lines = readFileSync(log, "utf8").trim().split("\n");
      expect(lines).toHaveLength(5);
      expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([0, 1, 2, 3, 4]);
      expect(readJudgeLog(log).answers.size).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("records each answer as it comes (in call order), so a pass interrupted while a later call is out keeps the earlier ones", async () => {
    // The third question is answered slowly: while it is out, the first two must already be on disk.
    const server = await fakeServer((body) => ({ content: '{"literal_score": 1, "implicit_score": 0}', ...(JSON.stringify(body.messages).includes("slow") ? { delayMs: 1500 } : {}) }));
    try {
      const log = join(tempDir("judge-progress"), "judge.jsonl");
      const req = (text: string) => llmRequest("judge", "fake-judge", [{ role: "user", content: text }], { temperature: 0.1, maxTokens: 200, json: true, output: "judge-implicit" }, null);
      const gateway = makeLlmGateway(judgeOnly(server.url), { outputs: { "judge-implicit": () => null } });
      const pass = runJudgeCalls([{ log, request: req("a") }, { log, request: req("b") }, { log, request: req("slow") }], gateway);
      // Looked at until the first two are there (a fixed 700 ms could come before them on a loaded machine).
      await until(() => readJudgeLog(log).answers.size >= 2, "the first two answers on disk");
      expect(readJudgeLog(log).answers.size).toBe(2);
      expect((await pass).asked).toBe(3);
      const types = readFileSync(log, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { payload: { messages?: { content: string }[] } }).payload.messages?.[0]?.content);
      expect(types).toEqual(["a", undefined, "b", undefined, "slow", undefined]);
    } finally {
      await server.close();
    }
  });

  it("a recorded failure to reach the model is asked again when a gateway is given (an invalid answer is not); without one it is served", async () => {
    const log = join(tempDir("judge-unreached"), "judge.jsonl");
    const req = (text: string) => llmRequest("judge", "fake-judge", [{ role: "user", content: text }], { temperature: 0.1, maxTokens: 200, json: true, output: "judge-implicit" }, null);
    const calls = [{ log, request: req("a") }, { log, request: req("a") }];
    const dead = await fakeServer(() => ({ content: "{}" }));
    const deadUrl = dead.url;
    await dead.close();
    const down = await runJudgeCalls(calls, makeLlmGateway(judgeOnly(deadUrl, { maxAttempts: 1 }), { outputs: { "judge-implicit": () => null } }));
    expect(down.answers[0]).toMatchObject({ type: "llm.failed", payload: { error: "network" } });
    expect((await runJudgeCalls(calls, null)).answers[0]).toMatchObject({ type: "llm.failed" });
    const server = await fakeServer(() => ({ content: '{"literal_score": 1, "implicit_score": 0}' }));
    try {
      const gateway = makeLlmGateway(judgeOnly(server.url), { outputs: { "judge-implicit": () => null } });
      const up = await runJudgeCalls(calls, gateway);
      expect(up).toMatchObject({ served: 0, asked: 1 });
      expect(up.answers.map((a) => a?.type)).toEqual(["llm.completed", "llm.completed"]);
      expect(readFileSync(log, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(["llm.requested", "llm.failed", "llm.requested", "llm.completed"]);
      expect(readJudgeLog(log).answers.get(calls[0]!.request.requestHash)?.type).toBe("llm.completed");
      expect(await runJudgeCalls(calls, gateway)).toMatchObject({ served: 2, asked: 0 });
      expect(server.requests).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe("§7.1 factual LLM judge on eval factual", () => {
  it("well-formed: rows carry the judge's scores, calls are recorded beside each cell, a rerun makes zero HTTP requests", async () => {
    const server = await fakeServer(() => ({ content: JSON.stringify(FACTUAL_REPLY) }));
    try {
      const dir = tempDir("judge-factual");
      const file = smallFactual(dir);
      const o = { file, conditions: ["fixed-probe"], seeds: [42], out: join(dir, "out"), warmup: 2, judge: "both" as const, llm: judgeOnly(server.url) };
      const first = await runFactualEval(o);
      expect(server.requests).toBe(2);
      const body = server.bodies[0]! as ChatBody & { temperature?: number; max_tokens?: number };
      expect(body.model).toBe("fake-judge");
      expect(body.temperature).toBe(0.1);
      expect(body.max_tokens).toBe(1024);
      expect(body.response_format).toEqual({ type: "json_object" });
      expect(system(body)).toMatch(/CORRECT, CONTRADICTED|CORRECT: the ground truth/);
      expect(body.messages[1]!.content).toMatch(/^USER QUERY \(asked by .+\): Where am I right now\?/);
      expect(body.messages[1]!.content).toMatch(/GROUND TRUTH:[\s\S]*"all_agents"[\s\S]*AI RESPONSE:/);
      // The controller stayed deterministic: no -llm cells, no model calls in the episode logs.
      const rows = loadResults(first.results);
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        expect(r).toMatchObject({ judge: "both", llmJudge: "fake-judge", llmPrecision: 0.75, llmCompleteness: 1, llmStrictPrecision: 0.75, llmClaimRecall: 0.75, llmHallucination: true, llmPerfect: false });
        expect(r.llmAccuracy).toBeCloseTo(0.825, 10);
        expect(r.accuracy).not.toBeNull(); // the rule judge's figure too (both)
        expect(r.llmJudgeError).toBeUndefined();
        expect(r.log).not.toMatch(/-llm$/);
        const recorded = readFileSync(join(r.log, "judge.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; cause: number | null });
        expect(recorded.map((x) => x.type)).toEqual(["llm.requested", "llm.completed"]);
        expect(recorded[1]!.cause).toBe(0);
      }
      expect(first.conditions[0]!.overall.llm).toMatchObject({ scored: 2, failures: 0 });
      const text = readFileSync(first.results, "utf8");
      // Rerun: cells served from their logs, the judge from its records: no HTTP, the same rows.
      const again = await runFactualEval(o);
      expect(server.requests).toBe(2);
      expect(again.ran).toBe(0);
      expect(readFileSync(again.results, "utf8")).toBe(text);
      // Even without an endpoint (the judge's model named, nothing to call), the records serve.
      const offline = await runFactualEval({ ...o, llm: judgeOnly("http://127.0.0.1:9/v1") });
      expect(readFileSync(offline.results, "utf8")).toBe(text);
      // --judge llm: the rule judge's scores are left out of the rows; the report can use the LLM's.
      const llmOnly = await runFactualEval({ ...o, judge: "llm" });
      expect(server.requests).toBe(2);
      const rs = loadResults(llmOnly.results);
      expect(rs.every((r) => r.accuracy === null && r.correct === null && r.judge === "llm")).toBe(true);
      const a = analyze(rs).benchmarks[0]!;
      expect(a.metric).toBe("llm-accuracy");
      expect(a.arms[0]!.metrics["llm-accuracy"]!.mean).toBeCloseTo(0.825, 10);
    } finally {
      await server.close();
    }
  });

  it("malformed: one repair attempt, then the row records the failure and no score; a rerun serves the failure without HTTP", async () => {
    const server = await fakeServer(() => ({ content: "The answer looks mostly right, I'd say 0.8." }));
    try {
      const dir = tempDir("judge-bad");
      const file = smallFactual(dir, 1);
      const o = { file, conditions: ["aura-gap-routed"], seeds: [42], out: join(dir, "out"), warmup: 2, judge: "llm" as const, llm: judgeOnly(server.url) };
      const first = await runFactualEval(o);
      expect(server.requests).toBe(2); // the call and its repair
      expect(server.bodies[1]!.messages.at(-1)!.content).toMatch(/could not be used: not valid JSON/);
      const [row] = loadResults(first.results);
      expect(row).toMatchObject({ judge: "llm", llmJudge: "fake-judge", llmAccuracy: null, llmPrecision: null, llmHallucination: null });
      expect(row!.llmJudgeError).toMatch(/^invalid_output: invalid output after a repair attempt/);
      const recorded = readJudgeLog(join(row!.log, "judge.jsonl"));
      expect([...recorded.answers.values()][0]).toMatchObject({ type: "llm.failed", payload: { error: "invalid_output", attempts: 2 } });
      expect(first.conditions[0]!.overall.llm).toMatchObject({ scored: 0, failures: 1, accuracy: null });
      const again = await runFactualEval(o);
      expect(server.requests).toBe(2);
      expect(readFileSync(again.results, "utf8")).toBe(readFileSync(first.results, "utf8"));
    } finally {
      await server.close();
    }
  });

  it("an LLM judge without a model is a usage error; without an endpoint and no record the row says so", async () => {
    const dir = tempDir("judge-none");
    const file = smallFactual(dir, 1);
    await expect(runFactualEval({ file, conditions: ["fixed-probe"], seeds: [42], out: join(dir, "out"), warmup: 2, judge: "llm" })).rejects.toThrow(/the LLM judge needs a model/);
    // Refused connection: recorded as the gateway's failure (network), no score.
    const r = await runFactualEval({ file, conditions: ["fixed-probe"], seeds: [42], out: join(dir, "out"), warmup: 2, judge: "llm", llm: judgeOnly("http://127.0.0.1:9/v1", { maxAttempts: 1 }) });
    const [row] = loadResults(r.results);
    expect(row!.llmAccuracy).toBeNull();
    expect(row!.llmJudgeError).toMatch(/^(network|timeout)/);
  });
});

describe("§7.3 implicit-intent LLM judge on eval implicit", () => {
  it("literal and implicit scores per row, the second-order ground truth shown, reruns without HTTP", async () => {
    const server = await fakeServer((b) => ({ content: system(b).includes("implicit_score") ? JSON.stringify({ literal_score: 0.9, implicit_score: 0.5, rationale: "fake" }) : "{}" }));
    try {
      const dir = tempDir("judge-implicit");
      const o = { file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out: join(dir, "out"), judge: "both" as const, llm: judgeOnly(server.url) };
      const first = await runImplicitEval(o);
      expect(server.requests).toBe(25);
      const body = server.bodies[0]! as ChatBody & { max_tokens?: number };
      expect(body.max_tokens).toBe(200);
      expect(body.messages[1]!.content).toMatch(/^USER QUERY: [\s\S]*GROUND TRUTH:[\s\S]*"implicit_need"[\s\S]*IMPLICIT NEED: [\s\S]*AI RESPONSE:/);
      const second = server.bodies.find((b) => b.messages[1]!.content.includes("believers_belief_about_target"));
      expect(second).toBeDefined();
      expect(second!.messages[1]!.content).toMatch(/targets_actual_private_state/);
      const rows = loadResults(first.results);
      expect(rows.every((r) => r.llmLiteral === 0.9 && r.llmImplicit === 0.5 && r.judge === "both" && r.implicitCoverage !== undefined)).toBe(true);
      expect(first.conditions[0]!.overall.llm).toMatchObject({ implicit: 0.5, scored: 25, failures: 0 });
      expect(first.conditions[0]!.overall.llm!.literal).toBeCloseTo(0.9, 10);
      expect(existsSync(join(rows[0]!.log, "judge.jsonl"))).toBe(true);
      const again = await runImplicitEval(o);
      expect(server.requests).toBe(25);
      expect(readFileSync(again.results, "utf8")).toBe(readFileSync(first.results, "utf8"));
    } finally {
      await server.close();
    }
  });
});

describe("privacy slice with the factual LLM judge", () => {
  it("scores each answer against its snapshot", async () => {
    const server = await fakeServer(() => ({ content: JSON.stringify(FACTUAL_REPLY) }));
    try {
      const dir = tempDir("judge-privacy");
      const r = await runPrivacyEval({ file: PRIVACY, conditions: ["aura-gap-routed"], seeds: [42], out: join(dir, "out"), warmup: 2, judge: "both", llm: judgeOnly(server.url) });
      const rows = loadResults(r.results);
      expect(server.requests).toBe(rows.length);
      expect(rows.every((x) => x.llmAccuracy !== null && x.llmAccuracy !== undefined && x.judge === "both")).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe("experiment with an LLM judge", () => {
  it("judges: [rule, llm] with an llm section; --report-only regenerates the same report with zero HTTP", async () => {
    const server = await fakeServer(() => ({ content: JSON.stringify(FACTUAL_REPLY) }));
    try {
      const dir = tempDir("judge-exp");
      smallFactual(dir);
      const specFile = join(dir, "spec.json");
      writeFileSync(specFile, JSON.stringify({ benchmark: "factual", file: "factual2.json", seeds: [42], conditions: ["fixed-probe", "aura-gap-routed"], warmup: 2, judges: ["rule", "llm"], llm: { baseURL: server.url, models: { intent: null, planner: null, answer: null, judge: "fake-judge" }, backoffMs: 5 }, out: "out", report: { metric: "llm-accuracy", bootstrap: 200 } }));
      const spec = loadSpec(specFile);
      expect(spec.judges).toEqual(["rule", "llm"]);
      const first = await runExperiment(spec);
      expect(server.requests).toBe(4);
      const rows = loadResults(first.results);
      expect(rows.every((r) => r.judge === "both" && r.llmJudge === "fake-judge" && r.accuracy !== null)).toBe(true);
      const report = readFileSync(first.report.report, "utf8");
      expect(report).toMatch(/LLM judge accuracy/);
      const results = readFileSync(first.results, "utf8");
      await server.close();
      // The endpoint is gone: the report comes from the logs and the judge's records alone.
      const again = await runExperiment(loadSpec(specFile), { reportOnly: true });
      expect(server.requests).toBe(4);
      expect(readFileSync(again.results, "utf8")).toBe(results);
      expect(readFileSync(again.report.report, "utf8")).toBe(report);
    } finally {
      await server.close().catch(() => undefined);
    }
  });
});

describe("an LLM judge that cannot be reached", () => {
  it("experiment: the rows say so, the CLI warns and exits 5 (the endpoint could not be reached) when no cell was scored; a rerun with the judge back scores them", async () => {
    const dir = tempDir("judge-down");
    smallFactual(dir);
    const dead = await fakeServer(() => ({ content: "{}" }));
    const deadUrl = dead.url;
    await dead.close();
    const specOf = (url: string) => ({ benchmark: "factual", file: "factual2.json", seeds: [42], conditions: ["fixed-probe"], warmup: 2, judges: ["rule", "llm"], llm: { baseURL: url, models: { intent: null, planner: null, answer: null, judge: "fake-judge" }, backoffMs: 5, maxAttempts: 1 }, out: "out", report: { bootstrap: 200 } });
    const specFile = join(dir, "spec.json");
    writeFileSync(specFile, JSON.stringify(specOf(deadUrl)));
    const cli = await runCli(["experiment", specFile, "-q"]);
    expect(cli.code).toBe(5);
    expect(cli.err).toMatch(/the LLM judge scored no cell \(first error: network/);
    expect(cli.err).toContain(`finished, but the model endpoint could not be reached: its model calls failed; the cells' logs are complete and valid, but not a model run (exit 5)\n  unreachable: no answer from ${new URL(deadUrl).host} (connection failed: connect ECONNREFUSED ${new URL(deadUrl).host}); is the server running? check ${specFile}: llm.baseURL ${deadUrl}\n`);
    expect(loadResults(join(dir, "out", "results.jsonl")).every((r) => r.llmJudgeError !== undefined)).toBe(true);
    const server = await fakeServer(() => ({ content: JSON.stringify(FACTUAL_REPLY) }));
    try {
      writeFileSync(specFile, JSON.stringify(specOf(server.url)));
      const again = await runExperiment(loadSpec(specFile));
      expect(again.llmJudge).toEqual({ cells: 2, failed: 0, firstError: null });
      expect(server.requests).toBe(2);
    } finally {
      await server.close();
    }
  });

  it("the shipped experiment (its report on the judge's llm-accuracy) exits 5, not 2, naming the endpoint, when the judge cannot be reached", async () => {
    const dir = tempDir("judge-down-shipped");
    smallFactual(dir);
    const dead = await fakeServer(() => ({ content: "{}" }));
    const deadUrl = dead.url;
    await dead.close();
    // experiments/factual-rq2-llm-judge.yaml as shipped (its report, its judge), on two queries, one seed, and the dead endpoint.
    const shipped = parseYaml(readFileSync(join(ROOT, "experiments/factual-rq2-llm-judge.yaml"), "utf8")) as { report: { metric: string }; llm: Record<string, unknown> };
    expect(shipped.report.metric).toBe("llm-accuracy");
    const specFile = join(dir, "spec.json");
    writeFileSync(specFile, JSON.stringify({ ...shipped, file: "factual2.json", seeds: [42], conditions: ["fixed-probe", "aura-gap-routed"], forks: { warmup: 2 }, llm: { ...shipped.llm, baseURL: deadUrl, backoffMs: 5, maxAttempts: 1 }, out: "out", report: { ...shipped.report, bootstrap: 200 } }));
    const run = await runCli(["experiment", specFile, "-q"], ROOT, { OPENAI_API_KEY: "", PROBETOWN_LLM_API_KEY: "" });
    expect(run.code).toBe(5);
    expect(run.err).toContain(`experiment factual-rq2-llm-judge: finished, but the model endpoint could not be reached: its model calls failed; the cells' logs are complete and valid, but not a model run (exit 5)\n  unreachable: no answer from ${new URL(deadUrl).host}`);
    expect(run.err).toMatch(/probetown: error: .*spec\.json: report\.metric llm-accuracy: no row has LLM judge accuracy values .*: the LLM judge could not score 4 of 4 cells because the model endpoint .* failed \(first error: network: .*\); the cells' logs and .*results\.jsonl are written, the report is not/);
    expect(run.err).not.toContain("exit 2");
    // The cells and results are kept: the rule judge's rows are there, the LLM judge's failure recorded.
    const rows = loadResults(join(dir, "out", "results.jsonl"));
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => r.llmJudgeError !== undefined && r.correct !== null)).toBe(true);
  });
});

describe("backend labels on LLM runs", () => {
  it("a query whose intent stage fell back keeps its condition's configured backend; the fallback is counted and shown", async () => {
    let intents = 0;
    const FRAME = { literal_need: "x", implicit_need: ["y"], gap: 0.5, recommended_probes: ["get_agent_private_state"], should_alert: false, confidence: 0.6, rationale: "fake" };
    const server = await fakeServer((b) => {
      if (system(b).includes("Gap rubric")) return { content: ++intents <= 2 ? "no frame today" : JSON.stringify(FRAME) };
      return { content: JSON.stringify({ answer: "fake answer" }) };
    });
    try {
      const dir = tempDir("judge-labels");
      const r = await runImplicitEval({ file: SCENE_A, conditions: ["aura-intent"], seeds: [42], out: join(dir, "out"), llm: { baseURL: server.url, apiKey: null, models: { intent: "fake-m", planner: "fake-m", answer: "fake-m" }, backoffMs: 5, maxAttempts: 1 } });
      const rows = loadResults(r.results);
      expect(rows).toHaveLength(25);
      expect(new Set(rows.map((x) => x.backend))).toEqual(new Set(["llm:fake-m"]));
      expect(rows.filter((x) => (x.fallbacks ?? 0) > 0)).toHaveLength(1);
      expect(r.conditions[0]!.backend).toBe("llm:fake-m");
      expect(r.conditions[0]!.overall.fallbacks).toBe(1);
      const report = renderReport(rows);
      expect(report.analysis.benchmarks[0]!.arms).toHaveLength(1);
      expect(report.analysis.benchmarks[0]!.arms[0]).toMatchObject({ arm: "aura-intent", backend: "llm:fake-m", fallbacks: 1 });
      expect(report.markdown).toMatch(/\| fallbacks \|/);
    } finally {
      await server.close();
    }
  });
});

const FRAME2 = { literal_need: "x", implicit_need: ["y"], gap: 0.5, recommended_probes: ["get_agent_private_state", "get_current_time"], should_alert: false, confidence: 0.6, rationale: "fake" };
/** Answers every controller role: the frame, a stop step, a plan, an answer. */
const controllerReply = (b: ChatBody) => {
  const sys = system(b);
  if (sys.includes("Gap rubric")) return { content: JSON.stringify(FRAME2) };
  if (sys.includes("implicit_score")) return { content: JSON.stringify({ literal_score: 1, implicit_score: 1, rationale: "r" }) };
  if (sys.includes("CONTRADICTED")) return { content: JSON.stringify(FACTUAL_REPLY) };
  return { content: JSON.stringify({ answer: "fake model answer", action: "stop", tool: null, arguments: {}, reason: "done", steps: [] }) };
};

describe("--llm on eval factual, experiment specs and ask", () => {
  it("eval factual: the controller's answer comes from the model in -llm cells; the rows keep the configured backend; a rerun is served without HTTP", async () => {
    const server = await fakeServer(controllerReply);
    try {
      const dir = tempDir("factual-llm");
      const file = smallFactual(dir);
      const o = { file, conditions: ["fixed-probe"], seeds: [42], out: join(dir, "out"), warmup: 2, llm: { baseURL: server.url, apiKey: null, models: { intent: "fake-m", planner: "fake-m", answer: "fake-m", judge: null }, backoffMs: 5 } };
      const first = await runFactualEval(o);
      const n = server.requests;
      expect(n).toBeGreaterThan(0);
      const rows = loadResults(first.results);
      expect(rows.every((r) => r.backend === "llm:fake-m" && r.fallbacks === 0 && /-llm$/.test(r.log))).toBe(true);
      expect(first.llm?.usage.total.calls).toBe(n);
      const again = await runFactualEval(o);
      expect(again.ran).toBe(0);
      expect(server.requests).toBe(n);
      expect((await verifyEpisode(rows[0]!.log)).ok).toBe(true);
      expect(server.requests).toBe(n);
    } finally {
      await server.close();
    }
  });

  it("experiment: an llm section puts the controller on the model (cells suffixed -llm); --report-only needs no endpoint", async () => {
    const server = await fakeServer(controllerReply);
    try {
      const dir = tempDir("exp-llm");
      smallFactual(dir, 1);
      const specFile = join(dir, "spec.yaml");
      writeFileSync(specFile, `benchmark: factual\nfile: factual2.json\nseeds: [42]\nconditions: [fixed-probe]\nwarmup: 2\njudges: [llm]\nllm:\n  baseURL: ${server.url}\n  model: fake-m\n  backoffMs: 5\nout: out\n`);
      const first = await runExperiment(loadSpec(specFile));
      const n = server.requests;
      const [row] = loadResults(first.results);
      expect(row).toMatchObject({ backend: "llm:fake-m", fallbacks: 0, judge: "llm", llmJudge: "fake-m", accuracy: null });
      expect(row!.llmAccuracy).toBeCloseTo(0.825, 10);
      expect(row!.log).toMatch(/-llm$/);
      const text = readFileSync(first.results, "utf8");
      await server.close();
      const again = await runExperiment(loadSpec(specFile), { reportOnly: true });
      expect(server.requests).toBe(n);
      expect(readFileSync(again.results, "utf8")).toBe(text);
    } finally {
      await server.close().catch(() => undefined);
    }
  });

  it("experiment: implicit and privacy cells on the model are found again by the matrix (a rerun runs nothing, no HTTP)", async () => {
    const server = await fakeServer(controllerReply);
    try {
      const dir = tempDir("exp-llm-ip");
      for (const [benchmark, file, extra] of [["implicit", SCENE_A, {}], ["privacy", PRIVACY, { warmup: 2 }]] as const) {
        const specFile = join(dir, `${benchmark}.json`);
        writeFileSync(specFile, JSON.stringify({ benchmark, file, seeds: [42], conditions: [benchmark === "implicit" ? "aura-intent" : "aura-gap-routed"], ...extra, judges: ["rule", "llm"], llm: { baseURL: server.url, model: "fake-m", backoffMs: 5 }, out: `out-${benchmark}`, report: { bootstrap: 100 } }));
        const first = await runExperiment(loadSpec(specFile));
        expect(first.ran).toBe(first.cells);
        const rows = loadResults(first.results);
        expect(rows.every((r) => r.backend === "llm:fake-m" && r.fallbacks === 0 && /-llm$/.test(r.log) && r.judge === "both" && r.llmJudgeError === undefined)).toBe(true);
        const n = server.requests;
        const again = await runExperiment(loadSpec(specFile));
        expect(again.ran).toBe(0);
        expect(server.requests).toBe(n);
        expect(readFileSync(again.results, "utf8")).toBe(readFileSync(first.results, "utf8"));
      }
    } finally {
      await server.close();
    }
  });

  it("experiment against an endpoint that answers every call with HTTP 500: endpointProblems says `errors_only` (live, then recorded when served again)", async () => {
    const server = await fakeServer(() => ({ status: 500 }));
    try {
      const dir = tempDir("exp-llm-500");
      const specFile = join(dir, "implicit.json");
      writeFileSync(specFile, JSON.stringify({ benchmark: "implicit", file: SCENE_A, seeds: [42], conditions: ["aura-intent"], judges: ["rule"], llm: { baseURL: server.url, model: "fake-m", backoffMs: 5, maxAttempts: 2 }, out: "out", report: { bootstrap: 100 } }));
      const first = await runExperiment(loadSpec(specFile));
      expect(first.fallbacks).toBeGreaterThan(0);
      expect(first.endpointProblems).toEqual([{ kind: "errors_only", status: 500, message: "HTTP 500: fake error 500", server: new URL(server.url).host, model: "fake-m", live: true }]);
      const again = await runExperiment(loadSpec(specFile));
      expect(again.ran).toBe(0);
      // A log records no status, and a server_error's is any 5xx: the recorded problem names none (its message says it).
      expect(again.endpointProblems).toMatchObject([{ kind: "errors_only", status: null, message: "HTTP 500: fake error 500", server: null, live: false }]);
    } finally {
      await server.close();
    }
  });

  it("a spec's llm section and judges are checked", () => {
    const dir = tempDir("exp-llm-bad");
    smallFactual(dir, 1);
    const problem = (spec: unknown) => {
      writeFileSync(join(dir, "s.json"), JSON.stringify({ benchmark: "factual", file: "factual2.json", seeds: [1], conditions: ["fixed-probe"], ...(spec as object) }));
      try {
        loadSpec(join(dir, "s.json"));
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    };
    expect(problem({ judges: ["llm"] })).toMatch(/field 'judges': the llm judge needs an `llm` section/);
    expect(problem({ judges: ["gpt"] })).toMatch(/field 'judges': unknown judge 'gpt'/);
    expect(problem({ llm: { baseURL: "http://127.0.0.1:8000/v1", colour: 1 } })).toMatch(/field 'llm': .*colour/);
    expect(problem({ llm: { baseURL: "http://127.0.0.1:8000/v1", apiKey: "x" } })).toMatch(/field 'llm': do not put the API key/);
    expect(problem({ judges: ["rule", "llm"], llm: { baseURL: "http://127.0.0.1:8000/v1", model: "m" } })).toBe("");
  });

  it("ask: the controller's roles on the model; the fork's log records the calls and verifies with zero HTTP", async () => {
    const server = await fakeServer(controllerReply);
    try {
      const town = join(tempDir("ask-llm-town"), "town");
      await runEpisode({ world: "auratown", seed: 7, ticks: 4, dir: town, trace: { exporter: "none" }, snapshotEvery: 0, fsync: "never" });
      const out = join(tempDir("ask-llm"), "fork");
      const r = await askEpisode({ episode: town, tick: 3, agent: "lin-wei", question: "Is Zhang Hao free to chat right now?", out, llm: { baseURL: server.url, apiKey: null, models: { intent: "fake-m", planner: "fake-m", answer: "fake-m" }, backoffMs: 5 } });
      expect(r.answer.text).toBe("fake model answer");
      expect(r.answer.backend).toBe("llm:fake-m");
      expect(r.llm?.usage.total.calls).toBe(2);
      const records = logRecords(out);
      expect(records.filter((x) => x.type === "llm.completed")).toHaveLength(2);
      const n = server.requests;
      expect((await verifyEpisode(out)).ok).toBe(true);
      expect(server.requests).toBe(n);
    } finally {
      await server.close();
    }
  });
});

describe("CLI", () => {
  it("eval factual --judge llm --llm <url> --model none --model judge=…: deterministic cells, the judge on the model; a rerun makes no HTTP", async () => {
    const server = await fakeServer(controllerReply);
    try {
      const dir = tempDir("judge-cli");
      const file = smallFactual(dir, 1);
      const args = ["eval", "factual", "--file", file, "--condition", "fixed-probe", "--seeds", "42", "--warmup", "2", "--out", join(dir, "out"), "--judge", "llm", "--llm", server.url, "--model", "none", "--model", "judge=fake-judge"];
      const first = await cli(args);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/intent=deterministic planner=deterministic answer=deterministic judge=fake-judge;/);
      expect(first.stdout).toMatch(/LLM judge: accuracy 0\.825 .* 1 cells scored, 0 failed/);
      expect(server.requests).toBe(1);
      expect(server.bodies[0]!.model).toBe("fake-judge");
      const again = await cli(args);
      expect(again.code, again.stderr).toBe(0);
      expect(server.requests).toBe(1);
      const bad = await cli(["eval", "factual", "--file", file, "--condition", "fixed-probe", "--judge", "gpt"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--judge expects one of rule, llm, both, got 'gpt'/);
      // A judge that scores nothing (the endpoint refuses the key) says so (it exited 0 with '0
      // cells scored' in the table); the refusal is what to fix, so exit 5 (not the judge's 2).
      const refusing = await fakeServer(() => ({ status: 401 }));
      try {
        const refused = await cli(["eval", "factual", "--file", file, "--condition", "fixed-probe", "--seeds", "42", "--warmup", "2", "--out", join(dir, "refused"), "--judge", "llm", "--llm", refusing.url, "--model", "none", "--model", "judge=fake-judge", "--json"]);
        expect(refused.code, refused.stderr).toBe(5);
        expect(refused.stderr).toContain("eval factual: the LLM judge scored no cell (first error: auth: HTTP 401: fake error 401); there are no LLM-judge scores.");
        expect(refused.stderr).toContain("eval factual: finished, but the model endpoint refused: its model calls failed; the cells' logs are complete and valid, but not a model run (exit 5)\n");
        expect(refusing.requests).toBe(1);
        expect(JSON.parse(refused.stdout).results).toMatch(/results-fixed-probe\.jsonl$/);
      } finally {
        await refusing.close();
      }
      // An experiment whose cells and judge are both on a model that refuses the key asks it once
      // for the whole command: the cells and the judge share one gateway (each had its own: twice).
      const refusingAll = await fakeServer(() => ({ status: 401 }));
      try {
        writeFileSync(join(dir, "refused-spec.json"), JSON.stringify({ benchmark: "factual", file: "factual2.json", seeds: [42], conditions: ["fixed-probe", "aura-gap-routed"], warmup: 2, judges: ["rule", "llm"], llm: { baseURL: refusingAll.url, model: "fake-model" }, out: "refused-exp" }));
        const refused = await cli(["experiment", join(dir, "refused-spec.json"), "-q"]);
        expect(refused.code, refused.stderr).toBe(5);
        expect(refused.stderr).toContain(`key refused by ${new URL(refusingAll.url).host}: HTTP 401: fake error 401`);
        expect(refused.stderr).toMatch(/the LLM judge scored no cell \(first error: auth: not asked: .* refused an earlier call/);
        expect(refusingAll.requests).toBe(1);
      } finally {
        await refusingAll.close();
      }
      // experiment --json with a key in the environment: the spec is printed, the key never.
      const SECRET = "sk-test-EXPERIMENTKEY987654321";
      writeFileSync(join(dir, "spec.json"), JSON.stringify({ benchmark: "factual", file: "factual2.json", seeds: [42], conditions: ["fixed-probe"], warmup: 2, judges: ["rule", "llm"], llm: { baseURL: server.url, model: "none", models: { judge: "fake-judge" } }, out: "exp" }));
      const exp = await cli(["experiment", join(dir, "spec.json"), "--json", "-q"], { PROBETOWN_LLM_API_KEY: SECRET });
      expect(exp.code, exp.stderr).toBe(0);
      expect(exp.stdout + exp.stderr).not.toContain(SECRET);
      expect((JSON.parse(exp.stdout) as { spec: { llm: { apiKey: string; models: Record<string, string | null> } } }).spec.llm).toMatchObject({ apiKey: "(from the environment)", models: { intent: null, judge: "fake-judge" } });
      expect(server.authorization.at(-1)).toBe(`Bearer ${SECRET}`);
    } finally {
      await server.close();
    }
  });
});
