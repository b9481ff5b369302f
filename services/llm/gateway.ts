// The LLM gateway (DESIGN §4, §8): answers the actors' `llm.requested` records with
// `llm.completed` or `llm.failed`, which the sequencer appends to the log in the same tick. One
// OpenAI-compatible endpoint from configuration (services/llm/config.ts), through the `openai`
// client (infra/openaiClient.ts). A call, as an effect:
//   - served from the recordings without HTTP when asked to (`reuse`; services/llm/recording.ts);
//   - else run in one of `concurrency` slots (services/llm/concurrency.ts), watched for a long
//     wait (services/llm/waiting.ts), traced as a `chat <model>` span (services/llm/spans.ts);
//   - not asked when the endpoint's circuit says so (services/llm/circuit.ts): a refusal earlier in
//     the run, an endpoint given up as unreachable; the first call goes alone through the gate;
//   - its HTTP attempts retried with backoff (services/llm/retry.ts), once more without JSON mode
//     when the server refuses that (400);
//   - its reply validated against the request's output schema, with one repair attempt
//     (services/llm/outputs.ts);
//   - a failure of any kind is a tagged error (services/llm/errors.ts) logged as `llm.failed`, and
//     the requester falls back to its deterministic backend;
//   - its tokens and cost accounted per requesting actor and per query (services/llm/usage.ts).
// Replay never reaches the gateway: services/kernel/replay.ts serves the logged answers.
import type { Span } from "@opentelemetry/api";
import { Effect } from "effect";
import type { LlmCompletedPayload, LlmErrorKind, LlmFailedPayload, LlmRequestedPayload } from "../../events/llm.ts";
import { ChatError, openAiChatClient, type ChatClient, type ChatMessage, type ChatResult } from "../../infra/openaiClient.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";
import { EndpointCircuit } from "./circuit.ts";
import { CallSlots } from "./concurrency.ts";
import { callSettings, type LlmConfig } from "./config.ts";
import { CallFailed, InvalidOutput, NoValidator, OverBudget, type CallFailure } from "./errors.ts";
import { DEFAULT_LLM_OUTPUTS, jsonSchemaOf, repairTurn, replyProblem, validatorOf, type OutputValidator } from "./outputs.ts";
import { localClientOf } from "./local.ts";
import type { EndpointProblem } from "./problems.ts";
import { LlmCache } from "./recording.ts";
import { callLimitMs, withRetries } from "./retry.ts";
import { spanAnswer, spanInvalidReply, spanReply, startChatSpan, type CallTelemetry } from "./spans.ts";
import { costOf, UsageBook, type Accounting } from "./usage.ts";
import { WaitingWatch, type LlmWaiting } from "./waiting.ts";

export type LlmAnswer = { readonly type: "llm.completed"; readonly payload: LlmCompletedPayload } | { readonly type: "llm.failed"; readonly payload: LlmFailedPayload };

export interface LlmGatewayImpl {
  readonly config: LlmConfig;
  readonly cache: LlmCache;
  /** Answers one request (never rejects: failures are `llm.failed`). */
  complete(request: LlmRequestedPayload, from: string, telemetry?: CallTelemetry): Promise<LlmAnswer>;
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

type Tokens = { promptTokens: number; completionTokens: number };

/** A call's failure as its `llm.failed` payload; `attempts` and `usage` are what the call spent until then. */
const failedPayload = (request: LlmRequestedPayload, failure: CallFailure, attempts: number, usage: Tokens): LlmFailedPayload => ({
  attempts,
  error: failure.kind as LlmErrorKind,
  fallback: "deterministic",
  message: failure.message,
  requestHash: request.requestHash,
  ...(usage.promptTokens + usage.completionTokens === 0 ? {} : { usage: { ...usage } }),
  ...(failure._tag === "InvalidOutput" ? { content: failure.content.slice(0, 2000) } : {}),
});

/** What an attempt rejected with, as the client's error (anything else is a failure to connect). */
const asChatError = (error: unknown): ChatError => (error instanceof ChatError ? error : new ChatError("network", String(error), null));

export function makeLlmGateway(config: LlmConfig, options: LlmGatewayOptions = {}): LlmGatewayImpl {
  const client = options.client ?? localClientOf(config) ?? openAiChatClient({ baseURL: config.baseURL, apiKey: config.apiKey });
  const outputs = options.outputs ?? DEFAULT_LLM_OUTPUTS;
  const cache = options.cache ?? new LlmCache();
  const settings = callSettings(config);
  const { timeoutMs, maxAttempts, backend, unreachableAfter } = settings;
  const captureContent = config.captureContent === true;
  // An in-process model (port 0) is named by its address alone ("local"), not "local:0".
  const server = client.server.port === 0 ? client.server.address : `${client.server.address}:${client.server.port}`;
  const circuit = new EndpointCircuit({ server, baseURL: config.baseURL, unreachableAfter });
  const slots = new CallSlots(settings.concurrency);
  const usage = new UsageBook(config.prices);
  const retrying = withRetries(settings);
  const waiting = new WaitingWatch({
    waitNoticeMs: options.onWaiting === undefined ? 0 : settings.waitNoticeMs,
    onWaiting: options.onWaiting,
    server,
    timeoutMs,
    maxAttempts,
    callLimitMs: callLimitMs(settings),
    unreachableAfter,
    queued: () => slots.queued,
    unansweredInARow: () => circuit.unansweredInARow,
  });
  let httpRequests = 0;

  const apiKey = config.apiKey;
  const withoutKey = (text: string): string => (apiKey !== null && apiKey.length >= 4 && text.includes(apiKey) ? text.split(apiKey).join("[redacted]") : text);

  /**
   * One HTTP request. Before any but the call's first, the gate opens: the first call of the run
   * lets the others through once its first attempt has ended, a retry's backoff included.
   */
  const send = (request: LlmRequestedPayload, messages: readonly ChatMessage[], json: boolean, counter: { attempts: number }): Effect.Effect<ChatResult, ChatError> =>
    Effect.gen(function* () {
      if (counter.attempts > 0) yield* circuit.openGate;
      counter.attempts++;
      httpRequests++;
      return yield* Effect.tryPromise({
        try: () => {
          const schema = json ? jsonSchemaOf(request) : undefined;
          return client.chat({ model: request.model, messages, temperature: request.params.temperature, maxTokens: request.params.maxTokens, json, timeoutMs, ...(schema === undefined ? {} : { schema }), ...(config.seed === undefined ? {} : { seed: config.seed }) });
        },
        catch: asChatError,
      });
    }).pipe(
      Effect.tap(() => Effect.sync(() => waiting.heard())),
      Effect.tapError((e) =>
        Effect.sync(() => {
          if (e.kind !== "network" && e.kind !== "timeout") waiting.heard();
          // A refusal is final: the calls waiting at the gate must see it, not ask again.
          if (!e.retryable) circuit.refused(e, request.model);
        }),
      ),
    );

  /** One model call's HTTP attempts, retried on retryable errors; `counter.attempts` counts HTTP requests. */
  const callWithRetry = (request: LlmRequestedPayload, messages: readonly ChatMessage[], counter: { attempts: number }): Effect.Effect<ChatResult, ChatError> => {
    let json = request.params.json;
    // A server that refuses JSON mode (400) is asked once more without it, within the same
    // attempt (as the release does); the output is still validated against the schema.
    const attempt = Effect.suspend(() => send(request, messages, json, counter)).pipe(
      Effect.catchIf(
        (e) => e.kind === "http_error" && e.status === 400 && json,
        () => {
          json = false;
          return send(request, messages, json, counter);
        },
      ),
    );
    return retrying(attempt).pipe(Effect.ensuring(circuit.openGate));
  };

  /** A request's answer: at most two replies (the first, and the repair attempt's), each after its retries. */
  const ask = (request: LlmRequestedPayload, span: Span | undefined, counter: { attempts: number }, tokens: Tokens): Effect.Effect<LlmCompletedPayload, CallFailure> =>
    Effect.gen(function* () {
      const validate = validatorOf(outputs, request);
      if (validate === undefined) return yield* new NoValidator({ message: `no validator for output schema '${request.params.output}'` });
      if (config.tokenBudget !== undefined) {
        const spent = usage.accounting().total;
        const tokens = spent.promptTokens + spent.completionTokens;
        if (tokens >= config.tokenBudget) return yield* new OverBudget({ message: `not asked: the run has spent ${tokens} tokens of its tokenBudget ${config.tokenBudget}` });
      }
      const notAsked = circuit.notAsked(request.model);
      if (notAsked !== undefined) return yield* notAsked;
      let messages: readonly ChatMessage[] = request.messages;
      for (const phase of ["first", "repair"] as const) {
        const result = yield* callWithRetry(request, messages, counter).pipe(
          Effect.mapError((e) => {
            circuit.callFailed(e, request.model);
            return new CallFailed({ kind: e.kind, message: e.message, status: e.status });
          }),
        );
        circuit.replied();
        tokens.promptTokens += result.usage.promptTokens;
        tokens.completionTokens += result.usage.completionTokens;
        // A server that echoes the Authorization header into its reply (a misconfigured proxy, a
        // model shown the key) must not carry the key into the log, the trace or a printed answer.
        const content = withoutKey(result.content);
        spanReply(span, result, content, request, captureContent);
        const problem = replyProblem(content, request, validate);
        if (problem === null) {
          circuit.completed(request.model);
          const cost = costOf(config.prices, request.model, tokens);
          return {
            attempts: counter.attempts,
            backend,
            content,
            model: result.model,
            requestHash: request.requestHash,
            usage: { ...tokens },
            ...(phase === "repair" ? { repaired: true } : {}),
            ...(cost === null ? {} : { costUsd: cost }),
          };
        }
        spanInvalidReply(span, phase, problem, content, request, captureContent);
        if (phase === "repair") return yield* new InvalidOutput({ message: `invalid output after a repair attempt: ${problem}`.slice(0, 300), content });
        messages = repairTurn(messages, content, problem);
      }
      return yield* Effect.die(new Error("unreachable"));
    });

  /** A call in its slot: through the gate, answered (a failure is an `llm.failed` answer), accounted, traced. */
  const call = (request: LlmRequestedPayload, from: string, telemetry: CallTelemetry): Effect.Effect<LlmAnswer> =>
    Effect.suspend(() => {
      const waitId = waiting.start(request.model);
      const span = startChatSpan(telemetry, request, from, client.server, captureContent);
      const counter = { attempts: 0 };
      const tokens: Tokens = { promptTokens: 0, completionTokens: 0 };
      return Effect.gen(function* () {
        const opener = yield* circuit.passGate;
        const answer: LlmAnswer = yield* ask(request, span, counter, tokens).pipe(
          Effect.map((payload): LlmAnswer => ({ type: "llm.completed", payload })),
          Effect.catch((failure: CallFailure) =>
            Effect.sync((): LlmAnswer => {
              if (failure._tag !== "NoValidator") span?.setAttribute("error.type", failure.kind);
              return { type: "llm.failed", payload: failedPayload(request, failure, counter.attempts, tokens) };
            }),
          ),
          Effect.ensuring(opener ? circuit.openGate : Effect.void),
        );
        if (answer.type === "llm.completed") cache.put(answer.payload);
        usage.account(from, request, answer, counter.attempts);
        spanAnswer(span, answer);
        return answer;
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            waiting.stop(waitId);
            span?.end();
          }),
        ),
      );
    });

  async function complete(request: LlmRequestedPayload, from: string, telemetry: CallTelemetry = {}): Promise<LlmAnswer> {
    if (config.reuse === true) {
      const recorded = cache.get(request.requestHash);
      if (recorded !== undefined) {
        const answer: LlmAnswer = { type: "llm.completed", payload: { ...recorded, attempts: 0, cached: true } };
        circuit.completed(request.model);
        usage.account(from, request, answer, 0);
        return answer;
      }
    }
    return Effect.runPromise(slots.run(call(request, from, telemetry)));
  }

  return {
    config,
    cache,
    complete,
    responder: { respond: (record, telemetry) => complete(record.payload, record.from, telemetry) },
    accounting: () => usage.accounting(),
    get httpRequests() {
      return httpRequests;
    },
    problems: () => circuit.problems(),
  };
}
