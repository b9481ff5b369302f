// `verify <dir>` on a folder of episodes (a sweep's `--log`, an eval's `--out`): every episode
// directory below it is verified in full, on worker threads (infra/pool.ts, verifyTreeWorker.ts),
// so "every log of a sweep verifies" is one command. An episode directory is one with a `log/`
// folder; the walk does not descend into it.
import type { TreeTask } from "./verifyTreeWorker.ts";
import { existsSync, readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join, resolve } from "node:path";
import { segmentFiles } from "../../infra/fileEventStore.ts";
import { runOnPool } from "../../infra/pool.ts";
import { shownPath } from "../views/text.ts";
import { EpisodeFolderRefused } from "./errors.ts";

/** An episode's verify code: 0 holds, 1 diverged, 2 cannot be checked as it is (its fork base is gone), 3 damaged, 4 internal. */
export type TreeExitCode = 0 | 1 | 2 | 3 | 4;

export interface TreeEntry {
  readonly dir: string;
  readonly exitCode: TreeExitCode;
  /** The verify report's text for a failure (first divergence or damage); null when the log holds. */
  readonly problem: string | null;
  /** A log that holds but stops before its planned last tick (an interrupted run): why; else null. */
  readonly unfinished: string | null;
  /** An episode whose log holds no record yet (its run stopped before the first): why; else null. */
  readonly notStarted: string | null;
  readonly records: number;
}

export interface TreeReport {
  readonly root: string;
  readonly episodes: number;
  readonly ok: number;
  readonly diverged: number;
  readonly damaged: number;
  readonly errors: number;
  readonly records: number;
  readonly seconds: number;
  readonly failures: readonly TreeEntry[];
  /**
   * Logs that hold but stop before their last tick: counted in `ok` (what is there is intact), and
   * named, since a folder of them is an interrupted sweep, not a finished one.
   */
  readonly unfinished: readonly TreeEntry[];
  /**
   * Episodes never started (a sweep stopped before their first record): not damaged, not counted in
   * `ok` (no log holds for them), and named, with how to start them.
   */
  readonly notStarted: readonly TreeEntry[];
  /** 0 when every log holds; otherwise the worst code: 4 (internal) > 3 (damaged) > 2 (cannot be checked as given: a fork whose parent and base snapshot are gone) > 1 (diverged). */
  readonly exitCode: TreeExitCode;
}

/**
 * How far `verify <folder>` looks for episodes: a sweep's or an eval's folder holds its episodes a
 * few levels down, and `verify /` walked the whole filesystem until a folder it could not list
 * stopped it with Node's bare EACCES.
 */
export const EPISODE_FOLDER_BOUNDS = { folders: 200_000, depth: 12 } as const;

/** Episode directories below `root` in sorted order (`root` itself when it is one); refuses a root that cannot be a folder of episodes (EpisodeFolderRefused, exit 2). */
export function episodeDirsUnder(root: string, bounds: { readonly folders: number; readonly depth: number } = EPISODE_FOLDER_BOUNDS): string[] {
  const dir0 = resolve(root);
  if (dirname(dir0) === dir0) throw new EpisodeFolderRefused({ dir: root, reason: "root" });
  const found: string[] = [];
  let folders = 0;
  const walk = (dir: string, depth: number): void => {
    if (existsSync(join(dir, "log"))) {
      found.push(dir);
      return;
    }
    if (depth > bounds.depth) throw new EpisodeFolderRefused({ dir: root, reason: "depth", limit: bounds.depth });
    if (++folders > bounds.folders) throw new EpisodeFolderRefused({ dir: root, reason: "entries", limit: bounds.folders });
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      throw new EpisodeFolderRefused({ dir: root, reason: "unreadable", path: dir, code: (error as NodeJS.ErrnoException).code ?? "error" });
    }
    const children = entries
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    for (const name of children) walk(join(dir, name), depth + 1);
  };
  walk(dir0, 0);
  return found;
}

/**
 * Bytes of logs (and, with `--snapshots`, of snapshots) in a folder below which `verify <folder>`
 * verifies its episodes on this thread, one after another, unless `--threads` is given. A worker
 * thread loads its modules and every world before its first episode (1–2 s on a quiet machine,
 * 4–5 s at load 8), while a MiB of small episodes' logs verifies in about a second: `verify` of a
 * 4-episode sweep (72 KB) took 9.8 s on two threads at load 8, and 0.2 s on this one.
 */
export const TREE_THREADS_FROM_BYTES = 2 ** 20;

/** The bytes of `files` (one that is gone counts 0). */
function bytesIn(files: readonly string[]): number {
  let bytes = 0;
  for (const file of files) {
    try {
      bytes += statSync(file).size;
    } catch {
      // gone or unreadable: verify says so for its episode
    }
  }
  return bytes;
}

/** The bytes `verify` of these episode directories reads: their logs' segments, and their snapshots with `snapshots`. */
function treeBytes(dirs: readonly string[], snapshots: boolean, limit: number): number {
  let bytes = 0;
  const listed = (list: () => string[]): string[] => {
    try {
      return list();
    } catch {
      return []; // not a folder, or unreadable: verify says so for its episode
    }
  };
  for (const dir of dirs) {
    bytes += bytesIn(listed(() => segmentFiles(join(dir, "log"))));
    if (snapshots) {
      const folder = join(dir, "snapshots");
      bytes += bytesIn(listed(() => (existsSync(folder) ? readdirSync(folder).map((name) => join(folder, name)) : [])));
    }
    if (bytes >= limit) return bytes; // enough to know
  }
  return bytes;
}

export async function verifyTree(root: string, options: { readonly threads?: number; readonly onProgress?: (done: number, total: number) => void; readonly snapshots?: boolean; readonly chainOnly?: boolean } = {}): Promise<TreeReport> {
  const started = performance.now();
  const dirs = episodeDirsUnder(root);
  let done = 0;
  const tasks: TreeTask[] = dirs.map((dir) => ({ dir, snapshots: options.snapshots === true, chainOnly: options.chainOnly === true }));
  let entries: TreeEntry[];
  if (options.threads === undefined && treeBytes(dirs, options.snapshots === true, TREE_THREADS_FROM_BYTES) < TREE_THREADS_FROM_BYTES) {
    // A small folder: on this thread (its worlds are loaded), the worker's own verify of each directory.
    const { default: verifyTreeEntry } = await import("./verifyTreeWorker.ts");
    entries = [];
    for (const task of tasks) {
      entries.push(await verifyTreeEntry(task));
      options.onProgress?.(++done, dirs.length);
    }
  } else {
    const threads = Math.max(1, Math.min(options.threads ?? availableParallelism(), dirs.length));
    // Each thread takes the next directory when it finishes one, so a slow log does not hold up a share.
    entries = await runOnPool<TreeTask, TreeEntry>(new URL("./verifyTreeWorker.ts", import.meta.url), tasks, {
      threads,
      onResult: () => options.onProgress?.(++done, dirs.length),
    });
  }
  const failures = entries.filter((e) => e.exitCode !== 0).sort((a, b) => (a.dir < b.dir ? -1 : 1));
  const count = (code: number) => entries.filter((e) => e.exitCode === code).length;
  const rank: Readonly<Record<TreeExitCode, number>> = { 0: 0, 1: 1, 2: 2, 3: 3, 4: 4 };
  const worst = failures.reduce<TreeExitCode>((w, e) => (rank[e.exitCode] > rank[w] ? e.exitCode : w), 0);
  return {
    root,
    episodes: dirs.length,
    ok: entries.filter((e) => e.exitCode === 0 && e.notStarted === null).length,
    diverged: count(1),
    damaged: count(3),
    errors: count(4) + count(2),
    records: entries.reduce((sum, e) => sum + e.records, 0),
    seconds: (performance.now() - started) / 1000,
    failures,
    unfinished: entries.filter((e) => e.exitCode === 0 && e.unfinished !== null).sort((a, b) => (a.dir < b.dir ? -1 : 1)),
    notStarted: entries.filter((e) => e.exitCode === 0 && e.notStarted !== null).sort((a, b) => (a.dir < b.dir ? -1 : 1)),
    exitCode: worst,
  };
}

export function treeReportText(report: TreeReport, cwd: string = process.cwd()): string {
  const shown = (path: string) => shownPath(path, cwd);
  const where = shown(report.root);
  if (report.episodes === 0) return `FAILED: no episode directories (folders with a log/ inside) under ${where}`;
  const lines = [
    `${report.exitCode === 0 ? "OK" : "FAILED"}: ${report.episodes} episodes under ${where} (${report.records.toLocaleString("en-US")} records) in ${report.seconds.toFixed(1)} s — ${report.ok} hold${report.unfinished.length > 0 ? ` (${report.unfinished.length} of them unfinished)` : ""}${report.notStarted.length > 0 ? `, ${report.notStarted.length} not started` : ""}, ${report.diverged} diverged, ${report.damaged} damaged${report.errors > 0 ? `, ${report.errors} could not be checked` : ""}`,
  ];
  for (const f of report.failures) lines.push(`  ${shown(f.dir)}: ${(f.problem ?? "").replace(/^FAILED: /, "").split("\n").join("\n    ")}`);
  // An interrupted run's log holds, but its episode is not all there (a sweep stopped part-way).
  for (const f of report.unfinished.slice(0, 5)) lines.push(`  unfinished: ${shown(f.dir)}: ${f.unfinished}`);
  if (report.unfinished.length > 5) lines.push(`  unfinished: … and ${report.unfinished.length - 5} more`);
  // Nothing of these was written (a sweep stopped before them): the same sweep runs them.
  for (const f of report.notStarted.slice(0, 5)) lines.push(`  not started: ${shown(f.dir)}: ${f.notStarted}`);
  if (report.notStarted.length > 5) lines.push(`  not started: … and ${report.notStarted.length - 5} more`);
  if (report.notStarted.length > 0) lines.push(`  (an episode not started runs from its beginning when the command that made it runs again: the same sweep or experiment, or \`probetown run … --resume --log <episode>\` with its flags)`);
  return lines.join("\n");
}
