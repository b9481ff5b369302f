// The gateway's configuration: the settings of an endpoint (`LlmConfig`), their defaults, and how
// `--llm`, `--model`, `--llm-config` (or an experiment spec's `llm` section) and the environment
// resolve into one. The API key only ever comes from the environment.
import { Schema } from "effect";
import { schemaProblem } from "../../actors/configDecoder.ts";
import { llmRoles, type LlmRole } from "../../events/llm.ts";
import { UsageError } from "../kernel/replay.ts";
import { readInputFile, checkParsedInput } from "../kernel/inputFile.ts";
import { checkLocalModel, isLocalBaseURL, LOCAL_BACKEND, localBaseURL, localModelArg } from "./localModel.ts";

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
  readonly models: Readonly<Record<LlmRole, string | null>>;
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
  /**
   * Prompt plus completion tokens a gateway may spend (one per `run` or `fork`: the episode's); once
   * spent, later calls are not made (`llm.failed` `budget`) and the requesters fall back. A local
   * model's runs stay bounded in time so. Default: no limit.
   */
  readonly tokenBudget?: number;
  /** The sampling seed of a local model (`--llm local`; an HTTP endpoint is not sent one). Default 0. */
  readonly seed?: number;
}

/** The settings a gateway runs with: the config's, or their defaults. */
export interface CallSettings {
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly concurrency: number;
  readonly backend: string;
  readonly unreachableAfter: number;
  /** The waiting notice's interval (it runs only when someone listens: `onWaiting`); 0: never. */
  readonly waitNoticeMs: number;
}

/**
 * A local model (`--llm local`) runs one call at a time whatever the config says, waits longer (a
 * CPU writes a few tokens a second) and retries nothing by default: the same call would time out
 * again. What the config sets explicitly still applies, concurrency aside.
 */
export const callSettings = (config: LlmConfig): CallSettings => {
  const local = isLocalBaseURL(config.baseURL);
  return {
    timeoutMs: config.timeoutMs ?? (local ? 600_000 : 60_000),
    maxAttempts: Math.max(1, config.maxAttempts ?? (local ? 1 : 3)),
    backoffMs: config.backoffMs ?? 500,
    concurrency: local ? 1 : (config.concurrency ?? 4),
    backend: config.backend ?? (local ? LOCAL_BACKEND : "openai-compatible"),
    unreachableAfter: config.unreachableAfter ?? 3,
    waitNoticeMs: config.waitNoticeMs ?? 10_000,
  };
};

/** A config without its API key: what may travel to other processes (a NATS job), which take the key from their own environment. */
export const settingsWithoutKey = (config: LlmConfig): Omit<LlmConfig, "apiKey"> => {
  const { apiKey: _key, ...settings } = config;
  return settings;
};

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
  seed: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  tokenBudget: Schema.optionalKey(PositiveInt),
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
        file = JSON.parse(readInputFile(flags.llmConfig, "config", label)) as typeof file;
      } catch (error) {
        if (error instanceof UsageError) throw error;
        throw new UsageError(`${label}: ${(error as Error).message}`);
      }
    } else file = flags.configObject!.value as typeof file;
    if (typeof file !== "object" || file === null || Array.isArray(file)) throw new UsageError(`${label}: expected a JSON object`);
    checkParsedInput(file, label);
    if ("apiKey" in file) throw new UsageError(`${label}: do not put the API key in a file; set PROBETOWN_LLM_API_KEY or OPENAI_API_KEY`);
    for (const role of Object.keys(file.models ?? {})) if (!llmRoles().includes(role)) throw new UsageError(`${label}: models: unknown role '${role}' (roles: ${llmRoles().join(", ")})`);
    const problem = llmConfigFileProblem(file);
    if (problem !== null) throw new UsageError(`${label}: ${problem}`);
  }
  const models: Record<LlmRole, string | null> = { ...(file.models ?? {}) };
  const modelFlags = flags.model === undefined ? [] : (Array.isArray(flags.model) ? flags.model : [flags.model]).flatMap((m) => String(m).split(",")).map((m) => m.trim()).filter((m) => m.length > 0);
  let defaultModel: string | null = null;
  for (const m of modelFlags) {
    const eq = m.indexOf("=");
    if (eq < 0) defaultModel = m;
    else {
      const role = m.slice(0, eq).trim();
      const model = m.slice(eq + 1).trim();
      if (!llmRoles().includes(role)) throw new UsageError(`--model ${m}: unknown role '${role}' (roles: ${llmRoles().join(", ")}; or give a bare model for every role)`);
      if (model.length === 0) throw new UsageError(`--model ${m}: no model after '='`);
      models[role as LlmRole] = model === "none" ? null : model;
    }
  }
  const asked = flags.llm !== undefined || flags.llmConfig !== undefined || flags.configObject !== undefined || modelFlags.length > 0 || nonEmpty(env.PROBETOWN_LLM_BASE_URL) !== undefined;
  if (!asked) return { config: null, note: "backends: deterministic (no LLM asked for: --llm <baseURL>, --llm-config or PROBETOWN_LLM_BASE_URL)" };
  const apiKey = apiKeyFromEnv(env);
  const baseURL = flags.llm ?? file.baseURL ?? nonEmpty(env.PROBETOWN_LLM_BASE_URL) ?? nonEmpty(env.OPENAI_BASE_URL) ?? (apiKey !== null ? OPENAI_BASE_URL : null);
  if (baseURL === null) return { config: null, note: "backends: deterministic (no LLM endpoint and no API key: give --llm <baseURL> or set PROBETOWN_LLM_API_KEY / OPENAI_API_KEY)" };
  const local = localModelArg(baseURL);
  if (local !== null) {
    // `--llm local[:<path.gguf>]`: the model in process; checked now (exit 2 naming the path, the sha256 and how to install).
    const model = checkLocalModel(local.path, env);
    const named = defaultModel ?? (file as { model?: string }).model ?? model.name;
    const fallbackModel = named === "none" ? null : named;
    for (const role of llmRoles()) if (!(role in models)) models[role] = fallbackModel;
    const { models: _m, ...rest } = file;
    const config: LlmConfig = { ...rest, baseURL: localBaseURL(model.path), apiKey: null, models };
    const roles = flags.roles !== undefined && flags.roles.length === 0 ? "the models of the episode's config" : (flags.roles ?? (["intent", "planner", "answer"] as const)).map((r) => `${r}=${models[r] ?? "deterministic"}`).join(" ");
    return { config, note: `backends: local model ${model.path} (${roles}; ${model.sha256 === null ? "a file of your own" : "sha256 checked"}; in process, one call at a time)` };
  }
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
  for (const role of llmRoles()) if (!(role in models)) models[role] = fallbackModel;
  const { models: _m, ...rest } = file;
  const config: LlmConfig = { ...rest, baseURL, apiKey, models };
  // No roles named (a fork): the models are the episode's own, whatever the defaults say.
  const roles = flags.roles !== undefined && flags.roles.length === 0 ? "the models of the episode's config" : (flags.roles ?? (["intent", "planner", "answer"] as const)).map((r) => `${r}=${models[r] ?? "deterministic"}`).join(" ");
  return { config, note: `backends: LLM at ${baseURL} (${roles}; key ${apiKey === null ? "none" : "from the environment"})` };
}
