// Helpers the world kinds' generators share: sizes by cardinality or density, and sampling.
//
// Draws are "same distribution, different draws" as the authors' release: our RNG is xoroshiro
// (actors/rng.ts), not Python's MT19937.
import type { Draws } from "../../rng.ts";
import type { Cardinality } from "./types.ts";

const CARD = { low: 0, medium: 1, high: 2 } as const;
/** The low, medium or high entry. */
export const pick3 = <T>(c: Cardinality, xs: readonly [T, T, T]): T => xs[CARD[c]];

/** k distinct items, partial Fisher-Yates (k draws). */
export function sample<T>(draws: Draws, items: readonly T[], k: number): T[] {
  const a = [...items];
  const n = Math.min(k, a.length);
  for (let i = 0; i < n; i++) {
    const j = draws.int(i, a.length - 1);
    const tmp = a[i]!;
    a[i] = a[j]!;
    a[j] = tmp;
  }
  return a.slice(0, n);
}
