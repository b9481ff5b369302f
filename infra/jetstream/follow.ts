// Following a log live (DESIGN §7): an ordered consumer, replaced from the next stream seq when it
// stalls (a server restart can leave nats.js's own one waiting for ever).
import type { Consumer } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { LogRecord } from "../../events/record.ts";
import { acrossOutage, NatsReadStalled, outageOf, outageWindowText, subjects } from "../nats.ts";
import { ChainReader } from "./chain.ts";
import { ApiCode, isApiError } from "./errors.ts";
import { READ_IDLE_MS, READ_WINDOW_BYTES, type JetStreamReadOptions } from "./read.ts";
import { contextOf, ensureLogStream, MAX_BODY, serverLastSeq, whereOf, type Context } from "./streams.ts";

/** Following: how often a waiting follow checks the subject for messages its consumer has not delivered. */
const FOLLOW_STALL_MS = READ_IDLE_MS;

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
  // A server away (restarting, not up yet) is waited for the connection's outage window, as a writer waits.
  await acrossOutage(nc, () => ensureLogStream(nc, namespace));
  const subject = subjects.log(namespace, episode);
  const windowMs = outageOf(nc);
  /** Past the outage window with no answer from JetStream: what the follow ends with (exit 2, as a writer's). */
  const awayTooLong = () => new NatsReadStalled(`following ${whereOf(ctx.stream, subject)}: JetStream did not answer for longer than ${outageWindowText(windowMs)} (--nats-outage)`);
  const reader = new ChainReader(whereOf(ctx.stream, subject), options.validate ?? true);
  // Pulls sized so the server never holds more than the read window for this client (see
  // READ_WINDOW_BYTES); by message count, as a pull bounded by bytes stalls on a message larger than its bound.
  const maxMessages = Math.max(1, Math.floor((options.windowBytes ?? READ_WINDOW_BYTES) / MAX_BODY));
  // Stream seq of the last message handled: a replacement consumer starts right after it.
  let handled = 0;
  for (let replacing = false; ; replacing = true) {
    const consumer = replacing ? await orderedConsumerAfter(ctx, subject, handled, windowMs, signal) : await acrossOutage(nc, () => ctx.js.consumers.get(ctx.stream, { filter_subjects: subject, opt_start_seq: handled + 1 }));
    if (consumer === "away") throw awayTooLong();
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
    // Since when the checks have got no answer (the server away), and whether that outlasted the window.
    let unansweredSince: number | null = null;
    let away = false;
    const watchdog = setInterval(() => {
      if (checking || waitingSince === null || Date.now() - waitingSince < FOLLOW_STALL_MS) return;
      checking = true;
      const at = handled;
      serverLastSeq(ctx, subject).then(
        (last) => {
          unansweredSince = null;
          if (waitingSince === null || handled !== at || last <= at) behindAt = -1;
          else if (behindAt !== at) behindAt = at; // maybe just published: look once more
          else {
            stalled = true;
            messages.stop();
          }
        },
        () => {
          // The server is away: look again at the next check, for the outage window.
          unansweredSince ??= performance.now() - FOLLOW_STALL_MS;
          if (performance.now() - unansweredSince < windowMs) return;
          away = true;
          messages.stop();
        },
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
    if (aborted()) return;
    if (away) throw awayTooLong();
    // Ended without a stall: aborted, or the connection closed.
    if (!stalled) return;
  }
}

/**
 * A replacement ordered consumer on `subject` from the stream seq after `handled`, asked for until
 * it is made (the server may still be starting up after a restart), for the outage window
 * `windowMs` ("away" past it), or until the signal aborts (then null); a missing stream is an error.
 */
async function orderedConsumerAfter(ctx: Context, subject: string, handled: number, windowMs: number, signal: AbortSignal | undefined): Promise<Consumer | "away" | null> {
  const deadline = performance.now() + windowMs;
  for (;;) {
    try {
      return await ctx.js.consumers.get(ctx.stream, { filter_subjects: subject, opt_start_seq: handled + 1 });
    } catch (error) {
      if (isApiError(error, ApiCode.StreamNotFound)) throw error;
      if (performance.now() >= deadline) return "away";
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
