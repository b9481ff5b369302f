// A task named on the command line (`--task`, `tasks show`, `tasks verify`): a task file, a pool id
// (its file under data/household/pool/), a hand-written example's id or a generated id. Files are
// read here, in services/; the world resolves only ids it can build without I/O.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE_TASKS } from "../../actors/household/examples.ts";
import { generatedOptionsOf, generateTask } from "../../actors/household/generator.ts";
import { checkTask, type HouseholdTask } from "../../actors/household/task.ts";
import { UsageError } from "../kernel/usageError.ts";
import { loadTaskFile } from "./taskFile.ts";
import { POOL_DIR } from "./writePoolMain.ts";

/** Where a named task came from, for what a command prints. */
export interface NamedTask {
  readonly task: HouseholdTask;
  /** The file read, or null for an example or a generated id. */
  readonly file: string | null;
}

const looksLikePath = (ref: string) => ref.endsWith(".json") || ref.includes("/");

export function resolveTaskRef(ref: string, poolDir: string = POOL_DIR): NamedTask {
  if (looksLikePath(ref) || existsSync(ref)) {
    if (!existsSync(ref)) throw new UsageError(`${ref}: no such task file`);
    return { task: loadTaskFile(ref), file: ref };
  }
  const pooled = join(poolDir, `${ref}.json`);
  if (existsSync(pooled)) return { task: loadTaskFile(pooled), file: pooled };
  const example = EXAMPLE_TASKS[ref];
  if (example !== undefined) return { task: checkTask(example, `task ${ref}`), file: null };
  const generated = generatedOptionsOf(ref);
  if (generated !== null) return { task: generateTask(generated), file: null };
  throw new UsageError(`task '${ref}': not a task file, a pool id (${poolDir}/<id>.json), an example (${Object.keys(EXAMPLE_TASKS).join(", ")}) or a generated id (gen-<coop|mixed>-d<1-3>-<standard|hard>-s<seed>)`);
}

/** The task files a `verify` argument names: the file itself, or a directory's *.json but its index, in name order. */
export function taskFilesOf(path: string): string[] {
  if (!existsSync(path)) throw new UsageError(`${path}: no such task file or directory`);
  if (!statSync(path).isDirectory()) return [path];
  const files = readdirSync(path).filter((f) => f.endsWith(".json") && f !== "index.json").sort();
  if (files.length === 0) throw new UsageError(`${path}: no task files (*.json) in the directory`);
  return files.map((f) => join(path, f));
}
