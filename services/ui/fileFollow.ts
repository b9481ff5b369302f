// Following a file log live for the dashboard: the log folder is watched (inotify on Linux: a
// write, a new segment), and on each change the log is read again through loadLog — the same
// checked read every view uses, cached by the segments' sizes and times — and the records past
// the last one sent are passed on. Changes that arrive while a read runs are coalesced into one
// more read, so a fast writer costs one read per batch, not one per record.
import { watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import type { LogRecord } from "../../events/record.ts";
import { loadLog, type LoadedLog } from "./records.ts";

/** How often the log is looked at when its folder's watch reports nothing. */
const FALLBACK_LOOK_MS = 2000;

export interface LiveBatch {
  /** Records appended since the last batch (seq after the last one sent), in order. */
  readonly records: readonly LogRecord[];
  /** Set once the log reads as damaged: the records stop before it, and following ends. */
  readonly damage: string | null;
}

/** The records of `log` after seq `after`, and its damage, as one batch (null when there is nothing new). */
export function batchAfter(log: LoadedLog, after: number): LiveBatch | null {
  const start = Math.max(0, after + 1 - log.firstSeq);
  const records = log.records.slice(start);
  return records.length === 0 && log.damage === null ? null : { records, damage: log.damage };
}

export async function* followFileLog(dir: string, after: number, signal: AbortSignal, readable: () => boolean = () => true): AsyncIterable<LiveBatch> {
  let changed = true;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    changed = true;
    wake?.();
  };
  // Watching starts before the first read, so nothing appended in between is missed.
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(join(dir, "log"), { persistent: false }, poke);
    watcher.on("error", poke);
  } catch {
    // The log folder is gone: the read below says so.
  }
  // Some file systems (network mounts, a container's bind mount from another OS) report no change:
  // a look every few seconds still finds the new records there (a stat per segment when unchanged).
  const fallback = setInterval(poke, FALLBACK_LOOK_MS);
  fallback.unref();
  signal.addEventListener("abort", poke, { once: true });
  let last = after;
  try {
    while (!signal.aborted) {
      if (!changed) await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
      if (signal.aborted) return;
      changed = false;
      if (!readable()) return;
      let log: LoadedLog;
      try {
        log = loadLog(dir);
      } catch {
        // A segment gone between listing and reading it (the folder replaced): look at the next change.
        continue;
      }
      const batch = batchAfter(log, last);
      if (batch === null) continue;
      last = batch.records.at(-1)?.seq ?? last;
      yield batch;
      if (batch.damage !== null) return;
    }
  } finally {
    watcher?.close();
    clearInterval(fallback);
    signal.removeEventListener("abort", poke);
  }
}
