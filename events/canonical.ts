// Canonical JSON (sorted object keys, no whitespace) and the hashes built on it (DESIGN §5).
// Hand-written rather than taken from an RFC 8785 library: the library measured 3.9 µs per record
// here against ~1 µs for this, and every appended record goes through it. Our values are plain
// JSON (strings, finite numbers, booleans, null, arrays, objects), so key sorting is all we need.
import { hash } from "node:crypto";

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

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

export function sha256Chain(previous: string, body: string): string {
  // One-shot hashing of the concatenation measured ~2× faster than createHash().update() twice.
  return hash("sha256", previous + body, "hex");
}

export const hashOf = (value: unknown): string => sha256Hex(canonicalJson(value));
