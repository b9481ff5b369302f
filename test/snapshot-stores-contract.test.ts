// Runs the SnapshotStores contract against the file store and the JetStream one, plus what only
// JetStream can show (a corrupt body, concurrent bucket creation, concurrent latest moves).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Objm } from "@nats-io/obj";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { SnapshotStores } from "../infra/layers.ts";
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

snapshotStoresContract("embedded files", SnapshotStores.files, () => join(tempDir("snap-contract"), "snapshots"));
snapshotStoresContract("JetStream KV + Object Store", () => jetStreamSnapshotStores(nc, namespace), () => `ep-${++episodes}.fork/α`);

describe("JetStreamSnapshotStore specifics", () => {
  it("names the bucket and object when a body is not JSON or holds another state", async () => {
    const ns = nats.namespace("corrupt");
    const store = new JetStreamSnapshotStore(nc, ns, "ep-corrupt");
    const good = snapshotFixture("corrupt", 1);
    const other = snapshotFixture("other", 2);
    await store.put(good);
    await store.put(other);
    const bodies = await new Objm(nc).open(natsName("pt_snap", ns));
    const object = kvKey(`ep-corrupt/${good.stateHash}`);
    await bodies.putBlob({ name: object }, new TextEncoder().encode("{ not json"));
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snap_${ns}.*${object}.*not valid JSON`));
    await bodies.putBlob({ name: object }, new TextEncoder().encode(JSON.stringify(other)));
    await expect(store.get(good.stateHash)).rejects.toThrow(new RegExp(`pt_snap_${ns}.*${object}.*${other.stateHash}`));
  }, 30_000);

  it("stores the pointer layout the design names", async () => {
    const ns = nats.namespace("layout");
    const store = new JetStreamSnapshotStore(nc, ns, "ep-layout");
    const s = snapshotFixture("layout", 6);
    await store.put(s);
    const index = await new Kvm(nc).open(natsName("pt_snapidx", ns));
    const pointer = (await index.get(`ep-layout.${s.stateHash}`))!.json<{ object: string; tick: number; seq: number; bytes: number }>();
    expect(pointer).toEqual({ object: `ep-layout/${s.stateHash}`, tick: 6, seq: s.seq, bytes: Buffer.byteLength(JSON.stringify(s)) });
    expect((await index.get("ep-layout.latest"))!.json()).toEqual({ key: s.stateHash, tick: 6 });
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
