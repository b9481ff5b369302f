// Beliefs about others (paper A3; reference §3.3): refreshed only when co-located in the same
// named location (homes included) during the beliefs phase, with the other's values of this tick.
// A belief is never deleted, so beliefs about absent agents go stale. `since` is the tick the
// belief last changed, which makes staleness measurable from state alone.
import { DigestAccumulator, EMPTY_DIGEST } from "../../events/digest.ts";
import type { AvailabilityType } from "../../events/auratown.ts";

export interface Belief {
  readonly location: string;
  readonly availability: AvailabilityType;
  readonly emotional_state: string;
  readonly since: number;
}

export interface Observed {
  readonly agent: string;
  readonly availability: AvailabilityType;
  readonly emotional_state: string;
}

// A belief's digest entry is `${other}|${location}|${availability}|${emotional_state}|${since}`;
// the hot path hashes its fields without joining them (`DigestAccumulator.addJoined`).
const entryFields = (other: string, b: Belief): string[] => [other, b.location, b.availability, b.emotional_state, String(b.since)];

export const emptyBeliefsDigest = EMPTY_DIGEST;

/** Updates `beliefs` in place; returns the new digest. */
export function refreshBeliefs(
  beliefs: Record<string, Belief>,
  digest: string,
  self: string,
  location: string,
  occupants: readonly Observed[],
  tick: number,
): string {
  let acc: DigestAccumulator | null = null;
  for (const o of occupants) {
    if (o.agent === self) continue;
    const old = beliefs[o.agent];
    if (old !== undefined && old.location === location && old.availability === o.availability && old.emotional_state === o.emotional_state) continue;
    const next: Belief = { location, availability: o.availability, emotional_state: o.emotional_state, since: tick };
    acc ??= new DigestAccumulator(digest);
    if (old !== undefined) acc.removeJoined(entryFields(o.agent, old));
    acc.addJoined(entryFields(o.agent, next));
    beliefs[o.agent] = next;
  }
  return acc === null ? digest : acc.digest;
}

export function recomputeBeliefsDigest(beliefs: Record<string, Belief>): string {
  const acc = new DigestAccumulator(EMPTY_DIGEST);
  for (const [other, b] of Object.entries(beliefs)) acc.addJoined(entryFields(other, b));
  return acc.digest;
}
