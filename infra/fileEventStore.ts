// Embedded event store: append-only JSONL segment files carrying the record hash chain.
// - Appends are fenced twice: by expected seq in-process and by an exclusive lock file across
//   processes, so a second sequencer for the same episode is rejected; every write checks the lock
//   file still names this process (a lock taken over or removed fences the writer: StaleWriter).
// - Appends are sealed in memory and written at the tick's commit: one write of the tick's records,
//   then one fdatasync under `--fsync commit` (docs/architecture.md, "Durability").
// - Reading never modifies anything. Opening for append cuts a torn final record back to the last
//   good one, and keeps the cut bytes beside the segment (nothing is ever thrown away).
// - Any other damage (bad JSON mid-file, altered or reordered records, unknown types) is reported
//   with file, line and seq, and the store refuses to append after it.
import { closeSync, existsSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync, writeSync, ftruncateSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { InvalidPayload, LogCorrupted, SequenceConflict, TornTail, UnknownEventType } from "../events/errors.ts";
import { catalogueProblem, isKnownEventType } from "../events/catalogue.ts";
import { sha256Chain } from "../events/canonical.ts";
import { GENESIS_HASH, recordBody, sealedLine, type Draft, type LogRecord } from "../events/record.ts";
import { distinctPrefixes } from "../events/hashPrefixes.ts";
import { COMPACT_LOG, CompactCodec, CompactLogReadOnly, CompactRecordDamaged, CUT_SHORT, decodeCompactText, isCompactHeader, logFormatOf } from "../events/compactLog.ts";
import { liveHolder, lockedBy, takePidLock } from "./pidLock.ts";
import { sealDrafts } from "./sealing.ts";
import { EpisodeExists, StaleWriter, StorageFailed, WriterLocked, type AppendOptions, type EventStore, type FsyncPolicy, type Head, type ReadOptions } from "./eventStore.ts";

const SEGMENT_PATTERN = /^(\d{12})\.jsonl$/;
const LOCK = "writer.lock";

/** A segment's file name: its first record's seq, zero-padded so names sort in log order. */
export const segmentName = (firstSeq: number): string => `${String(firstSeq).padStart(12, "0")}.jsonl`;

/** The first segment's name; a store rolls to the next only past `SEGMENT_BYTES`, so most logs are this file alone. */
export const FIRST_SEGMENT = segmentName(0);

/** A segment's size before the store rolls to a new one. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;

export function segmentFiles(logDir: string): string[] {
  if (!existsSync(logDir)) return [];
  return readdirSync(logDir)
    .filter((name) => SEGMENT_PATTERN.test(name))
    .sort()
    .map((name) => join(logDir, name));
}

/**
 * `.jsonl` files in a log folder whose names are not segments' (`segmentName`): nothing reads them,
 * so a last segment renamed by hand made its log look interrupted, and verify said nothing of it.
 */
export function strayLogFiles(logDir: string): string[] {
  if (!existsSync(logDir)) return [];
  return readdirSync(logDir).filter((name) => name.endsWith(".jsonl") && !SEGMENT_PATTERN.test(name)).sort();
}

/** A log line as a record, or null when it is not JSON (the callers' full read reports why). */
export const recordOrNull = (line: string): LogRecord | null => {
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    return null;
  }
};

/**
 * A file log's first record and its last whole line's tick, read from the two ends of its segments
 * only (kilobytes, however long the log): a command checks its flags against them before it replays
 * a large log. A field is null when it cannot be read that way; the full read reports why.
 */
export interface LogEnds {
  readonly first: LogRecord | null;
  /** The last whole record (a `tick.committed` when the log ends on a finished tick), and its tick. */
  readonly last: LogRecord | null;
  readonly lastTick: number | null;
}

export function peekLog(logDir: string): LogEnds {
  const files = segmentFiles(logDir);
  if (files.length === 0) return { first: null, last: null, lastTick: null };
  const read = (file: string, from: number, length: number): string => {
    const fd = openSync(file, "r");
    try {
      const buffer = Buffer.alloc(length);
      return buffer.subarray(0, readSync(fd, buffer, 0, length, from)).toString("utf8");
    } finally {
      closeSync(fd);
    }
  };
    // A header holds every actor id (a 1,000-agent town's is about 36 KB); 4 MB bounds the look.
  const head = read(files[0]!, 0, Math.min(statSync(files[0]!).size, 4 * 2 ** 20));
  const first = head.includes("\n") ? recordOrNull(head.slice(0, head.indexOf("\n"))) : null;
  if (isCompactHeader(first) && files.length === 1) {
    // A compact log's last line decodes only after the lines before it: the whole file is read (written whole, it is small).
    try {
      const last = decodeCompactText(readFileSync(files[0]!, "utf8"), true).at(-1) ?? null;
      return { first, last, lastTick: last?.tick ?? null };
    } catch {
      return { first, last: null, lastTick: null };
    }
  }
  // The last segment is empty after a crash right after a roll (scanLog): the records end in the one before.
  const last = files.findLast((file) => statSync(file).size > 0) ?? files.at(-1)!;
  const size = statSync(last).size;
  const tail = read(last, Math.max(0, size - 2 ** 20), Math.min(size, 2 ** 20));
  const end = tail.lastIndexOf("\n");
  const start = end < 0 ? -1 : tail.lastIndexOf("\n", end - 1);
  const record = end < 0 || (start < 0 && size > tail.length) ? null : recordOrNull(tail.slice(start + 1, end));
  return { first, last: record, lastTick: typeof record?.tick === "number" ? record.tick : null };
}

function display(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith("..") ? file : rel;
}

/** The hash the first record of a log chains from: genesis, or the parent's record for a fork. */
function chainStart(first: LogRecord): string {
  if (first.type === "episode.forked") {
    const parentHash = (first.payload as { parentHash?: unknown }).parentHash;
    return typeof parentHash === "string" ? parentHash : GENESIS_HASH;
  }
  return GENESIS_HASH;
}

export interface ScanResult {
  readonly records: LogRecord[];
  /** Set when the last line of the last segment is incomplete (a crash mid-write). */
  readonly torn: TornTail | null;
  readonly tornOffset: number;
  readonly lastFile: string | null;
}

/**
 * Reads and checks a whole log. Throws LogCorrupted / UnknownEventType / InvalidPayload for damage
 * before the end; returns a torn tail separately so callers can decide (verify fails, append cuts).
 */
export function scanLog(logDir: string, options: ReadOptions & { readonly untilSeq?: number; readonly onDamage?: (intact: readonly LogRecord[]) => void } = {}): ScanResult {
  const records: LogRecord[] = [];
  try {
    const scan = scanRecords(logDir, options);
    for (let next = scan.next(); ; next = scan.next()) {
      if (next.done === true) return { records, ...next.value };
      records.push(next.value.record);
    }
  } catch (error) {
    // The records before the damage, every one checked (`inspect` shows their ticks, then the error).
    options.onDamage?.(records);
    throw error;
  }
}

/** A record as the scan checked it, and where its line starts (segment file and byte offset). */
export interface ScannedRecord {
  readonly record: LogRecord;
  readonly file: string;
  readonly offset: number;
}

/** How a scan ended: a torn tail (with its byte offset in `lastFile`), or none. */
export type ScanEnd = Omit<ScanResult, "records">;

/** What a segment holds, as every store writes it (`seal`): said when a file holds anything else. */
const AS_WRITTEN = "expected one record per line, LF-terminated, each line exactly as it was sealed";

/** Why a line that parses to a good record is not the line its store wrote (`sealedLine`). */
function rewritten(line: string): string {
  if (line.endsWith("\r")) return `the line ends with a carriage return (a CRLF line ending): ${AS_WRITTEN}; no store writes a CR, so the file was converted or edited (its records are intact: with LF line endings again it verifies)`;
  if (line.trim() !== line) return `whitespace before or after the record: ${AS_WRITTEN}; no store writes it, so the file was edited (the record itself is intact)`;
  return `the line is not the text its record was sealed as (its content and hash hold, but its JSON was rewritten after it was written: spacing, escapes, key order or its meta): ${AS_WRITTEN}`;
}

/** Bytes read from a segment at a time: a scan holds a chunk and the line it is in, never the whole log. */
const SCAN_CHUNK = 1024 * 1024;

/**
 * A segment's lines, read a chunk at a time: each line's text, its byte offset and end, and
 * whether a newline ends it (only the last line can lack one). Lines are decoded one by one from
 * the bytes: a single non-ASCII character (an emoji in the header) makes a whole-file string
 * two-byte, which halved the speed of reading and parsing a 25 MB log; ASCII lines decode to
 * one-byte strings. A newline byte never occurs inside a multi-byte UTF-8 sequence, so each line
 * decodes exactly as it would in the whole text.
 */
function* segmentLines(file: string): Generator<{ readonly line: string; readonly complete: boolean; readonly offset: number; readonly end: number }> {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(SCAN_CHUNK);
    let carry: Buffer | null = null;
    let position = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, SCAN_CHUNK, position);
      if (n === 0) break;
      const read = chunk.subarray(0, n);
      const data: Buffer = carry === null ? read : Buffer.concat([carry, read]);
      const base = position - (carry === null ? 0 : carry.length);
      position += n;
      let start = 0;
      for (let newline = data.indexOf(0x0a, start); newline !== -1; newline = data.indexOf(0x0a, start)) {
        yield { line: data.toString("utf8", start, newline), complete: true, offset: base + start, end: base + newline };
        start = newline + 1;
      }
      // The chunk buffer is read into again: a line it ends part-way through is copied.
      carry = start < data.length ? Buffer.from(data.subarray(start)) : null;
    }
    if (carry !== null) yield { line: carry.toString("utf8"), complete: false, offset: position - carry.length, end: position };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads and checks a log record by record, as it reads it (a chunk of a segment at a time):
 * yields each checked record with where its line starts, and returns how the log ends. Throws
 * as `scanLog` does, at the first damaged record; holds no record it has yielded.
 */
export function* scanRecords(logDir: string, options: ReadOptions & { readonly untilSeq?: number } = {}): Generator<ScannedRecord, ScanEnd, undefined> {
  const validate = options.validate ?? true;
  const files = segmentFiles(logDir);
  let previousHash: string | null = null;
  let expectedSeq: number | null = null;
  let episode: string | null = null;
  // Set by a compact log's header (format 2, events/compactLog.ts): its other lines decode through it.
  let codec: CompactCodec | null = null;
  const after = (): string => (expectedSeq === null ? "before the first record" : `after seq ${expectedSeq - 1}`);
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    const name = display(file);
    // A segment is named by its first record's seq (`segmentName`).
    const namedSeq = Number(basename(file).slice(0, 12));
    const isLastFile = f === files.length - 1;
    if (statSync(file).size === 0) {
      // A store rolls over by creating the next segment, named by the seq to come, then writing
      // into it: a crash in between (or `repair` cutting a torn first record) leaves the last
      // segment empty, and appending continues there. An empty segment anywhere else, or named
      // for another seq, was not left by a store.
      if (!isLastFile) throw new LogCorrupted({ file: name, line: 1, seq: null, reason: `an empty segment ${after()}, before ${display(files[f + 1]!)}: a store creates a segment only to write the next record into it, so only the last one can be empty (a crash right after it was created)` });
      if (expectedSeq !== null && namedSeq !== expectedSeq) throw new LogCorrupted({ file: name, line: 1, seq: null, reason: `an empty last segment named for seq ${namedSeq}, ${after()}: a store names a new segment by the seq it writes next, ${expectedSeq}` });
      continue;
    }
    let lineNo = 0;
    for (const { line, complete, offset, end: lineEnd } of segmentLines(file)) {
      lineNo++;
      if (line.trim() === "") throw new LogCorrupted({ file: name, line: lineNo, seq: null, reason: `a blank line ${after()}: ${AS_WRITTEN}; no store writes a blank line, so the file was edited (removing the line restores it)` });
      let parsed: LogRecord;
      if (codec !== null) {
        // A compact record: decoded, its chain hash recomputed and checked, and its text checked.
        try {
          parsed = codec.decode(line);
        } catch (error) {
          if (!(error instanceof CompactRecordDamaged)) throw error;
          if (error.unparsable && !complete && isLastFile) return { torn: new TornTail({ file: name, line: lineNo, afterSeq: expectedSeq === null ? null : expectedSeq - 1, bytes: lineEnd - offset }), tornOffset: offset, lastFile: file };
          throw new LogCorrupted({ file: name, line: lineNo, seq: expectedSeq, reason: error.reason });
        }
        if (validate) {
          if (!isKnownEventType(parsed.type)) throw new UnknownEventType({ file: name, seq: parsed.seq, line: lineNo, type: parsed.type });
          const problem = catalogueProblem(parsed.type, parsed.payload);
          if (problem !== null) throw new InvalidPayload({ file: name, seq: parsed.seq, line: lineNo, type: parsed.type, reason: problem });
        }
        yield { record: parsed, file, offset };
        previousHash = parsed.hash;
        expectedSeq = parsed.seq + 1;
        if (options.untilSeq !== undefined && parsed.seq >= options.untilSeq) return { torn: null, tornOffset: 0, lastFile: file };
        continue;
      }
      try {
        parsed = JSON.parse(line) as LogRecord;
      } catch {
        if (!complete && isLastFile) {
          const torn = new TornTail({ file: name, line: lineNo, afterSeq: expectedSeq === null ? null : expectedSeq - 1, bytes: lineEnd - offset });
          // A byte offset (for truncation).
          return { torn, tornOffset: offset, lastFile: file };
        }
        throw new LogCorrupted({ file: name, line: lineNo, seq: expectedSeq, reason: `not valid JSON (expected the record with seq ${expectedSeq ?? 0} here)` });
      }
      const seq = typeof parsed.seq === "number" ? parsed.seq : null;
      if (seq === null || typeof parsed.type !== "string" || typeof parsed.hash !== "string" || typeof parsed.episode !== "string") {
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: "not a log record (needs numeric seq and string type, episode and hash)" });
      }
      if (expectedSeq !== null && seq !== expectedSeq) {
        const why = seq < expectedSeq ? "records are reordered or duplicated" : "records are missing or reordered";
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `expected seq ${expectedSeq}, found ${seq}: ${why}` });
      }
      if (lineNo === 1 && seq !== namedSeq) {
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `the segment's name says its first record is seq ${namedSeq}, but it begins with seq ${seq}: segments are named by their first record's seq, so it was renamed, or its records were moved` });
      }
      if (episode !== null && parsed.episode !== episode) {
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `record belongs to episode '${parsed.episode}', log is '${episode}'` });
      }
      if (previousHash === null) {
        // A log starts at seq 0, or (a fork's) with the episode.forked record that chains it to its parent.
        if (seq !== 0 && parsed.type !== "episode.forked") {
          throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `the log begins at seq ${seq} with '${parsed.type}', not at seq 0 or with a fork's header: its first segment is missing or was cut, so nothing in it can be checked`, startMissing: true });
        }
        previousHash = chainStart(parsed);
      }
      const body = recordBody(parsed);
      const want = sha256Chain(previousHash, body);
      if (want !== parsed.hash) {
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `hash mismatch: the record was altered, or the chain before it was (recomputed ${distinctPrefixes(want, parsed.hash).join(", stored ")})` });
      }
      if (validate) {
        if (!isKnownEventType(parsed.type)) throw new UnknownEventType({ file: name, seq, line: lineNo, type: parsed.type });
        const problem = catalogueProblem(parsed.type, parsed.payload);
        if (problem !== null) throw new InvalidPayload({ file: name, seq, line: lineNo, type: parsed.type, reason: problem });
      }
      // The hash covers the record's content, not its text: a line respaced, re-escaped or given a
      // CRLF ending parses to the same record. The bytes are checked too, so a log edited by hand
      // is not reported as written.
      if (line !== sealedLine(parsed, body)) throw new LogCorrupted({ file: name, line: lineNo, seq, reason: rewritten(line) });
      if (!complete && !isLastFile) {
        throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `the segment ends without a newline after this record, and ${display(files[f + 1]!)} follows: ${AS_WRITTEN}` });
      }
      const format = lineNo === 1 && f === 0 ? logFormatOf(parsed) : 1;
      if (format !== 1) {
        if (!isCompactHeader(parsed)) throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `its meta says log format ${JSON.stringify(format)}: this build reads format 1 and (an episode.started header at seq 0) format ${COMPACT_LOG}` });
        if (files.length > 1) throw new LogCorrupted({ file: name, line: lineNo, seq, reason: `a compact log (format ${COMPACT_LOG}) is one segment, and ${display(files[1]!)} follows` });
        codec = new CompactCodec(parsed);
      }
      yield { record: parsed, file, offset };
      previousHash = parsed.hash;
      expectedSeq = seq + 1;
      episode = parsed.episode;
      // Read as far as a caller needs (a fork's link to its parent): damage after it is not its concern.
      if (options.untilSeq !== undefined && seq >= options.untilSeq) return { torn: null, tornOffset: 0, lastFile: file };
    }
  }
  // A compact log's last line keeps its whole hash: one that keeps 8 digits was cut after it.
  if (codec !== null && !codec.lastWhole && expectedSeq !== null) throw new LogCorrupted({ file: display(files[0]!), line: expectedSeq, seq: expectedSeq - 1, reason: CUT_SHORT });
  return { torn: null, tornOffset: 0, lastFile: files.at(-1) ?? null };
}

/** The pid of the live process writing this log (its writer lock's), or null: none, or a stale lock. */
export const logWriter = (logDir: string): number | null => liveHolder(join(logDir, LOCK));

/**
 * Reads a log for replay/inspection: any damage, including a torn tail, is an error; except that a
 * log its run is still writing (its lock names a live process) is read between two of its writes:
 * its last line is not torn, only not written whole yet (`inspect` of a running town failed, exit 3).
 */
export function readLog(logDir: string, options: ReadOptions = {}): LogRecord[] {
  const scan = scanLog(logDir, options);
  if (scan.torn !== null && logWriter(logDir) === null) throw scan.torn;
  return scan.records;
}

export interface FileStoreOptions {
  readonly episode: string;
  readonly fsync?: FsyncPolicy;
  readonly segmentBytes?: number;
  /** Called when opening for append had to cut a torn tail (with where the cut bytes were kept). */
  readonly onRecovered?: (torn: TornTail, keptAt: string) => void;
}

class FileEventStore implements EventStore {
  private fd: number;
  private segmentSize: number;
  /** The chain's head as sealed (what `head()` gives), pending records included. */
  private lastSeq: number;
  private lastHash: string;
  /** The last record written to the file: the head before the pending records. */
  private writtenSeq: number;
  private writtenHash: string;
  /**
   * Lines sealed since the last write, one chunk per append: a tick's rounds go to the file in one
   * write at its commit. The segment roll is still decided chunk by chunk, as when each append was
   * written at once, so segments split where they did.
   */
  private pending: PendingChunk[] = [];
  private closed = false;
  /** Set once a write found the lock another's: nothing more is written. */
  private fenced = false;
  /** Written since the last sync. */
  private dirty = false;
  /** A segment file was created since the last sync: the directory entry is synced once too. */
  private created: boolean;
  /** Bytes appended since the store was opened. */
  private appended = 0;
  readonly episode: string;
  readonly location: string;
  private segmentPath: string;
  private readonly fsync: FsyncPolicy;
  private readonly segmentBytes: number;

  constructor(episode: string, location: string, segmentPath: string, head: Head, fsync: FsyncPolicy, segmentBytes: number, created: boolean) {
    this.episode = episode;
    this.location = location;
    this.segmentPath = segmentPath;
    this.fsync = fsync;
    this.segmentBytes = segmentBytes;
    this.created = created;
    this.fd = openSync(segmentPath, "a");
    this.segmentSize = statSync(segmentPath).size;
    this.lastSeq = head.seq;
    this.lastHash = head.hash;
    this.writtenSeq = head.seq;
    this.writtenHash = head.hash;
  }

  head(): Head {
    return { seq: this.lastSeq, hash: this.lastHash };
  }

  bytesAppended(): number {
    return this.appended;
  }

  async append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]> {
    if (this.closed) throw new Error(`event store for ${this.episode} is closed`);
    if (this.fenced) this.refuseFenced();
    if (options.expectedSeq !== this.lastSeq) {
      throw new SequenceConflict({ episode: this.episode, expected: options.expectedSeq, actual: this.lastSeq });
    }
    let text = "";
    const { sealed, hash } = sealDrafts(this.episode, this.lastSeq, this.lastHash, drafts, options, (line) => (text += line));
    this.lastSeq += drafts.length;
    this.lastHash = hash;
    if (text.length > 0) this.pending.push({ text, lastSeq: this.lastSeq, lastHash: hash });
    if (this.fsync === "always") {
      this.writePending();
      if (this.dirty) this.sync();
    }
    return sealed;
  }

  /**
   * Writes the pending records: one write (two when the segment rolls in between), after checking
   * the lock still names this process. A failed or short write is cut back, so the file ends on its
   * last written record, and the pending records are dropped (the head goes back to that record).
   */
  private writePending(): void {
    if (this.pending.length === 0) return;
    this.checkLock();
    const chunks = this.pending;
    let from = 0;
    let size = this.segmentSize;
    for (let i = 0; i < chunks.length; i++) {
      const length = chunks[i]!.text.length;
      if (size > 0 && size + length > this.segmentBytes) {
        // The chunks before this one go to the current segment; this one starts the next.
        if (i > from) this.writeChunks(chunks.slice(from, i));
        this.rollSegment(this.writtenSeq + 1);
        size = 0;
        from = i;
      }
      // Bytes, as the segment's size counts (the test above compares characters, as it always has).
      size += i === chunks.length - 1 ? length : Buffer.byteLength(chunks[i]!.text, "utf8");
    }
    this.writeChunks(from === 0 ? chunks : chunks.slice(from));
    this.pending = [];
  }

  /** One write of consecutive pending chunks (a string: no intermediate Buffer). */
  private writeChunks(chunks: readonly PendingChunk[]): void {
    const text = chunks.length === 1 ? chunks[0]!.text : chunks.map((c) => c.text).join("");
    const first = this.writtenSeq + 1;
    const { lastSeq: last, lastHash } = chunks.at(-1)!;
    const expected = Buffer.byteLength(text, "utf8");
    let written = 0;
    let failure: string | null = null;
    try {
      written = writeSync(this.fd, text);
      if (written !== expected) failure = `short write (${written} of ${expected} bytes)`;
    } catch (error) {
      failure = (error as Error).message;
    }
    if (failure !== null) {
      // A full disk writes part of the batch: cut it back, so the log ends on its last good
      // record rather than a torn one, and nothing of the batch counts as appended.
      let kept = true;
      try {
        ftruncateSync(this.fd, this.segmentSize);
      } catch {
        kept = false;
      }
      this.dropPending();
      throw new StorageFailed(display(this.segmentPath), `${failure} appending seq ${first}–${last}`, this.writtenSeq, kept);
    }
    this.segmentSize += written;
    this.appended += written;
    this.dirty = true;
    this.writtenSeq = last;
    this.writtenHash = lastHash;
  }

  /** Forgets the records not written: the head is the last written record again. */
  private dropPending(): void {
    this.pending = [];
    this.lastSeq = this.writtenSeq;
    this.lastHash = this.writtenHash;
  }

  /**
   * The lock file must still name this process before anything is written. A pid lock does not
   * expire: a paused writer keeps it while it lives. But a writer on another host (a shared
   * filesystem) sees this pid as dead and takes the lock over, and a lock file removed by hand lets
   * anyone in: after either, this writer writing would interleave two chains, so it is fenced
   * (docs/distributed.md, "Fencing"), and the records it had not written are dropped.
   */
  private checkLock(): void {
    if (lockedBy(join(this.location, LOCK)) === process.pid) return;
    this.fenced = true;
    this.dropPending();
    this.refuseFenced();
  }

  private refuseFenced(): never {
    const holder = lockedBy(join(this.location, LOCK));
    const detail = holder === null ? `this writer is fenced: its lock file ${LOCK} was removed` : `this writer is fenced: its lock file ${LOCK} now names process ${holder}`;
    throw new StaleWriter({ episode: this.episode, expected: this.lastSeq, actual: this.lastSeq }, detail, "lock-taken-over");
  }

  private rollSegment(firstSeq: number): void {
    this.sync();
    closeSync(this.fd);
    this.segmentPath = join(this.location, segmentName(firstSeq));
    this.fd = openSync(this.segmentPath, "a");
    this.segmentSize = 0;
    this.created = true;
  }

  /**
   * Makes what was written durable: fdatasync of the segment (its data and its size, not its
   * times), and of the log's folder once after a segment file was created in it (its new entry).
   */
  private sync(): void {
    try {
      fdatasyncSync(this.fd);
      if (this.created) {
        const dir = openSync(this.location, "r");
        try {
          fsyncSync(dir);
        } finally {
          closeSync(dir);
        }
      }
    } catch (error) {
      throw new StorageFailed(display(this.segmentPath), `could not make the log durable (${(error as Error).message})`, this.writtenSeq, false);
    }
    this.dirty = false;
    this.created = false;
  }

  async commit(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    if (this.fsync === "commit" && this.dirty) this.sync();
  }

  async flush(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    if (this.fsync !== "never" && this.dirty) this.sync();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      // What a tick had appended before it stopped (an error, a Ctrl-C) is written as it was.
      if (!this.fenced) this.writePending();
      if (this.fsync !== "never" && this.dirty) this.sync();
    } finally {
      closeSync(this.fd);
      // Only our own: a lock another writer took over is its.
      if (lockedBy(join(this.location, LOCK)) === process.pid) rmSync(join(this.location, LOCK), { force: true });
      this.closed = true;
    }
  }
}

/** One append's sealed lines, and the chain's head after them. */
interface PendingChunk {
  readonly text: string;
  readonly lastSeq: number;
  readonly lastHash: string;
}

function acquireLock(logDir: string, episode: string): void {
  const lock = takePidLock(join(logDir, LOCK));
  if ("heldBy" in lock) throw new WriterLocked(episode, `process ${lock.heldBy} holds ${LOCK}`, display(logDir));
}

/** Creates a new, empty log. Refuses to overwrite an existing one. */
export interface CreateOptions extends FileStoreOptions {
  /** Seq of the first record (a fork starts at its parent's seq). */
  readonly firstSeq?: number;
  /** Hash the first record chains from (a fork: the parent's record at firstSeq). */
  readonly previousHash?: string;
}

export function createFileEventStore(logDir: string, options: CreateOptions): EventStore {
  if (segmentFiles(logDir).length > 0) {
    throw new Error(`${display(logDir)} already holds a log; choose another --log directory or remove it`);
  }
  mkdirSync(logDir, { recursive: true });
  acquireLock(logDir, options.episode);
  const firstSeq = options.firstSeq ?? 0;
  const segment = join(logDir, segmentName(firstSeq));
  writeFileSync(segment, "");
  return new FileEventStore(options.episode, logDir, segment, { seq: firstSeq - 1, hash: options.previousHash ?? GENESIS_HASH }, options.fsync ?? "commit", options.segmentBytes ?? SEGMENT_BYTES, true);
}

/**
 * Opens an existing log to continue it. A torn final record is cut back to the last good record
 * (the cut bytes are kept in `<segment>.torn-<offset>`); any other damage is an error.
 */
export function openFileEventStoreForAppend(logDir: string, options: FileStoreOptions): { store: EventStore; records: LogRecord[] } {
  acquireLock(logDir, options.episode);
  try {
    const scan = scanLog(logDir);
    if (isCompactHeader(scan.records[0])) throw new CompactLogReadOnly(`${display(logDir)} holds a compact log (format ${COMPACT_LOG}, written whole by \`sweep envprobe\`), which is not appended to: fork it into another --log to run more of it`);
    if (scan.torn !== null && scan.lastFile !== null) {
      // A resumed run killed again mid-way through the same record tears the log at the same
      // offset: the bytes cut the first time are kept beside these, not overwritten.
      const base = `${scan.lastFile}.torn-${scan.tornOffset}`;
      let kept = base;
      for (let n = 2; existsSync(kept); n++) kept = `${base}-${n}`;
      const text = readFileSync(scan.lastFile);
      writeFileSync(kept, text.subarray(scan.tornOffset));
      const fd = openSync(scan.lastFile, "r+");
      ftruncateSync(fd, scan.tornOffset);
      fsyncSync(fd);
      closeSync(fd);
      options.onRecovered?.(scan.torn, kept);
    }
    const last = scan.records.at(-1);
    const files = segmentFiles(logDir);
    const segment = files.at(-1);
    // A run stopped before its first record was whole (killed, or a full disk) leaves an empty
    // first segment: the episode starts there from the beginning.
    if (last === undefined && files.length === 1 && segment === join(logDir, FIRST_SEGMENT) && statSync(segment).size === 0) {
      return { store: new FileEventStore(options.episode, logDir, segment, { seq: -1, hash: GENESIS_HASH }, options.fsync ?? "commit", options.segmentBytes ?? SEGMENT_BYTES, true), records: [] };
    }
    if (last === undefined || segment === undefined) throw new Error(`${display(logDir)} holds no records to continue`);
    if (last.episode !== options.episode) {
      // A fork is not resumed (its id is its parent's, tick and condition): say so rather than how to resume it.
      const fork = scan.records[0]?.type === "episode.forked";
      const what = fork ? `the fork ${last.episode}, not ${options.episode} (a fork is not resumed: fork its parent again into another --log for more of it); choose another --log` : `episode ${last.episode}, not ${options.episode}: resume it with that episode's world, seed and condition, or choose another --log`;
      throw new EpisodeExists(last.episode, `${display(logDir)} holds the log of ${what}`);
    }
    // A last record that is complete and valid but lacks its newline gets one before anything is
    // appended after it (scanLog accepted it, so the file ends exactly with that record).
    const content = readFileSync(segment, "utf8");
    if (content.length > 0 && !content.endsWith("\n")) {
      const lastLine = content.slice(content.lastIndexOf("\n") + 1);
      if ((JSON.parse(lastLine) as LogRecord).hash !== last.hash) throw new Error(`${display(segment)}: refusing to append: the file does not end with the last good record`);
      writeFileSync(segment, "\n", { flag: "a" });
    }
    const store = new FileEventStore(options.episode, logDir, segment, { seq: last.seq, hash: last.hash }, options.fsync ?? "commit", options.segmentBytes ?? SEGMENT_BYTES, false);
    return { store, records: scan.records };
  } catch (error) {
    rmSync(join(logDir, LOCK), { force: true });
    throw error;
  }
}
