// Readers of flag values shared by the command definitions (main.ts) and their actions.
import { readFileSync } from "node:fs";
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

/** `--config` is a JSON file, or the JSON object itself when it starts with `{` (quick overrides). */
export function readConfigFile(path: string): unknown {
  let text: string;
  // `[…]` too, so an inline array is told it is not an object rather than that no such file exists.
  if (/^\s*[{[]/.test(path)) text = path;
  else {
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new UsageError(`--config ${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`--config ${path}: expected a JSON object of config fields, got ${Array.isArray(value) ? "an array" : String(value)}`);
  return value;
}
