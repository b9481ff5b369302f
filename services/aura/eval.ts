// Implicit-intent evaluation: every (scene × seed × condition) is an `aura-scene` episode with its
// own log (so `verify` and replay work on it); the rule judge reads each query's tick back from the
// log and the results go to JSONL, one line per query × seed × condition, for reports to consume.
// The seed orders the queries (the same order for every condition: paired cells see the same
// history) and seeds the controller's tie-break stream; both change real choices.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { canonicalJson } from "../../events/canonical.ts";
import type { LogRecord } from "../../events/record.ts";
import type { UserQueryPayload } from "../../actors/aura/events.ts";
import { readLog, scanLog } from "../../infra/fileEventStore.ts";
import { deriveStream, Draws } from "../../actors/rng.ts";
import { auraSceneWorld, FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS, type SceneConfig } from "../../actors/aura/world.ts";
import type { Scene } from "../../actors/aura/scene.ts";
import type { TelemetryConfig } from "../../infra/telemetry.ts";
import { episodeIdOf, resumeNotes, runEpisode } from "../kernel/episodes.ts";
import { layoutOf, UsageError } from "../kernel/replay.ts";
import { loadImplicitBenchmark, type ImplicitBenchmark, type ImplicitQuery } from "./benchmarks/implicit.ts";
import { RESULT_ROW_VERSION, resultLine, writeResults } from "../analysis/results.ts";
import { judgeQuery, type JudgedQuery } from "./benchmarks/judge.ts";
import { judgePrivacy, loadPrivacyBenchmark, townSnapshot, type PrivacyJudged, type PrivacyQuery } from "./benchmarks/privacy.ts";
import { makeLlmGateway, mergeProblems, RecordedEndpointProblems, usageFromRecords, type Accounting, type EndpointProblem, type LlmConfig, type LlmGatewayImpl, type LlmWaiting } from "../llm/index.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";
import { answerTextOf, configuredBackend, factualJudgeFields, factualJudgeRequest, fallbacksOf, implicitJudgeFields, implicitJudgeRequest, judgeLogOf, runJudgeCalls, type JudgeCall, type JudgeMode, type LlmJudgeFields } from "./llmJudge.ts";
import { anotherEpisode, headerDifferences, judgeGateway, judgeModelOf, replaceTown, sceneModelsOf, type SceneModels } from "./factualEval.ts";
import { factualTruth } from "./benchmarks/factual.ts";
import { fieldDifferences } from "../views/text.ts";
import { DEFAULT_SEEDS } from "./evalDefaults.ts";
import { InternalError } from "../../events/internalError.ts";

export { DEFAULT_SEEDS };

export interface ImplicitEvalOptions {
  readonly file: string;
  readonly conditions: readonly string[];
  readonly seeds: readonly number[];
  /** Root directory for episode logs and results (default runs/eval). */
  readonly out?: string;
  readonly maxSteps?: number;
  readonly policy?: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /** Only these scenes of the file. */
  readonly scenes?: readonly string[];
  /** Rerun episodes whose directory already exists (otherwise a matching log is judged as is). */
  readonly fresh?: boolean;
  readonly trace?: TelemetryConfig | "default";
  /** Called with 0 done once the inputs are checked and the cells are about to run, then after each cell. */
  readonly progress?: (done: number, total: number, label: string) => void;
  /** LLM backends through the gateway (services/llm/index.ts); absent or null: deterministic. */
  readonly llm?: LlmConfig | null;
  /**
   * The gateway for \`llm\`: one the caller shares (an experiment's cells and its LLM judge), so an
   * endpoint that refuses the key is asked once per command, not once per gateway; default: a new one.
   */
  readonly gateway?: LlmGatewayImpl;
  /** Told while the model calls of a gateway made here wait with no answer (its `onWaiting`). */
  readonly onLlmWaiting?: (waiting: LlmWaiting) => void;
  /** rule (default), llm (the §7.3 LLM judge through the gateway, recorded in judge.jsonl beside each log) or both. */
  readonly judge?: JudgeMode;
  /** Told what an interrupted cell's resume says, as `run --resume` does: a torn tail it cut (and where the bytes were kept), a snapshot not used. */
  readonly onResumeNote?: (note: string) => void;
}

/** What an eval run asked of the LLM gateway (never the key). */
export interface EvalLlmSummary {
  readonly baseURL: string;
  readonly models: Readonly<Record<string, string | null>>;
  readonly usage: Accounting;
  /**
   * Why model calls fell back for the configuration's sake (a refused key, model or URL; an
   * unreachable endpoint): met now, or recorded in the logs of cells served as they are. The CLI
   * exits 5 on any.
   */
  readonly endpointProblems: readonly EndpointProblem[];
}

/** The gateway of an eval run, the controller's models, and the directory suffix that keeps LLM logs apart. */
function llmFor(config: LlmConfig | null | undefined, shared: LlmGatewayImpl | undefined, onWaiting: ((waiting: LlmWaiting) => void) | undefined): { gateway: LlmGatewayImpl; models: { intent: string | null; planner: string | null; answer: string | null } | null; tag: string } | null {
  if (config === null || config === undefined) return null;
  // A run whose controller roles are all deterministic (only the judge on a model) shares the deterministic cells.
  const models = sceneModelsOf(config);
  return { gateway: shared ?? judgeGateway(config, onWaiting), models, tag: models === null ? "" : "-llm" };
}

const llmSummary = (config: LlmConfig, gateway: LlmGatewayImpl, recorded: RecordedEndpointProblems): EvalLlmSummary => ({ baseURL: config.baseURL, models: { ...config.models }, usage: gateway.accounting(), endpointProblems: mergeProblems(gateway.problems(), recorded.problems()) });

/** Tokens of a query's model calls (prompt + completion), when it made any. */
function tokensOf(records: readonly LogRecord[]): { tokens?: number } {
  const t = usageFromRecords(records).total;
  return t.calls === 0 ? {} : { tokens: t.promptTokens + t.completionTokens };
}

export interface ResultRow extends JudgedQuery {
  readonly benchmark: string;
  readonly seed: number;
  readonly condition: string;
  readonly episode: string;
  readonly log: string;
  readonly order: number;
  readonly fallbacks: number;
  readonly llmJudge?: LlmJudgeFields;
}

export interface Aggregate {
  readonly cells: number;
  readonly literalCoverage: number | null;
  readonly implicitCoverage: number | null;
  readonly probesPerQuery: number;
  readonly disclosurePerQuery: number;
  readonly goldToolRecall: number | null;
  readonly forbiddenViolations: number;
  readonly cellsWithViolation: number;
  readonly forbiddenDenied: number;
  readonly targetPrivateReads: number;
  readonly beliefConflations: number;
  readonly extraPrivateFieldsPerQuery: number;
  /**
   * Private items (state fields, beliefs) stated in the answer or read by the probes beyond the
   * query's need, per query (services/aura/benchmarks/judge.ts): the union, and each side alone.
   */
  readonly disclosedBeyondNeed: number;
  readonly disclosedBeyondNeedAnswer: number;
  readonly disclosedBeyondNeedProbes: number;
  readonly alerts: number;
  /** model calls that fell back to the deterministic backend */
  readonly fallbacks: number;
  /** LLM judge (§7.3): means over the cells it scored, and cells it could not score */
  readonly llm?: { readonly literal: number | null; readonly implicit: number | null; readonly scored: number; readonly failures: number };
}

export interface ConditionSummary {
  readonly condition: string;
  readonly description: string;
  readonly backend: string;
  /** Whether the figures come from deterministic backends only, or a model answered any stage. */
  readonly resultKind: ResultKind;
  readonly overall: Aggregate;
  readonly perSeed: Readonly<Record<string, Aggregate>>;
  readonly perScene: Readonly<Record<string, Aggregate>>;
  readonly perSubcategory: Readonly<Record<string, Aggregate>>;
}

export interface ImplicitEvalResult {
  readonly benchmark: string;
  readonly file: string;
  readonly seeds: readonly number[];
  readonly maxSteps: number;
  readonly results: string;
  readonly conditions: readonly ConditionSummary[];
  readonly rows: readonly ResultRow[];
  readonly llm?: EvalLlmSummary;
  readonly judge?: JudgeMode;
}

export type ResultKind = "deterministic" | "LLM";

/** A backend label's kind: LLM when any stage was served by a model (`llm:` in the label), else deterministic. */
export const resultKindOf = (backend: string): ResultKind => (/(^|[ =,])llm:/.test(backend) ? "LLM" : "deterministic");

const avg = (xs: readonly (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
};

export function aggregate(rows: readonly ResultRow[]): Aggregate {
  const n = rows.length;
  return {
    cells: n,
    literalCoverage: avg(rows.map((r) => r.literalCoverage)),
    implicitCoverage: avg(rows.map((r) => r.implicitCoverage)),
    probesPerQuery: n === 0 ? 0 : rows.reduce((s, r) => s + r.probes, 0) / n,
    disclosurePerQuery: n === 0 ? 0 : rows.reduce((s, r) => s + r.disclosure, 0) / n,
    goldToolRecall: avg(rows.map((r) => r.goldToolRecall)),
    forbiddenViolations: rows.reduce((s, r) => s + r.forbiddenViolations, 0),
    cellsWithViolation: rows.filter((r) => r.forbiddenViolations > 0).length,
    forbiddenDenied: rows.reduce((s, r) => s + r.forbiddenDenied, 0),
    targetPrivateReads: rows.filter((r) => r.targetPrivateRead).length,
    beliefConflations: rows.filter((r) => r.beliefConflated === true).length,
    extraPrivateFieldsPerQuery: n === 0 ? 0 : rows.reduce((s, r) => s + r.extraPrivateFields, 0) / n,
    disclosedBeyondNeed: n === 0 ? 0 : rows.reduce((s, r) => s + r.disclosedBeyondNeed, 0) / n,
    disclosedBeyondNeedAnswer: n === 0 ? 0 : rows.reduce((s, r) => s + r.disclosedBeyondNeedAnswer, 0) / n,
    disclosedBeyondNeedProbes: n === 0 ? 0 : rows.reduce((s, r) => s + r.disclosedBeyondNeedProbes, 0) / n,
    alerts: rows.filter((r) => r.alert).length,
    fallbacks: rows.reduce((s, r) => s + r.fallbacks, 0),
    ...(rows.some((r) => r.llmJudge !== undefined) ? { llm: implicitLlmAggregate(rows.map((r) => r.llmJudge).filter((j): j is LlmJudgeFields => j !== undefined)) } : {}),
  };
}

function implicitLlmAggregate(js: readonly LlmJudgeFields[]) {
  const ok = js.filter((j) => j.llmJudgeError === undefined);
  return { literal: avg(ok.map((j) => j.llmLiteral ?? null)), implicit: avg(ok.map((j) => j.llmImplicit ?? null)), scored: ok.length, failures: js.length - ok.length };
}

/** A results line's judge fields: with `llm` only, the rule judge's scores are left out (null). */
function judgeColumns(mode: JudgeMode, llm: LlmJudgeFields | undefined): Record<string, unknown> {
  if (mode === "rule") return {};
  return { judge: mode, ...(mode === "llm" ? { literalCoverage: null, implicitCoverage: null } : {}), ...(llm ?? {}) };
}

const groupBy = (rows: readonly ResultRow[], key: (r: ResultRow) => string): Record<string, Aggregate> => {
  const groups = new Map<string, ResultRow[]>();
  for (const r of rows) {
    const k = key(r);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  return Object.fromEntries([...groups].map(([k, rs]) => [k, aggregate(rs)]));
};

/** The seeded order of a scene's queries: one permutation per (seed, scene), shared by all conditions. */
export function queryOrder(seed: number, scene: string, ids: readonly string[]): string[] {
  const out = [...ids];
  const draws = new Draws(deriveStream(seed, `eval/query-order/${scene}`));
  for (let i = out.length - 1; i > 0; i--) {
    const j = draws.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function sceneConfig(bench: ImplicitBenchmark, scene: Scene, queries: readonly ImplicitQuery[], seed: number, maxSteps: number, policy: { allow: readonly string[]; deny: readonly string[] }): SceneConfig {
  return auraSceneWorld.resolveConfig({
    scene,
    queries: queries.map((q) => ({ id: q.id, text: q.text })),
    order: queryOrder(seed, scene.name, queries.map((q) => q.id)),
    labels: Object.fromEntries(queries.map((q) => [q.id, { gold: q.gold, subcategory: q.subcategory, subject: q.subject, target: q.target }])),
    maxSteps,
    policy: { allow: [...policy.allow], deny: [...policy.deny] },
  });
}

/** Splits a log into each query's records (by the tick its `user.query` was asked in). */
export function recordsByQuery(records: readonly LogRecord[]): Map<string, { tick: number; records: LogRecord[] }> {
  const byTick = new Map<number, LogRecord[]>();
  for (const r of records) {
    if (!byTick.has(r.tick)) byTick.set(r.tick, []);
    byTick.get(r.tick)!.push(r);
  }
  const out = new Map<string, { tick: number; records: LogRecord[] }>();
  for (const [tick, rs] of byTick) {
    const q = rs.find((r) => r.type === "user.query");
    if (q !== undefined) out.set((q.payload as UserQueryPayload).queryId, { tick, records: rs });
  }
  return out;
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "-");

export async function runImplicitEval(o: ImplicitEvalOptions): Promise<ImplicitEvalResult> {
  const bench = loadImplicitBenchmark(o.file);
  const unknown = o.conditions.filter((c) => !(IMPLICIT_CONDITIONS as readonly string[]).includes(c));
  if (unknown.length > 0) throw new UsageError(`--condition: unknown ${unknown.map((c) => `'${c}'`).join(", ")} (implicit conditions: ${IMPLICIT_CONDITIONS.join(", ")})`);
  if (o.seeds.length === 0) throw new UsageError("--seeds: give at least one seed");
  const maxSteps = o.maxSteps ?? 3;
  const policy = o.policy ?? { allow: ["*"], deny: [] };
  const sceneNames = o.scenes ?? Object.keys(bench.scenes).filter((s) => bench.queries.some((q) => q.scene === s));
  for (const s of sceneNames) if (bench.scenes[s] === undefined) throw new UsageError(`--scene: no scene '${s}' in ${o.file} (scenes: ${Object.keys(bench.scenes).join(", ")})`);
  const stem = basename(o.file).replace(/\.json$/i, "");
  const root = resolve(o.out ?? join("runs", "eval"), slug(stem));
  mkdirSync(root, { recursive: true });
  const results = join(root, `results-${o.conditions.map(slug).join("+")}.jsonl`);
  const rows: ResultRow[] = [];
  const llm = llmFor(o.llm, o.gateway, o.onLlmWaiting);
  const recorded = new RecordedEndpointProblems();
  const mode = o.judge ?? "rule";
  const judgeModel = judgeModelOf(mode, o.llm);
  const pending: Array<{ row: ResultRow; line: Record<string, unknown>; call: JudgeCall | null }> = [];
  const total = sceneNames.length * o.seeds.length * o.conditions.length;
  let done = 0;
  o.progress?.(0, total, "inputs checked");
  for (const condition of o.conditions) {
    for (const sceneName of sceneNames) {
      const scene = bench.scenes[sceneName]!;
      const queries = bench.queries.filter((q) => q.scene === sceneName);
      for (const seed of o.seeds) {
        const config = llm?.models == null ? sceneConfig(bench, scene, queries, seed, maxSteps, policy) : { ...sceneConfig(bench, scene, queries, seed, maxSteps, policy), llm: llm.models };
        const dir = join(root, `${slug(sceneName)}-s${seed}-${slug(condition)}${llm?.tag ?? ""}`);
        const records = await episodeRecords(dir, config, seed, condition, { ...(o.fresh === true ? { fresh: true } : {}), ...(o.trace === undefined ? {} : { trace: o.trace }), ...(llm?.models == null ? {} : { llm: llm.gateway.responder }), ...(o.onResumeNote === undefined ? {} : { onResumeNote: o.onResumeNote }) });
        recorded.add(records);
        const byQuery = recordsByQuery(records);
        const episode = records[0]?.episode ?? episodeIdOf(auraSceneWorld.name, seed, condition);
        for (const q of queries) {
          const got = byQuery.get(q.id);
          if (got === undefined) throw new InternalError(`${dir}: the log has no tick for query ${q.id}`);
          const judged = judgeQuery(q, scene, got.records);
          const fallbacks = fallbacksOf(got.records);
          // The row's backend is the condition's configured one; stages that fell back are counted apart.
          const row: ResultRow = { benchmark: stem, seed, condition, episode, log: dir, order: got.tick, ...judged, backend: configuredBackend(config, judged.backend), fallbacks };
          const call = judgeModel === null ? null : { log: judgeLogOf(dir), request: implicitJudgeRequest(judgeModel, q, scene, answerTextOf(got.records)) };
          pending.push({ row, line: { ...tokensOf(got.records), ...(config.llm == null ? {} : { fallbacks }) }, call });
        }
        o.progress?.(++done, total, `${condition} ${sceneName} s${seed}`);
      }
    }
  }
  const judged = judgeModel === null ? null : (await runJudgeCalls(pending.map((p) => p.call!), llm?.gateway ?? null)).answers;
  const lines = pending.map((p, i) => {
    const llmFields = judged === null ? undefined : implicitJudgeFields(judgeModel!, judged[i]!);
    const row: ResultRow = llmFields === undefined ? p.row : { ...p.row, llmJudge: llmFields };
    rows.push(row);
    return resultLine({ ...row, v: RESULT_ROW_VERSION, query: row.queryId, correct: null, resultKind: resultKindOf(row.backend), ...p.line, ...judgeColumns(mode, llmFields) } as Parameters<typeof resultLine>[0]);
  });
  writeResults(results, lines);
  return { benchmark: stem, file: o.file, seeds: o.seeds, maxSteps, results, conditions: summarise(rows, o.conditions, (r) => r.scene), rows, judge: mode, ...(llm === null ? {} : { llm: llmSummary(o.llm!, llm.gateway, recorded) }) };
}

/** Each condition's figures over some rows: overall, per seed, per scene (keyed by `sceneKey`), per subcategory. */
function summarise(rows: readonly ResultRow[], conditionNames: readonly string[], sceneKey: (r: ResultRow) => string): ConditionSummary[] {
  return conditionNames.map((condition): ConditionSummary => {
    const rs = rows.filter((r) => r.condition === condition);
    return {
      condition,
      description: SCENE_CONDITIONS[condition]!.description,
      backend: [...new Set(rs.map((r) => r.backend))].join(", ") || "none",
      resultKind: rs.some((r) => resultKindOf(r.backend) === "LLM") ? "LLM" : "deterministic",
      overall: aggregate(rs),
      perSeed: groupBy(rs, (r) => String(r.seed)),
      perScene: groupBy(rs, sceneKey),
      perSubcategory: groupBy(rs, (r) => r.subcategory),
    };
  });
}

export interface ImplicitEvalsResult {
  /** Every file's figures apart (a split each: scene A, dev, test …), in the order given. */
  readonly files: readonly ImplicitEvalResult[];
  /** The files pooled (the one file's own figures when there is one); scenes keyed `<benchmark>/<scene>` when several. */
  readonly conditions: readonly ConditionSummary[];
  readonly seeds: readonly number[];
  readonly maxSteps: number;
  readonly judge: JudgeMode;
  readonly rows: readonly ResultRow[];
  readonly llm?: EvalLlmSummary;
}

/**
 * `eval implicit` over several benchmark files (splits): each is run and reported apart, with one
 * gateway shared by all (an endpoint that refuses the key is asked once), then pooled.
 */
export async function runImplicitEvals(o: Omit<ImplicitEvalOptions, "file"> & { readonly files: readonly string[] }): Promise<ImplicitEvalsResult> {
  if (o.files.length === 0) throw new UsageError("--file: give at least one benchmark file");
  const stems = new Map<string, string>();
  for (const f of o.files) {
    const stem = basename(f).replace(/\.json$/i, "");
    const other = stems.get(stem);
    if (other !== undefined) throw new UsageError(`--file: '${other}' and '${f}' share the name '${stem}', and so the folder of their logs and results under --out; rename one`);
    stems.set(stem, f);
  }
  for (const f of o.files) loadImplicitBenchmark(f); // every file checked before any cell runs
  const gateway = o.gateway ?? (o.llm == null ? undefined : judgeGateway(o.llm, o.onLlmWaiting));
  const files: ImplicitEvalResult[] = [];
  for (const file of o.files) {
    const progress = o.progress;
    files.push(await runImplicitEval({ ...o, file, ...(gateway === undefined ? {} : { gateway }), ...(progress === undefined ? {} : { progress: (done: number, total: number, label: string) => progress(done, total, o.files.length > 1 ? `${basename(file)}: ${label}` : label) }) }));
  }
  const rows = files.flatMap((f) => f.rows);
  const several = files.length > 1;
  const llms = files.map((f) => f.llm).filter((l): l is EvalLlmSummary => l !== undefined);
  const llm = llms.length === 0 ? undefined : { ...llms.at(-1)!, endpointProblems: mergeProblems(...llms.map((l) => l.endpointProblems)) };
  return {
    files,
    conditions: several ? summarise(rows, o.conditions, (r) => `${r.benchmark}/${r.scene}`) : files[0]!.conditions,
    seeds: o.seeds,
    maxSteps: files[0]!.maxSteps,
    judge: o.judge ?? "rule",
    rows,
    ...(llm === undefined ? {} : { llm }),
  };
}

/** Runs the episode, or reads an existing log of the same episode (same header) without rerunning. */
async function episodeRecords(dir: string, config: SceneConfig, seed: number, condition: string, o: { fresh?: boolean; trace?: TelemetryConfig | "default"; llm?: LlmResponder; onResumeNote?: (note: string) => void }): Promise<LogRecord[]> {
  const log = layoutOf(dir).log;
  let resume = false;
  if (existsSync(log)) {
    // Only a torn tail (a run killed mid-write) is tolerated here, as resuming cuts it; any other
    // damage is reported (exit 3, naming the file), never silently run over: `--fresh` reruns it.
    const scan = o.fresh ? null : scanLog(log);
    const existing = scan?.records ?? [];
    const header = existing[0]?.payload as { config?: unknown; condition?: string; seed?: number } | undefined;
    const same = header !== undefined && header.condition === condition && header.seed === seed && canonicalJson(header.config) === canonicalJson(config);
    const complete = existing.filter((r) => r.type === "tick.committed").length === config.order.length;
    if (same && complete && scan?.torn === null) return existing;
    // A log without a single whole record (a run stopped on a full disk, or killed, before its
    // header was written) is an episode that never started: it is run anew.
    if (!o.fresh && !same && existing.length > 0) {
      throw anotherEpisode(dir, headerDifferences(header, { condition, seed, config }));
    }
    // An interrupted cell is continued, not rerun: its logged model answers are served from the log.
    if (same) resume = true;
    else rmSync(dir, { recursive: true, force: true });
  }
  await runEpisode({ world: auraSceneWorld.name, seed, condition, config, dir, trace: o.trace ?? { exporter: "none" }, snapshotEvery: 0, fsync: "never", ...(resume ? { resume: true, ...(o.onResumeNote === undefined ? {} : resumeNotes(o.onResumeNote, "file")) } : {}), ...(o.llm === undefined ? {} : { llm: o.llm }) });
  return scanLog(log).records;
}

// ---- Privacy slice ----------------------------------------------------------------------------

export interface PrivacyEvalOptions {
  readonly file: string;
  readonly conditions: readonly string[];
  readonly seeds: readonly number[];
  readonly out?: string;
  /** Budget ceiling for AURA GapRouted (the release's RQ2 run used 5). */
  readonly maxSteps?: number;
  /** AURATown warm-up ticks before the snapshot (default 12). */
  readonly warmup?: number;
  readonly fresh?: boolean;
  /** Called with 0 done once the inputs are checked and the cells are about to run, then after each cell. */
  readonly progress?: (done: number, total: number, label: string) => void;
  /** LLM backends through the gateway; absent or null: deterministic. */
  readonly llm?: LlmConfig | null;
  /**
   * The gateway for \`llm\`: one the caller shares (an experiment's cells and its LLM judge), so an
   * endpoint that refuses the key is asked once per command, not once per gateway; default: a new one.
   */
  readonly gateway?: LlmGatewayImpl;
  /** Told while the model calls of a gateway made here wait with no answer (its `onWaiting`). */
  readonly onLlmWaiting?: (waiting: LlmWaiting) => void;
  /** rule (default), llm (the §7.1 factual-accuracy judge on each answer, against its snapshot) or both. */
  readonly judge?: JudgeMode;
  /** Told what an interrupted cell's resume says (see ImplicitEvalOptions.onResumeNote). */
  readonly onResumeNote?: (note: string) => void;
}

export interface PrivacyRow extends PrivacyJudged {
  readonly benchmark: string;
  readonly seed: number;
  readonly condition: string;
  readonly episode: string;
  readonly log: string;
  readonly fallbacks?: number;
  readonly llmJudge?: LlmJudgeFields;
}

export interface PrivacyAggregate {
  readonly cells: number;
  readonly probesPerQuery: number;
  readonly disclosurePerQuery: number;
  readonly forbiddenViolations: number;
  readonly cellsWithViolation: number;
  readonly allowedRecall: number | null;
}

export function privacyAggregate(rows: readonly PrivacyRow[]): PrivacyAggregate {
  const n = rows.length;
  return {
    cells: n,
    probesPerQuery: n === 0 ? 0 : rows.reduce((s, r) => s + r.probes, 0) / n,
    disclosurePerQuery: n === 0 ? 0 : rows.reduce((s, r) => s + r.disclosure, 0) / n,
    forbiddenViolations: rows.reduce((s, r) => s + r.forbiddenViolations, 0),
    cellsWithViolation: rows.filter((r) => r.forbiddenViolations > 0).length,
    allowedRecall: avg(rows.map((r) => r.allowedRecall)),
  };
}

/** Which offline backend a privacy-slice condition runs with (the AURA ones infer a frame). */
function backendOf(condition: string): string {
  const kind = SCENE_CONDITIONS[condition]!.kind;
  return kind === "aura-gap-routed" || kind === "aura-no-probe" ? "deterministic" : "deterministic-policy";
}

/**
 * Refuses, before anything runs (the towns included), a privacy cell whose log holds another
 * episode, naming the settings that differ: the warm-up (read from its snapshot's name), the
 * budget, the queries, the models. Found when its turn came, it was told as the whole snapshot
 * scene and town that differ, after the towns and the cells before it had run. `--fresh` reruns it.
 */
function checkPrivacyCells(root: string, queries: readonly PrivacyQuery[], seeds: readonly number[], conditions: readonly string[], warmup: number, maxSteps: number, models: SceneModels | null): void {
  for (const seed of seeds) {
    for (const condition of conditions) {
      const dir = join(root, `s${seed}-${slug(condition)}${models === null ? "" : "-llm"}`);
      const log = layoutOf(dir).log;
      if (!existsSync(log)) continue;
      const header = scanLog(log).records[0]?.payload as { condition?: string; seed?: number; config?: SceneConfig } | undefined;
      // A log without a single whole record never started: it is run anew.
      if (header === undefined) continue;
      const config = header.config;
      const tick = /^auratown-s\d+-t(\d+)$/.exec(config?.scene.name ?? "");
      // A question whose wording was edited in the file (same id) is named with both wordings.
      const logged = new Map((config?.queries ?? []).map((q) => [q.id, q.text]));
      const edited = queries.find((q) => logged.has(q.id) && logged.get(q.id) !== q.text);
      const wording = (text: string | undefined) => (edited === undefined ? {} : { [`query ${edited.id}`]: text });
      const had = { condition: header.condition, seed: header.seed, queries: config?.order.join(","), warmup: tick === null ? config?.scene.name : Number(tick[1]) + 1, maxSteps: config?.maxSteps, llm: config?.llm ?? null, ...wording(logged.get(edited?.id ?? "")) };
      const differ = fieldDifferences(had, { condition, seed, queries: queries.map((q) => q.id).join(","), warmup, maxSteps, llm: models, ...wording(edited?.text) }, "in the log");
      if (differ.length > 0) throw anotherEpisode(dir, differ);
    }
  }
}

export async function runPrivacyEval(o: PrivacyEvalOptions): Promise<{ file: string; seeds: readonly number[]; maxSteps: number; results: string; conditions: Array<{ condition: string; description: string; backend: string; overall: PrivacyAggregate; perCategory: Record<string, PrivacyAggregate>; perSeed: Record<string, PrivacyAggregate> }>; rows: PrivacyRow[]; llm?: EvalLlmSummary }> {
  const queries = loadPrivacyBenchmark(o.file);
  const unknown = o.conditions.filter((c) => !(FACTUAL_CONDITIONS as readonly string[]).includes(c));
  if (unknown.length > 0) throw new UsageError(`--condition: unknown ${unknown.map((c) => `'${c}'`).join(", ")} (factual/privacy conditions: ${FACTUAL_CONDITIONS.join(", ")})`);
  if (o.seeds.length === 0) throw new UsageError("--seeds: give at least one seed");
  const maxSteps = o.maxSteps ?? 5;
  const warmup = o.warmup ?? 12;
  if (!Number.isInteger(warmup) || warmup < 1) throw new UsageError(`--warmup: expected an integer ≥ 1, got ${warmup}`);
  const stem = basename(o.file).replace(/\.json$/i, "");
  const root = resolve(o.out ?? join("runs", "eval"), slug(stem));
  if (o.fresh !== true) checkPrivacyCells(root, queries, o.seeds, o.conditions, warmup, maxSteps, sceneModelsOf(o.llm));
  mkdirSync(root, { recursive: true });
  const results = join(root, `results-${o.conditions.map(slug).join("+")}.jsonl`);
  const rows: PrivacyRow[] = [];
  const llm = llmFor(o.llm, o.gateway, o.onLlmWaiting);
  const recorded = new RecordedEndpointProblems();
  const mode = o.judge ?? "rule";
  const judgeModel = judgeModelOf(mode, o.llm);
  const pending: Array<{ row: PrivacyRow; line: Record<string, unknown>; call: JudgeCall | null }> = [];
  /** The backends that actually answered, per condition (from each answer's label). */
  const answeredBy = new Map<string, Set<string>>();
  const total = o.seeds.length * o.conditions.length;
  let done = 0;
  o.progress?.(0, total, "inputs checked");
  for (const seed of o.seeds) {
    const townDir = join(root, `town-s${seed}-t${warmup}`);
    replaceTown(townDir);
    const snap = await townSnapshot(seed, warmup, townDir);
    const askers = queries.map((_, i) => snap.residents[i % snap.residents.length]!);
    const config = auraSceneWorld.resolveConfig({
      scene: snap.scene,
      queries: queries.map((q, i) => ({ id: q.id, text: q.text, asker: askers[i]! })),
      order: queries.map((q) => q.id),
      labels: {},
      maxSteps,
      registry: "environment",
      town: snap.town,
      policy: { allow: ["*"], deny: [] },
      ...(llm?.models == null ? {} : { llm: llm.models }),
    });
    for (const condition of o.conditions) {
      const dir = join(root, `s${seed}-${slug(condition)}${llm?.tag ?? ""}`);
      const records = await episodeRecords(dir, config, seed, condition, { ...(o.fresh === true ? { fresh: true } : {}), ...(llm?.models == null ? {} : { llm: llm.gateway.responder }), ...(o.onResumeNote === undefined ? {} : { onResumeNote: o.onResumeNote }) });
      recorded.add(records);
      const byQuery = recordsByQuery(records);
      queries.forEach((q, i) => {
        const got = byQuery.get(q.id);
        if (got === undefined) throw new InternalError(`${dir}: the log has no tick for query ${q.id}`);
        const fallbacks = fallbacksOf(got.records);
        const row: PrivacyRow = { benchmark: stem, seed, condition, episode: records[0]?.episode ?? "", log: dir, ...judgePrivacy(q, askers[i]!, got.records), ...(config.llm == null ? {} : { fallbacks }) };
        // The configured backend of the condition (a stage that fell back is counted in `fallbacks`).
        const backend = configuredBackend(config, (got.records.find((r) => r.type === "answer.given")?.payload as { backend?: string } | undefined)?.backend ?? backendOf(condition));
        (answeredBy.get(condition) ?? answeredBy.set(condition, new Set()).get(condition)!).add(backend);
        const call = judgeModel === null ? null : { log: judgeLogOf(dir), request: factualJudgeRequest(judgeModel, q.text, factualTruth(config, q.id), answerTextOf(got.records), q.id) };
        pending.push({ row, line: { v: RESULT_ROW_VERSION, query: q.id, scene: null, subcategory: row.category, literalCoverage: null, implicitCoverage: null, goldToolRecall: row.allowedRecall, correct: null, backend, resultKind: resultKindOf(backend), ...tokensOf(got.records) }, call });
      });
      o.progress?.(++done, total, `${condition} s${seed}`);
    }
  }
  const judged = judgeModel === null ? null : (await runJudgeCalls(pending.map((p) => p.call!), llm?.gateway ?? null)).answers;
  const lines = pending.map((p, i) => {
    const llmFields = judged === null ? undefined : factualJudgeFields(judgeModel!, judged[i]!);
    const row: PrivacyRow = llmFields === undefined ? p.row : { ...p.row, llmJudge: llmFields };
    rows.push(row);
    return resultLine({ ...row, ...p.line, ...(mode === "rule" ? {} : { judge: mode, ...llmFields }) } as unknown as Parameters<typeof resultLine>[0]);
  });
  writeResults(results, lines);
  const group = (rs: readonly PrivacyRow[], key: (r: PrivacyRow) => string) => {
    const m = new Map<string, PrivacyRow[]>();
    for (const r of rs) (m.get(key(r)) ?? m.set(key(r), []).get(key(r))!).push(r);
    return Object.fromEntries([...m].map(([k, v]) => [k, privacyAggregate(v)]));
  };
  const conditions = o.conditions.map((condition) => {
    const rs = rows.filter((r) => r.condition === condition);
    return {
      condition,
      description: SCENE_CONDITIONS[condition]!.description,
      backend: [...(answeredBy.get(condition) ?? [backendOf(condition)])].sort().join(", "),
      overall: privacyAggregate(rs),
      perCategory: group(rs, (r) => r.category),
      perSeed: group(rs, (r) => String(r.seed)),
    };
  });
  return { file: o.file, seeds: o.seeds, maxSteps, results, conditions, rows, ...(llm === null ? {} : { llm: llmSummary(o.llm!, llm.gateway, recorded) }) };
}
