// A running sweep's progress per worker, for `probetown ui` (issue 25: "a sweep shows its progress
// over the workers"). A sweep run with `--log <dir>` keeps `<dir>/.sweep-progress.json` beside its
// spec: how many of its episodes each worker has finished (and of those, kept from an earlier run
// into the same folder), against the sweep's total. The coordinating process writes it, as each
// worker's results reach it: a worker thread's chunk (the embedded sweep), an LLM lane's episode, a
// NATS worker's job outcome (named by the worker's name). It lies outside every episode log: no log
// changes, and nothing replays or verifies it. It is rewritten whole (a temporary file renamed over
// it, so a reader never sees half of one), at most once per interval while results come, and once
// more when the sweep ends. Its `updated` stamp is wall-clock time, which the dashboard shows so a
// sweep that died (and left its file unfinished) can be told from one that is running.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SWEEP_PROGRESS_FILE = ".sweep-progress.json";

export interface WorkerProgress {
  /** The worker as the sweep knows it: `thread 3` (a worker thread), `lane 2` (an LLM lane), a NATS worker's name. */
  readonly worker: string;
  /** Episodes it finished in this run (kept ones included). */
  readonly done: number;
  /** Of those, episodes an earlier run into the same --log had finished: kept, not run again. */
  readonly kept: number;
}

export interface SweepProgressFile {
  /** Episodes the sweep runs. */
  readonly total: number;
  /** Episodes finished so far, by every worker. */
  readonly done: number;
  /** The sweep ended (its last write). */
  readonly finished: boolean;
  /** When the file was written (ISO 8601, wall clock). */
  readonly updated: string;
  /** Per worker, in the order they first reported. */
  readonly workers: readonly WorkerProgress[];
}

/** Writes a sweep's progress file (nothing without a --log); call `add` per result and `finish` once. */
export class SweepProgressWriter {
  private readonly workers = new Map<string, { done: number; kept: number }>();
  private done = 0;
  private lastWrite = Number.NEGATIVE_INFINITY;
  private pending: ReturnType<typeof setTimeout> | null = null;

  private readonly log: string | null;
  private readonly total: number;
  private readonly intervalMs: number;

  /** Writes the file at once (none done yet), replacing an earlier run's. */
  constructor(log: string | null, total: number, intervalMs = 1000) {
    this.log = log;
    this.total = total;
    this.intervalMs = intervalMs;
    this.write(false);
  }

  /** `worker` finished `done` more episodes, `kept` of them kept. */
  add(worker: string, done: number, kept = 0): void {
    const w = this.workers.get(worker) ?? this.workers.set(worker, { done: 0, kept: 0 }).get(worker)!;
    w.done += done;
    w.kept += kept;
    this.done += done;
    if (this.log === null || this.pending !== null) return;
    const wait = this.lastWrite + this.intervalMs - performance.now();
    if (wait <= 0) this.write(false);
    else {
      this.pending = setTimeout(() => {
        this.pending = null;
        this.write(false);
      }, wait);
      this.pending.unref();
    }
  }

  /** The sweep ended (or stopped): the last write, marked finished when every episode is done. */
  finish(): void {
    if (this.pending !== null) clearTimeout(this.pending);
    this.pending = null;
    this.write(this.done >= this.total);
  }

  private write(finished: boolean): void {
    if (this.log === null) return;
    this.lastWrite = performance.now();
    const file: SweepProgressFile = {
      total: this.total,
      done: this.done,
      finished,
      updated: new Date().toISOString(),
      workers: [...this.workers].map(([worker, w]) => ({ worker, done: w.done, kept: w.kept })),
    };
    const path = join(this.log, SWEEP_PROGRESS_FILE);
    try {
      writeFileSync(`${path}.tmp`, JSON.stringify(file) + "\n");
      renameSync(`${path}.tmp`, path);
    } catch {
      // Progress is for watching only: a folder that cannot take it does not stop the sweep.
    }
  }
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The progress file in a sweep's --log, or null when there is none that reads as one. */
export function readSweepProgress(log: string): SweepProgressFile | null {
  let o: Partial<SweepProgressFile>;
  try {
    o = JSON.parse(readFileSync(join(log, SWEEP_PROGRESS_FILE), "utf8")) as Partial<SweepProgressFile>;
  } catch {
    return null;
  }
  if (o === null || typeof o !== "object" || !isCount(o.total) || !isCount(o.done) || typeof o.finished !== "boolean" || typeof o.updated !== "string" || !Array.isArray(o.workers)) return null;
  const workers = o.workers.filter((w): w is WorkerProgress => w !== null && typeof w === "object" && typeof w.worker === "string" && isCount(w.done) && isCount(w.kept));
  return { total: o.total, done: o.done, finished: o.finished, updated: o.updated, workers };
}
