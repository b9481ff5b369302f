// The output of a model call: validated against the request's named output schema; an unusable
// reply (invalid, empty, or far past max_tokens) gets one repair attempt with the problem sent back.
import type { LlmRequestedPayload } from "../../events/llm.ts";
import type { ChatMessage } from "../../infra/openaiClient.ts";
import { AURA_LLM_JSON_SCHEMAS, AURA_LLM_OUTPUTS } from "../../actors/aura/llm.ts";
import { ENVPROBE_LLM_JSON_SCHEMAS, ENVPROBE_LLM_OUTPUTS } from "../../actors/envprobe/llm.ts";
import { HOUSEHOLD_LLM_JSON_SCHEMAS, HOUSEHOLD_LLM_OUTPUTS } from "../../actors/household/llm.ts";

/** Validates a model's output for a named schema: null when valid, else the reason. The request is there for schemas that depend on it (EnvProbe's belief fields). */
export type OutputValidator = (content: string, request: LlmRequestedPayload) => string | null;

/** The output schemas every gateway knows unless told otherwise: the AURA controller's, the EnvProbe agent's and the household agent's. */
export const DEFAULT_LLM_OUTPUTS: Readonly<Record<string, OutputValidator>> = { ...AURA_LLM_OUTPUTS, ...ENVPROBE_LLM_OUTPUTS, ...HOUSEHOLD_LLM_OUTPUTS };

/** The JSON schema of each output schema a grammar can constrain a model to (the local model's); an output without one is asked in plain JSON mode. */
export const DEFAULT_LLM_JSON_SCHEMAS: Readonly<Record<string, (request: LlmRequestedPayload) => object>> = { ...AURA_LLM_JSON_SCHEMAS, ...ENVPROBE_LLM_JSON_SCHEMAS, ...HOUSEHOLD_LLM_JSON_SCHEMAS };

/** The request's JSON schema, or undefined (no named output, or none known for it). */
export const jsonSchemaOf = (request: LlmRequestedPayload): object | undefined => (request.params.output === null ? undefined : DEFAULT_LLM_JSON_SCHEMAS[request.params.output]?.(request));

/**
 * The longest reply taken for a request: ~40 characters per asked token, at least 20,000. A server
 * that ignores max_tokens and sends megabytes (a runaway generation, a proxy's dump) would put them
 * into the log and every snapshot of the answer; it gets the repair attempt instead, and a failure
 * keeps its first 2,000 characters.
 */
export const replyLimit = (request: LlmRequestedPayload): number => Math.max(20_000, request.params.maxTokens * 40);
/** How much of an unusable reply the repair attempt sends back. */
const REPAIR_ECHO_CHARS = 4000;

export const repairMessage = (problem: string): string =>
  `Your previous reply could not be used: ${problem}. Reply again with only the JSON object in the required format, nothing else.`;

/** The request's validator: a schema that needs none (null output) takes any text; undefined when the schema is unknown. */
export const validatorOf = (outputs: Readonly<Record<string, OutputValidator>>, request: LlmRequestedPayload): OutputValidator | undefined =>
  request.params.output === null ? () => null : outputs[request.params.output];

/** Why a reply cannot be used (empty, far past max_tokens, invalid for its schema), or null. */
export const replyProblem = (content: string, request: LlmRequestedPayload, validate: OutputValidator): string | null =>
  content.trim().length === 0 ? "the reply was empty" : content.length > replyLimit(request) ? `the reply is ${content.length} characters, far more than max_tokens ${request.params.maxTokens} allows` : validate(content, request);

/** The conversation of the repair attempt: the unusable reply (its start) and what was wrong with it. */
export const repairTurn = (messages: readonly ChatMessage[], content: string, problem: string): readonly ChatMessage[] => [
  ...messages,
  { role: "assistant", content: content.slice(0, REPAIR_ECHO_CHARS) },
  { role: "user", content: repairMessage(problem) },
];
