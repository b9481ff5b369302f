// A parallel `verify` of an episode directory: this thread scans the log record by record (hash
// chain, envelopes, catalogue, tick sequence: verifyChain.ts), and each time it passes the
// `tick.committed` of a tick whose snapshot is stored, far enough past the last cut, it gives the
// span before it to a worker thread (verifySpanWorker.ts, infra/pool.ts) to replay. Each span
// starts from the snapshot of the tick before it, used only when its actors hash to the state hash
// the log committed there, and checks every record and state hash it holds against the log; the
// span before it reproduced that same state hash, so spans that all hold replay the log as one
// thread would. Anything else ends the parallel run without a report (null): the caller verifies
// on one thread, which finds and reports the first failure as it always has.
import { existsSync, readdirSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { setImmediate as turn } from "node:timers/promises";
import type { TornTail } from "../../events/errors.ts";
import type { LogRecord } from "../../events/record.ts";
import { logWriter, peekLog, scanRecords, type ScanEnd } from "../../infra/fileEventStore.ts";
import { openPool } from "../../infra/pool.ts";
import { SNAPSHOT_KEY } from "../../infra/snapshotStore.ts";
import { headerOf } from "./replay.ts";
import { TickSequence } from "./verifyChain.ts";
import replaySpan, { type SpanResult, type SpanTask } from "./verifySpanWorker.ts";

/**
 * Records from which a log is replayed in spans. Starting the worker threads (each loads its
 * modules and the episode's world: a second or more on a busy machine) and restoring a span's
 * snapshot cost more than they save below it: see docs/benchmarks.md (the parallel verify rows)
 * for the measurement it was chosen from.
 */
export const PARALLEL_FROM_RECORDS = 50_000;

/**
 * Records this thread replays, beyond its even share, while the worker threads start: it replays
 * the log's first span itself, from the episode's start, once its scan is done.
 */
export const HEAD_START_RECORDS = 10_000;

/**
 * Spans a worker thread replays: one, each span restoring a snapshot (a 1,000-agent town's is
 * about a second of CPU to read and check: two spans a worker cost 1.8× one thread's CPU time).
 */
const SPANS_PER_WORKER = 1;

/** What a parallel verify found: the scan's count, first record and torn tail, and how far the replay got. */
export interface SpansReplayed {
  readonly count: number;
  readonly first: LogRecord;
  readonly torn: TornTail | null;
  readonly lastTick: number;
  readonly incompleteTick: boolean;
}

export interface SpansOptions {
  /**
   * Threads in all, this one included; fewer than 2: null. Default: every core, when one is idle
   * (a worker thread on a busy core only takes turns with this one: measured slower).
   */
  readonly threads?: number;
  /** Records from which the log is replayed in spans (default PARALLEL_FROM_RECORDS). */
  readonly from?: number;
  /** This thread's head start, in records (default HEAD_START_RECORDS). */
  readonly headStart?: number;
  readonly onProgress?: (done: number, total: number) => void;
}

/** The state hashes a snapshots/ folder holds a snapshot of (by file name only: a worker checks the file). */
function storedKeys(dir: string): Set<string> {
  if (!existsSync(dir)) return new Set();
  return new Set(
    readdirSync(dir)
      .filter((name) => name.endsWith(".json") && SNAPSHOT_KEY.test(name.slice(0, -5)))
      .map((name) => name.slice(0, -5)),
  );
}

/**
 * Verifies a file log in spans: this thread scans it and then replays the first span, worker
 * threads the others. Null when it is not worth it (one thread, a small log, no snapshot inside
 * it) or when anything does not hold: the caller then verifies on one thread.
 */
export async function replayInSpans(dir: string, layout: { readonly log: string; readonly snapshots: string }, options: SpansOptions = {}): Promise<SpansReplayed | null> {
  const cores = availableParallelism();
  // The load average counts this process too: below cores - 1, a core is free for a worker.
  const threads = Math.max(1, options.threads ?? (loadavg()[0]! < cores - 1 ? cores : 1));
  if (threads < 2) return null;
  const ends = peekLog(layout.log);
  if (ends.first === null || ends.last === null || typeof ends.first.seq !== "number" || typeof ends.last.seq !== "number") return null;
  const estimate = ends.last.seq - ends.first.seq + 1;
  if (estimate < (options.from ?? PARALLEL_FROM_RECORDS)) return null;
  const keys = storedKeys(layout.snapshots);
  if (keys.size === 0) return null;
  // This thread's span: its share, and what it replays while the workers start; the workers' spans share the rest.
  const head = Math.min(estimate, options.headStart ?? HEAD_START_RECORDS);
  const firstCut = ends.first.seq + Math.ceil(head + (estimate - head) / threads);
  const spanRecords = Math.max(1, Math.ceil((ends.last.seq - firstCut) / ((threads - 1) * SPANS_PER_WORKER)));

  const pool = await openPool<SpanTask, SpanResult>(new URL("./verifySpanWorker.ts", import.meta.url), threads - 1);
  const pending: Promise<SpanResult>[] = [];
  let failed = false;
  // Resolves at the first span that does not hold: the rest need not finish.
  let onFailure: () => void = () => undefined;
  const failure = new Promise<null>((resolve) => (onFailure = () => resolve(null)));
  // Ticks replayed: by this thread (as it goes) and by the workers (a span at a time).
  let mineDone = 0;
  let theirsDone = 0;
  let ticksTotal = 0;
  const progress = (): void => options.onProgress?.(mineDone + theirsDone, Math.max(ticksTotal, mineDone + theirsDone));
  const settle = (r: SpanResult): SpanResult => {
    if (!r.ok) {
      failed = true;
      onFailure();
    } else {
      theirsDone += r.ticks;
      progress();
    }
    return r;
  };
  const dispatch = (task: SpanTask): void => {
    pending.push(pool.run(task).then((r) => r, (error: unknown): SpanResult => ({ ok: false, why: String(error) })).then(settle));
  };
  try {
    const scan = scanRecords(layout.log);
    let count = 0;
    let first: LogRecord | null = null;
    let ticks: TickSequence | null = null;
    let start: SpanTask["start"] | null = null;
    let startKey: string | null = null;
    let own: SpanTask | null = null;
    let end: ScanEnd;
    try {
      for (let next = scan.next(); ; next = scan.next()) {
        if (next.done === true) {
          end = next.value;
          break;
        }
        const { record, file, offset } = next.value;
        if (count++ === 0) {
          first = record;
          const header = headerOf([record], layout.log);
          ticks = new TickSequence(header.firstTick);
          ticksTotal = header.ticks - header.firstTick;
          start = { seq: record.seq, hash: record.hash, tick: header.firstTick - 1, file, offset };
          continue;
        }
        if (ticks!.check(record) !== null) return null;
        const cutAt = own === null ? firstCut : start!.seq + spanRecords;
        if (record.type === "tick.committed" && record.seq >= cutAt && ends.last.seq - record.seq >= spanRecords / 2) {
          const key = String((record.payload as { stateHash?: unknown }).stateHash);
          if (keys.has(key)) {
            const task: SpanTask = { dir, snapshots: layout.snapshots, header: first!, start: start!, snapshot: startKey, toSeq: record.seq, last: false };
            if (own === null) own = task;
            else dispatch(task);
            start = { seq: record.seq, hash: record.hash, tick: record.tick, file, offset };
            startKey = key;
          }
        }
        // Turns of the event loop let the pool hand out the spans given so far.
        if (count % 4096 === 0) {
          await turn();
          if (failed) return null;
        }
      }
    } catch {
      // Damage, or a header that does not read: the one-thread verify reports it.
      return null;
    } finally {
      // A scan left part-way (a span that failed, a tick out of sequence) closes its segment file.
      scan.return({ torn: null, tornOffset: 0, lastFile: null });
    }
    if (first === null || start === null || own === null) return null;
    // A torn tail fails the verify (unless its run is still writing the log).
    if (end.torn !== null && logWriter(layout.log) === null) return null;
    const lastSeq = first.seq + count - 1;
    if (lastSeq > start.seq) dispatch({ dir, snapshots: layout.snapshots, header: first, start, snapshot: startKey, toSeq: lastSeq, last: true });
    // The first span, on this thread (its modules are loaded), while the workers replay the others.
    const mine = await replaySpan(own, (done) => {
      mineDone = done;
      progress();
    });
    if (!mine.ok) return null;
    const results = await Promise.race([Promise.all(pending), failure]);
    if (results === null || results.some((r) => !r.ok)) return null;
    const last = results.at(-1);
    const reached = lastSeq > start.seq && last?.ok === true ? { lastTick: last.lastTick, incompleteTick: last.incompleteTick } : { lastTick: start.tick, incompleteTick: false };
    return { count, first, torn: end.torn, ...reached };
  } finally {
    await pool.close();
  }
}
