// Small text helpers every human view shares.
import { relative } from "node:path";

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
