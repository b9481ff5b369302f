// `verify <dir>` on a folder of episodes (a sweep's `--log`, an eval's `--out`): every episode
// directory below it is verified in full, on worker threads (infra/pool.ts, verifyTreeWorker.ts),
// so "every log of a sweep verifies" is one command. An episode directory is one with a `log/`
// folder; the walk does not descend into it.
import { existsSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { runOnPool } from "../../infra/pool.ts";
import { shownPath } from "../views/text.ts";

export interface TreeEntry {
  readonly dir: string;
  readonly exitCode: 0 | 1 | 3 | 4;
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
  /** 0 when every log holds; otherwise the worst code: 4 (internal) > 3 (damaged) > 1 (diverged). */
  readonly exitCode: 0 | 1 | 3 | 4;
}

/** Episode directories below `root` in sorted order (`root` itself when it is one). */
export function episodeDirsUnder(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    if (existsSync(join(dir, "log"))) {
      found.push(dir);
      return;
    }
    const children = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    for (const name of children) walk(join(dir, name));
  };
  walk(root);
  return found;
}

export async function verifyTree(root: string, options: { readonly threads?: number; readonly onProgress?: (done: number, total: number) => void } = {}): Promise<TreeReport> {
  const started = performance.now();
  const dirs = episodeDirsUnder(root);
  const threads = Math.max(1, Math.min(options.threads ?? availableParallelism(), dirs.length));
  // Each thread takes the next directory when it finishes one, so a slow log does not hold up a share.
  let done = 0;
  const entries = await runOnPool<string, TreeEntry>(new URL("./verifyTreeWorker.ts", import.meta.url), dirs, {
    threads,
    onResult: () => options.onProgress?.(++done, dirs.length),
  });
  const failures = entries.filter((e) => e.exitCode !== 0).sort((a, b) => (a.dir < b.dir ? -1 : 1));
  const count = (code: number) => entries.filter((e) => e.exitCode === code).length;
  const worst = failures.reduce<0 | 1 | 3 | 4>((w, e) => (e.exitCode === 4 || (e.exitCode === 3 && w !== 4) || (e.exitCode === 1 && w === 0) ? e.exitCode : w), 0);
  return {
    root,
    episodes: dirs.length,
    ok: entries.filter((e) => e.exitCode === 0 && e.notStarted === null).length,
    diverged: count(1),
    damaged: count(3),
    errors: count(4),
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
