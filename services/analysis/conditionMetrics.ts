// A sweep's paired report for any world with metrics: each condition's mean of every metric, and
// each condition against the first, paired by seed (a paired t-test, Holm-adjusted over all of the
// sweep's comparisons). The world supplies the metrics (its module's `metrics`); nothing here
// knows what they mean.
import { holm, meanCi, pairedTTest } from "./stats.ts";

export interface ScoredEpisode {
  readonly condition: string;
  readonly seed: number;
  readonly metrics: Readonly<Record<string, number>>;
}

export interface ConditionMeans {
  readonly condition: string;
  readonly n: number;
  readonly metrics: Readonly<Record<string, { readonly mean: number; readonly ci: readonly [number, number] }>>;
}

export interface PairedComparison {
  readonly condition: string;
  readonly against: string;
  readonly metric: string;
  /** Seeds both conditions scored. */
  readonly n: number;
  /** Mean of (condition − against) over those seeds, with its 95% interval. */
  readonly meanDiff: number;
  readonly ci: readonly [number, number];
  readonly p: number;
  readonly pHolm: number;
}

export interface ConditionReport {
  readonly conditions: readonly ConditionMeans[];
  readonly comparisons: readonly PairedComparison[];
}

/** `conditions` in the sweep's order; the first is the one the others are compared with. */
export function conditionReport(episodes: readonly ScoredEpisode[], conditions: readonly string[]): ConditionReport {
  const names = [...new Set(episodes.flatMap((e) => Object.keys(e.metrics)))].sort();
  const of = (condition: string) => episodes.filter((e) => e.condition === condition);
  const means = conditions.map((condition): ConditionMeans => {
    const scored = of(condition);
    return {
      condition,
      n: scored.length,
      metrics: Object.fromEntries(names.flatMap((m) => {
        const xs = scored.map((e) => e.metrics[m]).filter((x): x is number => x !== undefined);
        if (xs.length === 0) return [];
        const { mean, ci } = meanCi(xs);
        return [[m, { mean, ci }]];
      })),
    };
  });
  const [against, ...others] = conditions;
  const raw: Omit<PairedComparison, "pHolm">[] = [];
  if (against !== undefined) {
    const base = new Map(of(against).map((e) => [e.seed, e.metrics]));
    for (const condition of others) {
      for (const metric of names) {
        const pairs = of(condition).flatMap((e) => {
          const a = e.metrics[metric];
          const b = base.get(e.seed)?.[metric];
          return a === undefined || b === undefined ? [] : [[a, b] as const];
        });
        if (pairs.length < 2) continue;
        const t = pairedTTest(pairs.map(([a]) => a), pairs.map(([, b]) => b));
        raw.push({ condition, against, metric, n: t.n, meanDiff: t.meanDiff, ci: t.ci, p: t.p });
      }
    }
  }
  const adjusted = holm(raw.map((c) => c.p));
  return { conditions: means, comparisons: raw.map((c, i) => ({ ...c, pHolm: adjusted[i]! })) };
}

const num = (x: number): string => (Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(3)) : "–");

/** The report as text: a line per condition, then a line per comparison. */
export function renderConditionReport(report: ConditionReport): string {
  const lines = ["per condition (mean [95% CI] over its episodes):"];
  for (const c of report.conditions) {
    const cells = Object.entries(c.metrics).map(([m, v]) => `${m} ${num(v.mean)} [${num(v.ci[0])}, ${num(v.ci[1])}]`);
    lines.push(`  ${c.condition} (n=${c.n}): ${cells.join(" · ") || "no metrics"}`);
  }
  if (report.comparisons.length > 0) {
    lines.push("paired by seed (condition − first condition; paired t, Holm-adjusted p):");
    for (const c of report.comparisons) lines.push(`  ${c.condition} − ${c.against}, ${c.metric}: ${num(c.meanDiff)} [${num(c.ci[0])}, ${num(c.ci[1])}] over ${c.n} seeds, p=${num(c.p)} (Holm ${num(c.pHolm)})`);
  }
  return lines.join("\n");
}
