// A sweep's progress while it runs: a world's own sweep run with `--log <dir>` under the runs folder
// (EnvProbe's) leaves its spec there first and then one episode directory per job, some folders
// down (the world module's `sweepLog`). Its progress is the jobs whose logs are finished against
// the jobs its spec holds, from the rows the list already has (no log is read again). Per worker,
// it is what the sweep's progress file in the same folder says (services/kernel/sweepProgressFile.ts:
// episodes each worker thread, LLM lane or NATS worker finished, written by the sweep as results
// reach it, outside every log).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { registeredWorlds } from "../kernel/worlds.ts";
import type { EpisodeSummary } from "./catalogue.ts";
import { readSweepProgress, type WorkerProgress } from "../kernel/sweepProgressFile.ts";

export interface SweepProgress {
  /** The sweep's --log folder, relative to the runs folder ("." for the folder itself). */
  readonly id: string;
  /** Jobs the sweep's spec holds. */
  readonly total: number;
  /** Jobs whose logs are finished. */
  readonly done: number;
  /** Jobs whose logs have begun and are not finished (running, or interrupted). */
  readonly started: number;
  /**
   * What the sweep's progress file says, or null when it left none (a sweep from before it was
   * written): the episodes each worker finished in the sweep's latest run, whether that run ended,
   * and when the file was last written.
   */
  readonly workers: { readonly finished: boolean; readonly updated: string; readonly done: number; readonly total: number; readonly workers: readonly WorkerProgress[] } | null;
}

/** The folder `depth` levels above an episode, or null when it lies less deep. */
const folderAbove = (id: string, depth: number): string | null => {
  const parts = id.split("/");
  return parts.length < depth ? null : parts.slice(0, -depth).join("/") || ".";
};

export async function sweepProgress(root: string, rows: readonly Pick<EpisodeSummary, "id" | "status">[]): Promise<SweepProgress[]> {
  // A sweep that has begun but logged no episode yet: its folder directly in the runs folder.
  let names: string[] = [];
  try {
    names = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    // The runs folder is gone: no sweeps.
  }
  const out = new Map<string, SweepProgress>();
  for (const world of registeredWorlds()) {
    const sweepLog = world.sweepLog;
    if (sweepLog === undefined) continue;
    const candidates = new Map<string, { finished: Set<string>; started: number }>(names.map((n) => [n, { finished: new Set(), started: 0 }]));
    for (const row of rows) {
      const folder = folderAbove(row.id, sweepLog.depth);
      if (folder === null) continue;
      const entry = candidates.get(folder) ?? candidates.set(folder, { finished: new Set(), started: 0 }).get(folder)!;
      if (row.status === "finished") entry.finished.add(folder === "." ? row.id : row.id.slice(folder.length + 1));
      else entry.started++;
    }
    for (const [id, { finished, started }] of candidates) {
      if (out.has(id)) continue;
      const progress = await sweepLog.progress(join(root, id), finished);
      if (progress !== null) out.set(id, { id, total: progress.expected, done: progress.expected - progress.missing.length, started, workers: readSweepProgress(join(root, id)) });
    }
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}
