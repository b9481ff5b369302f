// The LLM flags shared by `run`, `fork` and `eval`: `--llm <baseURL>`, `--model [role=]model`
// (repeatable), `--llm-config <file.json>`; the API key only from the environment. Each command
// prints one line on stderr saying which backends run (deterministic without an endpoint or key).
import { readLog } from "../../infra/fileEventStore.ts";
import type { LlmRole } from "../../events/llm.ts";
import type { LogRecord } from "../../events/record.ts";
import { apiKeyVariable, cachedOnlyResponder, LlmCache, makeLlmGateway, resolveLlmConfig, settingsWithoutKey, type EndpointProblem, type LlmConfig, type LlmGatewayImpl, type LlmWaiting } from "../llm/index.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";
import { layoutOf, resolveEpisodeDir, UsageError } from "../kernel/replay.ts";
import { EXIT_ENDPOINT, type LlmCliFlags } from "./llmOptions.ts";
import type { WorldModule } from "../kernel/worldModule.ts";
import { registeredWorlds } from "../kernel/worlds.ts";

export { addLlmOptions, EXIT_ENDPOINT, type LlmCliFlags } from "./llmOptions.ts";

/** 850 ms, 12 s, 3 min 2 s. */
const duration = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 === 0 ? "" : ` ${s % 60} s`}`;
};

/**
 * The line said while model calls wait with no answer: what for, how long so far, and how long it
 * can take (a hung endpoint waits out every attempt's timeout, up to maxAttempts a call, until it is
 * given up). `settingsFrom` is where timeoutMs and maxAttempts are set.
 */
export function waitingLine(prefix: string, w: LlmWaiting, settingsFrom = "--llm-config"): string {
  const calls = w.inFlight === 1 ? `1 call in flight, for ${duration(w.oldestMs)}` : `${w.inFlight} calls in flight, the oldest for ${duration(w.oldestMs)}`;
  const queued = w.queued > 0 ? ` (${w.queued} more queued)` : "";
  const never = w.answeredBefore ? "" : ", no answer from it yet";
  const limit = w.maxAttempts === 1 ? `each call times out after ${duration(w.timeoutMs)}` : `each attempt times out after ${duration(w.timeoutMs)}, up to ${w.maxAttempts} attempts: ~${duration(w.callLimitMs)} a call`;
  const givenUp = w.unreachableAfter > 0 ? `; the endpoint is given up after ${w.unreachableAfter} call${w.unreachableAfter === 1 ? "" : "s"} in a row without an answer${w.unansweredInARow > 0 ? `, ${w.unansweredInARow} so far` : ""}` : "";
  return `${prefix}: waiting for ${w.models.join(", ")} at ${w.server}: ${calls}${queued}${never} (${limit}${givenUp}; set timeoutMs / maxAttempts in ${settingsFrom} to wait less)`;
}

/** The gateway's `onWaiting` of a command: the waiting line on stderr; none with --quiet. */
export const waitingNotice = (prefix: string, flags: { readonly quiet?: boolean }, settingsFrom?: string): ((w: LlmWaiting) => void) | undefined =>
  flags.quiet === true ? undefined : (w) => void process.stderr.write(`${waitingLine(prefix, w, settingsFrom)}\n`);

/** makeLlmGateway's options with the command's waiting notice (none with --quiet). */
const noticed = (prefix: string, flags: LlmCliFlags): { onWaiting?: (w: LlmWaiting) => void } => {
  const onWaiting = waitingNotice(prefix, flags);
  return onWaiting === undefined ? {} : { onWaiting };
};

/** Resolves the flags (and environment) and says in one line on stderr which backends run (`roles`: the roles the note names). */
export function resolveLlmFlags(flags: LlmCliFlags, prefix: string, roles?: readonly LlmRole[]): LlmConfig | null {
  const resolved = resolveLlmConfig({ ...(flags.llm === undefined ? {} : { llm: flags.llm }), ...(flags.model === undefined ? {} : { model: flags.model }), ...(flags.llmConfig === undefined ? {} : { llmConfig: flags.llmConfig }), ...(roles === undefined ? {} : { roles }) });
  if (flags.quiet !== true) process.stderr.write(`${prefix}: ${resolved.note}\n`);
  return resolved.config;
}

export interface EndpointContext {
  /** The endpoint asked (its host:port names problems read from logs). */
  readonly baseURL: string;
  /** Model calls, and how many of them fell back (any reason), when known. */
  readonly calls?: number;
  readonly failed?: number;
  /** Where the key comes from, for `auth` (default: this process's variable, or the two it reads). */
  readonly keyFrom?: string;
  /** Where the models and the endpoint were given (default `--model`, `--llm`). */
  readonly modelFrom?: string;
  readonly endpointFrom?: string;
  /** What was written, with its verb: "the log is" (default), "the cells' logs are" … */
  readonly logsAre?: string;
}

const hostOf = (baseURL: string): string => {
  try {
    const url = new URL(baseURL);
    return `${url.hostname}:${url.port === "" ? (url.protocol === "https:" ? 443 : 80) : url.port}`;
  } catch {
    return baseURL;
  }
};

/** What to fix, in one line per problem. */
function problemLine(p: EndpointProblem, c: EndpointContext): string {
  // Recorded problems name no server: the endpoint now configured may not be the one that refused.
  const where = p.server ?? (p.live ? hostOf(c.baseURL) : "the endpoint");
  const said = p.message.replace(/^not asked: /, "");
  const recorded = p.live ? "" : " [recorded in logs served as they are: --fresh runs them again]";
  const endpointFrom = c.endpointFrom ?? "--llm";
  switch (p.kind) {
    case "auth": {
      const variable = c.keyFrom ?? apiKeyVariable(process.env);
      const fix = variable === null ? "no API key was sent: set PROBETOWN_LLM_API_KEY or OPENAI_API_KEY" : `check the API key variable ${variable}`;
      return `  key refused by ${where}: ${said}; ${fix}${recorded}`;
    }
    case "model_not_found":
      return `  model not found: ${where} does not serve model '${p.model ?? "?"}' (${said}); check ${c.modelFrom ?? "--model"} (GET ${c.baseURL.replace(/\/+$/, "")}/models lists the models it serves)${recorded}`;
    case "endpoint_not_found":
      return `  no chat-completions API at ${c.baseURL} (${where} answered ${said}); check ${endpointFrom} (an OpenAI-compatible base URL usually ends in /v1)${recorded}`;
    case "quota":
      return `  quota exhausted at ${where}: ${said}; check the account's plan and billing (or point ${endpointFrom} elsewhere)${recorded}`;
    case "unreachable":
      return `  unreachable: no answer from ${where} (${said}); is the server running? check ${endpointFrom} ${c.baseURL}${recorded}`;
    case "errors_only":
      // A 429 on every call is a rate limit the run never got under; a 5xx, a server that is up but not serving the model.
      return `  errors only: ${where} answered no call${p.model === null ? "" : ` to model '${p.model}'`} with a completion, only errors after the retries (first: ${said}); ${p.status === 429 ? "lower concurrency (--llm-config) or check the account's rate limits" : "check the server's own log (is the model loaded? out of memory?)"}, then run again${recorded}`;
  }
}

/**
 * Says on stderr (with --quiet and --json too) what made the model calls fall back when it was the
 * configuration — a refused key, model or URL, an endpoint that never answered, or answered every
 * call with an error — and returns EXIT_ENDPOINT; 0 when there was no such problem (isolated
 * failures keep the summary's counts).
 */
export function endpointExit(prefix: string, problems: readonly EndpointProblem[], c: EndpointContext): number {
  if (problems.length === 0) return 0;
  const refused = problems.some((p) => p.kind !== "unreachable" && p.kind !== "errors_only");
  const what = refused ? "refused" : problems.some((p) => p.kind === "errors_only") ? "answered every call to a model with an error" : "could not be reached";
  const counts = c.failed === undefined ? "its model calls failed" : `${c.failed}${c.calls === undefined ? "" : ` of ${c.calls}`} model call(s) fell back to the deterministic backends`;
  const lines = [
    `${prefix}: finished, but the model endpoint ${what}: ${counts}; ${c.logsAre ?? "the log is"} complete and valid, but not a model run (exit ${EXIT_ENDPOINT})`,
    ...problems.map((p) => problemLine(p, c)),
  ];
  process.stderr.write(lines.join("\n") + "\n");
  return EXIT_ENDPOINT;
}

export const llmAsked = (flags: LlmCliFlags): boolean => asked(flags) || (process.env.PROBETOWN_LLM_BASE_URL ?? "").trim() !== "";

const asked = (flags: LlmCliFlags) => flags.llm !== undefined || flags.llmConfig !== undefined || (flags.model?.length ?? 0) > 0;

/**
 * A world's own sweep whose agent has one model role: the config with its model (`llm: {<role>}`,
 * part of the episode header, so replay knows it) and the gateway. null: no LLM asked for, no
 * endpoint, or `--model <role>=none` — the scripted agent, whose logs are exactly as before.
 */
export function oneRoleLlm(config: unknown, flags: LlmCliFlags, prefix: string, role: LlmRole): { config: unknown; gateway: LlmGatewayImpl; model: string; settings: Omit<LlmConfig, "apiKey">; baseURL: string } | null {
  if (!llmAsked(flags)) return null;
  const resolved = resolveLlmFlags(flags, prefix, [role]);
  const model = resolved?.models[role] ?? null;
  if (resolved === null || model === null) return null;
  return { config: { ...(config as object | undefined), llm: { [role]: model } }, gateway: makeLlmGateway(resolved, noticed(prefix, flags)), model, settings: settingsWithoutKey(resolved), baseURL: resolved.baseURL };
}

/**
 * `run`: the world config with the models of its LLM roles (they are part of the episode header,
 * so replay knows them) and the gateway that answers; a world names its roles (`models`).
 */
export function llmForRun(world: WorldModule, config: unknown, flags: LlmCliFlags): { config: unknown; llm?: LlmResponder; gateway?: LlmGatewayImpl } {
  if (!llmAsked(flags)) return { config };
  const models = world.models;
  if (models === undefined) {
    // Name the flag that was given (PROBETOWN_LLM_BASE_URL asks too).
    const flag = flags.llm !== undefined ? "--llm" : flags.llmConfig !== undefined ? "--llm-config" : (flags.model?.length ?? 0) > 0 ? "--model" : "PROBETOWN_LLM_BASE_URL";
    const others = registeredWorlds().flatMap((w) => (w.models === undefined ? [] : [`${w.definition.name} has: ${w.models.roles.join(", ")}`]));
    throw new UsageError(`${flag}: the ${world.definition.name} world has no LLM roles yet (${others.join("; ")})`);
  }
  const resolved = resolveLlmFlags(flags, "run", models.roles);
  const withModels = resolved === null ? null : models.withModels(config, resolved.models);
  if (resolved === null || withModels === null) return { config };
  const gateway = makeLlmGateway(resolved, noticed("run", flags));
  return { config: withModels, llm: gateway.responder, gateway };
}

/** `run` and `fork`: exit 5 with what to fix when the gateway's endpoint refused or was unreachable. */
export function gatewayExit(prefix: string, gateway: LlmGatewayImpl | undefined): number {
  if (gateway === undefined) return 0;
  const t = gateway.accounting().total;
  return endpointExit(prefix, gateway.problems(), { baseURL: gateway.config.baseURL, calls: t.calls, failed: t.failed });
}

/**
 * `fork`: the child keeps the parent's models (its config is the parent's). With `--reuse-llm` the
 * parent's recorded answers are served for identical requests with no HTTP; the rest go to the
 * endpoint when one is given, else fail with `no_backend` (and the actors fall back).
 */
export function llmForFork(parent: string, flags: LlmCliFlags & { reuseLlm?: boolean }, parentRecords?: readonly LogRecord[]): { llm?: LlmResponder; afterFork?: () => void; gateway?: LlmGatewayImpl } {
  // The child's requests carry the parent's models (its config is the parent's): a --model here
  // was silently not applied, and the note named the default model for every role.
  if ((flags.model?.length ?? 0) > 0) throw new UsageError(`--model ${flags.model!.join(" ")}: a fork keeps its parent's models (they are part of the episode's config); give the endpoint with --llm, or run a new episode with other models`);
  const resolved = llmAsked(flags) ? resolveLlmFlags(flags, "fork", []) : null;
  if (flags.reuseLlm !== true) {
    if (resolved === null) return {};
    const gateway = makeLlmGateway(resolved, noticed("fork", flags));
    return { llm: gateway.responder, gateway };
  }
  const cache = new LlmCache().addRecords(parentRecords ?? readLog(layoutOf(resolveEpisodeDir(parent)).log));
  if (flags.quiet !== true) process.stderr.write(`fork: ${cache.size} recorded LLM answer(s) of the parent can be served to identical requests\n`);
  const gateway = resolved === null ? undefined : makeLlmGateway({ ...resolved, reuse: true }, { cache, ...noticed("fork", flags) });
  const inner = gateway === undefined ? cachedOnlyResponder(cache) : gateway.responder;
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
  return { llm, afterFork, ...(gateway === undefined ? {} : { gateway }) };
}
