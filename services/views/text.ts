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
 */
export function namesActor(id: string, wanted: string): boolean {
  const w = wanted.trim().toLowerCase().replace(/\s+/g, "-");
  const lower = id.toLowerCase();
  return lower === w || lower.endsWith(`/${w}`);
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
