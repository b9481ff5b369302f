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

/**
 * Whether an actor id is the one a user named: the id itself, or its last part by name, in any case
 * and with spaces for dashes (`ben`, `Ben`, `Lin Wei` and `agent/lin-wei` all name `agent/lin-wei`).
 */
export function namesActor(id: string, wanted: string): boolean {
  const w = wanted.trim().toLowerCase().replace(/\s+/g, "-");
  const lower = id.toLowerCase();
  return lower === w || lower.endsWith(`/${w}`);
}
