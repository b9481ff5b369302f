// Model rows for docs/fidelity.md. A model run is slow (a 270 M model on a CPU writes a few tokens a
// second), so `npm run fidelity` does not rerun it: `npm run fidelity:model-record` turns one
// `eval implicit --llm … --json` and its logs into a record under data/aura/model-runs/, and the
// fidelity section renders every record there beside the deterministic rows, labelled with the
// model's name and size. The counts of model calls come from the logs themselves.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { readLog } from "../../infra/fileEventStore.ts";
import { UsageError } from "../kernel/usageError.ts";
import { logDirsUnder } from "../kernel/logDirs.ts";

export const MODEL_RUNS = join(import.meta.dirname, "..", "..", "data", "aura", "model-runs");

export interface ModelRunCondition {
  readonly condition: string;
  readonly literalCoverage: number | null;
  readonly implicitCoverage: number | null;
  readonly probesPerQuery: number;
  readonly forbiddenViolations: number;
  readonly disclosedBeyondNeed: number;
  readonly fallbacks: number;
}

/** What the logs of a model run say of its model calls. */
export interface LlmCallCounts {
  readonly requested: number;
  /** Completions valid at the first answer. */
  readonly validFirst: number;
  /** Completions valid only after the one repair turn. */
  readonly repaired: number;
  /** Calls that failed (invalid after repair, timeout, budget): the deterministic backend answered. */
  readonly failed: number;
}

export interface ModelRunRecord {
  readonly label: string;
  readonly model: string;
  /** Parameters, variant and quantisation, e.g. "270 M parameters, pretrained base, Q4_K_M GGUF, 242 MB, CPU". */
  readonly size: string;
  readonly measured: string;
  readonly command: string;
  /** The model run's seeds (from the eval's JSON; absent in records made before it was kept). */
  readonly seeds?: readonly number[];
  /** The commit the run was made at. */
  readonly commit?: string;
  /** The machine's load while it ran (a shared machine: wall times depend on it). */
  readonly load?: string;
  /**
   * Each split, with the scenes and the queries that ran when they are not all of the split's
   * (`scenes`, `queries`: an eval with --scene, or on a subset file cut from the split): the
   * deterministic columns are computed on the same scenes and queries.
   */
  readonly splits: ReadonlyArray<{ readonly file: string; readonly scenes?: readonly string[]; readonly queries?: readonly string[]; readonly conditions: readonly ModelRunCondition[] }>;
  readonly llm: LlmCallCounts;
  readonly notes: readonly string[];
}


export function countLlmCalls(runs: string): LlmCallCounts {
  let requested = 0;
  let validFirst = 0;
  let repaired = 0;
  let failed = 0;
  for (const log of logDirsUnder(runs)) {
    for (const r of readLog(log)) {
      if (r.type === "llm.requested") requested++;
      else if (r.type === "llm.failed") failed++;
      else if (r.type === "llm.completed") {
        if ((r.payload as { repaired?: boolean }).repaired === true) repaired++;
        else validFirst++;
      }
    }
  }
  return { requested, validFirst, repaired, failed };
}

interface EvalJsonCondition {
  readonly condition: string;
  readonly overall: Record<string, number | null>;
  readonly perScene?: Record<string, unknown>;
}

interface EvalJson {
  readonly files?: ReadonlyArray<{ readonly file: string; readonly conditions: readonly EvalJsonCondition[] }>;
  readonly file?: string;
  readonly seeds?: readonly number[];
  readonly conditions?: readonly EvalJsonCondition[];
}

const num = (x: number | null | undefined): number => (typeof x === "number" ? x : 0);

/** A record from an `eval implicit --json` output and the folder its logs went to. */
export function modelRunRecord(evalJson: string, runs: string, meta: { label: string; model: string; size: string; measured: string; command: string; commit?: string; load?: string; notes: readonly string[] }, split?: string): ModelRunRecord {
  if (!existsSync(evalJson)) throw new UsageError(`--eval-json: ${evalJson} does not exist (the stdout of eval implicit … --json)`);
  if (!existsSync(runs)) throw new UsageError(`--runs: ${runs} does not exist (the eval's --out folder)`);
  const parsed = JSON.parse(readFileSync(evalJson, "utf8")) as EvalJson;
  const files = parsed.files ?? (parsed.conditions === undefined ? [] : [{ file: parsed.file ?? "", conditions: parsed.conditions }]);
  if (files.length === 0) throw new UsageError(`--eval-json: ${evalJson} holds no conditions (expected the JSON of eval implicit … --json)`);
  const root = join(import.meta.dirname, "..", "..");
  if (split !== undefined && files.length !== 1) throw new UsageError(`--split: the eval ran ${files.length} files; a subset's split is given for a run of one file`);
  if (split !== undefined && !existsSync(split)) throw new UsageError(`--split: ${split} does not exist (the split the eval's file was cut from)`);
  type Bench = { scenes?: Record<string, unknown>; queries?: Array<{ id: string | number; scene: string }> };
  const bench = (file: string): Bench => JSON.parse(readFileSync(file, "utf8")) as Bench;
  // The scenes and queries a split ran, kept only when they are not all of the split's (an eval with
  // --scene; a subset file cut from the split, `split`).
  const subsetOf = (file: string, cs: readonly EvalJsonCondition[]): { scenes?: readonly string[]; queries?: readonly string[] } => {
    const of = split ?? file;
    if (!existsSync(of)) return {};
    const whole = bench(of);
    const ranScenes = [...new Set(cs.flatMap((c) => Object.keys(c.perScene ?? {})))].sort();
    const every = Object.keys(whole.scenes ?? {});
    const scenes = ranScenes.length === 0 || every.every((s) => ranScenes.includes(s)) ? undefined : ranScenes;
    if (split === undefined) return scenes === undefined ? {} : { scenes };
    const ids = (bench(file).queries ?? []).filter((q) => ranScenes.length === 0 || ranScenes.includes(q.scene)).map((q) => String(q.id));
    const inSplit = new Set((whole.queries ?? []).map((q) => String(q.id)));
    const stray = ids.filter((id) => !inSplit.has(id));
    if (stray.length > 0) throw new UsageError(`--split: queries ${stray.slice(0, 5).join(", ")} of ${file} are not in ${split}`);
    const wholeIds = (whole.queries ?? []).filter((q) => scenes === undefined || scenes.includes(q.scene)).map((q) => String(q.id));
    return { ...(scenes === undefined ? {} : { scenes }), ...(ids.length === wholeIds.length ? {} : { queries: ids }) };
  };
  const rel = (file: string): string => (resolve(file).startsWith(root) ? resolve(file).slice(root.length + 1) : file);
  return {
    ...meta,
    ...(parsed.seeds === undefined ? {} : { seeds: parsed.seeds }),
    splits: files.map((f) => ({
      file: rel(split ?? f.file),
      ...subsetOf(f.file, f.conditions),
      conditions: f.conditions.map((c) => ({
        condition: c.condition,
        literalCoverage: c.overall.literalCoverage ?? null,
        implicitCoverage: c.overall.implicitCoverage ?? null,
        probesPerQuery: num(c.overall.probesPerQuery),
        forbiddenViolations: num(c.overall.forbiddenViolations),
        disclosedBeyondNeed: num(c.overall.disclosedBeyondNeed),
        fallbacks: num(c.overall.fallbacks),
      })),
    })),
    llm: countLlmCalls(runs),
  };
}

export function readModelRuns(dir = MODEL_RUNS): ModelRunRecord[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.endsWith(".json")).sort().map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as ModelRunRecord);
}

const f3 = (x: number | null): string => (x === null ? "—" : x.toFixed(3));

/** The deterministic figures of a split's condition, on some of its scenes (all when `scenes` is absent). */
export type DeterministicLookup = (file: string, condition: string, scenes: readonly string[] | undefined, queries?: readonly string[]) => { implicit: number | null; literal: number | null; probes: number } | null;

/** "dev17.json (only PA_polling_station_morning; 5 queries: …)" when a record ran part of a split, else the file's name. */
function splitLabel(file: string, scenes: readonly string[] | undefined, queries: readonly string[] | undefined): string {
  const part = [scenes === undefined ? null : `only ${scenes.join(", ")}`, queries === undefined ? null : `${queries.length} ${queries.length === 1 ? "query" : "queries"}: ${queries.join(", ")}`].filter((x) => x !== null);
  return `${file.split("/").at(-1)!}${part.length === 0 ? "" : ` (${part.join("; ")})`}`;
}

/**
 * The model rows, beside the deterministic ones of the same splits and scenes (`deterministic(file,
 * condition, scenes)`).
 * Every row is marked [model] and says the model, its size and quantisation, the seeds, the commit
 * and the load it ran at.
 */
export function modelRunsSection(records: readonly ModelRunRecord[], deterministic: DeterministicLookup): string[] {
  if (records.length === 0) return [];
  const out = ["### Model runs (LLM backends) [model]", "", "Recorded, not rerun by `npm run fidelity` (a CPU model takes minutes per scene): each row is **[model]** — the IntentFrame, the planner and the answer on the named model, judged by the same offline rule judge as the deterministic rows, which stand beside them (deterministic: seeds 42, 123, 456 on the same split, scenes and queries). `npm run fidelity:model-record` writes a record from an eval's JSON and logs; the call counts are read from the logs. Records are listed by file name; a record's split column names the scenes and queries it ran when they are not the whole split.", ""];
  for (const r of records) {
    const l = r.llm;
    const facts = [`model \`${r.model}\` (${r.size})`, r.seeds === undefined ? null : `seed${r.seeds.length === 1 ? "" : "s"} ${r.seeds.join(", ")}`, r.commit === undefined ? null : `commit ${r.commit}`, `measured ${r.measured}`, r.load === undefined ? null : `load ${r.load}`].filter((x) => x !== null);
    out.push(`**[model] ${r.label}** — ${facts.join(", ")}: \`${r.command}\`. Model calls: ${l.requested} requested, ${l.validFirst} valid at once, ${l.repaired} valid after repair, ${l.failed} failed (the deterministic backend answered those).`, "");
    out.push("| split | condition | [model] literal | [model] implicit | [model] probes | [model] forbidden reads | [model] fallbacks | deterministic literal | deterministic implicit | deterministic probes |", "|---|---|---|---|---|---|---|---|---|---|");
    for (const s of r.splits) {
      for (const c of s.conditions) {
        const d = deterministic(s.file, c.condition, s.scenes, s.queries);
        out.push(`| ${splitLabel(s.file, s.scenes, s.queries)} | ${c.condition} | ${f3(c.literalCoverage)} | ${f3(c.implicitCoverage)} | ${c.probesPerQuery.toFixed(2)} | ${c.forbiddenViolations} | ${c.fallbacks} | ${f3(d?.literal ?? null)} | ${f3(d?.implicit ?? null)} | ${d === null ? "—" : d.probes.toFixed(2)} |`);
      }
    }
    out.push("", ...r.notes.map((n) => `- ${n}`), "");
  }
  return out;
}
