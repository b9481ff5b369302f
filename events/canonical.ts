// Canonical JSON (sorted object keys, no whitespace) and the hashes built on it (DESIGN §5).
// Values are plain JSON (strings, finite numbers, booleans, null, arrays, objects). The fast path
// checks that keys are already sorted and lets the native JSON.stringify write them: payloads read
// back from a log always are, and the hot payload builders emit sorted keys. Measured on a
// 50-occupant payload: 18 µs against 81 µs for a hand-written sorting serialiser (and 3.9 µs vs
// ~1 µs per small record against an RFC 8785 library).
import { hash } from "node:crypto";

/**
 * True when every object's keys (below `value`) are in sorted order and every number is finite.
 * Leaves are tested inline rather than by a call each: most values are strings and numbers, and
 * the per-leaf call was a third of the check on the per-tick hash views of a 1,000-agent town.
 */
function isCanonicalShape(value: object): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "object" ? item !== null && !isCanonicalShape(item) : typeof item === "number" && !Number.isFinite(item)) return false;
    }
    return true;
  }
  // Object.keys rather than for-in: ~1.7× faster on a large town's per-tick hash views.
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0 && key < keys[i - 1]!) return false;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === "object" ? item !== null && !isCanonicalShape(item) : typeof item === "number" && !Number.isFinite(item)) return false;
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

/** The value itself when it is already canonical (sorted keys, finite numbers), else a sorted copy: JSON.stringify of it is its canonical JSON. */
export function canonicalValue(value: unknown): unknown {
  if (typeof value === "object") return value === null || isCanonicalShape(value) ? value : sortedCopy(value);
  if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
  return value;
}

export function canonicalJson(value: unknown): string {
  if (value === undefined) throw new TypeError("canonicalJson: undefined is not JSON");
  const canonical = typeof value === "object" ? value === null || isCanonicalShape(value) : typeof value !== "number" || Number.isFinite(value);
  return JSON.stringify(canonical ? value : sortedCopy(value));
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

export function sha256Chain(previous: string, body: string): string {
  // One-shot hashing of the concatenation measured ~2× faster than createHash().update() twice.
  return hash("sha256", previous + body, "hex");
}

export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value));
