// Readable differences between two JSON-like values, as "path: left → right" lines.
import { canonicalJson } from "../../events/canonical.ts";

const show = (v: unknown): string => {
  if (v === undefined) return "(absent)";
  const text = typeof v === "string" ? JSON.stringify(v) : canonicalJson(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

export function diffValues(left: unknown, right: unknown, limit = 20, path = ""): string[] {
  const out: string[] = [];
  walk(left, right, path, out, limit);
  return out;
}

function walk(a: unknown, b: unknown, path: string, out: string[], limit: number): void {
  if (out.length >= limit) return;
  if (a === b) return;
  const bothObjects = a !== null && b !== null && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) {
    if (canonicalJson(a ?? null) !== canonicalJson(b ?? null) || (a === undefined) !== (b === undefined)) out.push(`${path || "(root)"}: ${show(a)} → ${show(b)}`);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n && out.length < limit; i++) walk(a[i], b[i], `${path}[${i}]`, out, limit);
    return;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort();
  for (const k of keys) {
    if (out.length >= limit) return;
    walk(ao[k], bo[k], path === "" ? k : `${path}.${k}`, out, limit);
  }
}
