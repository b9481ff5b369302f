// A sweep's progress while it runs: an EnvProbe sweep with `--log <dir>` under the runs folder
// leaves its spec there first (MARKER) and then one episode directory per job
// (`<world-regime>/<policy>/s<seed>`). Its progress is the jobs whose logs are finished against the
// jobs its spec holds, from the rows the list already has (no log is read again). Which worker ran
// which job is not written to the runs folder (a NATS sweep's job outcomes name their worker in
// JetStream only), so the progress is the sweep's as a whole.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { MARKER, missingFromSweepLog } from "../envprobe/sweep.ts";
import type { EpisodeSummary } from "./catalogue.ts";

export interface SweepProgress {
  /** The sweep's --log folder, relative to the runs folder ("." for the folder itself). */
  readonly id: string;
  /** Jobs the sweep's spec holds. */
  readonly total: number;
  /** Jobs whose logs are finished. */
  readonly done: number;
  /** Jobs whose logs have begun and are not finished (running, or interrupted). */
  readonly started: number;
}

/** The sweep folder an episode would lie in (three levels up), or null. */
const sweepOf = (id: string): string | null => {
  const parts = id.split("/");
  return parts.length < 3 ? null : parts.slice(0, -3).join("/") || ".";
};

export function sweepProgress(root: string, rows: readonly Pick<EpisodeSummary, "id" | "status">[]): SweepProgress[] {
  const bySweep = new Map<string, { finished: Set<string>; started: Set<string> }>();
  const isSweep = new Map<string, boolean>();
  const sweepFolder = (id: string): boolean => {
    let known = isSweep.get(id);
    if (known === undefined) isSweep.set(id, (known = existsSync(join(root, id, MARKER))));
    return known;
  };
  // A sweep that has begun but logged no episode yet: its folder directly in the runs folder.
  let names: string[] = [];
  try {
    names = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    // The runs folder is gone: no sweeps.
  }
  for (const id of [".", ...names]) if (sweepFolder(id)) bySweep.set(id, { finished: new Set(), started: new Set() });
  for (const row of rows) {
    const sweep = sweepOf(row.id);
    if (sweep === null || !sweepFolder(sweep)) continue;
    const entry = bySweep.get(sweep) ?? bySweep.set(sweep, { finished: new Set(), started: new Set() }).get(sweep)!;
    const key = sweep === "." ? row.id : row.id.slice(sweep.length + 1);
    (row.status === "finished" ? entry.finished : entry.started).add(key);
  }
  const out: SweepProgress[] = [];
  for (const [id, { finished, started }] of [...bySweep].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const missing = missingFromSweepLog(join(root, id), finished);
    if (missing === null) continue;
    out.push({ id, total: missing.expected, done: missing.expected - missing.missing.length, started: started.size });
  }
  return out;
}
