// Writes the committed household task pool (actors/household/pool.ts) to data/household/pool/:
// one file per task, `<task_id>.json`, and `index.json`. Files of tasks no longer in the pool are
// removed, so the directory is exactly the pool. Run: node services/household/writePoolMain.ts [dir]
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generatePool, POOL_SEED, poolFileText, poolIndexOf } from "../../actors/household/pool.ts";

export const POOL_DIR = "data/household/pool";

export function writePool(dir: string = POOL_DIR, seed: number = POOL_SEED): number {
  const tasks = generatePool(seed);
  mkdirSync(dir, { recursive: true });
  const keep = new Set(["index.json", ...tasks.map((t) => `${t.task_id}.json`)]);
  for (const f of readdirSync(dir)) if (f.endsWith(".json") && !keep.has(f)) rmSync(join(dir, f));
  for (const t of tasks) writeFileSync(join(dir, `${t.task_id}.json`), poolFileText(t));
  writeFileSync(join(dir, "index.json"), poolFileText(poolIndexOf(seed, tasks)));
  return tasks.length;
}

if (import.meta.main) {
  const dir = process.argv[2] ?? POOL_DIR;
  const started = performance.now();
  const n = writePool(dir);
  process.stdout.write(`wrote ${n} tasks and index.json to ${dir} in ${Math.round(performance.now() - started)} ms\n`);
}
