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
 * the same, and never held in memory at once. An iterable that is not an array (a list made lazily,
 * such as a summary's stale beliefs) is written as an array, an item at a time and none kept once
 * written, when it is the value or an item of an object or array that is split (above `splitDepth`).
 */
export function* prettyJsonPieces(value: unknown, depth = 0, splitDepth = 2): Generator<string> {
  const pad = (d: number) => "  ".repeat(d);
  const lazy = typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] === "function";
  if (!lazy && (depth >= splitDepth || value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function")) {
    yield (JSON.stringify(value, null, 2) ?? "null").replaceAll("\n", `\n${pad(depth)}`);
    return;
  }
  const isArray = lazy || Array.isArray(value);
  const entries: Iterable<[string | null, unknown]> = lazy
    ? (function* () {
        for (const v of value as Iterable<unknown>) yield [null, v];
      })()
    : Array.isArray(value)
      ? value.map((v): [null, unknown] => [null, v])
      : Object.entries(value as object).filter(([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol");
  let first = true;
  for (const [key, v] of entries) {
    yield `${first ? (isArray ? "[" : "{") : ","}\n${pad(depth + 1)}${key === null ? "" : `${JSON.stringify(key)}: `}`;
    first = false;
    yield* prettyJsonPieces(v === undefined || typeof v === "function" || typeof v === "symbol" ? null : v, depth + 1, splitDepth);
  }
  yield first ? (isArray ? "[]" : "{}") : `\n${pad(depth)}${isArray ? "]" : "}"}`;
}

/** Writes pieces of text through `write` in chunks of about 1 MB (not a system call per piece); `flush` writes what is held. */
export function chunkedWriter(write: (chunk: string) => void): { readonly push: (piece: string) => void; readonly flush: () => void } {
  let buffer: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (size > 0) write(buffer.join(""));
    buffer = [];
    size = 0;
  };
  const push = (piece: string): void => {
    buffer.push(piece);
    size += piece.length;
    if (size >= 2 ** 20) flush();
  };
  return { push, flush };
}

/** Writes pieces of text through `write` in chunks of about 1 MB (not a system call per piece). */
export function writePieces(pieces: Iterable<string>, write: (chunk: string) => void): void {
  const writer = chunkedWriter(write);
  for (const piece of pieces) writer.push(piece);
  writer.flush();
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
