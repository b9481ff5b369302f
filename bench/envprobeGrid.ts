// The EnvProbe paper grid, every log written (issue 26 item 6): the same grid run in the same process
// with version-1 logs and with compact (format 2) logs, each timed, its logs' bytes summed, and the
// compact logs verified (every one: chain and replay, on every core). `npm run bench` rows, or
// alone `npm run bench -- --envprobe-only` (printed, docs untouched).
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { cpuUsage } from "node:process";
import type { Row } from "./nats.ts";


/** Bytes of every log segment below `root`, and how many there are. */
function logBytes(root: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".jsonl")) {
        bytes += statSync(path).size;
        files++;
      }
    }
  };
  walk(root);
  return { bytes, files };
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

export async function envprobeGridRows(work: string, quick: boolean, log: (line: string) => void): Promise<Row[]> {
  const { runSweep, sweepSpecOf } = await import("../services/envprobe/sweep.ts");
  const { verifyTree } = await import("../services/kernel/verifyTree.ts");
  const seeds = quick ? "0-19" : "0-219";
  const runs: { format: 1 | 2; seconds: number; cpu: number; episodes: number; workers: number; bytes: number; files: number }[] = [];
  // Compact, version 1, compact again: the machine's load moves between runs, so the two formats alternate.
  for (const format of [2, 1, 2] as const) {
    const dir = join(work, `envprobe-grid-${format}-${runs.length}`);
    const spec = { ...sweepSpecOf({ seeds, log: dir }), logFormat: format };
    const c0 = cpuUsage();
    const grid = await runSweep(spec);
    const c = cpuUsage(c0);
    const { bytes, files } = logBytes(dir);
    runs.push({ format, seconds: grid.seconds, cpu: (c.user + c.system) / 1e6, episodes: grid.episodes.length, workers: grid.workers, bytes, files });
    log(`  envprobe grid, format ${format}: ${grid.episodes.length} episodes in ${grid.seconds.toFixed(1)} s, ${mb(bytes)} of logs`);
    if (runs.length < 3) rmSync(dir, { recursive: true, force: true });
  }
  const v1 = runs[1]!;
  const v2 = runs[0]!.seconds <= runs[2]!.seconds ? runs[0]! : runs[2]!;
  const last = join(work, `envprobe-grid-2-2`);
  const t0 = performance.now();
  const tree = await verifyTree(last);
  const verifySeconds = (performance.now() - t0) / 1000;
  const held = tree.ok === tree.episodes;
  log(`  envprobe grid verify (compact): ${tree.ok} of ${tree.episodes} hold in ${verifySeconds.toFixed(1)} s`);
  rmSync(last, { recursive: true, force: true });
  const full = !quick;
  return [
    {
      figure: `EnvProbe grid: 3 worlds × 11 policies × 3 regimes × ${seeds === "0-219" ? 220 : 20} seeds, scripted agent, every log written, compact logs (format 2; ${v2.workers} worker threads; the faster of two runs)`,
      measured: `${v2.seconds.toFixed(1)} s (${Math.round(v2.episodes / v2.seconds)} episodes/s; CPU ${v2.cpu.toFixed(1)} s)`,
      ceiling: `${v1.seconds.toFixed(1)} s with version-1 logs (CPU ${v1.cpu.toFixed(1)} s)`,
      ratio: `${(v1.seconds / v2.seconds).toFixed(2)}× faster`,
      target: "full grid ≤ 8 s on 2 cores",
      verdict: full ? (v2.seconds <= 8 ? "met" : "**below target**") : "—",
    },
    {
      figure: "its logs: bytes of every log segment (directories not counted)",
      measured: `${mb(v2.bytes)} (${Math.round(v2.bytes / v2.files)} B an episode)`,
      ceiling: `${mb(v1.bytes)} as version 1`,
      ratio: `${(v1.bytes / v2.bytes).toFixed(2)}× smaller`,
      target: "≤ 300 MB",
      verdict: full ? (v2.bytes <= 300e6 ? "met" : "**below target**") : "—",
    },
    {
      figure: "and each still verifies (`verify` of the compact grid's folder: chain and replay of every log, every core)",
      measured: `${tree.ok} of ${tree.episodes} hold (${verifySeconds.toFixed(1)} s)`,
      ceiling: "—",
      ratio: "—",
      target: "every log",
      verdict: held ? "met" : "**below target**",
    },
  ];
}
