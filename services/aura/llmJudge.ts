// The paper's LLM judges (reference/aura.md §7.1, §7.3) through the LLM gateway (role `judge`),
// with their calls recorded so a report is recomputed without calling a model again (DESIGN §4):
//   - factual accuracy (§7.1): every claim of the answer CORRECT / CONTRADICTED / UNVERIFIABLE
//     against the ground truth the rule judge also uses (time, the asker's place and action, who is
//     near, every agent's {name, location, action}, the last 10 events, the asker's memories and
//     plan); precision = correct/(correct+contradicted) or 0.5, completeness 1/0.5/0,
//     accuracy = 0.7·precision + 0.3·completeness, and the strict rescore (StrictP without the 0.5
//     default, claim recall, hallucination, perfect). T 0.1, 1024 tokens, JSON mode.
//   - implicit intent (§7.3): literal_score and implicit_score in [0, 1] with the second-order
//     note; T 0.1, 200 tokens, JSON mode.
//
// The judge log. Each judged cell keeps `judge.jsonl` beside its episode log: one line per
// `llm.requested` (the judge's request, with its content hash) and one per answer, `llm.completed`
// or `llm.failed` (the gateway's payloads, `cause` = the request's seq). Before calling the model a
// judge looks the request hash up there and serves the recorded answer: a rerun, `experiment
// --report-only` or a report regenerated later make zero HTTP requests, and a recorded invalid
// answer stays a failure. A recorded failure to reach the model (network, timeout, HTTP error, no
// backend: the model never judged) is asked again whenever a gateway is given, and the new answer
// recorded after it. The episode log is never touched (the judge is not part of the episode: it reads
// the log's answer after the fact). New records are written in the order the calls were listed, so
// the file does not depend on which HTTP answer came back first.
//
// Scores are computed here from the judge's counts (precision, accuracy), never taken on trust: an
// invalid reply gets the gateway's repair attempt, then the row records the failure (`llmJudgeError`)
// and no score; a cell is never given a made-up one.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { llmRequest, LLM_GATEWAY_ID, type LlmCompletedPayload, type LlmFailedPayload, type LlmRequestedPayload } from "../../events/llm.ts";
import type { AnswerGivenPayload } from "../../actors/aura/events.ts";
import type { LogRecord } from "../../events/record.ts";
import { LogCorrupted } from "../../events/errors.ts";
import { parseJsonObject } from "../../actors/aura/llm.ts";
import { rosterOf, type Scene } from "../../actors/aura/scene.ts";
import type { FactualTruth } from "./benchmarks/factual.ts";
import type { ImplicitQuery } from "./benchmarks/implicit.ts";
import type { LlmAnswer, LlmGatewayImpl, OutputValidator } from "../llm/index.ts";
import { JUDGES, type JudgeMode } from "./evalDefaults.ts";

export { JUDGES, type JudgeMode };

/** The judge log's file name, beside a cell's `log/`. */
export const JUDGE_LOG = "judge.jsonl";
export const judgeLogOf = (cellDir: string): string => join(cellDir, JUDGE_LOG);
/** The requester named in judge calls (for the gateway's accounting). */
export const JUDGE_ID = "judge/llm";

const num = (x: unknown): number | null => {
  const n = typeof x === "number" ? x : typeof x === "string" && x.trim() !== "" ? Number(x) : NaN;
  return Number.isFinite(n) ? n : null;
};

// ---- Factual accuracy (§7.1) ------------------------------------------------------------------

export const FACTUAL_JUDGE_SYSTEM = `You are a strict fact-checker for an AI assistant that answers questions about a simulated town.
You are given the GROUND TRUTH (the town's state when the question was asked) and the AI RESPONSE.
Split the response into its factual claims and classify every claim:
- CORRECT: the ground truth supports it;
- CONTRADICTED: the ground truth says otherwise;
- UNVERIFIABLE: the ground truth neither supports nor contradicts it. Unverifiable claims are NOT hallucinations.
Scores:
- precision = correct_claims / (correct_claims + contradicted_claims), or 0.5 when that denominator is 0;
- completeness = 1.0 if the response fully answers the question, 0.5 if partially or vaguely, 0.0 if it deflects or refuses;
- accuracy = 0.7 * precision + 0.3 * completeness.
Reply with only a JSON object:
{"total_claims": int, "correct_claims": int, "contradicted_claims": int, "unverifiable_claims": int, "precision": float, "completeness": float, "accuracy": float, "hallucinations": [the contradicted claims], "reasoning": "one or two sentences"}`;

export function factualJudgeMessage(query: string, truth: FactualTruth, response: string): string {
  const ground = {
    time: truth.time,
    asker: truth.asker,
    asker_location: truth.askerLocation,
    asker_action: truth.askerAction,
    nearby_agents: truth.nearby,
    all_agents: truth.agents,
    recent_events: truth.events,
    asker_memories: truth.memories,
    asker_plan: truth.plan,
    places: truth.places,
  };
  return `USER QUERY (asked by ${truth.asker}): ${query}\n\nGROUND TRUTH:\n${JSON.stringify(ground, null, 2)}\n\nAI RESPONSE:\n${response}`;
}

export function factualJudgeRequest(model: string, query: string, truth: FactualTruth, response: string, queryId: string | null): LlmRequestedPayload {
  return llmRequest("judge", model, [{ role: "system", content: FACTUAL_JUDGE_SYSTEM }, { role: "user", content: factualJudgeMessage(query, truth, response) }], { temperature: 0.1, maxTokens: 1024, json: true, output: "judge-factual" }, queryId);
}

export interface LlmFactualScores {
  readonly claims: number;
  readonly correct: number;
  readonly contradicted: number;
  readonly unverifiable: number;
  readonly precision: number;
  readonly completeness: 0 | 0.5 | 1;
  readonly accuracy: number;
  /** null when no claim is verifiable (the strict rescore excludes the cell) */
  readonly strictPrecision: number | null;
  /** correct / claims; null without claims */
  readonly claimRecall: number | null;
  readonly hallucination: boolean;
  readonly perfect: boolean;
  /** the judge's own `accuracy` field (the release used it as is); ours is recomputed from the counts */
  readonly reportedAccuracy: number | null;
}

/** The judge's reply as scores, or why it cannot be used. */
export function parseFactualJudge(content: string): { ok: true; scores: LlmFactualScores } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const o = parsed.value;
  const counts: Record<string, number> = {};
  for (const k of ["correct_claims", "contradicted_claims", "unverifiable_claims"]) {
    const v = num(o[k]);
    if (v === null || v < 0 || !Number.isInteger(v)) return { ok: false, error: `field '${k}' must be an integer ≥ 0` };
    counts[k] = v;
  }
  const completenessRaw = num(o.completeness);
  if (completenessRaw === null || completenessRaw < 0 || completenessRaw > 1) return { ok: false, error: "field 'completeness' must be 1.0, 0.5 or 0.0" };
  const correct = counts.correct_claims!;
  const contradicted = counts.contradicted_claims!;
  const unverifiable = counts.unverifiable_claims!;
  const totalRaw = num(o.total_claims);
  const claims = Math.max(totalRaw !== null && Number.isInteger(totalRaw) && totalRaw >= 0 ? totalRaw : 0, correct + contradicted + unverifiable);
  const completeness: 0 | 0.5 | 1 = completenessRaw >= 0.75 ? 1 : completenessRaw >= 0.25 ? 0.5 : 0;
  const precision = correct + contradicted === 0 ? 0.5 : correct / (correct + contradicted);
  const reported = num(o.accuracy);
  return {
    ok: true,
    scores: {
      claims,
      correct,
      contradicted,
      unverifiable,
      precision,
      completeness,
      accuracy: 0.7 * precision + 0.3 * completeness,
      strictPrecision: correct + contradicted === 0 ? null : correct / (correct + contradicted),
      claimRecall: claims === 0 ? null : correct / claims,
      hallucination: contradicted > 0,
      perfect: contradicted === 0 && correct > 0,
      reportedAccuracy: reported === null ? null : Math.min(1, Math.max(0, reported)),
    },
  };
}

// ---- Implicit intent (§7.3) -------------------------------------------------------------------

export const IMPLICIT_JUDGE_SYSTEM = `You evaluate an AI assistant's answer to a question about a social scene. Produce two independent scores in [0, 1].
- literal_score: 1.0 if the response is consistent with the scene / ground truth; 0.0 if it fabricates public facts that contradict it.
- implicit_score: 1.0 if the response explicitly addresses the user's implicit concern (the IMPLICIT NEED); 0.0 if it ignores it; 0.4-0.6 if it surfaces it only partially.
Second-order note: when the ground truth contains "believers_belief_about_target", the question is about what the believer THINKS of the target. The answer must report the believer's belief; an answer that states the target's actual private state instead (conflating belief with truth) earns a lower implicit_score.
Reply with only a JSON object: {"literal_score": float, "implicit_score": float, "rationale": "one sentence"}`;

/** The ground truth shown to the implicit judge: the scene and the subject's private state (§7.3). */
export function implicitGroundTruth(q: ImplicitQuery, scene: Scene): Record<string, unknown> {
  const subject = q.subject ?? rosterOf(scene)[0] ?? null;
  const priv: Record<string, unknown> = { ...(subject === null ? {} : (scene.private_state[subject] ?? {})) };
  if (q.subcategory === "second_order" && subject !== null) {
    const beliefs = scene.beliefs_about_others[subject] ?? {};
    priv.beliefs_about_others = beliefs;
    if (q.target !== null) {
      priv.target_in_question = q.target;
      priv.believers_belief_about_target = beliefs[q.target] ?? {};
      priv.targets_actual_private_state = scene.private_state[q.target] ?? {};
    }
  }
  return { scene_summary: scene.summary, public_state: scene.public_state, private_state: priv, implicit_need: q.implicitNeed };
}

export function implicitJudgeMessage(q: ImplicitQuery, scene: Scene, response: string): string {
  return `USER QUERY: ${q.text}\n\nGROUND TRUTH:\n${JSON.stringify(implicitGroundTruth(q, scene), null, 2)}\n\nIMPLICIT NEED: ${q.implicitNeed}\n\nAI RESPONSE:\n${response}`;
}

export function implicitJudgeRequest(model: string, q: ImplicitQuery, scene: Scene, response: string): LlmRequestedPayload {
  return llmRequest("judge", model, [{ role: "system", content: IMPLICIT_JUDGE_SYSTEM }, { role: "user", content: implicitJudgeMessage(q, scene, response) }], { temperature: 0.1, maxTokens: 200, json: true, output: "judge-implicit" }, q.id);
}

export interface LlmImplicitScores {
  readonly literal: number;
  readonly implicit: number;
}

export function parseImplicitJudge(content: string): { ok: true; scores: LlmImplicitScores } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const literal = num(parsed.value.literal_score);
  const implicit = num(parsed.value.implicit_score);
  if (literal === null) return { ok: false, error: "field 'literal_score' must be a number in [0, 1]" };
  if (implicit === null) return { ok: false, error: "field 'implicit_score' must be a number in [0, 1]" };
  // Clamped to [0, 1], as the release does.
  return { ok: true, scores: { literal: Math.min(1, Math.max(0, literal)), implicit: Math.min(1, Math.max(0, implicit)) } };
}

/** The gateway's validators for the judges' named outputs (a reply failing one gets the repair attempt). */
export const JUDGE_OUTPUTS: Readonly<Record<string, OutputValidator>> = {
  "judge-factual": (c) => {
    const r = parseFactualJudge(c);
    return r.ok ? null : r.error;
  },
  "judge-implicit": (c) => {
    const r = parseImplicitJudge(c);
    return r.ok ? null : r.error;
  },
};

// ---- The judge log ----------------------------------------------------------------------------

interface JudgeLine {
  readonly seq: number;
  readonly type: "llm.requested" | "llm.completed" | "llm.failed";
  readonly from: string;
  readonly to: string;
  readonly cause: number | null;
  readonly payload: LlmRequestedPayload | LlmCompletedPayload | LlmFailedPayload;
}

/** The recorded answers of a judge log by request hash (the last answer of a hash wins). */
export function readJudgeLog(file: string): { answers: Map<string, LlmAnswer>; lines: number; torn: boolean } {
  const answers = new Map<string, LlmAnswer>();
  if (!existsSync(file)) return { answers, lines: 0, torn: false };
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n").filter((l) => l.trim().length > 0);
  for (const [i, raw] of lines.entries()) {
    let line: JudgeLine;
    try {
      line = JSON.parse(raw) as JudgeLine;
    } catch {
      // A torn last line (an interrupted write) is ignored: its request is asked again.
      if (i === lines.length - 1) continue;
      throw new LogCorrupted({ file, line: i + 1, seq: null, reason: "not valid JSON" });
    }
    if (line.type === "llm.completed") answers.set(line.payload.requestHash, { type: "llm.completed", payload: line.payload as LlmCompletedPayload });
    if (line.type === "llm.failed") answers.set(line.payload.requestHash, { type: "llm.failed", payload: line.payload as LlmFailedPayload });
  }
  // An unfinished last line (not valid JSON, no newline): dropped before the next record is written.
  return { answers, lines: lines.length, torn: text.length > 0 && !text.endsWith("\n") };
}

/** A failure in which the model never judged: worth asking again (an invalid answer is the model's own). */
const unreached = (answer: LlmAnswer): boolean => answer.type === "llm.failed" && answer.payload.error !== "invalid_output";

export interface JudgeCall {
  /** The judge log (a cell's `judge.jsonl`). */
  readonly log: string;
  readonly request: LlmRequestedPayload;
}

export interface JudgeRun {
  /** One per call, in order; null: no recorded answer and no gateway to ask. */
  readonly answers: readonly (LlmAnswer | null)[];
  /** Answers served from the judge logs (no HTTP). */
  readonly served: number;
  /** Calls sent to the gateway now. */
  readonly asked: number;
}

/**
 * Answers judge calls: from their judge logs when recorded, else through the gateway (concurrently,
 * bounded by its `concurrency`), appending request and answer to the log in call order.
 */
export async function runJudgeCalls(calls: readonly JudgeCall[], gateway: LlmGatewayImpl | null): Promise<JudgeRun> {
  const logs = new Map<string, { answers: Map<string, LlmAnswer>; lines: number; torn: boolean }>();
  const logOf = (file: string) => logs.get(file) ?? logs.set(file, readJudgeLog(file)).get(file)!;
  const recorded = calls.map((c) => {
    const answer = logOf(c.log).answers.get(c.request.requestHash) ?? null;
    return answer !== null && gateway !== null && unreached(answer) ? null : answer;
  });
  // Identical requests in one batch are asked once.
  const pending = new Map<string, Promise<LlmAnswer>>();
  const fresh = calls.map((c, i) => {
    if (recorded[i] !== null || gateway === null) return null;
    const h = c.request.requestHash;
    if (!pending.has(h)) {
      const asked = gateway.complete(c.request, JUDGE_ID);
      asked.catch(() => undefined); // awaited below, in call order
      pending.set(h, asked);
    }
    return pending.get(h)!;
  });
  let served = 0;
  // Each answer is recorded as soon as it and the ones before it have come (the calls run
  // concurrently): an interrupted pass keeps what it was paid for, and the judge log keeps the
  // calls' order whatever order the answers arrived in.
  const answers: (LlmAnswer | null)[] = [];
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    if (recorded[i] !== null) {
      served++;
      answers.push(recorded[i]!);
      continue;
    }
    const answer = fresh[i] === null ? null : await fresh[i]!;
    answers.push(answer);
    if (answer === null) continue;
    const log = logOf(c.log);
    // Recorded once per request hash (identical calls share one answer), after any failure it replaces.
    if (log.answers.get(c.request.requestHash) !== answer) {
      if (log.torn) {
        // An interrupted write: the unfinished line is dropped (its request is being asked again).
        const text = readFileSync(c.log, "utf8");
        writeFileSync(c.log, text.slice(0, text.lastIndexOf("\n") + 1));
        log.torn = false;
        log.lines--;
      }
      const seq = log.lines;
      const lines: JudgeLine[] = [
        { seq, type: "llm.requested", from: JUDGE_ID, to: LLM_GATEWAY_ID, cause: null, payload: c.request },
        { seq: seq + 1, type: answer.type, from: LLM_GATEWAY_ID, to: JUDGE_ID, cause: seq, payload: answer.payload },
      ];
      appendFileSync(c.log, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      log.lines += 2;
      log.answers.set(c.request.requestHash, answer);
    }
  }
  return { answers, served, asked: pending.size };
}

// ---- Row fields -------------------------------------------------------------------------------

/** The LLM judge's fields of a results row (services/analysis/results.ts). */
export interface LlmJudgeFields {
  readonly llmJudge: string;
  readonly llmJudgeError?: string;
  readonly llmAccuracy?: number | null;
  readonly llmPrecision?: number | null;
  readonly llmCompleteness?: number | null;
  readonly llmStrictPrecision?: number | null;
  readonly llmClaimRecall?: number | null;
  readonly llmHallucination?: boolean | null;
  readonly llmPerfect?: boolean | null;
  readonly llmLiteral?: number | null;
  readonly llmImplicit?: number | null;
}

const failure = (answer: LlmAnswer | null): string | null => {
  if (answer === null) return "no_backend: no recorded judge answer and no LLM endpoint configured";
  if (answer.type === "llm.failed") return `${answer.payload.error}: ${answer.payload.message}`.slice(0, 300);
  return null;
};

/** A factual-judge answer as row fields: scores, or the failure with every score null. */
export function factualJudgeFields(model: string, answer: LlmAnswer | null): LlmJudgeFields {
  const error = failure(answer);
  const parsed = error === null ? parseFactualJudge((answer!.payload as LlmCompletedPayload).content) : null;
  if (error !== null || parsed === null || !parsed.ok) {
    return { llmJudge: model, llmJudgeError: error ?? (parsed !== null && !parsed.ok ? `invalid_output: ${parsed.error}` : "invalid_output"), llmAccuracy: null, llmPrecision: null, llmCompleteness: null, llmStrictPrecision: null, llmClaimRecall: null, llmHallucination: null, llmPerfect: null };
  }
  const s = parsed.scores;
  return { llmJudge: model, llmAccuracy: s.accuracy, llmPrecision: s.precision, llmCompleteness: s.completeness, llmStrictPrecision: s.strictPrecision, llmClaimRecall: s.claimRecall, llmHallucination: s.hallucination, llmPerfect: s.perfect };
}

export function implicitJudgeFields(model: string, answer: LlmAnswer | null): LlmJudgeFields {
  const error = failure(answer);
  const parsed = error === null ? parseImplicitJudge((answer!.payload as LlmCompletedPayload).content) : null;
  if (error !== null || parsed === null || !parsed.ok) return { llmJudge: model, llmJudgeError: error ?? (parsed !== null && !parsed.ok ? `invalid_output: ${parsed.error}` : "invalid_output"), llmLiteral: null, llmImplicit: null };
  return { llmJudge: model, llmLiteral: parsed.scores.literal, llmImplicit: parsed.scores.implicit };
}

/** The answer text a judge reads (the `answer.given` of a query's records). */
export const answerTextOf = (records: readonly LogRecord[]): string => (records.find((r) => r.type === "answer.given")?.payload as AnswerGivenPayload | undefined)?.text ?? "";

/** Model calls of a query that failed and fell back to a deterministic backend. */
export const fallbacksOf = (records: readonly LogRecord[]): number => records.filter((r) => r.type === "llm.failed").length;

/**
 * The backend a condition was configured with: the LLM stages the query went through (as its
 * answer's label names them) with the model the episode's config gives each — `llm:<model>` when
 * one model serves them all, else `answer=llm:a, intent=llm:b` — whether or not a stage fell back
 * (the row's `fallbacks` counts those). Deterministic runs keep the answer's label.
 */
export function configuredBackend(config: { readonly llm?: { readonly intent?: string | null; readonly planner?: string | null; readonly answer?: string | null } | null } | undefined, answerLabel: string): string {
  const llm = config?.llm;
  if (llm == null) return answerLabel;
  if (answerLabel.startsWith("llm:")) return answerLabel;
  const roles = [...new Set([...answerLabel.matchAll(/(?:^|, )(intent|planner|answer)=/g)].map((m) => m[1] as "intent" | "planner" | "answer"))].filter((r) => llm[r] != null).sort();
  if (roles.length === 0) return answerLabel;
  const models = new Set(roles.map((r) => llm[r]!));
  if (models.size === 1) return `llm:${[...models][0]!}`;
  return roles.map((r) => `${r}=llm:${llm[r]!}`).join(", ");
}

/** The rule judge's score fields, left out (null) of a row judged by the LLM judge alone. */
const RULE_SCORES = ["literalCoverage", "implicitCoverage", "accuracy", "correct"] as const;
const RULE_EXTRAS = ["precision", "completeness", "strictPrecision", "claimRecall", "hallucination"] as const;

/** A rule-judged results row with the LLM judge's fields merged in for `mode` (llm: the rule scores left out). */
export function withJudge<T extends Record<string, unknown>>(row: T, mode: JudgeMode, fields: LlmJudgeFields | undefined): T {
  if (mode === "rule") return row;
  const out: Record<string, unknown> = { ...row };
  if (mode === "llm") {
    for (const k of RULE_SCORES) if (k in out) out[k] = null;
    for (const k of RULE_EXTRAS) delete out[k];
  }
  return { ...out, judge: mode, ...(fields ?? {}) } as unknown as T;
}

/** `judges: [...]` of an experiment spec as a mode: ["rule"], ["llm"] or both. */
export function judgeModeOf(judges: readonly string[]): JudgeMode {
  const llm = judges.includes("llm");
  const rule = judges.includes("rule");
  return llm && rule ? "both" : llm ? "llm" : "rule";
}
