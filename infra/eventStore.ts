// The EventStore interface (DESIGN §7): append with an expected sequence, read a range, close.
// The embedded default is infra/fileEventStore.ts; the JetStream store implements the same contract.
import type { Draft, LogRecord, RecordMeta } from "../events/record.ts";
import { ExitCode, TaggedError } from "../events/taggedError.ts";
import { SequenceConflict } from "../events/errors.ts";

/**
 * When appended records become durable: at every append ("always"), at every tick commit
 * ("commit", the default), only at snapshots and at the end ("snapshot": a crash loses at most the
 * ticks since the last snapshot, which resume re-runs to the same records), or never forced
 * ("never"). For the file store durable means written and fdatasynced (a tick's records are
 * written together at its commit under every policy but "always"; docs/architecture.md,
 * "Durability"); for JetStream, published and acknowledged.
 */
export type FsyncPolicy = "always" | "commit" | "snapshot" | "never";

export interface Head {
  /** Seq of the last record, or firstSeq - 1 when empty. */
  readonly seq: number;
  readonly hash: string;
}

export interface AppendOptions {
  /** The seq the caller believes is last; a mismatch means another writer got in (fencing). */
  readonly expectedSeq: number;
  readonly meta?: (draft: Draft, index: number) => RecordMeta | undefined;
}

/**
 * The log's storage refused a write or a sync (disk full, over quota, file too large, read-only,
 * I/O error). Names the file and what was kept: the store cuts a partial write back, so the log
 * still ends on its last good record (`lastSeq`) and a resume continues from there.
 */
export class StorageFailed extends TaggedError {
  readonly _tag = "StorageFailed";
  /** A full or failing disk is the machine's trouble, not the program's; what was logged is kept. */
  readonly exitCode = ExitCode.usage;
  readonly where: string;
  readonly lastSeq: number;
  constructor(where: string, reason: string, lastSeq: number, kept: boolean, fix = "free space (or fix the disk)") {
    super(
      `${where}: ${reason}; ${lastSeq < 0 && kept ? "nothing of the episode was logged" : kept ? `the log still ends on its last good record (seq ${lastSeq})` : `the log may end in a torn record after seq ${lastSeq} (\`probetown repair\` cuts it)`}: ${fix}, then the same command continues it (\`run\` with --resume)`,
    );
    this.where = where;
    this.lastSeq = lastSeq;
  }
}

/** Errno codes of a disk that cannot take more (as opposed to a path that is wrong). */
export const STORAGE_ERRNOS: readonly string[] = ["ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EIO"];

export const isStorageError = (error: unknown): boolean =>
  error instanceof StorageFailed || (error instanceof Error && (STORAGE_ERRNOS.includes((error as NodeJS.ErrnoException).code ?? "") || (error.cause !== undefined && isStorageError(error.cause))));

export interface EventStore {
  readonly episode: string;
  readonly location: string;
  head(): Head;
  /** Seals drafts into records (seq, hash chain) and persists them in order. */
  append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]>;
  /** Marks a consistent point (end of tick): durable according to the fsync policy. */
  commit(): Promise<void>;
  /**
   * Makes everything appended so far durable now, whatever the policy (short of "never" for
   * files). Called before a snapshot is stored: a snapshot must never be ahead of the durable log.
   */
  flush(): Promise<void>;
  close(): Promise<void>;
  /**
   * Bytes of records this store has appended since it was opened: how much the log grew, which
   * the run's snapshot policy reads (services/kernel/snapshotPolicy.ts). Absent: it is not known.
   */
  bytesAppended?(): number;
}

export interface ReadOptions {
  /** Check payloads against the event catalogue (unknown types, malformed payloads). Default true. */
  readonly validate?: boolean;
}

/** A new episode's log was asked for where that episode already has one (run it under another id, or resume). */
export class EpisodeExists extends TaggedError {
  readonly _tag = "EpisodeExists";
  readonly exitCode = ExitCode.usage;
  readonly episode: string;
  constructor(episode: string, detail: string) {
    super(detail);
    this.episode = episode;
  }
}

/** Another sequencer holds the episode (a live writer lock): a second writer is rejected. */
export class WriterLocked extends TaggedError {
  readonly _tag = "WriterLocked";
  readonly exitCode = ExitCode.usage;
  readonly episode: string;
  constructor(episode: string, holder: string, where: string) {
    super(`${where}: episode ${episode} already has a sequencer (${holder}); a second writer is rejected`);
    this.episode = episode;
  }
}

/**
 * Why a writer was fenced without the server rejecting a publish: its lock expired while it was
 * paused (its event loop stopped past the lock's ttl: SIGSTOP, a debugger, a VM frozen), or the
 * lock now names another writer.
 */
export type WriterFence = "paused-past-ttl" | "lock-taken-over";

/**
 * Raised when this writer may no longer hold its episode's writer lock, or the server rejected
 * its view of the log: an append or commit after it is refused (a SequenceConflict, exit 2).
 */
export class StaleWriter extends SequenceConflict {
  readonly detail: string;
  /** Set when the writer fenced itself (docs/distributed.md, "Fencing"); unset: the server's fence. */
  readonly fence?: WriterFence;
  constructor(fields: { readonly episode: string; readonly expected: number; readonly actual: number }, detail: string, fence?: WriterFence) {
    super(fields);
    this.detail = detail;
    if (fence !== undefined) this.fence = fence;
    this.message = `episode ${fields.episode}: ${detail}; another writer (sequencer) appended to this episode, or took it over`;
  }
}
