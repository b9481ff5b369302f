// EnvProbe metrics from records: A_H by type, τ_c (first A_t < 0.6), action collapse with probes
// excluded, useful-probe rates, p_cw counts; the Wilson interval against published values; the
// paired bootstrap is seeded and sane.
import { describe, expect, it } from "vitest";
import { cellOf, EpisodeAccumulator } from "../services/envprobe/metrics.ts";
import { pairedBootstrap, wilson } from "../services/analysis/stats.ts";

const header = { seed: 7, condition: "envprobe-simple", config: { world: "graphnav", regime: "medium" }, ticks: 30 };
const step = (t: number, kind: "act" | "probe", valid: boolean, useful = false, success = false) => ({ t, kind, valid, useful, success });
const score = (t: number, wrong: [number, number], n: [number, number], hc = 0, cw = 0) => ({ t, w: wrong, n, hc, cw });

describe("envprobe metrics", () => {
  it("folds an episode's records into A_H by type, τ_c, action collapse (probes excluded), UPR and p_cw counts", () => {
    const acc = new EpisodeAccumulator();
    acc.add("episode.started", header);
    // t1 probe (useful), t2 invalid act, t3 probe (not useful), t4 invalid act, t5 invalid act, t6 valid act + success.
    const steps = [step(1, "probe", true, true), step(2, "act", false), step(3, "probe", true), step(4, "act", false), step(5, "act", false), step(6, "act", true, false, true)];
    const scores = [score(1, [0, 2], [1, 9], 8, 1), score(2, [0, 3], [1, 9], 8, 2), score(3, [1, 4], [1, 9], 7, 3), score(4, [1, 4], [1, 9], 7, 3), score(5, [0, 1], [1, 9], 9, 0), score(6, [0, 1], [1, 9], 9, 1)];
    steps.forEach((s, i) => {
      acc.add("envprobe.stepped", s);
      if (i === 3) acc.add("envprobe.mutated", { t: 4, changes: [[1, "open", "locked"], [2, "n_1", "n_3"]] });
      acc.add("envprobe.scored", scores[i]!);
    });
    const m = acc.result();
    expect(m).toMatchObject({ world: "graphnav", regime: "medium", policy: "envprobe-simple", seed: 7, horizon: 30, budget: 7, steps: 6, success: true, probes: 2, useful: 1, mutations: 2 });
    expect(m.accuracy).toBeCloseTo(0.9);
    expect(m.procedural).toBe(1);
    expect(m.spatial).toBeCloseTo(8 / 9);
    // A_3 = 1 − 5/10 = 0.5 is the first below 0.6.
    expect(m.collapse).toBe(3);
    // Acts: t2 ✗, t4 ✗, t5 ✗ → 0/3 valid at t5 (the first act step with ≥ 3 acts); probes never count as invalid.
    expect(m.actionCollapse).toBe(5);
    expect(m.highConfidence).toBe(48);
    expect(m.confidentWrong).toBe(10);
    const cell = cellOf([m, { ...m, seed: 8, probes: 0, useful: 0, collapse: null, success: false }]);
    expect(cell.usefulRate).toBeCloseTo(0.5); // only the episode that probed
    expect(cell.usefulPerBudget).toBeCloseTo((1 / 7 + 0) / 2);
    expect(cell.success).toBe(0.5);
    expect(cell.drift).toMatchObject({ n: 1, meanOffset: 2, driftFirst: 1, actionFirst: 0 });
    expect(cell.pcw.p).toBeCloseTo(20 / 96);
  });

  it("wilson gives the published 95% interval (81 of 263: 0.2553–0.3662) and handles 0 successes", () => {
    const w = wilson(81, 263);
    expect(w.lower).toBeCloseTo(0.25529, 4);
    expect(w.upper).toBeCloseTo(0.36621, 4);
    const zero = wilson(0, 10);
    expect(zero.lower).toBe(0);
    expect(zero.upper).toBeCloseTo(0.27753, 4);
  });

  it("the paired bootstrap is seeded, covers the mean, and its p separates a real shift from none", () => {
    const diffs = Array.from({ length: 200 }, (_, i) => 0.05 + ((i * 37) % 21) / 100 - 0.1);
    const a = pairedBootstrap(diffs, { iterations: 2000, seed: 3, name: "x" });
    expect(pairedBootstrap(diffs, { iterations: 2000, seed: 3, name: "x" })).toEqual(a);
    expect(pairedBootstrap(diffs, { iterations: 2000, seed: 3, name: "y" }).ci).not.toEqual(a.ci);
    expect(a.ci[0]).toBeLessThan(a.estimate);
    expect(a.ci[1]).toBeGreaterThan(a.estimate);
    expect(a.p).toBeLessThan(0.01);
    const none = pairedBootstrap(diffs.map((d) => d - a.estimate), { iterations: 2000, seed: 3, name: "z" });
    expect(none.p).toBeGreaterThan(0.5);
    expect(pairedBootstrap(Array(50).fill(0), { iterations: 500 }).p).toBe(1);
  });
});
