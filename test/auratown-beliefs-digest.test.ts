import { describe, it, expect } from "vitest";
import { emptyBeliefsDigest, recomputeBeliefsDigest, refreshBeliefs } from "../actors/auratown/beliefs.ts";
import type { Belief, Observed } from "../actors/auratown/beliefs.ts";
import { DigestAccumulator, digestOf, digestUpdate, EMPTY_DIGEST } from "../events/digest.ts";
import type { AvailabilityType } from "../actors/auratown/events.ts";

/** Numerical Recipes LCG; deterministic test inputs without Math.random. */
function lcg(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return Math.floor((state / 0x100000000) * n);
  };
}

const AGENTS = ["agent/lin-wei", "agent/zhang-hao", "agent/chen-mei", "agent/liu-yang", "agent/wang-jun", "agent/resident-0006"];
const PLACES = ["Sunrise Cafe", "Town Library", "Town Park", "Town Square", "Lin Wei's Home"];
const AVAILABILITY: AvailabilityType[] = ["available", "busy", "do_not_disturb"];
const EMOTIONS = ["neutral", "calm", "lonely", "stressed", "tired-focused", "recovering"];

describe("beliefs digest", () => {
  it("stays equal to recomputeBeliefsDigest over 200 random refreshes", () => {
    const next = lcg(20240611);
    const self = AGENTS[0]!;
    const beliefs: Record<string, Belief> = {};
    let digest = emptyBeliefsDigest;
    const digests = new Set<string>();
    let changedSince = 0;
    for (let tick = 0; tick < 200; tick++) {
      const location = PLACES[next(PLACES.length)]!;
      const occupants: Observed[] = [];
      for (const agent of AGENTS) {
        if (next(2) === 0) continue;
        occupants.push({ agent, availability: AVAILABILITY[next(AVAILABILITY.length)]!, emotional_state: EMOTIONS[next(EMOTIONS.length)]! });
      }
      const before = structuredClone(beliefs);
      digest = refreshBeliefs(beliefs, digest, self, location, occupants, tick);
      expect(digest).toBe(recomputeBeliefsDigest(beliefs));
      // Only the co-located others changed, to exactly this tick's observed values.
      for (const o of occupants) {
        if (o.agent === self) continue;
        const b = beliefs[o.agent]!;
        expect({ location: b.location, availability: b.availability, emotional_state: b.emotional_state }).toEqual({
          location,
          availability: o.availability,
          emotional_state: o.emotional_state,
        });
        if (b.since === tick) changedSince++;
        else expect(b).toEqual(before[o.agent]);
      }
      for (const other of Object.keys(before)) {
        if (!occupants.some((o) => o.agent === other)) expect(beliefs[other]).toEqual(before[other]);
      }
      expect(beliefs[self]).toBeUndefined();
      digests.add(digest);
    }
    // The sequence actually exercised both creation and replacement of beliefs.
    expect(Object.keys(beliefs).sort()).toEqual(AGENTS.slice(1).sort());
    expect(changedSince).toBeGreaterThan(100);
    expect(digests.size).toBeGreaterThan(100);
  });

  it("differs from the digest of stale content", () => {
    const beliefs: Record<string, Belief> = {};
    const d1 = refreshBeliefs(beliefs, emptyBeliefsDigest, "a", "Town Park", [{ agent: "b", availability: "available", emotional_state: "calm" }], 1);
    const d2 = refreshBeliefs(beliefs, d1, "a", "Town Park", [{ agent: "b", availability: "busy", emotional_state: "calm" }], 2);
    expect(d2).not.toBe(d1);
    expect(d2).toBe(recomputeBeliefsDigest(beliefs));
    expect(recomputeBeliefsDigest({})).toBe(EMPTY_DIGEST);
  });
});

describe("digestUpdate", () => {
  it("add then remove returns to the original digest", () => {
    const next = lcg(7);
    const entries = Array.from({ length: 50 }, (_, i) => `entry-${i}-${next(1_000_000)}|Sunrise Cafe|busy`);
    let digest = EMPTY_DIGEST;
    for (const e of entries) {
      const added = digestUpdate(digest, e, 1);
      expect(added).not.toBe(digest);
      expect(added).toMatch(/^[0-9a-f]{16}$/);
      expect(digestUpdate(added, e, -1)).toBe(digest);
      digest = added;
    }
    // Removing all of them, in a different order, returns to empty.
    let back = digest;
    for (const e of [...entries].reverse()) back = digestUpdate(back, e, -1);
    expect(back).toBe(EMPTY_DIGEST);
    // Wrap-around at the top of both lanes.
    const top = "ffffffffffffffff";
    expect(digestUpdate(digestUpdate(top, "x", 1), "x", -1)).toBe(top);
    // Removing something never added and adding it back also round-trips.
    expect(digestUpdate(digestUpdate(EMPTY_DIGEST, "ghost", -1), "ghost", 1)).toBe(EMPTY_DIGEST);
  });

  it("is a multiset hash: order-independent, counts duplicates, agrees with digestOf", () => {
    const entries = ["a", "b", "c", "b"];
    let forward = EMPTY_DIGEST;
    for (const e of entries) forward = digestUpdate(forward, e, 1);
    let backward = EMPTY_DIGEST;
    for (const e of [...entries].reverse()) backward = digestUpdate(backward, e, 1);
    expect(backward).toBe(forward);
    expect(digestOf(entries)).toBe(forward);
    expect(digestOf(["a", "b", "c"])).not.toBe(forward);
  });

  it("hashing an entry's fields is hashing the fields joined by '|' (the hot paths never build the joined text)", () => {
    const entries = [["agent/lin-wei", "Cafe", "busy", "tired-focused", "12"], ["", "x"], ["only"], ["a|b", "", "c"], ["ünïcödé ☕", "é"]];
    for (const fields of entries) {
      const joined = new DigestAccumulator(EMPTY_DIGEST);
      joined.addJoined(fields);
      expect(joined.digest).toBe(digestUpdate(EMPTY_DIGEST, fields.join("|"), 1));
      joined.removeJoined(fields);
      expect(joined.digest).toBe(EMPTY_DIGEST);
    }
  });
});
