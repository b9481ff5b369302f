// Tracing cost for `npm run bench` (issue 26): AURATown days traced into a JSONL file against the
// same days untraced, at 5 and 100 agents in one run. Traced and untraced days alternate so both
// see the same machine state; the per-span cost is the time added divided by the spans written.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runEpisode } from "../services/kernel/episodes.ts";
import type { Row } from "./nats.ts";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Lines (spans) in a JSONL trace file. */
function spansIn(file: string): number {
  const text = readFileSync(file, "utf8");
  let lines = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return lines;
}

/** One day of `agents` residents, traced into `<dir>/trace.jsonl` or not; its seconds and trace file. */
async function day(dir: string, agents: number, traced: boolean): Promise<{ seconds: number; trace: string }> {
  const trace = join(dir, "trace.jsonl");
  const result = await runEpisode({
    world: "auratown",
    seed: 42,
    dir,
    config: { extraAgents: agents - 5 },
    trace: traced ? { exporter: "jsonl", file: trace } : { exporter: "none" },
    snapshotEvery: 0,
  });
  return { seconds: result.seconds, trace };
}

export const TRACING_TARGET = 1.15;

/** The tracing rows: for each size, traced vs untraced (median of alternating repeats) and µs per span. */
export async function tracingRows(fresh: (label: string) => string, quick: boolean, log: (s: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const sampler = process.env["OTEL_TRACES_SAMPLER"];
  for (const agents of [5, 100]) {
    const on: number[] = [];
    const off: number[] = [];
    let spans = 0;
    const repeats = quick ? 3 : agents === 5 ? 9 : 5;
    for (let i = 0; i < repeats; i++) {
      off.push((await day(fresh(`untraced${agents}`), agents, false)).seconds);
      const traced = await day(fresh(`traced${agents}`), agents, true);
      on.push(traced.seconds);
      spans = spansIn(traced.trace);
    }
    const traced = median(on);
    const untraced = median(off);
    const ratio = traced / untraced;
    const perSpan = spans === 0 ? 0 : ((traced - untraced) / spans) * 1e6;
    log(`  tracing ${agents}: on ${traced.toFixed(3)} s, off ${untraced.toFixed(3)} s, ${ratio.toFixed(2)}×, ${spans} spans, ${perSpan.toFixed(1)} µs per span`);
    rows.push({
      figure: `Tracing on (JSONL exporter${sampler === undefined ? "" : `, OTEL_TRACES_SAMPLER=${sampler}`}, ${spans} spans written: one per tick and per delivered event), ${agents}-agent day, median of ${repeats}`,
      measured: `${traced.toFixed(3)} s (${perSpan.toFixed(1)} µs per span)`,
      ceiling: `tracing off: ${untraced.toFixed(3)} s`,
      ratio: `${ratio.toFixed(2)}× tracing off`,
      target: `≤ ${TRACING_TARGET}×`,
      verdict: ratio <= TRACING_TARGET ? "met" : "**below target**",
    });
  }
  return rows;
}
