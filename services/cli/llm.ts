// The LLM flags shared by `run`, `fork` and `eval`: `--llm <baseURL>`, `--model [role=]model`
// (repeatable), `--llm-config <file.json>`; the API key only from the environment. Each command
// prints one line on stderr saying which backends run (deterministic without an endpoint or key).
import { Option, type Command } from "commander";
import { readLog } from "../../infra/fileEventStore.ts";
import type { LlmRole } from "../../events/llm.ts";
import type { LogRecord } from "../../events/record.ts";
import { cachedOnlyResponder, LlmCache, makeLlmGateway, resolveLlmConfig, settingsWithoutKey, type LlmConfig, type LlmGatewayImpl } from "../llmGateway.ts";
import type { LlmResponder } from "../sequencer.ts";
import { layoutOf, resolveEpisodeDir, UsageError } from "../replay.ts";

export interface LlmCliFlags {
  llm?: string;
  model?: string[];
  llmConfig?: string;
  quiet?: boolean;
}

/** `fork`: the child keeps its parent's models, so --model is not listed (given, it is refused with the reason). */
export const addLlmOptions = (command: Command, options: { readonly fork?: boolean } = {}): Command => {
  const fork = options.fork === true;
  const model = new Option("--model <model>", "model for every role, or role=model (intent, planner, answer, judge, belief; `none` keeps a role deterministic, a bare `none` every role not named, e.g. --model none --model judge=gpt-4o-mini); repeatable").argParser((v: string, acc: string[] = []) => [...acc, v]);
  return command
    .option("--llm <baseURL>", `LLM backends at this OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (key from PROBETOWN_LLM_API_KEY or OPENAI_API_KEY)${fork ? "; the child asks it with its parent's models" : ""}`)
    .addOption(fork ? model.hideHelp() : model)
    .option("--llm-config <file.json>", `LLM settings: {baseURL, ${fork ? "" : "model, models: {intent, planner, answer, judge, belief}, "}timeoutMs, maxAttempts, backoffMs, concurrency, unreachableAfter, prices, reuse, captureContent}`);
};

/** Resolves the flags (and environment) and says in one line on stderr which backends run (`roles`: the roles the note names). */
export function resolveLlmFlags(flags: LlmCliFlags, prefix: string, roles?: readonly LlmRole[]): LlmConfig | null {
  const resolved = resolveLlmConfig({ ...(flags.llm === undefined ? {} : { llm: flags.llm }), ...(flags.model === undefined ? {} : { model: flags.model }), ...(flags.llmConfig === undefined ? {} : { llmConfig: flags.llmConfig }), ...(roles === undefined ? {} : { roles }) });
  if (flags.quiet !== true) process.stderr.write(`${prefix}: ${resolved.note}\n`);
  return resolved.config;
}

export const llmAsked = (flags: LlmCliFlags): boolean => asked(flags) || (process.env.PROBETOWN_LLM_BASE_URL ?? "").trim() !== "";

const asked = (flags: LlmCliFlags) => flags.llm !== undefined || flags.llmConfig !== undefined || (flags.model?.length ?? 0) > 0;

/** The models of the aura-scene controller's roles. */
const sceneModels = (c: LlmConfig) => ({ intent: c.models.intent ?? null, planner: c.models.planner ?? null, answer: c.models.answer ?? null });

/**
 * The EnvProbe LLM agent (role `belief`): the config with its model (`llm: {belief}`, part of the
 * episode header, so replay knows it) and the gateway. null: no LLM asked for, no endpoint, or
 * `--model belief=none` — the scripted agent, whose logs are exactly as before.
 */
export function envprobeLlm(config: unknown, flags: LlmCliFlags, prefix: string): { config: unknown; gateway: LlmGatewayImpl; model: string; settings: Omit<LlmConfig, "apiKey"> } | null {
  if (!llmAsked(flags)) return null;
  const resolved = resolveLlmFlags(flags, prefix, ["belief"]);
  const model = resolved?.models.belief ?? null;
  if (resolved === null || model === null) return null;
  return { config: { ...(config as object | undefined), llm: { belief: model } }, gateway: makeLlmGateway(resolved), model, settings: settingsWithoutKey(resolved) };
}

/**
 * `run`: the world config with the models of its LLM roles (they are part of the episode header,
 * so replay knows them) and the gateway that answers. aura-scene has intent, planner and answer;
 * envprobe has belief (the LLM agent).
 */
export function llmForRun(world: string, config: unknown, flags: LlmCliFlags): { config: unknown; llm?: LlmResponder } {
  if (!llmAsked(flags)) return { config };
  if (world === "envprobe") {
    const agent = envprobeLlm(config, flags, "run");
    return agent === null ? { config } : { config: agent.config, llm: agent.gateway.responder };
  }
  if (world !== "aura-scene") {
    // Name the flag that was given (PROBETOWN_LLM_BASE_URL asks too).
    const flag = flags.llm !== undefined ? "--llm" : flags.llmConfig !== undefined ? "--llm-config" : (flags.model?.length ?? 0) > 0 ? "--model" : "PROBETOWN_LLM_BASE_URL";
    throw new UsageError(`${flag}: the ${world} world has no LLM roles yet (aura-scene has: intent, planner, answer; envprobe has: belief)`);
  }
  const resolved = resolveLlmFlags(flags, "run");
  if (resolved === null) return { config };
  return { config: { ...(config as object | undefined), llm: sceneModels(resolved) }, llm: makeLlmGateway(resolved).responder };
}

/**
 * `fork`: the child keeps the parent's models (its config is the parent's). With `--reuse-llm` the
 * parent's recorded answers are served for identical requests with no HTTP; the rest go to the
 * endpoint when one is given, else fail with `no_backend` (and the actors fall back).
 */
export function llmForFork(parent: string, flags: LlmCliFlags & { reuseLlm?: boolean }, parentRecords?: readonly LogRecord[]): { llm?: LlmResponder; afterFork?: () => void } {
  // The child's requests carry the parent's models (its config is the parent's): a --model here
  // was silently not applied, and the note named the default model for every role.
  if ((flags.model?.length ?? 0) > 0) throw new UsageError(`--model ${flags.model!.join(" ")}: a fork keeps its parent's models (they are part of the episode's config); give the endpoint with --llm, or run a new episode with other models`);
  const resolved = asked(flags) || (process.env.PROBETOWN_LLM_BASE_URL ?? "").trim() !== "" ? resolveLlmFlags(flags, "fork", []) : null;
  if (flags.reuseLlm !== true) return resolved === null ? {} : { llm: makeLlmGateway(resolved).responder };
  const cache = new LlmCache().addRecords(parentRecords ?? readLog(layoutOf(resolveEpisodeDir(parent)).log));
  if (flags.quiet !== true) process.stderr.write(`fork: ${cache.size} recorded LLM answer(s) of the parent can be served to identical requests\n`);
  const inner = resolved === null ? cachedOnlyResponder(cache) : makeLlmGateway({ ...resolved, reuse: true }, { cache }).responder;
  // How many requests the recording actually answered: a child under another condition often asks
  // other questions, and "reusing 50 answers" then hid that none was.
  let requests = 0;
  let served = 0;
  let servedFailures = 0;
  let failed = 0;
  const llm: LlmResponder = {
    respond: async (request, telemetry) => {
      requests++;
      const hash = request.payload.requestHash;
      // Without an endpoint a request the parent logged only as a failure gets that failure again.
      if (resolved === null && cache.get(hash) === undefined && cache.failure(hash) !== undefined) servedFailures++;
      const answer = await inner.respond(request, telemetry);
      if (answer.type === "llm.completed" && (answer.payload as { cached?: boolean }).cached === true) served++;
      if (answer.type === "llm.failed") failed++;
      return answer;
    },
  };
  /** Said once the child has run. */
  const afterFork = (): void => {
    if (requests === 0 || flags.quiet === true) return;
    const rest = requests - served - servedFailures;
    const parts = [`the parent's recording answered ${served} of the child's ${requests} model request(s)`];
    if (servedFailures > 0) parts.push(`${servedFailures} got the failure the parent logged for them (no endpoint to retry on) and fell back as the parent did`);
    if (rest > 0) parts.push(resolved === null ? `${rest} had no identical recorded request and no endpoint, and fell back to the deterministic backend` : `${rest - failed} went to the endpoint${failed > 0 ? `, ${failed} failed and fell back` : ""}`);
    process.stderr.write(`fork: ${parts.join("; ")}\n`);
  };
  return { llm, afterFork };
}
