// Canonical JSON (sorted object keys, no whitespace) and the hashes built on it (DESIGN §5).
// Values are plain JSON (strings, finite numbers, booleans, null, arrays, objects). The fast path
// checks that keys are already sorted and lets the native JSON.stringify write them: payloads read
// back from a log always are, and the hot payload builders emit sorted keys. Measured on a
// 50-occupant payload: 18 µs against 81 µs for a hand-written sorting serialiser (and 3.9 µs vs
// ~1 µs per small record against an RFC 8785 library).
import { hash } from "node:crypto";

/** True when every object's keys are in sorted order and every number is finite. */
function isCanonicalShape(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) {
    for (const item of value) if (!isCanonicalShape(item)) return false;
    return true;
  }
  let previous = "";
  for (const key in value as Record<string, unknown>) {
    if (key < previous) return false;
    previous = key;
    if (!isCanonicalShape((value as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function sortedCopy(value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(sortedCopy);
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj).sort()) out[key] = sortedCopy(obj[key]);
  return out;
}

export function canonicalJson(value: unknown): string {
  if (value === undefined) throw new TypeError("canonicalJson: undefined is not JSON");
  return JSON.stringify(isCanonicalShape(value) ? value : sortedCopy(value));
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

export function sha256Chain(previous: string, body: string): string {
  // One-shot hashing of the concatenation measured ~2× faster than createHash().update() twice.
  return hash("sha256", previous + body, "hex");
}

export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value));
