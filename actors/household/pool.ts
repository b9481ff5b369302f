// The committed pool of household tasks (issue 23; digest §7 Table 3's shape): 300 generated
// tasks, 150 standard and 150 hard, each split half cooperative and half mixed, K-depths 1, 2 and
// 3 in equal parts — 25 tasks per (split, category, depth) cell. A cell's tasks take seeds
// `poolSeed × 100 + j` (j = 0…24), so each task is also reachable by its id alone
// (`gen-coop-d2-hard-s2307`). Every task has passed the verifier (generator.ts).
import { generateTask, type GenerateOptions } from "./generator.ts";
import type { HouseholdTask } from "./task.ts";

export const POOL_SEED = 23;
export const TASKS_PER_CELL = 25;
export const SPLITS = ["standard", "hard"] as const;
export const CATEGORIES = ["cooperative", "mixed"] as const;
export const DEPTHS = [1, 2, 3] as const;

/** The options of every pool task, in pool order: split, category, depth, then seed. */
export function poolOptions(poolSeed: number = POOL_SEED): GenerateOptions[] {
  const out: GenerateOptions[] = [];
  for (const split of SPLITS)
    for (const category of CATEGORIES)
      for (const depth of DEPTHS)
        for (let j = 0; j < TASKS_PER_CELL; j++) out.push({ seed: poolSeed * 100 + j, depth, category, split });
  return out;
}

export function generatePool(poolSeed: number = POOL_SEED): HouseholdTask[] {
  return poolOptions(poolSeed).map(generateTask);
}

/** The pool's index file: its seed, its cells' sizes and its task ids in order. */
export interface PoolIndex {
  readonly seed: number;
  readonly tasksPerCell: number;
  readonly count: number;
  readonly tasks: readonly string[];
}

export const poolIndexOf = (poolSeed: number, tasks: readonly HouseholdTask[]): PoolIndex => ({ seed: poolSeed, tasksPerCell: TASKS_PER_CELL, count: tasks.length, tasks: tasks.map((t) => t.task_id) });

/** A task's bytes in the pool: two-space JSON and a final newline. */
export const poolFileText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
