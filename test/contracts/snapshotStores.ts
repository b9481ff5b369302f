// The SnapshotStores contract (DESIGN §6, §7): the file store and the JetStream one must pass the
// same assertions. `stores` may be a function when they can only be built once the suite runs
// (after a NATS connection is made in beforeAll); `freshLocation` gives an unused location (a
// directory for files, an episode id for JetStream).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SnapshotStores } from "../../infra/backend.ts";
import type { EpisodeSnapshot, SnapshotStore } from "../../infra/snapshotStore.ts";

const hashOf = (label: string) => createHash("sha256").update(label).digest("hex");

export function snapshotFixture(label: string, tick: number, actorBytes = 200): EpisodeSnapshot {
  const chunk = `${label}:`.padEnd(64, "x");
  return {
    world: "auratown",
    episode: `ep-${label}`,
    seed: 42,
    condition: "baseline",
    config: { agents: 3, nested: { list: [1, 2, 3], flag: true } },
    tick,
    seq: tick * 10 + 3,
    headHash: hashOf(`head/${label}/${tick}`),
    stateHash: hashOf(`state/${label}/${tick}`),
    parts: { "agent/ana": hashOf(`a/${label}`).slice(0, 16), "env/town": hashOf(`e/${label}`).slice(0, 16) },
    actors: {
      "agent/ana": { value: "idle", context: { memory: chunk.repeat(Math.ceil(actorBytes / chunk.length)).slice(0, actorBytes), tick, unicode: "café ☕ \n \"q\"" } },
      "env/town": { value: { day: "morning" }, context: { incidents: [] } },
    },
  };
}

export function snapshotStoresContract(name: string, stores: SnapshotStores | (() => SnapshotStores), freshLocation: () => string): void {
  const at = async (location: string): Promise<SnapshotStore> => (typeof stores === "function" ? stores() : stores).at(location);

  describe(`SnapshotStores contract: ${name}`, () => {
    it("puts and gets a snapshot by its state hash; has() tells whether one is stored", async () => {
      const store = await at(freshLocation());
      const snapshot = snapshotFixture("round-trip", 4);
      expect(await store.has(snapshot.stateHash)).toBe(false);
      expect(await store.put(snapshot)).toBe(snapshot.stateHash);
      expect(await store.has(snapshot.stateHash)).toBe(true);
      expect(await store.get(snapshot.stateHash)).toEqual(snapshot);
      // idempotent
      expect(await store.put(snapshot)).toBe(snapshot.stateHash);
      expect(await store.get(snapshot.stateHash)).toEqual(snapshot);
      // a second store on the same location sees it
      expect(await (await at(store.location)).get(snapshot.stateHash)).toEqual(snapshot);
    });

    it("answers null for a key it does not hold", async () => {
      const store = await at(freshLocation());
      expect(await store.get(hashOf("absent"))).toBeNull();
      expect(await store.has(hashOf("absent"))).toBe(false);
      expect(await store.latest()).toBeNull();
    });

    it("moves latest() forward only: a put of an older tick leaves it", async () => {
      const store = await at(freshLocation());
      const [t3, t5, t7] = [snapshotFixture("latest", 3), snapshotFixture("latest", 5), snapshotFixture("latest", 7)];
      await store.put(t5);
      expect(await store.latest()).toBe(t5.stateHash);
      await store.put(t3);
      expect(await store.latest()).toBe(t5.stateHash);
      expect(await store.get(t3.stateHash)).toEqual(t3);
      await store.put(t7);
      expect(await store.latest()).toBe(t7.stateHash);
      await store.put(t5);
      expect(await store.latest()).toBe(t7.stateHash);
    });

    it("rejects keys that are not hex hashes", async () => {
      const store = await at(freshLocation());
      for (const key of ["../../etc/passwd", "latest", "ABCDEF0123456789", "abc", `${hashOf("x")}.json`]) {
        await expect(Promise.resolve().then(() => store.get(key))).rejects.toThrow(/hex hash/);
        await expect(Promise.resolve().then(() => store.has(key))).rejects.toThrow(/hex hash/);
      }
      await expect(Promise.resolve().then(() => store.put({ ...snapshotFixture("bad", 1), stateHash: "not-a-hash" }))).rejects.toThrow(/hex hash/);
    });

    it("round-trips a snapshot of several megabytes", async () => {
      const store = await at(freshLocation());
      const big = snapshotFixture("big", 12, 3.5 * 1024 * 1024);
      expect(JSON.stringify(big).length).toBeGreaterThan(3 * 1024 * 1024);
      await store.put(big);
      const back = await store.get(big.stateHash);
      expect(back?.stateHash).toBe(big.stateHash);
      expect(back).toEqual(big);
      expect(await store.latest()).toBe(big.stateHash);
    }, 60_000);

    it("keeps two episodes' stores apart", async () => {
      const [one, two] = [await at(freshLocation()), await at(freshLocation())];
      const a = snapshotFixture("iso-a", 2);
      const b = snapshotFixture("iso-b", 9);
      await one.put(a);
      expect(await two.has(a.stateHash)).toBe(false);
      expect(await two.get(a.stateHash)).toBeNull();
      expect(await two.latest()).toBeNull();
      await two.put(b);
      expect(await one.latest()).toBe(a.stateHash);
      expect(await two.latest()).toBe(b.stateHash);
      expect(await one.has(b.stateHash)).toBe(false);
      // the same state stored under both episodes stays one per episode
      await two.put(a);
      expect(await two.get(a.stateHash)).toEqual(a);
      expect(await two.latest()).toBe(b.stateHash);
    });
  });
}
