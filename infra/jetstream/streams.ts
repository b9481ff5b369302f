// The namespace's log stream and what is asked of it about subjects (DESIGN §7): one stream per
// namespace (PT_LOG_<ns>), one subject per episode log (pt.<ns>.log.<episode>, records cut from a
// damaged tail on pt.<ns>.cut.<episode>), and the per-connection, per-namespace context the other
// parts share (clients, the stream, the lock buckets, the ack inbox).
// - nats-server 2.9 (file storage) forgets a subject's last message once its last messages are
//   deleted (until the next publish): emptiness is judged by the subject's message count, and the
//   fencing expectation is taken from what the server itself reports (see serverLastSeq).
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type StreamInfo } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { natsName, subjects } from "../nats.ts";
import type { AckInbox } from "./acks.ts";
import { ApiCode, isApiError } from "./errors.ts";
import type { LockBucket } from "./lock.ts";
import { checkReplicas, creating, ReplicasMismatch, replicasToCreate } from "./replicas.ts";

const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;
/** A commit's records go in messages of at most this many bytes (the server's max_payload is 1 MB). */
export const MAX_BODY = 512 * 1024;

// ---------------------------------------------------------------------------------------------
// Per-connection, per-namespace context: clients, the log stream, the lock bucket.

export interface Context {
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

export function contextOf(nc: NatsConnection, namespace: string): Context {
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

export function managerOf(ctx: Context): Promise<JetStreamManager> {
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
        const info = await jsm.streams.info(ctx.stream);
        checkReplicas(nc, ctx.stream, info.config.num_replicas);
        return ctx.stream;
      } catch (error) {
        if (!isApiError(error, ApiCode.StreamNotFound)) throw error;
      }
      let info: StreamInfo;
      try {
        info = await creating(nc, ctx.stream, () => jsm.streams.add({
          name: ctx.stream,
          subjects: [`pt.${namespace}.log.>`, `pt.${namespace}.cut.>`],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          duplicate_window: DUPLICATE_WINDOW_NS,
          num_replicas: replicasToCreate(nc),
        }));
      } catch (error) {
        if (error instanceof ReplicasMismatch) throw error;
        // Another process may have created it first (name in use, or a racing create).
        info = await jsm.streams.info(ctx.stream).catch(() => Promise.reject(error));
        checkReplicas(nc, ctx.stream, info.config.num_replicas);
        return ctx.stream;
      }
      checkReplicas(nc, ctx.stream, info.config.num_replicas, true);
      return ctx.stream;
    })();
    ctx.ready = pending;
    pending.catch(() => { if (ctx.ready === pending) ctx.ready = null; });
  }
  return ctx.ready;
}

/** Where a log is, as errors and notices name it: `jetstream:<stream>/<subject>`. */
export const whereOf = (stream: string, subject: string) => `jetstream:${stream}/${subject}`;

// ---------------------------------------------------------------------------------------------
// What the server says about a subject.

/**
 * Stream seq of the last message on a subject as the server sees it, or 0 for none (or no stream).
 * This is what `Nats-Expected-Last-Subject-Sequence` is checked against. nats-server 2.9 (file
 * storage) loses it when a subject's last messages are deleted, until the next publish, and then
 * reports none: callers must not take 0 to mean "empty" (see subjectCount).
 */
export async function serverLastSeq(ctx: Context, subject: string): Promise<number> {
  const jsm = await managerOf(ctx);
  try {
    const last = await jsm.streams.getMessage(ctx.stream, { last_by_subj: subject });
    return last === null ? 0 : last.seq;
  } catch (error) {
    if (isApiError(error, ApiCode.StreamNotFound)) return 0;
    throw error;
  }
}

/** How many messages a subject holds (0 when the stream is missing). */
export async function subjectCount(ctx: Context, subject: string): Promise<number> {
  const jsm = await managerOf(ctx);
  try {
    const info = await jsm.streams.info(ctx.stream, { subjects_filter: subject });
    // Per subject the filter matches: one for a subject, each one below a wildcard.
    return Object.values(info.state.subjects ?? {}).reduce((n, k) => n + k, 0);
  } catch (error) {
    if (isApiError(error, ApiCode.StreamNotFound)) return 0;
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
    if (isApiError(error, ApiCode.StreamNotFound)) return [];
    throw error;
  }
}
