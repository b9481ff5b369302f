import { describe, it, expect } from "vitest";
import fc from "fast-check";
import { emptyMemory, importanceOf, recent, recomputeMemoryDigest, remember, retrieve } from "../actors/auratown/memory.ts";
import type { MemoryItem, MemoryKind, MemoryStream } from "../actors/auratown/memory.ts";
import { EMPTY_DIGEST } from "../events/digest.ts";

const WEIGHTS = { recency: 0.3, importance: 0.4, relevance: 0.3 } as const;
const DECAY = 0.01;
const BIG = 1000;
// Words that occur inside each other ("a" in "at", "the" in "there"), the costly case for token search.
const VOCABULARY = ["a", "at", "the", "there", "cafe", "Cafe", "walk", "walked", "to", "town", "square", "x"];

const item = (t: number, content: string, importance: number, kind: MemoryKind = "observation"): Omit<MemoryItem, "id"> => ({ t, kind, content, importance });

describe("importance heuristic (A23)", () => {
  it("scores 7 for the salient keywords, case-insensitively", () => {
    for (const text of ["a fight at the square", "She said LOVE", "news of a death", "a secret plan", "what a surprise", "an Important letter", "an emergency at the store"]) {
      expect(importanceOf(text)).toBe(7);
    }
  });

  it("scores 3 for routine keywords", () => {
    for (const text of ["take a walk in the park", "sit on a bench", "Stand by the door", "the morning routine", "the usual order"]) {
      expect(importanceOf(text)).toBe(3);
    }
  });

  it("scores 5 otherwise, and the salient list wins over the routine list", () => {
    expect(importanceOf("buy groceries at the general store")).toBe(5);
    expect(importanceOf("")).toBe(5);
    expect(importanceOf("a fight during the usual walk")).toBe(7);
  });
});

describe("remember", () => {
  it("assigns increasing ids and adds the item to the digest", () => {
    const s = emptyMemory();
    expect(s.digest).toBe(EMPTY_DIGEST);
    const a = remember(s, item(10, "first", 5), BIG);
    const b = remember(s, item(20, "second", 5), BIG);
    expect([a.id, b.id]).toEqual([0, 1]);
    expect(s.nextId).toBe(2);
    expect(s.items).toEqual([a, b]);
    expect(s.digest).not.toBe(EMPTY_DIGEST);
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    expect(recent(s, 1)).toEqual([b]);
    expect(recent(s, 5)).toEqual([b, a]);
  });

  it("increments sinceReflection for every kind and resets it on a reflection", () => {
    const s = emptyMemory();
    const kinds: MemoryKind[] = ["observation", "conversation", "plan", "observation"];
    kinds.forEach((kind, i) => {
      remember(s, item(i, `${kind} ${i}`, 5, kind), BIG);
      expect(s.sinceReflection).toBe(i + 1);
    });
    remember(s, item(5, "I notice I work too much", 8, "reflection"), BIG);
    expect(s.sinceReflection).toBe(0);
    remember(s, item(6, "another reflection", 8, "reflection"), BIG);
    expect(s.sinceReflection).toBe(0);
    remember(s, item(7, "chat with Lin", 6, "conversation"), BIG);
    remember(s, item(8, "plan for day 2", 4, "plan"), BIG);
    expect(s.sinceReflection).toBe(2);
  });

  it("trims the lowest importance first, then the oldest, keeping the digest exact", () => {
    const s = emptyMemory();
    const cap = 3;
    remember(s, item(0, "a", 5), cap); // id 0
    remember(s, item(1, "b", 3), cap); // id 1
    remember(s, item(2, "c", 7), cap); // id 2
    expect(s.items.map((m) => m.id)).toEqual([0, 1, 2]);
    remember(s, item(3, "d", 3), cap); // id 3: two items of importance 3; the older (id 1) goes
    expect(s.items.map((m) => m.id)).toEqual([0, 2, 3]);
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    remember(s, item(4, "e", 5), cap); // id 4: id 3 is now the only importance-3 item
    expect(s.items.map((m) => m.id)).toEqual([0, 2, 4]);
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    remember(s, item(5, "f", 5), cap); // id 5: importance 5 at t 0, 4, 5 → t 0 (id 0) goes
    expect(s.items.map((m) => m.id)).toEqual([2, 4, 5]);
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    // A new item less important than everything is dropped at once, but still gets its id.
    const low = remember(s, item(6, "g", 1), cap);
    expect(low.id).toBe(6);
    expect(s.nextId).toBe(7);
    expect(s.items.map((m) => m.id)).toEqual([2, 4, 5]);
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    expect(s.items.map((m) => m.content)).toEqual(["c", "e", "f"]);
  });

  it("keeps the digest equal to a full recompute over a long run with trimming", () => {
    const s = emptyMemory();
    for (let i = 0; i < 300; i++) {
      const kind: MemoryKind = i % 11 === 0 ? "reflection" : "observation";
      remember(s, item(i * 30, `event ${i} ${i % 3 === 0 ? "walk" : "talk"}`, 1 + ((i * 7) % 10), kind), 50);
      expect(s.items.length).toBe(Math.min(i + 1, 50));
    }
    expect(s.digest).toBe(recomputeMemoryDigest(s));
    // Every surviving item is at least as important as anything dropped would have been:
    // importances 1..10 cycle, 300 items, capacity 50 → only the top importances survive.
    const minKept = Math.min(...s.items.map((m) => m.importance));
    expect(minKept).toBeGreaterThanOrEqual(9);
  });
});

describe("retrieve", () => {
  function stream(): MemoryStream {
    const s = emptyMemory();
    remember(s, item(0, "Lin Wei served coffee at the cafe", 5), BIG); // id 0
    remember(s, item(60, "An argument at the town square", 7), BIG); // id 1
    remember(s, item(100, "walk in the park", 3), BIG); // id 2
    return s;
  }

  it("scores 0.3·exp(−0.01·Δt) + 0.4·importance/10 + 0.3·relevance", () => {
    // Query words {coffee, at, the, park}: overlaps are 3/4, 2/4 (at, the), 2/4 (the, park).
    const now = 120;
    const expected = new Map<number, number>([
      [0, 0.3 * Math.exp(-0.01 * 120) + 0.4 * 0.5 + 0.3 * 0.75],
      [1, 0.3 * Math.exp(-0.01 * 60) + 0.4 * 0.7 + 0.3 * 0.5],
      [2, 0.3 * Math.exp(-0.01 * 20) + 0.4 * 0.3 + 0.3 * 0.5],
    ]);
    const result = retrieve(stream(), "Coffee at the PARK", now, 10, WEIGHTS, DECAY);
    expect(result).toHaveLength(3);
    for (const r of result) expect(r.score).toBeCloseTo(expected.get(r.item.id)!, 12);
    // Hand values: 0.594643…, 0.515619…, 0.515358…
    expect(result[0]!.score).toBeCloseTo(0.594643, 5);
    expect(result.map((r) => r.item.id)).toEqual([1, 2, 0]);
    // The limit keeps the best.
    expect(retrieve(stream(), "Coffee at the PARK", now, 1, WEIGHTS, DECAY).map((r) => r.item.id)).toEqual([1]);
  });

  it("retrieval with the stream's relevance cache, across trims, equals retrieval over a fresh copy of the stream", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant("remember" as const), words: fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 8 }), importance: fc.integer({ min: 1, max: 9 }) }),
            fc.record({ op: fc.constant("retrieve" as const), words: fc.array(fc.constantFrom(...VOCABULARY, "  "), { maxLength: 5 }), importance: fc.constant(0) }),
            // The previous query again: its cached relevance is reused, across any trim since.
            fc.record({ op: fc.constant("again" as const), words: fc.constant([] as string[]), importance: fc.constant(0) }),
          ),
          { minLength: 30, maxLength: 80 },
        ),
        (ops) => {
          const s = emptyMemory();
          let t = 0;
          let query = "";
          for (const o of ops) {
            t += 30;
            if (o.op === "remember") remember(s, item(t, o.words.join(" "), o.importance), 8);
            else {
              if (o.op === "retrieve") query = o.words.join(" ");
              const fresh: MemoryStream = { ...s, items: [...s.items] };
              const cached = retrieve(s, query, t, 5, WEIGHTS, DECAY).map((r) => [r.item.id, r.score]);
              expect(cached).toEqual(retrieve(fresh, query, t, 5, WEIGHTS, DECAY).map((r) => [r.item.id, r.score]));
            }
          }
        },
      ),
      { numRuns: 200, seed: 20261125 },
    );
  });

  it("uses relevance 0.5 for an empty query and orders by score", () => {
    const now = 120;
    for (const query of ["", "   "]) {
      const result = retrieve(stream(), query, now, 10, WEIGHTS, DECAY);
      const byId = new Map(result.map((r) => [r.item.id, r.score]));
      expect(byId.get(0)).toBeCloseTo(0.3 * Math.exp(-1.2) + 0.2 + 0.15, 12);
      expect(byId.get(1)).toBeCloseTo(0.3 * Math.exp(-0.6) + 0.28 + 0.15, 12);
      expect(byId.get(2)).toBeCloseTo(0.3 * Math.exp(-0.2) + 0.12 + 0.15, 12);
      // 0.594643 > 0.515619 > 0.440358
      expect(result.map((r) => r.item.id)).toEqual([1, 2, 0]);
      for (let i = 1; i < result.length; i++) expect(result[i - 1]!.score).toBeGreaterThanOrEqual(result[i]!.score);
    }
  });

  it("gives full recency to items not older than now, and zero relevance without overlap", () => {
    const s = emptyMemory();
    remember(s, item(500, "future plan", 4, "plan"), BIG);
    const [r] = retrieve(s, "unrelated words", 100, 5, WEIGHTS, DECAY);
    expect(r!.score).toBeCloseTo(0.3 * 1 + 0.4 * 0.4 + 0, 12);
  });
});

describe("memory digest", () => {
  const items: MemoryItem[] = [
    { id: 0, t: 0, kind: "observation", content: "Lin Wei is at Sunrise Cafe.", importance: 5 },
    { id: 1, t: 30, kind: "conversation", content: "Had a conversation with Zhang Hao", importance: 6 },
    { id: 2, t: 60, kind: "reflection", content: "I value my regulars", importance: 8 },
    { id: 3, t: 90, kind: "plan", content: "Plan for day 1", importance: 4 },
  ];
  const streamOf = (list: MemoryItem[]): MemoryStream => ({ items: list, nextId: list.length, sinceReflection: 0, digest: EMPTY_DIGEST });

  it("is order-independent and matches the incremental digest", () => {
    const forward = recomputeMemoryDigest(streamOf([...items]));
    const backward = recomputeMemoryDigest(streamOf([...items].reverse()));
    const shuffled = recomputeMemoryDigest(streamOf([items[2]!, items[0]!, items[3]!, items[1]!]));
    expect(backward).toBe(forward);
    expect(shuffled).toBe(forward);
    expect(forward).not.toBe(EMPTY_DIGEST);
    // The same items built with remember (which assigns the same ids in order) give the same digest.
    const s = emptyMemory();
    for (const m of items) remember(s, { t: m.t, kind: m.kind, content: m.content, importance: m.importance }, BIG);
    expect(s.items).toEqual(items);
    expect(s.digest).toBe(forward);
  });

  it("changes when any item's content, time, kind or importance changes", () => {
    const base = recomputeMemoryDigest(streamOf([...items]));
    const seen = new Set<string>([base]);
    items.forEach((m, i) => {
      const variants: MemoryItem[] = [
        { ...m, content: `${m.content}!` },
        { ...m, t: m.t + 1 },
        { ...m, importance: m.importance + 1 },
        { ...m, kind: m.kind === "plan" ? "observation" : "plan" },
      ];
      for (const v of variants) {
        const changed = [...items];
        changed[i] = v;
        const d = recomputeMemoryDigest(streamOf(changed));
        expect(d).not.toBe(base);
        seen.add(d);
      }
    });
    // All 16 single-field edits give distinct digests.
    expect(seen.size).toBe(1 + items.length * 4);
  });
});
