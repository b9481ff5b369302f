// Checking records as they are read from a subject: the same checks as scanLog in the file store
// (JSON, seq, episode, hash chain, catalogue) for every line of every message, naming the stream,
// subject, stream seq and record seq of any damage. A message is taken whole or not at all.
import { InvalidPayload, LogCorrupted, UnknownEventType } from "../../events/errors.ts";
import { catalogueProblem, isKnownEventType } from "../../events/catalogue.ts";
import { sha256Chain } from "../../events/canonical.ts";
import { expectedHash, GENESIS_HASH, type LogRecord } from "../../events/record.ts";
import { distinctPrefixes } from "../../events/hashPrefixes.ts";

/** The hash the first record of a log chains from: genesis (or `fallback`), or a fork header's parent hash. */
function chainStart(first: LogRecord, fallback: string): string {
  if (first.type === "episode.forked") {
    const parentHash = (first.payload as { parentHash?: unknown }).parentHash;
    return typeof parentHash === "string" ? parentHash : fallback;
  }
  return fallback;
}

const HASH_KEY = ',"hash":"';

/**
 * Checks a record's hash against the text it was read from. Sealing writes the hashed body, then
 * `"hash"`, then `"meta"`; the body is the text up to the hash, so it is hashed without
 * re-serialising. The rest must be exactly hash and meta (nothing may override a body field);
 * anything else falls back to re-serialising the parsed record, as the file store does.
 */
function chainedHash(previousHash: string, text: string, record: LogRecord): string {
  // The last `,"hash":"` outside a string is the record's own unless meta has a "hash" key; then
  // the check below fails and the slow path decides.
  const at = text.lastIndexOf(HASH_KEY);
  const hashEnd = at + HASH_KEY.length + record.hash.length;
  if (at > 0 && text.startsWith(record.hash, at + HASH_KEY.length) && text.charCodeAt(hashEnd) === 34 /* " */) {
    const restOk = record.meta === undefined ? text.length === hashEnd + 2 && text.charCodeAt(hashEnd + 1) === 125 /* } */ : text.slice(hashEnd + 1) === `,"meta":${JSON.stringify(record.meta)}}`;
    if (restOk && sha256Chain(previousHash, text.slice(0, at) + "}") === record.hash) return record.hash;
  }
  return expectedHash(previousHash, record);
}

export class ChainReader {
  readonly records: LogRecord[] = [];
  /** Stream seq of the last accepted message (0 when none). */
  lastStreamSeq = 0;
  private previousHash: string | null = null;
  private expectedSeq: number | null = null;
  private episode: string | null = null;
  private index = 0;
  private readonly where: string;
  private readonly validate: boolean;
  private readonly fallbackStart: string;

  constructor(where: string, validate: boolean, fallbackStart: string = GENESIS_HASH) {
    this.where = where;
    this.validate = validate;
    this.fallbackStart = fallbackStart;
  }

  private at(streamSeq: number): string {
    return `${this.where} (stream seq ${streamSeq})`;
  }

  /**
   * Checks the next message on the subject, a batch of record lines joined by "\n", and returns
   * its records. Throws a LogError naming stream seq and record seq; a message is taken whole or
   * not at all (after a throw the reader is as it was before the message).
   */
  acceptMessage(text: string, streamSeq: number): LogRecord[] {
    const out: LogRecord[] = [];
    const saved = { previousHash: this.previousHash, expectedSeq: this.expectedSeq, episode: this.episode, index: this.index };
    try {
      let start = 0;
      for (;;) {
        const end = text.indexOf("\n", start);
        out.push(this.check(end === -1 ? (start === 0 ? text : text.slice(start)) : text.slice(start, end), streamSeq));
        if (end === -1) break;
        start = end + 1;
      }
    } catch (error) {
      this.previousHash = saved.previousHash;
      this.expectedSeq = saved.expectedSeq;
      this.episode = saved.episode;
      this.index = saved.index;
      throw error;
    }
    for (const record of out) this.records.push(record);
    this.lastStreamSeq = streamSeq;
    return out;
  }

  /** Checks one record line (and advances the chain); throws a LogError naming stream seq and record seq. */
  private check(text: string, streamSeq: number): LogRecord {
    const line = ++this.index;
    let parsed: LogRecord;
    try {
      parsed = JSON.parse(text) as LogRecord;
    } catch {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq: this.expectedSeq, reason: `not valid JSON (expected the record with seq ${this.expectedSeq ?? 0} here)` });
    }
    const seq = typeof parsed === "object" && parsed !== null && typeof parsed.seq === "number" ? parsed.seq : null;
    if (seq === null || typeof parsed.type !== "string" || typeof parsed.hash !== "string" || typeof parsed.episode !== "string") {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: "not a log record (needs numeric seq and string type, episode and hash)" });
    }
    if (this.expectedSeq !== null && seq !== this.expectedSeq) {
      const why = seq < this.expectedSeq ? "records are reordered or duplicated" : "records are missing or reordered";
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `expected seq ${this.expectedSeq}, found ${seq}: ${why}`, completeRecord: true });
    }
    if (this.episode !== null && parsed.episode !== this.episode) {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `record belongs to episode '${parsed.episode}', log is '${this.episode}'`, completeRecord: true });
    }
    const previousHash = this.previousHash ?? chainStart(parsed, this.fallbackStart);
    const want = chainedHash(previousHash, text, parsed);
    if (want !== parsed.hash) {
      throw new LogCorrupted({ file: this.at(streamSeq), line, seq, reason: `hash mismatch: the record was altered, or the chain before it was (recomputed ${distinctPrefixes(want, parsed.hash).join(", stored ")})`, completeRecord: true });
    }
    if (this.validate) {
      if (!isKnownEventType(parsed.type)) throw new UnknownEventType({ file: this.at(streamSeq), seq, line, type: parsed.type });
      const problem = catalogueProblem(parsed.type, parsed.payload);
      if (problem !== null) throw new InvalidPayload({ file: this.at(streamSeq), seq, line, type: parsed.type, reason: problem });
    }
    this.previousHash = parsed.hash;
    this.expectedSeq = seq + 1;
    this.episode = parsed.episode;
    return parsed;
  }
}
