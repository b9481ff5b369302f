// `run household --task <id|file>`: the task named on the command line (taskRef.ts), put into the
// config as the task inline, so the log's header holds it and replay needs no file.
import { UsageError } from "../kernel/usageError.ts";
import { resolveTaskRef } from "./taskRef.ts";

export function householdRunFlags(config: unknown, flags: Readonly<Record<string, unknown>>): unknown {
  const ref = flags.task;
  if (typeof ref !== "string") return config;
  const given = (config ?? {}) as Record<string, unknown>;
  if ("task" in given || "task_id" in given) throw new UsageError(`--task ${ref}: the --config names a task too; give the task one way`);
  return { ...given, task: resolveTaskRef(ref).task };
}
