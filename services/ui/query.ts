// The API's query parameters, checked: a value that is not what its parameter takes is refused
// with a message saying so (the server answers 400), never read as a default.
import { MAX_PAGE, type RecordQuery } from "./records.ts";

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const KNOWN = new Set(["from", "to", "type", "actor", "offset", "limit"]);

function wholeNumber(name: string, text: string | undefined, fallback: number | null, max = Number.MAX_SAFE_INTEGER): Parsed<number | null> {
  if (text === undefined) return { ok: true, value: fallback };
  if (!/^\d+$/.test(text) || Number(text) > max) return { ok: false, message: `${name} must be a whole number from 0 to ${max}, got '${text}'` };
  return { ok: true, value: Number(text) };
}

const list = (text: string | undefined): string[] => (text === undefined ? [] : text.split(",").map((s) => s.trim()).filter((s) => s !== ""));

export function parseRecordQuery(params: Record<string, string>): Parsed<RecordQuery> {
  const unknown = Object.keys(params).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) return { ok: false, message: `unknown parameter ${unknown.map((k) => `'${k}'`).join(", ")}; this endpoint takes ${[...KNOWN].join(", ")}` };
  const from = wholeNumber("from", params.from, null);
  if (!from.ok) return from;
  const to = wholeNumber("to", params.to, null);
  if (!to.ok) return to;
  if (from.value !== null && to.value !== null && from.value > to.value) return { ok: false, message: `from (${from.value}) is after to (${to.value})` };
  const offset = wholeNumber("offset", params.offset, 0);
  if (!offset.ok) return offset;
  const limit = wholeNumber("limit", params.limit, 1000, MAX_PAGE);
  if (!limit.ok) return limit;
  return { ok: true, value: { fromTick: from.value, toTick: to.value, types: list(params.type), actors: list(params.actor), offset: offset.value ?? 0, limit: limit.value ?? 1000 } };
}

export function parseSeq(text: string): Parsed<number> {
  if (!/^\d+$/.test(text)) return { ok: false, message: `a record's seq is a whole number, got '${text}'` };
  return { ok: true, value: Number(text) };
}

/** `after` for the live stream: a seq, or -1 for every record from the first. */
export function parseAfter(text: string): Parsed<number> {
  if (!/^(-1|\d+)$/.test(text)) return { ok: false, message: `after must be a record's seq (a whole number) or -1 for every record, got '${text}'` };
  return { ok: true, value: Number(text) };
}
