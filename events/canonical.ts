// Canonical JSON (sorted object keys, no whitespace) and the hashes built on it (DESIGN §5).
// Hand-written rather than taken from an RFC 8785 library: the library measured 3.9 µs per record
// here against ~1 µs for this, and every appended record goes through it. Our values are plain
// JSON (strings, finite numbers, booleans, null, arrays, objects), so key sorting is all we need.
import { createHash, hash } from "node:crypto";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      throw new TypeError("canonicalJson: undefined is not JSON");
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          const item = value[i];
          out += item === undefined ? "null" : canonicalJson(item);
        }
        return out + "]";
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      let out = "{";
      let first = true;
      for (const key of keys) {
        const item = obj[key];
        if (item === undefined) continue;
        if (!first) out += ",";
        first = false;
        out += JSON.stringify(key) + ":" + canonicalJson(item);
      }
      return out + "}";
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode ${typeof value}`);
  }
}

/** Returns a deep copy whose object keys are in sorted order, so JSON.stringify of it is canonical. */
export function sortKeysDeep<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(sortKeysDeep) as T;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj).sort()) {
    const item = obj[key];
    if (item !== undefined) out[key] = sortKeysDeep(item);
  }
  return out as T;
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

export function sha256Chain(previous: string, body: string): string {
  return createHash("sha256").update(previous).update(body).digest("hex");
}

export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value));
