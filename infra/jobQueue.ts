// The JobQueue interface (DESIGN §7): episodes queued for workers. The embedded default is an
// in-process pool; the distributed one a JetStream work-queue stream with a durable pull consumer.
// Jobs are idempotent by id: submitting an id twice runs it once, and a handler must tolerate
// being run again after a worker died mid-job (redelivery).
// Implementations: infra/inProcessJobQueue.ts (embedded) and infra/jetStreamJobQueue.ts; both pass
// test/contracts/jobQueue.ts.
import { ExitCode, TaggedError } from "../events/taggedError.ts";

export interface Job<Spec = unknown> {
  /** Unique and stable (e.g. the episode id); also usable in a NATS subject token. */
  readonly id: string;
  readonly spec: Spec;
  /**
   * W3C traceparent of the submitter's span for this job (a traced sweep's): the run continues its
   * trace. Tracing only: it never changes what the job does or its outcome.
   */
  readonly traceparent?: string;
}

export interface JobContext {
  /**
   * 1 for the first delivery; more when a worker died or the handler failed before. A delivery
   * numbered above maxAttempts (earlier ones all ended with dead workers) is reported as failed
   * without running the handler, so a job that kills its workers cannot circulate for ever.
   */
  readonly attempt: number;
  readonly worker: string;
}

export interface JobOutcome<Result = unknown> {
  readonly id: string;
  readonly ok: boolean;
  readonly result?: Result;
  /** The last failure's message when ok is false. */
  readonly error?: string;
  /** The handler rejected the job (JobRejected): no delivery could run it, so it was not retried. */
  readonly rejected?: true;
  /** What the rejection was for, when it says. */
  readonly reason?: JobRejection;
  readonly worker: string;
  readonly attempt: number;
}

export type JobHandler = (job: Job, context: JobContext) => Promise<unknown>;

/**
 * Thrown by a handler for a job that no delivery can run (a bad spec, a log that belongs to another
 * episode): it fails at once instead of being retried up to maxAttempts.
 */
export class JobRejected extends TaggedError {
  readonly _tag = "JobRejected";
  readonly exitCode = ExitCode.internal;
  /** Why, when the sweep has something to say about it (it travels in the outcome, over NATS too). */
  readonly reason: JobRejection | undefined;
  constructor(message: string, options?: ErrorOptions & { readonly reason?: JobRejection }) {
    super(message, options);
    this.reason = options?.reason;
  }
}

/** A rejection the submitter can act on: the job's episode id is taken by another episode's log. */
export type JobRejection = "episode-id-taken";

/** The reason a failure carries into its outcome (JobRejected's), if any. */
export const rejectionOf = (error: unknown): { readonly reason?: JobRejection } => (error instanceof JobRejected && error.reason !== undefined ? { reason: error.reason } : {});

/** Whether a handler's failure is worth another delivery. */
export const isRetryable = (error: unknown): boolean => !(error instanceof JobRejected);

export interface WorkOptions {
  /** Jobs this worker runs at once (default 1). */
  readonly concurrency?: number;
  /** Deliveries before a failing job is reported as failed (default 5); its last error is reported. */
  readonly maxAttempts?: number;
}

export interface WorkerHandle {
  /** Stops taking jobs and waits for the running ones to finish and be acknowledged. */
  stop(): Promise<void>;
  /** Stops at once without acknowledging running jobs, as a killed worker would: they are redelivered. */
  abandon(): Promise<void>;
}

/**
 * What a submit did with each id (every id once, in submission order): a caller that says "queued"
 * or reports a rate must not count the ids whose recorded outcome is simply served.
 */
export interface Submitted {
  /** Enqueued now: new ids, and failed ones queued again. */
  readonly queued: readonly string[];
  /** Already queued or running from an earlier submit: not enqueued again. */
  readonly pending: readonly string[];
  /** Already finished successfully: nothing runs, their recorded outcome is the outcome. */
  readonly finished: readonly string[];
}

export interface JobQueue {
  /** Enqueues jobs; an id already queued, running or done is not enqueued again, unless it failed: a failed job runs again. */
  submit(jobs: readonly Job[]): Promise<Submitted>;
  /** Runs `handler` on queued jobs until stopped. A throw retries the job (up to maxAttempts), a JobRejected fails it at once. */
  work(worker: string, handler: JobHandler, options?: WorkOptions): WorkerHandle;
  /**
   * Yields the final outcome of each of `ids` once, in completion order, then returns. Already
   * finished ids are yielded too; an id not yet submitted is waited for.
   */
  outcomes(ids: readonly string[]): AsyncIterable<JobOutcome>;
  /** Stops this queue's workers (running jobs finish) and makes pending outcome readers throw. */
  close(): Promise<void>;
}
