// Tracing cost for `npm run bench` (issue 26): AURATown days traced into a JSONL file against the
// same days untraced, at 5 and 100 agents in one run, and a 100-agent day whose trace is sampled
// out (what a large run's default sampler costs the runs it skips). Traced and untraced days
// alternate so both see the same machine state; the per-span cost is the time added divided by the
// spans written. Each ratio is given in wall time (the day's own `seconds`: log fsyncs included)
// and in the process's CPU time, which other load on a shared machine disturbs less.
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

/** One day of `agents` residents, traced into `<dir>/trace.jsonl` or not; its seconds, CPU seconds and trace file. */
async function day(dir: string, agents: number, traced: boolean): Promise<{ seconds: number; cpu: number; trace: string }> {
  const trace = join(dir, "trace.jsonl");
  const before = process.cpuUsage();
  const result = await runEpisode({
    world: "auratown",
    seed: 42,
    dir,
    config: { extraAgents: agents - 5 },
    trace: traced ? { exporter: "jsonl", file: trace } : { exporter: "none" },
    snapshotEvery: 0,
  });
  const cpu = process.cpuUsage(before);
  return { seconds: result.seconds, cpu: (cpu.user + cpu.system) / 1e6, trace };
}

export const TRACING_TARGET = 1.15;

/** The tracing rows: for each case, traced vs untraced (median of alternating repeats) and µs per span. */
export async function tracingRows(fresh: (label: string) => string, quick: boolean, log: (s: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  const sampler = process.env["OTEL_TRACES_SAMPLER"];
  const cases = [
    { agents: 5, sampler },
    { agents: 100, sampler },
    { agents: 100, sampler: "always_off" },
  ];
  for (const c of cases) {
    const on: number[] = [];
    const off: number[] = [];
    const cpuOn: number[] = [];
    const cpuOff: number[] = [];
    let spans = 0;
    const repeats = quick ? 3 : c.agents === 5 ? 9 : 5;
    if (c.sampler === undefined) delete process.env["OTEL_TRACES_SAMPLER"];
    else process.env["OTEL_TRACES_SAMPLER"] = c.sampler;
    for (let i = 0; i < repeats; i++) {
      const untraced = await day(fresh(`untraced${c.agents}`), c.agents, false);
      off.push(untraced.seconds);
      cpuOff.push(untraced.cpu);
      const traced = await day(fresh(`traced${c.agents}`), c.agents, true);
      on.push(traced.seconds);
      cpuOn.push(traced.cpu);
      spans = spansIn(traced.trace);
    }
    const traced = median(on);
    const untraced = median(off);
    const ratio = traced / untraced;
    const cpuRatio = median(cpuOn) / median(cpuOff);
    const perSpan = spans === 0 ? null : ((traced - untraced) / spans) * 1e6;
    const cpuPerSpan = spans === 0 ? null : ((median(cpuOn) - median(cpuOff)) / spans) * 1e6;
    const sampled = c.sampler === undefined ? "" : `, OTEL_TRACES_SAMPLER=${c.sampler}`;
    log(`  tracing ${c.agents}${sampled}: on ${traced.toFixed(3)} s, off ${untraced.toFixed(3)} s, ${ratio.toFixed(2)}× (CPU ${cpuRatio.toFixed(2)}×), ${spans} spans, ${perSpan?.toFixed(1) ?? "—"} µs per span (CPU ${cpuPerSpan?.toFixed(1) ?? "—"})`);
    rows.push({
      figure: `Tracing on (JSONL exporter${sampled}, ${spans} spans written: one per tick and per delivered event), ${c.agents}-agent day, median of ${repeats}`,
      measured: `${traced.toFixed(3)} s${perSpan === null ? "" : ` (+${perSpan.toFixed(1)} µs per span; CPU +${cpuPerSpan!.toFixed(1)} µs)`}`,
      ceiling: `tracing off: ${untraced.toFixed(3)} s`,
      ratio: `${ratio.toFixed(2)}× tracing off (CPU time ${cpuRatio.toFixed(2)}×)`,
      target: `≤ ${TRACING_TARGET}×`,
      verdict: ratio <= TRACING_TARGET ? "met" : "**below target**",
    });
  }
  if (sampler === undefined) delete process.env["OTEL_TRACES_SAMPLER"];
  else process.env["OTEL_TRACES_SAMPLER"] = sampler;
  return rows;
}
