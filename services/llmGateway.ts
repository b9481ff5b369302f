// The LLM gateway (DESIGN §4, §8): answers the actors' `llm.requested` records with
// `llm.completed` or `llm.failed`, which the sequencer appends to the log in the same tick.
//   - one OpenAI-compatible endpoint from configuration (base URL, API key from the environment,
//     a model per role), through the `openai` client (infra/openaiClient.ts);
//   - the content is validated against the request's named output schema; an invalid output gets
//     one repair attempt (the error is sent back), then the call fails with `invalid_output` and the
//     requester falls back to its deterministic backend; the log says which backend produced what;
//   - 429 and 5xx (and timeouts, connection errors) are retried with exponential backoff, each
//     request has a timeout, and at most `concurrency` calls are in flight;
//   - a refused key (401/403), an unknown model or URL (404) is a configuration error: asked once,
//     then that endpoint (or model) fails at once for the rest of the run, as a dead one does after
//     `unreachableAfter` calls; `problems()` says what to fix (the CLI exits 5 on it), also for an
//     endpoint that answered every call with an HTTP error (5xx, 429) after the retries;
//   - while calls have had no answer for `waitNoticeMs`, `onWaiting` is told what they wait for (the
//     CLI says it on stderr: a hung endpoint left a command silent for minutes); never logged;
//   - tokens and cost are accounted per requesting actor and per query;
//   - a content-addressed cache (request hash → recorded completion) serves recorded answers with
//     no HTTP when asked to (`reuse`), e.g. for a fork of an LLM run;
//   - a `chat <model>` span per call with GenAI semantic-convention attributes; prompt and
//     completion content only when `captureContent` is on; never the API key.
// Replay never reaches this file: services/replay.ts serves the logged answers.
import { readFileSync } from "node:fs";
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { Context, Effect, Layer, Schema } from "effect";
import { schemaProblem } from "../actors/configDecoder.ts";
import { LLM_ROLES, type LlmCompletedPayload, type LlmErrorKind, type LlmFailedPayload, type LlmRequestedPayload, type LlmRole } from "../events/llm.ts";
import type { LogRecord } from "../events/record.ts";
import { ChatError, openAiChatClient, type ChatClient, type ChatMessage } from "../infra/openaiClient.ts";
import { AURA_LLM_OUTPUTS } from "../actors/aura/llm.ts";
import { ENVPROBE_LLM_OUTPUTS } from "../actors/envprobe/llm.ts";
import type { LlmResponder } from "./sequencer.ts";
import { UsageError } from "./replay.ts";

export interface ModelPrice {
  /** USD per million prompt tokens. */
  readonly input: number;
  /** USD per million completion tokens. */
  readonly output: number;
}

export interface LlmConfig {
  readonly baseURL: string;
  /** Never logged or traced. Local endpoints (vLLM, Ollama) usually need none. */
  readonly apiKey: string | null;
  /** The model of each role; a role without one (or with null) stays on its deterministic backend. */
  readonly models: Readonly<Partial<Record<LlmRole, string | null>>>;
  readonly timeoutMs?: number;
  /** HTTP attempts per call on retryable errors (429, 5xx, timeout, connection), first included. Default 3. */
  readonly maxAttempts?: number;
  /** First backoff; doubled per retry, capped at 8 s (a longer Retry-After is honoured up to 30 s). Default 500 ms. */
  readonly backoffMs?: number;
  /** Calls in flight at once. Default 4. */
  readonly concurrency?: number;
  readonly prices?: Readonly<Record<string, ModelPrice>>;
  /** Put prompts and completions on the `chat` spans (GenAI opt-in). Default off. */
  readonly captureContent?: boolean;
  /** Serve recorded answers from the cache without HTTP (forks, reruns). Default off. */
  readonly reuse?: boolean;
  /** The `backend` label logged on completions. Default `openai-compatible`. */
  readonly backend?: string;
  /**
   * After this many calls in a row fail to connect at all (every attempt a connection error), the
   * endpoint is taken as down for the rest of the run: later calls fail at once (`network`,
   * logged) instead of each waiting out its retries. 0 never gives up. Default 3.
   */
  readonly unreachableAfter?: number;
  /**
   * While calls are in flight and none has had an answer for this long, the gateway's `onWaiting`
   * is told (the CLI says on stderr what it waits for), then again every three times as long while
   * no answer comes. 0 never. Default 10 s.
   */
  readonly waitNoticeMs?: number;
}

/**
 * What the gateway is waiting for, told to `onWaiting` when calls have had no answer for
 * `waitNoticeMs`: a hung endpoint or a slow local model otherwise left a command silent for
 * minutes (each attempt waits `timeoutMs`, up to `maxAttempts` a call).
 */
export interface LlmWaiting {
  /** The models of the calls in flight, sorted. */
  readonly models: readonly string[];
  /** host:port of the endpoint. */
  readonly server: string;
  /** Calls sent (or waiting to be, behind the first call to the endpoint), not answered yet. */
  readonly inFlight: number;
  /** Calls waiting for one of the `concurrency` slots. */
  readonly queued: number;
  /** How long the oldest call in flight has waited. */
  readonly oldestMs: number;
  /** Whether the endpoint has answered any call of the run (with anything, an error too). */
  readonly answeredBefore: boolean;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  /** The longest one call waits with no answer: every attempt's timeout and the backoffs between them. */
  readonly callLimitMs: number;
  /** Calls in a row without an answer after which the endpoint is given up (0: never). */
  readonly unreachableAfter: number;
  /** Calls in a row that ended without an answer so far. */
  readonly unansweredInARow: number;
}

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

/** The failure kinds that condemn an endpoint (or a model) for the rest of a run. */
const CONFIG_KINDS: ReadonlySet<string> = new Set<EndpointProblemKind>(["auth", "model_not_found", "endpoint_not_found", "quota"]);
const isConfigKind = (kind: string): kind is "auth" | "model_not_found" | "endpoint_not_found" | "quota" => CONFIG_KINDS.has(kind);
/** The failure kinds of an endpoint that answered, with an HTTP error, after the retries (`errors_only` when no call to that model completed). */
const HTTP_ERROR_KINDS: ReadonlySet<string> = new Set<LlmErrorKind>(["server_error", "rate_limit", "http_error"]);
const statusOf = (message: string): number | null => {
  const m = /HTTP (\d{3})/.exec(message);
  return m === null ? null : Number(m[1]);
};
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
  private unreachable: EndpointProblem | null = null;
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
        const problem: EndpointProblem = { kind: f.error, status: statusOf(f.message), message: f.message, server: null, model, live: false };
        const seen = this.found.get(problemKey(problem));
        // The refused call's own message, rather than a later call's 'not asked: …'.
        if (seen === undefined || (seen.message.startsWith(NOT_ASKED) && !f.message.startsWith(NOT_ASKED))) this.found.set(problemKey(problem), problem);
      } else if (f.error === "network" || f.error === "timeout") {
        const problem: EndpointProblem = { kind: "unreachable", status: null, message: f.message, server: null, model: null, live: false };
        if (this.unreachable === null || (f.attempts === 0 && !this.unreachable.message.startsWith(GAVE_UP))) this.unreachable = problem;
      } else if (HTTP_ERROR_KINDS.has(f.error) && !this.httpErrors.has(model)) this.httpErrors.set(model, { kind: "errors_only", status: statusOf(f.message), message: f.message, server: null, model, live: false });
    }
    return this;
  }
  problems(): EndpointProblem[] {
    const given = this.unreachable !== null && (this.unreachable.message.startsWith(GAVE_UP) || !this.answered);
    return [...this.found.values(), ...(given ? [this.unreachable!] : []), ...[...this.httpErrors].filter(([model]) => !this.completedModels.has(model)).map(([, p]) => p)];
  }
}

/** How the messages of calls failed at once start (so a log's reader tells them from the refusal itself). */
const NOT_ASKED = "not asked: ";
const GAVE_UP = "endpoint unreachable: ";

/** Validates a model's output for a named schema: null when valid, else the reason. The request is there for schemas that depend on it (EnvProbe's belief fields). */
export type OutputValidator = (content: string, request: LlmRequestedPayload) => string | null;

/** The output schemas every gateway knows unless told otherwise: the AURA controller's and the EnvProbe agent's. */
export const DEFAULT_LLM_OUTPUTS: Readonly<Record<string, OutputValidator>> = { ...AURA_LLM_OUTPUTS, ...ENVPROBE_LLM_OUTPUTS };

export type LlmAnswer = { readonly type: "llm.completed"; readonly payload: LlmCompletedPayload } | { readonly type: "llm.failed"; readonly payload: LlmFailedPayload };

export interface UsageTotals {
  calls: number;
  failed: number;
  cached: number;
  httpRequests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export interface Accounting {
  readonly total: UsageTotals;
  readonly byActor: Readonly<Record<string, UsageTotals>>;
  readonly byQuery: Readonly<Record<string, UsageTotals>>;
}

const emptyTotals = (): UsageTotals => ({ calls: 0, failed: 0, cached: 0, httpRequests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });

/** Totals added up (e.g. the usage reported by every worker of a NATS sweep). */
export function sumTotals(list: readonly UsageTotals[]): UsageTotals {
  const sum = emptyTotals();
  for (const t of list) for (const k of Object.keys(sum) as (keyof UsageTotals)[]) sum[k] += t[k];
  sum.costUsd = round6(sum.costUsd);
  return sum;
}

/** A config without its API key: what may travel to other processes (a NATS job), which take the key from their own environment. */
export const settingsWithoutKey = (config: LlmConfig): Omit<LlmConfig, "apiKey"> => {
  const { apiKey: _key, ...settings } = config;
  return settings;
};

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

class Semaphore {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = Math.max(1, Math.floor(n));
  }
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.free++;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * The longest reply taken for a request: ~40 characters per asked token, at least 20,000. A server
 * that ignores max_tokens and sends megabytes (a runaway generation, a proxy's dump) would put them
 * into the log and every snapshot of the answer; it gets the repair attempt instead, and a failure
 * keeps its first 2,000 characters.
 */
const replyLimit = (request: LlmRequestedPayload): number => Math.max(20_000, request.params.maxTokens * 40);
/** How much of an unusable reply the repair attempt sends back. */
const REPAIR_ECHO_CHARS = 4000;

/**
 * A reply as the GenAI `gen_ai.output.messages` attribute (captureContent only). A reply past the
 * longest one taken for its request (a runaway generation, invalid for that) is cut there, marked.
 */
const outputMessages = (content: string, limit: number): string =>
  JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: content.length <= limit ? content : `${content.slice(0, limit)}… [${content.length - limit} more characters not captured]` }] }]);

export const repairMessage = (problem: string): string =>
  `Your previous reply could not be used: ${problem}. Reply again with only the JSON object in the required format, nothing else.`;

export interface LlmGatewayImpl {
  readonly config: LlmConfig;
  readonly cache: LlmCache;
  /** Answers one request (never rejects: failures are `llm.failed`). */
  complete(request: LlmRequestedPayload, from: string, telemetry?: { readonly tracer?: Tracer; readonly parent?: Span }): Promise<LlmAnswer>;
  /** The sequencer-facing side. */
  readonly responder: LlmResponder;
  accounting(): Accounting;
  /** HTTP requests sent so far. */
  readonly httpRequests: number;
  /** What made calls fall back for the configuration's sake so far (a refused key, model or URL; an unreachable endpoint; one that answered no call but with HTTP errors); empty when none did. */
  problems(): EndpointProblem[];
}

export interface LlmGatewayOptions {
  readonly client?: ChatClient;
  readonly outputs?: Readonly<Record<string, OutputValidator>>;
  readonly cache?: LlmCache;
  /** Told when calls have waited `waitNoticeMs` with no answer, and again while they still wait (see LlmWaiting). Never part of the log or traces. */
  readonly onWaiting?: (waiting: LlmWaiting) => void;
}

export function makeLlmGateway(config: LlmConfig, options: LlmGatewayOptions = {}): LlmGatewayImpl {
  const client = options.client ?? openAiChatClient({ baseURL: config.baseURL, apiKey: config.apiKey });
  const outputs = options.outputs ?? DEFAULT_LLM_OUTPUTS;
  const cache = options.cache ?? new LlmCache();
  const semaphore = new Semaphore(config.concurrency ?? 4);
  const timeoutMs = config.timeoutMs ?? 60_000;
  const maxAttempts = Math.max(1, config.maxAttempts ?? 3);
  const backoffMs = config.backoffMs ?? 500;
  const backend = config.backend ?? "openai-compatible";
  const unreachableAfter = config.unreachableAfter ?? 3;
  // Calls in a row that got no answer at all (every attempt failed to connect or timed out); at
  // `unreachableAfter` the endpoint is taken as down. A hanging server counts: waiting out every
  // call's timeouts made a 25-query eval take hours.
  let unreachableStreak = 0;
  let unreachableKind: "network" | "timeout" = "network";
  // The first connection failure (what `problems()` names), and whether anything ever answered.
  let firstNoAnswer: string | null = null;
  let answered = false;
  // Per model: the first HTTP error a call ended on (5xx, 429 after the retries), and whether any call
  // got a usable answer: every call to a model failing so is a model the endpoint is not serving
  // (`errors_only`), not chance, even while another model's calls complete.
  const firstHttpErrors = new Map<string, EndpointProblem>();
  const completedModels = new Set<string>();
  const server = `${client.server.address}:${client.server.port}`;
  // A refused key or URL condemns the endpoint, an unknown model that model, for the rest of the run.
  let endpointRefusal: EndpointProblem | null = null;
  const modelRefusals = new Map<string, EndpointProblem>();
  // Until the endpoint has been tried once, one call at a time: a wrong key or model is then
  // refused once (the calls that waited fail at once), not once per call in flight.
  let gateOpen = false;
  let gate: Promise<void> | null = null;
  let releaseGate = (): void => {};
  const openGate = (): void => {
    if (gateOpen) return;
    gateOpen = true;
    releaseGate();
  };
  /** Waits for the first call's first attempt; true for the call that makes it. */
  const passGate = async (): Promise<boolean> => {
    if (gateOpen) return false;
    if (gate !== null) {
      await gate;
      return false;
    }
    gate = new Promise<void>((resolve) => (releaseGate = resolve));
    return true;
  };
  const total = emptyTotals();
  const byActor = new Map<string, UsageTotals>();
  const byQuery = new Map<string, UsageTotals>();
  let httpRequests = 0;

  // Calls in flight by start (performance.now()), for `onWaiting`. The clock is the wait's alone:
  // nothing of it reaches an answer, the log or a span.
  const waitNoticeMs = options.onWaiting === undefined ? 0 : (config.waitNoticeMs ?? 10_000);
  const inFlight = new Map<number, { readonly model: string; readonly since: number }>();
  let nextCall = 0;
  let queued = 0;
  // The last answer of any kind (a completion, an HTTP error, an invalid reply): the endpoint is there.
  let lastHeard = -Infinity;
  let heardOnce = false;
  let lastNotice = -Infinity;
  let waitTimer: ReturnType<typeof setTimeout> | null = null;
  const heard = (): void => {
    lastHeard = performance.now();
    heardOnce = true;
  };
  let callLimitMs = maxAttempts * timeoutMs;
  for (let attempt = 1; attempt < maxAttempts; attempt++) callLimitMs += Math.min(8000, backoffMs * 2 ** (attempt - 1));
  /** Once no answer has come for `waitNoticeMs` while calls are in flight, and at most every three times that: one notice for them all. */
  const watchWaiting = (): void => {
    waitTimer = null;
    if (inFlight.size === 0) return;
    const now = performance.now();
    const oldest = Math.min(...[...inFlight.values()].map((c) => c.since));
    const due = (): number => Math.max(Math.max(lastHeard, oldest) + waitNoticeMs, lastNotice + 3 * waitNoticeMs);
    if (now >= due()) {
      lastNotice = now;
      options.onWaiting!({
        models: [...new Set([...inFlight.values()].map((c) => c.model))].sort(),
        server,
        inFlight: inFlight.size,
        queued,
        oldestMs: now - oldest,
        answeredBefore: heardOnce,
        timeoutMs,
        maxAttempts,
        callLimitMs,
        unreachableAfter,
        unansweredInARow: unreachableStreak,
      });
    }
    // Unref'd: a command whose calls are done never waits for it.
    waitTimer = setTimeout(watchWaiting, Math.max(1, due() - now));
    waitTimer.unref();
  };
  const startWaiting = (model: string): number => {
    const id = nextCall++;
    if (waitNoticeMs > 0) {
      inFlight.set(id, { model, since: performance.now() });
      if (waitTimer === null) watchWaiting();
    }
    return id;
  };
  const stopWaiting = (id: number): void => {
    if (!inFlight.delete(id) || inFlight.size > 0 || waitTimer === null) return;
    clearTimeout(waitTimer);
    waitTimer = null;
  };

  const apiKey = config.apiKey;
  const withoutKey = (text: string): string => (apiKey !== null && apiKey.length >= 4 && text.includes(apiKey) ? text.split(apiKey).join("[redacted]") : text);

  const costOf = (model: string, usage: { promptTokens: number; completionTokens: number }): number | null => {
    const price = config.prices?.[model];
    return price === undefined ? null : round6((usage.promptTokens * price.input + usage.completionTokens * price.output) / 1e6);
  };

  // What this gateway spent: an answer served from the cache carries the usage and cost of the
  // call that recorded it, which were spent then (a fork's parent), not now.
  // A failed call can have cost too: invalid output twice is two answered requests, billed.
  const account = (from: string, request: LlmRequestedPayload, answer: LlmAnswer, http: number) => {
    const queryId = request.queryId;
    const served = answer.type === "llm.completed" && answer.payload.cached === true;
    const usage = served ? { promptTokens: 0, completionTokens: 0 } : (answer.payload.usage ?? { promptTokens: 0, completionTokens: 0 });
    const cost = served ? 0 : answer.type === "llm.completed" ? (answer.payload.costUsd ?? 0) : (costOf(request.model, usage) ?? 0);
    const buckets = [total, byActor.get(from) ?? byActor.set(from, emptyTotals()).get(from)!];
    if (queryId !== null) buckets.push(byQuery.get(queryId) ?? byQuery.set(queryId, emptyTotals()).get(queryId)!);
    for (const b of buckets) {
      b.calls++;
      if (answer.type === "llm.failed") b.failed++;
      if (answer.type === "llm.completed" && answer.payload.cached === true) b.cached++;
      b.httpRequests += http;
      b.promptTokens += usage.promptTokens;
      b.completionTokens += usage.completionTokens;
      b.costUsd = round6(b.costUsd + cost);
    }
  };

  /** One model call with retries on retryable errors; `attempts` counts HTTP requests. */
  async function callWithRetry(request: LlmRequestedPayload, messages: readonly ChatMessage[], counter: { attempts: number }) {
    let json = request.params.json;
    for (let attempt = 1; ; attempt++) {
      counter.attempts++;
      httpRequests++;
      try {
        const reply = await client.chat({ model: request.model, messages, temperature: request.params.temperature, maxTokens: request.params.maxTokens, json, timeoutMs });
        heard();
        return reply;
      } catch (error) {
        const e = error instanceof ChatError ? error : new ChatError("network", String(error), null);
        if (e.kind !== "network" && e.kind !== "timeout") heard();
        // A refusal is final: the calls waiting at the gate must see it, not ask again.
        if (!e.retryable) recordRefusal(e, request.model);
        // A server that refuses JSON mode (400) is asked once more without it, as the release does;
        // the output is still validated against the schema.
        if (e.kind === "http_error" && e.status === 400 && json) {
          json = false;
          attempt--;
          continue;
        }
        if (!e.retryable || attempt >= maxAttempts) throw e;
        const wait = Math.min(30_000, Math.max(Math.min(8000, backoffMs * 2 ** (attempt - 1)), e.retryAfterMs ?? 0));
        await sleep(wait);
      } finally {
        openGate();
      }
    }
  }

  /** Keeps the first refusal of the endpoint (a key, a URL) or of a model. */
  function recordRefusal(e: ChatError, model: string): void {
    if (!isConfigKind(e.kind)) return;
    const problem: EndpointProblem = { kind: e.kind, status: e.status, message: e.message, server, model, live: true };
    if (e.kind === "model_not_found") {
      if (!modelRefusals.has(model)) modelRefusals.set(model, problem);
    } else endpointRefusal ??= problem;
  }

  /** The message of a call not asked because of an earlier refusal. */
  const refusedBefore = (p: EndpointProblem): string =>
    `${NOT_ASKED}${p.kind === "auth" ? `${server} refused an earlier call (${p.message}): check the API key` : p.kind === "quota" ? `${server} refused an earlier call for quota (${p.message}): check the account's plan and billing` : p.kind === "model_not_found" ? `${server} does not serve model '${p.model}' (${p.message})` : `${server} has no chat-completions API at ${config.baseURL} (${p.message})`}; not asked again in this run`;

  async function run(request: LlmRequestedPayload, span: Span | undefined): Promise<{ answer: LlmAnswer; http: number }> {
    const opener = await passGate();
    try {
      return await ask(request, span);
    } finally {
      if (opener) openGate();
    }
  }

  async function ask(request: LlmRequestedPayload, span: Span | undefined): Promise<{ answer: LlmAnswer; http: number }> {
    const counter = { attempts: 0 };
    const usage = { promptTokens: 0, completionTokens: 0 };
    let messages: readonly ChatMessage[] = request.messages;
    const validate = request.params.output === null ? () => null : outputs[request.params.output];
    if (validate === undefined) {
      return { answer: failed(request, "invalid_output", `no validator for output schema '${request.params.output}'`, 0), http: 0 };
    }
    const refused = endpointRefusal ?? modelRefusals.get(request.model);
    if (refused !== undefined) {
      span?.setAttribute("error.type", refused.kind);
      return { answer: failed(request, refused.kind as LlmErrorKind, refusedBefore(refused), 0), http: 0 };
    }
    if (unreachableAfter > 0 && unreachableStreak >= unreachableAfter) {
      span?.setAttribute("error.type", unreachableKind);
      return { answer: failed(request, unreachableKind, `${GAVE_UP}${unreachableStreak} calls in a row got no answer (${unreachableKind === "network" ? "could not connect" : "timed out"}) from ${server}; not asked again in this run`, 0), http: 0 };
    }
    for (const phase of ["first", "repair"] as const) {
      let result;
      try {
        result = await callWithRetry(request, messages, counter);
      } catch (error) {
        const e = error as ChatError;
        if (e.kind === "network" || e.kind === "timeout") {
          unreachableStreak++;
          unreachableKind = e.kind;
          firstNoAnswer ??= e.message;
        } else answered = true;
        if (HTTP_ERROR_KINDS.has(e.kind) && !firstHttpErrors.has(request.model)) firstHttpErrors.set(request.model, { kind: "errors_only", status: e.status, message: e.message, server, model: request.model, live: true });
        span?.setAttribute("error.type", e.kind);
        return { answer: failed(request, e.kind, e.message, counter.attempts, usage), http: counter.attempts };
      }
      unreachableStreak = 0;
      answered = true;
      usage.promptTokens += result.usage.promptTokens;
      usage.completionTokens += result.usage.completionTokens;
      span?.setAttribute("gen_ai.response.model", result.model);
      // The reply's id and finish reasons go to the trace only: the logged answer must not vary by call.
      if (result.id !== undefined) span?.setAttribute("gen_ai.response.id", result.id);
      if (result.finishReasons !== undefined) span?.setAttribute("gen_ai.response.finish_reasons", [...result.finishReasons]);
      // A server that echoes the Authorization header into its reply (a misconfigured proxy, a
      // model shown the key) must not carry the key into the log, the trace or a printed answer.
      const content = withoutKey(result.content);
      const problem = content.trim().length === 0 ? "the reply was empty" : content.length > replyLimit(request) ? `the reply is ${content.length} characters, far more than max_tokens ${request.params.maxTokens} allows` : validate(content, request);
      // The reply as the model gave it, valid or not: an invalid one is what a user debugging a prompt needs.
      if (config.captureContent === true) span?.setAttribute("gen_ai.output.messages", outputMessages(content, replyLimit(request)));
      if (problem === null) {
        completedModels.add(request.model);
        const cost = costOf(request.model, usage);
        const payload: LlmCompletedPayload = {
          attempts: counter.attempts,
          backend,
          content,
          model: result.model,
          requestHash: request.requestHash,
          usage: { ...usage },
          ...(phase === "repair" ? { repaired: true } : {}),
          ...(cost === null ? {} : { costUsd: cost }),
        };
        return { answer: { type: "llm.completed", payload }, http: counter.attempts };
      }
      // Each reply that failed validation is an event on the span (the attribute keeps only the last
      // reply); why it failed can quote the reply, so only with captureContent.
      span?.addEvent("probetown.llm.invalid_output", {
        "probetown.llm.phase": phase,
        ...(config.captureContent === true ? { "probetown.llm.problem": problem, "gen_ai.output.messages": outputMessages(content, replyLimit(request)) } : {}),
      });
      if (phase === "repair") {
        span?.setAttribute("error.type", "invalid_output");
        return { answer: failed(request, "invalid_output", `invalid output after a repair attempt: ${problem}`.slice(0, 300), counter.attempts, usage, content), http: counter.attempts };
      }
      messages = [...messages, { role: "assistant", content: content.slice(0, REPAIR_ECHO_CHARS) }, { role: "user", content: repairMessage(problem) }];
    }
    throw new Error("unreachable");
  }

  const failed = (request: LlmRequestedPayload, error: LlmErrorKind, message: string, attempts: number, usage?: { promptTokens: number; completionTokens: number }, content?: string): LlmAnswer => ({
    type: "llm.failed",
    payload: {
      attempts,
      error,
      fallback: "deterministic",
      message,
      requestHash: request.requestHash,
      ...(usage === undefined || usage.promptTokens + usage.completionTokens === 0 ? {} : { usage: { ...usage } }),
      ...(content === undefined ? {} : { content: content.slice(0, 2000) }),
    },
  });

  async function complete(request: LlmRequestedPayload, from: string, telemetry: { readonly tracer?: Tracer; readonly parent?: Span } = {}): Promise<LlmAnswer> {
    if (config.reuse === true) {
      const recorded = cache.get(request.requestHash);
      if (recorded !== undefined) {
        const answer: LlmAnswer = { type: "llm.completed", payload: { ...recorded, attempts: 0, cached: true } };
        completedModels.add(request.model);
        account(from, request, answer, 0);
        return answer;
      }
    }
    queued++;
    await semaphore.acquire();
    queued--;
    const waiting = startWaiting(request.model);
    const ctx = telemetry.parent === undefined ? otelContext.active() : trace.setSpan(otelContext.active(), telemetry.parent);
    const span = telemetry.tracer?.startSpan(
      `chat ${request.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.system": "openai",
          "gen_ai.request.model": request.model,
          "gen_ai.request.temperature": request.params.temperature,
          "gen_ai.request.max_tokens": request.params.maxTokens,
          ...(request.params.json ? { "gen_ai.output.type": "json" } : {}),
          "server.address": client.server.address,
          "server.port": client.server.port,
          "probetown.llm.role": request.role,
          "probetown.llm.request_hash": request.requestHash,
          "probetown.llm.requester": from,
          ...(request.queryId === null ? {} : { "probetown.query": request.queryId }),
          ...(config.captureContent === true ? { "gen_ai.input.messages": JSON.stringify(request.messages.map((m) => ({ role: m.role, parts: [{ type: "text", content: m.content }] }))) } : {}),
        },
      },
      ctx,
    );
    try {
      const { answer, http } = await run(request, span);
      if (answer.type === "llm.completed") cache.put(answer.payload);
      account(from, request, answer, http);
      if (span !== undefined) {
        const usage = answer.payload.usage;
        if (usage !== undefined) {
          span.setAttribute("gen_ai.usage.input_tokens", usage.promptTokens);
          span.setAttribute("gen_ai.usage.output_tokens", usage.completionTokens);
        }
        span.setAttribute("probetown.llm.attempts", answer.payload.attempts);
        if (answer.type === "llm.failed") span.setStatus({ code: SpanStatusCode.ERROR, message: answer.payload.error });
        else if (answer.payload.repaired === true) span.setAttribute("probetown.llm.repaired", true);
      }
      return answer;
    } finally {
      stopWaiting(waiting);
      span?.end();
      semaphore.release();
    }
  }

  const gateway: LlmGatewayImpl = {
    config,
    cache,
    complete,
    responder: { respond: (record, telemetry) => complete(record.payload, record.from, telemetry) },
    accounting: () => ({
      total: { ...total },
      byActor: Object.fromEntries([...byActor].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, { ...v }])),
      byQuery: Object.fromEntries([...byQuery].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, { ...v }])),
    }),
    get httpRequests() {
      return httpRequests;
    },
    problems: () => {
      const down = (unreachableAfter > 0 && unreachableStreak >= unreachableAfter) || (!answered && firstNoAnswer !== null);
      return [
        ...(endpointRefusal === null ? [] : [endpointRefusal]),
        ...modelRefusals.values(),
        ...(down ? [{ kind: "unreachable" as const, status: null, message: firstNoAnswer ?? "no answer", server, model: null, live: true }] : []),
        ...[...firstHttpErrors].filter(([model]) => !completedModels.has(model)).map(([, p]) => p),
      ];
    },
  };
  return gateway;
}

/** The gateway as an Effect service (the episode loop uses its `responder`). */
export class LlmGateway extends Context.Service<
  LlmGateway,
  {
    readonly complete: (request: LlmRequestedPayload, from: string) => Effect.Effect<LlmAnswer>;
    readonly accounting: Effect.Effect<Accounting>;
    readonly responder: LlmResponder;
  }
>()("probetown/services/LlmGateway") {
  static layer(config: LlmConfig, options: LlmGatewayOptions = {}): Layer.Layer<LlmGateway> {
    return Layer.sync(LlmGateway, () => LlmGateway.of(serviceOf(makeLlmGateway(config, options))));
  }
}

export const serviceOf = (g: LlmGatewayImpl) => ({
  complete: (request: LlmRequestedPayload, from: string) => Effect.promise(() => g.complete(request, from)),
  accounting: Effect.sync(() => g.accounting()),
  responder: g.responder,
});

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

/** Token use and cost of a log's model calls, per requesting actor and per query (recomputable from logs). */
export function usageFromRecords(records: readonly LogRecord[]): Accounting {
  const requests = new Map<number, LogRecord<LlmRequestedPayload>>();
  const total = emptyTotals();
  const byActor = new Map<string, UsageTotals>();
  const byQuery = new Map<string, UsageTotals>();
  for (const r of records) {
    if (r.type === "llm.requested") requests.set(r.seq, r as LogRecord<LlmRequestedPayload>);
    if (r.type !== "llm.completed" && r.type !== "llm.failed") continue;
    const request = r.cause === null ? undefined : requests.get(r.cause);
    const p = r.payload as Partial<LlmCompletedPayload & LlmFailedPayload>;
    const buckets = [total];
    if (request !== undefined) {
      buckets.push(byActor.get(request.from) ?? byActor.set(request.from, emptyTotals()).get(request.from)!);
      if (request.payload.queryId !== null) buckets.push(byQuery.get(request.payload.queryId) ?? byQuery.set(request.payload.queryId, emptyTotals()).get(request.payload.queryId)!);
    }
    // As the gateway accounts: a served recording's tokens and cost were spent by the run that recorded it.
    const served = p.cached === true;
    for (const b of buckets) {
      b.calls++;
      if (r.type === "llm.failed") b.failed++;
      if (served) b.cached++;
      b.httpRequests += p.attempts ?? 0;
      if (served) continue;
      b.promptTokens += p.usage?.promptTokens ?? 0;
      b.completionTokens += p.usage?.completionTokens ?? 0;
      b.costUsd = round6(b.costUsd + (p.costUsd ?? 0));
    }
  }
  const obj = (m: Map<string, UsageTotals>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { total, byActor: obj(byActor), byQuery: obj(byQuery) };
}

// ---- Configuration ------------------------------------------------------------------------------

export const DEFAULT_MODEL = "gpt-4o-mini";
const OPENAI_BASE_URL = "https://api.openai.com/v1";

const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1));
const LlmConfigFile = Schema.Struct({
  baseURL: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String),
  models: Schema.optionalKey(Schema.Record(Schema.String, Schema.NullOr(Schema.String))),
  timeoutMs: Schema.optionalKey(PositiveInt),
  maxAttempts: Schema.optionalKey(PositiveInt),
  backoffMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  concurrency: Schema.optionalKey(PositiveInt),
  prices: Schema.optionalKey(Schema.Record(Schema.String, Schema.Struct({ input: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)), output: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)) }))),
  captureContent: Schema.optionalKey(Schema.Boolean),
  reuse: Schema.optionalKey(Schema.Boolean),
  backend: Schema.optionalKey(Schema.String),
  unreachableAfter: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  waitNoticeMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
});
const configFileProblem = schemaProblem(LlmConfigFile);

/** null when an `--llm-config` file is well-formed, else one line naming the field. */
function llmConfigFileProblem(file: unknown): string | null {
  return configFileProblem(file)?.slice(0, 500) ?? null;
}

export interface LlmFlags {
  /** `--llm <baseURL>` */
  readonly llm?: string;
  /** `--model` values: `gpt-4o-mini` (every role) or `role=model` (`none` turns a role off); comma lists allowed. */
  readonly model?: readonly string[] | string;
  /** `--llm-config <file.json>` */
  readonly llmConfig?: string;
  /** The same settings as an object already read (an experiment spec's `llm` section), named by `label`. */
  readonly configObject?: { readonly label: string; readonly value: unknown };
  /** The roles the one-line note names (default: the AURA controller's intent, planner, answer; none: the episode's own models, for a fork). */
  readonly roles?: readonly LlmRole[];
}

export interface ResolvedLlm {
  /** null: deterministic backends. */
  readonly config: LlmConfig | null;
  /** One line for stderr saying which backend runs and why. */
  readonly note: string;
}

/**
 * The API key from the environment (never from a flag, so it stays out of shell history and logs),
 * without surrounding whitespace: a key read from a CRLF .env file ends in '\r', and was sent so
 * (a 401 naming a key that looks right).
 */
export const apiKeyFromEnv = (env: NodeJS.ProcessEnv): string | null => (nonEmpty(env.PROBETOWN_LLM_API_KEY) ?? nonEmpty(env.OPENAI_API_KEY))?.trim() ?? null;

/** The variable `apiKeyFromEnv` reads the key from (what a refused key's message names); null: none is set. */
export const apiKeyVariable = (env: NodeJS.ProcessEnv): "PROBETOWN_LLM_API_KEY" | "OPENAI_API_KEY" | null =>
  nonEmpty(env.PROBETOWN_LLM_API_KEY) !== undefined ? "PROBETOWN_LLM_API_KEY" : nonEmpty(env.OPENAI_API_KEY) !== undefined ? "OPENAI_API_KEY" : null;

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s.trim() === "" ? undefined : s);

/**
 * The fetch standard's blocked ("bad") ports, which Node's fetch — the `openai` client's HTTP —
 * refuses without connecting. A model served on one (6000, 6666, …) was reported unreachable
 * ("connection failed: bad port; is the server running?") after every call's retries.
 */
const BLOCKED_PORTS: ReadonlySet<number> = new Set([1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080]);

/**
 * Resolves the LLM configuration: `--llm-config` file, then `--llm` and `--model` flags over it,
 * then the environment (`PROBETOWN_LLM_BASE_URL`, `OPENAI_BASE_URL`, `PROBETOWN_LLM_API_KEY`,
 * `OPENAI_API_KEY`). The LLM is used only when asked for (a flag, a config file or
 * `PROBETOWN_LLM_BASE_URL`); asked for with neither an endpoint nor a key, the run stays
 * deterministic and the note says why.
 */
export function resolveLlmConfig(flags: LlmFlags, env: NodeJS.ProcessEnv = process.env): ResolvedLlm {
  let file: Partial<LlmConfig> & { models?: Record<string, string | null> } = {};
  if (flags.llmConfig !== undefined || flags.configObject !== undefined) {
    const label = flags.llmConfig !== undefined ? `--llm-config ${flags.llmConfig}` : flags.configObject!.label;
    if (flags.llmConfig !== undefined) {
      try {
        file = JSON.parse(readFileSync(flags.llmConfig, "utf8")) as typeof file;
      } catch (error) {
        throw new UsageError(`${label}: ${(error as Error).message}`);
      }
    } else file = flags.configObject!.value as typeof file;
    if (typeof file !== "object" || file === null || Array.isArray(file)) throw new UsageError(`${label}: expected a JSON object`);
    if ("apiKey" in file) throw new UsageError(`${label}: do not put the API key in a file; set PROBETOWN_LLM_API_KEY or OPENAI_API_KEY`);
    for (const role of Object.keys(file.models ?? {})) if (!(LLM_ROLES as readonly string[]).includes(role)) throw new UsageError(`${label}: models: unknown role '${role}' (roles: ${LLM_ROLES.join(", ")})`);
    const problem = llmConfigFileProblem(file);
    if (problem !== null) throw new UsageError(`${label}: ${problem}`);
  }
  const models: Partial<Record<LlmRole, string | null>> = { ...(file.models ?? {}) } as Partial<Record<LlmRole, string | null>>;
  const modelFlags = flags.model === undefined ? [] : (Array.isArray(flags.model) ? flags.model : [flags.model]).flatMap((m) => String(m).split(",")).map((m) => m.trim()).filter((m) => m.length > 0);
  let defaultModel: string | null = null;
  for (const m of modelFlags) {
    const eq = m.indexOf("=");
    if (eq < 0) defaultModel = m;
    else {
      const role = m.slice(0, eq).trim();
      const model = m.slice(eq + 1).trim();
      if (!(LLM_ROLES as readonly string[]).includes(role)) throw new UsageError(`--model ${m}: unknown role '${role}' (roles: ${LLM_ROLES.join(", ")}; or give a bare model for every role)`);
      if (model.length === 0) throw new UsageError(`--model ${m}: no model after '='`);
      models[role as LlmRole] = model === "none" ? null : model;
    }
  }
  const asked = flags.llm !== undefined || flags.llmConfig !== undefined || flags.configObject !== undefined || modelFlags.length > 0 || nonEmpty(env.PROBETOWN_LLM_BASE_URL) !== undefined;
  if (!asked) return { config: null, note: "backends: deterministic (no LLM asked for: --llm <baseURL>, --llm-config or PROBETOWN_LLM_BASE_URL)" };
  const apiKey = apiKeyFromEnv(env);
  const baseURL = flags.llm ?? file.baseURL ?? nonEmpty(env.PROBETOWN_LLM_BASE_URL) ?? nonEmpty(env.OPENAI_BASE_URL) ?? (apiKey !== null ? OPENAI_BASE_URL : null);
  if (baseURL === null) return { config: null, note: "backends: deterministic (no LLM endpoint and no API key: give --llm <baseURL> or set PROBETOWN_LLM_API_KEY / OPENAI_API_KEY)" };
  // Named by where it came from. A scheme-less `localhost:8000/v1` parses as a URL whose scheme is
  // `localhost:`: it ran, and every call failed with 'Connection error.'.
  const source = flags.llm !== undefined ? "--llm" : file.baseURL !== undefined ? `${flags.llmConfig !== undefined ? `--llm-config ${flags.llmConfig}` : flags.configObject!.label}: baseURL` : nonEmpty(env.PROBETOWN_LLM_BASE_URL) !== undefined ? "PROBETOWN_LLM_BASE_URL" : "OPENAI_BASE_URL";
  let protocol: string;
  try {
    protocol = new URL(baseURL).protocol;
  } catch {
    throw new UsageError(`${source}: not a URL: '${baseURL}' (e.g. http://127.0.0.1:11434/v1)`);
  }
  if (protocol !== "http:" && protocol !== "https:") throw new UsageError(`${source}: expected an http:// or https:// URL, got '${baseURL}' (e.g. http://127.0.0.1:11434/v1)`);
  const port = new URL(baseURL).port;
  if (BLOCKED_PORTS.has(Number(port))) throw new UsageError(`${source}: port ${port} is one Node's fetch (the model client's HTTP) never connects to, whatever listens there (a blocked port of the fetch standard: https://fetch.spec.whatwg.org/#port-blocking); serve the model on another port, e.g. 8000`);
  // A bare `none` (flag or file `model`) keeps every role not named deterministic.
  const named = defaultModel ?? (file as { model?: string }).model ?? DEFAULT_MODEL;
  const fallbackModel = named === "none" ? null : named;
  for (const role of LLM_ROLES) if (!(role in models)) models[role] = fallbackModel;
  const { models: _m, ...rest } = file;
  const config: LlmConfig = { ...rest, baseURL, apiKey, models };
  // No roles named (a fork): the models are the episode's own, whatever the defaults say.
  const roles = flags.roles !== undefined && flags.roles.length === 0 ? "the models of the episode's config" : (flags.roles ?? (["intent", "planner", "answer"] as const)).map((r) => `${r}=${models[r] ?? "deterministic"}`).join(" ");
  return { config, note: `backends: LLM at ${baseURL} (${roles}; key ${apiKey === null ? "none" : "from the environment"})` };
}
