// Results rows: one JSON line per (benchmark, condition, backend, query, seed) cell of an
// experiment, derived from that cell's episode log by a judge. The report (services/analysis/report.ts)
// is a pure function of these rows, so it can be regenerated without rerunning anything; the
// `log` field says where each number came from.
//
// The schema is the contract between whoever writes rows (the experiment runner) and the report:
// writers should build rows with `resultLine`, which validates before serialising.
import { renameSync, writeFileSync } from "node:fs";
import { inputShapeProblem, inputShapeWording, readInputFile } from "../kernel/inputFile.ts";
import { UsageError } from "../kernel/usageError.ts";
import { Schema, SchemaIssue } from "effect";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { messageOf } from "../../events/errorMessage.ts";

const Unit = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }));
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0));

export const RESULT_ROW_VERSION = 1;

export const ResultRow = Schema.Struct({
  /** row format version; a reader refuses versions it does not know */
  v: Schema.Literal(RESULT_ROW_VERSION),
  /** which benchmark the query belongs to, e.g. "implicit", "factual", "privacy": query ids are unique only within one */
  benchmark: Schema.NonEmptyString,
  condition: Schema.NonEmptyString,
  /** which backend actually produced the answers, e.g. "deterministic" or "llm:gpt-4o-mini" */
  backend: Schema.NonEmptyString,
  /** deterministic, or LLM when a model served any stage of the answer (derived from `backend`; absent in older rows) */
  resultKind: Schema.optionalKey(Schema.Literals(["deterministic", "LLM"])),
  /** the benchmark's query id */
  query: Schema.Union([Schema.NonEmptyString, Schema.Int]),
  scene: Schema.NullOr(Schema.String),
  /** implicit-intent subcategory, or the factual/privacy category */
  subcategory: Schema.NullOr(Schema.String),
  seed: Schema.Int,
  /** rule/LLM judge scores in [0, 1]; null where the benchmark does not define them */
  literalCoverage: Schema.NullOr(Unit),
  implicitCoverage: Schema.NullOr(Unit),
  /** probes (tool calls) fired for this query */
  probes: Count,
  /** summed disclosure cost of the fired probes */
  disclosure: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  goldToolRecall: Schema.NullOr(Unit),
  /** forbidden tools fired */
  forbiddenViolations: Count,
  /**
   * implicit intent: distinct private items (state fields, beliefs) stated in the answer or read by
   * the probes that the query's need did not include (services/aura/benchmarks/judge.ts), and each side
   */
  disclosedBeyondNeed: Schema.optionalKey(Count),
  disclosedBeyondNeedAnswer: Schema.optionalKey(Count),
  disclosedBeyondNeedProbes: Schema.optionalKey(Count),
  /** factual: was the answer correct; null elsewhere */
  correct: Schema.NullOr(Schema.Boolean),
  /** factual: a graded score (e.g. the LLM judge's accuracy), when there is one */
  accuracy: Schema.optionalKey(Schema.NullOr(Unit)),
  /** the episode log (directory or JetStream episode id) this cell was judged from */
  log: Schema.String,
  episode: Schema.optionalKey(Schema.String),
  tokens: Schema.optionalKey(Count),
  /** which judges scored the row: "rule", "llm" or "both" (absent: the rule judge) */
  judge: Schema.optionalKey(Schema.Literals(["rule", "llm", "both"])),
  /** model calls of this query that failed and fell back to the deterministic backend (LLM runs) */
  fallbacks: Schema.optionalKey(Count),
  /** the LLM judge's model (services/aura/llmJudge.ts); its scores below are null when it failed */
  llmJudge: Schema.optionalKey(Schema.String),
  /** why the LLM judge gave no score (invalid output after the repair attempt, HTTP error, no backend) */
  llmJudgeError: Schema.optionalKey(Schema.String),
  /** §7.1 factual judge: 0.7·precision + 0.3·completeness, from the judge's claim counts */
  llmAccuracy: Schema.optionalKey(Schema.NullOr(Unit)),
  llmPrecision: Schema.optionalKey(Schema.NullOr(Unit)),
  llmCompleteness: Schema.optionalKey(Schema.NullOr(Unit)),
  /** strict rescore: precision without the 0.5 default (null when no claim is verifiable) */
  llmStrictPrecision: Schema.optionalKey(Schema.NullOr(Unit)),
  llmClaimRecall: Schema.optionalKey(Schema.NullOr(Unit)),
  llmHallucination: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  llmPerfect: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  /** §7.3 implicit-intent judge scores */
  llmLiteral: Schema.optionalKey(Schema.NullOr(Unit)),
  llmImplicit: Schema.optionalKey(Schema.NullOr(Unit)),
});
export type ResultRow = typeof ResultRow.Type;

export interface ResultsProblem {
  readonly line: number | null;
  readonly field: string | null;
  readonly reason: string;
}

/** A results file that cannot be used; names the file and, per problem, the line and field. */
export class ResultsInvalid extends TaggedError {
  readonly _tag = "ResultsInvalid";
  readonly file: string;
  readonly problems: readonly ResultsProblem[];
  constructor(fields: { readonly file: string; readonly problems: readonly ResultsProblem[] }) {
    const shown = fields.problems.slice(0, MAX_SHOWN).map((p) => `${fields.file}${p.line === null ? "" : `:${p.line}`}: ${p.field === null ? "" : `field '${p.field}': `}${p.reason}`);
    const more = fields.problems.length > MAX_SHOWN ? [`(and ${fields.problems.length - MAX_SHOWN} more problems)`] : [];
    super([...shown, ...more].join("\n"));
    this.file = fields.file;
    this.problems = fields.problems;
  }
  get exitCode(): 2 {
    return ExitCode.usage;
  }
}

const MAX_SHOWN = 10;
/** Stop collecting after this many bad lines: a file of the wrong kind fails on every line. */
const MAX_PROBLEMS = 50;

const decodeRow = Schema.decodeUnknownExit(ResultRow, { errors: "all" });
const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v = input;
  for (const key of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

const shown = (v: unknown): string => {
  if (v === undefined) return "missing";
  const s = JSON.stringify(v);
  return `got ${s.length > 60 ? `${s.slice(0, 57)}...` : s}`;
};

/** The schema problems of one parsed line, one per field. */
export function rowProblems(value: unknown, line: number | null = null): ResultsProblem[] {
  const exit = decodeRow(value);
  if (exit._tag === "Success") return [];
  const error = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (error === undefined || !Schema.isSchemaError(error.error)) return [{ line, field: null, reason: String(exit.cause) }];
  const issues = formatter(error.error.issue).issues;
  return issues.map((i) => {
    const path = (i.path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p)) as PropertyKey[];
    const field = path.length === 0 ? null : path.map(String).join(".");
    const got = path.length === 0 ? "" : ` (${shown(valueAt(value, path))})`;
    const message = i.message === "Missing key" ? "required but missing" : `${i.message.replace(/\s+/g, " ")}${got}`;
    return { line, field, reason: message };
  });
}

/** The identity of a cell: rows that share it are duplicates. */
export const cellKey = (r: ResultRow): string => JSON.stringify([r.benchmark, r.condition, r.backend, String(r.query), r.seed]);

/** Where the results files a report reads come from, for a file or folder given by mistake. */
const RESULTS_FILES = "the results JSONL an eval or experiment writes (an eval's <out>/<benchmark>/results-<conditions>.jsonl, an experiment's <out>/results.jsonl)";

/**
 * What the first line of a file of another kind is (a log, a trace, a sweep's or eval's JSON), or
 * null when it may be a results row: such a file failed on every field of every line, never
 * saying that it was the wrong file.
 */
function otherKind(value: Record<string, unknown>): string | null {
  if (["benchmark", "condition", "query"].some((key) => key in value)) return null;
  if ("hash" in value && "episode" in value && "type" in value) return "an episode log's record";
  if ("traceId" in value && "spanId" in value) return "a trace span";
  if ("episodeMetrics" in value || "outcomes" in value || "cells" in value || "conditions" in value) return "a summary JSON (of a sweep or an eval)";
  return "an object with none of a results row's benchmark, condition and query";
}

/**
 * Parses a results JSONL text (blank lines allowed). Throws `ResultsInvalid` listing every bad
 * line (up to 50) with its field, and duplicate cells with the line that had them first.
 */
export function parseResults(text: string, file: string): ResultRow[] {
  const rows: ResultRow[] = [];
  const problems: ResultsProblem[] = [];
  const seen = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && problems.length < MAX_PROBLEMS; i++) {
    const raw = lines[i]!.trim();
    if (raw.length === 0) continue;
    const line = i + 1;
    let value: unknown;
    const firstLine = rows.length === 0 && problems.length === 0;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      if (firstLine && wholeJson(text)) {
        problems.push({ line: null, field: null, reason: `one JSON document (a summary of a sweep or an eval, written with --json or --out?), not results rows, one JSON object a line: give ${RESULTS_FILES}` });
        break;
      }
      problems.push({ line, field: null, reason: `not valid JSON (${messageOf(error)})` });
      continue;
    }
    const shape = inputShapeProblem(value);
    if (shape !== null) {
      problems.push({ line, field: shape.at, reason: inputShapeWording(shape) });
      continue;
    }
    const kind = firstLine && value !== null && typeof value === "object" && !Array.isArray(value) ? otherKind(value as Record<string, unknown>) : null;
    if (kind !== null) {
      problems.push({ line, field: null, reason: `${kind}, not a results row: give ${RESULTS_FILES}` });
      break;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      problems.push({ line, field: null, reason: `expected a JSON object (one row per line), ${shown(value)}` });
      continue;
    }
    const bad = rowProblems(value, line);
    if (bad.length > 0) {
      problems.push(...bad);
      continue;
    }
    const row = value as ResultRow;
    const key = cellKey(row);
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({ line, field: null, reason: `duplicate cell (benchmark ${row.benchmark}, condition ${row.condition}, backend ${row.backend}, query ${row.query}, seed ${row.seed}): first at line ${first}` });
      continue;
    }
    seen.set(key, line);
    rows.push(row);
  }
  if (problems.length === 0 && rows.length === 0) problems.push({ line: null, field: null, reason: "no result rows (the file is empty)" });
  if (problems.length > 0) throw new ResultsInvalid({ file, problems });
  return rows;
}

const wholeJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Reads and parses a results file; an unreadable file is a `ResultsInvalid` naming it. */
export function loadResults(file: string): ResultRow[] {
  let text: string;
  try {
    text = readInputFile(file, "results");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "EISDIR" ? `a directory, not a results file: give ${RESULTS_FILES}` : `cannot read (${code ?? messageOf(error)})`;
    throw new ResultsInvalid({ file, problems: [{ line: null, field: null, reason }] });
  }
  return parseResults(text, file);
}

/** One validated JSONL line (with its newline) for a row; throws naming the fields that are wrong. */
export function resultLine(row: ResultRow): string {
  const problems = rowProblems(row);
  if (problems.length > 0) throw new ResultsInvalid({ file: "(result row)", problems });
  return `${JSON.stringify(row)}\n`;
}

/**
 * Writes an eval's results file whole, once every row is known (beside it, then renamed over it).
 * It was emptied when the eval started, so an eval refused part-way (a cell holding another
 * episode) or stopped (Ctrl-C) left the previous run's complete results empty.
 */
export function writeResults(file: string, lines: readonly string[]): void {
  writeFileSync(`${file}.partial`, lines.join(""));
  renameSync(`${file}.partial`, file);
}
