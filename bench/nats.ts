// Distributed figures for `npm run bench` (issue 3): each beside its ceiling in the same run.
// Uses NATS_URL when set, else a private nats-server (JetStream, temp store) started here.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstream, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Draft, LogRecord } from "../events/record.ts";
import { createJetStreamEventStore, ensureLogStream, readJetStreamLog } from "../infra/jetstream/index.ts";
import { JetStreamJobQueue } from "../infra/jetStreamJobQueue.ts";
import { connectNats, subjects } from "../infra/nats.ts";
import type { Backend } from "../infra/backend.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { jetStreamWhere, remotePlacement } from "../services/distributed/episodes.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { jobsOf } from "../services/distributed/jobs.ts";
import { startTestNats } from "../test/natsServer.ts";
import { loadWorlds } from "../services/worlds.ts";

await loadWorlds();

export interface Row {
  readonly figure: string;
  readonly measured: string;
  readonly ceiling: string;
  readonly ratio: string;
  readonly target: string;
  readonly verdict: string;
}

const CLI = fileURLToPath(new URL("../services/cli/main.ts", import.meta.url));
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(x >= 10 ? 1 : 3));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (s: string) => process.stderr.write(`${s}\n`);
let nsCounter = 0;
const freshNs = (label: string) => `bench${process.pid}-${label}-${++nsCounter}`;

/** The records grouped as a run commits them: one group per tick (the header alone). */
function byTick(records: readonly LogRecord[]): LogRecord[][] {
  const groups: LogRecord[][] = [];
  let current = -2;
  for (const r of records) {
    if (r.tick !== current || r.type === "episode.started") groups.push([]);
    current = r.tick;
    groups.at(-1)!.push(r);
  }
  return groups;
}

/**
 * Raw ceiling: the same lines published one message per record with `Promise.all` in chunks of
 * 1000, acks awaited per chunk (what the kernel did before it batched). Returns where they went:
 * the replay ceiling reads them back.
 */
async function rawPublish(nc: NatsConnection, lines: readonly string[]): Promise<{ seconds: number; ns: string; episode: string }> {
  const ns = freshNs("raw");
  await ensureLogStream(nc, ns);
  const js = jetstream(nc);
  const subject = subjects.log(ns, "raw");
  const started = performance.now();
  for (let i = 0; i < lines.length; i += 1000) await Promise.all(lines.slice(i, i + 1000).map((l) => js.publish(subject, l)));
  return { seconds: (performance.now() - started) / 1000, ns, episode: "raw" };
}

/** Context: the same bytes grouped as the kernel groups them, one message per tick, each publish awaited. */
async function rawPublishBatches(nc: NatsConnection, batches: readonly string[]): Promise<number> {
  const ns = freshNs("rawbatch");
  await ensureLogStream(nc, ns);
  const js = jetstream(nc);
  const subject = subjects.log(ns, "raw");
  const started = performance.now();
  for (const body of batches) await js.publish(subject, body);
  return (performance.now() - started) / 1000;
}

/** Kernel path: the JetStream EventStore sealing the same drafts, one append and commit per tick, as a run does. */
export async function kernelPublish(nc: NatsConnection, records: readonly LogRecord[]): Promise<{ seconds: number; ns: string; episode: string }> {
  const ns = freshNs("kernel");
  const episode = records[0]!.episode;
  const store = await createJetStreamEventStore(nc, ns, episode, { episode });
  const ticks = byTick(records).map((group) => group.map((r): Draft => ({ type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause, v: r.v })));
  const started = performance.now();
  for (const drafts of ticks) {
    await store.append(drafts, { expectedSeq: store.head().seq });
    await store.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return { seconds, ns, episode };
}

/** Reads an episode's subject with an ordered consumer until `count` records were seen; seconds. */
async function timedRead(nc: NatsConnection, ns: string, episode: string, count: number, recordsIn: (m: JsMsg) => number): Promise<number> {
  const js = jetstream(nc);
  const stream = await ensureLogStream(nc, ns);
  const started = performance.now();
  const consumer = await js.consumers.get(stream, { filter_subjects: subjects.log(ns, episode) });
  let seen = 0;
  const messages = await consumer.consume({ max_messages: 1000 });
  for await (const m of messages) {
    seen += recordsIn(m);
    if (seen >= count) break;
  }
  return (performance.now() - started) / 1000;
}

/** Raw ceiling: one message per record, counting messages. */
const countMessage = (m: JsMsg): number => (m.data.length > 0 ? 1 : 0);
/** Context: the kernel's batch messages, splitting each and parsing every line. */
const parseBatch = (m: JsMsg): number => m.string().split("\n").filter((text) => (JSON.parse(text) as LogRecord).seq >= 0).length;

function startCli(args: string[], readyPattern: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString(); if (process.env.BENCH_DEBUG) process.stderr.write(d);
      if (readyPattern.test(err)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`probetown ${args[0]} exited ${code}: ${err}`)));
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc; null when unreadable. */
function cpuSecondsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/** The pid of the nats-server listening on `url`'s port (the private one this bench started). */
function serverPid(url: string): number | undefined {
  try {
    const port = new URL(url.replace(/^nats:/, "http:")).port;
    const pid = Number(execFileSync("pgrep", ["-f", `nats-server.*${port}`], { encoding: "utf8" }).trim().split("\n")[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

interface SweepRun {
  readonly seconds: number;
  /** CPU seconds used during the sweep by the workers, the NATS server (null: not ours) and this process. */
  readonly workersCpu: number;
  readonly serverCpu: number | null;
  readonly driverCpu: number;
}

const WARM_UP_MORNINGS = 40;
const MORNINGS = fileURLToPath(new URL("./mornings.ts", import.meta.url));

/**
 * The machine's own scaling, as context for the sweep row: the same mornings embedded (file log, no
 * NATS, nothing shared) in `processes` processes at once vs one. Seconds from the release of the
 * warm processes to the last one's end, and the CPU they spent.
 */
async function embeddedMornings(processes: number, episodes: number, dir: string): Promise<{ seconds: number; cpu: number }> {
  const each = episodes / processes;
  const children = Array.from({ length: processes }, (_, p) => spawn(process.execPath, [MORNINGS, String(1 + p * each), String(each), join(dir, `run${++nsCounter}-p${p}`), String(WARM_UP_MORNINGS)], { stdio: ["pipe", "pipe", "inherit"] }));
  const lines = children.map((child) => {
    let out = "";
    const ready = new Promise<void>((resolve) => child.stdout!.on("data", (d: Buffer) => { out += d.toString(); if (out.startsWith("ready\n")) resolve(); }));
    const done = new Promise<{ seconds: number; cpu: number }>((resolve, reject) =>
      child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`bench/mornings.ts exited ${code}`)))));
    return { ready, done };
  });
  await Promise.all(lines.map((l) => l.ready));
  const started = performance.now();
  for (const child of children) child.stdin!.end("go\n");
  const results = await Promise.all(lines.map((l) => l.done));
  return { seconds: (performance.now() - started) / 1000, cpu: results.reduce((sum, r) => sum + r.cpu, 0) };
}

async function sweep(nc: NatsConnection, url: string, workers: number, seeds: number): Promise<SweepRun> {
  const ns = freshNs(`sweep${workers}`);
  const queue = await JetStreamJobQueue.open(nc, ns);
  const children = await Promise.all(Array.from({ length: workers }, () => startCli(["worker", "--nats", url, "--namespace", ns], /: taking .*jobs from namespace/)));
  const spid = serverPid(url);
  const workersCpu = () => children.reduce((sum, c) => sum + (cpuSecondsOf(c.pid) ?? 0), 0);
  const morningsOf = (from: number, count: number) => jobsOf({ world: "auratown", seeds: Array.from({ length: count }, (_, i) => from + i), conditions: ["baseline"], ticks: 12, snapshotEvery: 4 });
  try {
    // Workers are long-lived processes: each pool first runs untimed warm-up mornings (other seeds),
    // so the timed sweep compares warm workers, not V8 compiling the code on the spare core.
    const warmUp = morningsOf(100_001, WARM_UP_MORNINGS * workers);
    await queue.submit(warmUp);
    for await (const outcome of queue.outcomes(warmUp.map((j) => j.id))) if (!outcome.ok) throw new Error(`sweep warm-up: ${outcome.id} failed`);
    const jobs = morningsOf(1, seeds);
    const [w0, s0, d0] = [workersCpu(), cpuSecondsOf(spid), process.cpuUsage()];
    const started = performance.now();
    await queue.submit(jobs);
    let failed = 0;
    for await (const outcome of queue.outcomes(jobs.map((j) => j.id))) if (!outcome.ok) failed++;
    if (failed > 0) throw new Error(`sweep: ${failed} episodes failed`);
    const seconds = (performance.now() - started) / 1000;
    const d = process.cpuUsage(d0);
    const s1 = cpuSecondsOf(spid);
    return { seconds, workersCpu: workersCpu() - w0, serverCpu: s0 === null || s1 === null ? null : s1 - s0, driverCpu: (d.user + d.system) / 1e6 };
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await queue.close();
  }
}

export async function natsRows(quick: boolean, sample: readonly LogRecord[]): Promise<Row[]> {
  const rows: Row[] = [];
  // Its own server: the bench runs outside vitest, so there is no shared test-run server to use.
  const server = await startTestNats({ own: true });
  const nc = await connectNats(server.url);
  try {
    log(`  NATS: ${process.env.NATS_URL ? `NATS_URL ${server.url}` : `private nats-server at ${server.url}`}`);
    // 1. Appends through the kernel (one message per tick) vs the raw ceiling of one message per
    //    record, Promise.all per 1000 (alternating runs); the raw publish of the kernel's own tick
    //    batches is shown beside it for context.
    const lines = sample.map((r) => JSON.stringify(r));
    const batches = byTick(sample).map((group) => group.map((r) => JSON.stringify(r)).join("\n"));
    const kernelTimes: number[] = [];
    const rawTimes: number[] = [];
    const rawBatchTimes: number[] = [];
    let lastKernel = { ns: "", episode: "" };
    let lastRaw = { ns: "", episode: "" };
    for (let i = 0; i < (quick ? 3 : 5); i++) {
      const k = await kernelPublish(nc, sample);
      kernelTimes.push(k.seconds);
      lastKernel = k;
      const r = await rawPublish(nc, lines);
      rawTimes.push(r.seconds);
      lastRaw = r;
      rawBatchTimes.push(await rawPublishBatches(nc, batches));
    }
    const kernel = sample.length / median(kernelTimes);
    const raw = sample.length / median(rawTimes);
    const rawBatch = sample.length / median(rawBatchTimes);
    log(`  JetStream append: kernel ${fmt(kernel)}/s vs raw per-record ${fmt(raw)}/s (raw per-tick batches ${fmt(rawBatch)}/s)`);
    rows.push({
      figure: `JetStream append through the kernel, ${sample.length} records of a 100-agent day (append + commit per tick = one message per tick (${batches.length}), Nats-Msg-Id, every publish fenced)`,
      measured: `${fmt(kernel)} events/s`,
      ceiling: `raw nats.js publish, one message per record, Promise.all per 1000: ${fmt(raw)} events/s (context, not the verdict: raw nats.js publish of the same ${batches.length} tick batches, one awaited per tick: ${fmt(rawBatch)} events/s)`,
      ratio: `${((kernel / raw) * 100).toFixed(0)}% of the ceiling`,
      target: "≥ 70% of the ceiling",
      verdict: kernel / raw >= 0.7 ? "met" : "**below target**",
    });

    // 2. Replay (read + validate the chain and catalogue) vs the raw ordered consumer over the same
    //    records one message per record (published by section 1's raw runs); the raw ordered
    //    consumer over the kernel's batch messages, splitting and parsing every line, for context.
    const readTimes: number[] = [];
    const rawReadTimes: number[] = [];
    const rawBatchReadTimes: number[] = [];
    for (let i = 0; i < (quick ? 3 : 5); i++) {
      const started = performance.now();
      const records = await readJetStreamLog(nc, lastKernel.ns, lastKernel.episode);
      readTimes.push((performance.now() - started) / 1000);
      if (records.length !== sample.length) throw new Error(`replay read ${records.length} of ${sample.length} records`);
      rawReadTimes.push(await timedRead(nc, lastRaw.ns, lastRaw.episode, sample.length, countMessage));
      rawBatchReadTimes.push(await timedRead(nc, lastKernel.ns, lastKernel.episode, sample.length, parseBatch));
    }
    const read = sample.length / median(readTimes);
    const rawR = sample.length / median(rawReadTimes);
    const rawBatchR = sample.length / median(rawBatchReadTimes);
    log(`  JetStream replay: kernel ${fmt(read)}/s vs raw per-record ${fmt(rawR)}/s (raw over the batches + JSON.parse ${fmt(rawBatchR)}/s)`);
    rows.push({
      figure: `Replay from JetStream: read + JSON + hash chain + catalogue check, ${sample.length} records stored as ${batches.length} tick messages`,
      measured: `${fmt(read)} events/s`,
      ceiling: `raw ordered consumer over one message per record, counting messages: ${fmt(rawR)} events/s (context, not the verdict: raw ordered consumer over the kernel's ${batches.length} batch messages, splitting + JSON.parse of every line: ${fmt(rawBatchR)} events/s)`,
      ratio: `${((read / rawR) * 100).toFixed(0)}% of the ceiling`,
      target: "≥ 70% of the ceiling",
      verdict: read / rawR >= 0.7 ? "met" : "**below target**",
    });

    // 3. One AURATown day with the actors in two actor-host processes vs embedded.
    const embeddedTimes: number[] = [];
    const spreadTimes: number[] = [];
    const requestsPerTick: number[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      embeddedTimes.push((await runEpisode({ world: "auratown", seed: 42, dir: `${process.env.TMPDIR ?? "/tmp"}/probetown-bench-day-${process.pid}-${i}`, trace: { exporter: "none" }, snapshotEvery: 0 })).seconds);
      const ns = freshNs("day");
      const episode = "auratown-s42-baseline";
      const hosts = [
        startCli(["actor-host", episode, "--nats", server.url, "--namespace", ns, "--actors", "agent/chen-mei,agent/lin-wei,agent/zhang-hao"], /waiting for episode/),
        startCli(["actor-host", episode, "--nats", server.url, "--namespace", ns, "--actors", "agent/liu-yang,agent/wang-jun,env/auratown"], /waiting for episode/),
      ];
      await Promise.all(hosts);
      // The requests the sequencer sends the hosts, counted where it sends them (a listener on the
      // actors' subjects would answer no one, and so turn a ping that finds no host yet into a timeout).
      const backend = distributedBackend(nc, ns, { actors: "nats" });
      let requests = 0;
      const counted: Backend = {
        ...backend,
        transports: {
          open: () => {
            const transport = backend.transports.open();
            const request = transport.request.bind(transport);
            transport.request = (subject, message, options) => {
              requests++;
              return request(subject, message, options);
            };
            return transport;
          },
        },
      };
      const result = await runEpisode({ world: "auratown", seed: 42, where: jetStreamWhere(ns), placement: remotePlacement(ns, "all"), trace: { exporter: "none" }, snapshotEvery: 0 }, counted);
      spreadTimes.push(result.seconds);
      requestsPerTick.push(requests / result.ticks);
    }
    const embedded = median(embeddedTimes);
    const spread = median(spreadTimes);
    const perTick = median(requestsPerTick);
    log(`  day over 3 processes: ${spread.toFixed(2)} s vs embedded ${embedded.toFixed(3)} s; ${perTick.toFixed(1)} requests to the hosts a tick`);
    rows.push({
      figure: "AURATown day (5 agents, 34 ticks), sequencer + 2 actor-host processes over NATS, log in JetStream",
      measured: `${spread.toFixed(2)} s (${perTick.toFixed(1)} requests to the hosts a tick, start and end included)`,
      ceiling: `embedded (files, in-process): ${embedded.toFixed(3)} s`,
      ratio: `${(spread / embedded).toFixed(1)}× embedded`,
      target: "— (reported)",
      verdict: "—",
    });

    // 4. A sweep of short episodes on 1 vs 2 worker processes (alternating, medians), with the CPU
    //    each side used: on 2 cores shared by the workers, nats-server and this process, the
    //    2-worker time cannot go below half the CPU they all spend.
    const episodes = quick ? 40 : 200;
    const ones: SweepRun[] = [];
    const twos: SweepRun[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      ones.push(await sweep(nc, server.url, 1, episodes));
      twos.push(await sweep(nc, server.url, 2, episodes));
    }
    const mid = <T extends { readonly seconds: number }>(runs: T[]): T => [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;
    const one = mid(ones);
    const two = mid(twos);
    const perEpisode = (run: SweepRun) =>
      `workers ${((run.workersCpu / episodes) * 1000).toFixed(1)} ms, nats-server ${run.serverCpu === null ? "?" : ((run.serverCpu / episodes) * 1000).toFixed(1)} ms, submitter ${((run.driverCpu / episodes) * 1000).toFixed(1)} ms`;
    const floor = two.serverCpu === null ? null : (two.workersCpu + two.serverCpu + two.driverCpu) / 2;
    log(`  sweep of ${episodes} mornings: 1 worker ${one.seconds.toFixed(2)} s, 2 workers ${two.seconds.toFixed(2)} s (CPU per episode, 1 worker: ${perEpisode(one)}; 2 workers: ${perEpisode(two)})`);
    // 5. The same mornings embedded in 1 vs 2 processes: how far 2 cores scale this work at all.
    const scratch = mkdtempSync(join(tmpdir(), "probetown-bench-mornings-"));
    const alone: { seconds: number; cpu: number }[] = [];
    const pair: { seconds: number; cpu: number }[] = [];
    try {
      for (let i = 0; i < (quick ? 1 : 3); i++) {
        alone.push(await embeddedMornings(1, episodes, scratch));
        pair.push(await embeddedMornings(2, episodes, scratch));
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    const one1 = mid(alone);
    const two1 = mid(pair);
    const scaling = two1.seconds / one1.seconds;
    log(`  embedded mornings: 1 process ${one1.seconds.toFixed(2)} s, 2 processes ${two1.seconds.toFixed(2)} s (${scaling.toFixed(2)}×)`);
    rows.push({
      figure: `Sweep: ${episodes} AURATown mornings (12 ticks, snapshot every 4), JetStream log and queue, 2 workers (median of ${twos.length}, alternating with 1 worker)`,
      measured: `${two.seconds.toFixed(2)} s (${fmt(episodes / two.seconds)} episodes/s); CPU per episode: ${perEpisode(two)}${floor === null ? "" : `; CPU floor on 2 cores: ${floor.toFixed(2)} s`}`,
      ceiling: `1 worker: ${one.seconds.toFixed(2)} s (${fmt(episodes / one.seconds)} episodes/s); CPU per episode: ${perEpisode(one)}`,
      ratio: `${(two.seconds / one.seconds).toFixed(2)}× the 1-worker time${floor === null ? "" : ` (CPU floor ${(floor / one.seconds).toFixed(2)}×)`}; this machine's own 2-process scaling of the same work: ${scaling.toFixed(2)}× (next row)`,
      target: "≤ 0.65× the 1-worker time",
      verdict: two.seconds / one.seconds <= 0.65 ? "met" : "**below target**",
    });
    rows.push({
      figure: `Context for the sweep row: the same ${episodes} mornings embedded (file log without fsync, no NATS, nothing shared), 2 processes of ${episodes / 2} vs 1 process (warm, median of ${pair.length})`,
      measured: `${two1.seconds.toFixed(2)} s; CPU per episode ${((two1.cpu / episodes) * 1000).toFixed(1)} ms`,
      ceiling: `1 process: ${one1.seconds.toFixed(2)} s; CPU per episode ${((one1.cpu / episodes) * 1000).toFixed(1)} ms (${(one1.cpu / one1.seconds).toFixed(2)} cores busy)`,
      ratio: `${scaling.toFixed(2)}× the 1-process time`,
      target: "— (the best a 2-worker sweep could do here)",
      verdict: "—",
    });
  } finally {
    await nc.close();
    await server.stop();
  }
  return rows;
}
