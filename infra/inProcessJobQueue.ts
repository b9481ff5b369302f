// The embedded JobQueue (DESIGN §7): an in-memory queue drained by a pool of in-process workers.
// Same contract as the JetStream queue (test/contracts/jobQueue.ts): ids are deduplicated for the
// queue's lifetime, a throwing handler is retried up to maxAttempts, an abandoned worker's running
// jobs go back to the front of the queue with the next attempt number.
import { isRetryable, rejectionOf, type Job, type JobHandler, type JobOutcome, type JobQueue, type JobRejection, type Submitted, type WorkOptions, type WorkerHandle } from "./jobQueue.ts";

export interface InProcessJobQueueOptions {
  /** Delay before a failed job is offered again (default 0). */
  readonly backoffMs?: number;
}

interface Entry {
  readonly job: Job;
  state: "queued" | "running" | "done";
  /** Deliveries so far; the next one's context.attempt is deliveries + 1. */
  deliveries: number;
  /** Identifies the current delivery, so a settling handler from an abandoned delivery is ignored. */
  token: number;
  lastError?: string;
  /** Its outcome, once done. */
  outcome?: JobOutcome;
}

interface Worker {
  readonly name: string;
  readonly handler: JobHandler;
  readonly concurrency: number;
  readonly maxAttempts: number;
  readonly running: Map<string, number>;
  abandoned: boolean;
  idle: Array<() => void>;
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class InProcessJobQueue implements JobQueue {
  readonly #backoffMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #ready: string[] = [];
  readonly #finished: JobOutcome[] = [];
  /** Failed outcomes of jobs submitted again: no longer the job's outcome. */
  readonly #retired = new WeakSet<JobOutcome>();
  /** Workers taking jobs, in round-robin order. */
  readonly #workers: Worker[] = [];
  readonly #stopping = new Set<Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #next = 0;
  #tokens = 0;
  #changed: Array<() => void> = [];
  #closed = false;

  constructor(options: InProcessJobQueueOptions = {}) {
    this.#backoffMs = Math.max(0, options.backoffMs ?? 0);
  }

  async submit(jobs: readonly Job[]): Promise<Submitted> {
    if (this.#closed) throw new Error("job queue is closed");
    const submitted = { queued: [] as string[], pending: [] as string[], finished: [] as string[] };
    const seen = new Set<string>();
    for (const job of jobs) {
      if (seen.has(job.id)) continue;
      seen.add(job.id);
      const failed = this.#entries.get(job.id)?.outcome;
      if (failed !== undefined && !failed.ok) {
        // A failed job runs again: its outcome is set aside (readers skip it) and it is queued anew.
        this.#retired.add(failed);
        this.#entries.delete(job.id);
      }
      const entry = this.#entries.get(job.id);
      if (entry !== undefined) {
        (entry.state === "done" ? submitted.finished : submitted.pending).push(job.id);
        continue;
      }
      this.#entries.set(job.id, { job, state: "queued", deliveries: 0, token: 0 });
      this.#ready.push(job.id);
      submitted.queued.push(job.id);
    }
    this.#pump();
    return submitted;
  }

  work(worker: string, handler: JobHandler, options: WorkOptions = {}): WorkerHandle {
    if (this.#closed) throw new Error("job queue is closed");
    const w: Worker = {
      name: worker,
      handler,
      concurrency: Math.max(1, Math.floor(options.concurrency ?? 1)),
      maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? 5)),
      running: new Map(),
      abandoned: false,
      idle: [],
    };
    this.#workers.push(w);
    // Start on the next turn, so workers registered together share the queue from the start.
    setImmediate(() => this.#pump());
    let stopped: Promise<void> | null = null;
    return {
      stop: () => {
        stopped ??= this.#stop(w);
        return stopped;
      },
      abandon: async () => {
        if (w.abandoned) return;
        w.abandoned = true;
        this.#retire(w);
        const requeue: string[] = [];
        for (const id of w.running.keys()) {
          const entry = this.#entries.get(id);
          if (entry === undefined || entry.state !== "running") continue;
          entry.state = "queued";
          entry.token = 0;
          requeue.push(id);
        }
        w.running.clear();
        this.#ready.unshift(...requeue);
        for (const wake of w.idle.splice(0)) wake();
        this.#pump();
      },
    };
  }

  async *outcomes(ids: readonly string[]): AsyncIterable<JobOutcome> {
    const wanted = new Set(ids);
    let cursor = 0;
    while (wanted.size > 0) {
      while (cursor < this.#finished.length) {
        const outcome = this.#finished[cursor++]!;
        if (!this.#retired.has(outcome) && wanted.delete(outcome.id)) {
          yield outcome;
          if (wanted.size === 0) return;
        }
      }
      if (this.#closed) throw new Error(`job queue closed before ${wanted.size} job(s) finished`);
      await new Promise<void>((resolve) => this.#changed.push(resolve));
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all([...this.#workers].map((w) => this.#stop(w)).concat([...this.#stopping]));
    this.#notify();
  }

  #retire(w: Worker): void {
    const index = this.#workers.indexOf(w);
    if (index >= 0) this.#workers.splice(index, 1);
  }

  #stop(w: Worker): Promise<void> {
    this.#retire(w);
    const done = w.running.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => w.idle.push(resolve));
    this.#stopping.add(done);
    return done.finally(() => this.#stopping.delete(done));
  }

  #notify(): void {
    for (const wake of this.#changed.splice(0)) wake();
  }

  /** Hands queued jobs to workers with free slots, round-robin so that workers share the queue. */
  #pump(): void {
    while (this.#ready.length > 0 && this.#workers.length > 0) {
      let chosen: Worker | null = null;
      for (let i = 0; i < this.#workers.length; i++) {
        const w = this.#workers[(this.#next + i) % this.#workers.length]!;
        if (w.running.size < w.concurrency) {
          chosen = w;
          this.#next = (this.#next + i + 1) % this.#workers.length;
          break;
        }
      }
      if (chosen === null) return;
      const entry = this.#entries.get(this.#ready.shift()!)!;
      this.#deliver(chosen, entry);
    }
  }

  #deliver(w: Worker, entry: Entry): void {
    const attempt = ++entry.deliveries;
    const token = ++this.#tokens;
    entry.state = "running";
    entry.token = token;
    w.running.set(entry.job.id, token);
    if (attempt > w.maxAttempts) {
      // Earlier deliveries ended without a result (abandoned workers): give up rather than loop.
      const error = entry.lastError ?? `no outcome after ${attempt - 1} deliveries (workers stopped mid-job)`;
      queueMicrotask(() => this.#settle(w, entry, token, { ok: false, error, attempt }));
      return;
    }
    Promise.resolve()
      .then(() => w.handler(entry.job, { attempt, worker: w.name }))
      .then(
        (result) => this.#settle(w, entry, token, { ok: true, result, attempt }),
        (error: unknown) => this.#settle(w, entry, token, { ok: false, error: errorMessage(error), attempt, final: !isRetryable(error), ...rejectionOf(error) }),
      );
  }

  #settle(w: Worker, entry: Entry, token: number, r: { ok: boolean; result?: unknown; error?: string; attempt: number; final?: boolean; reason?: JobRejection }): void {
    if (entry.token !== token || entry.state !== "running" || w.abandoned) return;
    w.running.delete(entry.job.id);
    if (r.ok) {
      this.#finish(entry, { id: entry.job.id, ok: true, result: r.result, worker: w.name, attempt: r.attempt });
    } else if (r.attempt >= w.maxAttempts || r.final === true) {
      this.#finish(entry, { id: entry.job.id, ok: false, error: r.error, worker: w.name, attempt: r.attempt, ...(r.final === true ? { rejected: true as const, ...(r.reason === undefined ? {} : { reason: r.reason }) } : {}) });
    } else {
      entry.lastError = r.error;
      entry.state = "queued";
      entry.token = 0;
      if (this.#backoffMs === 0 || this.#closed) this.#ready.push(entry.job.id);
      else {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          this.#ready.push(entry.job.id);
          this.#pump();
        }, this.#backoffMs);
        this.#timers.add(timer);
      }
    }
    if (w.running.size === 0) for (const wake of w.idle.splice(0)) wake();
    this.#pump();
  }

  #finish(entry: Entry, outcome: JobOutcome): void {
    entry.state = "done";
    entry.outcome = outcome;
    this.#finished.push(outcome);
    this.#notify();
  }
}
