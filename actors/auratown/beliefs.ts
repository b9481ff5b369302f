// Beliefs about others (paper A3; reference §3.3): refreshed only when co-located in the same
// named location (homes included) during the beliefs phase, with the other's values of this tick.
// A belief is never deleted, so beliefs about absent agents go stale. `since` is the tick the
// belief last changed, which makes staleness measurable from state alone.
import { DigestAccumulator, EMPTY_DIGEST, joinedLanes } from "../../events/digest.ts";
import type { AvailabilityType } from "./events.ts";

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

/** A belief's digest entry: its lanes, and the other agent it is held about (part of the entry). */
interface Entry {
  readonly other: string;
  readonly lanes: readonly [number, number];
}

// A belief formed from one occupant of one `location.observed` payload is the same for everyone
// who notices that occupant there (about a dozen observers each in a 1,000-agent town): it is
// formed and hashed once, then shared. Beliefs are never mutated (a refresh replaces them), so
// sharing one object between agents' contexts is safe; a snapshot serialises each holder's copy.
// Pure memos: nothing here is part of any state, and a miss computes the same values.
const formedFrom = new WeakMap<Observed, { readonly location: string; readonly tick: number; readonly belief: Belief }>();
const entryOf = new WeakMap<Belief, Entry>();

function entry(other: string, belief: Belief): Entry {
  let known = entryOf.get(belief);
  if (known === undefined || known.other !== other) entryOf.set(belief, (known = { other, lanes: joinedLanes(entryFields(other, belief)) }));
  return known;
}

function formed(o: Observed, location: string, tick: number): Belief {
  const known = formedFrom.get(o);
  if (known !== undefined && known.location === location && known.tick === tick) return known.belief;
  const belief: Belief = { location, availability: o.availability, emotional_state: o.emotional_state, since: tick };
  formedFrom.set(o, { location, tick, belief });
  return belief;
}

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
    const next = formed(o, location, tick);
    acc ??= new DigestAccumulator(digest);
    if (old !== undefined) acc.removeLanes(entry(o.agent, old).lanes);
    acc.addLanes(entry(o.agent, next).lanes);
    beliefs[o.agent] = next;
  }
  return acc === null ? digest : acc.digest;
}

export function recomputeBeliefsDigest(beliefs: Record<string, Belief>): string {
  const acc = new DigestAccumulator(EMPTY_DIGEST);
  for (const [other, b] of Object.entries(beliefs)) acc.addJoined(entryFields(other, b));
  return acc.digest;
}
