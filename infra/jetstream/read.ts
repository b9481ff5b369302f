// Reading a log (DESIGN §7). Reading never modifies a log; every message is checked as it comes
// (chain.ts). A read uses a private ephemeral pull consumer driven over one subscription; peeking
// and finding the last record are single requests.
import { AckPolicy, DeliverPolicy, JetStreamApiError } from "@nats-io/jetstream";
import { createInbox, nuid, type NatsConnection } from "@nats-io/transport-node";
import type { LogRecord } from "../../events/record.ts";
import type { ReadOptions } from "../eventStore.ts";
import { recordOrNull, type LogEnds, type ScanResult } from "../fileEventStore.ts";
import { isNatsTimeout, NatsReadStalled, outageOf, subjects } from "../nats.ts";
import { TaggedError } from "../../events/taggedError.ts";
import { ChainReader } from "./chain.ts";
import { ApiCode, isApiError } from "./errors.ts";
import { contextOf, managerOf, MAX_BODY, subjectCount, whereOf, type Context } from "./streams.ts";

/** With no message for this long, a reader re-checks where the subject ends (a tail may have been cut). */
export const READ_IDLE_MS = 2000;
/** A read gives up after this many idle periods in a row at least: more, as many as the connection's outage window holds. */
const READ_STALLS = 5;
const readStalls = (nc: NatsConnection): number => Math.max(READ_STALLS, Math.ceil(outageOf(nc) / READ_IDLE_MS));
/** At most this many messages per pull while reading (two pulls in flight), and the refill step. */
const PULL_BATCH = 1024;
/**
 * Bytes a reader lets the server send ahead of what it has handled. Pulls are sized by the largest
 * message seen so far (a read starts with small pulls): asking for 2 × 1,024 messages of a large
 * town's ticks (~350 KB each) overran the client's 64 MB pending limit, and the server cut the
 * reader off as a slow consumer, so large logs could not be read back.
 */
export const READ_WINDOW_BYTES = 8 * 1024 * 1024;
const TEXT = new TextDecoder();

export interface JetStreamReadOptions extends ReadOptions {
  /** Bytes a read lets the server send ahead (default 8 MB, against the server's 64 MB per-client limit); tests lower it. */
  readonly windowBytes?: number;
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
    if (isApiError(error, ApiCode.StreamNotFound)) return null;
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
    if (isApiError(error, ApiCode.StreamNotFound)) return { first: null, last: null, lastTick: null };
    throw error;
  }
}


/**
 * Delivers every message on `subject` (a wildcard too) in stream order to `onMessage(text, streamSeq, data, subject)`, up
 * to the message that was last when reading started. An exception from `onMessage` stops reading
 * and rejects.
 *
 * It reads with a private ephemeral pull consumer (no acks, memory state, filter on the subject)
 * driven directly over one subscription: what an ordered consumer does for a read that starts at
 * the beginning and ends at a known message, without a wrapper object, an async iterator step
 * and reply-subject split per message. Order is checked (the consumer's delivery sequence must
 * not skip). With `fromStreamSeq` above 0 it starts at that stream sequence instead (the messages
 * on the subject from there: a reader that has seen the ones before, as the dashboard's count of a
 * log's model calls).
 */
export async function readSubject(ctx: Context, subject: string, onMessage: (text: string, streamSeq: number, data: Uint8Array, subject: string) => void, windowBytes = READ_WINDOW_BYTES, fromStreamSeq = 0): Promise<void> {
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
        onMessage(TEXT.decode(data), streamSeq, data, m.subject);
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
  // A server that went away is waited for as long as the outage window (a look that gets no
  // answer is one more idle period, not the end of the read).
  let lastSeen = -1;
  let stalls = 0;
  const maxStalls = readStalls(ctx.nc);
  const idle = setInterval(() => {
    if (seen !== lastSeen) {
      lastSeen = seen;
      stalls = 0;
      return;
    }
    if (++stalls > maxStalls) {
      stopWith(new NatsReadStalled(`reading ${whereOf(ctx.stream, subject)}: no message for ${(maxStalls * READ_IDLE_MS) / 1000} s after ${seen} of ${count} (is the server up?)`));
      return;
    }
    subjectCount(ctx, subject).then(
      (now) => {
        if (now <= seen) stopWith();
        else if (!finished) pull(2 * batch);
      },
      (error: unknown) => { if (error instanceof JetStreamApiError || ctx.nc.isClosed()) stopWith(error); },
    );
  }, READ_IDLE_MS);
  let created = false;
  try {
    try {
      const info = await jsm.consumers.add(ctx.stream, {
        name,
        filter_subject: subject,
        ...(fromStreamSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromStreamSeq } : { deliver_policy: DeliverPolicy.All }),
        ack_policy: AckPolicy.None,
        mem_storage: true,
        num_replicas: 1,
        inactive_threshold: 60_000_000_000,
      });
      created = true;
      count = info.num_pending;
    } catch (error) {
      if (!isApiError(error, ApiCode.StreamNotFound)) throw error;
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

/**
 * How long a whole-log read on a clustered server keeps trying while the stream has no leader: a
 * killed server's streams are taken over by another within seconds, and its return can move a
 * leader again. Meanwhile the stream's requests go unanswered (timeouts) or its consumer stops.
 */
const CLUSTER_ELECTION_MS = 20_000;

/**
 * A failure a stream's leader election explains: not an error of ours about the log itself
 * (LogCorrupted, EpisodeExists: tagged), but no answer, or a consumer the old leader took with it.
 */
const isElectionFailure = (error: unknown): boolean => isNatsTimeout(error) || !(error instanceof TaggedError);

/** Reads and checks a whole episode log (see scanLog): the ScanResult shape, never a torn tail. */
export async function scanJetStreamLog(nc: NatsConnection, namespace: string, episode: string, options: JetStreamReadOptions = {}): Promise<ScanResult> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, episode);
  // On a JetStream cluster a read is started again, whole, while the stream elects a leader; on a
  // single server a failure is said at once, as before (a server that stopped answering).
  const deadline = nc.info?.cluster === undefined ? 0 : Date.now() + CLUSTER_ELECTION_MS;
  for (;;) {
    const reader = new ChainReader(whereOf(ctx.stream, subject), options.validate ?? true);
    try {
      await readSubject(ctx, subject, (text, streamSeq) => { reader.acceptMessage(text, streamSeq); }, options.windowBytes);
      return { records: reader.records, torn: null, tornOffset: -1, lastFile: null };
    } catch (error) {
      if (Date.now() >= deadline || !isElectionFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Reads a log for replay/inspection; any damage is an error. A log with no records reads as []. */
export async function readJetStreamLog(nc: NatsConnection, namespace: string, episode: string, options: JetStreamReadOptions = {}): Promise<LogRecord[]> {
  return (await scanJetStreamLog(nc, namespace, episode, options)).records;
}
