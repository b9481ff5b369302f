// JetStream event store (DESIGN §7): one stream per namespace, one subject per episode log
// (pt.<ns>.log.<episode>), the same record lines and hash chain as the embedded file store.
// - The unit on the wire is a commit, not a record: append() seals records locally (no network);
//   commit() (end of tick) publishes the tick's record lines joined by "\n" as one message (several
//   when a commit exceeds 512 KB), one after another, each awaiting the previous ack. Per-message
//   work on the server and in the client is what limits a sweep, so this is the fast path. A failed
//   publish is retried once with the same Nats-Msg-Id (<episode>:<first>-<last>:<epoch>; dedupe
//   makes that safe), and the stream must have kept the messages in order.
// - Fencing, three ways: expected seq in process (SequenceConflict); a writer lock in a KV bucket
//   (a second sequencer is rejected; a killed writer's lock expires); and on the server, EVERY
//   publish expects the subject's last stream seq (the previous ack's), so a writer whose view is
//   stale is rejected by JetStream itself and nothing of its commit lands after the intruder.
// - A process killed before commit loses only that tick's unpublished records; resume re-runs them.
// - Reading never modifies a log; it checks what scanLog checks (JSON, seq, episode, hash chain,
//   catalogue) for every line of every message and names the stream, subject, stream seq and
//   record seq of any damage. A read uses a private ephemeral pull consumer driven over one
//   subscription; follow uses an ordered consumer, replaced from the next stream seq when it
//   stalls (a server restart can leave nats.js's own one waiting for ever).
// - Resuming cuts a damaged tail (gap, duplicate, broken chain, bad JSON) from the first damaged
//   message on (a message is kept whole or cut whole): the cut messages are republished verbatim
//   to pt.<ns>.cut.<episode>, then deleted from the log subject (nothing is thrown away).
// - nats-server 2.9 (file storage) forgets a subject's last message once its last messages are
//   deleted (until the next publish): emptiness is judged by the subject's message count, and the
//   fencing expectation is taken from what the server itself reports (see serverLastSeq).
import { hostname } from "node:os";
import { Cause, Effect, Exit, Layer } from "effect";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, JetStreamApiError, RetentionPolicy, StorageType, type ApiError, type Consumer, type JetStreamClient, type JetStreamManager, type PubAck } from "@nats-io/jetstream";
import { Kvm, type KV, type KvEntry } from "@nats-io/kv";
import { createInbox, headers, nuid, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { InvalidPayload, LogCorrupted, SequenceConflict, TornTail, UnknownEventType, type LogError } from "../events/errors.ts";
import { catalogueProblem, isKnownEventType, versionOf } from "../events/catalogue.ts";
import { sha256Chain } from "../events/canonical.ts";
import { expectedHash, GENESIS_HASH, seal, type Draft, type LogRecord } from "../events/record.ts";
import { EpisodeExists, StorageFailed, WriterLocked, type AppendOptions, type EventStore, type FsyncPolicy, type Head, type ReadOptions } from "./eventStore.ts";
import { recordOrNull, type CreateOptions, type LogEnds, type ScanResult } from "./fileEventStore.ts";
import { EventStores } from "./layers.ts";
import { isJetStreamStorageFull, isNatsTimeout, kvKey, natsName, NatsReadStalled, NatsWriteLost, subjects } from "./nats.ts";
import { MIN_LOCK_TTL_MS } from "./natsSettings.ts";

export { MIN_LOCK_TTL_MS };

const DEFAULT_LOCK_TTL_MS = 10_000;
const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;
const WRONG_LAST_SEQUENCE = 10071;
const WRONG_LAST_SEQUENCE_UNKNOWN = 10164;
const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;
/** With no message for this long, a reader re-checks where the subject ends (a tail may have been cut). */
const READ_IDLE_MS = 2000;
/** Following: how often a waiting follow checks the subject for messages its consumer has not delivered. */
const FOLLOW_STALL_MS = READ_IDLE_MS;
/** A read gives up after this many idle periods in a row. */
const READ_STALLS = 5;
/** At most this many messages per pull while reading (two pulls in flight), and the refill step. */
const PULL_BATCH = 1024;
/**
 * Bytes a reader lets the server send ahead of what it has handled. Pulls are sized by the largest
 * message seen so far (a read starts with small pulls): asking for 2 × 1,024 messages of a large
 * town's ticks (~350 KB each) overran the client's 64 MB pending limit, and the server cut the
 * reader off as a slow consumer, so large logs could not be read back.
 */
const READ_WINDOW_BYTES = 8 * 1024 * 1024;
const DEFAULT_ACK_TIMEOUT_MS = 5000;
/** A commit's records go in messages of at most this many bytes (the server's max_payload is 1 MB). */
const MAX_BODY = 512 * 1024;
const TEXT = new TextDecoder();

export interface JetStreamStoreOptions {
  /** Writer lock time-to-live (the lock bucket's max_age), renewed every ttl/3. Default 10 s. */
  readonly lockTtlMs?: number;
  /** A commit gives up waiting for a message's ack after this long, then retries it once. Default 5 s. */
  readonly ackTimeoutMs?: number;
  /**
   * Told once when a resume finds the episode's writer lock held and starts waiting (up to
   * `waitMs`) for it to expire: the holder may be a killed writer, or a live one (then it fails).
   */
  readonly onLockWait?: (notice: { readonly episode: string; readonly holder: string; readonly waitMs: number }) => void;
}

export type JetStreamCreateOptions = CreateOptions & JetStreamStoreOptions;

export interface JetStreamReadOptions extends ReadOptions {
  /** Bytes a read lets the server send ahead (default 8 MB, against the server's 64 MB per-client limit); tests lower it. */
  readonly windowBytes?: number;
}

/** Raised when this writer lost its lock or the server rejected its view of the log. */
export class StaleWriter extends SequenceConflict {
  detail = "";
  override get message(): string {
    return `episode ${this.episode}: ${this.detail}; another writer (sequencer) appended to this episode, or took it over`;
  }
}

function staleWriter(episode: string, expected: number, actual: number, detail: string): StaleWriter {
  const error = new StaleWriter({ episode, expected, actual });
  error.detail = detail;
  return error;
}

const isApiError = (error: unknown, ...codes: number[]): boolean => error instanceof JetStreamApiError && codes.includes(error.code);
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Per-connection, per-namespace context: clients, the log stream, the lock bucket.

interface Context {
  readonly nc: NatsConnection;
  readonly namespace: string;
  readonly stream: string;
  readonly js: JetStreamClient;
  jsm: Promise<JetStreamManager> | null;
  ready: Promise<string> | null;
  readonly locks: Map<number, Promise<LockBucket>>;
  acks: AckInbox | null;
}

const contexts = new WeakMap<NatsConnection, Map<string, Context>>();

function contextOf(nc: NatsConnection, namespace: string): Context {
  let byNs = contexts.get(nc);
  if (byNs === undefined) contexts.set(nc, (byNs = new Map()));
  let ctx = byNs.get(namespace);
  if (ctx === undefined) {
    subjects.log(namespace, "x"); // validates the namespace token
    ctx = { nc, namespace, stream: natsName("PT_LOG", namespace), js: jetstream(nc), jsm: null, ready: null, locks: new Map(), acks: null };
    byNs.set(namespace, ctx);
  }
  return ctx;
}

function managerOf(ctx: Context): Promise<JetStreamManager> {
  if (ctx.jsm === null) {
    const pending = jetstreamManager(ctx.nc);
    ctx.jsm = pending;
    pending.catch(() => { if (ctx.jsm === pending) ctx.jsm = null; });
  }
  return ctx.jsm;
}

/** Creates the namespace's log stream if it is missing (idempotent; tolerates a concurrent creator). */
export function ensureLogStream(nc: NatsConnection, namespace: string): Promise<string> {
  const ctx = contextOf(nc, namespace);
  if (ctx.ready === null) {
    const pending = (async () => {
      const jsm = await managerOf(ctx);
      try {
        await jsm.streams.info(ctx.stream);
        return ctx.stream;
      } catch (error) {
        if (!isApiError(error, STREAM_NOT_FOUND)) throw error;
      }
      try {
        await jsm.streams.add({
          name: ctx.stream,
          subjects: [`pt.${namespace}.log.>`, `pt.${namespace}.cut.>`],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          duplicate_window: DUPLICATE_WINDOW_NS,
        });
      } catch (error) {
        // Another process may have created it first (name in use, or a racing create).
        if (!isApiError(error, STREAM_NAME_IN_USE)) await jsm.streams.info(ctx.stream).catch(() => Promise.reject(error));
      }
      return ctx.stream;
    })();
    ctx.ready = pending;
    pending.catch(() => { if (ctx.ready === pending) ctx.ready = null; });
  }
  return ctx.ready;
}

interface LockBucket {
  readonly kv: KV;
  /** The bucket's max_age: the first creator's ttl wins, an existing bucket is used as it is (only `setLockTtl` changes it). */
  readonly ttlMs: number;
}

function lockBucket(ctx: Context, ttlMs: number): Promise<LockBucket> {
  let bucket = ctx.locks.get(ttlMs);
  if (bucket === undefined) {
    const pending = (async () => {
      const kv = await new Kvm(ctx.nc).create(natsName("pt_locks", ctx.namespace), { ttl: ttlMs });
      const actual = (await kv.status()).ttl;
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
    if (!isApiError(error, STREAM_NOT_FOUND)) throw error;
    return { bucket, beforeMs: null, ttlMs: (await lockBucket(ctx, ttlMs)).ttlMs };
  }
  if (beforeMs === ttlMs) return { bucket, beforeMs, ttlMs };
  // The server refuses a duplicate window longer than max_age (a lower ttl shortens it too).
  await jsm.streams.update(stream, { max_age: ttlMs * 1_000_000, duplicate_window: Math.min(duplicateWindow, ttlMs * 1_000_000) });
  ctx.locks.clear(); // buckets opened before know the old ttl
  return { bucket, beforeMs, ttlMs };
}

const whereOf = (stream: string, subject: string) => `jetstream:${stream}/${subject}`;

// ---------------------------------------------------------------------------------------------
// Checking records as they are read (the same checks as scanLog in the file store).

/** The hash the first record of a log chains from: genesis (or `fallback`), or a fork header's parent hash. */
function chainStart(first: LogRecord, fallback: string): string {
  if (first.type === "episode.forked") {
    const parentHash = (first.payload as { parentHash?: unknown }).parentHash;
    return typeof parentHash === "string" ? parentHash : fallback;
  }
  return fallback;
}

const HASH_KEY = ',"hash":"';

/**
 * Checks a record's hash against the text it was read from. Sealing writes the hashed body, then
 * `"hash"`, then `"meta"`; the body is the text up to the hash, so it is hashed without
 * re-serialising. The rest must be exactly hash and meta (nothing may override a body field);
 * anything else falls back to re-serialising the parsed record, as the file store does.
 */
function chainedHash(previousHash: string, text: string, record: LogRecord): string {
  // The last `,"hash":"` outside a string is the record's own unless meta has a "hash" key; then
  // the check below fails and the slow path decides.
  const at = text.lastIndexOf(HASH_KEY);
  const hashEnd = at + HASH_KEY.length + record.hash.length;
  if (at > 0 && text.startsWith(record.hash, at + HASH_KEY.length) && text.charCodeAt(hashEnd) === 34 /* " */) {
    const restOk = record.meta === undefined ? text.length === hashEnd + 2 && text.charCodeAt(hashEnd + 1) === 125 /* } */ : text.slice(hashEnd + 1) === `,"meta":${JSON.stringify(record.meta)}}`;
    if (restOk && sha256Chain(previousHash, text.slice(0, at) + "}") === record.hash) return record.hash;
  }
  return expectedHash(previousHash, record);
}

class ChainReader {
  readonly records: LogRecord[] = [];
  /** Stream seq of the last accepted message (0 when none). */
  lastStreamSeq = 0;
  private previousHash: string | null = null;
  private expectedSeq: number | null = null;
  private episode: string | null = null;
  private index = 0;
  private readonly where: string;
  private readonly validate: boolean;
  private readonly fallbackStart: string;

  constructor(where: string, validate: boolean, fallbackStart: string = GENESIS_HASH) {
    this.where = where;
    this.validate = validate;
    this.fallbackStart = fallbackStart;
  }

  private at(streamSeq: number): string {
    return `${this.where} (stream seq ${streamSeq})`;
  }

  /**
   * Checks the next message on the subject, a batch of record lines joined by "\n", and returns
   * its records. Throws a LogError naming stream seq and record seq; a message is taken whole or
   * not at all (after a throw the reader is as it was before the message).
   */
  acceptMessage(text: string, streamSeq: number): LogRecord[] {
    const out: LogRecord[] = [];
    const saved = { previousHash: this.previousHash, expectedSeq: this.expectedSeq, episode: this.episode, index: this.index };
    try {
      let start = 0;
      for (;;) {
        const end = text.indexOf("\n", start);
        out.push(this.check(end === -1 ? (start === 0 ? text : text.slice(start)) : text.slice(start, end), streamSeq));
        if (end === -1) break;
        start = end + 1;
      }
    } catch (error) {
      this.previousHash = saved.previousHash;
      this.expectedSeq = saved.expectedSeq;
      this.episode = saved.episode;
      this.index = saved.index;
      throw error;
    }
    for (const record of out) this.records.push(record);
    this.lastStreamSeq = streamSeq;
    return out;
  }

  /** Checks one record line (and advances the chain); throws a LogError naming stream seq and record seq. */
  private check(text: string, streamSeq: number): LogRecord {
    const line = ++this.index;
    let parsed: LogRecord;
    try {
      parsed = JSON.parse(text) as LogRecord;
    } catch {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq: this.expectedSeq, reason: `not valid JSON (expected the record with seq ${this.expectedSeq ?? 0} here)` });
    }
    const seq = typeof parsed === "object" && parsed !== null && typeof parsed.seq === "number" ? parsed.seq : null;
    if (seq === null || typeof parsed.type !== "string" || typeof parsed.hash !== "string" || typeof parsed.episode !== "string") {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: "not a log record (needs numeric seq and string type, episode and hash)" });
    }
    if (this.expectedSeq !== null && seq !== this.expectedSeq) {
      const why = seq < this.expectedSeq ? "records are reordered or duplicated" : "records are missing or reordered";
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `expected seq ${this.expectedSeq}, found ${seq}: ${why}` });
    }
    if (this.episode !== null && parsed.episode !== this.episode) {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `record belongs to episode '${parsed.episode}', log is '${this.episode}'` });
    }
    const previousHash = this.previousHash ?? chainStart(parsed, this.fallbackStart);
    const want = chainedHash(previousHash, text, parsed);
    if (want !== parsed.hash) {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `hash mismatch: the record was altered, or the chain before it was (recomputed ${want.slice(0, 12)}…, stored ${parsed.hash.slice(0, 12)}…)` });
    }
    if (this.validate) {
      if (!isKnownEventType(parsed.type)) throw new UnknownEventType({ file: this.at(streamSeq), seq, line, type: parsed.type });
      const problem = catalogueProblem(parsed.type, parsed.payload);
      if (problem !== null) throw new InvalidPayload({ file: this.at(streamSeq), seq, line, type: parsed.type, reason: problem });
    }
    this.previousHash = parsed.hash;
    this.expectedSeq = seq + 1;
    this.episode = parsed.episode;
    return parsed;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading a subject.

/**
 * Stream seq of the last message on a subject as the server sees it, or 0 for none (or no stream).
 * This is what `Nats-Expected-Last-Subject-Sequence` is checked against. nats-server 2.9 (file
 * storage) loses it when a subject's last messages are deleted, until the next publish, and then
 * reports none: callers must not take 0 to mean "empty" (see subjectCount).
 */
async function serverLastSeq(ctx: Context, subject: string): Promise<number> {
  const jsm = await managerOf(ctx);
  try {
    const last = await jsm.streams.getMessage(ctx.stream, { last_by_subj: subject });
    return last === null ? 0 : last.seq;
  } catch (error) {
    if (isApiError(error, STREAM_NOT_FOUND)) return 0;
    throw error;
  }
}

/**
 * The last record of an episode's log as stored (the last line of the last message on its subject),
 * unchecked, or null for none: one request, where a read would fetch the whole log.
 */
export async function lastJetStreamRecord(nc: NatsConnection, namespace: string, episode: string): Promise<LogRecord | null> {
  const ctx = contextOf(nc, namespace);
  const jsm = await managerOf(ctx);
  try {
    const last = await jsm.streams.getMessage(ctx.stream, { last_by_subj: subjects.log(namespace, episode) });
    if (last === null) return null;
    const text = last.string().trimEnd();
    return JSON.parse(text.slice(text.lastIndexOf("\n") + 1)) as LogRecord;
  } catch (error) {
    if (isApiError(error, STREAM_NOT_FOUND)) return null;
    throw error;
  }
}

/**
 * A JetStream log's two ends, as `peekLog` reads a file log's: the first line of its first message
 * and the last line of its last, unchecked (null where there is none, or it is not JSON). Two
 * requests however long the log, so a command checks its flags before it reads and replays it all.
 */
export async function peekJetStreamLog(nc: NatsConnection, namespace: string, episode: string): Promise<LogEnds> {
  const ctx = contextOf(nc, namespace);
  const jsm = await managerOf(ctx);
  const subject = subjects.log(namespace, episode);
  try {
    // next_by_subj from seq 0: the subject's first message (nats-server 2.9 has it; nats.js's type does not).
    const head = await jsm.streams.getMessage(ctx.stream, { seq: 0, next_by_subj: subject } as unknown as { seq: number });
    if (head === null) return { first: null, last: null, lastTick: null };
    const tail = await jsm.streams.getMessage(ctx.stream, { last_by_subj: subject });
    const headText = head.string();
    const tailText = (tail ?? head).string().trimEnd();
    const first = recordOrNull(headText.includes("\n") ? headText.slice(0, headText.indexOf("\n")) : headText);
    const last = recordOrNull(tailText.slice(tailText.lastIndexOf("\n") + 1));
    return { first, last, lastTick: typeof last?.tick === "number" ? last.tick : null };
  } catch (error) {
    if (isApiError(error, STREAM_NOT_FOUND)) return { first: null, last: null, lastTick: null };
    throw error;
  }
}

/** The ids of the episodes whose logs a namespace holds (none when it has no log stream). */
export async function jetStreamEpisodes(nc: NatsConnection, namespace: string): Promise<string[]> {
  const ctx = contextOf(nc, namespace);
  const jsm = await managerOf(ctx);
  const prefix = subjects.log(namespace, "_").slice(0, -1); // pt.<ns>.log.
  try {
    const info = await jsm.streams.info(ctx.stream, { subjects_filter: `${prefix}>` });
    return Object.keys(info.state.subjects ?? {}).map((s) => s.slice(prefix.length)).sort();
  } catch (error) {
    if (isApiError(error, STREAM_NOT_FOUND)) return [];
    throw error;
  }
}

/** How many messages a subject holds (0 when the stream is missing). */
async function subjectCount(ctx: Context, subject: string): Promise<number> {
  const jsm = await managerOf(ctx);
  try {
    const info = await jsm.streams.info(ctx.stream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  } catch (error) {
    if (isApiError(error, STREAM_NOT_FOUND)) return 0;
    throw error;
  }
}


/**
 * Delivers every message on `subject` in stream order to `onMessage(text, streamSeq, data)`, up
 * to the message that was last when reading started. An exception from `onMessage` stops reading
 * and rejects.
 *
 * It reads with a private ephemeral pull consumer (no acks, memory state, filter on the subject)
 * driven directly over one subscription: what an ordered consumer does for a read that starts at
 * the beginning and ends at a known message, without a wrapper object, an async iterator step
 * and reply-subject split per message. Order is checked (the consumer's delivery sequence must
 * not skip).
 */
async function readSubject(ctx: Context, subject: string, onMessage: (text: string, streamSeq: number, data: Uint8Array) => void, windowBytes = READ_WINDOW_BYTES): Promise<void> {
  const jsm = await managerOf(ctx);
  const name = `ptread_${nuid.next()}`;
  const inbox = createInbox();
  let finish!: (error?: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error?: unknown) => (error === undefined ? resolve() : reject(error));
  });
  let finished = false;
  const stopWith = (error?: unknown) => {
    if (finished) return;
    finished = true;
    finish(error);
  };
  // Where the read ends: the messages on the subject when the consumer was created (its pending
  // count; the subject's last seq is no guide on nats-server 2.9, see serverLastSeq).
  let count = Number.POSITIVE_INFINITY;
  let seen = 0;
  let sinceRefill = 0;
  // Until a tick has been seen (the first message is the small header), assume the largest message.
  const batchFor = (size: number) => Math.max(1, Math.min(PULL_BATCH, Math.floor(windowBytes / size)));
  let batch = batchFor(MAX_BODY);
  let largest = 1;
  const next = `${jsm.getOptions().apiPrefix ?? "$JS.API"}.CONSUMER.MSG.NEXT.${ctx.stream}.${name}`;
  const pull = (batch: number) => ctx.nc.publish(next, `{"batch":${batch},"expires":${READ_IDLE_MS * 10 * 1_000_000}}`, { reply: inbox });
  const sub = ctx.nc.subscribe(inbox, {
    callback: (error, m) => {
      if (finished) return;
      if (error !== null) return stopWith(error);
      const reply = m.reply;
      if (reply === undefined || reply === "") {
        // A status: 408 (a pull expired) or 100 (heartbeat) is harmless; anything else ends the read.
        const code = m.headers?.code ?? 0;
        if (code === 408 || code === 100) return;
        return stopWith(new Error(`reading ${whereOf(ctx.stream, subject)}: the consumer stopped (${code} ${m.headers?.description ?? ""})`));
      }
      try {
        // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
        const pendingAt = reply.lastIndexOf(".");
        const tsAt = reply.lastIndexOf(".", pendingAt - 1);
        const dseqAt = reply.lastIndexOf(".", tsAt - 1);
        const sseqAt = reply.lastIndexOf(".", dseqAt - 1);
        const streamSeq = Number(reply.slice(sseqAt + 1, dseqAt));
        if (Number(reply.slice(dseqAt + 1, tsAt)) !== ++seen) {
          throw new Error(`reading ${whereOf(ctx.stream, subject)}: message ${seen} of the read was not delivered (at stream seq ${streamSeq}); read again`);
        }
        const data = m.data;
        if (data.length > largest) largest = data.length;
        onMessage(TEXT.decode(data), streamSeq, data);
        if (seen >= count || reply.charCodeAt(pendingAt + 1) === 48 /* pending "0" */) return stopWith();
        if (++sinceRefill >= batch) {
          sinceRefill = 0;
          batch = batchFor(seen >= 2 ? largest : Math.max(largest, MAX_BODY));
          pull(batch);
        }
      } catch (error) {
        stopWith(error);
      }
    },
  });
  // If nothing arrives for a while: the tail may have been cut meanwhile (only resume does, under
  // the writer lock), so look again at how many messages the subject holds; or the pull requests
  // were lost (a reconnect), so ask again.
  let lastSeen = -1;
  let stalls = 0;
  const idle = setInterval(() => {
    if (seen !== lastSeen) {
      lastSeen = seen;
      stalls = 0;
      return;
    }
    if (++stalls > READ_STALLS) {
      stopWith(new NatsReadStalled(`reading ${whereOf(ctx.stream, subject)}: no message for ${(READ_STALLS * READ_IDLE_MS) / 1000} s after ${seen} of ${count} (is the server up?)`));
      return;
    }
    subjectCount(ctx, subject).then(
      (now) => {
        if (now <= seen) stopWith();
        else if (!finished) pull(2 * batch);
      },
      (error: unknown) => stopWith(error),
    );
  }, READ_IDLE_MS);
  let created = false;
  try {
    try {
      const info = await jsm.consumers.add(ctx.stream, {
        name,
        filter_subject: subject,
        deliver_policy: DeliverPolicy.All,
        ack_policy: AckPolicy.None,
        mem_storage: true,
        num_replicas: 1,
        inactive_threshold: 60_000_000_000,
      });
      created = true;
      count = info.num_pending;
    } catch (error) {
      if (!isApiError(error, STREAM_NOT_FOUND)) throw error;
      count = 0;
    }
    if (count === 0) return;
    pull(2 * batch);
    await done;
  } finally {
    clearInterval(idle);
    sub.unsubscribe();
    if (created) jsm.consumers.delete(ctx.stream, name).catch(() => undefined);
  }
}

/** Reads and checks a whole episode log (see scanLog): the ScanResult shape, never a torn tail. */
export async function scanJetStreamLog(nc: NatsConnection, namespace: string, episode: string, options: JetStreamReadOptions = {}): Promise<ScanResult> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, episode);
  const reader = new ChainReader(whereOf(ctx.stream, subject), options.validate ?? true);
  await readSubject(ctx, subject, (text, streamSeq) => { reader.acceptMessage(text, streamSeq); }, options.windowBytes);
  return { records: reader.records, torn: null, tornOffset: -1, lastFile: null };
}

/** Reads a log for replay/inspection; any damage is an error. A log with no records reads as []. */
export async function readJetStreamLog(nc: NatsConnection, namespace: string, episode: string, options: JetStreamReadOptions = {}): Promise<LogRecord[]> {
  return (await scanJetStreamLog(nc, namespace, episode, options)).records;
}

export interface FollowOptions extends JetStreamReadOptions {
  /** Ends the iteration (normally, without an error) when aborted. */
  readonly signal?: AbortSignal;
}

/**
 * Follows a log live: yields every record with seq ≥ fromSeq, in order, then keeps yielding new
 * ones as they are appended until the caller stops iterating (or the signal aborts). Damage is
 * thrown as a LogError.
 *
 * It reads with an ordered consumer, and replaces it when it stalls: after a server restart its
 * ephemeral consumer is gone, and nats.js's own recreation (3.4) can deliver one message and then
 * pull nothing more, for ever. Whenever the subject holds a message past the last one handled and
 * none has arrived for two checks in a row (FOLLOW_STALL_MS apart), a new ordered consumer starts
 * at the stream seq after that last message: no gap, no duplicate.
 */
export async function* followJetStreamLog(nc: NatsConnection, namespace: string, episode: string, fromSeq: number, options: FollowOptions = {}): AsyncIterable<LogRecord> {
  const { signal } = options;
  const aborted = () => signal?.aborted === true;
  if (aborted()) return;
  const ctx = contextOf(nc, namespace);
  await ensureLogStream(nc, namespace);
  const subject = subjects.log(namespace, episode);
  const reader = new ChainReader(whereOf(ctx.stream, subject), options.validate ?? true);
  // Pulls sized so the server never holds more than the read window for this client (see
  // READ_WINDOW_BYTES); by message count, as a pull bounded by bytes stalls on a message larger than its bound.
  const maxMessages = Math.max(1, Math.floor((options.windowBytes ?? READ_WINDOW_BYTES) / MAX_BODY));
  // Stream seq of the last message handled: a replacement consumer starts right after it.
  let handled = 0;
  for (let replacing = false; ; replacing = true) {
    const consumer = await orderedConsumerAfter(ctx, subject, handled, replacing, signal);
    if (consumer === null) return; // aborted while the server was away
    const messages = await consumer.consume({ max_messages: maxMessages });
    const onAbort = () => messages.stop();
    signal?.addEventListener("abort", onAbort, { once: true });
    // Since when the loop has been waiting for a message (null while the caller has one): a
    // caller busy with records is not a stall.
    let waitingSince: number | null = null;
    let behindAt = -1;
    let checking = false;
    let stalled = false;
    const watchdog = setInterval(() => {
      if (checking || waitingSince === null || Date.now() - waitingSince < FOLLOW_STALL_MS) return;
      checking = true;
      const at = handled;
      serverLastSeq(ctx, subject).then(
        (last) => {
          if (waitingSince === null || handled !== at || last <= at) behindAt = -1;
          else if (behindAt !== at) behindAt = at; // maybe just published: look once more
          else {
            stalled = true;
            messages.stop();
          }
        },
        () => undefined, // the server is away; look again at the next check
      ).finally(() => { checking = false; });
    }, FOLLOW_STALL_MS);
    try {
      if (aborted()) return;
      const iterator = messages[Symbol.asyncIterator]();
      for (;;) {
        waitingSince = Date.now();
        const next = await iterator.next();
        waitingSince = null;
        if (next.done === true) break;
        const m = next.value;
        if (m.seq <= handled) continue; // delivered again by a consumer nats.js recreated itself
        handled = m.seq;
        for (const record of reader.acceptMessage(m.string(), m.seq)) {
          if (record.seq >= fromSeq) yield record;
          if (aborted()) return;
        }
      }
    } finally {
      clearInterval(watchdog);
      signal?.removeEventListener("abort", onAbort);
      messages.stop();
      consumer.delete().catch(() => undefined);
    }
    // Ended without a stall: aborted, or the connection closed.
    if (!stalled || aborted()) return;
  }
}

/**
 * An ordered consumer on `subject` from the stream seq after `handled`. A replacement is asked
 * for until it is made (the server may still be starting up after a restart) or the signal aborts
 * (then null); a missing stream, or the first consumer's failure, is an error.
 */
async function orderedConsumerAfter(ctx: Context, subject: string, handled: number, replacing: boolean, signal: AbortSignal | undefined): Promise<Consumer | null> {
  for (;;) {
    try {
      return await ctx.js.consumers.get(ctx.stream, { filter_subjects: subject, opt_start_seq: handled + 1 });
    } catch (error) {
      if (!replacing || isApiError(error, STREAM_NOT_FOUND)) throw error;
    }
    const aborted = await new Promise<boolean>((resolve) => {
      if (signal?.aborted === true) return resolve(true);
      const onAbort = () => { clearTimeout(timer); resolve(true); };
      const timer = setTimeout(() => { signal?.removeEventListener("abort", onAbort); resolve(false); }, FOLLOW_STALL_MS);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    if (aborted) return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The writer lock.

interface LockValue {
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
    if (isApiError(error, STREAM_NOT_FOUND)) return null;
    throw error;
  }
}

class WriterLock {
  /** The revision the lock was acquired at: unique per acquisition (msg ids carry it). */
  readonly epoch: number;
  revision: number;
  /** Set when the lock was lost: someone else holds it, or it expired and was taken. */
  lost: string | null = null;
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
    // Every third of the shortest ttl a bucket may be given, not of this one's: a lowered ttl
    // (`setLockTtl`) must not let a held lock expire between renewals.
    this.timer = setInterval(() => this.renew(), Math.max(50, Math.floor(Math.min(ttlMs, MIN_LOCK_TTL_MS) / 3)));
    this.timer.unref();
  }

  private renew(): void {
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
          if (!isApiError(error, WRONG_LAST_SEQUENCE, WRONG_LAST_SEQUENCE_UNKNOWN)) return;
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
        if (!isApiError(error, WRONG_LAST_SEQUENCE, WRONG_LAST_SEQUENCE_UNKNOWN)) return;
      }
    }
    const now = holder ?? holderOf(await this.kv.get(this.key).catch(() => null));
    if (now === null) return; // gone again: decided at the next interval
    this.lost = `its writer lock was taken over by ${now.owner} (since ${now.since})`;
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
async function acquireLock(ctx: Context, episode: string, ttlMs: number, wait: (ttlMs: number) => number, onWait?: JetStreamStoreOptions["onLockWait"]): Promise<WriterLock> {
  const bucket = await lockBucket(ctx, ttlMs);
  const { kv } = bucket;
  const key = kvKey(episode);
  const value = JSON.stringify({ owner: `${hostname()}:${process.pid}`, since: new Date().toISOString() } satisfies LockValue);
  const started = Date.now();
  let deadline = started + wait(bucket.ttlMs);
  let told = false;
  for (;;) {
    try {
      const revision = await kv.create(key, value);
      return new WriterLock(ctx.nc, kv, key, value, revision, bucket.ttlMs);
    } catch (error) {
      if (!isApiError(error, WRONG_LAST_SEQUENCE, WRONG_LAST_SEQUENCE_UNKNOWN)) throw error;
    }
    const held = holderOf(await kv.get(key));
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

// ---------------------------------------------------------------------------------------------
// Moving a damaged tail to the cut subject.

interface RawMessage {
  readonly streamSeq: number;
  readonly data: Uint8Array;
}

async function cutMessages(ctx: Context, episode: string, messages: readonly RawMessage[]): Promise<number> {
  if (messages.length === 0) return 0;
  const cutSubject = subjects.cut(ctx.namespace, episode);
  const logSubject = subjects.log(ctx.namespace, episode);
  // Republished verbatim (never with the original Nats-Msg-Id: that would be swallowed as a duplicate).
  await Promise.all(
    messages.map((m) => {
      const h = headers();
      h.set("Pt-Cut-From", `${ctx.stream}/${logSubject}`);
      h.set("Pt-Cut-Stream-Seq", String(m.streamSeq));
      return ctx.js.publish(cutSubject, m.data, { msgID: `cut:${episode}:${m.streamSeq}`, headers: h });
    }),
  );
  const jsm = await managerOf(ctx);
  await Promise.all(messages.map((m) => jsm.streams.deleteMessage(ctx.stream, m.streamSeq, false)));
  return messages.reduce((n, m) => n + m.data.length, 0);
}

// ---------------------------------------------------------------------------------------------
// Publishing with acks collected on one subscription per connection and namespace: what
// nc.request does, without its per-request mux entry and the Error it constructs (with a stack)
// each time a request completes.

type Attempt = { readonly ack: PubAck; readonly error: null } | { readonly ack: null; readonly error: unknown };

class AckInbox {
  private readonly nc: NatsConnection;
  private readonly prefix: string;
  private readonly sub: Subscription;
  private readonly waiting = new Map<number, { readonly resolve: (a: Attempt) => void; readonly timer: NodeJS.Timeout; readonly subject: string }>();
  private next = 0;

  constructor(nc: NatsConnection) {
    this.nc = nc;
    this.prefix = createInbox();
    this.sub = nc.subscribe(`${this.prefix}.*`, { callback: (error, m) => { if (error === null) this.acked(m); } });
  }

  /** Publishes one message and resolves with its ack, or the error (a timeout after `timeoutMs`). */
  publish(subject: string, body: string, h: MsgHdrs, timeoutMs: number): Promise<Attempt> {
    const token = ++this.next;
    return new Promise<Attempt>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        resolve({ ack: null, error: new Error(`no ack within ${timeoutMs} ms`) });
      }, timeoutMs);
      this.waiting.set(token, { resolve, timer, subject });
      try {
        this.nc.publish(subject, body, { reply: `${this.prefix}.${token}`, headers: h });
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(token);
        resolve({ ack: null, error });
      }
    });
  }

  private acked(m: Msg): void {
    const token = Number(m.subject.slice(this.prefix.length + 1));
    const entry = this.waiting.get(token);
    if (entry === undefined) return; // timed out meanwhile
    this.waiting.delete(token);
    clearTimeout(entry.timer);
    if (m.data.length === 0) {
      entry.resolve({ ack: null, error: new Error(`no JetStream stream answered for ${entry.subject} (${m.headers?.code ?? "?"} ${m.headers?.description ?? "no responders"})`) });
      return;
    }
    try {
      const reply = m.json<PubAck & { error?: ApiError }>();
      entry.resolve(reply.error !== undefined ? { ack: null, error: new JetStreamApiError(reply.error) } : { ack: reply, error: null });
    } catch (error) {
      entry.resolve({ ack: null, error });
    }
  }

  get closed(): boolean {
    return this.sub.isClosed();
  }
}

function acksOf(ctx: Context): AckInbox {
  if (ctx.acks === null || ctx.acks.closed) ctx.acks = new AckInbox(ctx.nc);
  return ctx.acks;
}

// ---------------------------------------------------------------------------------------------
// The store.

/** One message of a commit: consecutive records, their lines joined by "\n". */
interface Outgoing {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly body: string;
}

class JetStreamEventStore implements EventStore {
  readonly episode: string;
  readonly location: string;
  private readonly ctx: Context;
  private readonly subject: string;
  private readonly lock: WriterLock;
  private readonly ackTimeoutMs: number;
  private readonly fsync: FsyncPolicy;
  private lastSeq: number;
  private lastHash: string;
  /** Stream seq the server holds as the subject's last (0: none): what the next message expects. */
  private lastSubjectSeq: number;
  /** Sealed, not yet published: the record lines (no trailing newline) from seq `pendingFirst` on. */
  private pending: string[] = [];
  private pendingFirst = 0;
  /** Commits run one after another (each publish expects where the previous one ended). */
  private committing: Promise<void> = Promise.resolve();
  private broken: Error | null = null;
  private closed = false;

  constructor(ctx: Context, location: string, episode: string, head: Head, lastSubjectSeq: number, lock: WriterLock, ackTimeoutMs: number, fsync: FsyncPolicy) {
    this.fsync = fsync;
    this.ctx = ctx;
    this.location = location;
    this.episode = episode;
    this.subject = subjects.log(ctx.namespace, location);
    this.lock = lock;
    this.ackTimeoutMs = ackTimeoutMs;
    this.lastSeq = head.seq;
    this.lastHash = head.hash;
    this.lastSubjectSeq = lastSubjectSeq;
  }

  head(): Head {
    return { seq: this.lastSeq, hash: this.lastHash };
  }

  private refuse(): void {
    if (this.closed) throw new Error(`event store for ${this.episode} is closed`);
    if (this.broken !== null) throw this.broken;
    if (this.lock.lost !== null) {
      this.broken = staleWriter(this.episode, this.lastSeq, this.lastSeq, `this writer is fenced: ${this.lock.lost}`);
      throw this.broken;
    }
  }

  async append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]> {
    this.refuse();
    if (options.expectedSeq !== this.lastSeq) {
      throw new SequenceConflict({ episode: this.episode, expected: options.expectedSeq, actual: this.lastSeq });
    }
    const sealed: LogRecord[] = new Array(drafts.length);
    const pending = this.pending;
    if (pending.length === 0) this.pendingFirst = this.lastSeq + 1;
    let seq = this.lastSeq;
    let hash = this.lastHash;
    for (let i = 0; i < drafts.length; i++) {
      const draft = drafts[i]!;
      seq++;
      const { record, line } = seal(hash, this.episode, seq, draft, draft.v ?? versionOf(draft.type), options.meta?.(draft, i));
      hash = record.hash;
      sealed[i] = record;
      pending.push(line.slice(0, -1));
    }
    this.lastSeq = seq;
    this.lastHash = hash;
    return sealed;
  }

  /** Waits (up to `ms`) until the stream answers an info request. */
  private async streamServing(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        const jsm = await managerOf(this.ctx);
        await jsm.streams.info(this.ctx.stream);
        return;
      } catch {
        if (Date.now() >= deadline) return;
        await sleep(100);
      }
    }
  }

  private breakWith(detail: string): Error {
    this.broken = new Error(`episode ${this.episode}: the JetStream log ${whereOf(this.ctx.stream, this.subject)} must be reopened (resume) to repair it: ${detail}`);
    return this.broken;
  }

  commit(): Promise<void> {
    // "snapshot": the tick's records wait for the next flush (a snapshot, or the end) and go out
    // with the ticks before it, fewer and larger messages (a sweep's short episodes are bound by
    // round trips). A crash loses only unpublished ticks, which resume re-runs to the same records.
    return this.fsync === "snapshot" ? Promise.resolve() : this.flush();
  }

  flush(): Promise<void> {
    const run = this.committing.then(() => this.publishPending());
    this.committing = run.catch(() => undefined);
    return run;
  }

  /** Publishes the pending records, one message per ≤ MAX_BODY bytes, each after the previous one's ack. */
  private async publishPending(): Promise<void> {
    if (this.closed) return;
    if (this.broken !== null) throw this.broken;
    if (this.pending.length === 0) return;
    this.refuse();
    const lines = this.pending;
    let first = this.pendingFirst;
    this.pending = [];
    this.pendingFirst = this.lastSeq + 1;
    let from = 0;
    while (from < lines.length) {
      let to = from;
      let bytes = 0;
      // At least one record per message; a record over the limit goes alone (max_payload decides).
      do {
        bytes += Buffer.byteLength(lines[to]!) + 1;
        to++;
      } while (to < lines.length && bytes + Buffer.byteLength(lines[to]!) + 1 <= MAX_BODY);
      const body = to - from === 1 ? lines[from]! : lines.slice(from, to).join("\n");
      await this.publishOne({ firstSeq: first, lastSeq: first + (to - from) - 1, body });
      first += to - from;
      from = to;
    }
    if (this.lock.lost !== null) this.refuse();
  }

  private attempt(body: string, h: MsgHdrs): Promise<Attempt> {
    return acksOf(this.ctx).publish(this.subject, body, h, this.ackTimeoutMs);
  }

  /**
   * One message, expecting the subject to end at the previous ack's stream seq. A publish that
   * fails (timeout, disconnect, no stream) is retried once with the same Nats-Msg-Id: if the first
   * attempt did reach the stream, the duplicate ack carries its stream seq and nothing is doubled
   * (the server checks the msg id before the expectation).
   */
  private async publishOne(out: Outgoing): Promise<void> {
    const h = headers();
    const msgId = `${this.episode}:${out.firstSeq}-${out.lastSeq}:${this.lock.epoch}`;
    h.set("Nats-Msg-Id", msgId);
    h.set("Nats-Expected-Last-Subject-Sequence", String(this.lastSubjectSeq));
    const records = out.firstSeq === out.lastSeq ? `seq ${out.firstSeq}` : `seqs ${out.firstSeq}–${out.lastSeq}`;
    let result = await this.attempt(out.body, h);
    let retried = false;
    if (result.error !== null && !isApiError(result.error, WRONG_LAST_SEQUENCE)) {
      // After a disconnect or a server restart, JetStream may not be serving the stream yet.
      await this.streamServing(this.ackTimeoutMs);
      retried = true;
      result = await this.attempt(out.body, h);
    }
    const ack = result.ack;
    if (ack === null) {
      if (isApiError(result.error, WRONG_LAST_SEQUENCE)) throw await this.fenced(out, result.error as JetStreamApiError);
      if (isJetStreamStorageFull(result.error)) {
        this.broken = new StorageFailed(`episode ${this.episode}: ${whereOf(this.ctx.stream, this.subject)}`, `JetStream refused ${records}: ${messageOf(result.error)}`, out.firstSeq - 1, true, "free the server's JetStream storage or raise its limits (max_file_store, the stream's max_bytes)");
        throw this.broken;
      }
      if (result.error instanceof JetStreamApiError) throw this.breakWith(`the publish of ${records} failed twice (${messageOf(result.error)})`);
      // No answer twice: the server stayed away longer than a commit waits (the command names it).
      this.broken = new NatsWriteLost(this.episode, `the log records of ${records} (${whereOf(this.ctx.stream, this.subject)})`, result.error);
      throw this.broken;
    }
    if (ack.duplicate === true && !retried) {
      throw this.breakWith(`JetStream already held a message with the id of ${records} (${msgId}, stream seq ${ack.seq}): it is not this writer's`);
    }
    if (ack.seq <= this.lastSubjectSeq) {
      throw this.breakWith(`records were stored out of order (${records} at stream seq ${ack.seq}, after stream seq ${this.lastSubjectSeq})`);
    }
    this.lastSubjectSeq = ack.seq;
  }

  /** The server rejected a message: someone else appended to the subject. Nothing of it was stored. */
  private async fenced(out: Outgoing, rejection: JetStreamApiError): Promise<StaleWriter> {
    // The server names the stream seq the subject ended at when it rejected the append.
    let actual = -1;
    try {
      const at = /(\d+)\s*$/.exec(rejection.apiError().description ?? "");
      const jsm = await managerOf(this.ctx);
      const last = at === null || at[1] === "0" ? null : await jsm.streams.getMessage(this.ctx.stream, { seq: Number(at[1]) });
      if (last !== null) {
        const text = last.string();
        const seq = (JSON.parse(text.slice(text.lastIndexOf("\n") + 1)) as { seq?: unknown }).seq;
        if (typeof seq === "number") actual = seq;
      }
    } catch {
      // keep -1: unknown
    }
    const unsent = this.lastSeq - out.lastSeq;
    const error = staleWriter(
      this.episode,
      out.firstSeq - 1,
      actual,
      `JetStream rejected the append of seq ${out.firstSeq}${out.lastSeq === out.firstSeq ? "" : `–${out.lastSeq}`}: the log subject no longer ends at this writer's last record (stream seq ${this.lastSubjectSeq}${actual === -1 ? "" : `; it now ends at seq ${actual}`})${unsent > 0 ? `; ${unsent} later record(s) of this writer were not published` : ""}`,
    );
    this.broken = error;
    return error;
  }

  /**
   * Publishes what is pending and releases the lock. `serverAway`: the run failed because the server
   * stopped answering (this store's publish or another write), and nothing more is waited for:
   * pending records stay unpublished (never acknowledged: a resume runs their tick again) and the
   * lock's release is sent, not awaited (one that never lands expires after the ttl). Waiting for
   * each answer again kept a failed command 5 s or more from saying why.
   */
  async close(options: { readonly serverAway?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    const away = options.serverAway === true || this.broken instanceof NatsWriteLost;
    const alreadyBroken = this.broken !== null || away;
    try {
      if (!alreadyBroken) await this.flush();
    } catch (error) {
      if (!alreadyBroken) throw error;
    } finally {
      this.closed = true;
      await this.lock.release(!away);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Opening.

/** Creates an episode's log on its subject; refuses when the subject already holds records. */
export async function createJetStreamEventStore(nc: NatsConnection, namespace: string, location: string, options: JetStreamCreateOptions): Promise<EventStore> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, location);
  await ensureLogStream(nc, namespace);
  const lock = await acquireLock(ctx, location, options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS, () => 0);
  try {
    if ((await subjectCount(ctx, subject)) !== 0) {
      throw new EpisodeExists(location, `episode ${location} already has a log in JetStream stream ${ctx.stream} (subject ${subject})`);
    }
    const firstSeq = options.firstSeq ?? 0;
    return new JetStreamEventStore(ctx, location, options.episode, { seq: firstSeq - 1, hash: options.previousHash ?? GENESIS_HASH }, 0, lock, options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS, options.fsync ?? "commit");
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * Opens an episode's log to continue it, waiting up to ttl + 2 s for a dead writer's lock to
 * expire. Creates the log when the subject is empty. The first damaged message (gap, duplicate,
 * broken chain, bad JSON) and everything after it are moved to the cut subject.
 */
export async function resumeJetStreamEventStore(nc: NatsConnection, namespace: string, location: string, options: JetStreamCreateOptions): Promise<{ store: EventStore; records: LogRecord[] }> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, location);
  const where = whereOf(ctx.stream, subject);
  await ensureLogStream(nc, namespace);
  // A killed writer's lock expires (nobody renews it): wait for that, up to the ttl + 2 s.
  const lock = await acquireLock(ctx, location, options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS, (ttl) => ttl + 2000, options.onLockWait);
  try {
    const reader = new ChainReader(where, true, options.previousHash ?? GENESIS_HASH);
    let problem: LogCorrupted | null = null;
    const tail: RawMessage[] = [];
    // A new episode (most of a sweep's jobs) has nothing to read: one stream-info request instead
    // of creating and deleting a consumer.
    const empty = (await subjectCount(ctx, subject)) === 0;
    if (!empty) await readSubject(ctx, subject, (text, streamSeq, data) => {
      if (problem === null) {
        try {
          const first = reader.records.length === 0;
          const records = reader.acceptMessage(text, streamSeq);
          if (first && records.length > 0 && records[0]!.episode !== options.episode) {
            throw new EpisodeExists(records[0]!.episode, `${where} holds the log of episode ${records[0]!.episode}, not ${options.episode}`);
          }
          return;
        } catch (error) {
          if (!(error instanceof LogCorrupted)) throw error;
          problem = error;
        }
      }
      tail.push({ streamSeq, data: data.slice() });
    });
    if (problem !== null) {
      const first = problem as LogCorrupted;
      const bytes = await cutMessages(ctx, location, tail);
      const afterSeq = reader.records.at(-1)?.seq ?? null;
      options.onRecovered?.(new TornTail({ file: `${where} (stream seq ${tail[0]!.streamSeq}): ${first.reason}`, line: first.line, afterSeq, bytes }), subjects.cut(namespace, location));
    }
    const last = reader.records.at(-1);
    const head: Head = last === undefined ? { seq: (options.firstSeq ?? 0) - 1, hash: options.previousHash ?? GENESIS_HASH } : { seq: last.seq, hash: last.hash };
    // The first append expects the subject to end where the server says it does; with nothing
    // else writing (we hold the lock) that is the last good record, or none on a 2.9 server that
    // lost track after the cut (see serverLastSeq). An empty subject has no last message on any
    // server version, so the expectation is 0 without asking (one request less per new episode).
    const serverLast = empty ? 0 : await serverLastSeq(ctx, subject);
    if (serverLast !== 0 && serverLast !== reader.lastStreamSeq) {
      throw new Error(`${where}: the subject changed while resuming (it ends at stream seq ${serverLast}, the last good record is at ${reader.lastStreamSeq}); another writer is active`);
    }
    const store = new JetStreamEventStore(ctx, location, options.episode, head, serverLast, lock, options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS, options.fsync ?? "commit");
    return { store, records: reader.records };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * A run that failed because the server stopped answering (a log publish or a snapshot put it left
 * unanswered): closing its log does not wait for the server either.
 */
function serverAwayIn(exit: Exit.Exit<unknown, unknown>): boolean {
  if (!Exit.isFailure(exit)) return false;
  const error = Cause.squash(exit.cause);
  return error instanceof NatsWriteLost || isNatsTimeout(error);
}

/** The EventStores service over JetStream; `location` is the episode id. */
export function jetStreamEventStores(nc: NatsConnection, namespace: string, options: JetStreamStoreOptions = {}): Layer.Layer<EventStores> {
  const withTtl = (o: CreateOptions): JetStreamCreateOptions => ({ ...o, ...options });
  return Layer.succeed(
    EventStores,
    EventStores.of({
      create: (location, o) =>
        Effect.acquireRelease(
          Effect.tryPromise({ try: () => createJetStreamEventStore(nc, namespace, location, withTtl(o)), catch: (e) => e as Error }),
          (store, exit) => Effect.promise(() => (store as JetStreamEventStore).close({ serverAway: serverAwayIn(exit) })),
        ),
      resume: (location, o) =>
        Effect.acquireRelease(
          Effect.tryPromise({ try: () => resumeJetStreamEventStore(nc, namespace, location, withTtl(o)), catch: (e) => e as Error }),
          ({ store }, exit) => Effect.promise(() => (store as JetStreamEventStore).close({ serverAway: serverAwayIn(exit) })),
        ),
      scan: (location) => Effect.tryPromise({ try: () => scanJetStreamLog(nc, namespace, location), catch: (e) => e as LogError }),
      read: (location) => Effect.tryPromise({ try: () => readJetStreamLog(nc, namespace, location), catch: (e) => e as LogError }),
    }),
  );
}
