// The actions of `probetown llm install` and `probetown llm serve` (services/cli/llmCommand.ts).
import { shownPath } from "../../views/text.ts";
import { installLocalModel } from "../../llm/localInstall.ts";
import { checkLocalModel, runtimeEntry } from "../../llm/localModel.ts";
import { serveLocalModel } from "../../llm/serve.ts";
import { localModelClient } from "../../../infra/localModelClient.ts";
import { registeredWorlds } from "../../kernel/worlds.ts";

export async function cmdLlmInstall(flags: { json?: boolean }, _exit: (code: number) => void): Promise<void> {
  const say = (line: string): void => void process.stderr.write(`llm install: ${line}\n`);
  const report = await installLocalModel(say);
  const model = checkLocalModel(null);
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ model: model.path, sha256: report.sha256, runtime: report.paths.runtime, cache: report.paths.cache, licence: report.licence, installed: { runtime: report.runtimeInstalled, model: report.modelInstalled } })}\n`);
    return;
  }
  // A world whose roles can run on a model, to show `--llm local` on.
  const example = registeredWorlds().find((w) => (w.models?.roles.length ?? 0) > 0)?.definition.name;
  process.stdout.write(
    [
      `model:   ${model.path}`,
      `sha256:  ${report.sha256} (checked)`,
      `runtime: ${report.paths.runtime} (node-llama-cpp, CPU build)`,
      `licence: ${report.licence} (Gemma Terms of Use: see docs/llm.md#the-local-model)`,
      `use it:  --llm local${example === undefined ? "" : `   (e.g. probetown run ${example} --seed 1 --llm local)`}`,
    ].join("\n") + "\n",
  );
}

export async function cmdLlmServe(flags: { model?: string; port: number; seed: number; quiet?: boolean }, _exit: (code: number) => void): Promise<void> {
  const model = checkLocalModel(flags.model ?? null);
  const client = localModelClient({ modelPath: model.path, modelName: model.name, runtimeEntry: runtimeEntry(model.runtime), seed: flags.seed });
  const started = performance.now();
  await client.load();
  const server = await serveLocalModel(client, { model: model.name, port: flags.port, ...(flags.quiet === true ? {} : { log: (line: string) => void process.stderr.write(`llm serve: ${line}\n`) }) });
  process.stderr.write(`llm serve: ${shownPath(model.path)} loaded in ${Math.round(performance.now() - started)} ms; model '${model.name}'\n`);
  process.stdout.write(`${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  const t = server.totals;
  process.stderr.write(`llm serve: stopped after ${t.completions} completion(s) of ${t.requests} request(s), ${t.promptTokens} prompt + ${t.completionTokens} completion tokens\n`);
  await client.close();
}
