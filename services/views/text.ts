// Small text helpers every human view shares.
import { relative } from "node:path";
import { canonicalJson } from "../../events/canonical.ts";

/** A path as a person reads it: relative to the working directory, absolute when that climbs out with ../ */
export function shownPath(path: string, cwd: string = process.cwd()): string {
  const r = relative(cwd, path);
  return r === "" ? "." : r.startsWith("..") ? path : r;
}

/** A value as one line of JSON, cut with … past `max` characters. */
export function compactJson(value: unknown, max = 160): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Whether an actor id is the one a user named: the id itself, or its last part by name, in any case
 * and with spaces for dashes (`ben`, `Ben`, `Lin Wei` and `agent/lin-wei` all name `agent/lin-wei`).
 * Numbers match without their leading zeros: a generated resident's id is zero-padded
 * (`agent/resident-0500`) while its name is `Resident 500`, which is what views show.
 */
export function namesActor(id: string, wanted: string): boolean {
  const w = unpadded(wanted.trim().toLowerCase().replace(/\s+/g, "-"));
  const lower = unpadded(id.toLowerCase());
  return lower === w || lower.endsWith(`/${w}`);
}

const unpadded = (text: string): string => text.replace(/\d+/g, (digits) => digits.replace(/^0+(?=\d)/, ""));

/**
 * `JSON.stringify(value, null, 2)` in pieces: the items of the top-level object and of the arrays and
 * objects directly in it one at a time, deeper values whole. A document larger than one string can
 * hold (about 512 MB in V8: `inspect --json` of a 1,000-agent town over three days) is written all
 * the same, and never held in memory at once.
 */
export function* prettyJsonPieces(value: unknown, depth = 0, splitDepth = 2): Generator<string> {
  const pad = (d: number) => "  ".repeat(d);
  if (depth >= splitDepth || value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    yield (JSON.stringify(value, null, 2) ?? "null").replaceAll("\n", `\n${pad(depth)}`);
    return;
  }
  const isArray = Array.isArray(value);
  const entries: [string | null, unknown][] = isArray
    ? value.map((v): [null, unknown] => [null, v === undefined || typeof v === "function" || typeof v === "symbol" ? null : v])
    : Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol");
  if (entries.length === 0) {
    yield isArray ? "[]" : "{}";
    return;
  }
  yield isArray ? "[\n" : "{\n";
  for (let i = 0; i < entries.length; i++) {
    const [key, v] = entries[i]!;
    yield `${pad(depth + 1)}${key === null ? "" : `${JSON.stringify(key)}: `}`;
    yield* prettyJsonPieces(v, depth + 1, splitDepth);
    yield i < entries.length - 1 ? ",\n" : "\n";
  }
  yield `${pad(depth)}${isArray ? "]" : "}"}`;
}

/**
 * `prettyJsonPieces` of an array at `depth` whose items come one at a time (ticks as a replay makes
 * them): the same text, each item whole, and no item kept once written.
 */
export function* jsonArrayPieces(items: Iterable<unknown>, depth: number): Generator<string> {
  let first = true;
  for (const item of items) {
    yield `${first ? "[" : ","}\n${"  ".repeat(depth + 1)}`;
    first = false;
    yield* prettyJsonPieces(item === undefined || typeof item === "function" || typeof item === "symbol" ? null : item, depth + 1, depth + 1);
  }
  yield first ? "[]" : `\n${"  ".repeat(depth)}]`;
}

/** Writes pieces of text through `write` in chunks of about 1 MB (not a system call per piece). */
export function writePieces(pieces: Iterable<string>, write: (chunk: string) => void): void {
  let buffer: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    buffer.push(piece);
    size += piece.length;
    if (size >= 2 ** 20) {
      write(buffer.join(""));
      buffer = [];
      size = 0;
    }
  }
  if (size > 0) write(buffer.join(""));
}

/**
 * What differs between two records of settings, field by field (`config` by its own fields), as
 * `ticks: 3 <where>, 5 asked for`. `skip` names fields that do not count.
 */
export function fieldDifferences(had: unknown, asked: unknown, where: string, skip: readonly string[] = []): string[] {
  const a = (had ?? {}) as Record<string, unknown>;
  const b = (asked ?? {}) as Record<string, unknown>;
  const shown = (v: unknown) => (v === undefined ? "none" : compactJson(v, 40));
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (skip.includes(key) || canonicalJson(a[key] ?? null) === canonicalJson(b[key] ?? null)) continue;
    if (key === "config" && typeof a[key] === "object" && typeof b[key] === "object") out.push(...fieldDifferences(a[key], b[key], where).map((d) => `config.${d}`));
    else out.push(`${key}: ${shown(a[key])} ${where}, ${shown(b[key])} asked for`);
  }
  return out;
}

/** "1 worker thread", "2 worker threads". */
export const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
