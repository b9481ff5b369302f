// LLM calls as events (DESIGN §4): an actor emits `llm.requested` (role, model, messages, params
// and the sha256 of the canonical request) addressed to the gateway; the sequencer hands it to the
// LLM gateway (services/llm/index.ts) and appends the answer, `llm.completed` or `llm.failed`,
// addressed back to the requester within the same tick. Replay serves the logged answer and never
// calls a model. The request hash is content-addressed: equal requests have equal hashes, which is
// what the gateway's cache is keyed by (forks can reuse recorded answers when asked to).
import { Schema } from "effect";
import { hashOf } from "./canonical.ts";

/** The address of the gateway: not an actor; the sequencer answers records sent to it. */
export const LLM_GATEWAY_ID = "llm/gateway";

/**
 * A model role (which backend of an actor a request is for). The worlds declare their own (a world
 * module's `models.roles`, and `models.otherRoles` for what its own commands ask, such as an LLM
 * judge), registered with the world (services/kernel/worlds.ts): the kernel lists none.
 */
export type LlmRole = string;

const ROLES = new Set<LlmRole>();

/** Adds roles a world declares (again: a no-op), in the order registered. */
export function registerLlmRoles(roles: readonly LlmRole[]): void {
  for (const role of roles) ROLES.add(role);
}

/** The registered worlds' roles, in the order they were registered. */
export const llmRoles = (): readonly LlmRole[] => [...ROLES];

export const LlmMessage = Schema.Struct({
  role: Schema.Literals(["system", "user", "assistant"]),
  content: Schema.String,
});

export const LlmParams = Schema.Struct({
  temperature: Schema.Number,
  maxTokens: Schema.Int,
  /** Ask for a JSON object (`response_format: json_object`). */
  json: Schema.Boolean,
  /** The named output schema the gateway validates the content against (null: any text). */
  output: Schema.NullOr(Schema.String),
});

export const LlmRequested = Schema.Struct({
  role: Schema.NonEmptyString,
  model: Schema.String,
  messages: Schema.Array(LlmMessage),
  params: LlmParams,
  /** sha256 of the canonical {role, model, messages, params}. */
  requestHash: Schema.String,
  /** The query this call serves (for per-query token accounting), or null. */
  queryId: Schema.NullOr(Schema.String),
});

export const LlmUsage = Schema.Struct({ promptTokens: Schema.Int, completionTokens: Schema.Int });

export const LlmCompleted = Schema.Struct({
  requestHash: Schema.String,
  /** The model's text (already validated against the request's output schema). */
  content: Schema.String,
  usage: LlmUsage,
  /** The model that answered (as the endpoint reports it). */
  model: Schema.String,
  /** Which backend produced it, e.g. `openai-compatible`. */
  backend: Schema.String,
  /** HTTP requests made for this answer (retries and the repair attempt included); 0 when cached. */
  attempts: Schema.Int,
  /** True when the first output was invalid and the repair attempt produced this one. */
  repaired: Schema.optional(Schema.Boolean),
  costUsd: Schema.optional(Schema.Number),
  /** True when served from the content-addressed cache (a recorded answer), without HTTP. */
  cached: Schema.optional(Schema.Boolean),
});

/**
 * Why a call failed. `auth` (the endpoint refused the key: 401/403), `model_not_found` (it does not
 * serve the model), `endpoint_not_found` (no chat-completions API at the URL: 404) and `quota`
 * (the account's quota or billing limit is exhausted: OpenAI's 429 `insufficient_quota`) are
 * configuration errors: the gateway asks that endpoint (or model) no more in the run, and the CLI
 * exits 5. `budget`: the run had spent its `tokenBudget` (LlmConfig), so the call was not made. Kinds
 * are only ever added: old logs must still decode.
 */
export const LLM_ERROR_KINDS = ["timeout", "rate_limit", "server_error", "http_error", "network", "invalid_output", "no_backend", "auth", "model_not_found", "endpoint_not_found", "quota", "budget"] as const;
export type LlmErrorKind = (typeof LLM_ERROR_KINDS)[number];

export const LlmFailed = Schema.Struct({
  requestHash: Schema.String,
  error: Schema.Literals(LLM_ERROR_KINDS),
  /** One line about what went wrong (never a credential). */
  message: Schema.String,
  attempts: Schema.Int,
  /** The backend the requester falls back to (e.g. `deterministic`). */
  fallback: Schema.String,
  /** The last invalid output (invalid_output), cut to 2,000 characters. */
  content: Schema.optional(Schema.String),
  usage: Schema.optional(LlmUsage),
  /**
   * True when a fork with no endpoint served the failure its parent recorded for the request
   * (`attempts` then 0): its HTTP requests and tokens were spent by the parent, not by this log.
   */
  cached: Schema.optional(Schema.Boolean),
});

export const llmEvents = {
  "llm.requested": { version: 1, payload: LlmRequested },
  "llm.completed": { version: 1, payload: LlmCompleted },
  "llm.failed": { version: 1, payload: LlmFailed },
} as const;

export type LlmMessagePayload = typeof LlmMessage.Type;
export type LlmParamsPayload = typeof LlmParams.Type;
export type LlmRequestedPayload = typeof LlmRequested.Type;
export type LlmCompletedPayload = typeof LlmCompleted.Type;
export type LlmFailedPayload = typeof LlmFailed.Type;
export type LlmUsagePayload = typeof LlmUsage.Type;

/** The content address of a request: sha256 of its canonical JSON (role, model, messages, params). */
export function llmRequestHash(request: { readonly role: LlmRole; readonly model: string; readonly messages: readonly LlmMessagePayload[]; readonly params: LlmParamsPayload }): string {
  return hashOf({ messages: request.messages, model: request.model, params: request.params, role: request.role });
}

/** Builds a request payload with its hash. */
export function llmRequest(role: LlmRole, model: string, messages: readonly LlmMessagePayload[], params: LlmParamsPayload, queryId: string | null): LlmRequestedPayload {
  return { messages: [...messages], model, params, queryId, requestHash: llmRequestHash({ role, model, messages, params }), role };
}
