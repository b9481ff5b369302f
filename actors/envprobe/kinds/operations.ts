// The world operations the EnvProbe actors call, for any kind: the kind-independent part of each
// (parsing the action text, the observation's noise draw, the mutation's change log), then the
// kind's module from the registry (`index.ts`). All pure functions over arrays of field values.
//
// Every draw session consumes a fixed number of draws, so a stream never shifts with what a
// policy does (common random numbers, DESIGN §4).
import type { Draws } from "../../rng.ts";
import { refused } from "./answers.ts";
import { parseAction } from "./grammar.ts";
import { worldKind } from "./index.ts";
import type { Answer, Kind, Layout, MutationTargets, Noise, Observation, Outcome, Sizes, WorldSpec } from "./types.ts";

/** The world a seed's draws give, of this kind and sizes. */
export const generate = (kind: Kind, sizes: Sizes, draws: Draws): WorldSpec => worldKind(kind).generate(sizes, draws);

/** Applies a task action to `values` in place. */
export function applyAction(spec: WorldSpec, values: string[], text: string): Outcome {
  const p = parseAction(text);
  if (p === null) return { valid: false, reason: "unparseable" };
  return worldKind(spec.layout.kind).act(spec, values, p);
}

export const isSuccess = (layout: Layout, values: readonly string[]): boolean => worldKind(layout.kind).isSuccess(layout, values);

/** Probes are read-only; the answer is (field, value) pairs written back into beliefs, plus extras. */
export function probe(spec: WorldSpec, values: readonly string[], text: string): Answer {
  const p = parseAction(text);
  if (p === null) return refused("invalid");
  return worldKind(spec.layout.kind).probe(spec, values, p);
}

/** Observation (after every step). Noise draws: always one unit per step (fixed consumption). */
export function observe(spec: WorldSpec, values: readonly string[], noise: Noise, draws: Draws): Observation {
  const dropLast = draws.unit() < 0.4 && noise === "partial";
  return worldKind(spec.layout.kind).observe(spec, values, dropLast);
}

/**
 * Exogenous mutation at `rate` of what `targets` allows, in place; returns the changes as
 * [field, from, to]. Every item draws every step, applied or not (fixed consumption).
 */
export function mutate(spec: WorldSpec, values: string[], rate: number, targets: MutationTargets, draws: Draws): [number, string, string][] {
  const changes: [number, string, string][] = [];
  const set = (i: number, v: string) => {
    if (values[i] === v) return;
    changes.push([i, values[i]!, v]);
    values[i] = v;
  };
  worldKind(spec.layout.kind).mutate(spec, values, rate, targets, draws, set);
  return changes;
}

/** Shortest plan on the static world (no mutation): K, or null when the seed is unsolvable. */
export const shortestPlan = (spec: WorldSpec): number | null => worldKind(spec.layout.kind).shortestPlan(spec);
