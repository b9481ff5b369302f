// What an AURATown run needs of the heap, checked before it runs: a town or a length the heap
// cannot hold died in V8's out-of-memory abort (exit 134) after minutes or hours of running
// (`--agents 100000000` at once, `--days 1000000` of five residents about an hour in), instead of
// being refused up front, naming the flag, what it needs and the limit (exit 2).
import { totalmem } from "node:os";
import { getHeapStatistics } from "node:v8";
import type { TownConfig } from "../../actors/auratown/config.ts";
import { ticksPerDay } from "../../actors/auratown/town.ts";
import { UsageError } from "../replay.ts";

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
