// The LLM gateway's public entry (DESIGN §4, §8): what the rest of probetown imports. Each concern
// lives in its own file under services/llm/:
//   gateway.ts     makeLlmGateway: a call from request to answer
//   config.ts      LlmConfig, its defaults, and resolving --llm / --model / --llm-config / env
//   retry.ts       retries with backoff (effect Schedule + Effect.retry)
//   concurrency.ts the concurrency cap (effect Semaphore)
//   circuit.ts     the first call's gate, refusals, an endpoint given up as unreachable
//   errors.ts      the tagged errors a call fails with, and EXIT_ENDPOINT
//   problems.ts    endpoint problems (what exit 5 names), live and read back from logs
//   outputs.ts     output validation and the repair attempt
//   recording.ts   the cache of recorded answers, and the responder that serves only those
//   usage.ts       tokens and cost, per actor and per query
//   waiting.ts     the notice while calls wait with no answer
//   localModel.ts  the local model: its cache, sha256 and check (localInstall.ts: `llm install`;
//                  local.ts: its client per process; serve.ts: `llm serve`)
//   spans.ts       the `chat <model>` spans (GenAI attributes)
// The OpenAI-compatible client itself is infra/openaiClient.ts. Replay never reaches the gateway:
// services/kernel/replay.ts serves the logged answers.
export { apiKeyFromEnv, apiKeyVariable, DEFAULT_MODEL, resolveLlmConfig, settingsWithoutKey, type LlmConfig, type LlmFlags, type ModelPrice, type ResolvedLlm } from "./config.ts";
export { makeLlmGateway, type LlmAnswer, type LlmGatewayImpl, type LlmGatewayOptions } from "./gateway.ts";
export { DEFAULT_LLM_OUTPUTS, repairMessage, type OutputValidator } from "./outputs.ts";
export { mergeProblems, RecordedEndpointProblems, type EndpointProblem, type EndpointProblemKind } from "./problems.ts";
export { cachedOnlyResponder, LlmCache } from "./recording.ts";
export { sumTotals, usageFromRecords, type Accounting, type UsageTotals } from "./usage.ts";
export type { LlmWaiting } from "./waiting.ts";
