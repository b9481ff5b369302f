// `npm run bench` rows for `verify` (issue 26): a verify's time against the run that wrote the log,
// `verify --chain-only` against a bare read + parse of the same log, and a verify in spans on
// worker threads against one thread on the same log with snapshots inside it, all in this run.
// `npm run bench -- --verify-only` prints these rows alone (docs untouched).
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { segmentFiles } from "../infra/fileEventStore.ts";
import { runEpisode, type EpisodeResult } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import type { Row } from "./nats.ts";
import { PARALLEL_FROM_RECORDS } from "../services/kernel/verifySpans.ts";

/** A bench row, as the other rows are. */
export type VerifyRow = Row;

const TARGET = 200_000;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(x >= 10 ? 1 : 3));
const verdict = (rate: number) => (rate > TARGET ? "met" : "**below target**");

/** Seconds to read a log's segments and JSON.parse every line (decoded line by line, as the scan does). */
function bareRead(logDir: string): number {
  const started = performance.now();
  for (const f of segmentFiles(logDir)) {
    const bytes = readFileSync(f);
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline === -1 ? bytes.length : newline;
      if (end > start) JSON.parse(bytes.toString("utf8", start, end));
      start = end + 1;
    }
  }
  return (performance.now() - started) / 1000;
}

/** A day of `agents` AURATown agents, `days` long, with a snapshot every `every` ticks. */
async function dayWithSnapshots(work: string, agents: number, days: number, every: number): Promise<EpisodeResult> {
  return runEpisode({ world: "auratown", seed: 42, dir: join(work, `verify-${agents}x${days}-every${every}`), config: { extraAgents: agents - 5 }, ticks: 34 * days, trace: { exporter: "none" }, snapshotEvery: every });
}

/**
 * The verify rows. `days`: the bench's AURATown days by size (written with a snapshot at the last
 * tick only, as a large town's run keeps them), of which the 5-agent one and the largest are used.
 */
export async function verifyRows(work: string, quick: boolean, log: (s: string) => void, days: Readonly<Record<number, EpisodeResult>>): Promise<VerifyRow[]> {
  const rows: VerifyRow[] = [];
  const sizes = Object.keys(days).map(Number);
  for (const agents of sizes.filter((a) => a === 5 || a === Math.max(...sizes))) {
    const day = days[agents]!;
    const repeats = agents <= 25 ? 5 : 3;
    const full: number[] = [];
    const chain: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < repeats; i++) {
      full.push((await verifyEpisode(day.dir, { threads: 1 })).seconds);
      chain.push((await verifyEpisode(day.dir, { chainOnly: true })).seconds);
      bare.push(bareRead(day.logDir));
    }
    const verifySeconds = median(full);
    const chainRate = day.records / median(chain);
    const bareRate = day.records / median(bare);
    rows.push({
      figure: `verify against the run that wrote the log, ${agents}-agent day (${day.records} records, one thread)`,
      measured: `verify ${verifySeconds.toFixed(3)} s (${fmt(day.records / verifySeconds)} events/s)`,
      ceiling: `the run: ${day.seconds.toFixed(3)} s`,
      ratio: `${(verifySeconds / day.seconds).toFixed(2)}× the run's time`,
      target: `> ${fmt(TARGET)} events/s`,
      verdict: verdict(day.records / verifySeconds),
    });
    rows.push({
      figure: `verify --chain-only (chain, envelopes, catalogue, tick sequence; no replay), ${agents}-agent day`,
      measured: `${fmt(chainRate)} events/s (${median(chain).toFixed(3)} s)`,
      ceiling: `bare read + JSON.parse: ${fmt(bareRate)} events/s`,
      ratio: `${(bareRate / chainRate).toFixed(1)}× the bare time`,
      target: `> ${fmt(TARGET)} events/s`,
      verdict: verdict(chainRate),
    });
    log(`  verify ${agents}: ${verifySeconds.toFixed(3)} s vs run ${day.seconds.toFixed(3)} s; chain-only ${fmt(chainRate)}/s (bare ${fmt(bareRate)}/s)`);
  }

  // In spans on worker threads against one thread, on logs with snapshots inside them; runs alternate.
  const threads = availableParallelism();
  const logs = quick ? [[100, 1, 1]] : [[100, 1, 1], [1000, 1, 4], [1000, 3, 17]];
  for (const [agents, n, every] of logs as [number, number, number][]) {
    const day = await dayWithSnapshots(work, agents, n, every);
    const one: number[] = [];
    const spans: number[] = [];
    // CPU seconds of the whole process (every thread): what the spans cost beyond one thread's
    // work, whatever else the machine runs; wall-clock time shows the gain only with idle cores.
    const oneCpu: number[] = [];
    const spansCpu: number[] = [];
    const cpu = (): number => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    };
    // Other work on the machine takes the cores the worker threads would use: said beside the figure.
    const load = loadavg()[0]!;
    for (let i = 0; i < (agents <= 100 ? 5 : 3); i++) {
      let before = cpu();
      one.push((await verifyEpisode(day.dir, { threads: 1 })).seconds);
      oneCpu.push(cpu() - before);
      // From 0 records: in spans whatever the size, to measure where the default threshold should be.
      before = cpu();
      spans.push((await verifyEpisode(day.dir, { threads, spans: { from: 0 } })).seconds);
      spansCpu.push(cpu() - before);
    }
    const a = median(spans);
    const b = median(one);
    const rate = day.records / a;
    rows.push({
      figure: `verify in spans on ${threads} threads vs one thread, ${agents} agents × ${n} day${n === 1 ? "" : "s"} (${day.records} records, a snapshot every ${every} tick${every === 1 ? "" : "s"})`,
      measured: `${a.toFixed(3)} s (${fmt(rate)} events/s)`,
      ceiling: `one thread: ${b.toFixed(3)} s (${fmt(day.records / b)} events/s); load average ${load.toFixed(1)} on ${threads} cores before`,
      ratio: `${(b / a).toFixed(2)}× one thread's speed, ${(median(spansCpu) / median(oneCpu)).toFixed(2)}× its CPU time (${median(spansCpu).toFixed(2)} vs ${median(oneCpu).toFixed(2)} CPU s)${day.records < PARALLEL_FROM_RECORDS ? `; below ${fmt(PARALLEL_FROM_RECORDS)} records verify uses one thread` : ""}`,
      target: `> ${fmt(TARGET)} events/s`,
      verdict: verdict(rate),
    });
    log(`  verify in spans ${agents}×${n}: ${a.toFixed(3)} s vs one thread ${b.toFixed(3)} s; CPU ${median(spansCpu).toFixed(2)} vs ${median(oneCpu).toFixed(2)} s (${day.records} records)`);
  }
  return rows;
}
