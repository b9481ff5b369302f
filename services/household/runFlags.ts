// `run household --task <id|file>`: the task named on the command line (taskRef.ts), put into the
// config as the task inline, so the log's header holds it and replay needs no file; and `--history n`,
// the LLM agent's transcript length, put into the config as `history`.
import { UsageError } from "../kernel/usageError.ts";
import { resolveTaskRef } from "./taskRef.ts";

export function householdRunFlags(config: unknown, flags: Readonly<Record<string, unknown>>): unknown {
  const withHistory = historyFlag(config, flags.history);
  const ref = flags.task;
  if (typeof ref !== "string") return withHistory;
  const given = (withHistory ?? {}) as Record<string, unknown>;
  if ("task" in given || "task_id" in given) throw new UsageError(`--task ${ref}: the --config names a task too; give the task one way`);
  return { ...given, task: resolveTaskRef(ref).task };
}

/** `--history n`: the LLM agent's transcript length, into the config (a task file given as the config becomes its `task`). */
function historyFlag(config: unknown, history: unknown): unknown {
  if (typeof history !== "number") return config;
  const given = (config ?? {}) as Record<string, unknown>;
  const fields = "task_id" in given ? { task: given } : given;
  if ("history" in fields) throw new UsageError(`--history ${history}: the --config sets history too; give it one way`);
  return { ...fields, history };
}
