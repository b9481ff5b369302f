// The gateway's parts on their own (services/llm/): the tagged errors a call fails with and the
// exit code each stands for, the retry schedule's delays, and how long a call can wait.
import { Duration, Effect, Schedule } from "effect";
import { describe, expect, it } from "vitest";
import { EXIT_ENDPOINT as CLI_EXIT_ENDPOINT } from "../services/cli/llm.ts";
import { CallFailed, EXIT_ENDPOINT, GivenUp, InvalidOutput, NoValidator, RefusedBefore, type CallFailure } from "../services/llm/errors.ts";
import { callLimitMs, retrySchedule } from "../services/llm/retry.ts";

describe("tagged call errors", () => {
  it("carry the llm.failed kind they are logged as and their exit code: 5 for the configuration's faults, 0 for chance", () => {
    const failures: CallFailure[] = [
      new CallFailed({ kind: "auth", message: "HTTP 401: no", status: 401 }),
      new CallFailed({ kind: "quota", message: "HTTP 429: quota", status: 429 }),
      new CallFailed({ kind: "server_error", message: "HTTP 503: busy", status: 503 }),
      new CallFailed({ kind: "timeout", message: "the request timed out", status: null }),
      new RefusedBefore({ kind: "model_not_found", message: "not asked: …" }),
      new GivenUp({ kind: "network", message: "endpoint unreachable: …" }),
      new InvalidOutput({ message: "invalid output after a repair attempt: …", content: "{}" }),
      new NoValidator({ message: "no validator for output schema 'x'" }),
    ];
    expect(failures.map((f) => [f._tag, f.kind, f.exitCode])).toEqual([
      ["CallFailed", "auth", 5],
      ["CallFailed", "quota", 5],
      ["CallFailed", "server_error", 0],
      ["CallFailed", "timeout", 0],
      ["RefusedBefore", "model_not_found", 5],
      ["GivenUp", "network", 5],
      ["InvalidOutput", "invalid_output", 0],
      ["NoValidator", "invalid_output", 0],
    ]);
    expect(failures.every((f) => f instanceof Error && f.message.length > 0)).toBe(true);
  });

  it("EXIT_ENDPOINT is the CLI's exit 5", () => {
    expect(EXIT_ENDPOINT).toBe(5);
    expect(EXIT_ENDPOINT).toBe(CLI_EXIT_ENDPOINT);
  });

  it("are told apart by tag in the effect's error channel", async () => {
    const handled = await Effect.runPromise(
      Effect.fail<CallFailure>(new GivenUp({ kind: "timeout", message: "gone" })).pipe(
        Effect.catchTag("GivenUp", (e) => Effect.succeed(`given up: ${e.kind}, exit ${e.exitCode}`)),
        Effect.catch(() => Effect.succeed("other")),
      ),
    );
    expect(handled).toBe("given up: timeout, exit 5");
  });
});

describe("the retry schedule", () => {
  /** The schedule's first `n` delays (ms) for the failures given. */
  const delays = async (policy: { maxAttempts: number; backoffMs: number }, failures: ReadonlyArray<{ retryable: boolean; retryAfterMs: number | null }>) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const step = yield* Schedule.toStep(retrySchedule(policy));
        const out: number[] = [];
        for (const f of failures) out.push(Duration.toMillis((yield* step(0, f))[1]));
        return out;
      }),
    );
  const plain = { retryable: true, retryAfterMs: null };

  it("doubles from backoffMs, capped at 8 s; a longer Retry-After is waited, up to 30 s", async () => {
    expect(await delays({ maxAttempts: 6, backoffMs: 500 }, [plain, plain, plain, plain, plain, plain])).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(await delays({ maxAttempts: 3, backoffMs: 500 }, [{ retryable: true, retryAfterMs: 1200 }, { retryable: true, retryAfterMs: 45_000 }, { retryable: true, retryAfterMs: 10 }])).toEqual([1200, 30_000, 2000]);
    expect(await delays({ maxAttempts: 3, backoffMs: 0 }, [plain, plain])).toEqual([0, 0]);
  });

  it("callLimitMs: every attempt's timeout and the backoffs between them", () => {
    expect(callLimitMs({ maxAttempts: 3, backoffMs: 500, timeoutMs: 60_000 })).toBe(181_500);
    expect(callLimitMs({ maxAttempts: 1, backoffMs: 500, timeoutMs: 30_000 })).toBe(30_000);
    expect(callLimitMs({ maxAttempts: 6, backoffMs: 3000, timeoutMs: 1000 })).toBe(6000 + 3000 + 6000 + 8000 + 8000 + 8000);
  });
});
