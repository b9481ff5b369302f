// A sweep over a 3-node JetStream cluster (docs/distributed.md, "A JetStream cluster"): its streams
// and buckets kept on all three servers (R3, `--nats-replicas 3` / PROBETOWN_NATS_REPLICAS), and
// the server that leads the log stream killed (SIGKILL) mid-sweep, then started again. Every
// episode completes once, its log holds each record once, equals the embedded run and verifies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { LogRecord } from "../events/record.ts";
import { connectNats, NATS_REPLICAS_ENV } from "../infra/nats.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { jobQueueNames } from "../infra/jetStreamJobQueue.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { frozenWhen, logRecords, runCli, startCli, sweepFinished, tempDir, until, withoutMetaLine } from "./helpers.ts";
import { startNatsCluster, type NatsCluster } from "./natsCluster.ts";
import { startTestNats } from "./natsServer.ts";

let cluster: NatsCluster;
let nc: NatsConnection;

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connectNats(cluster.urls[0]!, { name: "nats-cluster-test" });
}, 90_000);

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await cluster?.stop();
});

const readLog = (ns: string, episode: string): Promise<LogRecord[]> => distributedBackend(nc, ns).eventStores.read(episode);

const embeddedLog = async (seed: number, ticks: number): Promise<LogRecord[]> => {
  const r = await runEpisode({ world: "auratown", seed, ticks, dir: join(tempDir("embedded"), "ep"), trace: { exporter: "none" } });
  return logRecords(r.dir);
};

interface SweepReport { ok: number; failed: number; outcomes: { id: string; ok: boolean; attempt: number; logRecords?: number; error?: string }[] }

describe("a JetStream cluster", () => {
  it("a sweep with R3 streams over 3 servers: the log stream's leader killed mid-sweep and restarted, every episode completes once, with each record once, equal to the embedded run, and verifies", async () => {
    const ns = `cluster${process.pid}`;
    const seeds = [41, 42, 43, 44];
    const ticks = 34;
    const [a, b, c] = cluster.urls as [string, string, string];
    // The sweep asks for R3 by its flag, the workers by the environment (as `sweep --workers` passes it on).
    const sweep = startCli(["sweep", "auratown", "--seeds", "41-44", "--ticks", String(ticks), "--snapshot-every", "4", "--nats", a, "--namespace", ns, "--nats-replicas", "3", "--json"]);
    const worker = (url: string) => startCli(["worker", "--nats", url, "--namespace", ns, "--ack-wait", "2000", "--lock-ttl", "2000"], { [NATS_REPLICAS_ENV]: "3" });
    const workers = [worker(b), worker(c)];
    try {
      const stream = `PT_LOG_${ns}`;
      const jsm = await jetstreamManager(nc);
      // Mid-sweep: the first episode's log has started, looked at while the workers are frozen.
      await until(async () => (await readLog(ns, "auratown-s41-baseline").catch(() => [])).length > 0, "the first episode's log", 60_000);
      await frozenWhen(workers.map((w) => w.child), async () => (await readLog(ns, "auratown-s41-baseline")).length > 100, "100 records of auratown-s41-baseline");

      // Every stream and bucket the sweep made is kept on the three servers.
      const names = [stream, jobQueueNames(ns).jobs, jobQueueNames(ns).results, `KV_pt_locks_${ns}`, `KV_pt_snapidx_${ns}`, `OBJ_pt_snap_${ns}`];
      for (const name of names) expect((await jsm.streams.info(name)).config.num_replicas, name).toBe(3);

      const leaderName = (await jsm.streams.info(stream)).cluster?.leader;
      expect(leaderName).toBeDefined();
      const leader = cluster.node(leaderName!);
      await leader.kill("SIGKILL");
      for (const w of workers) w.child.kill("SIGCONT");
      // Another server takes the log stream over; then the killed one comes back on its store.
      await until(async () => {
        const info = await jsm.streams.info(stream).catch(() => null);
        return info?.cluster?.leader !== undefined && info.cluster.leader !== leaderName;
      }, "a new leader of the log stream", 60_000);
      await leader.start();

      await sweepFinished<SweepReport>(sweep, workers, seeds);

      for (const seed of seeds) {
        const episode = `auratown-s${seed}-baseline`;
        const distributed = await readLog(ns, episode);
        // Each record once, none missing: seqs 0…n-1 in order.
        expect(distributed.map((r) => r.seq)).toEqual(distributed.map((_, i) => i));
        const embedded = await embeddedLog(seed, ticks);
        expect(distributed.length, episode).toBe(embedded.length);
        expect(distributed.at(-1)!.hash, episode).toBe(embedded.at(-1)!.hash);
        expect(distributed.map(withoutMetaLine)).toEqual(embedded.map(withoutMetaLine));
        const verified = await runCli(["verify", episode, "--nats", a, "--namespace", ns]);
        expect(verified.code, verified.out + verified.err).toBe(0);
      }

      // The restarted server catches up: the log stream's three replicas hold the same messages.
      await until(async () => {
        const info = await jsm.streams.info(stream).catch(() => null);
        const replicas = info?.cluster?.replicas ?? [];
        return replicas.length === 2 && replicas.every((r) => r.current && !r.offline);
      }, "the restarted server to catch up", 60_000);
    } finally {
      for (const w of [...workers, sweep]) w.child.kill("SIGCONT");
      for (const w of [...workers, sweep]) w.child.kill("SIGKILL");
    }
  }, 180_000);

  it("sweep --workers passes its --nats-replicas on to the workers it starts: the log stream and buckets they create are R3 too", async () => {
    const ns = `cluster${process.pid}-local`;
    const s = await runCli(["sweep", "auratown", "--seeds", "51-52", "--ticks", "4", "--nats", cluster.urls[2]!, "--namespace", ns, "--nats-replicas", "3", "--workers", "1", "-q"]);
    expect(s.code, s.err).toBe(0);
    const jsm = await jetstreamManager(nc);
    for (const name of [`PT_LOG_${ns}`, `KV_pt_locks_${ns}`, `KV_pt_snapidx_${ns}`, `OBJ_pt_snap_${ns}`, jobQueueNames(ns).jobs]) expect((await jsm.streams.info(name)).config.num_replicas, name).toBe(3);
  }, 60_000);

  it("--nats-replicas against a namespace whose streams have another count: refused (exit 2), naming the stream and how to scale it; unset, the existing streams are taken as they are", async () => {
    const ns = `cluster${process.pid}-mismatch`;
    const nats = ["--nats", cluster.urls[1]!, "--namespace", ns];
    expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "2", ...nats, "-q"])).code).toBe(0);
    const refused = await runCli(["run", "auratown", "--seed", "4", "--ticks", "2", ...nats, "--nats-replicas", "3", "-q"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`JetStream stream PT_LOG_${ns} exists with 1 replica, not the 3 asked for`);
    expect(refused.err).toContain(`nats stream edit PT_LOG_${ns} --replicas 3`);
    expect((await runCli(["run", "auratown", "--seed", "5", "--ticks", "2", ...nats, "-q"])).code).toBe(0);
    expect((await runCli(["run", "auratown", "--seed", "6", "--ticks", "2", ...nats, "--nats-replicas", "1", "-q"])).code).toBe(0);
  }, 60_000);

  it("--nats-replicas 3 on a server that is not part of a cluster: refused (exit 2), saying so", async () => {
    const single = await startTestNats();
    const ns = single.namespace("single-r3");
    const refused = await runCli(["run", "auratown", "--seed", "7", "--ticks", "2", "--nats", single.url, "--namespace", ns, "--nats-replicas", "3", "-q"]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`JetStream stream PT_LOG_${ns} cannot be kept on 3 servers as asked`);
    expect(refused.err).toContain("the server is not part of a JetStream cluster");
  }, 60_000);
});
