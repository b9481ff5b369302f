// Endpoint problems: why a run's model calls fell back because of its configuration rather than by
// chance (a refused key, model or URL; an exhausted quota; an endpoint that never answered, or
// answered a model with nothing but HTTP errors). What the CLI's exit 5 (`EXIT_ENDPOINT`,
// services/llm/errors.ts) names. The live ones come from the gateway's circuit
// (services/llm/circuit.ts); the recorded ones are read back from logs here.
import type { LlmCompletedPayload, LlmErrorKind, LlmFailedPayload, LlmRequestedPayload } from "../../events/llm.ts";
import type { LogRecord } from "../../events/record.ts";

/**
 * Why a run's model calls fell back because of its configuration rather than by chance: the key was
 * refused (`auth`), the endpoint does not serve the model (`model_not_found`) or has no
 * chat-completions API at the URL (`endpoint_not_found`), or it could not be reached
 * (`unreachable`: taken as down after `unreachableAfter` calls, or no call ever got an answer), or
 * it answered a model but never with a completion (`errors_only`, per model: no call of the run to that
 * model completed, and its calls failed with HTTP errors — 5xx, 429 — after their retries; among the
 * model's completed calls they are chance; a judge model the server cannot run is named even when
 * the answer model's calls complete).
 * What the CLI's exit 5 reports.
 */
export type EndpointProblemKind = "auth" | "model_not_found" | "endpoint_not_found" | "quota" | "unreachable" | "errors_only";
export interface EndpointProblem {
  readonly kind: EndpointProblemKind;
  /** The HTTP status of the refusal; null when nothing answered. */
  readonly status: number | null;
  /** The first failure's message, scrubbed of key-shaped strings (`HTTP 401: Incorrect API key provided: …`). */
  readonly message: string;
  /** host:port of the endpoint; null when read from a log, which does not record it. */
  readonly server: string | null;
  /** The model asked when it was refused. */
  readonly model: string | null;
  /** Met by this run's calls (false: only in logs served as they were recorded). */
  readonly live: boolean;
}

/** The kinds of a refusal: a failure of one of them condemns the endpoint (or the model) for the rest of a run. */
export type ConfigKind = "auth" | "model_not_found" | "endpoint_not_found" | "quota";
const CONFIG_KINDS: ReadonlySet<string> = new Set<ConfigKind>(["auth", "model_not_found", "endpoint_not_found", "quota"]);
export const isConfigKind = (kind: string): kind is ConfigKind => CONFIG_KINDS.has(kind);
/** The failure kinds of an endpoint that answered, with an HTTP error, after the retries (`errors_only` when no call to that model completed). */
export const HTTP_ERROR_KINDS: ReadonlySet<string> = new Set<LlmErrorKind>(["server_error", "rate_limit", "http_error"]);

/** How the messages of calls failed at once start (for people: a log's reader tells them by `notAsked`). */
export const NOT_ASKED = "not asked: ";
export const GAVE_UP = "endpoint unreachable: ";

/**
 * A logged failure of a call the gateway did not send (a refusal or a give-up met before: no
 * attempt), as opposed to the failure that condemned the endpoint. A fork's copy of its parent's
 * failure (`cached`) spent no attempt of its own, and is taken as the failure it copies.
 */
const notAsked = (f: LlmFailedPayload): boolean => f.attempts === 0 && f.cached !== true;

/**
 * The HTTP status of a logged failure, where its kind has only one (infra/openaiClient.ts
 * `classify`): `llm.failed` records no status of its own (its payload is part of the hash chain),
 * and its message is for people, not to be parsed. Other kinds (`auth` is 401 or 403, a
 * `server_error` any 5xx) are recorded with no status.
 */
const STATUS_OF_KIND: Partial<Record<LlmErrorKind, number>> = { rate_limit: 429, quota: 429, endpoint_not_found: 404 };
const statusOf = (f: LlmFailedPayload): number | null => STATUS_OF_KIND[f.error] ?? null;
/** One problem per kind (per model for `model_not_found` and `errors_only`). */
const problemKey = (p: Pick<EndpointProblem, "kind" | "model">): string => (p.kind === "model_not_found" || p.kind === "errors_only" ? `${p.kind} ${p.model ?? ""}` : p.kind);

/** The problems of several sources, one per kind (and model): the first source's wins, and it is live when any source's is. */
export function mergeProblems(...lists: ReadonlyArray<readonly EndpointProblem[]>): EndpointProblem[] {
  const merged = new Map<string, EndpointProblem>();
  for (const p of lists.flat()) {
    const seen = merged.get(problemKey(p));
    if (seen === undefined) merged.set(problemKey(p), p);
    else if (p.live && !seen.live) merged.set(problemKey(p), { ...seen, live: true });
  }
  return [...merged.values()];
}

/**
 * The endpoint problems recorded in logs (e.g. the cells an eval serves as they are): the
 * configuration kinds of `llm.failed`, calls given up at once as unreachable (`network`/`timeout`
 * with no attempt), logs whose model calls never got an answer at all, and models with no
 * `llm.completed` whose calls failed with HTTP errors (`errors_only`).
 */
export class RecordedEndpointProblems {
  private readonly found = new Map<string, EndpointProblem>();
  /** The keys of `found` whose problem is a call not asked (its message says so), kept until the refusal itself is read. */
  private readonly notAskedKeys = new Set<string>();
  private unreachable: EndpointProblem | null = null;
  /** Whether `unreachable` is a call given up at once (the endpoint was taken as down), not a connection that failed. */
  private givenUp = false;
  private readonly httpErrors = new Map<string | null, EndpointProblem>();
  private readonly completedModels = new Set<string | null>();
  private answered = false;
  add(records: readonly LogRecord[]): this {
    const models = new Map<string, string>();
    for (const r of records) {
      if (r.type === "llm.requested") models.set((r.payload as LlmRequestedPayload).requestHash, (r.payload as LlmRequestedPayload).model);
      else if (r.type === "llm.completed") {
        this.answered = true;
        this.completedModels.add(models.get((r.payload as LlmCompletedPayload).requestHash) ?? null);
      }
      if (r.type !== "llm.failed") continue;
      const f = r.payload as LlmFailedPayload;
      const model = models.get(f.requestHash) ?? null;
      if (isConfigKind(f.error)) {
        const problem: EndpointProblem = { kind: f.error, status: statusOf(f), message: f.message, server: null, model, live: false };
        const seen = this.found.get(problemKey(problem));
        // The refused call's own message, rather than a later call's 'not asked: …'.
        if (seen === undefined || (this.notAskedKeys.has(problemKey(problem)) && !notAsked(f))) {
          this.found.set(problemKey(problem), problem);
          if (notAsked(f)) this.notAskedKeys.add(problemKey(problem));
          else this.notAskedKeys.delete(problemKey(problem));
        }
      } else if (f.error === "network" || f.error === "timeout") {
        const problem: EndpointProblem = { kind: "unreachable", status: null, message: f.message, server: null, model: null, live: false };
        if (this.unreachable === null || (notAsked(f) && !this.givenUp)) {
          this.unreachable = problem;
          this.givenUp = notAsked(f);
        }
      } else if (HTTP_ERROR_KINDS.has(f.error) && !this.httpErrors.has(model)) this.httpErrors.set(model, { kind: "errors_only", status: statusOf(f), message: f.message, server: null, model, live: false });
    }
    return this;
  }
  problems(): EndpointProblem[] {
    const given = this.unreachable !== null && (this.givenUp || !this.answered);
    return [...this.found.values(), ...(given ? [this.unreachable!] : []), ...[...this.httpErrors].filter(([model]) => !this.completedModels.has(model)).map(([, p]) => p)];
  }
}

