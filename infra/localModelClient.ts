// The local model as a chat client (issue 24): the same seam as infra/openaiClient.ts, so the
// gateway's retries, spans, usage, validation and fallbacks are those of any endpoint. The model
// runs in process through node-llama-cpp, loaded by path from the cache `probetown llm install`
// fills (it is not a dependency of the repo), on the first call only: a replay, a verify or a fork
// served from the recording never reaches a client, so never loads the model.
//   - one call at a time (a queue here as well as the gateway's concurrency 1: `llm serve` shares it);
//   - output constrained by a grammar made from the request's JSON schema (or plain JSON);
//   - one context sequence kept across calls: a prompt that starts as the previous one did (the same
//     system prompt, a repair turn after its call) evaluates only the tokens after the shared prefix;
//   - temperature from the request, the seed from the config: on CPU, with the same threads, the
//     same request gives the same completion (test/local-model.test.ts checks it).
import { pathToFileURL } from "node:url";
import { availableParallelism } from "node:os";
import { ChatError, type ChatCall, type ChatClient, type ChatMessage, type ChatResult } from "./openaiClient.ts";

/** The part of node-llama-cpp's API used here (its types are not installed with the repo). */
interface LlamaModule {
  getLlama(options: { gpu: false; build: "never"; logLevel?: string; progressLogs?: boolean }): Promise<Llama>;
  LlamaChatSession: new (options: { contextSequence: Sequence; autoDisposeSequence?: boolean }) => ChatSession;
}
interface Llama {
  loadModel(options: { modelPath: string }): Promise<Model>;
  createGrammarForJsonSchema(schema: object): Promise<unknown>;
  getGrammarFor(type: "json"): Promise<unknown>;
  dispose(): Promise<void>;
}
interface Model {
  createContext(options: { contextSize: number; threads?: number; seed?: number }): Promise<Context>;
  tokenize(text: string): readonly number[];
}
interface Context {
  getSequence(): Sequence;
}
interface Sequence {
  readonly contextTokens: readonly number[];
  readonly tokenMeter: { readonly usedInputTokens: number; readonly usedOutputTokens: number };
}
type HistoryItem = { type: "system"; text: string } | { type: "user"; text: string } | { type: "model"; response: string[] };
interface ChatSession {
  setChatHistory(history: HistoryItem[]): void;
  prompt(text: string, options: { grammar?: unknown; maxTokens: number; temperature: number; seed: number; signal?: AbortSignal }): Promise<string>;
  dispose(options?: { disposeSequence?: boolean }): void;
}

export interface LocalClientOptions {
  /** The GGUF file (already checked: services/llm/localModel.ts checkLocalModel). */
  readonly modelPath: string;
  /** The name this model answers to; a request for another is `model_not_found`. */
  readonly modelName: string;
  /** The runtime's entry module (dist/index.js of node-llama-cpp in the cache). */
  readonly runtimeEntry: string;
  /** Sampling seed (from the config). Default 0. */
  readonly seed?: number;
  readonly contextSize?: number;
  /** CPU threads; default all. */
  readonly threads?: number;
}

/** Load time and token throughput so far (bench, docs, `llm serve`'s log). */
export interface LocalStats {
  loadMs: number | null;
  calls: number;
  promptTokens: number;
  /** Prompt tokens actually evaluated (the rest were a prefix already in the context). */
  evaluatedPromptTokens: number;
  completionTokens: number;
  promptMs: number;
  generationMs: number;
}

export interface LocalChatClient extends ChatClient {
  readonly stats: LocalStats;
  /** Loads the model now (else on the first call). */
  load(): Promise<void>;
  close(): Promise<void>;
}

interface Loaded {
  readonly module: LlamaModule;
  readonly llama: Llama;
  readonly model: Model;
  readonly sequence: Sequence;
}

const historyOf = (messages: readonly ChatMessage[]): { history: HistoryItem[]; prompt: string } => {
  const last = messages.at(-1);
  if (last === undefined || last.role !== "user") throw new ChatError("http_error", "the conversation must end with a user message", 400);
  const history = messages.slice(0, -1).map((m): HistoryItem => (m.role === "assistant" ? { type: "model", response: [m.content] } : { type: m.role, text: m.content }));
  return { history, prompt: last.content };
};

export function localModelClient(options: LocalClientOptions): LocalChatClient {
  const stats: LocalStats = { loadMs: null, calls: 0, promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0, promptMs: 0, generationMs: 0 };
  let loading: Promise<Loaded> | null = null;
  const grammars = new Map<string, Promise<unknown>>();
  let queue: Promise<unknown> = Promise.resolve();

  const load = (): Promise<Loaded> =>
    (loading ??= (async () => {
      const started = performance.now();
      let module: LlamaModule;
      try {
        module = (await import(pathToFileURL(options.runtimeEntry).href)) as LlamaModule;
      } catch (error) {
        throw new ChatError("model_not_found", `the node-llama-cpp runtime could not be loaded from ${options.runtimeEntry}: ${(error as Error).message}`.slice(0, 300), null);
      }
      // The CPU build bundled in @node-llama-cpp/linux-x64: no GPU probe, no download, no compile.
      const llama = await module.getLlama({ gpu: false, build: "never", logLevel: "error", progressLogs: false });
      const model = await llama.loadModel({ modelPath: options.modelPath });
      const context = await model.createContext({ contextSize: options.contextSize ?? 4096, threads: options.threads ?? availableParallelism() });
      stats.loadMs = performance.now() - started;
      return { module, llama, model, sequence: context.getSequence() };
    })());

  const grammarFor = (loaded: Loaded, call: ChatCall): Promise<unknown> | undefined => {
    if (call.schema !== undefined) {
      const key = JSON.stringify(call.schema);
      let grammar = grammars.get(key);
      if (grammar === undefined) {
        grammar = loaded.llama.createGrammarForJsonSchema(call.schema);
        grammars.set(key, grammar);
      }
      return grammar;
    }
    return call.json ? loaded.llama.getGrammarFor("json") : undefined;
  };

  const chatNow = async (call: ChatCall): Promise<ChatResult> => {
    if (call.model !== options.modelName) throw new ChatError("model_not_found", `HTTP 404: the local model is '${options.modelName}', not '${call.model}'`, 404);
    const { history, prompt } = historyOf(call.messages);
    let loaded: Loaded;
    try {
      loaded = await load();
    } catch (error) {
      if (error instanceof ChatError) throw error;
      throw new ChatError("server_error", `the local model could not be loaded: ${(error as Error).message}`.slice(0, 300), null);
    }
    const grammar = await grammarFor(loaded, call);
    const session = new loaded.module.LlamaChatSession({ contextSequence: loaded.sequence, autoDisposeSequence: false });
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new ChatError("timeout", "the request timed out", null)), call.timeoutMs);
    const meter = loaded.sequence.tokenMeter;
    const before = { input: meter.usedInputTokens, output: meter.usedOutputTokens };
    const started = performance.now();
    try {
      session.setChatHistory(history);
      const content = await session.prompt(prompt, { ...(grammar === undefined ? {} : { grammar }), maxTokens: call.maxTokens, temperature: call.temperature, seed: call.seed ?? options.seed ?? 0, signal: abort.signal });
      const elapsed = performance.now() - started;
      const completionTokens = loaded.model.tokenize(content).length;
      // The prompt as the model saw it: what the context holds minus what it generated.
      const promptTokens = Math.max(0, loaded.sequence.contextTokens.length - completionTokens);
      const evaluated = meter.usedInputTokens - before.input;
      const generated = meter.usedOutputTokens - before.output;
      stats.calls++;
      stats.promptTokens += promptTokens;
      stats.evaluatedPromptTokens += Math.min(evaluated, promptTokens);
      stats.completionTokens += completionTokens;
      // Split by the throughputs' usual ratio is guesswork: the meter counts tokens, not time, so the
      // whole call is generation time unless nothing was generated.
      if (generated > 0) stats.generationMs += elapsed;
      else stats.promptMs += elapsed;
      return { content, model: options.modelName, usage: { promptTokens, completionTokens }, finishReasons: [completionTokens >= call.maxTokens ? "length" : "stop"] };
    } catch (error) {
      if (abort.signal.aborted) throw new ChatError("timeout", `the local model did not finish within ${call.timeoutMs} ms`, null);
      if (error instanceof ChatError) throw error;
      throw new ChatError("server_error", `the local model failed: ${(error as Error).message}`.slice(0, 300), null);
    } finally {
      clearTimeout(timer);
      session.dispose({ disposeSequence: false });
    }
  };

  return {
    server: { address: "local", port: 0 }, // no host and port: the gateway says "local"
    stats,
    chat(call) {
      // One at a time: the model has one context sequence.
      const next = queue.then(() => chatNow(call));
      queue = next.catch(() => undefined);
      return next;
    },
    load: async () => {
      await load();
    },
    close: async () => {
      if (loading === null) return;
      const loaded = await loading.catch(() => null);
      await loaded?.llama.dispose();
    },
  };
}
