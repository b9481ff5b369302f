// The distributed SnapshotStore (DESIGN §6, §7): snapshots in a KV bucket, and above the inline
// limit their bodies in a JetStream Object Store (chunked, so a snapshot may exceed the server's
// max_payload). One pair of buckets per namespace; a store is one episode's view of them.
//   KV            pt_snapidx_<ns>   kvKey(episode).<stateHash>             → the snapshot JSON itself (inline), or
//                                                                            {object, tick, seq, bytes} (pointer)
//                                   kvKey(episode).latest                  → {key, tick}, forward only
//   Object Store  pt_snap_<ns>      object kvKey(`<episode>/<stateHash>`)  → the snapshot JSON (large ones)
// Inline is the common case (an AURATown snapshot is ~50 KB): one KV put instead of an object's
// info lookup, chunk and meta publishes and a client-side sha256 — a sweep takes several snapshots
// per short episode, and the object path was a third of a worker's NATS round trips.
// Its entry and the `latest` write then go out in one round trip (see putInline): every request
// wakes the server up, and on 2 cores its CPU is the workers' loss.
// A snapshot exists once its KV entry does: an object body is written before its pointer, so a
// crash in between leaves an unreferenced object that the next put of the same state overwrites.
// A put survives a server restart as a log publish does: it is retried, whole, until the server
// answers again or the outage outlasts the connection's outage window (--nats-outage; then a
// NatsWriteLost). Repeating it is harmless: the entry is content-addressed, and a `latest` update that landed with its reply lost makes the
// retry's compare-and-set conflict, read the entry and find it already there.
import { nuid, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, JetStreamApiCodes, JetStreamApiError, type JetStreamClient } from "@nats-io/jetstream";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import { SnapshotDamaged } from "../events/errors.ts";
import { acrossOutage, jetStreamAnswers, kvKey, natsName, natsReplicas, NatsWriteLost, outageOf } from "./nats.ts";
import { checkReplicas, creating, ReplicasMismatch, replicasToCreate } from "./jetstream/replicas.ts";
import type { SnapshotStores } from "./backend.ts";
import { DAMAGED_POINTER, pointerOf, SNAPSHOT_KEY, snapshotJson, type EpisodeSnapshot, type LatestPointer, type SnapshotStore } from "./snapshotStore.ts";
import { messageOf } from "../events/errorMessage.ts";

export interface SnapshotPointer {
  readonly object: string;
  readonly tick: number;
  readonly seq: number;
  readonly bytes: number;
}

export interface SnapshotBuckets {
  readonly bodies: ObjectStore;
  readonly bodiesName: string;
  readonly index: KV;
  readonly indexName: string;
  /** Writes to the index that need headers KV's API does not set (an entry and `latest` sent together). */
  readonly js: JetStreamClient;
}

/** Opens (creating when missing) a namespace's snapshot buckets; safe against a concurrent creator. */
export async function openSnapshotBuckets(nc: NatsConnection, namespace: string): Promise<SnapshotBuckets> {
  const bodiesName = natsName("pt_snap", namespace);
  const indexName = natsName("pt_snapidx", namespace);
  const replicas = replicasToCreate(nc);
  const [bodies, index] = await Promise.all([
    createTolerant(() => creating(nc, `OBJ_${bodiesName}`, () => new Objm(nc).create(bodiesName, { description: "probetown snapshot bodies", replicas }))),
    createTolerant(() => creating(nc, `KV_${indexName}`, () => new Kvm(nc).create(indexName, { history: 1, description: "probetown snapshot pointers", replicas }))),
  ]);
  // Existing buckets are used as they are: with a replica count asked for, they must have it.
  if (natsReplicas(nc) !== undefined) {
    const [b, i] = await Promise.all([bodies.status(), index.status()]);
    checkReplicas(nc, `OBJ_${bodiesName}`, b.replicas);
    checkReplicas(nc, `KV_${indexName}`, i.replicas);
  }
  return { bodies, bodiesName, index, indexName, js: jetstream(nc) };
}

/** Create-or-open looks the stream up, then adds it: a concurrent creator can win in between. */
async function createTolerant<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if (error instanceof ReplicasMismatch) throw error;
    return await create();
  }
}

function checkKey(key: string): string {
  if (!SNAPSHOT_KEY.test(key)) throw new Error(`snapshot key must be a hex hash, got '${key}'`);
  return key;
}

const isConflict = (error: unknown): boolean =>
  error instanceof JetStreamApiError && (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

/** The server's "wrong last msg ID": the stream's last message is not the one a write expected. */
const WRONG_LAST_MSG_ID = 10070;
const isNotRightBehind = (error: unknown): boolean => error instanceof JetStreamApiError && error.code === WRONG_LAST_MSG_ID;

/**
 * A failure a server restart explains: no answer (a timeout, a request lost with the connection) or
 * no JetStream yet (no responders while the server starts). An answer that refuses is not one.
 */
const isOutage = (error: unknown): boolean =>
  error instanceof Error && ["TimeoutError", "RequestError", "NoResponders", "JetStreamNotEnabled", "ConnectionError", "JetStreamStatusError"].includes(error.name);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const decoder = new TextDecoder();

/** Bodies up to this size go inline in the KV entry (bounded by half the server's max_payload). */
const INLINE_MAX = 256 * 1024;

const isPointer = (value: unknown): value is SnapshotPointer =>
  typeof value === "object" && value !== null && typeof (value as { object?: unknown }).object === "string";

export class JetStreamSnapshotStore implements SnapshotStore {
  /** The episode id. */
  readonly location: string;
  private readonly buckets: () => Promise<SnapshotBuckets>;
  private readonly prefix: string;
  private readonly inlineMax: number;
  private readonly nc: NatsConnection;
  private readonly outageMs: number;
  /** The `latest` entry as this store last wrote or read it: a put tries a compare-and-set on it first. */
  private latestSeen: { readonly pointer: LatestPointer; readonly revision: number } | null = null;

  /**
   * `buckets` is shared by the stores of one namespace (see jetStreamSnapshotStores); by default
   * this store opens its own. `outageMs`: how long a put retries while the server does not answer
   * (default: the connection's outage window, as long as a log publish retries, so an outage the log
   * survives does not end the run at its next snapshot).
   */
  constructor(nc: NatsConnection, namespace: string, episode: string, buckets?: () => Promise<SnapshotBuckets>, outageMs = outageOf(nc)) {
    if (episode.length === 0) throw new Error("snapshot store: the episode id is empty");
    this.location = episode;
    this.nc = nc;
    this.outageMs = outageMs;
    this.prefix = kvKey(episode);
    this.buckets = buckets ?? lazyBuckets(nc, namespace);
    this.inlineMax = Math.min(INLINE_MAX, Math.floor((nc.info?.max_payload ?? 1024 * 1024) / 2));
  }

  private objectOf(key: string): string {
    return kvKey(`${this.location}/${key}`);
  }

  private pointerKey(key: string): string {
    return `${this.prefix}.${key}`;
  }

  async put(snapshot: EpisodeSnapshot): Promise<string> {
    const key = checkKey(snapshot.stateHash);
    const deadline = performance.now() + this.outageMs;
    let last = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.putOnce(snapshot, key);
      } catch (error) {
        // A closed connection never answers again; anything but an outage is not retried. Past the
        // window, one more try when JetStream answers (the server came back just then).
        if (!isOutage(error) || this.nc.isClosed()) throw error;
        if (last || (performance.now() >= deadline && !(await jetStreamAnswers(this.nc, deadline)))) throw new NatsWriteLost(this.location, `the snapshot of tick ${snapshot.tick} (state ${key})`, error);
        last = performance.now() >= deadline;
        if (!last) await sleep(Math.min(1000, 100 * 2 ** attempt, deadline - performance.now()));
      }
    }
  }

  private async putOnce(snapshot: EpisodeSnapshot, key: string): Promise<string> {
    const { bodies, index, indexName, js } = await this.buckets();
    const text = snapshotJson(snapshot);
    const next: LatestPointer = { key, tick: snapshot.tick };
    if (Buffer.byteLength(text, "utf8") <= this.inlineMax) {
      // Content-addressed: writing the same state again writes the same bytes.
      if (await this.putInline(js, indexName, key, text, next)) return key;
    } else if ((await index.get(this.pointerKey(key)))?.operation !== "PUT") {
      const object = this.objectOf(key);
      const body = Buffer.from(text, "utf8");
      await bodies.putBlob({ name: object }, body);
      const pointer: SnapshotPointer = { object, tick: snapshot.tick, seq: snapshot.seq, bytes: body.length };
      await index.put(this.pointerKey(key), JSON.stringify(pointer));
    }
    // Also on a re-put: a crash between the snapshot and `latest` must not leave `latest` behind.
    await this.pointTo(index, next);
    return key;
  }

  /**
   * Puts an inline snapshot's entry and, in the same round trip, moves `latest` to it: the `latest`
   * write goes right behind the entry's and expects both `latest` at the revision this store last
   * saw (none: it creates it) and the entry to be the bucket's last message (its msg id). So it
   * lands only when the entry landed just before it, as if it had waited for the entry's ack; a
   * sweep's episode takes a few snapshots, and each round trip costs the server a wake-up.
   * Returns false when `latest` is still to be moved (another write came in between, another
   * store moved it, or it is deleted): the caller does it the usual way, the entry being stored.
   */
  private async putInline(js: JetStreamClient, indexName: string, key: string, text: string, next: LatestPointer): Promise<boolean> {
    const entry = `$KV.${indexName}.${this.pointerKey(key)}`;
    const seen = this.latestSeen;
    if (seen !== null && passes(seen.pointer, next)) {
      await js.publish(entry, text);
      return true;
    }
    const msgID = nuid.next();
    const [stored, moved] = await Promise.allSettled([
      js.publish(entry, text, { msgID }),
      js.publish(`$KV.${indexName}.${this.prefix}.latest`, JSON.stringify(next), { expect: { lastMsgID: msgID, lastSubjectSequence: seen?.revision ?? 0 } }),
    ]);
    if (stored.status === "rejected") throw stored.reason;
    if (moved.status === "fulfilled") {
      this.latestSeen = { pointer: next, revision: moved.value.seq };
      return true;
    }
    if (isConflict(moved.reason) || isNotRightBehind(moved.reason)) return false;
    throw moved.reason;
  }

  /** Moves `latest` to this snapshot unless it already points at a later tick (compare-and-set). */
  private async pointTo(index: KV, next: LatestPointer): Promise<void> {
    const latestKey = `${this.prefix}.latest`;
    const value = JSON.stringify(next);
    // The usual case, one writer per episode: the entry is as this store left it, so the
    // compare-and-set needs no read first. A conflict means someone else moved it: read and retry.
    // A store's first put (a new episode, most of a sweep's) tries to create the entry instead of
    // reading it first: one request less per episode. It conflicts only when the entry exists.
    const seen = this.latestSeen;
    try {
      if (seen === null) {
        this.latestSeen = { pointer: next, revision: await index.create(latestKey, value) };
        return;
      }
      if (passes(seen.pointer, next)) return;
      this.latestSeen = { pointer: next, revision: await index.update(latestKey, value, seen.revision) };
      return;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    for (let attempt = 0; ; attempt++) {
      const entry = await index.get(latestKey);
      // A damaged entry is replaced, as the file store replaces an unreadable pointer: this snapshot is complete.
      const current = entry?.operation === "PUT" ? latestOf(entry) : null;
      if (current !== null && entry !== null) this.latestSeen = { pointer: current, revision: entry.revision };
      if (current !== null && passes(current, next)) return;
      try {
        const revision = entry === null ? await index.create(latestKey, value) : await index.update(latestKey, value, entry.revision);
        this.latestSeen = { pointer: next, revision };
        return;
      } catch (error) {
        // Another writer moved it: look again. Anything else (or endless contention) is an error.
        if (!isConflict(error) || attempt >= 20) throw error;
      }
    }
  }

  async get(key: string): Promise<EpisodeSnapshot | null> {
    checkKey(key);
    const { bodies, bodiesName, index, indexName } = await this.buckets();
    const entry = await index.get(this.pointerKey(key));
    if (entry === null || entry.operation !== "PUT") return null;
    let value: unknown;
    const entryWhere = `KV bucket '${indexName}', key '${this.pointerKey(key)}'`;
    try {
      value = entry.json<unknown>();
    } catch (error) {
      throw new SnapshotDamaged({ where: entryWhere, reason: `snapshot is not valid JSON (${messageOf(error)})` });
    }
    if (!isPointer(value)) return checked(value, key, entryWhere);
    const where = `object store '${bodiesName}', object '${value.object}'`;
    const body = await bodies.getBlob(value.object);
    if (body === null) throw new SnapshotDamaged({ where, reason: `missing, though '${indexName}' points to it for snapshot ${key}` });
    let snapshot: unknown;
    try {
      snapshot = JSON.parse(decoder.decode(body));
    } catch (error) {
      throw new SnapshotDamaged({ where, reason: `snapshot is not valid JSON (${messageOf(error)})` });
    }
    return checked(snapshot, key, where);
  }

  async has(key: string): Promise<boolean> {
    checkKey(key);
    const { index } = await this.buckets();
    return (await index.get(this.pointerKey(key)))?.operation === "PUT";
  }

  async latest(): Promise<string | null> {
    const { index } = await this.buckets();
    const entry = await acrossOutage(this.nc, () => index.get(`${this.prefix}.latest`));
    if (entry?.operation !== "PUT") return null;
    const current = latestOf(entry);
    // Named as the file store names its pointer file: resume falls back to the log's committed ticks.
    if (current === null) throw new SnapshotDamaged({ where: `KV bucket '${(await this.buckets()).indexName}', key '${this.prefix}.latest'`, reason: DAMAGED_POINTER });
    return current.key;
  }
}

/** A `latest` entry's pointer, or null when it is not a {key, tick} object with a hash for its key. */
function latestOf(entry: KvEntry): LatestPointer | null {
  try {
    return pointerOf(entry.json<unknown>());
  } catch {
    return null;
  }
}

/** A `latest` that already holds this snapshot or a later tick stays. */
function passes(current: LatestPointer, next: LatestPointer): boolean {
  return current.tick > next.tick || (current.tick === next.tick && current.key === next.key);
}

function checked(snapshot: unknown, key: string, where: string): EpisodeSnapshot {
  if (snapshot === null || typeof snapshot !== "object" || (snapshot as EpisodeSnapshot).stateHash !== key) {
    throw new SnapshotDamaged({ where, reason: `holds the snapshot of state ${String((snapshot as { stateHash?: unknown } | null)?.stateHash)}, not ${key}` });
  }
  return snapshot as EpisodeSnapshot;
}

/** Opens the buckets on first use and shares them; a failed open is retried by the next call. */
function lazyBuckets(nc: NatsConnection, namespace: string): () => Promise<SnapshotBuckets> {
  let opening: Promise<SnapshotBuckets> | null = null;
  return () => {
    if (opening === null) {
      // Opened at a run's start or resume: retried while the server does not answer, for the outage window.
      const attempt = acrossOutage(nc, () => openSnapshotBuckets(nc, namespace));
      opening = attempt;
      attempt.catch(() => {
        if (opening === attempt) opening = null;
      });
    }
    return opening;
  };
}

/** The SnapshotStores of a backend over JetStream: `at(location)` is the store of episode `location`. */
export function jetStreamSnapshotStores(nc: NatsConnection, namespace: string): SnapshotStores {
  const buckets = lazyBuckets(nc, namespace);
  return { at: (location) => new JetStreamSnapshotStore(nc, namespace, location, buckets) };
}
