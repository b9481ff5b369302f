// RQ2 factual grounding offline (paper §5.1; reference/aura.md §6.1, §7.1): the 50 factual queries
// on paired snapshots of a running AURATown. Per seed the town runs once (its log kept): warm-up
// `warmup` ticks, then query qi sees the town's state after `warmup + qi` ticks (the release's
// "snapshot qi at tick 10 + qi"), asked by resident qi mod n in profile order. Every condition
// answers query qi from that same snapshot: each (seed, query, condition) cell is a one-tick
// `aura-scene` episode whose header carries the snapshot, so its log verifies and replays, and the
// rule judge (services/aura/benchmarks/factual.ts) reads its ground truth and the answer from the log
// alone. Cells whose log exists, is intact and is the same episode are judged as they are; a log of
// another episode (other settings) is refused naming the differing fields, never run over.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { canonicalJson } from "../../events/canonical.ts";
import type { LogRecord } from "../../events/record.ts";
import { scanLog } from "../../infra/fileEventStore.ts";
import { auraSceneWorld, FACTUAL_CONDITIONS, SCENE_CONDITIONS, type SceneConfig } from "../../actors/aura/world.ts";
import { resumeNotes, runEpisode } from "../kernel/episodes.ts";
import { layoutOf, UsageError } from "../kernel/replay.ts";
import { RESULT_ROW_VERSION, resultLine, writeResults } from "../analysis/results.ts";
import { townSnapshots, type TownSnapshot } from "./benchmarks/privacy.ts";
import { factualTruth, judgeFactual, loadFactualBenchmark, unrecognisedTags, type FactualJudged, type FactualQuery } from "./benchmarks/factual.ts";
import { makeLlmGateway, mergeProblems, RecordedEndpointProblems, type EndpointProblem, type LlmConfig, type LlmGatewayImpl, type LlmWaiting } from "../llm/index.ts";
import { answerTextOf, configuredBackend, factualJudgeFields, factualJudgeRequest, fallbacksOf, JUDGE_OUTPUTS, judgeLogOf, runJudgeCalls, type JudgeMode, type LlmJudgeFields } from "./llmJudge.ts";
import { AURA_LLM_OUTPUTS } from "../../actors/aura/llm.ts";
import { fieldDifferences } from "../views/text.ts";
import { InternalError } from "../../events/internalError.ts";

export interface FactualEvalOptions {
  readonly file: string;
  /** Told about a benchmark problem that does not stop the run (e.g. a `requires` tag no word of which is understood). */
  readonly warn?: (message: string) => void;
  readonly conditions: readonly string[];
  readonly seeds: readonly number[];
  /** Root directory for episode logs and results (default runs/eval). */
  readonly out?: string;
  /** Budget ceiling for AURA GapRouted (the release's RQ2 run used 5). */
  readonly maxSteps?: number;
  /** AURATown ticks before query 0's snapshot (default 10, as in the release). */
  readonly warmup?: number;
  /** Rerun cells whose logs already exist. */
  readonly fresh?: boolean;
  /** Results file (default `<out>/<benchmark>/results-<conditions>.jsonl`). */
  readonly results?: string;
  /** Called with 0 done once the inputs are checked and the cells are about to run, then after each cell. */
  readonly progress?: (done: number, total: number, label: string) => void;
  /** Called once per cell with whether it ran or was served from its log. */
  readonly onCell?: (cell: { dir: string; ran: boolean }) => void;
  /** LLM backends of the controller and the LLM judge's model (services/llm/index.ts); absent or null: deterministic. */
  readonly llm?: LlmConfig | null;
  /**
   * The gateway for \`llm\`: one the caller shares (an experiment's cells and its LLM judge), so an
   * endpoint that refuses the key is asked once per command, not once per gateway; default: a new one.
   */
  readonly gateway?: LlmGatewayImpl;
  /** Told while the model calls of a gateway made here wait with no answer (its `onWaiting`). */
  readonly onLlmWaiting?: (waiting: LlmWaiting) => void;
  /** rule (default), llm (the §7.1 LLM judge through the gateway, recorded in each cell's judge.jsonl) or both. */
  readonly judge?: JudgeMode;
  /** Told what an interrupted cell's resume says, as `run --resume` does: a torn tail it cut (and where the bytes were kept), a snapshot not used. */
  readonly onResumeNote?: (note: string) => void;
}

/** The controller's models of an LLM run (null: none of its roles uses a model). */
export type SceneModels = { readonly intent: string | null; readonly planner: string | null; readonly answer: string | null };
export function sceneModelsOf(config: LlmConfig | null | undefined): SceneModels | null {
  if (config == null) return null;
  const m = { intent: config.models.intent ?? null, planner: config.models.planner ?? null, answer: config.models.answer ?? null };
  return m.intent === null && m.planner === null && m.answer === null ? null : m;
}

/** A gateway that also validates the judges' outputs (`onWaiting`: told while its calls wait with no answer). */
export const judgeGateway = (config: LlmConfig, onWaiting?: (waiting: LlmWaiting) => void): LlmGatewayImpl =>
  makeLlmGateway(config, { outputs: { ...AURA_LLM_OUTPUTS, ...JUDGE_OUTPUTS }, ...(onWaiting === undefined ? {} : { onWaiting }) });

/** The judge's model, or a usage error when an LLM judge is asked for without one. */
export function judgeModelOf(mode: JudgeMode | undefined, config: LlmConfig | null | undefined, recordedOnly = false): string | null {
  if (mode === undefined || mode === "rule") return null;
  const model = config?.models.judge ?? null;
  if (model === null && !recordedOnly) throw new UsageError("--judge llm: the LLM judge needs a model (--llm <baseURL> [--model judge=<model>] or --llm-config)");
  return model;
}

export interface FactualRow extends FactualJudged {
  readonly benchmark: string;
  readonly seed: number;
  readonly condition: string;
  readonly episode: string;
  readonly log: string;
  /** The town snapshot the query was asked on. */
  readonly snapshot: string;
  /** Model calls that fell back to the deterministic backend. */
  readonly fallbacks: number;
  /** The LLM judge's scores (or its failure) when it ran. */
  readonly llmJudge?: LlmJudgeFields;
}

export interface FactualAggregate {
  readonly cells: number;
  readonly accuracy: number;
  readonly precision: number;
  readonly completeness: number;
  readonly strictPrecision: number | null;
  readonly claimRecall: number | null;
  readonly hallucinationRate: number;
  readonly perfectRate: number;
  readonly probesPerQuery: number;
  readonly disclosurePerQuery: number;
  /** LLM judge (§7.1): means over the cells it scored; failures are cells it could not score. */
  readonly llm?: { readonly accuracy: number | null; readonly strictPrecision: number | null; readonly claimRecall: number | null; readonly hallucinationRate: number | null; readonly scored: number; readonly failures: number };
  /** model calls that fell back to the deterministic backend */
  readonly fallbacks: number;
}

export interface FactualConditionSummary {
  readonly condition: string;
  readonly description: string;
  readonly backend: string;
  readonly overall: FactualAggregate;
  readonly perCategory: Readonly<Record<string, FactualAggregate>>;
  readonly perSeed: Readonly<Record<string, FactualAggregate>>;
}

export interface FactualAcceptance {
  readonly gapRoutedAccuracy: number;
  readonly fixedProbeAccuracy: number;
  /** fixed-probe − gap-routed accuracy */
  readonly accuracyGap: number;
  /** gap-routed probes / fixed-probe probes */
  readonly probeShare: number;
  /** within 0.05 accuracy at ≤ 25% of the probes */
  readonly pass: boolean;
}

export interface FactualEvalResult {
  readonly benchmark: string;
  readonly file: string;
  readonly seeds: readonly number[];
  readonly maxSteps: number;
  readonly warmup: number;
  readonly results: string;
  readonly conditions: readonly FactualConditionSummary[];
  readonly acceptance: FactualAcceptance | null;
  readonly ran: number;
  readonly reused: number;
  readonly rows: readonly FactualRow[];
  readonly judge: JudgeMode;
  /** What the run asked of the gateway (controller and judge), when it had one. */
  readonly llm?: { readonly baseURL: string; readonly models: Readonly<Record<string, string | null>>; readonly usage: ReturnType<LlmGatewayImpl["accounting"]>; readonly endpointProblems: readonly EndpointProblem[] };
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const meanOrNull = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length === 0 ? null : mean(v);
};

export function factualAggregate(rows: readonly FactualRow[]): FactualAggregate {
  return {
    cells: rows.length,
    accuracy: mean(rows.map((r) => r.accuracy)),
    precision: mean(rows.map((r) => r.precision)),
    completeness: mean(rows.map((r) => r.completeness)),
    strictPrecision: meanOrNull(rows.map((r) => r.strictPrecision)),
    claimRecall: meanOrNull(rows.map((r) => r.claimRecall)),
    hallucinationRate: mean(rows.map((r) => (r.hallucination ? 1 : 0))),
    perfectRate: mean(rows.map((r) => (r.perfect ? 1 : 0))),
    probesPerQuery: mean(rows.map((r) => r.probes)),
    disclosurePerQuery: mean(rows.map((r) => r.disclosure)),
    fallbacks: rows.reduce((s, r) => s + r.fallbacks, 0),
    ...(rows.some((r) => r.llmJudge !== undefined) ? { llm: llmAggregate(rows.map((r) => r.llmJudge).filter((j): j is LlmJudgeFields => j !== undefined)) } : {}),
  };
}

function llmAggregate(js: readonly LlmJudgeFields[]) {
  const ok = js.filter((j) => j.llmJudgeError === undefined);
  return {
    accuracy: meanOrNull(ok.map((j) => j.llmAccuracy ?? null)),
    strictPrecision: meanOrNull(ok.map((j) => j.llmStrictPrecision ?? null)),
    claimRecall: meanOrNull(ok.map((j) => j.llmClaimRecall ?? null)),
    hallucinationRate: ok.length === 0 ? null : mean(ok.map((j) => (j.llmHallucination === true ? 1 : 0))),
    scored: ok.length,
    failures: js.length - ok.length,
  };
}

const group = (rows: readonly FactualRow[], key: (r: FactualRow) => string): Record<string, FactualAggregate> => {
  const m = new Map<string, FactualRow[]>();
  for (const r of rows) (m.get(key(r)) ?? m.set(key(r), []).get(key(r))!).push(r);
  return Object.fromEntries([...m].map(([k, v]) => [k, factualAggregate(v)]));
};

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "-");

/** The scene config of query `q` on its snapshot: one query, asked by `asker`. */
export function factualCellConfig(snap: TownSnapshot, q: FactualQuery, asker: string, maxSteps: number): SceneConfig {
  return auraSceneWorld.resolveConfig({
    scene: snap.scene,
    queries: [{ id: q.id, text: q.text, asker }],
    order: [q.id],
    labels: {},
    maxSteps,
    registry: "environment",
    town: snap.town,
    policy: { allow: ["*"], deny: [] },
  });
}

/**
 * Whether a cell's log was made with these settings, when the town is not rebuilt to compare whole
 * configs: the question, the budget ceiling, and the snapshot (query i on the town after warm-up +
 * i ticks). A query whose wording was edited in the file (same id) was served its old answer.
 */
export function cellSettingsMatch(records: readonly LogRecord[], seed: number, qi: number, warmup: number, maxSteps: number, llm: SceneModels | null, question: string): boolean {
  const config = (records[0]?.payload as { config?: SceneConfig } | undefined)?.config;
  return config !== undefined && config.queries[0]?.text === question && config.maxSteps === maxSteps && config.scene.name === `auratown-s${seed}-t${warmup + qi - 1}` && canonicalJson(config.llm ?? null) === canonicalJson(llm);
}

/**
 * Clears a town warm-up's folder for its rerun. The run writes the same log again, but a damaged one
 * is reported (exit 3, naming the file) rather than run over: `--fresh` does not change that, a
 * damaged log is removed by hand after a look. A torn tail is not such damage: it is what a warm-up
 * killed mid-write leaves (it was refused, and the same command failed until the log was repaired).
 */
export function replaceTown(townDir: string): void {
  const log = layoutOf(townDir).log;
  if (existsSync(log)) scanLog(log);
  rmSync(townDir, { recursive: true, force: true });
}

/** The records of a cell's log, and whether it ends in a torn record; null when there is none. */
function cellLog(dir: string): { records: LogRecord[]; torn: boolean } | null {
  const log = layoutOf(dir).log;
  if (!existsSync(log)) return null;
  // A damaged log is reported (exit 3, naming the file), never silently run over: `--fresh` reruns
  // it. A torn tail (a cell killed mid-write) is an unfinished cell, which a resume cuts and continues.
  const scan = scanLog(log);
  return { records: scan.records, torn: scan.torn !== null };
}

type CellHeader = { config?: SceneConfig; condition?: string; seed?: number } | undefined;
const finished = (records: readonly LogRecord[]) => records.some((r) => r.type === "answer.given") && records.some((r) => r.type === "tick.committed");

/** The records of an existing, intact, finished cell log for (seed, condition, query), else null. */
export function existingCell(dir: string, seed: number, condition: string, queryId: string, config: SceneConfig | null): LogRecord[] | null {
  const cell = cellLog(dir);
  if (cell === null || cell.torn) return null;
  const records = cell.records;
  const header = records[0]?.payload as CellHeader;
  if (header?.config === undefined || header.condition !== condition || header.seed !== seed) return null;
  if (header.config.order.length !== 1 || header.config.order[0] !== queryId) return null;
  if (!finished(records)) return null;
  if (config !== null && canonicalJson(header.config) !== canonicalJson(config)) return null;
  return records;
}

/**
 * How the episode in a cell's log differs from query `qi`'s asked for, told without the town: its
 * condition, seed, query and question, the warm-up (read from its snapshot's name), the budget
 * ceiling and the models. Empty: the same settings.
 */
export function cellDifferences(records: readonly LogRecord[], seed: number, condition: string, q: FactualQuery, qi: number, warmup: number, maxSteps: number, llm: SceneModels | null): string[] {
  const header = records[0]?.payload as CellHeader;
  const config = header?.config;
  const tick = /^auratown-s\d+-t(\d+)$/.exec(config?.scene.name ?? "");
  const had = { condition: header?.condition, seed: header?.seed, query: config?.order.join(","), question: config?.queries[0]?.text, warmup: tick === null ? config?.scene.name : Number(tick[1]) - qi + 1, maxSteps: config?.maxSteps, llm: config?.llm ?? null };
  return fieldDifferences(had, { condition, seed, query: q.id, question: q.text, warmup, maxSteps, llm }, "in the log");
}

/** How an episode header's condition, seed and config differ from those asked for (none for no header). */
export function headerDifferences(header: { readonly condition?: string; readonly seed?: number; readonly config?: unknown } | undefined, asked: { readonly condition: string; readonly seed: number; readonly config: unknown }): string[] {
  return header === undefined ? [] : fieldDifferences({ condition: header.condition, seed: header.seed, config: header.config }, asked, "in the log");
}

/** A cell (or episode) directory whose log holds another episode than the one asked for: `differ` names the fields. */
export function anotherEpisode(dir: string, differ: readonly string[]): UsageError {
  return new UsageError(`${dir}: holds another episode (${differ.length === 0 ? "its log has no episode header" : differ.join("; ")}); pass --fresh to rerun it, or write to another output directory`);
}

export async function runFactualEval(o: FactualEvalOptions): Promise<FactualEvalResult> {
  const queries = loadFactualBenchmark(o.file);
  for (const { tag, queries: ids } of unrecognisedTags(queries)) {
    o.warn?.(`${o.file}: requires tag '${tag}' (query ${ids.join(", ")}) names no kind of fact this scorer knows; it counts as an unsupported need (never fully met)`);
  }
  const unknown = o.conditions.filter((c) => !(FACTUAL_CONDITIONS as readonly string[]).includes(c));
  if (unknown.length > 0) throw new UsageError(`--condition: unknown ${unknown.map((c) => `'${c}'`).join(", ")} (factual conditions: ${FACTUAL_CONDITIONS.join(", ")})`);
  if (o.conditions.length === 0) throw new UsageError("--condition: name at least one condition");
  if (o.seeds.length === 0) throw new UsageError("--seeds: give at least one seed");
  const maxSteps = o.maxSteps ?? 5;
  const warmup = o.warmup ?? 10;
  if (!Number.isInteger(warmup) || warmup < 1) throw new UsageError(`--warmup: expected an integer ≥ 1, got ${warmup}`);
  const stem = basename(o.file).replace(/\.(json|ya?ml)$/i, "");
  const root = resolve(o.out ?? join("runs", "eval"), slug(stem));
  const models = sceneModelsOf(o.llm);
  const tag = models === null ? "" : "-llm";
  // Every cell's log is read before anything is written: one that holds another episode (another
  // warm-up, budget or models) is refused naming the fields, as eval implicit and privacy do, never
  // run over (`--fresh` reruns it). A seed's town runs only when one of its cells has no finished
  // log, so a rerun of a finished matrix is free.
  const townNeeded = new Map<number, boolean>();
  for (const seed of o.seeds) {
    let needed = o.fresh === true;
    for (const condition of o.fresh === true ? [] : o.conditions) {
      queries.forEach((q, qi) => {
        const dir = factualCellDir(root, seed, q.id, condition, tag);
        const cell = cellLog(dir);
        // No log, or one without a single whole record (stopped before its header): not started.
        if (cell === null || cell.records.length === 0) return void (needed = true);
        const differ = cellDifferences(cell.records, seed, condition, q, qi, warmup, maxSteps, models);
        if (differ.length > 0) throw anotherEpisode(dir, differ);
        if (cell.torn || !finished(cell.records)) needed = true;
      });
    }
    townNeeded.set(seed, needed);
  }
  mkdirSync(root, { recursive: true });
  const results = o.results ?? join(root, `results-${o.conditions.map(slug).join("+")}.jsonl`);
  const rows: FactualRow[] = [];
  const cells: Array<{ q: FactualQuery; seed: number; condition: string; dir: string; records: LogRecord[] }> = [];
  const judgeModel = judgeModelOf(o.judge, o.llm);
  const gateway = o.llm == null ? null : (o.gateway ?? judgeGateway(o.llm, o.onLlmWaiting));
  // Refusals recorded in the cells (served ones too): their answers are the deterministic backends'.
  const recorded = new RecordedEndpointProblems();
  const total = o.seeds.length * o.conditions.length;
  let done = 0;
  o.progress?.(0, total, "inputs checked");
  let ran = 0;
  let reused = 0;
  for (const seed of o.seeds) {
    const cellDir = (q: FactualQuery, condition: string) => factualCellDir(root, seed, q.id, condition, tag);
    let snaps: TownSnapshot[] | null = null;
    let residents: readonly string[] = [];
    if (townNeeded.get(seed) === true) {
      const townDir = join(root, `town-s${seed}-w${warmup}`);
      replaceTown(townDir);
      snaps = await townSnapshots(seed, queries.map((_, qi) => warmup + qi), townDir);
      residents = snaps[0]!.residents;
    }
    for (const condition of o.conditions) {
      for (let qi = 0; qi < queries.length; qi++) {
        const q = queries[qi]!;
        const dir = cellDir(q, condition);
        const base = snaps === null ? null : factualCellConfig(snaps[qi]!, q, residents[qi % residents.length]!, maxSteps);
        const config = base === null || models === null ? base : { ...base, llm: models };
        let records = o.fresh === true ? null : existingCell(dir, seed, condition, q.id, config);
        if (records === null) {
          if (config === null) throw new InternalError(`${dir}: no usable log and no town snapshot`);
          // With the town rebuilt, whole configs compare: a log of these settings on another town (the
          // simulation changed, another asker) is another episode too.
          const held = o.fresh === true ? null : cellLog(dir);
          if (held !== null) {
            const differ = headerDifferences(held.records[0]?.payload as CellHeader, { condition, seed, config });
            if (differ.length > 0) throw anotherEpisode(dir, differ);
          }
          // An unfinished one is continued, as eval implicit and privacy do (its logged model answers
          // served from the log, a torn tail cut, saying so); one without a whole record is run anew.
          const resume = held !== null && held.records.length > 0;
          if (!resume) rmSync(dir, { recursive: true, force: true });
          await runEpisode({ world: auraSceneWorld.name, seed, condition, config, dir, trace: { exporter: "none" }, snapshotEvery: 0, fsync: "never", ...(gateway === null || models === null ? {} : { llm: gateway.responder }), ...(resume ? { resume: true, ...(o.onResumeNote === undefined ? {} : resumeNotes(o.onResumeNote, "file")) } : {}) });
          records = scanLog(layoutOf(dir).log).records;
          ran++;
          o.onCell?.({ dir, ran: true });
        } else {
          reused++;
          o.onCell?.({ dir, ran: false });
        }
        cells.push({ q, seed, condition, dir, records });
        recorded.add(records);
      }
      o.progress?.(++done, total, `${condition} s${seed}`);
    }
  }
  const judged = judgeModel === null ? null : await judgeFactualCells(cells, judgeModel, gateway);
  writeResults(results, cells.map((c, i) => {
    const { row, line } = factualCell(stem, c.q, c.seed, c.condition, c.dir, c.records, { mode: o.judge ?? "rule", ...(judged === null ? {} : { llm: judged[i]! }) });
    rows.push(row);
    return line;
  }));
  const conditions = o.conditions.map((condition): FactualConditionSummary => {
    const rs = rows.filter((r) => r.condition === condition);
    return {
      condition,
      description: SCENE_CONDITIONS[condition]!.description,
      backend: [...new Set(rs.map((r) => r.backend))].join(", ") || "none",
      overall: factualAggregate(rs),
      perCategory: group(rs, (r) => r.category),
      perSeed: group(rs, (r) => String(r.seed)),
    };
  });
  return { benchmark: stem, file: o.file, seeds: o.seeds, maxSteps, warmup, results, conditions, acceptance: acceptanceOf(conditions), ran, reused, rows, judge: o.judge ?? "rule", ...(gateway === null ? {} : { llm: { baseURL: o.llm!.baseURL, models: { ...o.llm!.models }, usage: gateway.accounting(), endpointProblems: mergeProblems(gateway.problems(), recorded.problems()) } }) };
}

/** The §7.1 LLM judge on each cell's answer (served from the cell's judge.jsonl when recorded). */
export async function judgeFactualCells(cells: ReadonlyArray<{ q: FactualQuery; dir: string; records: readonly LogRecord[] }>, model: string, gateway: LlmGatewayImpl | null): Promise<LlmJudgeFields[]> {
  const calls = cells.map((c) => {
    const header = c.records[0]!.payload as { config: SceneConfig };
    return { log: judgeLogOf(c.dir), request: factualJudgeRequest(model, c.q.text, factualTruth(header.config, c.q.id), answerTextOf(c.records), c.q.id) };
  });
  const run = await runJudgeCalls(calls, gateway);
  return run.answers.map((a) => factualJudgeFields(model, a));
}

/** Judges one cell from its log records: the row and its results JSONL line (services/analysis/results.ts schema). */
export function factualCell(benchmark: string, q: FactualQuery, seed: number, condition: string, dir: string, records: readonly LogRecord[], judge: { mode: JudgeMode; llm?: LlmJudgeFields } = { mode: "rule" }): { row: FactualRow; line: string } {
  const header = records[0]!.payload as { config: SceneConfig };
  const judged = judgeFactual(q, factualTruth(header.config, q.id), records);
  // The row's backend is the condition's configured one; model calls that fell back are counted apart.
  const backend = configuredBackend(header.config, judged.backend);
  const fallbacks = fallbacksOf(records);
  const row: FactualRow = { benchmark, seed, condition, episode: records[0]!.episode, log: dir, snapshot: header.config.scene.name, ...judged, backend, fallbacks, ...(judge.llm === undefined ? {} : { llmJudge: judge.llm }) };
  const rule = judge.mode !== "llm";
  const line = resultLine({
    v: RESULT_ROW_VERSION, benchmark, condition, backend, query: q.id, scene: row.snapshot, subcategory: q.category, seed,
    literalCoverage: null, implicitCoverage: null, probes: judged.probes, disclosure: judged.disclosure, goldToolRecall: null, forbiddenViolations: 0,
    correct: rule ? judged.completeness === 1 && judged.contradictedClaims === 0 : null, accuracy: rule ? judged.accuracy : null, log: dir, episode: row.episode,
    ...(rule ? { precision: judged.precision, completeness: judged.completeness, strictPrecision: judged.strictPrecision, claimRecall: judged.claimRecall, hallucination: judged.hallucination } : {}),
    asker: judged.asker,
    ...(header.config.llm == null ? {} : { fallbacks }),
    ...(judge.mode === "rule" ? {} : { judge: judge.mode }),
    ...(judge.llm ?? {}),
  } as Parameters<typeof resultLine>[0]);
  return { row, line };
}

/** Where a factual cell's log lives under the benchmark's root. */
export const factualCellDir = (root: string, seed: number, queryId: string, condition: string, tag = ""): string => join(root, `s${seed}`, `q${slug(queryId)}-${slug(condition)}${tag}`);

/** GapRouted against Fixed-Probe: within 0.05 accuracy at ≤ 25% of its probes (issue 4). */
export function acceptanceOf(conditions: readonly FactualConditionSummary[]): FactualAcceptance | null {
  const g = conditions.find((c) => c.condition === "aura-gap-routed")?.overall;
  const f = conditions.find((c) => c.condition === "fixed-probe")?.overall;
  if (g === undefined || f === undefined || f.probesPerQuery === 0) return null;
  const accuracyGap = f.accuracy - g.accuracy;
  const probeShare = g.probesPerQuery / f.probesPerQuery;
  return { gapRoutedAccuracy: g.accuracy, fixedProbeAccuracy: f.accuracy, accuracyGap, probeShare, pass: accuracyGap <= 0.05 && probeShare <= 0.25 };
}
