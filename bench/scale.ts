// The large-town rows of `npm run bench`: an AURATown day of 10,000 agents, run in a process of
// its own with Node's default heap (no --max-old-space-size), so its peak memory is its own and a
// day that does not fit fails there rather than in the bench. `--scale-only` runs the 1,000-agent
// day the same way first (the main table's 1,000-agent row runs in the bench process itself).
// As a child: node bench/scale.ts <agents> <dir> — warms up on a 5-agent day, runs the day as the
// 1,000-agent row does (seed 42, tracing off, snapshot at the last tick only) and prints one JSON
// line: its seconds, ticks, records, peak RSS, the largest heap in use at a tick's end, the heap limit.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getHeapStatistics } from "node:v8";
import type { Row } from "./nats.ts";

export interface ScaleDay {
  readonly agents: number;
  readonly seconds: number;
  /** CPU time of the day (all of the process's threads, the collector's included). */
  readonly cpuSeconds: number;
  readonly ticks: number;
  readonly records: number;
  readonly maxRssMiB: number;
  readonly peakHeapMiB: number;
  readonly heapLimitMiB: number;
}

const SELF = fileURLToPath(import.meta.url);
const MiB = 2 ** 20;
const fmt = (x: number) => Math.round(x).toLocaleString("en-US");

/** Runs one day in a child process with the default heap; null (and why) when it did not finish. */
export function scaleDay(agents: number, dir: string): ScaleDay | { readonly agents: number; readonly failed: string } {
  const child = spawnSync(process.execPath, [SELF, String(agents), dir], { encoding: "utf8", maxBuffer: 16 * MiB });
  const last = child.stdout.trim().split("\n").at(-1) ?? "";
  if (child.status !== 0 || !last.startsWith("{")) return { agents, failed: `exit ${child.status ?? child.signal}` };
  return { agents, ...(JSON.parse(last) as Omit<ScaleDay, "agents">) };
}

/** Agent-ticks per second of a day. */
export const agentTicksOf = (day: ScaleDay): number => (day.agents * day.ticks) / day.seconds;

/**
 * The 10,000-agent row: its rate beside the 1,000-agent day's in the same run (`reference`, agent-ticks/s),
 * its peak memory, and whether it met ≥ 30,000 agent-ticks/s within Node's default heap.
 */
export function scaleRows(work: string, reference: number, log: (s: string) => void): Row[] {
  const day = scaleDay(10_000, join(work, "day10000"));
  if ("failed" in day) {
    log(`  10000 agents: did not finish (${day.failed})`);
    return [{ figure: "AURATown day, 10,000 agents, own process, Node's default heap", measured: `did not finish (${day.failed})`, ceiling: "—", ratio: "—", target: "≥ 30,000 agent-ticks/s within the default heap", verdict: "**below target**" }];
  }
  const rate = agentTicksOf(day);
  const fits = day.peakHeapMiB < day.heapLimitMiB;
  log(`  10000 agents: ${day.seconds.toFixed(2)} s/day (CPU ${day.cpuSeconds.toFixed(2)} s), ${fmt(rate)} agent-ticks/s, peak RSS ${fmt(day.maxRssMiB)} MiB, heap ${fmt(day.peakHeapMiB)} of ${fmt(day.heapLimitMiB)} MiB`);
  return [
    {
      figure: `AURATown day, 10,000 agents (${day.records} records), own process, Node's default heap`,
      measured: `${day.seconds.toFixed(2)} s (CPU ${day.cpuSeconds.toFixed(2)} s) · ${fmt(rate)} agent-ticks/s; peak RSS ${fmt(day.maxRssMiB)} MiB, heap in use at a tick's end ≤ ${fmt(day.peakHeapMiB)} MiB of a ${fmt(day.heapLimitMiB)} MiB limit`,
      ceiling: `the 1,000-agent day's rate in this run: ${fmt(reference)} agent-ticks/s`,
      ratio: `${(rate / reference).toFixed(2)}× the 1,000-agent rate`,
      target: "≥ 30,000 agent-ticks/s within the default heap",
      verdict: rate >= 30_000 && fits ? "met" : "**below target**",
    },
  ];
}

/** `--scale-only`: the 1,000- and 10,000-agent days, each in its own process (printed, docs untouched). */
export function scaleOnly(work: string, log: (s: string) => void): Row[] {
  const thousand = scaleDay(1000, join(work, "day1000"));
  if ("failed" in thousand) throw new Error(`the 1,000-agent day did not finish (${thousand.failed})`);
  const rate = agentTicksOf(thousand);
  log(`  1000 agents: ${thousand.seconds.toFixed(3)} s/day (CPU ${thousand.cpuSeconds.toFixed(2)} s), ${fmt(rate)} agent-ticks/s, peak RSS ${fmt(thousand.maxRssMiB)} MiB`);
  const row: Row = {
    figure: `AURATown day, 1,000 agents (${thousand.records} records), own process`,
    measured: `${thousand.seconds.toFixed(3)} s (CPU ${thousand.cpuSeconds.toFixed(2)} s) · ${fmt(rate)} agent-ticks/s; peak RSS ${fmt(thousand.maxRssMiB)} MiB`,
    ceiling: "—",
    ratio: "—",
    target: "> 50,000 agent-ticks/s (day < 1 s)",
    verdict: rate > 50_000 ? "met" : "**below target**",
  };
  return [row, ...scaleRows(work, rate, log)];
}

async function child(agents: number, dir: string): Promise<void> {
  const { runEpisode } = await import("../services/kernel/episodes.ts");
  const { loadWorlds } = await import("../services/worlds.ts");
  await loadWorlds();
  const day = (n: number, label: string, onTick?: () => void) =>
    runEpisode({
      world: "auratown",
      seed: 42,
      dir: join(dir, label),
      config: { extraAgents: n - 5 },
      trace: { exporter: "none" },
      snapshotEvery: 0,
      ...(onTick === undefined ? {} : { observer: { onTick } }),
    });
  await day(5, "warm");
  let peakHeap = 0;
  const cpu = process.cpuUsage();
  const result = await day(agents, "day", () => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)));
  const used = process.cpuUsage(cpu);
  const out: Omit<ScaleDay, "agents"> = {
    seconds: result.seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    ticks: result.ticks,
    records: result.records,
    maxRssMiB: (process.resourceUsage().maxRSS * 1024) / MiB,
    peakHeapMiB: peakHeap / MiB,
    heapLimitMiB: getHeapStatistics().heap_size_limit / MiB,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

if (process.argv[1] === SELF) await child(Number(process.argv[2]), process.argv[3]!);
