// The EventStore interface (DESIGN §7): append with an expected sequence, read a range, close.
// The embedded default is infra/fileEventStore.ts; the JetStream store implements the same contract.
import type { Draft, LogRecord, RecordMeta } from "../events/record.ts";

export type FsyncPolicy = "always" | "commit" | "never";

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

export interface EventStore {
  readonly episode: string;
  readonly location: string;
  head(): Head;
  /** Seals drafts into records (seq, hash chain) and persists them in order. */
  append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]>;
  /** Marks a consistent point (end of tick): durable according to the fsync policy. */
  commit(): Promise<void>;
  close(): Promise<void>;
}

export interface ReadOptions {
  /** Check payloads against the event catalogue (unknown types, malformed payloads). Default true. */
  readonly validate?: boolean;
}

/** Another sequencer holds the episode (a live writer lock): a second writer is rejected. */
export class WriterLocked extends Error {
  readonly episode: string;
  constructor(episode: string, holder: string, where: string) {
    super(`${where}: episode ${episode} already has a sequencer (${holder}); a second writer is rejected`);
    this.name = "WriterLocked";
    this.episode = episode;
  }
}
