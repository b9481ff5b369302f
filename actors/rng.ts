// Named RNG streams (DESIGN §4). A stream's state is four 32-bit ints derived from
// sha256(episode seed, stream name), kept in the owning actor's context so it is part of every
// snapshot. Exogenous streams (world incidents, agents' routine noise, conversation wording) are
// named without a condition, so paired forks draw the same numbers whatever their condition does.
import { xoroshiro128plusFromState } from "pure-rand/generator/xoroshiro128plus";
import { uniformInt } from "pure-rand/distribution/uniformInt";
import { sha256Hex } from "../events/canonical.ts";

export type StreamState = readonly [number, number, number, number];

/**
 * What a seed is, wherever one is given (`run --seed`, `sweep`/`eval --seeds`, experiment specs):
 * an integer from 0 to 2^53 - 1. A stream is derived from the seed's decimal text, which any
 * integer has, but seed lists read `1-200` as a range and episode and scene ids (`<world>-s<seed>-…`)
 * are read back as `s\d+`: a negative seed ran, but could not be swept, evaluated or asked about.
 */
export const isSeed = (seed: number): boolean => Number.isSafeInteger(seed) && seed >= 0;
export const SEED_RULE = `an integer from 0 to ${Number.MAX_SAFE_INTEGER}`;

export function deriveStream(seed: number, name: string): StreamState {
  const digest = sha256Hex(`probetown/rng/v1/${seed}/${name}`);
  const word = (i: number) => parseInt(digest.slice(i * 8, i * 8 + 8), 16) | 0;
  return [word(0), word(1), word(2), word(3)];
}

/** A draw session over one stream; read `state` afterwards and store it back in the context. */
export class Draws {
  private readonly generator;
  constructor(state: StreamState) {
    this.generator = xoroshiro128plusFromState(state);
  }
  int(min: number, max: number): number {
    return uniformInt(this.generator, min, max);
  }
  /** Uniform in [0, 1) with 2^-30 resolution: enough for event probabilities. */
  unit(): number {
    return uniformInt(this.generator, 0, 0x3fffffff) / 0x40000000;
  }
  chance(p: number): boolean {
    return this.unit() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("Draws.pick: empty list");
    return items[this.int(0, items.length - 1)]!;
  }
  get state(): StreamState {
    return this.generator.getState() as unknown as StreamState;
  }
}
