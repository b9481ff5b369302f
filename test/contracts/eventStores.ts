// The EventStores contract (DESIGN §7): every implementation of the service — the embedded file
// store today, JetStream next — must pass the same assertions. Call it from a test file with the
// layer under test and a fresh-location factory.
import { describe, expect, it } from "vitest";
import { Effect, Layer, type Scope } from "effect";
import { GENESIS_HASH, type Draft } from "../../events/record.ts";
import { SequenceConflict } from "../../events/errors.ts";
import { EventStores } from "../../infra/layers.ts";

const phase = (tick: number, name: string): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase: name }, tick, cause: null });

export function eventStoresContract(name: string, layer: Layer.Layer<EventStores>, freshLocation: () => string): void {
  const run = <A, E>(program: Effect.Effect<A, E, EventStores | Scope.Scope>) =>
    Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer)));

  describe(`EventStores contract: ${name}`, () => {
    it("appends in order, seals a hash chain from genesis, and scans back the same records", async () => {
      const location = freshLocation();
      const written = await run(
        Effect.gen(function* () {
          const store = yield* (yield* EventStores).create(location, { episode: "ep" });
          expect(store.head()).toEqual({ seq: -1, hash: GENESIS_HASH });
          const a = yield* Effect.promise(() => store.append([phase(0, "a"), phase(0, "b")], { expectedSeq: -1 }));
          const b = yield* Effect.promise(() => store.append([phase(1, "c")], { expectedSeq: 1 }));
          yield* Effect.promise(() => store.commit());
          expect(store.head()).toEqual({ seq: 2, hash: b[0]!.hash });
          return [...a, ...b];
        }),
      );
      const scanned = await run(Effect.gen(function* () { return yield* (yield* EventStores).scan(location); }));
      expect(scanned.torn).toBeNull();
      expect(scanned.records.map((r) => ({ seq: r.seq, hash: r.hash, payload: r.payload }))).toEqual(written.map((r) => ({ seq: r.seq, hash: r.hash, payload: r.payload })));
      expect(new Set(scanned.records.map((r) => r.hash)).size).toBe(3);
      const read = await run(Effect.gen(function* () { return yield* (yield* EventStores).read(location); }));
      expect(read.map((r) => r.hash)).toEqual(written.map((r) => r.hash));
    });

    it("rejects an append whose expected sequence is stale, and keeps what was logged", async () => {
      const location = freshLocation();
      const outcome = await run(
        Effect.gen(function* () {
          const store = yield* (yield* EventStores).create(location, { episode: "ep" });
          yield* Effect.promise(() => store.append([phase(0, "a")], { expectedSeq: -1 }));
          return yield* Effect.promise(() => store.append([phase(0, "b")], { expectedSeq: -1 }).then(() => null, (e: unknown) => e));
        }),
      );
      expect(outcome).toBeInstanceOf(SequenceConflict);
      const scanned = await run(Effect.gen(function* () { return yield* (yield* EventStores).scan(location); }));
      expect(scanned.records.map((r) => r.payload)).toEqual([{ phase: "a" }]);
    });

    it("rejects a second writer while the first holds the episode", async () => {
      const location = freshLocation();
      const second = await run(
        Effect.gen(function* () {
          const stores = yield* EventStores;
          yield* stores.create(location, { episode: "ep" });
          return yield* Effect.result(stores.create(location, { episode: "ep" }));
        }),
      );
      expect(second._tag).toBe("Failure");
    });

    it("resumes a log after its last record and continues the chain", async () => {
      const location = freshLocation();
      const first = await run(
        Effect.gen(function* () {
          const store = yield* (yield* EventStores).create(location, { episode: "ep" });
          const written = yield* Effect.promise(() => store.append([phase(0, "a"), phase(0, "b")], { expectedSeq: -1 }));
          yield* Effect.promise(() => store.commit());
          return written;
        }),
      );
      const continued = await run(
        Effect.gen(function* () {
          const { store, records } = yield* (yield* EventStores).resume(location, { episode: "ep" });
          expect(records.map((r) => r.hash)).toEqual(first.map((r) => r.hash));
          expect(store.head()).toEqual({ seq: 1, hash: first[1]!.hash });
          const stale = yield* Effect.promise(() => store.append([phase(1, "x")], { expectedSeq: 0 }).then(() => null, (e: unknown) => e));
          expect(stale).toBeInstanceOf(SequenceConflict);
          const next = yield* Effect.promise(() => store.append([phase(1, "c")], { expectedSeq: 1 }));
          yield* Effect.promise(() => store.commit());
          return next;
        }),
      );
      expect(continued[0]!.seq).toBe(2);
      const read = await run(Effect.gen(function* () { return yield* (yield* EventStores).read(location); }));
      expect(read.map((r) => r.payload)).toEqual([{ phase: "a" }, { phase: "b" }, { phase: "c" }]);
    });

    it("resume creates the log when there is none", async () => {
      const location = freshLocation();
      await run(
        Effect.gen(function* () {
          const { store, records } = yield* (yield* EventStores).resume(location, { episode: "ep" });
          expect(records).toEqual([]);
          expect(store.head()).toEqual({ seq: -1, hash: GENESIS_HASH });
          yield* Effect.promise(() => store.append([phase(0, "a")], { expectedSeq: -1 }));
        }),
      );
      const read = await run(Effect.gen(function* () { return yield* (yield* EventStores).read(location); }));
      expect(read.map((r) => r.seq)).toEqual([0]);
    });

    it("reads a log that was never written as no records", async () => {
      const location = freshLocation();
      const read = await run(Effect.gen(function* () { return yield* (yield* EventStores).read(location); }));
      expect(read).toEqual([]);
      const scanned = await run(Effect.gen(function* () { return yield* (yield* EventStores).scan(location); }));
      expect(scanned.records).toEqual([]);
      expect(scanned.torn).toBeNull();
    });

    it("continues a fork's chain from the parent's hash at the parent's sequence", async () => {
      const location = freshLocation();
      const parentHash = "ab".repeat(32);
      await run(
        Effect.gen(function* () {
          const store = yield* (yield* EventStores).create(location, { episode: "child", firstSeq: 40, previousHash: parentHash });
          expect(store.head()).toEqual({ seq: 39, hash: parentHash });
          const [first] = yield* Effect.promise(() => store.append([phase(5, "x")], { expectedSeq: 39 }));
          expect(first!.seq).toBe(40);
        }),
      );
    });
  });
}
