// The log record envelope and its hash chain (DESIGN §5).
// A record is { v, episode, seq, tick, type, from, to, payload, cause, hash, meta }. `hash` is
// sha256(previous hash ‖ canonical JSON of the record without hash and meta); `meta` carries what
// must not affect replay (wall-clock time, traceparent, host) and is never hashed.
import { sortKeysDeep } from "./canonical.ts";
import { sha256Chain } from "./canonical.ts";

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
 * The hashed body. Keys are written in sorted order and the payload is key-sorted when sealed, so
 * this JSON.stringify is the canonical JSON of the record. On read, JSON.parse keeps the file's
 * key order, so the same call reproduces the written bytes exactly unless the line was altered.
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

export function sealRecord(previousHash: string, episode: string, seq: number, draft: Draft, v: number, meta?: RecordMeta): LogRecord {
  const unsealed = {
    v,
    episode,
    seq,
    tick: draft.tick,
    type: draft.type,
    from: draft.from,
    to: draft.to,
    payload: sortKeysDeep(draft.payload),
    cause: draft.cause,
  };
  const hash = sha256Chain(previousHash, recordBody(unsealed));
  return meta === undefined ? { ...unsealed, hash } : { ...unsealed, hash, meta };
}

/** One JSONL line: the canonical body's fields, then hash, then meta. */
export function encodeRecordLine(r: LogRecord): string {
  const body = recordBody(r);
  const tail = r.meta === undefined ? `,"hash":"${r.hash}"}` : `,"hash":"${r.hash}","meta":${JSON.stringify(r.meta)}}`;
  return body.slice(0, -1) + tail + "\n";
}

export function expectedHash(previousHash: string, r: LogRecord): string {
  return sha256Chain(previousHash, recordBody(r));
}

/** The parts of a record that two runs of the same episode must agree on (everything but meta). */
export function withoutMeta(r: LogRecord): Omit<LogRecord, "meta"> {
  const { meta: _meta, ...rest } = r;
  return rest;
}

export function recipientsOf(to: Address, from: string, actorIds: readonly string[]): string[] {
  if (to === null) return [];
  if (to === "*") return actorIds.filter((id) => id !== from);
  if (typeof to === "string") return actorIds.includes(to) ? [to] : [];
  return [...to].sort();
}
