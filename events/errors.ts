// Typed errors for everything that can be wrong with a log. Each names the file and sequence so a
// user can find the damage; none of them is raised after modifying what is already logged. Each
// carries its exit code (events/taggedError.ts) as a getter, not a field: a field would be part of
// the error's structural equality and its JSON.
import { Schema } from "effect";
import { ExitCode } from "./taggedError.ts";

export class LogCorrupted extends Schema.TaggedError<LogCorrupted>()("LogCorrupted", {
  file: Schema.String,
  line: Schema.Number,
  seq: Schema.NullOr(Schema.Number),
  reason: Schema.String,
  /** The log's beginning is missing (its first segment lost or cut): no record came before this one. */
  startMissing: Schema.optional(Schema.Boolean),
}) {
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
  override get message(): string {
    const at = this.seq === null ? `line ${this.line}` : `seq ${this.seq} (line ${this.line})`;
    return `${this.file}: ${at}: ${this.reason}`;
  }
}

export class TornTail extends Schema.TaggedError<TornTail>()("TornTail", {
  file: Schema.String,
  line: Schema.Number,
  afterSeq: Schema.NullOr(Schema.Number),
  bytes: Schema.Number,
}) {
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
  override get message(): string {
    const last = this.afterSeq === null ? "no complete record" : `last good record seq ${this.afterSeq}`;
    return `${this.file}: line ${this.line}: torn final record (${this.bytes} bytes without a complete JSON line; ${last})`;
  }
}

/** `seq 12 (line 13)`, or `seq 12` where lines mean nothing (a record handed over in memory). */
const at = (seq: number, line: number | undefined): string => (line === undefined ? `seq ${seq}` : `seq ${seq} (line ${line})`);

export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()("UnknownEventType", {
  file: Schema.String,
  seq: Schema.Number,
  line: Schema.optional(Schema.Number),
  type: Schema.String,
}) {
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
  override get message(): string {
    return `${this.file}: ${at(this.seq, this.line)}: unknown event type '${this.type}' (not in the event catalogue, events/catalogue.ts)`;
  }
}

export class InvalidPayload extends Schema.TaggedError<InvalidPayload>()("InvalidPayload", {
  file: Schema.String,
  seq: Schema.Number,
  line: Schema.optional(Schema.Number),
  type: Schema.String,
  reason: Schema.String,
}) {
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
  override get message(): string {
    return `${this.file}: ${at(this.seq, this.line)}: payload of '${this.type}' does not match its schema: ${this.reason}`;
  }
}

export class SequenceConflict extends Schema.TaggedError<SequenceConflict>()("SequenceConflict", {
  episode: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number,
}) {
  get exitCode(): 2 {
    return ExitCode.usage;
  }
  override get message(): string {
    return `episode ${this.episode}: append expected the log to end at seq ${this.expected} but it ends at seq ${this.actual}; another writer (sequencer) appended to this episode`;
  }
}

/** A stored snapshot (or its pointer) that cannot be used as it is: unreadable, or not the state its key names. */
export class SnapshotDamaged extends Schema.TaggedError<SnapshotDamaged>()("SnapshotDamaged", {
  /** The file, or the KV entry / object, that holds it. */
  where: Schema.String,
  reason: Schema.String,
}) {
  get exitCode(): 3 {
    return ExitCode.damaged;
  }
  override get message(): string {
    return `${this.where}: ${this.reason}`;
  }
}

export type LogError = LogCorrupted | TornTail | UnknownEventType | InvalidPayload;

/** A log or a stored snapshot is damaged (exit 3): reading it again gives the same error, so retrying cannot help. */
export const isDamage = (error: unknown): error is LogError | SnapshotDamaged =>
  error instanceof LogCorrupted || error instanceof TornTail || error instanceof UnknownEventType || error instanceof InvalidPayload || error instanceof SnapshotDamaged;
