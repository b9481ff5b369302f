// Opening an episode's log (DESIGN §7): creating it, or resuming it. Resuming cuts a damaged tail
// (a message that is not records: bad JSON) from the first damaged message on (cut.ts), refuses a
// complete record that does not continue the log (gap, duplicate, broken chain), and takes
// the fencing expectation from what the server reports (see serverLastSeq). Its requests are
// retried while the server does not answer, for the outage window (a run started while the server
// restarts, or hangs).
import { LogCorrupted, TornTail } from "../../events/errors.ts";
import { GENESIS_HASH, type LogRecord } from "../../events/record.ts";
import { EpisodeExists, type EventStore, type Head } from "../eventStore.ts";
import { acrossOutage, subjects } from "../nats.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { JetStreamEventStore } from "./append.ts";
import { ChainReader } from "./chain.ts";
import { cutMessages, type RawMessage } from "./cut.ts";
import { acquireLock, DEFAULT_LOCK_TTL_MS } from "./lock.ts";
import type { JetStreamCreateOptions } from "./options.ts";
import { readSubject } from "./read.ts";
import { contextOf, ensureLogStream, serverLastSeq, subjectCount, whereOf } from "./streams.ts";

const DEFAULT_ACK_TIMEOUT_MS = 5000;

/** Creates an episode's log on its subject; refuses when the subject already holds records. */
export async function createJetStreamEventStore(nc: NatsConnection, namespace: string, location: string, options: JetStreamCreateOptions): Promise<EventStore> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, location);
  await acrossOutage(nc, () => ensureLogStream(nc, namespace));
  const lock = await acquireLock(ctx, location, options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS, () => 0);
  try {
    if ((await acrossOutage(nc, () => subjectCount(ctx, subject))) !== 0) {
      throw new EpisodeExists(location, `episode ${location} already has a log in JetStream stream ${ctx.stream} (subject ${subject})`);
    }
    const firstSeq = options.firstSeq ?? 0;
    return new JetStreamEventStore(ctx, location, options.episode, { seq: firstSeq - 1, hash: options.previousHash ?? GENESIS_HASH }, 0, lock, options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS, options.fsync ?? "commit", options.outageMs);
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * Opens an episode's log to continue it, waiting up to ttl + 2 s for a dead writer's lock to
 * expire. Creates the log when the subject is empty. The first message that is not records (bad
 * JSON) and everything after it are moved to the cut subject; a complete record that does not
 * continue the log (gap, duplicate, another episode's, broken chain) is refused (LogCorrupted, exit 3).
 */
export async function resumeJetStreamEventStore(nc: NatsConnection, namespace: string, location: string, options: JetStreamCreateOptions): Promise<{ store: EventStore; records: LogRecord[] }> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, location);
  const where = whereOf(ctx.stream, subject);
  await acrossOutage(nc, () => ensureLogStream(nc, namespace));
  // A killed writer's lock expires (nobody renews it): wait for that, up to the ttl + 2 s.
  const lock = await acquireLock(ctx, location, options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS, (ttl) => ttl + 2000, options.onLockWait);
  try {
    const reader = new ChainReader(where, true, options.previousHash ?? GENESIS_HASH);
    let problem: LogCorrupted | null = null;
    const tail: RawMessage[] = [];
    // A new episode (most of a sweep's jobs) has nothing to read: one stream-info request instead
    // of creating and deleting a consumer.
    const empty = (await acrossOutage(nc, () => subjectCount(ctx, subject))) === 0;
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
          // A complete record that does not continue the log (another episode's, out of seq, off
          // the chain) is refused, as the file store refuses it (exit 3): a message is published
          // whole, so no crash of this log's writer leaves one, and cutting it would hide it.
          if (!(error instanceof LogCorrupted) || error.completeRecord === true) throw error;
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
    const serverLast = empty ? 0 : await acrossOutage(nc, () => serverLastSeq(ctx, subject));
    if (serverLast !== 0 && serverLast !== reader.lastStreamSeq) {
      throw new Error(`${where}: the subject changed while resuming (it ends at stream seq ${serverLast}, the last good record is at ${reader.lastStreamSeq}); another writer is active`);
    }
    const store = new JetStreamEventStore(ctx, location, options.episode, head, serverLast, lock, options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS, options.fsync ?? "commit", options.outageMs);
    return { store, records: reader.records };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
