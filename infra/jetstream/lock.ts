// The writer lock (DESIGN §7): one KV entry per episode in the namespace's lock bucket
// (pt_locks_<ns>), taken with kv.create, renewed while its writer lives and expiring when it died,
// so a second sequencer is rejected (WriterLocked) and a killed writer's episode can be resumed.
import { hostname } from "node:os";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { WriterLocked, type WriterFence } from "../eventStore.ts";
import { acrossOutage, isNatsOutage, kvKey, natsName, outageOf, subjects } from "../nats.ts";
import { ApiCode, isApiError } from "./errors.ts";
import { checkReplicas, creating, replicasToCreate } from "./replicas.ts";
import type { JetStreamStoreOptions } from "./options.ts";
import { contextOf, managerOf, whereOf, type Context } from "./streams.ts";
import { MIN_LOCK_TTL_MS } from "../natsSettings.ts";

export const DEFAULT_LOCK_TTL_MS = 10_000;
// The shortest writer-lock ttl lives in natsSettings.ts, light enough for the CLI's flag parsing.
export { MIN_LOCK_TTL_MS };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface LockBucket {
  readonly kv: KV;
  /** The bucket's max_age: the first creator's ttl wins, an existing bucket is used as it is (only `setLockTtl` changes it). */
  readonly ttlMs: number;
}

function lockBucket(ctx: Context, ttlMs: number): Promise<LockBucket> {
  let bucket = ctx.locks.get(ttlMs);
  if (bucket === undefined) {
    const pending = (async () => {
      const name = natsName("pt_locks", ctx.namespace);
      const kv = await creating(ctx.nc, `KV_${name}`, () => new Kvm(ctx.nc).create(name, { ttl: ttlMs, replicas: replicasToCreate(ctx.nc) }));
      const status = await kv.status();
      checkReplicas(ctx.nc, `KV_${name}`, status.replicas);
      const actual = status.ttl;
      return { kv, ttlMs: actual > 0 ? actual : ttlMs };
    })();
    ctx.locks.set(ttlMs, pending);
    pending.catch(() => { if (ctx.locks.get(ttlMs) === pending) ctx.locks.delete(ttlMs); });
    bucket = pending;
  }
  return bucket;
}

/** What `setLockTtl` found and left: the bucket's ttl before (null: created now) and the one in force. */
export interface LockTtl {
  readonly bucket: string;
  readonly beforeMs: number | null;
  readonly ttlMs: number;
}

/**
 * A writer-lock ttl asked for explicitly (`worker --lock-ttl`). A missing bucket is created with
 * it; an existing one is set to it, raised or lowered: held locks are renewed every
 * MIN_LOCK_TTL_MS / 3 whatever the ttl, so they outlive a lowered one too. The caller says which
 * happened.
 */
export async function setLockTtl(nc: NatsConnection, namespace: string, ttlMs: number): Promise<LockTtl> {
  if (!(ttlMs >= MIN_LOCK_TTL_MS)) throw new RangeError(`a writer-lock ttl is at least ${MIN_LOCK_TTL_MS} ms, got ${ttlMs}`);
  const ctx = contextOf(nc, namespace);
  const bucket = natsName("pt_locks", namespace);
  const jsm = await managerOf(ctx);
  const stream = `KV_${bucket}`; // the KV bucket's stream
  let beforeMs: number;
  let duplicateWindow: number;
  try {
    const { config } = (await jsm.streams.info(stream));
    beforeMs = config.max_age / 1_000_000;
    duplicateWindow = config.duplicate_window;
  } catch (error) {
    if (!isApiError(error, ApiCode.StreamNotFound)) throw error;
    return { bucket, beforeMs: null, ttlMs: (await lockBucket(ctx, ttlMs)).ttlMs };
  }
  if (beforeMs === ttlMs) return { bucket, beforeMs, ttlMs };
  // The server refuses a duplicate window longer than max_age (a lower ttl shortens it too).
  await jsm.streams.update(stream, { max_age: ttlMs * 1_000_000, duplicate_window: Math.min(duplicateWindow, ttlMs * 1_000_000) });
  ctx.locks.clear(); // buckets opened before know the old ttl
  return { bucket, beforeMs, ttlMs };
}

export interface LockValue {
  readonly owner: string;
  readonly since: string;
}

/** Who holds a lock entry, or null when the entry is not a held lock. */
function holderOf(entry: KvEntry | null): LockValue | null {
  if (entry === null || entry.operation !== "PUT") return null;
  try {
    const value = entry.json<Partial<LockValue>>();
    return { owner: String(value.owner ?? "unknown owner"), since: String(value.since ?? "unknown") };
  } catch {
    return { owner: entry.string(), since: "unknown" };
  }
}

/**
 * Who holds an episode's writer lock now, or null: nobody is writing it (its writer finished,
 * or died and its lock expired; or none ever wrote in this namespace).
 */
export async function writerOf(nc: NatsConnection, namespace: string, episode: string): Promise<LockValue | null> {
  const kv = await new Kvm(nc).open(natsName("pt_locks", namespace));
  try {
    return holderOf(await kv.get(kvKey(episode)));
  } catch (error) {
    if (isApiError(error, ApiCode.StreamNotFound)) return null;
    throw error;
  }
}

export class WriterLock {
  /** The revision the lock was acquired at: unique per acquisition (msg ids carry it). */
  readonly epoch: number;
  revision: number;
  /** Set when the lock was lost: someone else holds it, or it expired and was taken. */
  lost: string | null = null;
  /** Why the writer fenced itself, when it did (with `lost`). */
  fence: WriterFence | null = null;
  /**
   * When the renewal timer last ran (monotonic ms). A gap of a ttl or more means the event loop
   * was stopped (the process paused): the entry may have expired and been taken meanwhile, and
   * nothing this writer holds can say otherwise before its next publish lands, so it stops.
   */
  private lastRun = performance.now();
  private readonly ttlMs: number;
  private readonly kv: KV;
  private readonly key: string;
  private readonly value: string;
  private timer: NodeJS.Timeout | null;
  private renewing: Promise<void> | null = null;
  private readonly nc: NatsConnection;

  constructor(nc: NatsConnection, kv: KV, key: string, value: string, revision: number, ttlMs: number) {
    this.nc = nc;
    this.kv = kv;
    this.key = key;
    this.value = value;
    this.epoch = revision;
    this.revision = revision;
    this.ttlMs = ttlMs;
    // Every third of the shortest ttl a bucket may be given, not of this one's: a lowered ttl
    // (`setLockTtl`) must not let a held lock expire between renewals.
    this.timer = setInterval(() => this.renew(), Math.max(50, Math.floor(Math.min(ttlMs, MIN_LOCK_TTL_MS) / 3)));
    this.timer.unref();
  }

  /**
   * Fences this writer when its renewal timer has not run for a ttl or more (it was paused past
   * its lock's ttl): checked by the renewal itself and before every append and publish, whichever
   * runs first after the pause (docs/distributed.md, "Fencing").
   */
  checkPaused(): void {
    if (this.lost !== null || this.timer === null) return;
    const gap = performance.now() - this.lastRun;
    if (gap < this.ttlMs) return;
    this.lost = `its writer lock may have expired: this writer was paused for ${(gap / 1000).toFixed(1)} s, past the lock's ${this.ttlMs / 1000} s ttl`;
    this.fence = "paused-past-ttl";
    this.stop();
  }

  private renew(): void {
    this.checkPaused();
    this.lastRun = performance.now();
    if (this.renewing !== null || this.lost !== null) return;
    if (this.nc.isClosed()) {
      // The connection is gone for good: nobody renews, and the lock expires on the server.
      this.lost = "its NATS connection was closed";
      this.stop();
      return;
    }
    this.renewing = this.kv
      .update(this.key, this.value, this.revision)
      .then(
        (revision) => { this.revision = revision; },
        async (error: unknown) => {
          // A transient failure (disconnect, timeout) is retried at the next interval.
          if (!isApiError(error, ApiCode.StreamWrongLastSequence, ApiCode.StreamWrongLastSequenceUnknown)) return;
          await this.recover();
        },
      )
      .finally(() => { this.renewing = null; });
  }

  /**
   * The entry's revision is not the one we hold. Only another holder means the lock is lost: after
   * a server restart it is usually our own renewal that landed with its reply lost (adopt its
   * revision), or the entry expired while nobody could renew it (take it again: the server's fence
   * on every append still refuses this writer if another one appended meanwhile). A read that fails
   * is decided at the next interval, never taken for an expiry.
   */
  private async recover(): Promise<void> {
    let entry: KvEntry | null;
    try {
      entry = await this.kv.get(this.key);
    } catch {
      return;
    }
    const holder = holderOf(entry);
    if (holder !== null && entry !== null && entry.string() === this.value) {
      this.revision = entry.revision;
      return;
    }
    if (holder === null) {
      try {
        this.revision = await this.kv.create(this.key, this.value);
        return;
      } catch (error) {
        if (!isApiError(error, ApiCode.StreamWrongLastSequence, ApiCode.StreamWrongLastSequenceUnknown)) return;
      }
    }
    const now = holder ?? holderOf(await this.kv.get(this.key).catch(() => null));
    if (now === null) return; // gone again: decided at the next interval
    this.lost = `its writer lock was taken over by ${now.owner} (since ${now.since})`;
    this.fence = "lock-taken-over";
    this.stop();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Deletes the entry if it is still ours. `awaited` false: the delete is sent, not waited for — the
   * server stopped answering this writer, and waiting for its answer only delayed the command's
   * exit; a delete that never lands leaves a lock that expires after the ttl.
   */
  async release(awaited = true): Promise<void> {
    this.stop();
    if (awaited) await this.renewing;
    if (this.lost !== null) return;
    // Only if still ours: a lock taken over meanwhile has another revision.
    const deleted = this.kv.delete(this.key, { previousSeq: this.revision }).catch(() => undefined);
    if (awaited) await deleted;
  }
}

/** Takes an episode's writer lock; while another holds it, retries for wait(bucket ttl) ms, then fails. */
export async function acquireLock(ctx: Context, episode: string, ttlMs: number, wait: (ttlMs: number) => number, onWait?: JetStreamStoreOptions["onLockWait"]): Promise<WriterLock> {
  // Every request is retried while the server does not answer, for the outage window.
  const bucket = await acrossOutage(ctx.nc, () => lockBucket(ctx, ttlMs));
  const { kv } = bucket;
  const key = kvKey(episode);
  const value = JSON.stringify({ owner: `${hostname()}:${process.pid}`, since: new Date().toISOString() } satisfies LockValue);
  const started = Date.now();
  let deadline = started + wait(bucket.ttlMs);
  let told = false;
  let unanswered: number | null = null;
  for (;;) {
    try {
      const revision = await kv.create(key, value);
      return new WriterLock(ctx.nc, kv, key, value, revision, bucket.ttlMs);
    } catch (error) {
      // A create left unanswered may have landed: tried again, it conflicts, and the entry holds this value.
      if (isNatsOutage(error) && !ctx.nc.isClosed() && (unanswered ??= performance.now()) + outageOf(ctx.nc) > performance.now()) {
        await sleep(250);
        continue;
      }
      if (!isApiError(error, ApiCode.StreamWrongLastSequence, ApiCode.StreamWrongLastSequenceUnknown)) throw error;
    }
    const entry = await acrossOutage(ctx.nc, () => kv.get(key));
    if (unanswered !== null && entry !== null && entry.operation === "PUT" && entry.string() === value) return new WriterLock(ctx.nc, kv, key, value, entry.revision, bucket.ttlMs);
    const held = holderOf(entry);
    if (held === null) {
      // Released or expired meanwhile: try again (briefly, in case the bucket disagrees with itself).
      if (Date.now() >= deadline + 2000) throw new Error(`episode ${episode}: cannot take the writer lock ${key} in ${natsName("pt_locks", ctx.namespace)}`);
      await sleep(10);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new WriterLocked(episode, `${held.owner}, since ${held.since}`, whereOf(ctx.stream, subjects.log(ctx.namespace, episode)));
    }
    if (!told) {
      told = true;
      // Waiting out a holder: by the bucket's ttl now, which `setLockTtl` may have changed since it was opened.
      const ttl = await kv.status().then((st) => st.ttl, () => bucket.ttlMs);
      deadline = started + wait(ttl > 0 ? ttl : bucket.ttlMs);
      onWait?.({ episode, holder: `${held.owner}, since ${held.since}`, waitMs: Math.max(0, deadline - Date.now()) });
    }
    await sleep(Math.min(250, Math.max(10, deadline - Date.now())));
  }
}
