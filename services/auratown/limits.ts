// What an AURATown run needs of the heap, checked before it runs: a town or a length the heap
// cannot hold died in V8's out-of-memory abort (exit 134) after minutes or hours of running
// (`--agents 100000000` at once, `--days 1000000` of five residents about an hour in), instead of
// being refused up front, naming the flag, what it needs and the limit (exit 2).
import { existsSync, statfsSync } from "node:fs";
import { totalmem } from "node:os";
import { dirname, resolve } from "node:path";
import { getHeapStatistics } from "node:v8";
import { defaultTownConfig, type TownConfig } from "../../actors/auratown/config.ts";
import { ticksPerDay } from "../../actors/auratown/town.ts";
import { LOG_BYTES_PER_SNAPSHOT_BYTE } from "../kernel/snapshotPolicy.ts";
import { UsageError } from "../kernel/replay.ts";

/** Heap a town resident takes over its first day (measured: 5,000 residents, 1.36 GB). */
export const HEAP_PER_RESIDENT = 300 * 1024;

/**
 * Heap each further day adds per resident. Measured on a 1,000-agent town with a full GC at each
 * day's end: its memories and beliefs grow ~30 KB a resident-day (slowing as the memory streams
 * reach their capacity and beliefs cover the people met), and at the end the summary reads the
 * log back (~33 records a resident-day at 1.3 KB each in memory: ~43 KB); a five-resident town
 * logs more per resident (conversations), ~86 KB, and keeps its rows for the summary. 100 KiB
 * bounds them all; what grows with a run's length is linear in it, so a length too long for the
 * heap is known before the run starts.
 */
export const HEAP_PER_RESIDENT_DAY = 100 * 1024;

/** The flags a refusal names: the town's size, and the run's length (absent: its default, one day). */
export interface TownRunFlags {
  readonly town: string;
  readonly length?: string;
}

const gib = (bytes: number): string => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
const count = (n: number, digits = 0): string => n.toLocaleString("en-US", { maximumFractionDigits: digits });

/** Heap a run of `residents` over `ticks` needs (ticks of `perDay` a day). */
export const townRunHeap = (residents: number, ticks: number, perDay: number): number => residents * (HEAP_PER_RESIDENT + Math.max(0, ticks / perDay - 1) * HEAP_PER_RESIDENT_DAY);

/**
 * Refuses a town run the heap cannot hold: the town itself (its first day), naming `flags.town`,
 * else its length, naming `flags.length` and the most days that fit. A run, a resumed run, a fork
 * (the child's total ticks) and each episode of an embedded sweep are checked alike.
 */
export function checkTownRunFits(config: TownConfig, ticks: number, flags: TownRunFlags, limit: number = getHeapStatistics().heap_size_limit): void {
  const residents = config.agents.length + config.extraAgents;
  const perDay = ticksPerDay(config.clock);
  const remedy = (needs: number): string =>
    needs * 1.25 > totalmem()
      ? `this machine's ${gib(totalmem())} of memory`
      : `this Node's limit of ${gib(limit)}`;
  const raise = (needs: number): string =>
    needs * 1.25 > totalmem() ? "" : `, or raise the limit with NODE_OPTIONS=--max-old-space-size=${Math.ceil((needs * 1.25) / 2 ** 20)} (MiB; this machine has ${gib(totalmem())})`;
  const town = townRunHeap(residents, perDay, perDay);
  if (town > limit) {
    throw new UsageError(`${flags.town}: a town of ${count(residents)} residents needs about ${gib(town)} of heap (~300 KiB each), more than ${remedy(town)}; use fewer${raise(town)}`);
  }
  const needs = townRunHeap(residents, ticks, perDay);
  if (needs <= limit) return;
  const days = Math.floor(1 + (limit / residents - HEAP_PER_RESIDENT) / HEAP_PER_RESIDENT_DAY);
  throw new UsageError(
    `${flags.length ?? `${count(ticks)} ticks`}: ${count(residents)} residents over ${count(ticks / perDay, 1)} days need about ${gib(needs)} of heap ` +
      `(~300 KiB a resident for the first day and ~100 KiB a resident for each further one: memories, beliefs, and the log the summary reads back), ` +
      `more than ${remedy(needs)}: at most ${count(days)} days (${count(days * perDay)} ticks) of this town fit; run fewer${raise(needs)}`,
  );
}

/**
 * Disk a town run writes, measured on five- and 1,000-resident towns: its log (~1.5 KB a
 * resident-tick), a JSONL trace (~1.5 KB a resident-tick), and each snapshot (~40 KB a resident).
 * By default snapshots come by the log's growth (services/kernel/snapshotPolicy.ts): about a tenth
 * of the log's bytes, and the last tick's. (A snapshot every tick, the default once, had five
 * residents write ~45 MB/s of snapshots: `--days 1000000` asked 6.8 TB.)
 */
export const DISK_PER_RESIDENT_TICK = 1536;
export const TRACE_PER_RESIDENT_TICK = 1536;
export const DISK_PER_RESIDENT_SNAPSHOT = 40 * 1024;

export interface TownRunDisk {
  /** Where the episode directory goes (it, or the nearest folder above it that exists, is measured). */
  readonly dir: string;
  /** `--snapshot-every` (0: the last tick only); absent, the default: by the log's growth, about a tenth of its bytes. */
  readonly snapshotEvery?: number;
  /** Whether a JSONL trace goes beside the log. */
  readonly trace: boolean;
}

/** Bytes a run of `residents` over `ticks` writes. */
export function townRunDisk(residents: number, ticks: number, o: Pick<TownRunDisk, "snapshotEvery" | "trace">): number {
  const log = residents * ticks * DISK_PER_RESIDENT_TICK;
  const trace = o.trace ? residents * ticks * TRACE_PER_RESIDENT_TICK : 0;
  const snapshot = residents * DISK_PER_RESIDENT_SNAPSHOT;
  const every = o.snapshotEvery;
  const snapshots = every === undefined ? Math.ceil(log / LOG_BYTES_PER_SNAPSHOT_BYTE) + snapshot : (every === 0 ? 1 : Math.ceil(ticks / every)) * snapshot;
  return log + trace + snapshots;
}

/** Free bytes where `dir` would be made (the nearest folder that exists), or null when that cannot be read. */
function freeBytes(dir: string): number | null {
  let at = resolve(dir);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    const fs = statfsSync(at);
    // A filesystem of no blocks (/proc, /sys) is no disk: the run's own check says it cannot be written.
    return fs.blocks === 0 ? null : fs.bavail * fs.bsize;
  } catch {
    return null;
  }
}

/**
 * Refuses a new town run that would fill the disk it writes to (a full disk stops a run, which
 * `--resume` continues once space is freed: this says so before it starts, naming the length flag).
 */
export function checkTownRunDisk(config: TownConfig, ticks: number, flags: TownRunFlags, o: TownRunDisk, free: number | null = freeBytes(o.dir)): void {
  const residents = config.agents.length + config.extraAgents;
  const needs = townRunDisk(residents, ticks, o);
  if (free === null || needs <= free) return;
  const perDay = ticksPerDay(config.clock);
  const every = o.snapshotEvery;
  const snapshots = every === undefined ? ", snapshots about a tenth of the log" : every === 0 ? "" : `, a snapshot every ${every === 1 ? "tick" : `${every} ticks`}`;
  throw new UsageError(
    `${flags.length ?? `${count(ticks)} ticks`}: ${count(residents)} residents over ${count(ticks / perDay, 1)} days write about ${gib(needs)} ` +
      `(~1.5 KB a resident-tick of log${o.trace ? " and as much of trace" : ""}, ~40 KB a resident a snapshot${snapshots}), ` +
      `more than the ${gib(free)} free where ${o.dir} goes; run fewer${every !== 0 ? ", keep fewer snapshots (--snapshot-every n, or 0 for the last tick only)" : ""}${o.trace ? ", or trace elsewhere (--trace none)" : ""}`,
  );
}

/**
 * Refuses an AURATown warm-up (`eval privacy|factual --warmup`, an experiment's `forks.warmup`)
 * the heap or the disk cannot hold, naming `label`: the default town runs `ticks` ticks (the
 * warm-up, and one a query for the factual benchmark) before its snapshots are taken, its log kept
 * under `dir` (no trace, one snapshot). `--warmup 100000000` ran until the heap or the disk gave out.
 */
export function checkTownWarmupFits(ticks: number, label: string, dir: string): void {
  checkTownRunFits(defaultTownConfig, ticks, { town: label, length: label });
  checkTownRunDisk(defaultTownConfig, ticks, { town: label, length: label }, { dir, snapshotEvery: 0, trace: false });
}
