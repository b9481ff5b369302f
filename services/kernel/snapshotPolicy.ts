// Which ticks of a run keep a snapshot. Snapshots are no part of the hash-chained log (they are a
// cache resume and fork start from), so the choice may use the run's wall clock and the log's size:
// which ticks got one changes neither the log nor any state hash. The default keeps one when the
// log has grown by ten times the last snapshot's size (before the first, 40 KB an actor; at least
// 1 MiB), or a minute of run time has passed, never sooner than nine times the last one's cost
// after it, and always at the last tick: snapshots stay near a tenth of the log's bytes and of the
// run's time whatever the town's size.
// `--snapshot-every n` overrides it with a fixed count of ticks (0: the last tick only).

/** How a run chooses its snapshots (CommonOptions' snapshot fields). */
export interface SnapshotPolicy {
  /** A snapshot every n ticks (0: the last tick only): overrides the thresholds below. */
  readonly every?: number;
  /** Log growth, in bytes, since the last snapshot that calls for the next (default: 10× the last snapshot's size, or of `ACTOR_SNAPSHOT_BYTES` an actor before the first; at least `MIN_LOG_BYTES`). */
  readonly logBytes?: number;
  /** Run time, in ms, since the last snapshot that calls for the next (default `DEFAULT_SNAPSHOT_MS`). */
  readonly ms?: number;
}

/** Log bytes per snapshot byte the default keeps: snapshots stay near a tenth of the log. */
export const LOG_BYTES_PER_SNAPSHOT_BYTE = 10;
/** The default byte threshold's floor (small worlds' snapshots are a few KB). */
export const MIN_LOG_BYTES = 2 ** 20;
/** A snapshot's size an actor, guessed before a run's first snapshot (an AURATown resident's is 10–40 KB). */
export const ACTOR_SNAPSHOT_BYTES = 40 * 1024;
/** The default time threshold: a crashed long run re-runs at most about this much on resume. */
export const DEFAULT_SNAPSHOT_MS = 60_000;
/** Run time per ms of snapshot cost: a snapshot comes no sooner than 9× the last one's cost after it (≤ 10% of the run). */
export const RUN_MS_PER_SNAPSHOT_MS = 9;

/** What the decision looks at: where the run is, and what happened since the last snapshot (or the run's start). */
export interface SinceLastSnapshot {
  readonly tick: number;
  /** The episode's first and last ticks (a resumed run counts `every` from the episode's first tick, as before). */
  readonly firstTick: number;
  readonly lastTick: number;
  /** Bytes the log has grown by since the last snapshot (or since the run started). */
  readonly logBytes: number;
  /** Run time since the last snapshot was taken (or since the run started). */
  readonly ms: number;
  /** The last snapshot's size in bytes and how long the run waited for it; null before the run's first. */
  readonly last: { readonly bytes: number; readonly costMs: number } | null;
  /** The episode's actors (before the first snapshot, its size is guessed from them). */
  readonly actors: number;
}

/** Whether the tick just committed keeps a snapshot. Pure: the caller measures bytes and time. */
export function snapshotDue(policy: SnapshotPolicy, s: SinceLastSnapshot): boolean {
  if (s.tick === s.lastTick) return true;
  if (policy.every !== undefined) return policy.every > 0 && (s.tick - s.firstTick + 1) % policy.every === 0;
  if (s.last !== null && s.ms < RUN_MS_PER_SNAPSHOT_MS * s.last.costMs) return false;
  const bytes = policy.logBytes ?? Math.max(MIN_LOG_BYTES, LOG_BYTES_PER_SNAPSHOT_BYTE * (s.last?.bytes ?? s.actors * ACTOR_SNAPSHOT_BYTES));
  return s.logBytes >= bytes || s.ms >= (policy.ms ?? DEFAULT_SNAPSHOT_MS);
}

/**
 * The decision's bookkeeping over one run: the log's size and the clock read when a tick commits,
 * and what each snapshot cost. `logBytes` and `clock` are injected (a test gives its own).
 */
export class SnapshotSchedule {
  private readonly policy: SnapshotPolicy;
  private readonly actors: number;
  private readonly logBytes: () => number;
  private readonly clock: () => number;
  private bytesAt: number;
  private msAt: number;
  private last: { bytes: number; costMs: number } | null = null;
  /** Ticks that kept a snapshot in this run (for a result, a bench). */
  taken = 0;

  constructor(policy: SnapshotPolicy, actors: number, logBytes: () => number, clock: () => number) {
    this.policy = policy;
    this.actors = actors;
    this.logBytes = logBytes;
    this.clock = clock;
    this.bytesAt = logBytes();
    this.msAt = clock();
  }

  /** Whether `tick`, just committed, keeps a snapshot. */
  due(tick: number, firstTick: number, lastTick: number): boolean {
    return snapshotDue(this.policy, { tick, firstTick, lastTick, logBytes: this.logBytes() - this.bytesAt, ms: this.clock() - this.msAt, last: this.last, actors: this.actors });
  }

  /** A snapshot of `bytes` was taken, the run having waited from `startedMs` (a `clock` reading) for it. */
  record(bytes: number, startedMs: number): void {
    const now = this.clock();
    this.last = { bytes, costMs: now - startedMs };
    this.bytesAt = this.logBytes();
    this.msAt = now;
    this.taken++;
  }
}
