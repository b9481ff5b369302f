// `probetown tasks generate|verify|show`: household tasks from the seeded generator, checked by the
// verifier stage by stage, and shown as a reader sees them.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { generateTask } from "../../../actors/household/generator.ts";
import { CATEGORIES, DEPTHS, poolFileText } from "../../../actors/household/pool.ts";
import type { HouseholdTask } from "../../../actors/household/task.ts";
import { verifyTask } from "../../../actors/household/verifier/verify.ts";
import { TaggedError } from "../../../events/taggedError.ts";
import { EXIT } from "../../cli/exitCodes.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { checkLines, type CheckLine } from "../checks.ts";
import { loadTaskFile } from "../taskFile.ts";
import { resolveTaskRef, taskFilesOf } from "../taskRef.ts";
import { taskView } from "../taskView.ts";

export interface GenerateFlags {
  readonly seed: number;
  readonly split: "standard" | "hard";
  readonly count: number;
  readonly depth?: 1 | 2 | 3;
  readonly category?: "cooperative" | "mixed";
  readonly out?: string;
  readonly json?: boolean;
}

/**
 * Task i of a batch: seed + i, the depth and category given or else cycling (depths 1, 2, 3, then
 * the other category), so a batch's ids never repeat.
 */
export function batchTasks(f: GenerateFlags): HouseholdTask[] {
  return Array.from({ length: f.count }, (_, i) =>
    generateTask({ seed: f.seed + i, split: f.split, depth: f.depth ?? DEPTHS[i % DEPTHS.length]!, category: f.category ?? CATEGORIES[Math.floor(i / DEPTHS.length) % CATEGORIES.length]! }),
  );
}

export function cmdTasksGenerate(f: GenerateFlags): number {
  const tasks = batchTasks(f);
  if (f.out === undefined) {
    process.stdout.write(poolFileText(tasks.length === 1 ? tasks[0] : tasks));
    return EXIT.ok;
  }
  // One task to a .json path is that file; otherwise --out is a directory of <task_id>.json.
  const written: string[] = [];
  if (tasks.length === 1 && f.out.endsWith(".json")) {
    mkdirSync(dirname(f.out), { recursive: true });
    writeFileSync(f.out, poolFileText(tasks[0]));
    written.push(f.out);
  } else {
    if (f.out.endsWith(".json")) throw new UsageError(`--out ${f.out}: ${tasks.length} tasks go to a directory, not one .json file`);
    mkdirSync(f.out, { recursive: true });
    for (const t of tasks) {
      const path = join(f.out, `${t.task_id}.json`);
      writeFileSync(path, poolFileText(t));
      written.push(path);
    }
  }
  if (f.json) process.stdout.write(`${JSON.stringify({ written, tasks: tasks.map((t) => t.task_id) }, null, 2)}\n`);
  else for (const [i, path] of written.entries()) process.stdout.write(`${path}${tasks.length === written.length ? `  (${tasks[i]!.category}, depth ${tasks[i]!.tom_level}, ${tasks[i]!.split})` : ""}\n`);
  return EXIT.ok;
}

export interface VerifyFlags {
  /** False (--no-subgoal-tension): skip the check that mixed tasks' private objectives pull against the shared goal. */
  readonly subgoalTension?: boolean;
  readonly brief?: boolean;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

interface TaskVerdict {
  readonly file: string;
  readonly taskId: string | null;
  readonly ok: boolean;
  /** The loader's problems (exit 2), one `file: field: problem` line each. */
  readonly invalid: readonly string[];
  readonly checks: readonly CheckLine[];
  readonly ms: number;
}

const ms = (x: number | null) => (x === null ? "" : x < 10 ? `${x.toFixed(2)} ms` : `${x.toFixed(1)} ms`);

/** Exit 2 when a file does not load (naming the file and field), else 1 when a task fails a check, else 0. */
export function cmdTasksVerify(path: string, f: VerifyFlags): number {
  const files = taskFilesOf(path);
  const verdicts: TaskVerdict[] = [];
  for (const [i, file] of files.entries()) {
    if (!f.quiet && files.length > 20 && i % 50 === 0) process.stderr.write(`tasks verify: ${i}/${files.length}\n`);
    let task: HouseholdTask;
    try {
      task = loadTaskFile(file);
    } catch (error) {
      // A file that does not load is reported with the others (exit 2 at the end); anything else is ours.
      if (!(error instanceof TaggedError) || error.exitCode !== EXIT.usage) throw error;
      verdicts.push({ file, taskId: null, ok: false, invalid: error.message.split("\n"), checks: [], ms: 0 });
      continue;
    }
    const started = performance.now();
    const verdict = verifyTask(task, { clock: () => performance.now(), subgoalTension: f.subgoalTension !== false });
    const taken = performance.now() - started;
    const checks = checkLines(verdict, task);
    verdicts.push({ file, taskId: task.task_id, ok: checks.every((c) => c.ok), invalid: [], checks, ms: taken });
  }
  if (f.json) process.stdout.write(`${JSON.stringify({ files: verdicts.length, passed: verdicts.filter((v) => v.ok).length, verdicts }, null, 2)}\n`);
  else {
    for (const v of verdicts) {
      if (v.invalid.length > 0) {
        for (const line of v.invalid) process.stdout.write(`✗ ${line}\n`);
        continue;
      }
      process.stdout.write(`${v.ok ? "✓" : "✗"} ${v.taskId} (${v.file}): ${v.ok ? "passes" : "FAILS"} in ${ms(v.ms)}\n`);
      if (f.brief && v.ok) continue;
      for (const c of v.checks) if (!f.brief || !c.ok) process.stdout.write(`    ${c.ok ? "ok  " : "FAIL"} ${c.check.padEnd(33)} ${ms(c.ms).padStart(9)}  ${c.reason}\n`);
    }
    const sorted = verdicts.filter((v) => v.invalid.length === 0).map((v) => v.ms).sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    process.stdout.write(`${verdicts.filter((v) => v.ok).length}/${verdicts.length} task(s) pass; verifier median ${ms(median)}, worst ${ms(sorted.at(-1) ?? 0)}\n`);
  }
  const invalid = verdicts.filter((v) => v.invalid.length > 0);
  if (invalid.length > 0) {
    for (const v of invalid) for (const line of v.invalid) process.stderr.write(`tasks verify: ${line}\n`);
    return EXIT.usage;
  }
  return verdicts.every((v) => v.ok) ? EXIT.ok : EXIT.diverged;
}

export function cmdTasksShow(ref: string, f: { readonly json?: boolean }): number {
  const { task, file } = resolveTaskRef(ref);
  process.stdout.write(f.json ? poolFileText(task) : `${taskView(task, file)}\n`);
  return EXIT.ok;
}
