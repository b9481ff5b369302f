// Repetition metrics of EnactToM (digest §5.2), per task from c successes in n attempts:
// - Pass@k = 1 − C(n−c, k)/C(n, k): the chance that k attempts drawn without replacement from the
//   n include a success (the unbiased estimator of Chen et al.);
// - Pass^k = C(c, k)/C(n, k): the chance that k attempts drawn without replacement from the n all
//   succeed — the unbiased estimator of "all k runs succeed". With n = k it is the paper's exact
//   indicator (1 when all k succeed, else 0). The authors' release computes (c/n)^k instead, which
//   gives partial credit (2 of 3 → 0.296) and is biased for k > 1; `passPowerKRelease` keeps that
//   formula, labelled, for comparison only.
// Both are averaged over tasks; missing attempts count as failures (the caller passes them as such).

import { InternalError } from "../../events/internalError.ts";

/** C(n, k) as a float (exact for the small n of repeated runs). */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

function check(n: number, c: number, k: number): void {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || c < 0 || c > n || k < 1 || k > n) throw new InternalError(`pass metrics need integers 0 ≤ c ≤ n and 1 ≤ k ≤ n (got n=${n}, c=${c}, k=${k})`);
}

export function passAtK(n: number, c: number, k: number): number {
  check(n, c, k);
  return 1 - binomial(n - c, k) / binomial(n, k);
}

export function passPowerK(n: number, c: number, k: number): number {
  check(n, c, k);
  return binomial(c, k) / binomial(n, k);
}

/** The release's (c/n)^k (benchmark_metrics.py): partial credit, biased; for comparison only. */
export function passPowerKRelease(n: number, c: number, k: number): number {
  check(n, c, k);
  return (c / n) ** k;
}

/** Mean over tasks of a per-task metric, each task given as its attempts' outcomes. */
export function meanOverTasks(outcomes: readonly (readonly boolean[])[], k: number, metric: (n: number, c: number, k: number) => number): number {
  if (outcomes.length === 0) return 0;
  return outcomes.reduce((sum, runs) => sum + metric(runs.length, runs.filter((x) => x).length, k), 0) / outcomes.length;
}

/** Avg ± binomial SE over all attempts: sqrt(p(1−p)/N). */
export function averageWithSe(outcomes: readonly (readonly boolean[])[]): { mean: number; se: number; attempts: number } {
  const all = outcomes.flat();
  const p = all.length === 0 ? 0 : all.filter((x) => x).length / all.length;
  return { mean: p, se: all.length === 0 ? 0 : Math.sqrt((p * (1 - p)) / all.length), attempts: all.length };
}
