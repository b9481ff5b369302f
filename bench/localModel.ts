// `npm run bench:llm`: the local model on this machine (issue 24) — load time, prompt and generation
// tokens/s, calls/s of a short JSON call, the wall time of one AURA scene query and of one 2-step
// EnvProbe episode on `--llm local` (each a fresh `probetown run`, model load included), and the
// JSON validity of their completions before and after repair. Needs `probetown llm install`.
// Figures on a shared machine are noisy: the CPU time (user) beside each wall time says how much
// of it was the model's.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { localModelClient } from "../infra/localModelClient.ts";
import { checkLocalModel, localPaths, runtimeEntry } from "../services/llm/localModel.ts";

/** The local model's figures as [figure, measured] rows; null when it is not installed. `npm run bench` adds them to its table. */
export async function localModelRows(): Promise<{ model: string; rows: Array<[string, string]> } | null> {
  const paths = localPaths();
  if (!existsSync(paths.model) || !existsSync(runtimeEntry(paths.runtime))) return null;
  const model = checkLocalModel(null);
  const client = localModelClient({ modelPath: model.path, modelName: model.name, runtimeEntry: runtimeEntry(model.runtime), seed: 0 });
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const rows: Array<[string, string]> = [];

  await client.load();
  rows.push(["load (runtime, weights, 4k context)", `${(client.stats.loadMs! / 1000).toFixed(1)} s`]);

  const filler = (k: number) => Array.from({ length: 40 }, (_, i) => `Line ${k}.${i}: the lantern is in room ${(i * 7 + k) % 10}.`).join("\n");
  // Prompt throughput: a fresh prompt (nothing to reuse), one token generated.
  let t = performance.now();
  const p = await client.chat({ model: model.name, messages: [{ role: "user", content: filler(1) }], temperature: 0, maxTokens: 1, json: false, timeoutMs: 600_000 });
  const promptSecs = (performance.now() - t) / 1000;
  const promptRate = p.usage.promptTokens / promptSecs;
  rows.push(["prompt processing", `${promptRate.toFixed(1)} tokens/s (${p.usage.promptTokens} tokens in ${promptSecs.toFixed(1)} s)`]);
  log(`prompt: ${promptRate.toFixed(1)} tokens/s`);
  // Generation throughput: a short prompt, 48 tokens, the prompt's share taken off.
  t = performance.now();
  const g = await client.chat({ model: model.name, messages: [{ role: "user", content: "Tell a story about a lantern." }], temperature: 0, maxTokens: 48, json: false, timeoutMs: 600_000 });
  const genSecs = (performance.now() - t) / 1000 - g.usage.promptTokens / promptRate;
  rows.push(["generation", `${(g.usage.completionTokens / genSecs).toFixed(1)} tokens/s (${g.usage.completionTokens} tokens in ${genSecs.toFixed(1)} s)`]);
  log(`generation: ${(g.usage.completionTokens / genSecs).toFixed(1)} tokens/s`);
  // Calls per second: a short grammar-constrained JSON call (the `answer` shape).
  t = performance.now();
  const n = 3;
  for (let i = 0; i < n; i++) await client.chat({ model: model.name, messages: [{ role: "user", content: `Is the lantern in room ${i}? Reply in JSON.` }], temperature: 0, maxTokens: 32, json: true, schema: { type: "object", properties: { answer: { type: "string", maxLength: 40 } }, required: ["answer"] }, timeoutMs: 600_000 });
  rows.push(["short JSON calls", `${(n / ((performance.now() - t) / 1000)).toFixed(2)} calls/s`]);
  await client.close();

  const cli = join(import.meta.dirname, "..", "services", "cli", "main.ts");
  const work = mkdtempSync(join(tmpdir(), "probetown-bench-llm-"));
  function timed(label: string, args: string[]): void {
    const dir = join(work, label);
    const started = performance.now();
    const r = spawnSync(process.execPath, [cli, ...args, "--llm", "local", "--log", dir, "--quiet"], { encoding: "utf8" });
    const wall = (performance.now() - started) / 1000;
    const records = readdirSync(join(dir, "log")).filter((f) => f.endsWith(".jsonl")).flatMap((f) => readFileSync(join(dir, "log", f), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { type: string; payload: { repaired?: boolean } }));
    const completed = records.filter((x) => x.type === "llm.completed");
    const repaired = completed.filter((x) => x.payload.repaired === true).length;
    const failed = records.filter((x) => x.type === "llm.failed").length;
    const calls = completed.length + failed;
    rows.push([`${label} (exit ${r.status})`, `${wall.toFixed(1)} s wall, ${calls} model call(s): ${calls - repaired - failed} valid at once, ${repaired} after repair, ${failed} fell back`]);
    log(`${label}: ${wall.toFixed(1)} s`);
  }
  timed("one AURA scene query", ["run", "aura-scene", "--seed", "1", "--config", JSON.stringify({ queries: [{ id: "1", text: "Is Ben around?", asker: "Ana" }], order: ["1"] })]);
  timed("one EnvProbe episode (horizon 2)", ["run", "envprobe", "--seed", "1", "--config", '{"horizon": 2}']);

  rows.push(["load average (1 min) at the end", loadavg()[0]!.toFixed(1)]);
  return { model: model.name, rows };
}

if (import.meta.main) {
  const result = await localModelRows();
  if (result === null) {
    process.stderr.write(`bench:llm: no local model in ${localPaths().cache}; run \`npm run probetown -- llm install\`\n`);
    process.exit(2);
  }
  process.stdout.write(`| ${result.model} | |\n| --- | --- |\n${result.rows.map(([a, b]) => `| ${a} | ${b} |`).join("\n")}\n`);
}
