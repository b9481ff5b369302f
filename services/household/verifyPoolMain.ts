// Verifies every task of the committed household pool and prints how long the verifier took:
// cold (the first pass in this process, the JIT still warming up: the first task and the worst)
// and warm (the median and worst over three more passes), with the search sizes.
// Run: node services/household/verifyPoolMain.ts [--json]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { PoolIndex } from "../../actors/household/pool.ts";
import type { HouseholdTask } from "../../actors/household/task.ts";
import { verifyTask } from "../../actors/household/verifier/verify.ts";
import { POOL_DIR } from "./writePoolMain.ts";

export interface VerifierTiming {
  readonly tasks: number;
  readonly passed: number;
  readonly coldFirstMs: number;
  readonly coldWorstMs: number;
  readonly warmMedianMs: number;
  readonly warmWorstMs: number;
  readonly nodes: { readonly median: number; readonly worst: number };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function timeVerifier(tasks: readonly HouseholdTask[], warmPasses = 3): VerifierTiming {
  const timed = (t: HouseholdTask) => {
    const started = performance.now();
    const v = verifyTask(t);
    return { ms: performance.now() - started, ok: v.ok, nodes: v.report?.totalNodes ?? 0 };
  };
  const cold = tasks.map(timed);
  const warm: number[] = [];
  for (let p = 0; p < warmPasses; p++) for (const t of tasks) warm.push(timed(t).ms);
  const nodes = cold.map((c) => c.nodes);
  return {
    tasks: tasks.length,
    passed: cold.filter((c) => c.ok).length,
    coldFirstMs: cold[0]?.ms ?? 0,
    coldWorstMs: Math.max(...cold.map((c) => c.ms)),
    warmMedianMs: median(warm),
    warmWorstMs: Math.max(...warm),
    nodes: { median: median(nodes), worst: Math.max(...nodes) },
  };
}

if (import.meta.main) {
  const index = JSON.parse(readFileSync(join(POOL_DIR, "index.json"), "utf8")) as PoolIndex;
  const tasks = index.tasks.map((id) => JSON.parse(readFileSync(join(POOL_DIR, `${id}.json`), "utf8")) as HouseholdTask);
  const t = timeVerifier(tasks);
  if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify(t, null, 2)}\n`);
  else {
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    process.stdout.write(`${t.passed}/${t.tasks} pool tasks pass the verifier\n`);
    process.stdout.write(`cold (first pass): first task ${ms(t.coldFirstMs)}, worst ${ms(t.coldWorstMs)}\n`);
    process.stdout.write(`warm (3 passes): median ${ms(t.warmMedianMs)}, worst ${ms(t.warmWorstMs)}\n`);
    process.stdout.write(`search nodes per task (all searches): median ${t.nodes.median}, worst ${t.nodes.worst}\n`);
  }
}
