// Typed errors for everything that can be wrong with a log. Each names the file and sequence so a
// user can find the damage; none of them is raised after modifying what is already logged. Each
// carries its exit code (events/taggedError.ts) as a getter, not a field: the fields are what the
// error says about the damage, and the exit code follows from its kind.
import { ExitCode, TaggedError } from "./taggedError.ts";

export class LogCorrupted extends TaggedError {
  readonly _tag = "LogCorrupted";
  readonly file: string;
  readonly line: number;
  readonly seq: number | null;
  readonly reason: string;
  /** The log's beginning is missing (its first segment lost or cut): no record came before this one. */
  readonly startMissing?: boolean;
  /**
   * The damage is a whole, well-formed record that does not continue the log (another episode's,
   * out of seq, or off the hash chain), not bytes a write left unfinished: no crash of this log's
   * writer makes one, so no store cuts it on resume (docs/distributed.md, "Fencing").
   */
  readonly completeRecord?: boolean;
  constructor(fields: { readonly file: string; readonly line: number; readonly seq: number | null; readonly reason: string; readonly startMissing?: boolean; readonly completeRecord?: boolean }) {
    super(`${fields.file}: ${fields.seq === null ? `line ${fields.line}` : `seq ${fields.seq} (line ${fields.line})`}: ${fields.reason}`);
    this.file = fields.file;
    this.line = fields.line;
    this.seq = fields.seq;
    this.reason = fields.reason;
    if (fields.startMissing !== undefined) this.startMissing = fields.startMissing;
    if (fields.completeRecord !== undefined) this.completeRecord = fields.completeRecord;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

export class TornTail extends TaggedError {
  readonly _tag = "TornTail";
  readonly file: string;
  readonly line: number;
  readonly afterSeq: number | null;
  readonly bytes: number;
  constructor(fields: { readonly file: string; readonly line: number; readonly afterSeq: number | null; readonly bytes: number }) {
    const last = fields.afterSeq === null ? "no complete record" : `last good record seq ${fields.afterSeq}`;
    super(`${fields.file}: line ${fields.line}: torn final record (${fields.bytes} bytes without a complete JSON line; ${last})`);
    this.file = fields.file;
    this.line = fields.line;
    this.afterSeq = fields.afterSeq;
    this.bytes = fields.bytes;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

/** `seq 12 (line 13)`, or `seq 12` where lines mean nothing (a record handed over in memory). */
const at = (seq: number, line: number | undefined): string => (line === undefined ? `seq ${seq}` : `seq ${seq} (line ${line})`);

export class UnknownEventType extends TaggedError {
  readonly _tag = "UnknownEventType";
  readonly file: string;
  readonly seq: number;
  readonly line?: number;
  readonly type: string;
  constructor(fields: { readonly file: string; readonly seq: number; readonly line?: number; readonly type: string }) {
    super(`${fields.file}: ${at(fields.seq, fields.line)}: unknown event type '${fields.type}' (not in the event catalogue, events/catalogue.ts)`);
    this.file = fields.file;
    this.seq = fields.seq;
    if (fields.line !== undefined) this.line = fields.line;
    this.type = fields.type;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

export class InvalidPayload extends TaggedError {
  readonly _tag = "InvalidPayload";
  readonly file: string;
  readonly seq: number;
  readonly line?: number;
  readonly type: string;
  readonly reason: string;
  constructor(fields: { readonly file: string; readonly seq: number; readonly line?: number; readonly type: string; readonly reason: string }) {
    super(`${fields.file}: ${at(fields.seq, fields.line)}: payload of '${fields.type}' does not match its schema: ${fields.reason}`);
    this.file = fields.file;
    this.seq = fields.seq;
    if (fields.line !== undefined) this.line = fields.line;
    this.type = fields.type;
    this.reason = fields.reason;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

export class SequenceConflict extends TaggedError {
  readonly _tag = "SequenceConflict";
  readonly episode: string;
  readonly expected: number;
  readonly actual: number;
  constructor(fields: { readonly episode: string; readonly expected: number; readonly actual: number }) {
    super(`episode ${fields.episode}: append expected the log to end at seq ${fields.expected} but it ends at seq ${fields.actual}; another writer (sequencer) appended to this episode`);
    this.episode = fields.episode;
    this.expected = fields.expected;
    this.actual = fields.actual;
  }
  get exitCode(): 2 {
    return ExitCode.usage;
  }
}

/** A stored snapshot (or its pointer) that cannot be used as it is: unreadable, or not the state its key names. */
export class SnapshotDamaged extends TaggedError {
  readonly _tag = "SnapshotDamaged";
  /** The file, or the KV entry / object, that holds it. */
  readonly where: string;
  readonly reason: string;
  constructor(fields: { readonly where: string; readonly reason: string }) {
    super(`${fields.where}: ${fields.reason}`);
    this.where = fields.where;
    this.reason = fields.reason;
  }
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
}

export type LogError = LogCorrupted | TornTail | UnknownEventType | InvalidPayload;

/** A log or a stored snapshot is damaged (exit 3): reading it again gives the same error, so retrying cannot help. */
export const isDamage = (error: unknown): error is LogError | SnapshotDamaged =>
  error instanceof LogCorrupted || error instanceof TornTail || error instanceof UnknownEventType || error instanceof InvalidPayload || error instanceof SnapshotDamaged;
