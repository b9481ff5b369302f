// The log record envelope and its hash chain (DESIGN §5).
// A record is { v, episode, seq, tick, type, from, to, payload, cause, hash, meta }. `hash` is
// sha256(previous hash ‖ canonical JSON of the record without hash and meta); `meta` carries what
// must not affect replay (wall-clock time, traceparent, host) and is never hashed.
import { canonicalJson, sha256Chain } from "./canonical.ts";

/** Where a record is delivered: one actor, a list of actors, every other actor ("*"), or nobody. */
export type Address = string | readonly string[] | null;

export interface RecordMeta {
  readonly ts?: string;
  readonly traceparent?: string;
  readonly host?: string;
  readonly [key: string]: unknown;
}

export interface LogRecord<P = unknown> {
  readonly v: number;
  readonly episode: string;
  readonly seq: number;
  readonly tick: number;
  readonly type: string;
  readonly from: string;
  readonly to: Address;
  readonly payload: P;
  readonly cause: number | null;
  readonly hash: string;
  readonly meta?: RecordMeta;
}

/** What an actor or the sequencer asks to append; the store assigns seq, episode and hash. */
export interface Draft<P = unknown> {
  readonly type: string;
  readonly from: string;
  readonly to: Address;
  readonly payload: P;
  readonly tick: number;
  readonly cause: number | null;
  readonly v?: number;
}

export const GENESIS_HASH = "0".repeat(64);

/**
 * The hashed body of a record read back from a log. Sealing writes the body's keys in sorted order
 * and its payload as canonical JSON, and JSON.parse keeps the file's key order, so JSON.stringify
 * reproduces the written bytes exactly unless the line was altered.
 */
export function recordBody(r: Omit<LogRecord, "hash" | "meta">): string {
  return JSON.stringify({
    cause: r.cause,
    episode: r.episode,
    from: r.from,
    payload: r.payload,
    seq: r.seq,
    tick: r.tick,
    to: r.to,
    type: r.type,
    v: r.v,
  });
}

/** A sealed record and its JSONL line (the body is serialised once, for both hash and line). */
export interface Sealed {
  readonly record: LogRecord;
  readonly line: string;
}

// A store seals every record of one episode: its JSON-quoted id is kept rather than re-quoted, and
// so are the few actor ids and event types that recur in every record.
let quotedEpisode: { readonly episode: string; readonly json: string } = { episode: "", json: '""' };
const quotedNames = new Map<string, string>();

function quoted(name: string): string {
  let json = quotedNames.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    // Bounded: a town's ids and the catalogue's types; anything beyond is quoted each time.
    if (quotedNames.size < 4096) quotedNames.set(name, json);
  }
  return json;
}

/** `to` is almost always an actor id or null: quoted directly, lists canonicalised. */
const addressJson = (to: Address): string => (to === null ? "null" : typeof to === "string" ? quoted(to) : canonicalJson(to));

// A batch's records share one meta object (its wall-clock stamp) when no span or extra is added:
// it is serialised once for the batch, not once a record. Meta objects are read-only.
let lastMeta: RecordMeta | undefined;
let lastMetaJson = "";
function metaJson(meta: RecordMeta): string {
  if (meta !== lastMeta) {
    lastMetaJson = JSON.stringify(meta);
    lastMeta = meta;
  }
  return lastMetaJson;
}

/** `payloadJson`: the payload's canonical JSON, when the caller has it (the compact writer serialises each payload once). */
export function seal(previousHash: string, episode: string, seq: number, draft: Draft, v: number, meta?: RecordMeta, payloadJson?: string): Sealed {
  if (quotedEpisode.episode !== episode) quotedEpisode = { episode, json: JSON.stringify(episode) };
  // Same key order as recordBody, with the payload in canonical form. The body without its closing
  // brace is built once: the hash covers it closed, the line continues it with hash and meta.
  const open =
    `{"cause":${draft.cause === null ? "null" : String(draft.cause)},"episode":${quotedEpisode.json},"from":${quoted(draft.from)},` +
    `"payload":${payloadJson ?? canonicalJson(draft.payload)},"seq":${seq},"tick":${draft.tick},"to":${addressJson(draft.to)},"type":${quoted(draft.type)},"v":${v}`;
  const hash = sha256Chain(previousHash, `${open}}`);
  const { tick, type, from, to, payload, cause } = draft;
  const record: LogRecord = meta === undefined ? { v, episode, seq, tick, type, from, to, payload, cause, hash } : { v, episode, seq, tick, type, from, to, payload, cause, hash, meta };
  const line = meta === undefined ? `${open},"hash":"${hash}"}\n` : `${open},"hash":"${hash}","meta":${metaJson(meta)}}\n`;
  return { record, line };
}

export function expectedHash(previousHash: string, r: LogRecord): string {
  return sha256Chain(previousHash, recordBody(r));
}

/**
 * The JSONL line (without its newline) `seal` wrote for a record read back, given the record's
 * `recordBody`: the body's fields, then hash, then meta. A line that parses to the same record but
 * is not this text was rewritten after it was sealed (reformatted, re-escaped, its meta respaced).
 */
export function sealedLine(r: LogRecord, body: string): string {
  return `${body.slice(0, -1)},"hash":"${r.hash}"${r.meta === undefined ? "" : `,"meta":${JSON.stringify(r.meta)}`}}`;
}

/** An episode's actors: their ids in canonical order, and a set for lookups (a large town has 1,001). */
export interface ActorIndex {
  readonly ids: readonly string[];
  readonly has: (id: string) => boolean;
}

export function actorIndexOf(ids: Iterable<string>): ActorIndex {
  const set = new Set(ids);
  return { ids: [...set].sort(), has: (id) => set.has(id) };
}

export function recipientsOf(to: Address, from: string, actors: ActorIndex): string[] {
  if (to === null) return [];
  if (to === "*") return actors.ids.filter((id) => id !== from);
  if (typeof to === "string") return actors.has(to) ? [to] : [];
  return [...to].sort();
}
