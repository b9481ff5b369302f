// The writer (DESIGN §7): the unit on the wire is a commit, not a record.
// - append() seals records locally (no network); commit() (end of tick) publishes the tick's record
//   lines joined by "\n" as one message (several when a commit exceeds 512 KB), one after another,
//   each awaiting the previous ack. Per-message work on the server and in the client is what limits
//   a sweep, so this is the fast path. A failed publish is retried with the same Nats-Msg-Id
//   (<episode>:<first>-<last>:<epoch>; dedupe makes that safe), and the stream must have kept the
//   messages in order: one refused once more, one left unanswered (the server away, hung or
//   restarting) each time the stream answers again, until the outage window (--nats-outage) has passed.
// - Fencing, three ways: expected seq in process (SequenceConflict); the writer lock (lock.ts: lost
//   when taken over, or when this writer was paused past its ttl, checked before each append); and
//   on the server, EVERY publish expects the subject's last stream seq (the previous ack's), so a
//   writer whose view is stale is rejected by JetStream itself and nothing of its commit lands after
//   the intruder.
// - A process killed before commit loses only that tick's unpublished records; resume re-runs them.
import { JetStreamApiError } from "@nats-io/jetstream";
import { headers, type MsgHdrs } from "@nats-io/transport-node";
import { SequenceConflict } from "../../events/errors.ts";
import type { Draft, LogRecord } from "../../events/record.ts";
import { sealDrafts } from "../sealing.ts";
import { StorageFailed, type AppendOptions, type EventStore, type FsyncPolicy, type Head } from "../eventStore.ts";
import { jetStreamAnswers, NatsWriteLost, outageOf, subjects } from "../nats.ts";
import { acksOf, type Attempt } from "./acks.ts";
import { ApiCode, isApiError, isStorageFull, messageOf, staleWriter, wrongLastSequenceAt, type StaleWriter } from "./errors.ts";
import type { WriterLock } from "./lock.ts";
import { managerOf, MAX_BODY, whereOf, type Context } from "./streams.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One message of a commit: consecutive records, their lines joined by "\n". */
interface Outgoing {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly body: string;
}

export class JetStreamEventStore implements EventStore {
  readonly episode: string;
  readonly location: string;
  private readonly ctx: Context;
  private readonly subject: string;
  private readonly lock: WriterLock;
  private readonly ackTimeoutMs: number;
  /** How long a publish is retried while the server does not answer (ms): the connection's outage window. */
  private readonly outageMs: number;
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
  /** Characters of record lines sealed since the store was opened (≈ bytes: most records are ASCII). */
  private appended = 0;

  constructor(ctx: Context, location: string, episode: string, head: Head, lastSubjectSeq: number, lock: WriterLock, ackTimeoutMs: number, fsync: FsyncPolicy, outageMs = outageOf(ctx.nc)) {
    this.fsync = fsync;
    this.outageMs = outageMs;
    this.ctx = ctx;
    this.location = location;
    this.episode = episode;
    this.subject = subjects.log(ctx.namespace, location);
    this.lock = lock;
    // An ack is not waited for longer than the whole window.
    this.ackTimeoutMs = Math.min(ackTimeoutMs, outageMs);
    this.lastSeq = head.seq;
    this.lastHash = head.hash;
    this.lastSubjectSeq = lastSubjectSeq;
  }

  head(): Head {
    return { seq: this.lastSeq, hash: this.lastHash };
  }

  bytesAppended(): number {
    return this.appended;
  }

  private refuse(): void {
    if (this.closed) throw new Error(`event store for ${this.episode} is closed`);
    if (this.broken !== null) throw this.broken;
    this.lock.checkPaused();
    if (this.lock.lost !== null) {
      this.broken = staleWriter(this.episode, this.lastSeq, this.lastSeq, `this writer is fenced: ${this.lock.lost}`, this.lock.fence ?? undefined);
      throw this.broken;
    }
  }

  async append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]> {
    this.refuse();
    if (options.expectedSeq !== this.lastSeq) {
      throw new SequenceConflict({ episode: this.episode, expected: options.expectedSeq, actual: this.lastSeq });
    }
    const pending = this.pending;
    if (pending.length === 0) this.pendingFirst = this.lastSeq + 1;
    const { sealed, hash } = sealDrafts(this.episode, this.lastSeq, this.lastHash, drafts, options, (line) => {
      pending.push(line.slice(0, -1));
      this.appended += line.length;
    });
    this.lastSeq += drafts.length;
    this.lastHash = hash;
    return sealed;
  }

  /** Waits until the stream answers an info request, or `deadline` has passed (asking once at least): true when it answered. */
  private streamServing(deadline: number): Promise<boolean> {
    return jetStreamAnswers(this.ctx.nc, deadline, (jsm) => jsm.streams.info(this.ctx.stream));
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
    const started = performance.now();
    let result = await this.attempt(out.body, h);
    let retried = false;
    if (result.error !== null && !isApiError(result.error, ApiCode.StreamWrongLastSequence)) {
      // Unanswered (the server away, hung or restarting), or refused: retried once the stream answers
      // again (after a restart JetStream may not serve it at once), while the server stays away
      // for at most the outage window from the first attempt; a refusal is retried once.
      // Past the window, one more try when the stream answers (it came back just then).
      const deadline = started + this.outageMs;
      let last = false;
      do {
        if (last) break;
        last = performance.now() >= deadline;
        if (!(await this.streamServing(deadline))) break;
        retried = true;
        result = await this.attempt(out.body, h);
      } while (result.ack === null && !(result.error instanceof JetStreamApiError) && !this.ctx.nc.isClosed());
    }
    const ack = result.ack;
    if (ack === null) {
      if (isApiError(result.error, ApiCode.StreamWrongLastSequence)) throw await this.fenced(out, result.error as JetStreamApiError);
      if (isStorageFull(result.error)) {
        this.broken = new StorageFailed(`episode ${this.episode}: ${whereOf(this.ctx.stream, this.subject)}`, `JetStream refused ${records}: ${messageOf(result.error)}`, out.firstSeq - 1, true, "free the server's JetStream storage or raise its limits (max_file_store, the stream's max_bytes)");
        throw this.broken;
      }
      if (result.error instanceof JetStreamApiError) throw this.breakWith(`the publish of ${records} failed twice (${messageOf(result.error)})`);
      // No answer: the server stayed away longer than the outage window (the command names it).
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
      const at = wrongLastSequenceAt(rejection);
      const jsm = await managerOf(this.ctx);
      const last = at === null || at === 0 ? null : await jsm.streams.getMessage(this.ctx.stream, { seq: at });
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
