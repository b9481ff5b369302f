// The OpenAI-compatible chat client (DESIGN §2: infra holds the client; services/llm/ holds the
// policy). One `chat` call is one HTTP request: the `openai` package's own retries are
// off, because the gateway retries, counts attempts and logs them. Errors are classified into the
// kinds `llm.failed` records; messages are scrubbed of anything that looks like a key.
import OpenAI from "openai";
import { ExitCode, TaggedError } from "../events/taggedError.ts";

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

export interface ChatCall {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature: number;
  readonly maxTokens: number;
  readonly json: boolean;
  readonly timeoutMs: number;
  /** The reply's JSON schema, when the request's output has one: a local model constrains its output by it (the HTTP client sends JSON mode only). */
  readonly schema?: object;
  /** The sampling seed (a local model; an HTTP endpoint is not sent one). */
  readonly seed?: number;
}

export interface ChatResult {
  readonly content: string;
  readonly model: string;
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  /** The completion's id, when the server gave one: for the trace only, never logged (it differs per call). */
  readonly id?: string;
  /** Each choice's finish reason ("stop", "length", …), when the server gave them: for the trace only. */
  readonly finishReasons?: readonly string[];
}

/**
 * `auth` (401/403), `model_not_found` (404 naming the model, or a 400 saying it does not exist) and
 * `endpoint_not_found` (any other 404: no chat-completions API at that URL) are configuration
 * errors: no retry helps, and the gateway asks no more (services/llm/circuit.ts).
 */
export type ChatErrorKind = "timeout" | "rate_limit" | "server_error" | "http_error" | "network" | "auth" | "model_not_found" | "endpoint_not_found" | "quota";

const RETRYABLE: ReadonlySet<ChatErrorKind> = new Set(["timeout", "rate_limit", "server_error", "network"]);

export class ChatError extends TaggedError {
  readonly _tag = "ChatError";
  /** The gateway turns it into an `llm.failed` record (services/llm/errors.ts CallFailed): reaching a command, it escaped that. */
  readonly exitCode = ExitCode.internal;
  readonly kind: ChatErrorKind;
  readonly status: number | null;
  readonly retryable: boolean;
  /** From a Retry-After header, when the server sent one. */
  readonly retryAfterMs: number | null;
  constructor(kind: ChatErrorKind, message: string, status: number | null, retryAfterMs: number | null = null) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.retryable = RETRYABLE.has(kind);
    this.retryAfterMs = retryAfterMs;
  }
}

export interface ChatClient {
  chat(call: ChatCall): Promise<ChatResult>;
  /** host and port of the endpoint (for `server.address` / `server.port` span attributes). */
  readonly server: { readonly address: string; readonly port: number };
}

/** Removes credentials from a message: the configured key and anything shaped like one. */
export function scrub(message: string, apiKey: string | null): string {
  let out = message;
  if (apiKey !== null && apiKey.length >= 4) out = out.split(apiKey).join("[redacted]");
  return out.replace(/\b(sk|pk|rk)-[A-Za-z0-9_*\-]{6,}/g, "[redacted]").replace(/(Bearer\s+)\S+/gi, "$1[redacted]").replace(/\s+/g, " ").slice(0, 300);
}

function retryAfter(headers: Headers | undefined): number | null {
  const value = headers?.get("retry-after-ms") ?? null;
  if (value !== null && Number.isFinite(Number(value))) return Number(value);
  const seconds = headers?.get("retry-after") ?? null;
  if (seconds !== null && Number.isFinite(Number(seconds))) return Number(seconds) * 1000;
  return null;
}

/**
 * The innermost message of an error's `cause` chain: the `openai` client says only "Connection
 * error." and fetch "fetch failed"; what a user can act on (ECONNREFUSED 127.0.0.1:8000, ENOTFOUND
 * host, a certificate problem) is below them.
 */
function rootCause(error: Error): string {
  let deepest: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (deepest as { cause?: unknown }).cause;
    if (cause === undefined || cause === null) break;
    deepest = cause;
  }
  const message = deepest instanceof Error ? deepest.message : String(deepest);
  return deepest === error || message.length === 0 ? error.message : message;
}

/**
 * A 404 about the model, not about the URL: OpenAI's `model_not_found` code, or an OpenAI-shaped
 * error at all (a `message`, as Ollama's and vLLM's have): whatever answered it speaks the API, so
 * the chat-completions URL is right. A URL without one answers a page, or a body of another shape
 * (a web framework's `{"detail": "Not Found"}`). Told by the reply's fields, never by its wording.
 */
const saysModel = (error: InstanceType<typeof OpenAI.APIError>): boolean => error.code === "model_not_found" || isApiErrorBody(error.error);

/** The error object of an OpenAI-shaped error reply (the client puts a body without one here whole). */
const isApiErrorBody = (body: unknown): boolean => typeof body === "object" && body !== null && "message" in body && typeof body.message === "string";

/** A 400 whose error code says the model does not exist, not one about JSON mode or a parameter. */
const saysNoSuchModel = (error: InstanceType<typeof OpenAI.APIError>): boolean => error.code === "model_not_found";

export function classify(error: unknown, apiKey: string | null): ChatError {
  if (error instanceof ChatError) return error;
  // The `openai` client parses a JSON-typed body with JSON.parse: a SyntaxError means the server
  // answered, with something that is not JSON (a proxy's error page, a truncated body). Not a
  // connection failure: it must not count towards taking the endpoint as unreachable.
  if (error instanceof SyntaxError) return new ChatError("server_error", scrub(`the server answered with a body that is not JSON (${error.message})`, apiKey), null);
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new ChatError("timeout", "the request timed out", null);
  if (error instanceof OpenAI.APIConnectionError) return new ChatError("network", scrub(`connection failed: ${rootCause(error)}`, apiKey), null);
  if (error instanceof OpenAI.APIError) {
    const status = typeof error.status === "number" ? error.status : null;
    // The client's message starts with the status again ("401 Incorrect API key …").
    const said = status === null ? error.message : error.message.replace(new RegExp(`^${status} `), "");
    const message = scrub(`HTTP ${status ?? "?"}: ${said}`, apiKey);
    if (status === 401 || status === 403) return new ChatError("auth", message, status);
    if (status === 404) return new ChatError(saysModel(error) ? "model_not_found" : "endpoint_not_found", message, status);
    if (status === 400 && saysNoSuchModel(error)) return new ChatError("model_not_found", message, status);
    // OpenAI answers an exhausted quota or billing limit with 429 too: no retry helps, so it fails
    // at once (as a 401 does) instead of every call waiting out its backoff.
    if (status === 429 && (error.code === "insufficient_quota" || error.type === "insufficient_quota")) return new ChatError("quota", message, status);
    if (status === 429) return new ChatError("rate_limit", message, status, retryAfter(error.headers));
    if (status === 408) return new ChatError("timeout", message, status);
    if (status !== null && status >= 500) return new ChatError("server_error", message, status, retryAfter(error.headers));
    return new ChatError("http_error", message, status);
  }
  return new ChatError("network", scrub(String((error as Error)?.message ?? error), apiKey), null);
}

/**
 * A token count as the server reported it, when it is one: a whole number ≥ 0 that stays exact
 * when summed. Anything else (a string, a negative or fractional number, Infinity from `1e999`,
 * an absurd 1e300) counts as 0: the counts go into logged payloads whose schema wants integers
 * and into canonical JSON, which refuses non-finite numbers — a server's bad arithmetic crashed
 * the run (exit 4) or wrote a record its own verify called damaged (exit 3).
 */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 40 ? value : 0;
}

/**
 * A client for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio …). Local servers
 * usually need no key; the `openai` package insists on one, so a placeholder is sent then.
 */
export function openAiChatClient(options: { readonly baseURL: string; readonly apiKey: string | null }): ChatClient {
  const apiKey = options.apiKey;
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: apiKey ?? "no-key", maxRetries: 0 });
  const url = new URL(options.baseURL);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return {
    server: { address: url.hostname, port },
    async chat(call) {
      try {
        const response = await client.chat.completions.create(
          {
            model: call.model,
            messages: call.messages.map((m) => ({ role: m.role, content: m.content })),
            temperature: call.temperature,
            max_tokens: call.maxTokens,
            ...(call.json ? { response_format: { type: "json_object" as const } } : {}),
          },
          { timeout: call.timeoutMs, maxRetries: 0 },
        );
        // A body that is not a chat completion (an HTML page served with 200, an empty body, an
        // object without `choices`) is the server's fault, not an empty reply of the model.
        const body: unknown = response;
        if (body === null || typeof body !== "object" || !Array.isArray((body as { choices?: unknown }).choices)) {
          const shown = typeof body === "string" ? JSON.stringify(body.slice(0, 120)) : body === undefined || body === null ? "an empty body" : `an object without 'choices': ${JSON.stringify(body).slice(0, 120)}`;
          throw new ChatError("server_error", scrub(`the server's answer is not a chat completion: ${shown}`, apiKey), null);
        }
        const content = response.choices[0]?.message?.content ?? "";
        const id: unknown = response.id;
        const finishReasons = response.choices.map((c) => c?.finish_reason as unknown).filter((r): r is string => typeof r === "string" && r.length > 0);
        return {
          content: typeof content === "string" ? content : "",
          model: typeof response.model === "string" && response.model.length > 0 ? response.model : call.model,
          usage: { promptTokens: tokenCount(response.usage?.prompt_tokens), completionTokens: tokenCount(response.usage?.completion_tokens) },
          ...(typeof id === "string" && id.length > 0 ? { id: scrub(id, apiKey) } : {}),
          ...(finishReasons.length > 0 ? { finishReasons } : {}),
        };
      } catch (error) {
        throw classify(error, apiKey);
      }
    },
  };
}
