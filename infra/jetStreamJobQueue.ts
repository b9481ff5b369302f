// The distributed JobQueue (DESIGN §7): a JetStream work-queue stream PT_JOBS_<ns> on
// pt.<ns>.jobs.<id> drained through the durable pull consumer `workers`, and a results stream
// PT_RESULTS_<ns> on pt.<ns>.results.<id> holding one outcome per job (first writer wins).
//
// Delivery is at least once: a worker publishes the outcome THEN acks, so a worker that dies in
// between leaves a job that is redelivered, finds its result and is acked without running again;
// a worker that dies mid-handler never acks, so JetStream redelivers after ack_wait with
// deliveryCount + 1 (= context.attempt). Outcomes are read back with an ordered consumer over the
// whole results stream; both the workers and that reader ride out a server restart.
// Server features used are those of nats-server 2.9 (no filter_subjects arrays).
import type { NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import { isRetryable, rejectionOf, type Job, type JobHandler, type JobOutcome, type JobQueue, type JobRejection, type Submitted, type WorkOptions, type WorkerHandle } from "./jobQueue.ts";
import { natsName, subjects, subjectToken } from "./nats.ts";
import { checkReplicas, creating, ReplicasMismatch, replicasToCreate } from "./jetstream/replicas.ts";

export interface JetStreamJobQueueOptions {
  /**
   * Redelivery delay for a job whose worker stopped answering (default 30000). Applies when this
   * queue creates the `workers` consumer; an existing consumer keeps its own, which is then used,
   * unless `setAckWait`.
   */
  readonly ackWaitMs?: number;
  /**
   * `ackWaitMs` was asked for explicitly (`worker --ack-wait`): an existing consumer whose ack wait
   * differs is updated to it, and `ackWaitChange` says from what. Left unset, a namespace's queue
   * keeps what it was created with, so a default never undoes an explicit choice.
   */
  readonly setAckWait?: boolean;
  /** Delay before a failed job is redelivered (nak delay, default 1000). */
  readonly backoffMs?: number;
  /** How long a submitted id is remembered by the jobs stream's dedupe (default 1 hour, at least 10 minutes). */
  readonly duplicateWindowMs?: number;
}

/** An existing consumer's ack wait that `setAckWait` changed. */
export interface AckWaitChange {
  readonly fromMs: number;
  readonly toMs: number;
  /** Jobs taken and not yet acked when it changed (running, or their workers died). */
  readonly inFlight: number;
}

/** Stream and consumer names for a namespace. */
export const jobQueueNames = (ns: string) => ({
  jobs: natsName("PT_JOBS", ns),
  results: natsName("PT_RESULTS", ns),
  consumer: "workers",
});

const WORKERS = "workers";
/** How long one pull request waits on the server for a job. */
const FETCH_EXPIRES_MS = 5000;
const RETRY_MS = 250;
/** Give up a submit that cannot reach JetStream for this long. */
const SUBMIT_DEADLINE_MS = 30_000;
const SUBMIT_PARALLEL = 32;

const toNanos = (ms: number) => Math.round(ms * 1_000_000);
const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const apiCode = (error: unknown): number | null => (error instanceof JetStreamApiError ? error.code : null);

/** A sleep that `wake()` cuts short (used so stop/abandon/close do not wait out a retry delay). */
class Sleeper {
  readonly #wakers = new Set<() => void>();
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wakers.add(done);
    });
  }
  wake(): void {
    for (const done of [...this.#wakers]) done();
  }
}

interface WorkerState {
  readonly name: string;
  readonly handler: JobHandler;
  readonly maxAttempts: number;
  stopping: boolean;
  abandoned: boolean;
  readonly fetches: Set<ConsumerMessages>;
  readonly heartbeats: Set<NodeJS.Timeout>;
  readonly sleeper: Sleeper;
}

export class JetStreamJobQueue implements JobQueue {
  readonly #nc: NatsConnection;
  readonly #ns: string;
  readonly #js: JetStreamClient;
  readonly #names: ReturnType<typeof jobQueueNames>;
  readonly #backoffMs: number;
  readonly #duplicateWindowMs: number;
  #ackWaitMs: number;
  readonly #setAckWait: boolean;
  #ackWaitChange: AckWaitChange | null = null;
  #jsm: JetStreamManager | null = null;
  #ready: Promise<void> | null = null;
  #closed = false;
  readonly #workers = new Set<{ stop(): Promise<void> }>();
  readonly #readers = new Set<ConsumerMessages>();
  readonly #sleeper = new Sleeper();

  constructor(nc: NatsConnection, namespace: string, options: JetStreamJobQueueOptions = {}) {
    this.#nc = nc;
    this.#ns = subjectToken(namespace, "namespace");
    this.#js = jetstream(nc);
    this.#names = jobQueueNames(namespace);
    this.#ackWaitMs = Math.max(100, options.ackWaitMs ?? 30_000);
    this.#setAckWait = options.setAckWait === true && options.ackWaitMs !== undefined;
    this.#backoffMs = Math.max(0, options.backoffMs ?? 1000);
    this.#duplicateWindowMs = Math.max(10 * 60_000, options.duplicateWindowMs ?? 60 * 60_000);
  }

  /** Creates the queue and its streams and consumer (see `ready`). */
  static async open(nc: NatsConnection, namespace: string, options: JetStreamJobQueueOptions = {}): Promise<JetStreamJobQueue> {
    const queue = new JetStreamJobQueue(nc, namespace, options);
    await queue.ready();
    return queue;
  }

  /** The ack wait in force on the `workers` consumer (known after `ready`). */
  get ackWaitMs(): number {
    return this.#ackWaitMs;
  }

  /** How `setAckWait` changed an existing consumer's ack wait (known after `ready`); null when it did not. */
  get ackWaitChange(): AckWaitChange | null {
    return this.#ackWaitChange;
  }

  /**
   * Creates the jobs stream, the `workers` consumer and the results stream unless they exist
   * (idempotent; a concurrent creator is tolerated). Other methods call it first; a failure is
   * not cached, so a later call retries.
   */
  ready(): Promise<void> {
    this.#ready ??= this.#setup().catch((error: unknown) => {
      this.#ready = null;
      throw error;
    });
    return this.#ready;
  }

  async #setup(): Promise<void> {
    const jsm = this.#jsm ?? (this.#jsm = await jetstreamManager(this.#nc));
    const { jobs, results } = this.#names;
    const prefix = `pt.${this.#ns}`;
    await ensure(
      () => creating(this.#nc, jobs, () => jsm.streams.add({
        name: jobs,
        subjects: [`${prefix}.jobs.>`],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: toNanos(this.#duplicateWindowMs),
        num_replicas: replicasToCreate(this.#nc),
      })),
      () => jsm.streams.info(jobs),
    ).then((info) => checkReplicas(this.#nc, jobs, info.config.num_replicas));
    const consumer = await ensure(
      () => jsm.consumers.add(jobs, {
        durable_name: WORKERS,
        ack_policy: AckPolicy.Explicit,
        ack_wait: toNanos(this.#ackWaitMs),
        deliver_policy: DeliverPolicy.All,
        max_deliver: -1,
        max_ack_pending: -1,
      }),
      () => jsm.consumers.info(jobs, WORKERS),
    );
    const inForce = consumer.config.ack_wait ? Math.max(100, consumer.config.ack_wait / 1_000_000) : this.#ackWaitMs;
    if (this.#setAckWait && inForce !== this.#ackWaitMs) {
      // The server applies an updated ack_wait to the jobs already taken too: their workers, if
      // started with a longer one, heartbeat too rarely for it (the caller says so, with inFlight).
      await jsm.consumers.update(jobs, WORKERS, { ack_wait: toNanos(this.#ackWaitMs) });
      this.#ackWaitChange = { fromMs: inForce, toMs: this.#ackWaitMs, inFlight: consumer.num_ack_pending };
    } else this.#ackWaitMs = inForce;
    await ensure(
      () => creating(this.#nc, results, () => jsm.streams.add({
        name: results,
        subjects: [`${prefix}.results.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_msgs_per_subject: 1,
        duplicate_window: toNanos(this.#duplicateWindowMs),
        num_replicas: replicasToCreate(this.#nc),
      })),
      () => jsm.streams.info(results),
    ).then((info) => checkReplicas(this.#nc, results, info.config.num_replicas));
  }

  async submit(jobs: readonly Job[]): Promise<Submitted> {
    if (this.#closed) throw new Error("job queue is closed");
    const seen = new Set<string>();
    const fresh: Array<{ job: Job; subject: string; result: string }> = [];
    for (const job of jobs) {
      const subject = subjects.job(this.#ns, job.id);
      if (seen.has(job.id)) continue;
      seen.add(job.id);
      fresh.push({ job, subject, result: subjects.result(this.#ns, job.id) });
    }
    if (fresh.length === 0) return { queued: [], pending: [], finished: [] };
    await this.ready();
    const jsm = this.#jsm!;
    const deadline = Date.now() + SUBMIT_DEADLINE_MS;
    // Done, or still queued/running (a work-queue message stays until acked): skip. Two requests
    // list what both streams hold, instead of two per job. A job that finishes between this look
    // and its publish is still safe: the Nats-Msg-Id dedupes a resubmission within the duplicate
    // window, and past it the worker finds the result and does not run the job again.
    const [done, queued] = await this.#retry(deadline, () =>
      Promise.all([subjectsHeld(jsm, this.#names.results, wildcardOf(fresh[0]!.result)), subjectsHeld(jsm, this.#names.jobs, wildcardOf(fresh[0]!.subject))]),
    );
    // A job whose recorded outcome is a failure runs again: its outcome is dropped and it is queued
    // anew (under a msg id of its own, past the dedupe of its first submission). A worker records an
    // outcome, then acks the message, so a job seen in both streams has just finished: its outcome
    // says which way (a failed one's old message is acked by the worker that recorded the failure).
    const retried = new Map<string, string>();
    const succeeded = new Set<string>();
    for (const f of fresh.filter((x) => done.has(x.result))) {
      const last = await this.#retry(deadline, () => jsm.streams.getMessage(this.#names.results, { last_by_subj: f.result }));
      if (last === null) continue;
      if (last.json<JobOutcome>().ok) {
        succeeded.add(f.job.id);
        continue;
      }
      await this.#retry(deadline, () => jsm.streams.purge(this.#names.results, { filter: f.result }));
      retried.set(f.job.id, `${f.job.id}@retry-${last.seq}`);
    }
    const todo = fresh.filter((f) => retried.has(f.job.id) || (!done.has(f.result) && !queued.has(f.subject)));
    // Finished: a success, or an outcome whose message is gone (purged meanwhile: nothing to go on).
    const isFinished = (f: (typeof fresh)[number]) => !retried.has(f.job.id) && (succeeded.has(f.job.id) || (done.has(f.result) && !queued.has(f.subject)));
    const submitted: Submitted = {
      queued: todo.map((f) => f.job.id),
      pending: fresh.filter((f) => queued.has(f.subject) && !retried.has(f.job.id) && !isFinished(f)).map((f) => f.job.id),
      finished: fresh.filter(isFinished).map((f) => f.job.id),
    };
    let next = 0;
    const lane = async () => {
      while (next < todo.length) {
        const { job, subject } = todo[next++]!;
        await this.#retry(deadline, () => this.#js.publish(subject, JSON.stringify({ id: job.id, spec: job.spec, ...(job.traceparent === undefined ? {} : { traceparent: job.traceparent }) }), { msgID: retried.get(job.id) ?? job.id }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(SUBMIT_PARALLEL, todo.length) }, lane));
    return submitted;
  }

  work(worker: string, handler: JobHandler, options: WorkOptions = {}): WorkerHandle {
    if (this.#closed) throw new Error("job queue is closed");
    const state: WorkerState = {
      name: worker,
      handler,
      maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? 5)),
      stopping: false,
      abandoned: false,
      fetches: new Set(),
      heartbeats: new Set(),
      sleeper: new Sleeper(),
    };
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    // One pull loop per slot, each asking for one job at a time: a worker never holds more jobs
    // than it runs, so idle workers get the rest.
    const loops = Promise.all(Array.from({ length: concurrency }, () => this.#slot(state)));
    const halt = () => {
      state.stopping = true;
      for (const fetch of state.fetches) fetch.stop();
      state.sleeper.wake();
    };
    const handle = {
      stop: async () => {
        halt();
        await loops;
        this.#workers.delete(handle);
      },
      abandon: async () => {
        state.abandoned = true;
        halt();
        for (const timer of state.heartbeats) clearInterval(timer);
        state.heartbeats.clear();
        this.#workers.delete(handle);
      },
    };
    this.#workers.add(handle);
    return handle;
  }

  async #slot(state: WorkerState): Promise<void> {
    let consumer: Consumer | null = null;
    while (!state.stopping) {
      try {
        await this.ready();
        consumer ??= await this.#js.consumers.get(this.#names.jobs, WORKERS);
        const fetch = await consumer.fetch({ max_messages: 1, expires: FETCH_EXPIRES_MS });
        state.fetches.add(fetch);
        if (state.stopping) fetch.stop();
        let message: JsMsg | null = null;
        try {
          for await (const m of fetch) {
            message = m;
            break;
          }
        } finally {
          state.fetches.delete(fetch);
        }
        if (message === null || state.abandoned) continue; // a killed worker would not answer either
        if (state.stopping) {
          message.nak();
          continue;
        }
        await this.#run(state, message);
      } catch {
        // Disconnected, JetStream still recovering after a restart, heartbeats missed: pull again.
        if (!state.stopping) await state.sleeper.sleep(RETRY_MS * 2);
      }
    }
  }

  async #run(state: WorkerState, m: JsMsg): Promise<void> {
    const attempt = m.info.deliveryCount;
    const id = m.subject.slice(m.subject.lastIndexOf(".") + 1);
    // Keep the job ours while it runs, and while its outcome is published during a reconnect.
    const heartbeat = setInterval(() => {
      if (!state.abandoned) m.working();
    }, Math.max(50, Math.floor(this.#ackWaitMs / 3)));
    state.heartbeats.add(heartbeat);
    try {
      if (await this.#hasResult(id)) {
        // Redelivered after its outcome was published but before the ack landed.
        await m.ackAck().catch(() => false);
        return;
      }
      let outcome: JobOutcome | null = null;
      let job: Job | null = null;
      try {
        job = m.json<Job>();
        if (job === null || typeof job !== "object" || job.id !== id) throw new Error("not a job");
      } catch (error) {
        outcome = { id, ok: false, error: `malformed job message: ${errorMessage(error)}`, worker: state.name, attempt };
      }
      if (outcome === null && attempt > state.maxAttempts) {
        // Earlier deliveries ended without an outcome (workers died or were abandoned): give up
        // rather than let a job that kills its workers circulate for ever.
        outcome = { id, ok: false, error: `no outcome after ${attempt - 1} deliveries (workers stopped mid-job)`, worker: state.name, attempt };
      }
      if (outcome === null && job !== null) {
        try {
          const result = await state.handler(job, { attempt, worker: state.name });
          outcome = { id, ok: true, result, worker: state.name, attempt };
        } catch (error) {
          if (state.abandoned) return;
          if (attempt < state.maxAttempts && isRetryable(error)) {
            m.nak(this.#backoffMs);
            return;
          }
          outcome = { id, ok: false, error: errorMessage(error), worker: state.name, attempt, ...(isRetryable(error) ? {} : { rejected: true as const, ...rejectionOf(error) }) };
        }
      }
      if (state.abandoned || outcome === null) return;
      if (!(await this.#publishResult(outcome, state, m.seq))) return;
      // If this ack is lost, the redelivery finds the result and is acked then: so it is not
      // awaited (no reply to wait for), and goes out with the next pull, one request less per job.
      m.ack();
    } finally {
      clearInterval(heartbeat);
      state.heartbeats.delete(heartbeat);
    }
  }

  async #hasResult(id: string): Promise<boolean> {
    try {
      return (await this.#jsm!.streams.getMessage(this.#names.results, { last_by_subj: subjects.result(this.#ns, id) })) !== null;
    } catch {
      return false; // unknown: run it; publishing the outcome settles who was first
    }
  }

  /**
   * Publishes an outcome unless one exists (first writer wins); retries until done or abandoned. The
   * msg id names the job message too, so the outcome of a resubmitted failed job is not taken for a
   * duplicate of the failure it replaces.
   */
  async #publishResult(outcome: JobOutcome, state: WorkerState, jobSeq: number): Promise<boolean> {
    const subject = subjects.result(this.#ns, outcome.id);
    for (;;) {
      if (state.abandoned) return false;
      try {
        await this.#js.publish(subject, JSON.stringify(outcome), { msgID: `${outcome.id}@${jobSeq}`, expect: { lastSubjectSequence: 0 } });
        return true;
      } catch (error) {
        const code = apiCode(error);
        if (code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown) return true;
        await state.sleeper.sleep(RETRY_MS);
      }
    }
  }

  async *outcomes(ids: readonly string[]): AsyncIterable<JobOutcome> {
    const wanted = new Set(ids);
    for (const id of wanted) subjectToken(id, "job id");
    if (wanted.size === 0) return;
    await this.ready();
    let lastSeq = 0;
    while (wanted.size > 0) {
      if (this.#closed) throw new Error(`job queue closed before ${wanted.size} job(s) finished`);
      let consumer: Consumer | null = null;
      let reader: ConsumerMessages | null = null;
      try {
        // An ordered consumer lives in server memory, so a server restart loses it. nats.js would
        // recreate it, but its recreation can stall for two idle-heartbeat periods (the pull after
        // the reset asks for 0 messages); so on any sign of trouble the reader is ended and a new
        // ordered consumer starts after the last outcome seen.
        consumer = await this.#js.consumers.get(this.#names.results, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastSeq + 1 });
        reader = await consumer.consume({ max_messages: 256, expires: 10_000 });
        this.#readers.add(reader);
        if (this.#closed) reader.stop();
        watchReader(reader);
        for await (const m of reader) {
          lastSeq = m.seq;
          let outcome: JobOutcome;
          try {
            outcome = m.json<JobOutcome>();
          } catch {
            continue;
          }
          if (wanted.delete(outcome.id)) {
            yield outcome;
            if (wanted.size === 0) return;
          }
        }
      } catch (error) {
        if (this.#closed) throw error;
        await this.#sleeper.sleep(RETRY_MS);
      } finally {
        if (reader !== null) {
          this.#readers.delete(reader);
          reader.stop();
        }
        consumer?.delete().catch(() => false);
      }
    }
  }

  /** Stops this queue's workers (letting running jobs finish) and readers; the connection stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sleeper.wake();
    for (const reader of this.#readers) reader.stop();
    await Promise.all([...this.#workers].map((w) => w.stop()));
  }

  async #retry<T>(deadline: number, op: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await op();
      } catch (error) {
        if (Date.now() > deadline || this.#closed) throw error;
        await this.#sleeper.sleep(RETRY_MS);
      }
    }
  }
}

const READER_TROUBLE = new Set(["heartbeats_missed", "consumer_not_found", "consumer_deleted", "stream_not_found", "reset", "no_responders"]);

/** Stops an outcomes reader when its ordered consumer is lost, so the caller starts a new one. */
function watchReader(reader: ConsumerMessages): void {
  void (async () => {
    for await (const notification of reader.status()) {
      if (READER_TROUBLE.has(notification.type)) {
        reader.stop();
        return;
      }
    }
  })().catch(() => {});
}

/** Uses an existing stream or consumer as it is, or creates it; when creating fails because a
 * concurrent opener got there first, theirs is used. */
async function ensure<T>(create: () => Promise<T>, existing: () => Promise<T>): Promise<T> {
  try {
    // Look first: creating over an existing consumer would update its config on nats-server 2.9.
    return await existing();
  } catch (error) {
    if (apiCode(error) !== JetStreamApiCodes.StreamNotFound && apiCode(error) !== JetStreamApiCodes.ConsumerNotFound) throw error;
  }
  try {
    return await create();
  } catch (error) {
    if (error instanceof ReplicasMismatch) throw error;
    try {
      return await existing();
    } catch {
      throw error;
    }
  }
}

/** `pt.<ns>.jobs.<id>` → `pt.<ns>.jobs.>`: every job (or result) subject of the namespace (ids are one token). */
function wildcardOf(subject: string): string {
  return `${subject.slice(0, subject.lastIndexOf(".") + 1)}>`;
}

/** The subjects of `stream` matching `filter` that hold at least one message (paged by nats.js). */
async function subjectsHeld(jsm: JetStreamManager, stream: string, filter: string): Promise<Set<string>> {
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  return new Set(Object.keys(info.state.subjects ?? {}));
}
