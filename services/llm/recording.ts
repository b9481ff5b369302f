// Recorded answers: a content-addressed cache (request hash → recorded completion, and the recorded
// failure of a request never completed) that a gateway with `reuse` serves without HTTP, and the
// responder that serves only recordings (a fork with `--reuse-llm` and no endpoint).
import type { LlmCompletedPayload, LlmFailedPayload } from "../../events/llm.ts";
import type { LogRecord } from "../../events/record.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";

/**
 * Recorded completions by request hash, and the recorded failures of requests never completed (a
 * fork with no endpoint serves those as logged, so it reproduces its parent's log exactly).
 */
export class LlmCache {
  private readonly answers = new Map<string, LlmCompletedPayload>();
  private readonly failures = new Map<string, LlmFailedPayload>();
  get size(): number {
    return this.answers.size;
  }
  get(hash: string): LlmCompletedPayload | undefined {
    return this.answers.get(hash);
  }
  /** The recorded failure of a request that has no recorded completion. */
  failure(hash: string): LlmFailedPayload | undefined {
    return this.answers.has(hash) ? undefined : this.failures.get(hash);
  }
  put(answer: LlmCompletedPayload): void {
    if (!this.answers.has(answer.requestHash)) this.answers.set(answer.requestHash, answer);
  }
  /** Adds every completion and failure of a log (e.g. a parent's, before a fork). */
  addRecords(records: readonly LogRecord[]): this {
    for (const r of records) {
      if (r.type === "llm.completed") this.put(r.payload as LlmCompletedPayload);
      else if (r.type === "llm.failed") {
        const failed = r.payload as LlmFailedPayload;
        if (!this.failures.has(failed.requestHash)) this.failures.set(failed.requestHash, failed);
      }
    }
    return this;
  }
}

/**
 * Serves recorded answers only (a fork with `--reuse-llm` and no endpoint): a request whose hash is
 * in the cache gets its recorded completion (`cached`), one recorded only as a failure gets that
 * failure as logged, `cached` too (with no endpoint there is nothing to retry it on), any other
 * fails with `no_backend`.
 */
export function cachedOnlyResponder(cache: LlmCache): LlmResponder {
  return {
    respond: async (record) => {
      const recorded = cache.get(record.payload.requestHash);
      if (recorded !== undefined) return { type: "llm.completed", payload: { ...recorded, attempts: 0, cached: true } };
      const failed = cache.failure(record.payload.requestHash);
      // As a served completion says: cached, no HTTP attempt (the parent's attempts and tokens were its own).
      if (failed !== undefined) return { type: "llm.failed", payload: { ...failed, attempts: 0, cached: true } };
      return { type: "llm.failed", payload: { attempts: 0, error: "no_backend", fallback: "deterministic", message: "no recorded answer for this request and no LLM endpoint configured", requestHash: record.payload.requestHash } };
    },
  };
}
