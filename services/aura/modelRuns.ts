// Model rows for docs/fidelity.md. A model run is slow (a 270 M model on a CPU writes a few tokens a
// second), so `npm run fidelity` does not rerun it: `npm run fidelity:model-record` turns one
// `eval implicit --llm … --json` and its logs into a record under data/aura/model-runs/, and the
// fidelity section renders every record there beside the deterministic rows, labelled with the
// model's name and size. The counts of model calls come from the logs themselves.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readLog } from "../../infra/fileEventStore.ts";
import { UsageError } from "../kernel/usageError.ts";

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
  readonly size: string;
  readonly measured: string;
  readonly command: string;
  readonly splits: ReadonlyArray<{ readonly file: string; readonly conditions: readonly ModelRunCondition[] }>;
  readonly llm: LlmCallCounts;
  readonly notes: readonly string[];
}

/** Every episode log under `dir` (a folder holding `log/`), depth-first. */
function logDirs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (!statSync(p).isDirectory()) continue;
    if (name === "log") out.push(p);
    else out.push(...logDirs(p));
  }
  return out;
}

export function countLlmCalls(runs: string): LlmCallCounts {
  let requested = 0;
  let validFirst = 0;
  let repaired = 0;
  let failed = 0;
  for (const log of logDirs(runs)) {
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

interface EvalJson {
  readonly files?: ReadonlyArray<{ readonly file: string; readonly conditions: ReadonlyArray<{ readonly condition: string; readonly overall: Record<string, number | null> }> }>;
  readonly file?: string;
  readonly conditions?: ReadonlyArray<{ readonly condition: string; readonly overall: Record<string, number | null> }>;
}

const num = (x: number | null | undefined): number => (typeof x === "number" ? x : 0);

/** A record from an `eval implicit --json` output and the folder its logs went to. */
export function modelRunRecord(evalJson: string, runs: string, meta: { label: string; model: string; size: string; measured: string; command: string; notes: readonly string[] }): ModelRunRecord {
  if (!existsSync(evalJson)) throw new UsageError(`--eval-json: ${evalJson} does not exist (the stdout of eval implicit … --json)`);
  if (!existsSync(runs)) throw new UsageError(`--runs: ${runs} does not exist (the eval's --out folder)`);
  const parsed = JSON.parse(readFileSync(evalJson, "utf8")) as EvalJson;
  const files = parsed.files ?? (parsed.conditions === undefined ? [] : [{ file: parsed.file ?? "", conditions: parsed.conditions }]);
  if (files.length === 0) throw new UsageError(`--eval-json: ${evalJson} holds no conditions (expected the JSON of eval implicit … --json)`);
  const root = join(import.meta.dirname, "..", "..");
  return {
    ...meta,
    splits: files.map((f) => ({
      file: f.file.startsWith(root) ? f.file.slice(root.length + 1) : f.file,
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

/** The model rows, beside the deterministic ones of the same splits (`deterministic(file, condition)`). */
export function modelRunsSection(records: readonly ModelRunRecord[], deterministic: (file: string, condition: string) => { implicit: number | null; literal: number | null; probes: number } | null): string[] {
  if (records.length === 0) return [];
  const out = ["### Model runs (LLM backends)", "", "Recorded, not rerun by `npm run fidelity` (a CPU model takes minutes per scene): each row is **LLM** — the IntentFrame, the planner and the answer on the named model, judged by the same offline rule judge as the deterministic rows, which stand beside them. `npm run fidelity:model-record` writes a record from an eval's JSON and logs; the call counts are read from the logs.", ""];
  for (const r of records) {
    const l = r.llm;
    out.push(`**${r.label}** — model \`${r.model}\` (${r.size}), measured ${r.measured}: \`${r.command}\`. Model calls: ${l.requested} requested, ${l.validFirst} valid at once, ${l.repaired} valid after repair, ${l.failed} failed (the deterministic backend answered those).`, "");
    out.push("| split | condition | LLM literal | LLM implicit | LLM probes | forbidden reads | fallbacks | deterministic literal | deterministic implicit | deterministic probes |", "|---|---|---|---|---|---|---|---|---|---|");
    for (const s of r.splits) {
      for (const c of s.conditions) {
        const d = deterministic(s.file, c.condition);
        out.push(`| ${s.file.split("/").at(-1)} | ${c.condition} | ${f3(c.literalCoverage)} | ${f3(c.implicitCoverage)} | ${c.probesPerQuery.toFixed(2)} | ${c.forbiddenViolations} | ${c.fallbacks} | ${f3(d?.literal ?? null)} | ${f3(d?.implicit ?? null)} | ${d === null ? "—" : d.probes.toFixed(2)} |`);
      }
    }
    out.push("", ...r.notes.map((n) => `- ${n}`), "");
  }
  return out;
}
