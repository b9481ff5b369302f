// Distributed figures for `npm run bench` (issue 3): each beside its ceiling in the same run.
// Uses NATS_URL when set, else a private nats-server (JetStream, temp store) started here.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Draft, LogRecord } from "../events/record.ts";
import { createJetStreamEventStore, ensureLogStream, readJetStreamLog } from "../infra/jetStreamEventStore.ts";
import { JetStreamJobQueue } from "../infra/jetStreamJobQueue.ts";
import { connectNats, subjects } from "../infra/nats.ts";
import { distributedLayer } from "../infra/natsLayers.ts";
import { jetStreamWhere, remotePlacement } from "../services/distributed.ts";
import { runEpisode, runEpisodeEffect } from "../services/episodes.ts";
import { jobsOf } from "../services/jobs.ts";
import { startTestNats } from "../test/natsServer.ts";

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

/** Raw ceiling: the same lines published with `Promise.all` in chunks of 1000, acks awaited per chunk. */
async function rawPublish(nc: NatsConnection, lines: readonly string[]): Promise<number> {
  const ns = freshNs("raw");
  await ensureLogStream(nc, ns);
  const js = jetstream(nc);
  const subject = subjects.log(ns, "raw");
  const started = performance.now();
  for (let i = 0; i < lines.length; i += 1000) await Promise.all(lines.slice(i, i + 1000).map((l) => js.publish(subject, l)));
  return (performance.now() - started) / 1000;
}

/** Kernel path: the JetStream EventStore sealing the same drafts, one append and commit per tick, as a run does. */
async function kernelPublish(nc: NatsConnection, records: readonly LogRecord[]): Promise<{ seconds: number; ns: string; episode: string }> {
  const ns = freshNs("kernel");
  const episode = records[0]!.episode;
  const store = await createJetStreamEventStore(nc, ns, episode, { episode });
  const byTick: Draft[][] = [];
  let current = -2;
  for (const r of records) {
    if (r.tick !== current || r.type === "episode.started") byTick.push([]);
    current = r.tick;
    byTick.at(-1)!.push({ type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause, v: r.v });
  }
  const started = performance.now();
  for (const drafts of byTick) {
    await store.append(drafts, { expectedSeq: store.head().seq });
    await store.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return { seconds, ns, episode };
}

/** Raw ceiling: an ordered consumer over the same subject, counting messages. */
async function rawRead(nc: NatsConnection, ns: string, episode: string, count: number): Promise<number> {
  const js = jetstream(nc);
  const stream = await ensureLogStream(nc, ns);
  const started = performance.now();
  const consumer = await js.consumers.get(stream, { filter_subjects: subjects.log(ns, episode) });
  let seen = 0;
  const messages = await consumer.consume({ max_messages: 1000 });
  for await (const m of messages) {
    if (m.data.length > 0) seen++;
    if (seen >= count) break;
  }
  return (performance.now() - started) / 1000;
}

function startCli(args: string[], readyPattern: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      if (readyPattern.test(err)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`probetown ${args[0]} exited ${code}: ${err}`)));
  });
}

async function sweep(nc: NatsConnection, url: string, workers: number, seeds: number): Promise<number> {
  const ns = freshNs(`sweep${workers}`);
  const queue = await JetStreamJobQueue.open(nc, ns);
  const children = await Promise.all(Array.from({ length: workers }, () => startCli(["worker", "--nats", url, "--namespace", ns], /taking episode jobs/)));
  try {
    const jobs = jobsOf({ world: "auratown", seeds: Array.from({ length: seeds }, (_, i) => i + 1), conditions: ["baseline"], ticks: 12, snapshotEvery: 4 });
    const started = performance.now();
    await queue.submit(jobs);
    let failed = 0;
    for await (const outcome of queue.outcomes(jobs.map((j) => j.id))) if (!outcome.ok) failed++;
    if (failed > 0) throw new Error(`sweep: ${failed} episodes failed`);
    return (performance.now() - started) / 1000;
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await queue.close();
  }
}

export async function natsRows(quick: boolean, sample: readonly LogRecord[]): Promise<Row[]> {
  const rows: Row[] = [];
  const server = await startTestNats();
  const nc = await connectNats(server.url);
  try {
    log(`  NATS: ${process.env.NATS_URL ? `NATS_URL ${server.url}` : `private nats-server at ${server.url}`}`);
    // 1. Appends through the kernel vs the raw batched-publish ceiling (alternating runs).
    const lines = sample.map((r) => JSON.stringify(r));
    const kernelTimes: number[] = [];
    const rawTimes: number[] = [];
    let lastKernel = { ns: "", episode: "" };
    for (let i = 0; i < (quick ? 3 : 5); i++) {
      const k = await kernelPublish(nc, sample);
      kernelTimes.push(k.seconds);
      lastKernel = k;
      rawTimes.push(await rawPublish(nc, lines));
    }
    const kernel = sample.length / median(kernelTimes);
    const raw = sample.length / median(rawTimes);
    log(`  JetStream append: kernel ${fmt(kernel)}/s vs raw ${fmt(raw)}/s`);
    rows.push({
      figure: `JetStream append through the kernel, ${sample.length} records of a 100-agent day (append + commit per tick, Nats-Msg-Id, fencing)`,
      measured: `${fmt(kernel)} events/s`,
      ceiling: `raw nats.js publish, Promise.all per 1000: ${fmt(raw)} events/s`,
      ratio: `${((kernel / raw) * 100).toFixed(0)}% of the ceiling`,
      target: "≥ 70% of the ceiling",
      verdict: kernel / raw >= 0.7 ? "met" : "**below target**",
    });

    // 2. Replay (read + validate the chain and catalogue) vs the raw ordered consumer.
    const readTimes: number[] = [];
    const rawReadTimes: number[] = [];
    for (let i = 0; i < (quick ? 3 : 5); i++) {
      const started = performance.now();
      const records = await readJetStreamLog(nc, lastKernel.ns, lastKernel.episode);
      readTimes.push((performance.now() - started) / 1000);
      if (records.length !== sample.length) throw new Error(`replay read ${records.length} of ${sample.length} records`);
      rawReadTimes.push(await rawRead(nc, lastKernel.ns, lastKernel.episode, sample.length));
    }
    const read = sample.length / median(readTimes);
    const rawR = sample.length / median(rawReadTimes);
    log(`  JetStream replay: kernel ${fmt(read)}/s vs raw ${fmt(rawR)}/s`);
    rows.push({
      figure: `Replay from JetStream: read + JSON + hash chain + catalogue check, ${sample.length} records`,
      measured: `${fmt(read)} events/s`,
      ceiling: `raw ordered consumer, counting messages: ${fmt(rawR)} events/s`,
      ratio: `${((read / rawR) * 100).toFixed(0)}% of the ceiling`,
      target: "≥ 70% of the ceiling",
      verdict: read / rawR >= 0.7 ? "met" : "**below target**",
    });

    // 3. One AURATown day with the actors in two actor-host processes vs embedded.
    const embeddedTimes: number[] = [];
    const spreadTimes: number[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      embeddedTimes.push((await runEpisode({ world: "auratown", seed: 42, dir: `${process.env.TMPDIR ?? "/tmp"}/probetown-bench-day-${process.pid}-${i}`, trace: { exporter: "none" }, snapshotEvery: 0 })).seconds);
      const ns = freshNs("day");
      const episode = "auratown-s42-baseline";
      const hosts = [
        startCli(["actor-host", episode, "--nats", server.url, "--namespace", ns, "--actors", "agent/chen-mei,agent/lin-wei,agent/zhang-hao"], /waiting for episode/),
        startCli(["actor-host", episode, "--nats", server.url, "--namespace", ns, "--actors", "agent/liu-yang,agent/wang-jun,env/auratown"], /waiting for episode/),
      ];
      await Promise.all(hosts);
      const result = await Effect.runPromise(
        runEpisodeEffect({ world: "auratown", seed: 42, where: jetStreamWhere(ns), placement: remotePlacement(ns, "all"), trace: { exporter: "none" }, snapshotEvery: 0 }).pipe(Effect.provide(distributedLayer(nc, ns, { actors: "nats" }))),
      );
      spreadTimes.push(result.seconds);
    }
    const embedded = median(embeddedTimes);
    const spread = median(spreadTimes);
    log(`  day over 3 processes: ${spread.toFixed(2)} s vs embedded ${embedded.toFixed(3)} s`);
    rows.push({
      figure: "AURATown day (5 agents, 34 ticks), sequencer + 2 actor-host processes over NATS, log in JetStream",
      measured: `${spread.toFixed(2)} s`,
      ceiling: `embedded (files, in-process): ${embedded.toFixed(3)} s`,
      ratio: `${(spread / embedded).toFixed(0)}× embedded`,
      target: "— (reported)",
      verdict: "—",
    });

    // 4. A sweep of short episodes on 1 vs 2 worker processes.
    const episodes = quick ? 40 : 200;
    const one = await sweep(nc, server.url, 1, episodes);
    const two = await sweep(nc, server.url, 2, episodes);
    log(`  sweep of ${episodes} mornings: 1 worker ${one.toFixed(1)} s, 2 workers ${two.toFixed(1)} s`);
    rows.push({
      figure: `Sweep: ${episodes} AURATown mornings (12 ticks, snapshot every 4), JetStream log and queue, 2 workers`,
      measured: `${two.toFixed(1)} s (${fmt(episodes / two)} episodes/s)`,
      ceiling: `1 worker: ${one.toFixed(1)} s (${fmt(episodes / one)} episodes/s)`,
      ratio: `${(two / one).toFixed(2)}× the 1-worker time`,
      target: "≤ 0.65× the 1-worker time",
      verdict: two / one <= 0.65 ? "met" : "**below target**",
    });
  } finally {
    await nc.close();
    await server.stop();
  }
  return rows;
}
