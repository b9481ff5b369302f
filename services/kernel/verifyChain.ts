// What `verify` checks of a log without replaying its actors (`verify --chain-only`, and the scan
// a parallel verify runs while its worker threads replay): the records' tick sequence, and that
// each tick's recorded state hash is the hash of its recorded parts. The hash chain, the record
// envelopes and the catalogue are the scan's (infra/fileEventStore.ts scanRecords).
import type { TornTail } from "../../events/errors.ts";
import type { LogRecord } from "../../events/record.ts";
import { scanRecords, type ScanResult } from "../../infra/fileEventStore.ts";
import { stateHashOf } from "../distributed/actorHost.ts";
import { shownPath } from "../views/text.ts";
import { headerOf } from "./replay.ts";

/** Where a log's records contradict its own tick sequence: the first such record. */
export interface TickProblem {
  readonly seq: number;
  readonly tick: number;
  readonly message: string;
}

/**
 * Checks records one at a time, after the header, against the tick sequence every world's log
 * follows: tick `firstTick` first, each tick opened by its `tick.started`, every record of a tick
 * carrying its number, and closed by one `tick.committed` whose state hash is the hash of its
 * parts; the next tick follows it. A live run and a replay write the same sequence, so a log whose
 * records break it (altered, then its chain rehashed) is one the full verify's replay reports as
 * diverged.
 */
export class TickSequence {
  /** The tick the next records belong to. */
  private tick: number;
  /** True between a tick's `tick.committed` and the next tick's `tick.started`. */
  private between = true;
  private committedCount = 0;
  private lastCommittedTick: number | null = null;
  private afterCommit = 0;

  constructor(firstTick: number) {
    this.tick = firstTick;
  }

  /** Ticks committed so far. */
  get committed(): number {
    return this.committedCount;
  }

  /** The last committed tick, or null before the first. */
  get lastTick(): number | null {
    return this.lastCommittedTick;
  }

  /** Records after the last `tick.committed` (a log that ends part-way through a tick). */
  get tail(): number {
    return this.afterCommit;
  }

  /** The record's problem, or null when it follows the sequence. */
  check(record: LogRecord): TickProblem | null {
    const problem = (what: string): TickProblem => ({ seq: record.seq, tick: record.tick, message: `the log's tick sequence is broken at seq ${record.seq}: ${what} (the record's hash holds, so it was written so or altered and rehashed)` });
    this.afterCommit++;
    if (this.between) {
      if (record.type !== "tick.started" || record.tick !== this.tick) return problem(`tick ${this.tick} should begin with its 'tick.started', found '${record.type}' of tick ${String(record.tick)}`);
      const own = (record.payload as { tick?: unknown } | null)?.tick;
      if (own !== undefined && own !== record.tick) return problem(`'tick.started' of tick ${record.tick} names tick ${String(own)} in its payload`);
      this.between = false;
      return null;
    }
    if (record.tick !== this.tick) return problem(`'${record.type}' carries tick ${String(record.tick)} inside tick ${this.tick}, before its 'tick.committed'`);
    if (record.type === "tick.started") return problem(`a second 'tick.started' of tick ${this.tick}`);
    if (record.type === "tick.committed") {
      const { stateHash, parts } = record.payload as { stateHash: string; parts: Record<string, string> };
      const own = stateHashOf(record.tick, parts);
      if (own !== stateHash) return problem(`tick ${record.tick}'s recorded state hash ${stateHash.slice(0, 12)}… is not the hash of its recorded parts (${own.slice(0, 12)}…)`);
      this.committedCount++;
      this.lastCommittedTick = this.tick;
      this.afterCommit = 0;
      this.tick++;
      this.between = true;
    }
    return null;
  }
}

/** A whole log's scan with its tick sequence checked: what `verify --chain-only` reports. */
export interface ChainChecked {
  readonly count: number;
  readonly first: LogRecord | null;
  readonly torn: TornTail | null;
  readonly ticks: TickSequence;
  /** The first record that breaks the tick sequence, or null. */
  readonly problem: TickProblem | null;
}

/**
 * The tick sequence of a log whose header is `first`, or null when the header does not read (the
 * verify reports that, as it does without --chain-only).
 */
export function tickSequenceOf(first: LogRecord, file: string): TickSequence | null {
  try {
    return new TickSequence(headerOf([first], file).firstTick);
  } catch {
    return null;
  }
}

/**
 * Scans a file log record by record, as it reads it (a chunk at a time, keeping no record), and
 * checks its tick sequence. Throws the scan's damage errors (LogCorrupted, UnknownEventType,
 * InvalidPayload), as a whole-log scan does.
 */
export function chainOfFile(logDir: string): ChainChecked {
  const scan = scanRecords(logDir);
  let count = 0;
  let first: LogRecord | null = null;
  let ticks: TickSequence | null = null;
  let problem: TickProblem | null = null;
  for (let next = scan.next(); ; next = scan.next()) {
    if (next.done === true) return { count, first, torn: next.value.torn, ticks: ticks ?? new TickSequence(0), problem };
    const record = next.value.record;
    if (count++ === 0) {
      first = record;
      ticks = tickSequenceOf(record, shownPath(logDir));
    } else if (ticks !== null && problem === null) problem = ticks.check(record);
  }
}

/** The same checks of records a store has already read and checked (a log in JetStream). */
export function chainOfRecords(scan: ScanResult): ChainChecked {
  const first = scan.records[0] ?? null;
  const ticks = first === null ? null : tickSequenceOf(first, first.episode);
  let problem: TickProblem | null = null;
  if (ticks !== null) for (let i = 1; i < scan.records.length && problem === null; i++) problem = ticks.check(scan.records[i]!);
  return { count: scan.records.length, first, torn: scan.torn, ticks: ticks ?? new TickSequence(0), problem };
}
