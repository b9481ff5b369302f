// Log format 2: compact records (issue 26 item 6). An EnvProbe episode's version-1 log repeats in
// every line what its header and the line before already say: the episode id, the key names, the
// sender, recipient and type, the seq and tick, a 64-digit hash, and in each `tick.committed` a
// state hash that is a function of its parts. Format 2 writes each record once, as what is new in it.
//
// The records are the same. A format-2 log decodes record for record to the version-1 log of the
// same episode: the same envelopes, payloads and hash chain (each hash is the version-1 hash,
// sha256(previous hash ‖ recordBody), over the decoded record), so verify, replay, inspect, diff and
// fork read it through the same scan and see the records a version-1 log holds. Only the bytes differ.
//
// A format-2 log is one segment (`000000000000.jsonl`):
// - line 1, seq 0: the episode's header (`episode.started`), exactly as version 1 seals it, except
//   that its `meta` (never hashed) begins with `"log":2`: the format's version;
// - every other line, seq = line − 1: a JSON array `[shape, ...values, hash]`, or `[shape, ...values,
//   hash, meta]` for a record with meta:
//   - `shape` is `[type, v, from, to, causeBack, tickStep, keys]` the first time it occurs, and later
//     its index (0-based, in order of first occurrence in this file). `causeBack` is seq − cause
//     (null: no cause), `tickStep` the record's tick minus the previous record's;
//   - `keys` null: one value, the payload; a list of strings: the payload is the object of those
//     keys (sorted, as canonical JSON has them) and the values, in that order; a list beginning with
//     0 (only `tick.committed`): the values are the part digests of the actors named after the 0, and
//     the payload is `{parts, stateHash}`, its stateHash recomputed as the kernel computes it
//     (sha256 of canonical `{parts, tick}`), so it is not written;
//   - `hash` is the record's chain hash: its first 8 hex digits, or all 64. The log's last line keeps
//     all 64 (a writer may keep them on any line; the direct driver keeps them on the last only).
//     The whole chain is recomputed on reading: a record altered is caught on its own line (its 8
//     digits, but for a 1 in 2³² chance) and certainly by the last line's whole hash, which covers
//     every record before it. A log that ends on a line keeping 8 digits was cut short: refused.
// A line must be exactly what the encoder writes for its record (a shape defined twice, a value
// respaced, a hash cut to another length are all refused), as version 1 refuses a line rewritten.
import { canonicalJson, canonicalValue, sha256Chain, sha256Hex } from "./canonical.ts";
import { ExitCode, TaggedError } from "./taggedError.ts";
import { GENESIS_HASH, recordBody, type Address, type LogRecord, type RecordMeta } from "./record.ts";
import { InternalError } from "./internalError.ts";

/** The format version a compact log's header meta carries as `log`. Logs without it are version 1. */
export const COMPACT_LOG = 2;
/** Hex digits of the chain hash a compact record keeps, but for the log's last (all 64). */
export const SHORT_HASH = 8;
const COMMIT = "tick.committed";
/** A `keys` list beginning with this marks a commit's part digests (a number: payload keys are strings). */
const PARTS = 0;

/** What a header's meta says about its log's format: 1 (none said), 2, or the unknown value it holds. */
export function logFormatOf(header: LogRecord | null | undefined): unknown {
  if (header === null || header === undefined || header.meta === undefined || !("log" in header.meta)) return 1;
  return header.meta.log;
}

export const isCompactHeader = (header: LogRecord | null | undefined): boolean => header !== null && header !== undefined && header.seq === 0 && header.type === "episode.started" && logFormatOf(header) === COMPACT_LOG;

/** A compact line that does not decode to the record its encoder wrote; the reader adds file, line and seq. */
export class CompactRecordDamaged extends TaggedError {
  readonly _tag = "CompactRecordDamaged";
  readonly reason: string;
  /** The line is not JSON (at a log's end, a torn write). */
  readonly unparsable: boolean;
  /** The 1-based line, when the decoder read the whole text (decodeCompactText); else the reader knows it. */
  readonly line: number | null;
  constructor(reason: string, unparsable = false, line: number | null = null) {
    super(line === null ? reason : `line ${line}: ${reason}`);
    this.reason = reason;
    this.unparsable = unparsable;
    this.line = line;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

/** A compact log is written whole and never appended to: a run that would continue one is refused. */
export class CompactLogReadOnly extends TaggedError {
  readonly _tag = "CompactLogReadOnly";
  get exitCode(): 2 {
    return ExitCode.usage;
  }
}

type Keys = readonly string[] | readonly [0, ...string[]] | null;
interface Shape {
  readonly type: string;
  readonly v: number;
  readonly from: string;
  readonly to: Address;
  readonly causeBack: number | null;
  readonly tickStep: number;
  readonly keys: Keys;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The kernel's tick state hash (services/distributed/actorHost.ts stateHashOf), here so the record layer does not load the actor host. */
export const commitStateHash = (tick: number, parts: Readonly<Record<string, string>>): string => sha256Hex(canonicalJson({ parts, tick }));

/** A commit payload the parts codec reproduces exactly: `{parts, stateHash}`, string digests under sorted ids, the state hash theirs. */
function partsIds(payload: Record<string, unknown>, tick: number): string[] | null {
  const keys = Object.keys(payload);
  if (keys.length !== 2 || keys[0] !== "parts" || keys[1] !== "stateHash") return null;
  const parts = payload.parts;
  if (!isPlainObject(parts)) return null;
  const ids = Object.keys(parts);
  for (let i = 0; i < ids.length; i++) if (typeof parts[ids[i]!] !== "string" || (i > 0 && ids[i]! <= ids[i - 1]!)) return null;
  return payload.stateHash === commitStateHash(tick, parts as Record<string, string>) ? ids : null;
}

const sameKeys = (a: Keys, b: Keys): boolean => {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};
const sameAddress = (a: Address, b: Address): boolean => a === b || (Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]));
const sameShape = (a: Shape, b: Shape): boolean => a.v === b.v && a.from === b.from && a.causeBack === b.causeBack && a.tickStep === b.tickStep && sameAddress(a.to, b.to) && sameKeys(a.keys, b.keys);

/** A payload as a compact line and the hash both write it: its keys, its values' JSON (comma-separated), and its canonical JSON. */
export interface PayloadText {
  readonly keys: Keys;
  readonly values: string;
  readonly json: string;
}

/** A record's payload serialised for both the compact line (its values) and the hash (its canonical JSON). */
export function payloadText(type: string, tick: number, payload: unknown): PayloadText {
  if (isPlainObject(payload)) {
    const canon = canonicalValue(payload) as Record<string, unknown>;
    const keys = Object.keys(canon);
    if (keys.length > 0) {
      const ids = type === COMMIT ? partsIds(canon, tick) : null;
      if (ids !== null) {
        const parts = canon.parts as Record<string, string>;
        let values = "";
        for (let i = 0; i < ids.length; i++) values += `${i === 0 ? "" : ","}${JSON.stringify(parts[ids[i]!])}`;
        return { keys: [PARTS, ...ids], values, json: JSON.stringify(canon) };
      }
      // Two native serialisations (the object, then its values in the same order) cost less than
      // one per value. undefined is left out of an object's JSON but is null in an array's: such a
      // payload is written whole instead.
      const vals = Object.values(canon);
      if (!vals.includes(undefined)) return { keys, values: JSON.stringify(vals).slice(1, -1), json: JSON.stringify(canon) };
    }
  }
  const json = canonicalJson(payload);
  return { keys: null, values: json, json };
}

/**
 * One compact log's encoder and decoder: both keep the same state (the shapes defined so far, the
 * previous record's seq, tick and hash), so a line is decoded, then encoded again and compared.
 */
export class CompactCodec {
  readonly episode: string;
  private seq: number;
  private tick: number;
  private hash: string;
  private readonly shapes: Shape[] = [];
  /** Shapes by type (a few each): their indexes. */
  private readonly byType = new Map<string, number[]>();
  /** Did the last line decoded keep its whole hash (as a log's last line must)? */
  lastWhole = true;

  /** Starts after the header (seq 0, sealed as version 1). */
  constructor(header: LogRecord) {
    this.episode = header.episode;
    this.seq = header.seq;
    this.tick = header.tick;
    this.hash = header.hash;
  }

  private find(shape: Shape): number | undefined {
    const list = this.byType.get(shape.type);
    if (list !== undefined) for (const i of list) if (sameShape(this.shapes[i]!, shape)) return i;
    return undefined;
  }

  private register(shape: Shape): number {
    const i = this.shapes.length;
    this.shapes.push(shape);
    const list = this.byType.get(shape.type);
    if (list === undefined) this.byType.set(shape.type, [i]);
    else list.push(i);
    return i;
  }

  /**
   * The compact line (no newline) for the record after the last one encoded or decoded;
   * `record.hash` is its whole chain hash, kept whole with `whole`. `text`: its payload's
   * `payloadText`, when the writer has it already (it sealed the record with its json).
   */
  encode(record: LogRecord, whole = false, text: PayloadText = payloadText(record.type, record.tick, record.payload)): string {
    if (record.seq !== this.seq + 1 || record.episode !== this.episode) throw new InternalError(`compact log: record seq ${record.seq} of ${record.episode} does not follow seq ${this.seq} of ${this.episode}`);
    const shape: Shape = { type: record.type, v: record.v, from: record.from, to: record.to, causeBack: record.cause === null ? null : record.seq - record.cause, tickStep: record.tick - this.tick, keys: text.keys };
    const ref = this.find(shape);
    let shapeJson: string;
    if (ref === undefined) {
      this.register(shape);
      shapeJson = JSON.stringify([shape.type, shape.v, shape.from, shape.to, shape.causeBack, shape.tickStep, shape.keys]);
    } else {
      shapeJson = String(ref);
    }
    const hash = whole ? record.hash : record.hash.slice(0, SHORT_HASH);
    this.seq = record.seq;
    this.tick = record.tick;
    this.hash = record.hash;
    return `[${shapeJson},${text.values},"${hash}"${record.meta === undefined ? "" : `,${JSON.stringify(record.meta)}`}]`;
  }

  /**
   * The record a compact line holds, its whole hash recomputed from the previous one and checked
   * against the digits the line keeps, and the line checked to be exactly what was encoded. With
   * `check` false (reading payloads only: metrics), neither is checked and `hash` is "".
   */
  decode(line: string, check = true): LogRecord {
    let a: unknown;
    try {
      a = JSON.parse(line);
    } catch {
      throw new CompactRecordDamaged(`not valid JSON (expected the compact record with seq ${this.seq + 1} here)`, true);
    }
    if (!Array.isArray(a) || a.length < 3) throw new CompactRecordDamaged("not a compact record (expected [shape, ...values, hash])");
    const s: unknown = a[0];
    let shape: Shape;
    let defined = false;
    if (typeof s === "number") {
      const known = Number.isInteger(s) ? this.shapes[s] : undefined;
      if (known === undefined) throw new CompactRecordDamaged(`refers to shape ${s}, but ${this.shapes.length} ${this.shapes.length === 1 ? "is" : "are"} defined before it`);
      shape = known;
    } else {
      shape = shapeOf(s);
      defined = true;
    }
    const n = shape.keys === null ? 1 : shape.keys[0] === PARTS ? shape.keys.length - 1 : shape.keys.length;
    if (a.length !== n + 2 && a.length !== n + 3) throw new CompactRecordDamaged(`holds ${a.length - 2} values after its shape, and its shape has ${n}`);
    const meta = a.length === n + 3 ? (a[n + 2] as unknown) : undefined;
    if (meta !== undefined && !isPlainObject(meta)) throw new CompactRecordDamaged("its last element (meta) is not an object");
    const seq = this.seq + 1;
    const tick = this.tick + shape.tickStep;
    let payload: unknown;
    if (shape.keys === null) payload = a[1];
    else if (shape.keys[0] === PARTS) {
      const parts: Record<string, unknown> = {};
      for (let i = 1; i < shape.keys.length; i++) parts[shape.keys[i] as string] = a[i];
      payload = { parts, stateHash: commitStateHash(tick, parts as Record<string, string>) };
    } else {
      const p: Record<string, unknown> = {};
      for (let i = 0; i < shape.keys.length; i++) p[shape.keys[i] as string] = a[i + 1];
      payload = p;
    }
    const base = { v: shape.v, episode: this.episode, seq, tick, type: shape.type, from: shape.from, to: shape.to, payload, cause: shape.causeBack === null ? null : seq - shape.causeBack };
    if (!check) {
      if (defined) this.register(shape);
      this.seq = seq;
      this.tick = tick;
      return meta === undefined ? { ...base, hash: "" } : { ...base, hash: "", meta: meta as RecordMeta };
    }
    const hash = sha256Chain(this.hash, recordBody(base));
    const kept: unknown = a[n + 1];
    const whole = typeof kept === "string" && kept.length === hash.length;
    const want = whole ? hash : hash.slice(0, SHORT_HASH);
    if (kept !== want) {
      const what = typeof kept !== "string" ? "no hash" : kept.length !== SHORT_HASH && !whole ? `a hash of ${kept.length} digits, where a record keeps ${SHORT_HASH} or ${hash.length}` : `kept ${kept}, recomputed ${want}`;
      throw new CompactRecordDamaged(`hash mismatch: the record was altered, or the chain before it was (${what})`);
    }
    const record: LogRecord = meta === undefined ? { ...base, hash } : { ...base, hash, meta: meta as RecordMeta };
    this.lastWhole = whole;
    if (this.encode(record, whole) !== line) {
      throw new CompactRecordDamaged("the line is not the text its record was encoded as (its content and hash hold, but its JSON was rewritten: spacing, escapes, a shape written out again, or a value in another form)");
    }
    return record;
  }
}

function shapeOf(s: unknown): Shape {
  const bad = (why: string) => new CompactRecordDamaged(`its shape ${why} (expected [type, v, from, to, causeBack, tickStep, keys])`);
  if (!Array.isArray(s) || s.length !== 7) throw bad("is not a list of 7");
  const [type, v, from, to, causeBack, tickStep, keys] = s as unknown[];
  if (typeof type !== "string" || typeof from !== "string") throw bad("lacks a string type and sender");
  if (typeof v !== "number" || !Number.isInteger(v) || typeof tickStep !== "number" || !Number.isInteger(tickStep)) throw bad("has a version or tick step that is not an integer");
  if (causeBack !== null && (typeof causeBack !== "number" || !Number.isInteger(causeBack))) throw bad("has a cause that is neither null nor an integer");
  if (!(to === null || typeof to === "string" || (Array.isArray(to) && to.every((x) => typeof x === "string")))) throw bad("has a recipient that is no address");
  if (keys !== null) {
    if (!Array.isArray(keys) || keys.length === 0) throw bad("has keys that are neither null nor a list");
    const parts = keys[0] === PARTS;
    if (parts && type !== COMMIT) throw bad(`gives part digests to a ${type} record`);
    if (!keys.every((k, i) => typeof k === "string" || (parts && i === 0))) throw bad("has a key that is not a string");
  }
  return { type, v, from, to: to as Address, causeBack: causeBack as number | null, tickStep, keys: keys as Keys };
}

/** A header's meta for a compact log: the format's version first, then what version 1 would hold. */
export const compactHeaderMeta = (meta: RecordMeta): RecordMeta => ({ log: COMPACT_LOG, ...meta });

/**
 * Every record of a compact log's text (header first), decoded; with `check`, the header's hash,
 * the chain and each line's text checked as `verify` checks them (not the catalogue, nor replay).
 * Throws CompactRecordDamaged naming the line.
 */
export function decodeCompactText(text: string, check: boolean): LogRecord[] {
  const records: LogRecord[] = [];
  let codec: CompactCodec | null = null;
  let line = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    line++;
    const lineText = text.slice(start, end);
    try {
      if (codec === null) {
        let header: LogRecord;
        try {
          header = JSON.parse(lineText) as LogRecord;
        } catch {
          throw new CompactRecordDamaged("the header is not valid JSON", true);
        }
        if (!isCompactHeader(header)) throw new CompactRecordDamaged("the first line is not a compact log's header (an episode.started at seq 0 whose meta says log 2)");
        if (check && header.hash !== sha256Chain(GENESIS_HASH, recordBody(header))) throw new CompactRecordDamaged("hash mismatch: the header was altered");
        codec = new CompactCodec(header);
        records.push(header);
      } else {
        records.push(codec.decode(lineText, check));
      }
    } catch (error) {
      if (error instanceof CompactRecordDamaged && error.line === null) throw new CompactRecordDamaged(error.reason, error.unparsable, line);
      throw error;
    }
    start = end + 1;
  }
  if (check && codec !== null && !codec.lastWhole) throw new CompactRecordDamaged(CUT_SHORT, false, line);
  return records;
}

/** Why a compact log whose last line keeps 8 digits of its hash is refused. */
export const CUT_SHORT = `the log ends on a line that keeps ${SHORT_HASH} digits of its hash, and a compact log's last line keeps all 64: it was cut short after this line (or its last line was altered)`;

/** A compact line written with 8 digits of its hash, given all 64 instead (the log's last line). */
export function withWholeHash(line: string, hash: string): string {
  const short = `"${hash.slice(0, SHORT_HASH)}"]`;
  if (!line.endsWith(short)) throw new InternalError("compact log: the last line does not end with its short hash");
  return `${line.slice(0, -short.length)}"${hash}"]`;
}
