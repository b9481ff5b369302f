// The experiment report: results rows (services/analysis/results.ts) → an analysis (plain data, also written
// as report.json) → markdown with tables and SVG charts. Everything is a pure function of the
// rows and options — no clock, no file names chosen at random, a seeded bootstrap — so
// regenerating a report from the same rows gives the same bytes, and a report never needs the
// episodes to be run again.
//
// Statistical unit. Seeds of one query share that query's difficulty (with deterministic
// backends they are often identical), so cells are not independent. Confidence intervals and the
// primary paired test therefore use per-query means (seeds averaged within a query, n = queries),
// the bootstrap resamples queries with all their seeds, and the cell-level t (n = query × seed,
// what the reference release's runners report) is shown only for comparison. Pairs are matched on
// (query, seed): a condition's cell is compared with the reference's cell for the same query and
// seed, i.e. the same snapshot.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { loadResults, type ResultRow } from "./results.ts";
import { groupedBarChart, paretoChart } from "./reportCharts.ts";
import { MAX_BOOTSTRAP_ITERATIONS, METRICS, type Metric } from "./reportMetrics.ts";
import { bonferroni, clusteredBootstrapMean, holm, mcnemar, mean, meanCi, oneSampleTTest, wilcoxonSignedRank, type Bootstrap, type McNemar, type TTest, type Wilcoxon } from "./stats.ts";

export { METRICS, type Metric };

export const METRIC_LABEL: Record<Metric, string> = {
  implicit: "implicit coverage",
  literal: "literal coverage",
  correct: "rule-judge share fully correct",
  accuracy: "rule-judge accuracy",
  recall: "gold-tool recall",
  "llm-implicit": "LLM judge implicit score",
  "llm-literal": "LLM judge literal score",
  "llm-accuracy": "LLM judge accuracy",
};

export function metricValue(row: ResultRow, metric: Metric): number | null {
  switch (metric) {
    case "implicit":
      return row.implicitCoverage;
    case "literal":
      return row.literalCoverage;
    case "correct":
      return row.correct === null ? null : row.correct ? 1 : 0;
    case "accuracy":
      return row.accuracy ?? null;
    case "recall":
      return row.goldToolRecall;
    case "llm-implicit":
      return row.llmImplicit ?? null;
    case "llm-literal":
      return row.llmLiteral ?? null;
    case "llm-accuracy":
      return row.llmAccuracy ?? null;
  }
}

/** An option the rows cannot satisfy (unknown reference, bad metric); names the flag. */
export class ReportOptionInvalid extends TaggedError {
  readonly _tag = "ReportOptionInvalid";
  readonly flag: string;
  readonly reason: string;
  constructor(fields: { readonly flag: string; readonly reason: string }) {
    super(`${fields.flag}: ${fields.reason}`);
    this.flag = fields.flag;
    this.reason = fields.reason;
  }
  get exitCode(): 2 {
    return ExitCode.usage;
  }
}

export interface ReportOptions {
  /**
   * The condition every other is compared with (a condition name, or an arm label "condition
   * (backend)"); default: the first in the rows. Several names (one per benchmark, for a file
   * with several): each benchmark uses the first of them it has.
   */
  readonly reference?: string | readonly string[];
  /** the metric of the comparisons, blocks and charts; default per benchmark: implicit, else accuracy, else correct, else literal, else recall */
  readonly metric?: Metric;
  readonly level?: number;
  readonly bootstrapIterations?: number;
  readonly bootstrapSeed?: number;
  readonly title?: string;
  /** shown in the header; `writeReport` fills it with the rows file and its sha256 */
  readonly source?: { readonly file: string; readonly sha256: string };
}

export interface Estimate {
  readonly mean: number;
  readonly ci: readonly [number, number];
  /** queries with a value */
  readonly n: number;
}

export interface ArmSummary {
  /** the condition, or "condition (backend)" when one condition ran on several backends */
  readonly arm: string;
  readonly condition: string;
  readonly backend: string;
  /** deterministic, or LLM when a model served any stage of the arm's answers (its backend label names one) */
  readonly resultKind: "deterministic" | "LLM";
  readonly cells: number;
  readonly queries: number;
  readonly seeds: readonly number[];
  readonly metrics: Partial<Record<Metric, Estimate>>;
  readonly probesPerQuery: number;
  readonly disclosurePerQuery: number;
  /**
   * Private items stated or read beyond each query's need, per cell (rows with `disclosedBeyondNeed`;
   * null when the rows have none), and the answer-level and probe-level parts.
   */
  readonly disclosedBeyondNeed: number | null;
  readonly disclosedBeyondNeedAnswer: number | null;
  readonly disclosedBeyondNeedProbes: number | null;
  readonly violations: number;
  readonly cellsWithViolations: number;
  /** model calls that fell back to a deterministic backend (rows with a `fallbacks` count) */
  readonly fallbacks: number;
  /** cells whose LLM judge gave no score (rows with `llmJudgeError`) */
  readonly judgeFailures: number;
}

export interface BlockCell {
  readonly mean: number | null;
  readonly probesPerQuery: number;
  readonly violations: number;
  readonly cells: number;
}

/** Per-subcategory or per-scene means of the report's metric, one column per arm. */
export interface Block {
  readonly by: "subcategory" | "scene";
  readonly keys: readonly string[];
  /** cells[key][arm] */
  readonly cells: Readonly<Record<string, Readonly<Record<string, BlockCell>>>>;
}

export interface Comparison {
  readonly arm: string;
  readonly reference: string;
  /** (query, seed) cells present with a value in both */
  readonly pairs: number;
  readonly queries: number;
  /** cells of either side without a partner (left out) */
  readonly unpaired: number;
  /** primary: paired t over per-query mean differences */
  readonly queryT: TTest;
  /** naive: paired t over cells, seeds counted as independent */
  readonly cellT: TTest;
  /** over per-query mean differences */
  readonly wilcoxon: Wilcoxon;
  /** mean cell difference, queries resampled with all their seeds */
  readonly bootstrap: Bootstrap;
  /** binary metrics only, over cells */
  readonly mcnemar?: McNemar;
  /** adjusted primary p across this benchmark's comparisons */
  readonly pHolm: number;
  readonly pBonferroni: number;
}

export interface ParetoEntry {
  readonly arm: string;
  readonly probesPerQuery: number;
  readonly score: number;
  readonly ci: readonly [number, number];
  readonly front: boolean;
}

/**
 * Score against private items beyond the need per query, on each side: stated in the answer (what
 * the user is told: the cost Fixed-private pays, stating all it reads) and read by the probes.
 */
export interface DisclosureParetoEntry {
  readonly arm: string;
  readonly answer: number;
  readonly probes: number;
  readonly score: number;
  readonly ci: readonly [number, number];
  /** on the front of score against the answer-level figure, and against the probe-level one */
  readonly frontAnswer: boolean;
  readonly frontProbes: boolean;
}

export interface BenchmarkAnalysis {
  readonly benchmark: string;
  readonly rows: number;
  readonly queries: number;
  readonly seeds: readonly number[];
  readonly metric: Metric | null;
  readonly reference: string | null;
  readonly notes: readonly string[];
  /** Why there are no comparisons when a reason is known (a metric the rows lack, a missing reference). */
  readonly noComparisons: string | null;
  readonly arms: readonly ArmSummary[];
  readonly bySubcategory: Block | null;
  readonly byScene: Block | null;
  readonly comparisons: readonly Comparison[];
  readonly pareto: readonly ParetoEntry[];
  /** The same scores against disclosure beyond the need (empty when the rows do not carry it). */
  readonly paretoDisclosure: readonly DisclosureParetoEntry[];
}

export interface Analysis {
  readonly version: 1;
  readonly title: string;
  readonly source: { readonly file: string; readonly sha256: string } | null;
  readonly level: number;
  readonly bootstrap: { readonly iterations: number; readonly seed: number };
  readonly rows: number;
  readonly benchmarks: readonly BenchmarkAnalysis[];
}

const qkey = (r: ResultRow): string => String(r.query);
const distinct = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];
const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Query ids in natural order (101 before 1001; "q2" before "q10"). */
const byQuery = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true });

/** Arms in order of first appearance (the experiment spec's condition order). */
function armsOf(rows: readonly ResultRow[]): { label: (r: ResultRow) => string; arms: Array<{ arm: string; condition: string; backend: string }> } {
  const backends = new Map<string, Set<string>>();
  for (const r of rows) (backends.get(r.condition) ?? backends.set(r.condition, new Set()).get(r.condition)!).add(r.backend);
  const label = (r: ResultRow) => (backends.get(r.condition)!.size > 1 ? `${r.condition} (${r.backend})` : r.condition);
  const arms = new Map<string, { arm: string; condition: string; backend: string }>();
  for (const r of rows) if (!arms.has(label(r))) arms.set(label(r), { arm: label(r), condition: r.condition, backend: r.backend });
  return { label, arms: [...arms.values()] };
}

/** Mean over queries of per-query means (seeds averaged first), with a t interval over queries. */
function perQueryEstimate(rows: readonly ResultRow[], value: (r: ResultRow) => number | null, level: number): Estimate | null {
  const perQuery = new Map<string, number[]>();
  for (const r of rows) {
    const v = value(r);
    if (v !== null) (perQuery.get(qkey(r)) ?? perQuery.set(qkey(r), []).get(qkey(r))!).push(v);
  }
  if (perQuery.size === 0) return null;
  const keys = [...perQuery.keys()].sort(byQuery);
  const { mean: m, ci } = meanCi(keys.map((k) => mean(perQuery.get(k)!)), level);
  return { mean: m, ci, n: keys.length };
}

function defaultMetric(rows: readonly ResultRow[]): Metric | null {
  for (const m of ["implicit", "accuracy", "correct", "literal", "recall", "llm-implicit", "llm-accuracy", "llm-literal"] as const) if (rows.some((r) => metricValue(r, m) !== null)) return m;
  return null;
}

function block(by: "subcategory" | "scene", rows: readonly ResultRow[], label: (r: ResultRow) => string, arms: readonly string[], metric: Metric | null): Block | null {
  const keyOf = (r: ResultRow) => (by === "scene" ? r.scene : r.subcategory);
  const keys = distinct(rows.map(keyOf).filter((k): k is string => k !== null && k !== ""));
  if (keys.length === 0) return null;
  // Subcategories keep the benchmark's order (first appearance); scenes sort by name.
  if (by === "scene") keys.sort(byString);
  const cells: Record<string, Record<string, BlockCell>> = {};
  for (const key of keys) {
    cells[key] = {};
    for (const arm of arms) {
      const these = rows.filter((r) => keyOf(r) === key && label(r) === arm);
      const values = metric === null ? [] : these.map((r) => metricValue(r, metric)).filter((v): v is number => v !== null);
      cells[key][arm] = {
        mean: values.length === 0 ? null : mean(values),
        probesPerQuery: these.length === 0 ? NaN : mean(these.map((r) => r.probes)),
        violations: these.reduce((s, r) => s + r.forbiddenViolations, 0),
        cells: these.length,
      };
    }
  }
  return { by, keys, cells };
}

/** Points on the Pareto front: no other arm has ≤ cost (probes, disclosure) and ≥ score with one strictly better. */
export function paretoFront(points: ReadonlyArray<{ x: number; y: number }>): boolean[] {
  return points.map((p) => !points.some((q) => q !== p && q.x <= p.x && q.y >= p.y && (q.x < p.x || q.y > p.y)));
}

function compare(rows: readonly ResultRow[], label: (r: ResultRow) => string, arm: string, reference: string, metric: Metric, options: { level: number; iterations: number; seed: number; benchmark: string }): Omit<Comparison, "pHolm" | "pBonferroni"> {
  const cellsOf = (a: string) => {
    const m = new Map<string, { query: string; value: number }>();
    for (const r of rows) {
      const v = metricValue(r, metric);
      if (label(r) === a && v !== null) m.set(JSON.stringify([qkey(r), r.seed]), { query: qkey(r), value: v });
    }
    return m;
  };
  const mine = cellsOf(arm);
  const ref = cellsOf(reference);
  const keys = [...mine.keys()].filter((k) => ref.has(k)).sort(byString);
  const unpaired = mine.size + ref.size - 2 * keys.length;
  const diffs = keys.map((k) => ({ cluster: mine.get(k)!.query, value: mine.get(k)!.value - ref.get(k)!.value }));
  const byQ = new Map<string, number[]>();
  for (const d of diffs) (byQ.get(d.cluster) ?? byQ.set(d.cluster, []).get(d.cluster)!).push(d.value);
  const queryDiffs = [...byQ.keys()].sort(byQuery).map((q) => mean(byQ.get(q)!));
  const result = {
    arm,
    reference,
    pairs: keys.length,
    queries: byQ.size,
    unpaired,
    queryT: oneSampleTTest(queryDiffs, options.level),
    cellT: oneSampleTTest(diffs.map((d) => d.value), options.level),
    wilcoxon: wilcoxonSignedRank(queryDiffs),
    bootstrap: clusteredBootstrapMean(diffs, { iterations: options.iterations, seed: options.seed, level: options.level, name: `${options.benchmark}/${metric}/${arm} vs ${reference}` }),
  };
  if (metric !== "correct") return result;
  return { ...result, mcnemar: mcnemar(keys.map((k) => mine.get(k)!.value === 1), keys.map((k) => ref.get(k)!.value === 1)) };
}

const referencesOf = (r: ReportOptions["reference"]): readonly string[] => (r === undefined ? [] : typeof r === "string" ? [r] : r);

function resolveReference(requested: readonly string[], arms: ReadonlyArray<{ arm: string; condition: string }>): string | { missing: string } {
  if (requested.length === 0) return arms[0]!.arm;
  for (const name of requested) {
    const exact = arms.find((a) => a.arm === name);
    if (exact !== undefined) return exact.arm;
    const byCondition = arms.filter((a) => a.condition === name);
    if (byCondition.length === 1) return byCondition[0]!.arm;
    if (byCondition.length > 1) throw new ReportOptionInvalid({ flag: "--reference", reason: `condition '${name}' ran on several backends; name one of ${byCondition.map((a) => `'${a.arm}'`).join(", ")}` });
  }
  return { missing: requested.join("', '") };
}

function analyzeBenchmark(benchmark: string, rows: readonly ResultRow[], options: ReportOptions, level: number, iterations: number, seed: number): BenchmarkAnalysis {
  const notes: string[] = [];
  const { label, arms } = armsOf(rows);
  const armNames = arms.map((a) => a.arm);
  const metric = options.metric ?? defaultMetric(rows);
  const hasMetric = metric !== null && rows.some((r) => metricValue(r, metric) !== null);
  let noComparisons: string | null = null;
  if (metric !== null && !hasMetric) {
    noComparisons = `no ${METRIC_LABEL[metric]} values in this benchmark`;
    notes.push(`${noComparisons}: no comparisons or charts`);
  }

  const summaries: ArmSummary[] = arms.map(({ arm, condition, backend }) => {
    const these = rows.filter((r) => label(r) === arm);
    const metrics: Partial<Record<Metric, Estimate>> = {};
    for (const m of METRICS) {
      const e = perQueryEstimate(these, (r) => metricValue(r, m), level);
      if (e !== null) metrics[m] = e;
    }
    return {
      arm,
      condition,
      backend,
      resultKind: these.some((r) => r.resultKind === "LLM" || /(^|[ =,])llm:/.test(r.backend)) ? "LLM" : "deterministic",
      cells: these.length,
      queries: distinct(these.map(qkey)).length,
      seeds: distinct(these.map((r) => r.seed)).sort((a, b) => a - b),
      metrics,
      probesPerQuery: mean(these.map((r) => r.probes)),
      disclosurePerQuery: mean(these.map((r) => r.disclosure)),
      ...beyondNeed(these),
      violations: these.reduce((s, r) => s + r.forbiddenViolations, 0),
      cellsWithViolations: these.filter((r) => r.forbiddenViolations > 0).length,
      fallbacks: these.reduce((s, r) => s + (r.fallbacks ?? 0), 0),
      judgeFailures: these.filter((r) => r.llmJudgeError !== undefined).length,
    };
  });

  let reference: string | null = null;
  let comparisons: Comparison[] = [];
  const resolved = resolveReference(referencesOf(options.reference), arms);
  if (typeof resolved !== "string") {
    noComparisons ??= `reference '${resolved.missing}' is not in this benchmark`;
    notes.push(`reference '${resolved.missing}' is not in this benchmark: no paired comparisons`);
  }
  else reference = resolved;
  if (reference !== null && hasMetric && arms.length > 1) {
    const raw = armNames.filter((a) => a !== reference).map((a) => compare(rows, label, a, reference!, metric!, { level, iterations, seed, benchmark }));
    const primary = raw.map((c) => c.queryT.p);
    const h = holm(primary);
    const b = bonferroni(primary);
    comparisons = raw.map((c, i) => ({ ...c, pHolm: h[i]!, pBonferroni: b[i]! }));
    for (const c of comparisons) if (c.unpaired > 0) notes.push(`${c.arm} vs ${c.reference}: ${c.unpaired} cell(s) without a partner on (query, seed) were left out`);
  }

  const pareto: ParetoEntry[] = [];
  if (hasMetric) {
    const pts = summaries.filter((s) => s.metrics[metric!] !== undefined).map((s) => ({ arm: s.arm, x: s.probesPerQuery, y: s.metrics[metric!]!.mean, ci: s.metrics[metric!]!.ci }));
    const front = paretoFront(pts);
    pts.forEach((p, i) => pareto.push({ arm: p.arm, probesPerQuery: p.x, score: p.y, ci: p.ci, front: front[i]! }));
  }
  const paretoDisclosure: DisclosureParetoEntry[] = [];
  if (hasMetric) {
    const pts = summaries.filter((s) => s.metrics[metric!] !== undefined && s.disclosedBeyondNeedAnswer !== null && s.disclosedBeyondNeedProbes !== null).map((s) => ({ arm: s.arm, answer: s.disclosedBeyondNeedAnswer!, probes: s.disclosedBeyondNeedProbes!, y: s.metrics[metric!]!.mean, ci: s.metrics[metric!]!.ci }));
    const frontAnswer = paretoFront(pts.map((p) => ({ x: p.answer, y: p.y })));
    const frontProbes = paretoFront(pts.map((p) => ({ x: p.probes, y: p.y })));
    pts.forEach((p, i) => paretoDisclosure.push({ arm: p.arm, answer: p.answer, probes: p.probes, score: p.y, ci: p.ci, frontAnswer: frontAnswer[i]!, frontProbes: frontProbes[i]! }));
  }

  return {
    benchmark,
    rows: rows.length,
    queries: distinct(rows.map(qkey)).length,
    seeds: distinct(rows.map((r) => r.seed)).sort((a, b) => a - b),
    metric: hasMetric ? metric : null,
    reference,
    notes,
    noComparisons,
    arms: summaries,
    bySubcategory: block("subcategory", rows, label, armNames, hasMetric ? metric : null),
    byScene: block("scene", rows, label, armNames, hasMetric ? metric : null),
    comparisons,
    pareto,
    paretoDisclosure,
  };
}

/** The disclosure-beyond-need means of an arm's rows (services/aura/benchmarks/judge.ts), null when they carry none. */
function beyondNeed(rows: readonly ResultRow[]): Pick<ArmSummary, "disclosedBeyondNeed" | "disclosedBeyondNeedAnswer" | "disclosedBeyondNeedProbes"> {
  const m = (pick: (r: ResultRow) => number | undefined) => {
    const xs = rows.map(pick).filter((x): x is number => x !== undefined);
    return xs.length === 0 ? null : mean(xs);
  };
  return { disclosedBeyondNeed: m((r) => r.disclosedBeyondNeed), disclosedBeyondNeedAnswer: m((r) => r.disclosedBeyondNeedAnswer), disclosedBeyondNeedProbes: m((r) => r.disclosedBeyondNeedProbes) };
}

/** The whole analysis as data: what the markdown and charts are drawn from. */
export function analyze(rows: readonly ResultRow[], options: ReportOptions = {}): Analysis {
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new ReportOptionInvalid({ flag: "--level", reason: `expected a confidence level between 0 and 1, got ${level}` });
  if (options.metric !== undefined && !METRICS.includes(options.metric)) throw new ReportOptionInvalid({ flag: "--metric", reason: `unknown metric '${options.metric}' (known: ${METRICS.join(", ")})` });
  const iterations = options.bootstrapIterations ?? 5000;
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_BOOTSTRAP_ITERATIONS) {
    throw new ReportOptionInvalid({ flag: "--bootstrap", reason: `expected an integer from 1 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")} (resamples per comparison), got ${iterations}` });
  }
  const seed = options.bootstrapSeed ?? 0;
  const benchmarks = distinct(rows.map((r) => r.benchmark)).sort(byString);
  const analyses = benchmarks.map((b) => analyzeBenchmark(b, rows.filter((r) => r.benchmark === b), options, level, iterations, seed));
  // A metric no row has is a usage error, as an unknown reference is (one benchmark of several
  // lacking it is only noted in that benchmark's section).
  const metric = options.metric;
  if (metric !== undefined && !rows.some((r) => metricValue(r, metric) !== null)) {
    const present = METRICS.filter((m) => rows.some((r) => metricValue(r, m) !== null));
    throw new ReportOptionInvalid({ flag: "--metric", reason: `no row has ${METRIC_LABEL[metric]} values (${benchmarks.join(", ")}; metrics present: ${present.join(", ") || "none"})` });
  }
  const requested = referencesOf(options.reference);
  if (requested.length > 0 && analyses.every((a) => a.reference === null)) {
    const known = distinct(rows.map((r) => r.condition));
    throw new ReportOptionInvalid({ flag: "--reference", reason: `no condition '${requested.join("' or '")}' in the rows (known: ${known.join(", ")})` });
  }
  return { version: 1, title: options.title ?? "Experiment report", source: options.source ?? null, level, bootstrap: { iterations, seed }, rows: rows.length, benchmarks: analyses };
}

// ---- markdown ----------------------------------------------------------------------------------

const cellText = (s: string): string => s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\n/g, " ");
const num = (x: number, digits = 3): string => (Number.isFinite(x) ? x.toFixed(digits) : x === Infinity ? "∞" : x === -Infinity ? "−∞" : "—");
const signed = (x: number, digits = 3): string => (Number.isFinite(x) && x > 0 ? `+${x.toFixed(digits)}` : num(x, digits));
export function formatP(p: number): string {
  if (Number.isNaN(p)) return "—";
  if (p === 0) return "0";
  if (p < 0.001) return p.toExponential(1);
  return p.toFixed(3);
}
const interval = (ci: readonly [number, number], digits = 3): string => (Number.isFinite(ci[0]) && Number.isFinite(ci[1]) ? `[${signed(ci[0], digits)}, ${signed(ci[1], digits)}]` : "—");
const estimate = (e: Estimate | undefined): string => {
  if (e === undefined) return "—";
  const half = (e.ci[1] - e.ci[0]) / 2;
  return Number.isFinite(half) ? `${num(e.mean)} ± ${num(half)}` : num(e.mean);
};

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, align?: readonly ("l" | "r")[]): string[] {
  const sep = header.map((_, i) => ((align?.[i] ?? (i === 0 ? "l" : "r")) === "r" ? "---:" : "---"));
  return [`| ${header.map(cellText).join(" | ")} |`, `| ${sep.join(" | ")} |`, ...rows.map((r) => `| ${r.map(cellText).join(" | ")} |`)];
}

/** File names of a benchmark's charts (relative to the report). */
export const chartFiles = (benchmark: string) => {
  const slug = benchmark.replace(/[^A-Za-z0-9_-]+/g, "-");
  return { pareto: `pareto-${slug}.svg`, paretoDisclosure: `pareto-disclosure-${slug}.svg`, paretoReads: `pareto-reads-${slug}.svg`, subcategories: `subcategories-${slug}.svg` };
};

function renderBlock(b: Block, arms: readonly string[], metric: Metric): string[] {
  const title = b.by === "subcategory" ? "By subcategory" : "By scene";
  const out = [`### ${title}`, "", `${METRIC_LABEL[metric]}, mean over cells (probes per query in parentheses; ⚠ n = forbidden-tool violations).`, ""];
  const rows = b.keys.map((k) => [
    k,
    ...arms.map((a) => {
      const c = b.cells[k]![a]!;
      if (c.cells === 0) return "—";
      const v = c.violations > 0 ? ` ⚠ ${c.violations}` : "";
      return `${c.mean === null ? "—" : num(c.mean)} (${num(c.probesPerQuery, 2)})${v}`;
    }),
  ]);
  return [...out, ...table([b.by, ...arms], rows), ""];
}

function renderBenchmark(a: BenchmarkAnalysis, level: number, iterations: number): string[] {
  const pct = `${Math.round(level * 100)}%`;
  const out: string[] = [];
  out.push(`## Benchmark \`${a.benchmark}\``, "");
  out.push(`${a.rows} cells · ${a.queries} queries · seeds ${a.seeds.join(", ")} · ${a.arms.length} conditions${a.metric === null ? "" : ` · metric: ${METRIC_LABEL[a.metric]}`}${a.reference === null ? "" : ` · reference: ${a.reference}`}`, "");
  for (const n of a.notes) out.push(`> note: ${n}`, "");

  out.push("### Conditions", "");
  out.push(`Scores: mean over queries of per-query means (seeds averaged within a query) ± half-width of the ${pct} t interval over queries. Probes and disclosure: mean per query × seed cell.`, "");
  const shown = METRICS.filter((m) => a.arms.some((s) => s.metrics[m] !== undefined)).sort((x, y) => (x === a.metric ? -1 : y === a.metric ? 1 : 0));
  // Fallbacks (model calls answered by the deterministic backend) and LLM-judge failures only when there are any.
  const withFallbacks = a.arms.some((s) => s.fallbacks > 0);
  const withJudgeFailures = a.arms.some((s) => s.judgeFailures > 0);
  const withBeyond = a.arms.some((s) => s.disclosedBeyondNeed !== null);
  const beyondCells = (s: ArmSummary) => (s.disclosedBeyondNeed === null ? ["—"] : [`${num(s.disclosedBeyondNeed, 2)} (${num(s.disclosedBeyondNeedAnswer ?? 0, 2)} / ${num(s.disclosedBeyondNeedProbes ?? 0, 2)})`]);
  out.push(
    ...table(
      ["condition", "result", "backend", "cells", "queries", ...shown.map((m) => METRIC_LABEL[m]), "probes/query", "disclosure/query", ...(withBeyond ? ["beyond need/query (answer / probes)"] : []), "violations", "cells with violations", ...(withFallbacks ? ["fallbacks"] : []), ...(withJudgeFailures ? ["judge failures"] : [])],
      a.arms.map((s) => [s.arm, s.resultKind, s.backend, String(s.cells), String(s.queries), ...shown.map((m) => estimate(s.metrics[m])), num(s.probesPerQuery, 2), num(s.disclosurePerQuery, 2), ...(withBeyond ? beyondCells(s) : []), String(s.violations), `${s.cellsWithViolations}/${s.cells}`, ...(withFallbacks ? [String(s.fallbacks)] : []), ...(withJudgeFailures ? [`${s.judgeFailures}/${s.cells}`] : [])]),
      ["l", "l", "l"],
    ),
    "",
  );
  out.push("result: deterministic when every stage of the answers ran on a deterministic backend, LLM when a model served any (its backend column names it).", "");
  if (withBeyond) out.push("beyond need: distinct private items (state fields, beliefs) the answer stated or the probes read that the query's need (literal_requires + implicit_requires) did not include, per query × seed cell; in parentheses the answer-level and the probe-level counts.", "");
  if (withFallbacks) out.push("fallbacks: model calls of the condition's queries that failed and were answered by the deterministic backend (the row keeps its configured backend).", "");
  if (withJudgeFailures) out.push("judge failures: cells the LLM judge could not score (invalid output after the repair attempt, or an HTTP error); they are left out of its means, never scored.", "");

  const armNames = a.arms.map((s) => s.arm);
  if (a.metric !== null && a.bySubcategory !== null) out.push(...renderBlock(a.bySubcategory, armNames, a.metric));
  if (a.metric !== null && a.byScene !== null) out.push(...renderBlock(a.byScene, armNames, a.metric));

  if (a.comparisons.length > 0 && a.metric !== null) {
    out.push(`### Paired comparisons: ${METRIC_LABEL[a.metric]}, each condition − ${a.reference}`, "");
    out.push(
      `Pairs are matched on (query, seed). Δ and its ${pct} CI come from the paired t-test over per-query mean differences (primary, n = queries; p adjusted by Holm and by Bonferroni over the ${a.comparisons.length} comparison${a.comparisons.length === 1 ? "" : "s"} below). ` +
        `The cell-level t (n = query × seed cells, seeds treated as independent) is shown for comparison only. Wilcoxon signed-rank runs on the per-query differences (exact without ties or zeros, else normal approximation with tie and continuity correction). ` +
        `The bootstrap resamples queries with all their seeds (${iterations} resamples, percentile interval, seeded).` +
        (a.metric === "correct" ? " McNemar runs on cells (exact binomial when there are ≤ 25 discordant cells, else χ² with continuity correction); b/c = cells where only the condition / only the reference was correct." : ""),
      "",
    );
    const header = ["condition", "pairs", "queries", "Δ", `${pct} CI (t)`, "t (df)", "p", "p Holm", "p Bonferroni", "p cells (naive)", "Wilcoxon p", `bootstrap ${pct} CI`];
    if (a.metric === "correct") header.push("McNemar p (b/c)");
    const rows = a.comparisons.map((c) => {
      const row = [
        c.arm,
        String(c.pairs),
        String(c.queries),
        signed(c.queryT.meanDiff),
        interval(c.queryT.ci),
        `${num(c.queryT.t, 2)} (${Math.max(0, c.queryT.df)})`,
        formatP(c.queryT.p),
        formatP(c.pHolm),
        formatP(c.pBonferroni),
        formatP(c.cellT.p),
        `${formatP(c.wilcoxon.p)} (${c.wilcoxon.method})`,
        interval(c.bootstrap.ci),
      ];
      if (c.mcnemar !== undefined) row.push(`${formatP(c.mcnemar.p)} (${c.mcnemar.b}/${c.mcnemar.c}, ${c.mcnemar.method})`);
      return row;
    });
    out.push(...table(header, rows), "");
    const degenerate = a.comparisons.filter((c) => c.queryT.note !== undefined);
    for (const c of degenerate) out.push(`> note: ${c.arm}: ${c.queryT.note}`, "");
  }

  if (a.pareto.length > 0 && a.metric !== null) {
    const files = chartFiles(a.benchmark);
    const front = a.pareto.filter((p) => p.front).sort((x, y) => x.probesPerQuery - y.probesPerQuery);
    out.push("### Charts", "");
    out.push(`Pareto front (${METRIC_LABEL[a.metric]} against probes per query): ${front.map((p) => `${p.arm} (${num(p.score)} at ${num(p.probesPerQuery, 2)})`).join(", ")}.`, "");
    out.push(`![${METRIC_LABEL[a.metric]} against probes per query](${files.pareto})`, "");
    if (a.paretoDisclosure.length > 0) {
      for (const side of ["answer", "probes"] as const) {
        const dfront = a.paretoDisclosure.filter((p) => (side === "answer" ? p.frontAnswer : p.frontProbes)).sort((x, y) => x[side] - y[side]);
        const what = side === "answer" ? "private items stated beyond the need" : "private items read beyond the need";
        out.push(`Pareto front (${METRIC_LABEL[a.metric]} against ${what} per query): ${dfront.map((p) => `${p.arm} (${num(p.score)} at ${num(p[side], 2)})`).join(", ")}.`, "");
        out.push(`![${METRIC_LABEL[a.metric]} against ${what}](${side === "answer" ? files.paretoDisclosure : files.paretoReads})`, "");
      }
    }
    if (a.bySubcategory !== null) out.push(`![${METRIC_LABEL[a.metric]} by subcategory](${files.subcategories})`, "");
  }
  return out;
}

export function renderMarkdown(analysis: Analysis): string {
  const out = [`# ${analysis.title}`, ""];
  const src = analysis.source === null ? "" : `Rows: \`${analysis.source.file}\` (sha256 ${analysis.source.sha256.slice(0, 16)}…, ${analysis.rows} rows). `;
  out.push(`${src}Generated from results rows only (no episode is rerun); the same rows give the same report. Each row's \`log\` names the episode it was judged from.`, "");
  for (const b of analysis.benchmarks) out.push(...renderBenchmark(b, analysis.level, analysis.bootstrap.iterations));
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd() + "\n";
}

export interface Chart {
  readonly file: string;
  readonly title: string;
  readonly svg: string;
}

export function renderCharts(analysis: Analysis): Chart[] {
  const charts: Chart[] = [];
  for (const b of analysis.benchmarks) {
    if (b.metric === null || b.pareto.length === 0) continue;
    const files = chartFiles(b.benchmark);
    const label = METRIC_LABEL[b.metric];
    const title = `${b.benchmark}: ${label} against probes per query`;
    charts.push({
      file: files.pareto,
      title,
      svg: paretoChart({ title, xLabel: "probes per query", xUnit: "probes/query", yLabel: label, points: b.pareto.map((p) => ({ label: p.arm, x: p.probesPerQuery, y: p.score, yLo: p.ci[0], yHi: p.ci[1], front: p.front })) }),
    });
    if (b.paretoDisclosure.length > 0) {
      for (const side of ["answer", "probes"] as const) {
        const what = side === "answer" ? "stated" : "read";
        const t = `${b.benchmark}: ${label} against private items ${what} beyond the need`;
        charts.push({
          file: side === "answer" ? files.paretoDisclosure : files.paretoReads,
          title: t,
          svg: paretoChart({ title: t, xLabel: `private items ${what} beyond the need per query`, xUnit: `private items ${what} beyond the need/query`, yLabel: label, points: b.paretoDisclosure.map((p) => ({ label: p.arm, x: p[side], y: p.score, yLo: p.ci[0], yHi: p.ci[1], front: side === "answer" ? p.frontAnswer : p.frontProbes })) }),
        });
      }
    }
    const sub = b.bySubcategory;
    if (sub !== null) {
      const t = `${b.benchmark}: ${label} by subcategory`;
      charts.push({
        file: files.subcategories,
        title: t,
        svg: groupedBarChart({ title: t, yLabel: label, groups: sub.keys, series: b.arms.map((s) => ({ label: s.arm, values: sub.keys.map((k) => sub.cells[k]![s.arm]!.mean) })) }),
      });
    }
  }
  return charts;
}

export interface Report {
  readonly analysis: Analysis;
  readonly markdown: string;
  readonly charts: readonly Chart[];
}

/** The report as a pure function of the rows. */
export function renderReport(rows: readonly ResultRow[], options: ReportOptions = {}): Report {
  const analysis = analyze(rows, options);
  return { analysis, markdown: renderMarkdown(analysis), charts: renderCharts(analysis) };
}

export interface WrittenReport {
  readonly report: string;
  readonly json: string;
  readonly charts: readonly string[];
  readonly analysis: Analysis;
}

/**
 * Reads a results JSONL file and writes `report.md`, `report.json` (the analysis) and the SVG
 * charts into `outDir`. Throws `ResultsInvalid` (file, line, field) or `ReportOptionInvalid`.
 */
export function writeReport(rowsFile: string, outDir: string, options: ReportOptions = {}): WrittenReport {
  const rows = loadResults(rowsFile);
  const sha256 = createHash("sha256").update(readFileSync(rowsFile)).digest("hex");
  const { analysis, markdown, charts } = renderReport(rows, { ...options, source: options.source ?? { file: rowsFile, sha256 } });
  mkdirSync(outDir, { recursive: true });
  const report = join(outDir, "report.md");
  const json = join(outDir, "report.json");
  writeFileSync(report, markdown);
  writeFileSync(json, JSON.stringify(analysis, null, 2) + "\n");
  const written = charts.map((c) => {
    const file = join(outDir, c.file);
    writeFileSync(file, c.svg);
    return file;
  });
  return { report, json, charts: written, analysis };
}
