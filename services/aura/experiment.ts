// `probetown experiment <spec.json|yaml>` (DESIGN §6): a spec (world, benchmark and file, seeds,
// conditions, fork points, judges, maxSteps, policy, out dir, report options) expands to a job
// matrix; every cell is an episode (an `aura-scene` episode, on an AURATown snapshot for the
// factual and privacy benchmarks). Cells whose log already exists and holds (hash chain intact,
// the same world/seed/condition/queries, finished) are served from the log; only the others run,
// and a log made with other settings is refused, not run over (`--fresh` reruns it). An out
// directory belongs to one experiment (its name and benchmark, in OWNER); another's is refused.
// The results JSONL is then derived from the logs alone — the same rows whether the cells ran now
// or earlier — and the report (services/analysis/report.ts) from the rows. So a rerun is free and
// `--report-only` regenerates the report without running anything.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { LogRecord } from "../../events/record.ts";
import { scanLog } from "../../infra/fileEventStore.ts";
import { takePidLock } from "../../infra/pidLock.ts";
import { FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS, type SceneConfig } from "../../actors/aura/world.ts";
import { parseSeeds } from "../distributed/jobs.ts";
import { isSeed } from "../../actors/rng.ts";
import { layoutOf, UsageError } from "../kernel/replay.ts";
import { readInputFile, checkParsedInput } from "../kernel/inputFile.ts";
import { METRICS, ReportOptionInvalid, writeReport, type Metric, type WrittenReport } from "../analysis/report.ts";
import { RESULT_ROW_VERSION, resultLine } from "../analysis/results.ts";
import { MAX_BOOTSTRAP_ITERATIONS } from "../analysis/reportMetrics.ts";
import { recordsByQuery, runImplicitEval, runPrivacyEval, sceneConfig } from "./eval.ts";
import { canonicalJson } from "../../events/canonical.ts";
import { verifyEpisode } from "../kernel/verify.ts";
import { cellSettingsMatch, existingCell, factualCell, factualCellDir, runFactualEval } from "./factualEval.ts";
import { loadImplicitBenchmark } from "./benchmarks/implicit.ts";
import { judgeQuery } from "./benchmarks/judge.ts";
import { judgePrivacy, loadPrivacyBenchmark } from "./benchmarks/privacy.ts";
import { factualTruth, loadFactualBenchmark } from "./benchmarks/factual.ts";
import { mergeProblems, RecordedEndpointProblems, resolveLlmConfig, type EndpointProblem, type LlmConfig, type LlmGatewayImpl, type LlmWaiting } from "../llm/index.ts";
import { judgeGateway, sceneModelsOf } from "./factualEval.ts";
import { answerTextOf, configuredBackend, factualJudgeFields, factualJudgeRequest, fallbacksOf, implicitJudgeFields, implicitJudgeRequest, judgeLogOf, judgeModeOf, runJudgeCalls, withJudge, type JudgeCall } from "./llmJudge.ts";
import { InternalError } from "../../events/internalError.ts";
import { TaggedError } from "../../events/taggedError.ts";
import { EXIT_ENDPOINT } from "../llm/errors.ts";

export const BENCHMARKS = ["implicit", "privacy", "factual"] as const;
export type BenchmarkKind = (typeof BENCHMARKS)[number];

/** The world each benchmark's cells run in, and where their state comes from. */
const WORLD_OF: Readonly<Record<BenchmarkKind, string>> = { implicit: "aura-scene", privacy: "auratown", factual: "auratown" };
const CONDITIONS_OF: Readonly<Record<BenchmarkKind, readonly string[]>> = { implicit: IMPLICIT_CONDITIONS, privacy: FACTUAL_CONDITIONS, factual: FACTUAL_CONDITIONS };
const DEFAULT_WARMUP: Readonly<Record<BenchmarkKind, number | null>> = { implicit: null, privacy: 12, factual: 10 };
const DEFAULT_MAX_STEPS: Readonly<Record<BenchmarkKind, number>> = { implicit: 3, privacy: 5, factual: 5 };

export interface ExperimentSpec {
  /** The spec file (absolute). Relative paths in it are relative to its directory. */
  readonly file: string;
  readonly name: string;
  readonly world: string;
  readonly benchmark: BenchmarkKind;
  /** The benchmark's query file (absolute). */
  readonly queries: string;
  readonly seeds: readonly number[];
  readonly conditions: readonly string[];
  /** AURATown warm-up ticks before the (first) snapshot; null for hand-written scenes. */
  readonly warmup: number | null;
  readonly scenes: readonly string[] | null;
  readonly judges: readonly string[];
  /** The `llm` section resolved (endpoint, models by role incl. the judge's); null: deterministic, rule judge only. */
  readonly llm: LlmConfig | null;
  readonly maxSteps: number;
  readonly policy: { readonly allow: readonly string[]; readonly deny: readonly string[] };
  /** Output directory (absolute): logs/, results.jsonl, report/. */
  readonly out: string;
  readonly report: { readonly reference?: readonly string[]; readonly metric?: Metric; readonly bootstrap?: number; readonly seed?: number; readonly title?: string };
}

/** A spec that cannot be used: names the file and the field. */
export class SpecInvalid extends UsageError {
  constructor(file: string, problems: readonly string[]) {
    super(`${file}: invalid experiment spec:\n  - ${problems.join("\n  - ")}`);
  }
}

const KNOWN_FIELDS = ["name", "world", "benchmark", "file", "seeds", "conditions", "forks", "warmup", "scenes", "judges", "llm", "maxSteps", "policy", "out", "report"];

const shown = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/** Reads and validates a spec (JSON, or YAML by extension); every problem names its field. */
export function loadSpec(path: string): ExperimentSpec {
  const file = resolve(path);
  let text: string;
  try {
    text = readInputFile(file, "spec", path);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`${path}: cannot read the experiment spec (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    const yaml = /\.ya?ml$/i.test(file);
    // A spec is JSON unless its name says YAML: a YAML spec named otherwise (or a README) was "not valid JSON" and no more.
    throw new UsageError(`${path}: not valid ${yaml ? "YAML" : "JSON"} (${(e as Error).message.split("\n")[0]})${yaml || /\.json$/i.test(file) ? "" : "; an experiment spec is read as JSON unless its name ends in .yaml or .yml"}`);
  }
  checkParsedInput(raw, path);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new SpecInvalid(path, [`expected an object with fields ${KNOWN_FIELDS.join(", ")}, got ${shown(raw)}`]);
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  const bad = (field: string, reason: string) => void problems.push(`field '${field}': ${reason}`);
  for (const k of Object.keys(r)) if (!KNOWN_FIELDS.includes(k)) bad(k, `unknown field (known: ${KNOWN_FIELDS.join(", ")})`);
  const base = dirname(file);
  const at = (p: string) => (isAbsolute(p) ? p : resolve(base, p));

  const benchmark = r.benchmark as BenchmarkKind;
  if (!(BENCHMARKS as readonly unknown[]).includes(r.benchmark)) bad("benchmark", `expected one of ${BENCHMARKS.join(", ")}, got ${shown(r.benchmark)}`);
  const known = (BENCHMARKS as readonly unknown[]).includes(r.benchmark);
  const world = r.world === undefined ? (known ? WORLD_OF[benchmark] : "") : r.world;
  if (typeof world !== "string") bad("world", `expected a world name, got ${shown(r.world)}`);
  else if (known && world !== WORLD_OF[benchmark]) bad("world", `the ${benchmark} benchmark runs on '${WORLD_OF[benchmark]}'${benchmark === "implicit" ? " (hand-written scenes)" : " snapshots (its cells are aura-scene episodes on them)"}, got '${world}'`);

  let queries = "";
  if (typeof r.file !== "string" || r.file.trim() === "") bad("file", `expected the benchmark's query file (a path relative to the spec), got ${shown(r.file)}`);
  else {
    queries = at(r.file);
    if (!existsSync(queries)) bad("file", `no such file: ${queries}`);
    else if (!statSync(queries).isFile()) bad("file", `${queries} is not a file (expected the benchmark's queries JSON)`);
  }

  let seeds: number[] = [];
  if (typeof r.seeds === "string") {
    try {
      seeds = parseSeeds(r.seeds);
    } catch (e) {
      bad("seeds", (e as Error).message.replace(/^--seeds: /, ""));
    }
  } else if (Array.isArray(r.seeds) && r.seeds.length > 0 && r.seeds.every((s) => typeof s === "number" && isSeed(s))) seeds = [...new Set(r.seeds as number[])];
  else bad("seeds", `expected a non-empty list of integers ≥ 0 or a string like "42,123,456" / "1-10", got ${shown(r.seeds)}`);

  let conditions: string[] = [];
  if (!Array.isArray(r.conditions) || r.conditions.length === 0 || !r.conditions.every((c) => typeof c === "string")) bad("conditions", `expected a non-empty list of condition names, got ${shown(r.conditions)}`);
  else {
    conditions = [...new Set(r.conditions as string[])];
    if (known) {
      const unknown = conditions.filter((c) => !CONDITIONS_OF[benchmark].includes(c));
      if (unknown.length > 0) bad("conditions", `unknown for the ${benchmark} benchmark: ${unknown.map((c) => `'${c}'`).join(", ")} (known: ${CONDITIONS_OF[benchmark].join(", ")})`);
    }
  }

  // Fork points: the AURATown warm-up before the snapshots (`forks.warmup`, or `warmup`).
  const forks = r.forks as Record<string, unknown> | undefined;
  if (forks !== undefined && (forks === null || typeof forks !== "object" || Array.isArray(forks))) bad("forks", `expected an object like { "warmup": 10 }, got ${shown(forks)}`);
  else for (const k of Object.keys(forks ?? {})) if (k !== "warmup") bad(`forks.${k}`, "unknown fork setting (known: warmup)");
  const warmupRaw = forks?.warmup ?? r.warmup;
  let warmup = known ? DEFAULT_WARMUP[benchmark] : null;
  if (warmupRaw !== undefined) {
    const field = forks?.warmup !== undefined ? "forks.warmup" : "warmup";
    if (known && benchmark === "implicit") bad(field, "the implicit benchmark's scenes are hand-written moments: there is no town to warm up");
    else if (!Number.isSafeInteger(warmupRaw) || (warmupRaw as number) < 1) bad(field, `expected an integer ≥ 1 (AURATown ticks before the first snapshot), got ${shown(warmupRaw)}`);
    else warmup = warmupRaw as number;
  }

  let scenes: string[] | null = null;
  if (r.scenes !== undefined) {
    if (known && benchmark !== "implicit") bad("scenes", "only the implicit benchmark has scenes");
    else if (!Array.isArray(r.scenes) || !r.scenes.every((s) => typeof s === "string")) bad("scenes", `expected a list of scene names, got ${shown(r.scenes)}`);
    else scenes = r.scenes as string[];
  }

  // The query file is read now: one that is not the benchmark's (or lacks a scene the spec names)
  // is a problem of this spec's field, found before anything is written. Found later, the out
  // directory had been claimed for the experiment, and the corrected spec was refused as another's.
  if (known && queries !== "" && !problems.some((p) => p.startsWith("field 'file'"))) {
    try {
      if (benchmark === "implicit") {
        const bench = loadImplicitBenchmark(queries);
        for (const s of scenes ?? []) if (bench.scenes[s] === undefined) bad("scenes", `no scene '${s}' in ${queries} (scenes: ${Object.keys(bench.scenes).join(", ")})`);
      } else if (benchmark === "privacy") loadPrivacyBenchmark(queries);
      else loadFactualBenchmark(queries);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      bad("file", e.message.replace(/^--file /, "").replace(/\n {2}- /g, "\n      - "));
    }
  }

  // The `llm` section: the settings of an --llm-config file (baseURL, model, models by role, …; the key from the environment).
  let llm: LlmConfig | null = null;
  if (r.llm !== undefined) {
    try {
      llm = resolveLlmConfig({ configObject: { label: `${path}: field 'llm'`, value: r.llm } }).config;
      if (llm === null) bad("llm", "no endpoint: give baseURL (or set PROBETOWN_LLM_API_KEY / OPENAI_API_KEY for api.openai.com)");
    } catch (e) {
      bad("llm", (e as Error).message.replace(`${path}: field 'llm': `, ""));
    }
  }
  let judges = ["rule"];
  if (r.judges !== undefined) {
    if (!Array.isArray(r.judges) || r.judges.length === 0 || !r.judges.every((j) => typeof j === "string")) bad("judges", `expected a list like ["rule"] or ["rule", "llm"], got ${shown(r.judges)}`);
    else {
      judges = [...new Set(r.judges as string[])];
      const other = judges.filter((j) => j !== "rule" && j !== "llm");
      if (other.length > 0) bad("judges", `unknown judge ${other.map((j) => `'${j}'`).join(", ")} (known: rule, llm)`);
      else if (judges.includes("llm") && r.llm === undefined) bad("judges", "the llm judge needs an `llm` section (baseURL, and models.judge or model)");
      else if (judges.includes("llm") && llm !== null && (llm.models.judge ?? null) === null) bad("judges", "the llm judge needs a model: llm.models.judge (or llm.model)");
    }
  }

  let maxSteps = known ? DEFAULT_MAX_STEPS[benchmark] : 0;
  if (r.maxSteps !== undefined) {
    if (!Number.isSafeInteger(r.maxSteps) || (r.maxSteps as number) < 0) bad("maxSteps", `expected an integer ≥ 0 (the probe budget ceiling), got ${shown(r.maxSteps)}`);
    else maxSteps = r.maxSteps as number;
  }

  let policy = { allow: ["*"] as readonly string[], deny: [] as readonly string[] };
  if (r.policy !== undefined) {
    const p = r.policy as Record<string, unknown>;
    const list = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string" && x.length > 0);
    if (p === null || typeof p !== "object" || Array.isArray(p)) bad("policy", `expected { "allow": [globs], "deny": [globs] }, got ${shown(r.policy)}`);
    else {
      for (const k of Object.keys(p)) if (k !== "allow" && k !== "deny") bad(`policy.${k}`, "unknown (known: allow, deny)");
      if (p.allow !== undefined && !list(p.allow)) bad("policy.allow", `expected a list of tool globs, got ${shown(p.allow)}`);
      if (p.deny !== undefined && !list(p.deny)) bad("policy.deny", `expected a list of tool globs, got ${shown(p.deny)}`);
      if (known && benchmark !== "implicit" && (p.deny !== undefined || p.allow !== undefined)) bad("policy", `the ${benchmark} benchmark measures the conditions' own choices with an open policy; a policy applies to the implicit benchmark only`);
      policy = { allow: (p.allow as string[] | undefined) ?? ["*"], deny: (p.deny as string[] | undefined) ?? [] };
    }
  }

  const name = r.name === undefined ? basename(file).replace(/\.(json|ya?ml)$/i, "") : r.name;
  if (typeof name !== "string" || !/^[A-Za-z0-9._-]+$/.test(name)) bad("name", `expected a name of letters, digits, '.', '_' or '-', got ${shown(r.name)}`);
  let out = "";
  if (r.out === undefined) out = resolve("runs", "experiments", String(name));
  else if (typeof r.out !== "string" || r.out.trim() === "") bad("out", `expected a directory (relative to the spec), got ${shown(r.out)}`);
  else out = at(r.out);

  const report: { reference?: string[]; metric?: Metric; bootstrap?: number; seed?: number; title?: string } = {};
  if (r.report !== undefined) {
    const o = r.report as Record<string, unknown>;
    if (o === null || typeof o !== "object" || Array.isArray(o)) bad("report", `expected an object like { "reference": "fixed-probe" }, got ${shown(r.report)}`);
    else {
      for (const k of Object.keys(o)) if (!["reference", "metric", "bootstrap", "seed", "title"].includes(k)) bad(`report.${k}`, "unknown (known: reference, metric, bootstrap, seed, title)");
      if (o.reference !== undefined) {
        const refs = typeof o.reference === "string" ? [o.reference] : o.reference;
        if (!Array.isArray(refs) || !refs.every((x) => typeof x === "string")) bad("report.reference", `expected a condition name, got ${shown(o.reference)}`);
        else if (conditions.length > 0 && !refs.some((x) => conditions.includes(x as string))) bad("report.reference", `not among the spec's conditions: ${refs.join(", ")}`);
        else report.reference = refs as string[];
      }
      if (o.metric !== undefined) {
        if (!(METRICS as readonly unknown[]).includes(o.metric)) bad("report.metric", `expected one of ${METRICS.join(", ")}, got ${shown(o.metric)}`);
        else report.metric = o.metric as Metric;
      }
      if (o.bootstrap !== undefined) {
        // As `report --bootstrap`: a 95% interval from fewer resamples is noise labelled as a CI.
        if (!Number.isSafeInteger(o.bootstrap) || (o.bootstrap as number) < 100 || (o.bootstrap as number) > MAX_BOOTSTRAP_ITERATIONS) bad("report.bootstrap", `expected an integer from 100 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")} (bootstrap resamples, as \`report --bootstrap\`), got ${shown(o.bootstrap)}`);
        else report.bootstrap = o.bootstrap as number;
      }
      if (o.seed !== undefined) {
        if (!Number.isSafeInteger(o.seed)) bad("report.seed", `expected an integer (the bootstrap seed), got ${shown(o.seed)}`);
        else report.seed = o.seed as number;
      }
      if (o.title !== undefined) {
        if (typeof o.title !== "string") bad("report.title", `expected text, got ${shown(o.title)}`);
        else report.title = o.title;
      }
    }
  }
  if (problems.length > 0) throw new SpecInvalid(path, problems);
  return { file, name: name as string, world: world as string, benchmark, queries, seeds, conditions, warmup, scenes, judges, llm, maxSteps, policy, out, report };
}

// ---- The matrix, served from logs ------------------------------------------------------------

const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, "-");
const stemOf = (file: string) => basename(file).replace(/\.(json|ya?ml)$/i, "");
/** Where the cells' logs go: one root per benchmark file, as `probetown eval` lays them out. */
export const logsRoot = (spec: ExperimentSpec): string => join(spec.out, "logs");

export interface MatrixScan {
  /** Cells in the matrix (episodes: scene × seed × condition, seed × condition, or seed × query × condition). */
  readonly cells: number;
  /** Cell directories with no usable log (none, unfinished, damaged, or made with another config). */
  readonly missing: readonly string[];
  /** Why a cell in `missing` is not served, as a message says it ("no log", "a log made with other settings", …). */
  readonly unserved: ReadonlyMap<string, string>;
  /** Cell directories served from their logs. */
  readonly served: readonly string[];
  /** Result lines, in matrix order, derived from the logs that exist (the rule judge's). */
  readonly lines: readonly string[];
  /** With an LLM judge: its call for each line (same order), answered from the cells' judge.jsonl or the gateway. */
  readonly judgeCalls: readonly JudgeCall[];
  /** Refusals (key, model, URL) and unreachable endpoints recorded in the served cells' model calls. */
  readonly recorded: RecordedEndpointProblems;
}

/**
 * The records of a finished log of (seed, condition) with `ticks` committed ticks whose config the
 * spec would give (`same`), else null: a changed maxSteps, policy or warm-up makes a cell stale.
 */
function finishedLog(dir: string, seed: number, condition: string, ticks: number, same: (config: SceneConfig) => boolean, unserved: Map<string, string>): LogRecord[] | null {
  const log = layoutOf(dir).log;
  if (!existsSync(log)) return unservedAs(unserved, dir, NO_LOG);
  try {
    const records = scanLog(log).records;
    const header = records[0]?.payload as { condition?: string; seed?: number; config?: SceneConfig } | undefined;
    if (header?.condition !== condition || header.seed !== seed || header.config === undefined) return unservedAs(unserved, dir, ANOTHER_EPISODE);
    if (!same(header.config)) return unservedAs(unserved, dir, OTHER_SETTINGS);
    return records.filter((r) => r.type === "tick.committed").length === ticks ? records : unservedAs(unserved, dir, UNFINISHED);
  } catch {
    return unservedAs(unserved, dir, `a damaged log (\`probetown verify ${dir}\` names the damage)`);
  }
}

const NO_LOG = "no log";
const UNFINISHED = "an unfinished log (a run without --report-only continues it)";
const OTHER_SETTINGS = "a log made with other settings than this spec's (a run without --report-only names the fields that differ; --fresh reruns it)";
const ANOTHER_EPISODE = "another episode's log (a run without --report-only names it; --fresh reruns it)";

function unservedAs(unserved: Map<string, string>, dir: string, why: string): null {
  unserved.set(dir, why);
  return null;
}

/** Derives the results lines from the cells' logs (no episode runs); lists the cells without one. */
export function scanMatrix(spec: ExperimentSpec): MatrixScan {
  const root = join(logsRoot(spec), slug(stemOf(spec.queries)));
  const stem = stemOf(spec.queries);
  const missing: string[] = [];
  const unserved = new Map<string, string>();
  const served: string[] = [];
  const lines: string[] = [];
  const judgeCalls: JudgeCall[] = [];
  const recorded = new RecordedEndpointProblems();
  const judgeModel = judgeModeOf(spec.judges) === "rule" ? null : (spec.llm?.models.judge ?? null);
  // LLM cells (the controller on a model) live beside the deterministic ones, suffixed -llm.
  const models = sceneModelsOf(spec.llm);
  const tag = models === null ? "" : "-llm";
  let cells = 0;
  if (spec.benchmark === "implicit") {
    const bench = loadImplicitBenchmark(spec.queries);
    const sceneNames = spec.scenes ?? Object.keys(bench.scenes).filter((s) => bench.queries.some((q) => q.scene === s));
    for (const s of sceneNames) if (bench.scenes[s] === undefined) throw new SpecInvalid(spec.file, [`field 'scenes': no scene '${s}' in ${spec.queries} (scenes: ${Object.keys(bench.scenes).join(", ")})`]);
    for (const condition of spec.conditions) {
      for (const sceneName of sceneNames) {
        const scene = bench.scenes[sceneName]!;
        const queries = bench.queries.filter((q) => q.scene === sceneName);
        for (const seed of spec.seeds) {
          cells++;
          const dir = join(root, `${slug(sceneName)}-s${seed}-${slug(condition)}${tag}`);
          const base = sceneConfig(bench, scene, queries, seed, spec.maxSteps, spec.policy);
          const expected = canonicalJson(models === null ? base : { ...base, llm: models });
          const records = finishedLog(dir, seed, condition, queries.length, (c) => canonicalJson(c) === expected, unserved);
          if (records === null) {
            missing.push(dir);
            continue;
          }
          served.push(dir);
          recorded.add(records);
          const byQuery = recordsByQuery(records);
          for (const q of queries) {
            const got = byQuery.get(q.id);
            if (got === undefined) throw new InternalError(`${dir}: the log has no tick for query ${q.id}`);
            const judged = judgeQuery(q, scene, got.records);
            const config = (records[0]!.payload as { config: SceneConfig }).config;
            const row = { benchmark: stem, seed, condition, episode: records[0]!.episode, log: dir, order: got.tick, ...judged, backend: configuredBackend(config, judged.backend), ...(models === null ? {} : { fallbacks: fallbacksOf(got.records) }) };
            lines.push(resultLine({ ...row, v: RESULT_ROW_VERSION, query: q.id, correct: null }));
            if (judgeModel !== null) judgeCalls.push({ log: judgeLogOf(dir), request: implicitJudgeRequest(judgeModel, q, scene, answerTextOf(got.records)) });
          }
        }
      }
    }
  } else if (spec.benchmark === "privacy") {
    const queries = loadPrivacyBenchmark(spec.queries);
    for (const seed of spec.seeds) {
      for (const condition of spec.conditions) {
        cells++;
        const dir = join(root, `s${seed}-${slug(condition)}${tag}`);
        // The snapshot is the town after `warmup` ticks (scene auratown-s<seed>-t<warmup − 1>).
        const records = finishedLog(dir, seed, condition, queries.length, (c) => c.maxSteps === spec.maxSteps && c.scene.name === `auratown-s${seed}-t${(spec.warmup ?? 12) - 1}` && canonicalJson(c.llm ?? null) === canonicalJson(models) && canonicalJson(c.queries.map((x) => [x.id, x.text])) === canonicalJson(queries.map((x) => [x.id, x.text])), unserved);
        if (records === null) {
          missing.push(dir);
          continue;
        }
        served.push(dir);
        recorded.add(records);
        const config = (records[0]!.payload as { config: SceneConfig }).config;
        const byQuery = recordsByQuery(records);
        const kind = SCENE_CONDITIONS[condition]!.kind;
        const backend = kind === "aura-gap-routed" || kind === "aura-no-probe" ? "deterministic" : "deterministic-policy";
        for (const q of queries) {
          const got = byQuery.get(q.id);
          const asker = config.queries.find((x) => x.id === q.id)?.asker;
          if (got === undefined || asker == null) throw new InternalError(`${dir}: the log has no tick (or no asker) for query ${q.id}`);
          const answered = (got.records.find((r) => r.type === "answer.given")?.payload as { backend?: string } | undefined)?.backend ?? backend;
          const row = { benchmark: stem, seed, condition, episode: records[0]!.episode, log: dir, ...judgePrivacy(q, asker, got.records), ...(models === null ? {} : { fallbacks: fallbacksOf(got.records) }) };
          lines.push(resultLine({ ...row, v: RESULT_ROW_VERSION, query: q.id, scene: null, subcategory: row.category, literalCoverage: null, implicitCoverage: null, goldToolRecall: row.allowedRecall, correct: null, backend: configuredBackend(config, models === null ? backend : answered) }));
          if (judgeModel !== null) judgeCalls.push({ log: judgeLogOf(dir), request: factualJudgeRequest(judgeModel, q.text, factualTruth(config, q.id), answerTextOf(got.records), q.id) });
        }
      }
    }
  } else {
    const queries = loadFactualBenchmark(spec.queries);
    for (const seed of spec.seeds) {
      for (const condition of spec.conditions) {
        queries.forEach((q, qi) => {
          cells++;
          const dir = factualCellDir(root, seed, q.id, condition, tag);
          const records = existingCell(dir, seed, condition, q.id, null);
          // Query i is asked on the town after warm-up + i ticks (scene auratown-s<seed>-t<warmup + i − 1>).
          if (records === null || !cellSettingsMatch(records, seed, qi, spec.warmup ?? 10, spec.maxSteps, models, q.text)) {
            missing.push(dir);
            unserved.set(dir, records !== null ? OTHER_SETTINGS : existsSync(layoutOf(dir).log) ? "an unfinished log, or another episode's (a run without --report-only continues it, or names what differs)" : NO_LOG);
          } else {
            served.push(dir);
            recorded.add(records);
            lines.push(factualCell(stem, q, seed, condition, dir, records).line);
            if (judgeModel !== null) judgeCalls.push({ log: judgeLogOf(dir), request: factualJudgeRequest(judgeModel, q.text, factualTruth((records[0]!.payload as { config: SceneConfig }).config, q.id), answerTextOf(records), q.id) });
          }
        });
      }
    }
  }
  return { cells, missing, unserved, served, lines, judgeCalls, recorded };
}

// ---- Running ---------------------------------------------------------------------------------

export interface ExperimentOptions {
  /** Regenerate the results and report from the logs; refuse when a cell has none. */
  readonly reportOnly?: boolean;
  /** Rerun every cell (also one whose log was made with other settings); not with `reportOnly`. */
  readonly fresh?: boolean;
  /** Replay every log before serving it (`verify`); a log that diverges is rerun. */
  readonly verify?: boolean;
  /** Called with 0 done once the inputs are checked and the cells are about to run, then after each cell. */
  readonly progress?: (done: number, total: number, label: string) => void;
  /** Told about benchmark problems that do not stop the run. */
  readonly warn?: (message: string) => void;
  /** Told while the model calls (the cells' and the LLM judge's) wait with no answer (the gateway's `onWaiting`). */
  readonly onLlmWaiting?: (waiting: LlmWaiting) => void;
  /** Told what an interrupted cell's resume says, as `run --resume` does: a torn tail it cut (and where the bytes were kept), a snapshot not used. */
  readonly onResumeNote?: (note: string) => void;
}

export interface ExperimentResult {
  readonly spec: ExperimentSpec;
  readonly cells: number;
  /** Cells run now (they had no usable log). */
  readonly ran: number;
  /** Cells served from their logs. */
  readonly served: number;
  /** With `verify`: served logs that did not verify and were rerun. */
  readonly replaced: number;
  readonly results: string;
  readonly report: WrittenReport;
  /** With an LLM judge: the cells it was asked to score, how many it could not, and the first failure. */
  readonly llmJudge: { readonly cells: number; readonly failed: number; readonly firstError: string | null } | null;
  /**
   * Why model calls fell back for the configuration's sake (a refused key, model or URL; an
   * unreachable endpoint), met by this run's cells or judge, or recorded in served cells' logs. The
   * CLI exits 5 on any.
   */
  readonly endpointProblems: readonly EndpointProblem[];
  /** Model calls of the cells (their results rows) that failed and fell back. */
  readonly fallbacks: number;
}

/**
 * The report could not be made because its metric is the LLM judge's and the judge scored no cell
 * (or too few) for the endpoint's sake: it refused the key, model or URL, or could not be reached.
 * Exit 5 (EXIT_ENDPOINT), as a finished run whose model calls failed so: the endpoint is what to
 * fix. The cells' logs and results.jsonl are written; a rerun once the endpoint answers asks only
 * the judge's failed calls again.
 */
export class ReportNeedsModel extends TaggedError {
  readonly _tag = "ReportNeedsModel";
  readonly exitCode = EXIT_ENDPOINT;
  readonly problems: readonly EndpointProblem[];
  constructor(spec: ExperimentSpec, results: string, problems: readonly EndpointProblem[], judge: { readonly cells: number; readonly failed: number; readonly firstError: string | null }, cause: ReportOptionInvalid) {
    super(
      `${spec.file}: report.metric ${spec.report.metric ?? "?"}: ${cause.reason}: the LLM judge could not score ${judge.failed} of ${judge.cells} cells because the model endpoint ${spec.llm?.baseURL ?? ""} failed (first error: ${judge.firstError}); ` +
        `the cells' logs and ${results} are written, the report is not; rerun once the endpoint answers (recorded answers are reused)`,
      { cause },
    );
    this.problems = problems;
  }
}

/** What an experiment's out directory holds besides its outputs: whose they are, so another experiment's is recognised. */
export const OWNER = ".experiment.json";

/**
 * Refuses an out directory that holds another experiment's outputs (its results.jsonl and report
 * would be replaced, its charts left behind): another name or benchmark in OWNER, or, in one from
 * before OWNER was written, logs of another benchmark file. The same experiment runs again into it.
 */
function checkOwner(spec: ExperimentSpec): void {
  const owner = join(spec.out, OWNER);
  if (existsSync(owner)) {
    let had: { name?: unknown; benchmark?: unknown } = {};
    try {
      had = JSON.parse(readFileSync(owner, "utf8")) as typeof had;
    } catch {
      // Unreadable: no experiment it names is this one.
    }
    if (had.name === spec.name && had.benchmark === spec.benchmark) return;
    throw new UsageError(`${spec.file}: out ${spec.out}: holds experiment '${String(had.name)}' (${String(had.benchmark)}), not '${spec.name}' (${spec.benchmark}) (recorded in ${OWNER}: only that same experiment may run again into it); choose another out directory or remove it`);
  }
  const logs = logsRoot(spec);
  const other = existsSync(logs) ? readdirSync(logs, { withFileTypes: true }).find((d) => d.isDirectory() && d.name !== slug(stemOf(spec.queries)))?.name : undefined;
  if (other !== undefined) throw new UsageError(`${spec.file}: out ${spec.out}: holds the logs of another benchmark file (logs/${other}) and no ${OWNER} naming its experiment (only that same experiment may run again into it); choose another out directory or remove it`);
}

export async function runExperiment(spec: ExperimentSpec, o: ExperimentOptions = {}): Promise<ExperimentResult> {
  if (o.fresh === true && o.reportOnly === true) throw new UsageError("--fresh and --report-only cannot be combined: --fresh reruns every cell, --report-only runs none");
  // Before anything is written there: another experiment's directory does not even get a lock file.
  if (existsSync(spec.out)) checkOwner(spec);
  // One run per output directory: two at once raced on the same cells (crashes, a deleted log).
  try {
    mkdirSync(spec.out, { recursive: true });
  } catch (error) {
    throw new UsageError(`${spec.file}: out ${spec.out}: cannot be created as a directory (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const lock = takePidLock(join(spec.out, "experiment.lock"), { reentrant: true });
  if ("heldBy" in lock) throw new UsageError(`${spec.file}: another run of this experiment (process ${lock.heldBy}) is writing ${spec.out}; wait for it to finish, or stop it`);
  try {
    return await runExperimentLocked(spec, o);
  } finally {
    lock.release();
  }
}

async function runExperimentLocked(spec: ExperimentSpec, o: ExperimentOptions): Promise<ExperimentResult> {
  // Again under the lock (another experiment may have claimed the directory meanwhile), then claimed.
  checkOwner(spec);
  writeFileSync(join(spec.out, OWNER), canonicalJson({ name: spec.name, benchmark: spec.benchmark }) + "\n");
  let scan = scanMatrix(spec);
  let replaced = 0;
  if (o.verify === true) {
    // Replay every served cell, and every cell whose log is there but unfinished or damaged (not
    // served): one that does not verify is moved out of the way and run again.
    for (const dir of [...scan.served, ...scan.missing]) {
      if (!existsSync(layoutOf(dir).log) || (await verifyEpisode(dir)).exitCode === 0) continue;
      if (o.reportOnly === true) throw new UsageError(`${spec.file}: --report-only --verify: ${dir} does not verify (run \`probetown verify ${dir}\`)`);
      rmSync(dir, { recursive: true, force: true });
      replaced++;
    }
    if (replaced > 0) scan = scanMatrix(spec);
  }
  const toRun = o.fresh === true ? scan.cells : scan.missing.length;
  // One gateway for the cells and the LLM judge: an endpoint that refuses the key (or the model, or
  // has no such URL) is then asked once per command; two gateways asked it once each.
  const gateway = o.reportOnly === true || spec.llm === null ? null : judgeGateway(spec.llm, o.onLlmWaiting);
  if (toRun > 0) {
    if (o.reportOnly === true) {
      const first = scan.missing[0]!;
      throw new UsageError(`${spec.file}: --report-only, but ${scan.missing.length} of ${scan.cells} cells have no finished log of this spec under ${logsRoot(spec)} (first: ${first}, which holds ${scan.unserved.get(first) ?? NO_LOG}); run the experiment without --report-only`);
    }
    // The cells run with the controller's models (the judge runs below, from the logs).
    const common = { file: spec.queries, conditions: spec.conditions, seeds: spec.seeds, out: logsRoot(spec), maxSteps: spec.maxSteps, ...(o.fresh === true ? { fresh: true } : {}), ...(o.progress === undefined ? {} : { progress: o.progress }), ...(o.onResumeNote === undefined ? {} : { onResumeNote: o.onResumeNote }), ...(sceneModelsOf(spec.llm) === null || gateway === null ? {} : { llm: spec.llm, gateway }) };
    if (spec.benchmark === "implicit") await runImplicitEval({ ...common, policy: spec.policy, ...(spec.scenes === null ? {} : { scenes: spec.scenes }) });
    else if (spec.benchmark === "privacy") await runPrivacyEval({ ...common, warmup: spec.warmup ?? 12 });
    else await runFactualEval({ ...common, warmup: spec.warmup ?? 10, ...(o.warn === undefined ? {} : { warn: o.warn }) });
    scan = scanMatrix(spec);
    if (scan.missing.length > 0) throw new InternalError(`${spec.file}: ${scan.missing.length} cells still have no finished log after running (first: ${scan.missing[0]})`);
  }
  const results = join(spec.out, "results.jsonl");
  const { lines, llmJudge } = await judgedLines(spec, scan, gateway);
  writeFileSync(results, lines.join(""));
  const endpointProblems = mergeProblems(gateway?.problems() ?? [], scan.recorded.problems());
  let report: WrittenReport;
  try {
    report = writeReport(results, join(spec.out, "report"), {
      ...(spec.report.reference === undefined ? {} : { reference: spec.report.reference }),
      ...(spec.report.metric === undefined ? {} : { metric: spec.report.metric }),
      ...(spec.report.bootstrap === undefined ? {} : { bootstrapIterations: spec.report.bootstrap }),
      ...(spec.report.seed === undefined ? {} : { bootstrapSeed: spec.report.seed }),
      title: spec.report.title ?? `Experiment ${spec.name}`,
    });
  } catch (error) {
    // The report's metric is the LLM judge's, and the judge scored nothing because the endpoint
    // refused or could not be reached: that is what to fix (exit 5), not the spec (it said exit 2).
    if (error instanceof ReportOptionInvalid && error.flag === "--metric" && endpointProblems.length > 0 && llmJudge !== null && llmJudge.failed > 0) throw new ReportNeedsModel(spec, results, endpointProblems, llmJudge, error);
    throw error;
  }
  const fallbacks = lines.reduce((n, line) => n + ((JSON.parse(line) as { fallbacks?: number }).fallbacks ?? 0), 0);
  return { spec, cells: scan.cells, ran: toRun, served: scan.cells - toRun, replaced, results, report, llmJudge, // Problems met now (the one gateway: cells and judge) carry the endpoint's host:port; every cell's
  // log, served or just written, says what was recorded.
  endpointProblems, fallbacks };
}

/**
 * The results lines with the LLM judge's fields when the spec asks for it: each call is served from
 * its cell's judge.jsonl when recorded, else sent to the gateway (the one the cells ran with) and
 * recorded; no gateway (`--report-only`) refuses to call, naming the first cell without a record.
 */
async function judgedLines(spec: ExperimentSpec, scan: MatrixScan, gateway: LlmGatewayImpl | null): Promise<{ readonly lines: readonly string[]; readonly llmJudge: ExperimentResult["llmJudge"] }> {
  const mode = judgeModeOf(spec.judges);
  if (mode === "rule") return { lines: scan.lines, llmJudge: null };
  if (scan.judgeCalls.length === 0) return { lines: scan.lines, llmJudge: { cells: 0, failed: 0, firstError: null } };
  const model = spec.llm!.models.judge!;
  const run = await runJudgeCalls(scan.judgeCalls, gateway);
  const missing = run.answers.findIndex((a) => a === null);
  if (missing >= 0) throw new UsageError(`${spec.file}: --report-only, but ${run.answers.filter((a) => a === null).length} LLM judge call(s) have no record (first: ${scan.judgeCalls[missing]!.log}); run the experiment without --report-only`);
  const fields = spec.benchmark === "implicit" ? implicitJudgeFields : factualJudgeFields;
  const judged = run.answers.map((answer) => fields(model, answer!));
  const errors = judged.map((j) => j.llmJudgeError).filter((e): e is string => e !== undefined);
  return {
    lines: scan.lines.map((line, i) => resultLine(withJudge(JSON.parse(line) as Record<string, unknown>, mode, judged[i]!) as unknown as Parameters<typeof resultLine>[0])),
    // How the judge fared: the cells it was asked to score, how many it could not, the first failure.
    llmJudge: { cells: judged.length, failed: errors.length, firstError: errors[0] ?? null },
  };
}
