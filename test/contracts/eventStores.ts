// The EventStores contract (DESIGN §7): every backend's event stores — the embedded file store
// and JetStream — must pass the same assertions. Call it from a test file with the stores under
// test and a fresh-location factory.
import { describe, expect, it } from "vitest";
import { GENESIS_HASH, type Draft, type LogRecord } from "../../events/record.ts";
import { SequenceConflict } from "../../events/errors.ts";
import type { EventStores } from "../../infra/backend.ts";
import type { EventStore } from "../../infra/eventStore.ts";

const phase = (tick: number, name: string): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase: name }, tick, cause: null });

export function eventStoresContract(name: string, stores: EventStores, freshLocation: () => string): void {
  /** Runs `body` with an opened store, and closes the store as a run does, also when `body` fails. */
  const using = async <A>(opened: Promise<EventStore>, body: (store: EventStore) => Promise<A>): Promise<A> => {
    const store = await opened;
    try {
      return await body(store);
    } finally {
      await stores.close(store);
    }
  };

  describe(`EventStores contract: ${name}`, () => {
    it("appends in order, seals a hash chain from genesis, and scans back the same records", async () => {
      const location = freshLocation();
      const written = await using(stores.create(location, { episode: "ep" }), async (store) => {
        expect(store.head()).toEqual({ seq: -1, hash: GENESIS_HASH });
        const a = await store.append([phase(0, "a"), phase(0, "b")], { expectedSeq: -1 });
        const b = await store.append([phase(1, "c")], { expectedSeq: 1 });
        await store.commit();
        expect(store.head()).toEqual({ seq: 2, hash: b[0]!.hash });
        return [...a, ...b];
      });
      const scanned = await stores.scan(location);
      expect(scanned.torn).toBeNull();
      expect(scanned.records.map((r) => ({ seq: r.seq, hash: r.hash, payload: r.payload }))).toEqual(written.map((r) => ({ seq: r.seq, hash: r.hash, payload: r.payload })));
      expect(new Set(scanned.records.map((r) => r.hash)).size).toBe(3);
      const read = await stores.read(location);
      expect(read.map((r) => r.hash)).toEqual(written.map((r) => r.hash));
    });

    it("rejects an append whose expected sequence is stale, and keeps what was logged", async () => {
      const location = freshLocation();
      const outcome = await using(stores.create(location, { episode: "ep" }), async (store) => {
        await store.append([phase(0, "a")], { expectedSeq: -1 });
        return store.append([phase(0, "b")], { expectedSeq: -1 }).then(() => null, (e: unknown) => e);
      });
      expect(outcome).toBeInstanceOf(SequenceConflict);
      const scanned = await stores.scan(location);
      expect(scanned.records.map((r) => r.payload)).toEqual([{ phase: "a" }]);
    });

    it("rejects a second writer while the first holds the episode", async () => {
      const location = freshLocation();
      const second = await using(stores.create(location, { episode: "ep" }), () =>
        stores.create(location, { episode: "ep" }).then(
          async (store) => {
            await stores.close(store);
            return null;
          },
          (e: unknown) => e,
        ),
      );
      expect(second).toBeInstanceOf(Error);
    });

    it("resumes a log after its last record and continues the chain", async () => {
      const location = freshLocation();
      const first = await using(stores.create(location, { episode: "ep" }), async (store) => {
        const written = await store.append([phase(0, "a"), phase(0, "b")], { expectedSeq: -1 });
        await store.commit();
        return written;
      });
      let records: LogRecord[] = [];
      const resumed = stores.resume(location, { episode: "ep" }).then((opened) => ((records = opened.records), opened.store));
      const continued = await using(resumed, async (store) => {
        expect(records.map((r) => r.hash)).toEqual(first.map((r) => r.hash));
        expect(store.head()).toEqual({ seq: 1, hash: first[1]!.hash });
        const stale = await store.append([phase(1, "x")], { expectedSeq: 0 }).then(() => null, (e: unknown) => e);
        expect(stale).toBeInstanceOf(SequenceConflict);
        const next = await store.append([phase(1, "c")], { expectedSeq: 1 });
        await store.commit();
        return next;
      });
      expect(continued[0]!.seq).toBe(2);
      const read = await stores.read(location);
      expect(read.map((r) => r.payload)).toEqual([{ phase: "a" }, { phase: "b" }, { phase: "c" }]);
    });

    it("resume creates the log when there is none", async () => {
      const location = freshLocation();
      let records: LogRecord[] | null = null;
      const resumed = stores.resume(location, { episode: "ep" }).then((opened) => ((records = opened.records), opened.store));
      await using(resumed, async (store) => {
        expect(records).toEqual([]);
        expect(store.head()).toEqual({ seq: -1, hash: GENESIS_HASH });
        await store.append([phase(0, "a")], { expectedSeq: -1 });
      });
      const read = await stores.read(location);
      expect(read.map((r) => r.seq)).toEqual([0]);
    });

    it("reads a log that was never written as no records", async () => {
      const location = freshLocation();
      const read = await stores.read(location);
      expect(read).toEqual([]);
      const scanned = await stores.scan(location);
      expect(scanned.records).toEqual([]);
      expect(scanned.torn).toBeNull();
    });

    it("continues a fork's chain from the parent's hash at the parent's sequence", async () => {
      const location = freshLocation();
      const parentHash = "ab".repeat(32);
      await using(stores.create(location, { episode: "child", firstSeq: 40, previousHash: parentHash }), async (store) => {
        expect(store.head()).toEqual({ seq: 39, hash: parentHash });
        const [first] = await store.append([phase(5, "x")], { expectedSeq: 39 });
        expect(first!.seq).toBe(40);
      });
    });
  });
}
