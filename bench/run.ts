// `npm run bench`: kernel throughput on this machine, each figure beside a ceiling measured in the
// same run, written to docs/benchmarks.md. Noisy machines: compare ratios, not absolute numbers.
// `--quick`: smaller sizes, docs untouched; `--nats-only`, `--cluster-only`, `--ui-only`, `--long-only`,
// `--scale-only`, `--verify-only`, `--tracing-only`, `--envprobe-only`: only those rows, printed.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { createActor, setup, assign, type AnyActorLogic } from "xstate";
import { recordActorLogic } from "../actors/actor.ts";
import type { Draft, LogRecord } from "../events/record.ts";
import { createFileEventStore, scanLog, segmentFiles } from "../infra/fileEventStore.ts";
import { runEpisode, type EpisodeResult } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { natsRows, type Row } from "./nats.ts";
import { loadWorlds } from "../services/worlds.ts";
import type { KernelEntries } from "../events/catalogue.ts";

await loadWorlds();

const quick = process.argv.includes("--quick");
const work = mkdtempSync(join(tmpdir(), "probetown-bench-"));
let n = 0;
const fresh = (label: string) => join(work, `${label}-${n++}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(x >= 10 ? 1 : 3));
const log = (s: string) => process.stderr.write(`${s}\n`);

const rows: Row[] = [];

async function day(agents: number): Promise<EpisodeResult> {
  const dir = fresh(`day${agents}`);
  return runEpisode({
    world: "auratown",
    seed: 42,
    dir,
    config: { extraAgents: agents - 5 },
    trace: { exporter: "none" },
    snapshotEvery: 0,
  });
}

function recordsOf(result: EpisodeResult): LogRecord[] {
  return scanLog(result.logDir, { validate: false }).records;
}

/** The bare ceiling: the same records serialised and written in the same batches, no kernel. */
function bareAppend(records: readonly LogRecord[], batch: number): number {
  const dir = fresh("bare");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "bare.jsonl");
  const fd = openSync(file, "a");
  const started = performance.now();
  for (let i = 0; i < records.length; i += batch) {
    let text = "";
    for (const r of records.slice(i, i + batch)) text += JSON.stringify(r) + "\n";
    writeSync(fd, text);
  }
  closeSync(fd);
  return (performance.now() - started) / 1000;
}

/** The kernel path: FileEventStore.append (seal, hash chain, encode, write) on the same drafts. */
async function kernelAppend(records: readonly LogRecord[], batch: number): Promise<number> {
  const drafts: Draft[] = records.map((r) => ({ type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause, v: r.v }));
  const store = createFileEventStore(join(fresh("kernel"), "log"), { episode: records[0]!.episode, fsync: "never" });
  const started = performance.now();
  // A commit per batch: the store writes a commit's records at once (one write, like the bare path's per batch).
  for (let i = 0; i < drafts.length; i += batch) {
    await store.append(drafts.slice(i, i + batch), { expectedSeq: store.head().seq });
    await store.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return seconds;
}

/**
 * The bare replay ceiling: read the same files and JSON.parse every line, each line decoded from
 * the bytes as scanLog does (decoding the whole file is ~2× slower once any line holds non-ASCII
 * text, which would flatter the kernel).
 */
function bareRead(logDir: string): number {
  const started = performance.now();
  let count = 0;
  for (const f of segmentFiles(logDir)) {
    const bytes = readFileSync(f);
    for (let start = 0; start < bytes.length; ) {
      const newline = bytes.indexOf(0x0a, start);
      const end = newline === -1 ? bytes.length : newline;
      if (end > start && JSON.parse(bytes.toString("utf8", start, end))) count++;
      start = end + 1;
    }
  }
  return (performance.now() - started) / 1000 / Math.max(count, 1);
}

/** Events per second through live XState actors of `logic` (1,000 of them, round robin, as a town's agents). */
function xstateRate(logic: AnyActorLogic, events: number): number {
  const actors = Array.from({ length: 1000 }, () => createActor(logic).start());
  const event = { type: "tick.phase", payload: { phase: "move" }, from: "episode", tick: 0, seq: 0 };
  const started = performance.now();
  for (let i = 0; i < events; i++) actors[i % actors.length]!.send(event);
  return events / ((performance.now() - started) / 1000);
}

/** A state machine with one trivial assign per event: XState's interpreter cost. */
const trivialMachine = setup({ types: { context: {} as { n: number }, events: {} as { type: "tick.phase" } } }).createMachine({
  context: { n: 0 },
  on: { "tick.phase": { actions: assign(({ context }) => ({ n: context.n + 1 })) } },
});

/** The record-handler logic AURATown's actors use (actors/actor.ts), with one trivial handler. */
const trivialRecordLogic = recordActorLogic<{ n: number }, undefined, KernelEntries, "tick.phase">({
  context: () => ({ n: 0 }),
  handlers: {
    "tick.phase": (context) => {
      context.n++;
      return [];
    },
  },
  valueOf: () => "running",
});

/** The cluster rows (bench/natsCluster.ts), or none when a 3-node cluster cannot be started here: said, not failed. */
async function clusterRowsIfAvailable(quick: boolean, sample: readonly LogRecord[]): Promise<Row[]> {
  try {
    const { clusterRows } = await import("./natsCluster.ts");
    return await clusterRows(quick, sample);
  } catch (error) {
    log(`  JetStream cluster: not measured (${(error as Error)?.message ?? String(error)})`);
    return [];
  }
}

async function main(): Promise<void> {
  log(`probetown bench${quick ? " (quick)" : ""} — temp dir ${work}`);
  if (process.argv.includes("--nats-only")) {
    // The distributed figures alone (printed, docs untouched): for tuning the NATS path.
    const natsOnly = await natsRows(quick, recordsOf(await day(100)));
    process.stdout.write(natsOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--scale-only")) {
    // The 1,000- and 10,000-agent days alone, each in its own process (printed, docs untouched).
    const { scaleOnly } = await import("./scale.ts");
    const scale = scaleOnly(work, log);
    process.stdout.write(scale.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--verify-only")) {
    // The verify figures alone (printed, docs untouched).
    const { verifyRows } = await import("./verify.ts");
    await day(5);
    const days: Record<number, EpisodeResult> = quick ? { 5: await day(5), 100: await day(100) } : { 5: await day(5), 1000: await day(1000) };
    const verifyOnly = await verifyRows(work, quick, log, days);
    process.stdout.write(verifyOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--tracing-only")) {
    // The tracing figures alone (printed, docs untouched).
    const { tracingRows } = await import("./tracing.ts");
    await day(5);
    const tracingOnly = await tracingRows(fresh, quick, log);
    process.stdout.write(tracingOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--cluster-only")) {
    // The JetStream cluster's figure alone (printed, docs untouched).
    const clusterOnly = await clusterRowsIfAvailable(quick, recordsOf(await day(100)));
    process.stdout.write(clusterOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--ui-only")) {
    // The dashboard's figures alone (printed, docs untouched).
    const { uiRows } = await import("./ui.ts");
    const uiOnly = await uiRows(work, quick, log);
    process.stdout.write(uiOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--envprobe-only")) {
    // The EnvProbe grid's rows alone (printed, docs untouched).
    const { envprobeGridRows } = await import("./envprobeGrid.ts");
    const gridOnly = await envprobeGridRows(work, quick, log);
    process.stdout.write(gridOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  if (process.argv.includes("--long-only")) {
    // The ten-day run and the snapshot policy alone (printed, docs untouched).
    const { longRunRows } = await import("./longRun.ts");
    const longOnly = await longRunRows(work, quick, log);
    process.stdout.write(longOnly.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`).join("\n") + "\n");
    rmSync(work, { recursive: true, force: true });
    return;
  }
  // Warm-up: JIT the whole path once.
  await day(5);

  // 1. AURATown days at several sizes.
  const sizes = quick ? [5, 25, 100] : [5, 25, 100, 1000];
  const perDay: Record<number, EpisodeResult> = {};
  for (const agents of sizes) {
    const repeats = agents <= 25 ? 7 : agents <= 100 ? 3 : 1;
    const results: EpisodeResult[] = [];
    for (let i = 0; i < repeats; i++) results.push(await day(agents));
    const result = results.sort((a, b) => a.seconds - b.seconds)[Math.floor(results.length / 2)]!;
    perDay[agents] = result;
    const agentTicks = (agents * result.ticks) / result.seconds;
    const bare = bareAppend(recordsOf(result), 64);
    log(`  ${agents} agents: ${result.seconds.toFixed(3)} s/day, ${fmt(agentTicks)} agent-ticks/s, ${result.records} records`);
    const target = agents === 5 ? "day < 0.1 s" : agents === 1000 ? "> 50,000 agent-ticks/s (day < 1 s)" : "—";
    const met = agents === 5 ? result.seconds < 0.1 : agents === 1000 ? agentTicks > 50_000 : null;
    rows.push({
      figure: `AURATown day, ${agents} agents (${result.records} records, median of ${repeats})`,
      measured: `${result.seconds.toFixed(3)} s · ${fmt(agentTicks)} agent-ticks/s`,
      ceiling: `bare write of the same records: ${bare.toFixed(3)} s`,
      ratio: `${(result.seconds / bare).toFixed(1)}× the bare write`,
      target,
      verdict: met === null ? "—" : met ? "met" : "**below target**",
    });
  }

  // 1b. Ten days of the five residents with default settings (snapshots by log growth), against the
  //     authors' simulator, and a snapshot every tick beside it (bench/longRun.ts).
  {
    const { longRunRows } = await import("./longRun.ts");
    rows.push(...(await longRunRows(work, quick, log)));
  }

  // 1c. A 10,000-agent day in its own process with Node's default heap, beside the 1,000-agent rate.
  if (!quick) {
    const { scaleRows } = await import("./scale.ts");
    rows.push(...scaleRows(work, (1000 * perDay[1000]!.ticks) / perDay[1000]!.seconds, log));
  }

  // 2. Appends: the kernel's append path against a bare loop appending the same records.
  const sample = recordsOf(perDay[100] ?? perDay[5]!);
  // Kernel and bare runs alternate so both see the same machine state.
  const kernelTimes: number[] = [];
  const bareTimes: number[] = [];
  for (let i = 0; i < 9; i++) {
    kernelTimes.push(await kernelAppend(sample, 64));
    bareTimes.push(bareAppend(sample, 64));
  }
  const kernel = median(kernelTimes);
  const bare = median(bareTimes);
  const appendRate = sample.length / kernel;
  rows.push({
    figure: `Event append, ${sample.length} records in batches of 64 (seal + hash chain + write)`,
    measured: `${fmt(appendRate)} events/s`,
    ceiling: `bare JSON.stringify + write: ${fmt(sample.length / bare)} events/s`,
    ratio: `${(kernel / bare).toFixed(2)}× the bare time`,
    target: "within 2× of the bare ceiling",
    verdict: kernel / bare <= 2 ? "met" : "**below target**",
  });
  log(`  append: kernel ${fmt(appendRate)}/s vs bare ${fmt(sample.length / bare)}/s`);

  // 3. Verify / replay: full re-execution vs a bare read+parse of the same log; the chain check alone.
  for (const agents of sizes.filter((a) => a === 5 || a === Math.max(...sizes))) {
    const result = perDay[agents]!;
    const times: number[] = [];
    for (let i = 0; i < (agents <= 25 ? 5 : 1); i++) times.push((await verifyEpisode(result.dir)).seconds);
    const seconds = median(times);
    const rate = result.records / seconds;
    const bareRate = 1 / bareRead(result.logDir);
    const scanStart = performance.now();
    scanLog(result.logDir);
    const scanRate = result.records / ((performance.now() - scanStart) / 1000);
    rows.push({
      figure: `verify (chain + catalogue + full replay + state hashes), ${agents} agents, ${result.records} records`,
      measured: `${fmt(rate)} events/s (${seconds.toFixed(3)} s)`,
      ceiling: `bare read + JSON.parse: ${fmt(bareRate)} events/s; chain + catalogue check alone: ${fmt(scanRate)} events/s`,
      ratio: `${(bareRate / rate).toFixed(1)}× slower than bare`,
      target: "> 200,000 events/s",
      verdict: rate > 200_000 ? "met" : "**below target**",
    });
    log(`  verify ${agents}: ${fmt(rate)} events/s (bare ${fmt(bareRate)}, chain-only ${fmt(scanRate)})`);
  }

  // 3b. verify against the run, --chain-only, and in spans on worker threads vs one thread (issue 26).
  {
    const { verifyRows } = await import("./verify.ts");
    rows.push(...(await verifyRows(work, quick, log, perDay)));
  }

  // 4. Tracing cost with a JSONL trace vs none, at 5 and 100 agents (bench/tracing.ts).
  {
    const { tracingRows } = await import("./tracing.ts");
    rows.push(...(await tracingRows(fresh, quick, log)));
  }

  // 5. Distributed: JetStream appends and replay, a day over three processes, a sweep on 1 vs 2 workers.
  rows.push(...(await natsRows(quick, sample)));
  // 5a. What an R3 log stream costs against R1, on a 3-node cluster (skipped when one cannot start).
  rows.push(...(await clusterRowsIfAvailable(quick, sample)));

  // 5b. EnvProbe: the paper's full grid embedded on every core (worker threads), every log written,
  // compact logs against version-1 logs in the same run (bench/envprobeGrid.ts).
  {
    const { envprobeGridRows } = await import("./envprobeGrid.ts");
    rows.push(...(await envprobeGridRows(work, quick, log)));
  }

  // 5c. The local model (issue 24), when `probetown llm install` has put it in the cache.
  if (!quick) {
    const { localModelRows } = await import("./localModel.ts");
    const local = await localModelRows();
    if (local === null) log("  local model: not installed (npm run probetown -- llm install), no rows");
    for (const [figure, measured] of local?.rows ?? []) rows.push({ figure: `local model ${local!.model}: ${figure}`, measured, ceiling: "—", ratio: "—", target: "—", verdict: "—" });
  }

  // 5d. The dashboard in Chromium: an episode view's first paint and its scrubber over a large day,
  //     and a sweep report over the paper grid's results (issue 25).
  {
    const { uiRows } = await import("./ui.ts");
    rows.push(...(await uiRows(work, quick, log)));
  }

  // 6. Context: what XState itself costs per event on this machine.
  const machineRate = xstateRate(trivialMachine, 200_000);
  const recordRate = xstateRate(trivialRecordLogic, 200_000);
  rows.push({
    figure: "XState 5 live actors (1,000, round robin), trivial handler per event (context)",
    measured: `record-handler transition logic (AURATown's agents and environment): ${fmt(recordRate)} events/s`,
    ceiling: `state machine with one assign: ${fmt(machineRate)} events/s`,
    ratio: `${(recordRate / machineRate).toFixed(1)}× the machine's rate`,
    target: "—",
    verdict: "—",
  });

  const rss = process.memoryUsage().rss / 2 ** 20;
  const table = ["| figure | measured | ceiling in the same run | ratio | issue target | verdict |", "|---|---|---|---|---|---|", ...rows.map((r) => `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio} | ${r.target} | ${r.verdict} |`)].join("\n");
  const generated = [
    "<!-- generated by `npm run bench` (bench/run.ts); the notes below the table are kept by hand -->",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; peak RSS of the bench process ${Math.round(rss)} MiB.`,
    "Command: `npm run bench` (embedded default: file log with fsync at each tick commit, in-process actors, tracing off unless stated, snapshot at the last tick only except where the ten-day rows say the default policy; the JetStream / NATS rows use a private nats-server from PATH — Debian's 2.9, file storage — started by the bench, or `NATS_URL`).",
    "",
    table,
    "<!-- end generated -->",
  ].join("\n");
  const path = join(import.meta.dirname, "..", "docs", "benchmarks.md");
  let doc: string;
  try {
    doc = readFileSync(path, "utf8");
  } catch {
    doc = "# Benchmarks\n\n<!-- generated --><!-- end generated -->\n";
  }
  const start = doc.indexOf("<!-- generated");
  const end = doc.indexOf("<!-- end generated -->");
  doc = start === -1 || end === -1 ? `${doc}\n${generated}\n` : doc.slice(0, start) + generated + doc.slice(end + "<!-- end generated -->".length);
  if (!quick) writeFileSync(path, doc);
  process.stdout.write(`${table}\n`);
  rmSync(work, { recursive: true, force: true });
}

await main();
