// Statistics for paired experiments (DESIGN §6): paired t with a real Student-t distribution,
// Wilcoxon signed-rank, McNemar, a query-clustered bootstrap, and Bonferroni/Holm adjustment.
//
// The tests and distributions come from @stdlib (ports of R/SciPy/Cephes/Boost, each package
// tested against reference values) rather than hand-written code: a wrong p-value is the kind of
// bug nobody notices. The t-test is @stdlib/stats-ttest, the signed-rank test
// @stdlib/stats-wilcoxon, Holm and Bonferroni @stdlib/stats-padjust. What is left here is each
// result's contract: inputs every test accepts (fewer than two values, all differences equal or
// zero: defined results and a note, where @stdlib throws or divides by zero), p-values capped at 1
// and kept accurate in the far tail, and arithmetic that is easy to check by hand (percentile
// indices, the Wilson interval, the bootstrap).
//
// Against the hand-written versions these replaced (checked on 40,000 random samples), Holm,
// Bonferroni and the Wilcoxon normal approximation agree bit for bit; the rest to the last few
// bits: @stdlib sums the t-test's mean and variance pairwise with a correction term (more accurate
// than a running sum) and forms its interval as μ₀ + (t ± q)·se, and its exact signed-rank
// probabilities are the subset count times 2⁻ⁿ computed as exp(−n·ln 2) (so 6/8 comes out as
// 0.7500000000000002). The largest relative difference in a p-value was 6e-14 (t) and 4e-15
// (Wilcoxon, exact), in an interval bound 1e-14 of its se: nothing a report prints (3 decimals, or
// 2 significant digits below 0.001) moved; report.json's numbers can differ in their last digits.
//
// Everything is a pure function of its inputs; the bootstrap draws from a named RNG stream
// (actors/rng.ts), so the same rows, seed and comparison name give the same interval anywhere.
import normalCdf from "@stdlib/stats-base-dists-normal-cdf";
import binomialCdf from "@stdlib/stats-base-dists-binomial-cdf";
import padjust from "@stdlib/stats-padjust";
import ttest from "@stdlib/stats-ttest";
import wilcoxon from "@stdlib/stats-wilcoxon";
import { deriveStream, Draws } from "../../actors/rng.ts";
import { xoroshiro128plusFromState } from "pure-rand/generator/xoroshiro128plus";
import { InternalError } from "../../events/internalError.ts";

export const mean = (xs: readonly number[]): number => (xs.length === 0 ? NaN : xs.reduce((s, x) => s + x, 0) / xs.length);

/** Sample standard deviation (n − 1); NaN below two values. */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return NaN;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

export interface TTest {
  readonly n: number;
  readonly df: number;
  /** mean of the differences (a − b for a paired test) */
  readonly meanDiff: number;
  readonly sd: number;
  readonly se: number;
  readonly t: number;
  /** two-sided */
  readonly p: number;
  /** confidence interval of the mean difference, at `level` */
  readonly ci: readonly [number, number];
  readonly level: number;
  /**
   * Set when the test is not defined as usual: fewer than 2 values (t, p, CI are NaN), or every
   * difference equal (sd 0: t is ±∞ and p 0 when the mean is not 0, t 0 and p 1 when it is).
   */
  readonly note?: string;
}

/** One-sample t-test of `mean(d) = 0`, two-sided; the paired t-test is this on the differences. */
export function oneSampleTTest(d: readonly number[], level = 0.95): TTest {
  const n = d.length;
  const df = n - 1;
  const m = mean(d);
  if (n < 2) return { n, df, meanDiff: m, sd: NaN, se: NaN, t: NaN, p: NaN, ci: [NaN, NaN], level, note: `${n} value${n === 1 ? "" : "s"}: no test` };
  // Compare values, not sd: the mean of equal values can be off by an ulp, leaving sd ≈ 1e-17.
  if (d.every((x) => x === d[0])) {
    const sd = 0;
    const se = 0;
    const note = "all differences are equal (sd 0)";
    const v = d[0]!;
    return v === 0
      ? { n, df, meanDiff: 0, sd, se, t: 0, p: 1, ci: [0, 0], level, note }
      : { n, df, meanDiff: v, sd, se, t: v > 0 ? Infinity : -Infinity, p: 0, ci: [v, v], level, note };
  }
  // @stdlib's two-sided p is 2·P(T ≤ −|t|) (the lower tail: no cancellation for large |t|; capped
  // at 1 here, as every p this module returns, since Holm and Bonferroni refuse more), its interval
  // uses the t quantile at 1 − α/2 with α = 1 − level, and its `sd` is the standard error.
  const r = ttest([...d], { alpha: 1 - level });
  return { n, df, meanDiff: r.mean, sd: r.sd * Math.sqrt(n), se: r.sd, t: r.statistic, p: Math.min(1, r.pValue), ci: [r.ci[0]!, r.ci[1]!], level };
}

/** Paired t-test on `a[i] − b[i]`. */
export function pairedTTest(a: readonly number[], b: readonly number[], level = 0.95): TTest {
  if (a.length !== b.length) throw new InternalError(`pairedTTest: ${a.length} values against ${b.length}; pairs must line up`);
  return oneSampleTTest(a.map((x, i) => x - b[i]!), level);
}

/** Mean with a t confidence interval (NaN bounds below two values). */
export function meanCi(xs: readonly number[], level = 0.95): { mean: number; ci: readonly [number, number]; n: number } {
  const r = oneSampleTTest(xs, level);
  return { mean: r.meanDiff, ci: r.ci, n: xs.length };
}

export interface Wilcoxon {
  /** differences used (zeros dropped) */
  readonly n: number;
  readonly zeros: number;
  /** sum of the ranks of positive differences (R's V) and of negative ones */
  readonly wPlus: number;
  readonly wMinus: number;
  /** two-sided */
  readonly p: number;
  /**
   * "exact": the exact null distribution of W+ (no zeros, no ties, n ≤ 50);
   * "normal": normal approximation with the tie correction to the variance and a continuity
   * correction of 0.5 (what R's wilcox.test and SciPy's "approx" do).
   */
  readonly method: "exact" | "normal";
  readonly ties: boolean;
  readonly z?: number;
}

/** Sizes of the groups of equal values (two or more) in `xs`. */
function tieSizes(xs: readonly number[]): number[] {
  const sorted = [...xs].sort((x, y) => x - y);
  const sizes: number[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[i]) j++;
    if (j > i) sizes.push(j - i + 1);
    i = j + 1;
  }
  return sizes;
}

/**
 * Wilcoxon signed-rank test of the differences `d` (two-sided), by @stdlib/stats-wilcoxon. Zero
 * differences are dropped (Wilcoxon's convention, R's and SciPy's default). Exact when nothing is
 * tied or zero and at most 50 differences remain; otherwise the normal approximation (the
 * `method` says which).
 */
export function wilcoxonSignedRank(d: readonly number[]): Wilcoxon {
  const nonZero = d.filter((x) => x !== 0);
  const zeros = d.length - nonZero.length;
  const n = nonZero.length;
  const total = (n * (n + 1)) / 2;
  const groups = tieSizes(nonZero.map(Math.abs));
  const ties = groups.length > 0;
  // @stdlib refuses fewer than two values and differences that are all zero; the two-sided p of a
  // single difference (W+ is 0 or 1, each with probability ½) or of none is 1.
  if (d.length < 2 || n === 0) {
    const wPlus = n === 1 && nonZero[0]! > 0 ? 1 : 0;
    return { n, zeros, wPlus, wMinus: total - wPlus, p: 1, method: "exact", ties };
  }
  // The two-sided p is twice the lower tail of the smaller rank sum, asked of @stdlib as the
  // one-sided "less" test of d or of −d. Its own two-sided p takes the upper tail as 1 − F(W − 1)
  // (exact) or 1 − Φ(z) (normal): that exceeds 1 at the centre of the distribution (2·F(n(n+1)/4))
  // and loses p-values below ~1e-16 to cancellation (0 beyond |z| ≈ 8.3, where the lower tail
  // still gives e.g. 1e-20), so it is not used.
  const lower = wilcoxon([...d], { alternative: "less" });
  const wPlus = lower.statistic;
  const wMinus = total - wPlus;
  const p = Math.min(1, 2 * (wPlus <= wMinus ? lower : wilcoxon(d.map((x) => -x), { alternative: "less" })).pValue);
  // @stdlib's rule for the exact distribution, which its result does not name.
  if (!ties && zeros === 0 && n <= 50) return { n, zeros, wPlus, wMinus, p, method: "exact", ties };
  // z is @stdlib's statistic for the normal approximation (which it does not return), for the record.
  const variance = (n * (n + 1) * (2 * n + 1)) / 24 - groups.reduce((s, t) => s + (t ** 3 - t), 0) / 48;
  const diff = wPlus - (n * (n + 1)) / 4;
  const z = variance > 0 ? (diff - 0.5 * Math.sign(diff)) / Math.sqrt(variance) : 0;
  return { n, zeros, wPlus, wMinus, p, method: "normal", ties, z };
}

export interface McNemar {
  /** pairs where only the first is true, and where only the second is */
  readonly b: number;
  readonly c: number;
  /** two-sided */
  readonly p: number;
  /**
   * "exact": the conditional binomial test, b ~ Bin(b + c, ½) (b + c ≤ exactMax);
   * "chi2-cc": χ² = (|b − c| − 1)² / (b + c) on 1 df (Edwards' continuity correction).
   */
  readonly method: "exact" | "chi2-cc";
  readonly statistic?: number;
}

/** McNemar's test for paired binary outcomes. */
export function mcnemar(a: readonly boolean[], bOutcomes: readonly boolean[], options: { exactMax?: number } = {}): McNemar {
  if (a.length !== bOutcomes.length) throw new InternalError(`mcnemar: ${a.length} outcomes against ${bOutcomes.length}; pairs must line up`);
  let b = 0;
  let c = 0;
  a.forEach((x, i) => {
    if (x && !bOutcomes[i]) b++;
    else if (!x && bOutcomes[i]) c++;
  });
  return mcnemarCounts(b, c, options);
}

export function mcnemarCounts(b: number, c: number, options: { exactMax?: number } = {}): McNemar {
  const n = b + c;
  if (n === 0) return { b, c, p: 1, method: "exact" };
  if (n <= (options.exactMax ?? 25)) return { b, c, p: Math.min(1, 2 * binomialCdf(Math.min(b, c), n, 0.5)), method: "exact" };
  const statistic = (Math.abs(b - c) - 1) ** 2 / n;
  // P(χ²₁ > x) = 2·Φ(−√x)
  return { b, c, p: Math.min(1, 2 * normalCdf(-Math.sqrt(statistic), 0, 1)), method: "chi2-cc", statistic };
}

export interface Bootstrap {
  readonly estimate: number;
  readonly ci: readonly [number, number];
  readonly level: number;
  readonly iterations: number;
  readonly clusters: number;
  readonly n: number;
  readonly seed: number;
  /** the RNG stream the resamples were drawn from (actors/rng.ts naming) */
  readonly stream: string;
  readonly clustered: boolean;
}

export interface BootstrapOptions {
  readonly iterations?: number;
  readonly level?: number;
  readonly seed?: number;
  /** names the RNG stream: two comparisons in one report draw independent resamples */
  readonly name?: string;
  /** false resamples single values, ignoring clusters (the naive bootstrap, for comparison) */
  readonly clustered?: boolean;
}

/**
 * Percentile bootstrap of a mean, resampling clusters: with clusters = queries, every seed of a
 * drawn query comes along, so seeds of one query (which share the query's difficulty) are not
 * counted as independent evidence. Each resample's statistic is the mean over all values in the
 * drawn clusters. The interval takes the sorted resample means at indices ⌊α/2·N⌋ and
 * ⌊(1 − α/2)·N⌋ (the reference release's cluster_bootstrap_intent.py does the same).
 */
export function clusteredBootstrapMean(values: ReadonlyArray<{ readonly cluster: string; readonly value: number }>, options: BootstrapOptions = {}): Bootstrap {
  const iterations = options.iterations ?? 5000;
  const level = options.level ?? 0.95;
  const seed = options.seed ?? 0;
  const clustered = options.clustered ?? true;
  const stream = `stats/bootstrap/${options.name ?? "mean"}${clustered ? "" : "/naive"}`;
  const groups = new Map<string, { sum: number; count: number }>();
  for (const { cluster, value } of values) {
    const key = clustered ? cluster : `${groups.size}`;
    const g = groups.get(key) ?? { sum: 0, count: 0 };
    g.sum += value;
    g.count++;
    groups.set(key, g);
  }
  // Clusters in a fixed order (sorted keys), so the resamples do not depend on row order.
  const units = [...groups.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, g]) => g);
  const estimate = mean(values.map((v) => v.value));
  const base = { estimate, level, iterations, clusters: units.length, n: values.length, seed, stream, clustered };
  if (units.length === 0) return { ...base, ci: [NaN, NaN] };
  const draws = new Draws(deriveStream(seed, stream));
  const stats = new Float64Array(iterations);
  const k = units.length;
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    let count = 0;
    for (let j = 0; j < k; j++) {
      const u = units[draws.int(0, k - 1)]!;
      sum += u.sum;
      count += u.count;
    }
    stats[it] = sum / count;
  }
  stats.sort();
  const alpha = 1 - level;
  const lo = stats[Math.floor((alpha / 2) * iterations)]!;
  const hi = stats[Math.min(iterations - 1, Math.floor((1 - alpha / 2) * iterations))]!;
  return { ...base, ci: [lo, hi] };
}

/**
 * @stdlib/stats-padjust on the p-values that are not NaN (it refuses NaN, and anything outside
 * [0, 1]); NaN stays NaN in its place and does not count in the family's size m.
 */
function adjust(ps: readonly number[], method: "bonferroni" | "holm"): number[] {
  const kept = ps.flatMap((p, i) => (Number.isNaN(p) ? [] : [i]));
  const out = ps.map(() => NaN);
  if (kept.length === 0) return out;
  const adjusted = padjust(kept.map((i) => ps[i]!), method);
  kept.forEach((i, k) => (out[i] = adjusted[k]!));
  return out;
}

/** Bonferroni: p·m, capped at 1 (input order kept). NaN stays NaN and does not count in m. */
export const bonferroni = (ps: readonly number[]): number[] => adjust(ps, "bonferroni");

/**
 * Holm's step-down adjustment (input order kept): sort ascending, multiply the i-th smallest
 * (from 0) by m − i, carry the running maximum so adjusted p-values keep the order, cap at 1.
 * NaN stays NaN and does not count in m.
 */
export const holm = (ps: readonly number[]): number[] => adjust(ps, "holm");

/**
 * Wilson score interval for a binomial proportion (k successes of n), at `level` (two-sided);
 * used for the confident-wrong rate p_cw (EnvProbe). NaN bounds when n is 0.
 */
export function wilson(k: number, n: number, level = 0.95): { p: number; lower: number; upper: number } {
  if (n <= 0) return { p: NaN, lower: NaN, upper: NaN };
  const z = normalQuantileTwoSided(level);
  const p = k / n;
  const denom = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  return { p, lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

/** z with P(|Z| ≤ z) = level, by bisection on the normal CDF. */
function normalQuantileTwoSided(level: number): number {
  const target = 1 - (1 - level) / 2;
  let lo = 0;
  let hi = 10;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid, 0, 1) < target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

export interface PairedBootstrap {
  /** mean paired difference */
  readonly estimate: number;
  readonly ci: readonly [number, number];
  /** two-sided p from the centred resample distribution: share of |mean* − Δ̂| ≥ |Δ̂| (add-one) */
  readonly p: number;
  readonly n: number;
  readonly iterations: number;
  readonly seed: number;
  readonly stream: string;
}

/**
 * Percentile bootstrap of a mean paired difference (EnvProbe Tables 1–2: 10,000 resamples of the
 * per-(world, seed) differences), with a two-sided p-value from the centred resamples. Draws from
 * the named stream `stats/paired/<name>`, so the same differences, seed and name give the same
 * interval anywhere.
 */
export function pairedBootstrap(diffs: readonly number[], options: { iterations?: number; level?: number; seed?: number; name?: string } = {}): PairedBootstrap {
  const iterations = options.iterations ?? 10_000;
  const level = options.level ?? 0.95;
  const seed = options.seed ?? 0;
  const stream = `stats/paired/${options.name ?? "diff"}`;
  const n = diffs.length;
  const estimate = mean(diffs);
  if (n === 0) return { estimate, ci: [NaN, NaN], p: NaN, n, iterations, seed, stream };
  // 10,000 × n draws per comparison: indices come straight from the stream's generator by
  // multiply-shift (⌊u·n / 2³²⌋; bias below n / 2³², ~10⁻⁷ here) rather than a rejection sampler
  // per draw, which made the report's bootstraps several times slower.
  const generator = xoroshiro128plusFromState(deriveStream(seed, stream));
  const values = Float64Array.from(diffs);
  const stats = new Float64Array(iterations);
  let extreme = 0;
  for (let it = 0; it < iterations; it++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += values[Math.floor(((generator.next() >>> 0) * n) / 4294967296)]!;
    const m = sum / n;
    stats[it] = m;
    if (Math.abs(m - estimate) >= Math.abs(estimate) - 1e-12) extreme++;
  }
  stats.sort();
  const alpha = 1 - level;
  const ci: [number, number] = [stats[Math.floor((alpha / 2) * iterations)]!, stats[Math.min(iterations - 1, Math.floor((1 - alpha / 2) * iterations))]!];
  return { estimate, ci, p: (1 + extreme) / (1 + iterations), n, iterations, seed, stream };
}
