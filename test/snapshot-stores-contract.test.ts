// Runs the SnapshotStores contract against the file store and the JetStream one, plus what only
// JetStream can show (a corrupt body, concurrent bucket creation, concurrent latest moves).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Objm } from "@nats-io/obj";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { fileSnapshotStores } from "../infra/backend.ts";
import { JetStreamSnapshotStore, jetStreamSnapshotStores, openSnapshotBuckets } from "../infra/jetStreamSnapshotStore.ts";
import { connectNats, kvKey, natsName } from "../infra/nats.ts";
import { snapshotFixture, snapshotStoresContract } from "./contracts/snapshotStores.ts";
import { tempDir } from "./helpers.ts";
import { startTestNats } from "./natsServer.ts";

const nats = await startTestNats();
let nc: NatsConnection;
const namespace = nats.namespace("snap");
let episodes = 0;

beforeAll(async () => {
  nc = await connectNats(nats.url, { name: "snapshot-contract" });
}, 30_000);
afterAll(async () => {
  await nc?.close();
  await nats.stop();
}, 30_000);

snapshotStoresContract("embedded files", fileSnapshotStores, () => join(tempDir("snap-contract"), "snapshots"));
snapshotStoresContract("JetStream KV + Object Store", () => jetStreamSnapshotStores(nc, namespace), () => `ep-${++episodes}.fork/α`);

describe("JetStreamSnapshotStore specifics", () => {
  it("names the bucket and key when an inline snapshot is not JSON or holds another state", async () => {
    const ns = nats.namespace("corrupt-inline");
    const store = new JetStreamSnapshotStore(nc, ns, "ep-corrupt");
    const good = snapshotFixture("corrupt", 1);
    const other = snapshotFixture("other", 2);
    await store.put(good);
    const index = await new Kvm(nc).open(natsName("pt_snapidx", ns));
    const key = `ep-corrupt.${good.stateHash}`;
    await index.put(key, "{ not json");
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snapidx_${ns}.*${key}.*not valid JSON`));
    await index.put(key, JSON.stringify(other));
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snapidx_${ns}.*${key}.*${other.stateHash}`));
  }, 30_000);

  it("names the bucket and object when a large body is not JSON or holds another state", async () => {
    const ns = nats.namespace("corrupt");
    const store = new JetStreamSnapshotStore(nc, ns, "ep-corrupt");
    const good = snapshotFixture("corrupt", 1, 400 * 1024);
    const other = snapshotFixture("other", 2);
    await store.put(good);
    const bodies = await new Objm(nc).open(natsName("pt_snap", ns));
    const object = kvKey(`ep-corrupt/${good.stateHash}`);
    await bodies.putBlob({ name: object }, new TextEncoder().encode("{ not json"));
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snap_${ns}.*${object}.*not valid JSON`));
    await bodies.putBlob({ name: object }, new TextEncoder().encode(JSON.stringify(other)));
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snap_${ns}.*${object}.*${other.stateHash}`));
  }, 30_000);

  it("keeps small snapshots inline in KV and points to the Object Store above the inline limit", async () => {
    const ns = nats.namespace("layout");
    const store = new JetStreamSnapshotStore(nc, ns, "ep-layout");
    const small = snapshotFixture("layout", 6);
    const large = snapshotFixture("layout-large", 8, 400 * 1024);
    await store.put(small);
    const index = await new Kvm(nc).open(natsName("pt_snapidx", ns));
    expect((await index.get(`ep-layout.${small.stateHash}`))!.json()).toEqual(small);
    expect((await index.get("ep-layout.latest"))!.json()).toEqual({ key: small.stateHash, tick: 6 });
    const objects = await new Objm(nc).open(natsName("pt_snap", ns));
    expect(await objects.info(`ep-layout/${small.stateHash}`)).toBeNull();
    await store.put(large);
    const pointer = (await index.get(`ep-layout.${large.stateHash}`))!.json<{ object: string; tick: number; seq: number; bytes: number }>();
    expect(pointer).toEqual({ object: `ep-layout/${large.stateHash}`, tick: 8, seq: large.seq, bytes: Buffer.byteLength(JSON.stringify(large)) });
    expect((await objects.info(pointer.object))?.size).toBe(pointer.bytes);
    expect((await index.get("ep-layout.latest"))!.json()).toEqual({ key: large.stateHash, tick: 8 });
  }, 30_000);

  it("moves latest forward only, also when another store moved it since this one last looked", async () => {
    const ns = nats.namespace("latest-cas");
    const [a, b] = [new JetStreamSnapshotStore(nc, ns, "ep-cas"), new JetStreamSnapshotStore(nc, ns, "ep-cas")];
    const [t2, t4, t6, t8] = [2, 4, 6, 8].map((t) => snapshotFixture("cas", t));
    await a.put(t2!);
    await b.put(t6!); // a's view of latest is now stale
    await a.put(t4!); // must not move latest back to 4
    expect(await b.latest()).toBe(t6!.stateHash);
    await a.put(t8!); // its stale compare-and-set fails, it reads again and moves forward
    expect(await b.latest()).toBe(t8!.stateHash);
  }, 30_000);

  it("tolerates concurrent bucket creation and concurrent puts moving latest", async () => {
    const ns = nats.namespace("race");
    const opened = await Promise.all(Array.from({ length: 4 }, () => openSnapshotBuckets(nc, ns)));
    expect(new Set(opened.map((b) => b.indexName))).toEqual(new Set([natsName("pt_snapidx", ns)]));
    const stores = Array.from({ length: 4 }, () => new JetStreamSnapshotStore(nc, ns, "ep-race"));
    const snapshots = Array.from({ length: 12 }, (_, i) => snapshotFixture("race", i));
    await Promise.all(snapshots.map((s, i) => stores[i % stores.length]!.put(s)));
    expect(await stores[0]!.latest()).toBe(snapshots[11]!.stateHash);
  }, 30_000);
});
