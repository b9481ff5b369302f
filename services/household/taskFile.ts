// Reading a household task file: the file's name leads every error, then the field and the problem
// (exit 2). Validation itself is the world's (actors/household/task.ts), so a task given inline in
// a config is checked by the same rules.
import { readInputFile, checkParsedInput } from "../kernel/inputFile.ts";
import { checkTask, type HouseholdTask } from "../../actors/household/task.ts";
import { UsageError } from "../kernel/usageError.ts";

export function loadTaskFile(path: string): HouseholdTask {
  let text: string;
  try {
    text = readInputFile(path, "dataset");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${path}: cannot read the task file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  checkParsedInput(raw, path);
  return checkTask(raw, path);
}
