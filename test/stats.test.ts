// The statistics against published values: if a distribution, a rank rule or an adjustment is
// wrong, one of these numbers moves.
import { describe, expect, it } from "vitest";
import {
  bonferroni,
  clusteredBootstrapMean,
  holm,
  mcnemar,
  mcnemarCounts,
  meanCi,
  oneSampleTTest,
  pairedTTest,
  wilcoxonSignedRank,
} from "../services/analysis/stats.ts";

// Student (1908) / Cushny & Peebles: extra hours of sleep under two drugs, the same 10 patients.
// R: t.test(extra ~ group, data = sleep, paired = TRUE) → t = -4.0621, df = 9, p-value = 0.002833,
// 95 percent confidence interval -2.4598858 -0.7001142, mean difference -1.58.
const sleep1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const sleep2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

// Hollander & Wolfe (1973, p. 29), depression scale before (x) and after (y) therapy; R's
// wilcox.test example: wilcox.test(x, y, paired = TRUE, alternative = "greater") → V = 40,
// p-value = 0.01953 (exact), so the two-sided p is 0.0390625 = 20/512.
const hwX = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
const hwY = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];

describe("paired t-test", () => {
  it("matches Student's sleep data (t, df, p, CI)", () => {
    const r = pairedTTest(sleep1, sleep2);
    expect(r.n).toBe(10);
    expect(r.df).toBe(9);
    expect(r.meanDiff).toBeCloseTo(-1.58, 10);
    expect(r.t).toBeCloseTo(-4.0621, 4);
    expect(r.p).toBeCloseTo(0.002833, 6);
    expect(r.ci[0]).toBeCloseTo(-2.4598858, 6);
    expect(r.ci[1]).toBeCloseTo(-0.7001142, 6);
    expect(r.note).toBeUndefined();
  });

  it("is antisymmetric and uses the t (not the normal) distribution", () => {
    const r = pairedTTest(sleep2, sleep1);
    expect(r.t).toBeCloseTo(4.0621, 4);
    expect(r.p).toBeCloseTo(0.002833, 6);
    // A normal approximation would give 2·Φ(−4.0621) ≈ 4.9e-5: far from the t's 0.0028.
    expect(r.p).toBeGreaterThan(0.002);
  });

  it("uses the t quantile of the right df for the interval (t tables, df 9/24/99: 2.262157, 2.063899, 1.984217)", () => {
    for (const [n, q] of [
      [10, 2.262157],
      [25, 2.063899],
      [100, 1.984217],
    ] as const) {
      const d = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : -1) * (1 + (i % 3)));
      const r = oneSampleTTest(d);
      expect((r.ci[1] - r.meanDiff) / r.se).toBeCloseTo(q, 5);
    }
    const r90 = oneSampleTTest(sleep1, 0.9);
    expect((r90.ci[1] - r90.meanDiff) / r90.se).toBeCloseTo(1.833113, 5);
  });

  it("says when the test is degenerate", () => {
    expect(oneSampleTTest([0.5]).note).toMatch(/1 value/);
    expect(Number.isNaN(oneSampleTTest([0.5]).p)).toBe(true);
    const constant = oneSampleTTest([0.2, 0.2, 0.2]);
    expect(constant.p).toBe(0);
    expect(constant.t).toBe(Infinity);
    expect(constant.note).toMatch(/sd 0/);
    expect(oneSampleTTest([0, 0, 0]).p).toBe(1);
    expect(() => pairedTTest([1, 2], [1])).toThrow(/line up/);
  });

  it("meanCi is a t interval around the mean", () => {
    const e = meanCi(sleep1);
    expect(e.mean).toBeCloseTo(0.75, 10);
    expect(e.n).toBe(10);
    expect(e.ci[0]).toBeLessThan(0.75);
    expect(e.ci[1] - 0.75).toBeCloseTo(0.75 - e.ci[0], 10);
  });
});

describe("Wilcoxon signed-rank", () => {
  it("exact: Hollander & Wolfe depression data (V = 40, two-sided p = 20/512)", () => {
    const r = wilcoxonSignedRank(hwX.map((x, i) => x - hwY[i]!));
    expect(r.method).toBe("exact");
    expect(r.wPlus).toBe(40);
    expect(r.wMinus).toBe(5);
    expect(r.p).toBeCloseTo(0.0390625, 12);
  });

  it("the exact p is twice the smaller tail of the subset-sum count (checked by hand), capped at 1", () => {
    // n = 3: the 8 sign patterns give W+ = 0,1,2,3,3,4,5,6, so P(W ≤ 0,1,2,3) = 1/8, 2/8, 3/8, 5/8.
    const p = (d: number[]) => wilcoxonSignedRank(d).p;
    expect(p([1, 2, 3])).toBeCloseTo(2 / 8, 15);
    expect(p([-1, 2, 3])).toBeCloseTo(4 / 8, 15);
    expect(p([1, -2, 3])).toBeCloseTo(6 / 8, 15);
    // W+ = W− = 3, the centre: 2·P(W ≤ 3) = 10/8, which is no probability (@stdlib's own two-sided p).
    expect(p([-1, -2, 3])).toBe(1);
    // Subsets of {1..9} with sum ≤ 5: {}, {1}, {2}, {3}, {1,2}, {4}, {1,3}, {5}, {1,4}, {2,3}.
    expect(p([1, 2, 3, 4, -5, 6, 7, 8, 9])).toBeCloseTo(20 / 512, 15);
    // Symmetric: d and −d have the same p; W+ and W− swap.
    for (let mask = 0; mask < 1024; mask += 37) {
      const d = Array.from({ length: 10 }, (_, i) => ((mask >> i) & 1 ? -1 : 1) * (i + 1));
      const [a, b] = [wilcoxonSignedRank(d), wilcoxonSignedRank(d.map((x) => -x))];
      expect(a.method).toBe("exact");
      expect(b.p).toBe(a.p);
      expect([b.wPlus, b.wMinus]).toEqual([a.wMinus, a.wPlus]);
    }
  });

  it("keeps tiny p-values in either tail (no 1 − Φ cancellation) and defines the test for 0 or 1 differences", () => {
    const far = Array.from({ length: 200 }, (_, i) => i + 1);
    const up = wilcoxonSignedRank(far);
    const down = wilcoxonSignedRank(far.map((x) => -x));
    expect(up.method).toBe("normal");
    // z = (20100 − 10050 − 0.5) / √(200·201·401/24) = 12.2621…; 2·Φ(−z) = 1.447e-34 (R: 2*pnorm(-12.2621)).
    expect(up.z).toBeCloseTo(12.2621, 4);
    expect(up.p).toBeGreaterThan(1.44e-34);
    expect(up.p).toBeLessThan(1.45e-34);
    expect(down.p).toBe(up.p);
    expect(wilcoxonSignedRank([5])).toMatchObject({ n: 1, wPlus: 1, wMinus: 0, p: 1, method: "exact" });
    expect(wilcoxonSignedRank([-5])).toMatchObject({ n: 1, wPlus: 0, wMinus: 1, p: 1, method: "exact" });
    expect(wilcoxonSignedRank([0, 3])).toMatchObject({ n: 1, zeros: 1, p: 1, method: "normal", z: 0 });
    expect(wilcoxonSignedRank([])).toMatchObject({ n: 0, p: 1 });
  });

  it("normal approximation with tie and continuity correction: sleep data (R: V = 0, p-value = 0.009091)", () => {
    const r = wilcoxonSignedRank(sleep1.map((x, i) => x - sleep2[i]!));
    expect(r.method).toBe("normal");
    expect(r.ties).toBe(true);
    expect(r.zeros).toBe(1);
    expect(r.n).toBe(9);
    expect(r.wPlus).toBe(0);
    expect(r.p).toBeCloseTo(0.009091, 6);
  });

  it("falls back to the normal approximation above the exact limit", () => {
    const d = Array.from({ length: 60 }, (_, i) => (i + 1) * (i % 4 === 0 ? -1 : 1));
    const r = wilcoxonSignedRank(d);
    expect(r.method).toBe("normal");
    expect(r.ties).toBe(false);
    expect(wilcoxonSignedRank(d.slice(0, 40)).method).toBe("exact");
    expect(wilcoxonSignedRank([0, 0]).p).toBe(1);
  });
});

describe("McNemar", () => {
  it("exact conditional test: Bentur et al. via Fagerland et al. 2013 (b = 1, c = 7: p = 0.0703)", () => {
    const r = mcnemarCounts(1, 7);
    expect(r.method).toBe("exact");
    expect(r.p).toBeCloseTo(0.0703125, 10); // 2·(1 + 8)/256
  });

  it("reads discordant pairs from paired outcomes", () => {
    const a = [true, true, false, false, true, false, true, true, true, true];
    const b = [true, false, false, true, false, false, false, false, false, false];
    const r = mcnemar(a, b);
    expect([r.b, r.c]).toEqual([6, 1]);
    expect(r.p).toBeCloseTo(2 * (1 + 7) / 128, 12);
  });

  it("chi-square with continuity correction for many discordant pairs (Agresti's approval ratings, b = 150, c = 86)", () => {
    const r = mcnemarCounts(150, 86);
    expect(r.method).toBe("chi2-cc");
    expect(r.statistic).toBeCloseTo(63 ** 2 / 236, 10);
    expect(r.p).toBeCloseTo(4.1146e-5, 8); // scipy.stats.chi2.sf(16.8178, 1)
    expect(mcnemarCounts(0, 0).p).toBe(1);
  });
});

describe("multiple comparisons", () => {
  // Wikipedia, Holm–Bonferroni method, example: four hypotheses with p = 0.01, 0.04, 0.03, 0.005.
  it("Holm on a known p-vector, input order kept", () => {
    const adjusted = holm([0.01, 0.04, 0.03, 0.005]);
    [0.03, 0.06, 0.06, 0.02].forEach((v, i) => expect(adjusted[i]).toBeCloseTo(v, 12));
    // At α = 0.05 Holm rejects H1 and H4 only.
    expect(adjusted.map((p) => p < 0.05)).toEqual([true, false, false, true]);
  });

  it("Bonferroni, capped at 1; NaN is not counted in the family", () => {
    const b = bonferroni([0.01, 0.04, 0.03, 0.005]);
    [0.04, 0.16, 0.12, 0.02].forEach((v, i) => expect(b[i]).toBeCloseTo(v, 12));
    expect(bonferroni([0.4, 0.5])).toEqual([0.8, 1]);
    const h = holm([0.02, NaN, 0.01]);
    expect(Number.isNaN(h[1])).toBe(true);
    expect(h[0]).toBeCloseTo(0.02, 12);
    expect(h[2]).toBeCloseTo(0.02, 12);
    expect(holm([])).toEqual([]);
    expect(bonferroni([NaN]).every(Number.isNaN)).toBe(true);
  });
});

describe("clustered bootstrap", () => {
  // 12 queries × 3 seeds; the seeds of a query agree (as deterministic backends do), queries differ.
  const cells = Array.from({ length: 12 }, (_, q) => [42, 123, 456].map((seed) => ({ cluster: `q${q}`, seed, value: ((q * 7) % 12) / 10 - 0.4 }))).flat();

  it("is deterministic for a seed and name, and changes with either", () => {
    const a = clusteredBootstrapMean(cells, { seed: 7, name: "x", iterations: 2000 });
    const b = clusteredBootstrapMean([...cells].reverse(), { seed: 7, name: "x", iterations: 2000 });
    expect(b.ci).toEqual(a.ci);
    expect(a.stream).toBe("stats/bootstrap/x");
    expect(clusteredBootstrapMean(cells, { seed: 8, name: "x", iterations: 2000 }).ci).not.toEqual(a.ci);
    expect(clusteredBootstrapMean(cells, { seed: 7, name: "y", iterations: 2000 }).ci).not.toEqual(a.ci);
    expect(a.estimate).toBeCloseTo(cells.reduce((s, c) => s + c.value, 0) / cells.length, 12);
    expect(a.ci[0]).toBeLessThan(a.estimate);
    expect(a.ci[1]).toBeGreaterThan(a.estimate);
  });

  it("clustering by query matters: the naive interval is about √3 too narrow when seeds agree", () => {
    const clustered = clusteredBootstrapMean(cells, { seed: 1, name: "c" });
    const naive = clusteredBootstrapMean(cells, { seed: 1, name: "c", clustered: false });
    const width = (ci: readonly [number, number]) => ci[1] - ci[0];
    expect(clustered.clusters).toBe(12);
    expect(naive.clusters).toBe(36);
    const ratio = width(clustered.ci) / width(naive.ci);
    expect(ratio).toBeGreaterThan(1.45);
    expect(ratio).toBeLessThan(2.1);
    // The clustered interval agrees with a t interval over the 12 query means (to sampling noise).
    const perQuery = Array.from({ length: 12 }, (_, q) => ((q * 7) % 12) / 10 - 0.4);
    const t = meanCi(perQuery);
    expect(width(clustered.ci) / width(t.ci)).toBeGreaterThan(0.75);
    expect(width(clustered.ci) / width(t.ci)).toBeLessThan(1.1);
  });

  it("with independent seeds the two intervals agree", () => {
    // Values vary within queries as much as between them: clusters carry no extra correlation.
    const spread = Array.from({ length: 40 }, (_, i) => ({ cluster: `q${i % 20}`, value: ((i * 13) % 40) / 40 }));
    const c = clusteredBootstrapMean(spread, { seed: 3, name: "s" });
    const n = clusteredBootstrapMean(spread, { seed: 3, name: "s", clustered: false });
    expect((c.ci[1] - c.ci[0]) / (n.ci[1] - n.ci[0])).toBeLessThan(1.3);
  });
});
