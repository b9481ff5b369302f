// Readers of flag values shared by the command definitions (main.ts) and their actions.
import { availableParallelism } from "node:os";
import { readInputFile, checkParsedInput } from "../kernel/inputFile.ts";
import { FlagInvalid, UsageError } from "../kernel/usageError.ts";

export function integer(flag: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER, why = "") {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new FlagInvalid(`${flag} expects an integer, got '${value}'`);
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new FlagInvalid(`${flag} expects an integer ${min > Number.MIN_SAFE_INTEGER ? `from ${min} to ${Math.min(max, Number.MAX_SAFE_INTEGER)}` : `within ±${Number.MAX_SAFE_INTEGER}`}, got '${value}'`);
    if (n < min) throw new FlagInvalid(`${flag} expects an integer ≥ ${min}, got '${value}'`);
    if (n > max) throw new FlagInvalid(`${flag} expects an integer ≤ ${max}${why}, got '${value}'`);
    return n;
  };
}

/**
 * `--ticks` at most, for any world: a world whose length costs memory or disk says so itself
 * (AURATown's heap and disk checks), but one whose ticks are cheap (an aura-scene's) ran
 * `--ticks 900000000000` until the disk filled. Ten million ticks is days of any world's running.
 */
export const MAX_TICKS = 10_000_000;

/** `sweep --workers` beyond this many per core needs `--many-workers`: each is a process or thread of its own, and 10,000 of them exhausted the machine. */
export const WORKERS_PER_CORE = 4;
/** `sweep --workers` at most, even with `--many-workers`. */
export const MAX_WORKERS = 1024;

/** Refuses `--workers n` above WORKERS_PER_CORE × this machine's cores unless `manyWorkers` (`--many-workers`) says it is meant. */
export function checkWorkers(workers: number, manyWorkers: boolean, cores: number = availableParallelism()): void {
  const limit = WORKERS_PER_CORE * cores;
  if (workers > limit && !manyWorkers) {
    throw new UsageError(`--workers ${workers}: at most ${limit} (${WORKERS_PER_CORE} per core, ${cores} cores here) unless --many-workers says so (up to ${MAX_WORKERS})`);
  }
}

/**
 * `--config`'s parser: checks the file (size, JSON, keys) while the flags are parsed, before a
 * command loads its action's modules, so a bad or endless file is refused at once; the value stays
 * the path, read again where it is used.
 */
export const configFlag = (value: string): string => {
  readConfigFile(value);
  return value;
};

/** `--config` is a JSON file, or the JSON object itself when it starts with `{` (quick overrides). */
export function readConfigFile(path: string): unknown {
  let text: string;
  // `[…]` too, so an inline array is told it is not an object rather than that no such file exists.
  if (/^\s*[{[]/.test(path)) text = path;
  else {
    try {
      text = readInputFile(path, "config", `--config ${path}`);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`--config ${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
  checkParsedInput(value, `--config ${path}`);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`--config ${path}: expected a JSON object of config fields, got ${Array.isArray(value) ? "an array" : String(value)}`);
  return value;
}
