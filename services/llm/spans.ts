// The `chat <model>` span of each model call, with the GenAI semantic-convention attributes
// (gen_ai.*): prompt and completion content only when `captureContent` is on; never the API key.
// Spans are telemetry only: nothing here reaches an answer or the log.
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import type { LlmRequestedPayload } from "../../events/llm.ts";
import type { ChatResult } from "../../infra/openaiClient.ts";
import type { LlmAnswer } from "./gateway.ts";
import { replyLimit } from "./outputs.ts";

export interface CallTelemetry {
  readonly tracer?: Tracer;
  readonly parent?: Span;
}

/**
 * A reply as the GenAI `gen_ai.output.messages` attribute (captureContent only). A reply past the
 * longest one taken for its request (a runaway generation, invalid for that) is cut there, marked.
 */
const outputMessages = (content: string, limit: number): string =>
  JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: content.length <= limit ? content : `${content.slice(0, limit)}… [${content.length - limit} more characters not captured]` }] }]);

/** Starts a call's span (none without a tracer), under `parent` when given. */
export function startChatSpan(telemetry: CallTelemetry, request: LlmRequestedPayload, from: string, server: { readonly address: string; readonly port: number }, captureContent: boolean): Span | undefined {
  const ctx = telemetry.parent === undefined ? otelContext.active() : trace.setSpan(otelContext.active(), telemetry.parent);
  return telemetry.tracer?.startSpan(
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
        "server.address": server.address,
        "server.port": server.port,
        "probetown.llm.role": request.role,
        "probetown.llm.request_hash": request.requestHash,
        "probetown.llm.requester": from,
        ...(request.queryId === null ? {} : { "probetown.query": request.queryId }),
        ...(captureContent ? { "gen_ai.input.messages": JSON.stringify(request.messages.map((m) => ({ role: m.role, parts: [{ type: "text", content: m.content }] }))) } : {}),
      },
    },
    ctx,
  );
}

/** A reply came (`content` is the reply without the key), valid or not: an invalid one is what a user debugging a prompt needs. */
export function spanReply(span: Span | undefined, result: ChatResult, content: string, request: LlmRequestedPayload, captureContent: boolean): void {
  span?.setAttribute("gen_ai.response.model", result.model);
  // The reply's id and finish reasons go to the trace only: the logged answer must not vary by call.
  if (result.id !== undefined) span?.setAttribute("gen_ai.response.id", result.id);
  if (result.finishReasons !== undefined) span?.setAttribute("gen_ai.response.finish_reasons", [...result.finishReasons]);
  if (captureContent) span?.setAttribute("gen_ai.output.messages", outputMessages(content, replyLimit(request)));
}

/**
 * Each reply that failed validation is an event on the span (the attribute keeps only the last
 * reply); why it failed can quote the reply, so only with captureContent.
 */
export function spanInvalidReply(span: Span | undefined, phase: "first" | "repair", problem: string, content: string, request: LlmRequestedPayload, captureContent: boolean): void {
  span?.addEvent("probetown.llm.invalid_output", {
    "probetown.llm.phase": phase,
    ...(captureContent ? { "probetown.llm.problem": problem, "gen_ai.output.messages": outputMessages(content, replyLimit(request)) } : {}),
  });
}

/** The answer's usage, attempts and outcome on the span (before it ends). */
export function spanAnswer(span: Span | undefined, answer: LlmAnswer): void {
  if (span === undefined) return;
  const usage = answer.payload.usage;
  if (usage !== undefined) {
    span.setAttribute("gen_ai.usage.input_tokens", usage.promptTokens);
    span.setAttribute("gen_ai.usage.output_tokens", usage.completionTokens);
  }
  span.setAttribute("probetown.llm.attempts", answer.payload.attempts);
  if (answer.type === "llm.failed") span.setStatus({ code: SpanStatusCode.ERROR, message: answer.payload.error });
  else if (answer.payload.repaired === true) span.setAttribute("probetown.llm.repaired", true);
}
