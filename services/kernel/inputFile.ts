// Reading the files a user gives (a --config, an experiment spec, a benchmark or task file, a
// results JSONL, a sweep's metrics file): each kind has a size limit, checked before the file is
// read whole, and each parsed input is refused if it has a key that names an object's prototype
// machinery or nests deeper than anything that reads it can recurse. `--config /dev/zero` read without end until the heap gave out, and a 1 GB
// benchmark file was read into memory before it was found not to be one; the limits are far above
// any file probetown writes or ships (docs/configuration.md lists them).
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { InputFileTooLarge, InputKeyForbidden, InputNestedTooDeep } from "./errors.ts";

const MiB = 2 ** 20;

/** The most bytes an input file of each kind may hold (the one place they are set; docs/configuration.md "Input files" lists them). */
export const INPUT_LIMITS = {
  /** `--config`, `--llm-config`: a world's or the model endpoint's overrides. */
  config: 1 * MiB,
  /** An experiment spec (JSON or YAML). */
  spec: 1 * MiB,
  /** A benchmark's query file or a task file (the shipped ones are under 100 KB). */
  dataset: 16 * MiB,
  /** A results JSONL or a sweep's metrics file: one row per cell, read whole to report on. */
  results: 256 * MiB,
} as const;

export type InputKind = keyof typeof INPUT_LIMITS;

/** The keys refused in a parsed input: they name an object's prototype, which a merge of the input would reach. */
export const FORBIDDEN_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

/**
 * The text of the file at `path`, an input of `kind`, or InputFileTooLarge (exit 2) naming it by
 * `label` (how the user gave it: `--config x.json`, or the path). A regular file is measured before
 * it is read; another kind of file (a device, a pipe) is read up to its limit and refused past it.
 * Node's own errors (ENOENT, EISDIR, EACCES) are thrown as they are, for the caller to word.
 */
export function readInputFile(path: string, kind: InputKind, label: string = path): string {
  const limit = INPUT_LIMITS[kind];
  const fd = openSync(path, "r");
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > limit) throw new InputFileTooLarge({ label, kind, size: stat.size, limit });
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(Math.min(limit + 1, 4 * MiB));
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw new InputFileTooLarge({ label, kind, size: stat.isFile() ? total : null, limit });
      chunks.push(Buffer.from(chunk.subarray(0, n)));
    }
    return Buffer.concat(chunks, total).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * A regular file at `path` over its kind's limit is refused at once (InputFileTooLarge), so a flag's
 * parser can turn a 1 GB file away before the command loads anything; any other path is left to the
 * reader (a missing file is worded where it is read, a device is read up to its limit there).
 */
export function checkInputFileSize(path: string, kind: InputKind, label: string = path): void {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return;
    size = stat.size;
  } catch {
    return;
  }
  if (size > INPUT_LIMITS[kind]) throw new InputFileTooLarge({ label, kind, size, limit: INPUT_LIMITS[kind] });
}

/**
 * How deep a parsed input may nest objects and arrays: JSON.parse takes any depth, but what reads
 * the result recurses (a merge, a schema, JSON.stringify in an error message), and 50,000 nested
 * arrays overflowed its stack (exit 4). No config, spec or benchmark nests more than a few levels.
 */
export const MAX_INPUT_DEPTH = 64;

/** What is wrong with a parsed input's shape: a forbidden key, or nesting past MAX_INPUT_DEPTH, and where (a path like `agents[0].__proto__`). */
export type InputShapeProblem =
  | { readonly reason: "key"; readonly key: string; readonly at: string }
  | { readonly reason: "depth"; readonly at: string; readonly limit: number };

/** The first shape problem of `value` (a parsed input), or null. Walked with a stack of its own, so a deep input cannot overflow the call stack. */
export function inputShapeProblem(value: unknown): InputShapeProblem | null {
  const stack: { readonly value: unknown; readonly at: string; readonly depth: number }[] = [{ value, at: "", depth: 0 }];
  while (stack.length > 0) {
    const { value: v, at, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_INPUT_DEPTH) return { reason: "depth", at: at === "" ? "(top)" : at, limit: MAX_INPUT_DEPTH };
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, at: `${at}[${i}]`, depth: depth + 1 }));
      continue;
    }
    for (const key of Object.keys(v)) {
      const path = at === "" ? key : `${at}.${key}`;
      if (FORBIDDEN_KEYS.includes(key)) return { reason: "key", key, at: path };
      stack.push({ value: (v as Record<string, unknown>)[key], at: path, depth: depth + 1 });
    }
  }
  return null;
}

/** The problem's words, after the input's name and position (a results row's line). */
export const inputShapeWording = (p: InputShapeProblem): string =>
  p.reason === "key" ? `key '${p.key}' is refused in an input (it names an object's prototype)` : `nested more than ${p.limit} objects or arrays deep`;

/** Refuses a parsed input of `label` with a forbidden key (InputKeyForbidden) or nested too deep (InputNestedTooDeep), exit 2, naming where. */
export function checkParsedInput(value: unknown, label: string): void {
  const problem = inputShapeProblem(value);
  if (problem === null) return;
  if (problem.reason === "key") throw new InputKeyForbidden({ label, key: problem.key, at: problem.at });
  throw new InputNestedTooDeep({ label, at: problem.at, limit: problem.limit });
}
