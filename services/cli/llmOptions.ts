// The LLM flags of `run`, `fork`, `sweep`, `eval` and `ask` (services/cli/llm.ts acts on them),
// apart from it so that defining the program loads no model client.
import { Option, type Command } from "commander";

export interface LlmCliFlags {
  llm?: string;
  model?: string[];
  llmConfig?: string;
  quiet?: boolean;
}

/**
 * The exit code of a command that finished, but whose model calls fell back because the endpoint
 * refused it (key, model, URL), could not be reached or answered every call to a model with an error: its
 * results are the deterministic backends' under a model's label. The log is complete and valid.
 */
export const EXIT_ENDPOINT = 5;

/** The LLM options, made afresh. `fork`: the child keeps its parent's models, so --model is not listed (given, it is refused with the reason). */
export function llmOptions(options: { readonly fork?: boolean } = {}): Option[] {
  const fork = options.fork === true;
  const model = new Option("--model <model>", "model for every role, or role=model (the worlds' roles, as `probetown worlds` lists them; `none` keeps a role deterministic, a bare `none` every role not named, e.g. --model none --model judge=gpt-4o-mini); repeatable").argParser((v: string, acc: string[] = []) => [...acc, v]);
  return [
    new Option("--llm <baseURL>", `LLM backends at this OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (key from PROBETOWN_LLM_API_KEY or OPENAI_API_KEY), or \`local\` (local:<path.gguf>): the local model in process (probetown llm install)${fork ? "; the child asks it with its parent's models" : ""}; exit ${EXIT_ENDPOINT} when it refused the key, model or URL, could not be reached, or answered every call to a model with an error (the calls fell back; the log is complete and valid)`),
    fork ? model.hideHelp() : model,
    new Option("--llm-config <file.json>", `LLM settings: {baseURL, ${fork ? "" : "model, models: {<role>: <model>}, "}timeoutMs, maxAttempts, backoffMs, concurrency, unreachableAfter, waitNoticeMs, tokenBudget, seed, prices, reuse, captureContent}; waitNoticeMs (default 10000, 0: never): after this long with no answer, say on stderr what the model calls wait for, then every three times as long`),
  ];
}

export const addLlmOptions = (command: Command, options: { readonly fork?: boolean } = {}): Command => {
  for (const option of llmOptions(options)) command.addOption(option);
  return command;
};
