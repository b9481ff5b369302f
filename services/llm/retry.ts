// Retries of a model call's HTTP attempts, as an effect `Schedule` run by `Effect.retry`: a
// retryable failure (429, 5xx, a timeout, a connection error) is tried again after a backoff that
// starts at `backoffMs` and doubles per retry, capped at 8 s; a server's Retry-After longer than
// that is honoured up to 30 s. At most `maxAttempts` attempts in all; a failure no retry helps (a
// refusal, another 4xx) ends the call at once. The per-attempt timeout is the `openai` client's own
// (`timeoutMs`, infra/openaiClient.ts), which aborts the request: a timed-out attempt is a
// retryable failure like any other.
import { Duration, Effect, Schedule } from "effect";

/** The longest backoff between two attempts. */
export const MAX_BACKOFF_MS = 8000;
/** The longest wait a server's Retry-After gets. */
export const MAX_RETRY_AFTER_MS = 30_000;

export interface RetryPolicy {
  /** Attempts per call, the first included (≥ 1). */
  readonly maxAttempts: number;
  /** The first backoff. */
  readonly backoffMs: number;
}

/** What the schedule needs of a failure: whether a retry may help, and how long the server asked to wait. */
export interface RetryableFailure {
  readonly retryable: boolean;
  readonly retryAfterMs: number | null;
}

/** The backoff before retry `n` (1: after the first attempt), without a Retry-After. */
export const backoffBefore = (policy: RetryPolicy, n: number): number => Math.min(MAX_BACKOFF_MS, policy.backoffMs * 2 ** (n - 1));

/** The waits between attempts: exponential from `backoffMs`, capped at 8 s, stretched to the failure's Retry-After (up to 30 s). */
export const retrySchedule = <E extends RetryableFailure>(policy: RetryPolicy): Schedule.Schedule<Duration.Duration, E> =>
  Schedule.exponential(Duration.millis(policy.backoffMs)).pipe(
    Schedule.setInputType<E>(),
    Schedule.modifyDelay(({ duration, input }) => Effect.succeed(Math.min(MAX_RETRY_AFTER_MS, Math.max(Math.min(MAX_BACKOFF_MS, Duration.toMillis(duration)), input.retryAfterMs ?? 0)))),
  );

/** Runs `attempt` again on retryable failures, as the policy says; the last failure when the attempts run out. */
export const withRetries =
  (policy: RetryPolicy) =>
  <A, E extends RetryableFailure, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    // Attempts stop at the first whole number ≥ maxAttempts (a config read from JSON is a whole number already).
    Effect.retry(attempt, { schedule: retrySchedule<E>(policy), times: Math.ceil(policy.maxAttempts) - 1, while: (e: E) => e.retryable });

/** The longest one call waits with no answer: every attempt's timeout and the backoffs between them. */
export const callLimitMs = (policy: RetryPolicy & { readonly timeoutMs: number }): number => {
  let ms = policy.maxAttempts * policy.timeoutMs;
  for (let n = 1; n < policy.maxAttempts; n++) ms += backoffBefore(policy, n);
  return ms;
};
