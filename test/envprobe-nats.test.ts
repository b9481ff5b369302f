// `probetown sweep envprobe --nats`, end to end over a private nats-server: the grid is queued as
// chunk jobs, run by `probetown worker` processes, and ends with the embedded sweep's cells,
// per-episode metrics and log bytes; a resubmission runs nothing; a worker killed mid-job has its
// job redelivered and the result is still complete and identical; bad specs and a dead URL are
// refused before anything is enqueued.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { JetStreamJobQueue, jobQueueNames } from "../infra/jetStreamJobQueue.ts";
import { EnvprobeSweepFailed, envprobeJobsOf, gatherEnvprobeSweep, runEnvprobeChunk } from "../services/envprobe/natsSweep.ts";
import { MARKER, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { SWEEP_PROGRESS_FILE } from "../services/kernel/sweepProgressFile.ts";
import { frozenWhen, tempDir, runCli, startCli } from "./helpers.ts";
import { natsForSuite } from "./natsServer.ts";


const start = startCli;

interface SweepJson {
  episodes: number;
  workers: number;
  log: string | null;
  nats?: { namespace: string; jobs: number; chunk: number; redelivered: string[] };
  cells: unknown[];
}

/** Every file under `dir` (relative path → bytes), the sweep's marker and progress file (not logs, and not alike) left out. */
function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== MARKER && name !== SWEEP_PROGRESS_FILE) out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

const suite = natsForSuite();

const grid = ["--worlds", "tooldag", "--policies", "no-probe,envprobe-simple", "--regimes", "medium"];

describe("sweep envprobe over NATS", () => {
  it("jobs are chunks of one cell's seeds, with ids from the cell, the seed range and a hash of what the job does", () => {
    const spec = sweepSpecOf({ worlds: "tooldag,graphnav", policies: "no-probe,random", regimes: "low", seeds: "0-9" });
    const jobs = envprobeJobsOf(spec, 4);
    expect(jobs).toHaveLength(3 * 2 * 2);
    expect(jobs.map((j) => j.spec.seeds.length)).toEqual([...Array(4).fill(4), ...Array(4).fill(4), ...Array(4).fill(2)]);
    expect(jobs[0]!.id).toMatch(/^envprobe-tooldag-low-no-probe-s0-3-[0-9a-f]{12}$/);
    expect(jobs.at(-1)!.id).toMatch(/^envprobe-graphnav-low-random-s8-9-[0-9a-f]{12}$/);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
    // Same spec, same ids; another horizon or log directory, other ids.
    expect(envprobeJobsOf(sweepSpecOf({ worlds: "tooldag,graphnav", policies: "no-probe,random", regimes: "low", seeds: "0-9" }), 4).map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    expect(envprobeJobsOf(sweepSpecOf({ worlds: "tooldag,graphnav", policies: "no-probe,random", regimes: "low", seeds: "0-9", horizon: 12 }), 4)[0]!.id).not.toBe(jobs[0]!.id);
    expect(envprobeJobsOf({ ...spec, log: "/elsewhere" }, 4)[0]!.id).not.toBe(jobs[0]!.id);
  });

  it("a job that keeps failing fails the sweep with a typed error naming it, and no metrics", async () => {
    const ns = suite.nats.namespace("fail");
    const queue = await JetStreamJobQueue.open(suite.nc, ns, { ackWaitMs: 2000, backoffMs: 50 });
    const worker = queue.work("in-process", runEnvprobeChunk, { maxAttempts: 2 });
    // Past the spec check (as a stale or hand-made job would be): a policy no worker knows.
    const spec = { worlds: ["tooldag" as const], regimes: ["medium"], policies: ["psychic" as never], seeds: [0, 1], config: {} };
    try {
      const error = await gatherEnvprobeSweep(suite.nc, spec, { namespace: ns, workers: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EnvprobeSweepFailed);
      expect((error as Error).message).toMatch(/1 of 1 jobs failed, so no metrics were written \(envprobe-tooldag-medium-psychic-s0-1-[0-9a-f]{12} after 2 attempts: .*psychic/);
    } finally {
      await worker.stop();
      await queue.close();
    }
  }, 60_000);

  it("local workers give the embedded sweep's cells, episode metrics and log bytes; a resubmission runs nothing", async () => {
    const work = tempDir("envprobe-nats");
    const args = [...grid, "--seeds", "0-5"];
    const embedded = await runCli(["sweep", "envprobe", ...args, "--workers", "1", "--log", join(work, "embedded"), "--out", join(work, "embedded.json"), "--json"]);
    expect(embedded.code, embedded.err).toBe(0);
    const ns = suite.nats.namespace("envprobe");
    const natsArgs = ["sweep", "envprobe", ...args, "--nats", suite.nats.url, "--namespace", ns, "--chunk", "4", "--log", join(work, "nats"), "--out", join(work, "nats.json"), "--json"];
    const distributed = await runCli([...natsArgs, "--workers", "2"]);
    expect(distributed.code, distributed.err).toBe(0);
    const a = JSON.parse(embedded.out) as SweepJson;
    const b = JSON.parse(distributed.out) as SweepJson;
    expect(b.episodes).toBe(12);
    expect(b.nats).toMatchObject({ namespace: ns, jobs: 4, chunk: 4, redelivered: [], alreadyFinished: 0 });
    expect(b.cells).toEqual(a.cells);
    const metrics = (f: string) => (JSON.parse(readFileSync(join(work, f), "utf8")) as { episodeMetrics: unknown[]; cells: unknown[] });
    expect(metrics("nats.json").episodeMetrics).toEqual(metrics("embedded.json").episodeMetrics);
    expect(metrics("nats.json").cells).toEqual(metrics("embedded.json").cells);
    // The workers wrote the logs to --log exactly as the embedded sweep does; they verify.
    const embeddedLogs = files(join(work, "embedded"));
    expect(embeddedLogs.size).toBe(12);
    expect(files(join(work, "nats"))).toEqual(embeddedLogs);
    const verify = await runCli(["verify", join(work, "nats", "tooldag-medium", "envprobe-simple", "s5")]);
    expect(verify.code, verify.out + verify.err).toBe(0);

    // Resubmitted into its own --log with no worker anywhere: every job's outcome is recorded, so
    // it completes at once with the same cells (and writes nothing new).
    const again = await runCli(natsArgs.map((x) => (x.endsWith("nats.json") ? join(work, "again.json") : x)));
    expect(again.code, again.err).toBe(0);
    const resubmitted = JSON.parse(again.out) as SweepJson & { episodesPerSecond: number };
    expect(resubmitted.cells).toEqual(a.cells);
    // Its rate counts only episodes run now: none (it reported thousands a second).
    expect(resubmitted.nats).toMatchObject({ alreadyFinished: 12 });
    expect(resubmitted.episodesPerSecond).toBe(0);
    const told = await runCli(natsArgs.filter((x) => x !== "--json").map((x) => (x.endsWith("nats.json") ? join(work, "told.json") : x)));
    expect(told.out).toMatch(/12 episodes in [\d.]+ s \(all 12 already finished; none ran now, over NATS/);
    expect(files(join(work, "nats"))).toEqual(embeddedLogs);

    // The queue lost (a fresh namespace) and two logs cut short: the workers keep the ten finished
    // logs, as the embedded sweep run again does, and run the two others.
    const segment = (seed: number) => join(work, "nats", "tooldag-medium", "envprobe-simple", `s${seed}`, "log", "000000000000.jsonl");
    writeFileSync(segment(1), readFileSync(segment(1), "utf8").slice(0, 3000));
    rmSync(join(work, "nats", "tooldag-medium", "envprobe-simple", "s4"), { recursive: true });
    const fresh = natsArgs.map((x) => (x === ns ? suite.nats.namespace("envprobe-fresh") : x.endsWith("nats.json") ? join(work, "fresh.json") : x));
    const rerun = await runCli([...fresh, "--workers", "1"]);
    expect(rerun.code, rerun.err).toBe(0);
    const rerunJson = JSON.parse(rerun.out) as SweepJson & { kept: number; ran: number };
    expect(rerunJson).toMatchObject({ episodes: 12, kept: 10, ran: 2, nats: { alreadyFinished: 0 } });
    expect(rerunJson.cells).toEqual(a.cells);
    expect(files(join(work, "nats"))).toEqual(embeddedLogs);
  }, 120_000);

  it("bad specs are refused before anything is enqueued; a dead NATS URL is named, exit 2, nothing written", async () => {
    const work = tempDir("envprobe-nats-bad");
    const ns = suite.nats.namespace("bad");
    const cases: [string[], RegExp][] = [
      [["--worlds", "atlantis", "--seeds", "0-1"], /--worlds: unknown 'atlantis'/],
      [["--policies", "psychic", "--seeds", "0-1"], /--policies: unknown 'psychic'/],
      [["--seeds", "9-3"], /--seeds: range '9-3' runs backwards/],
      [["--seeds", "0-1", "--chunk", "0"], /--chunk expects an integer ≥ 1/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(["sweep", "envprobe", ...args, "--nats", suite.nats.url, "--namespace", ns, "--log", join(work, "never")]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
    }
    const jsm = await jetstreamManager(suite.nc);
    await expect(jsm.streams.info(jobQueueNames(ns).jobs)).rejects.toThrow(/stream not found/);
    expect(existsSync(join(work, "never"))).toBe(false);

    const dead = "nats://127.0.0.1:1";
    const r = await runCli(["sweep", "envprobe", ...grid, "--seeds", "0-1", "--nats", dead, "--nats-outage", "1", "--log", join(work, "never")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--nats nats:\/\/127\.0\.0\.1:1: cannot connect to a NATS server/);
    expect(existsSync(join(work, "never"))).toBe(false);
  }, 60_000);

  it("a worker killed with SIGKILL mid-job: the job is redelivered, and metrics and logs equal the embedded sweep's", async () => {
    const work = tempDir("envprobe-nats-kill");
    const ns = suite.nats.namespace("kill");
    // Created first, so the queue's consumer redelivers after 2 s instead of 30 s.
    const queue = await JetStreamJobQueue.open(suite.nc, ns, { ackWaitMs: 2000 });
    await queue.close();
    const args = [...grid, "--seeds", "0-199"];
    const log = join(work, "nats");
    const sweep = start(["sweep", "envprobe", ...args, "--nats", suite.nats.url, "--namespace", ns, "--chunk", "100", "--log", log, "--json"]);
    const worker = (name: string) => start(["worker", "--nats", suite.nats.url, "--namespace", ns, "--name", name]);
    const doomed = worker("doomed");
    // Killed once its first job has finished an episode, looked for while it is frozen: it runs the
    // job's 100 in about 0.2 s, less than a loaded machine can hold the test up. Its segment, not
    // log/: the folder is made just before the finished log is renamed into it.
    const finishedOne = async () => ["no-probe", "envprobe-simple"].some((p) => existsSync(join(log, "tooldag-medium", p, "s0", "log", "000000000000.jsonl")));
    await frozenWhen([doomed.child], finishedOne, "the first worker's first episode");
    doomed.child.kill("SIGKILL");
    await doomed.done;
    const rescuer = worker("rescuer");
    const s = await sweep.done;
    rescuer.child.kill("SIGTERM");
    const r = await rescuer.done;
    expect(s.code, s.err + r.err).toBe(0);
    const b = JSON.parse(s.out) as SweepJson;
    expect(b.episodes).toBe(400);
    expect(b.nats!.jobs).toBe(4);
    expect(b.nats!.redelivered.length).toBeGreaterThanOrEqual(1);
    // The redelivered job kept what the killed worker had finished (it ran every episode again).
    expect((b as SweepJson & { kept: number }).kept).toBeGreaterThanOrEqual(1);
    expect(r.err).toMatch(/rescuer@.*: envprobe-tooldag-medium-.* done \(attempt 2, 100 envprobe episodes/);

    const embedded = await runCli(["sweep", "envprobe", ...args, "--workers", "1", "--log", join(work, "embedded"), "--json"]);
    expect(embedded.code, embedded.err).toBe(0);
    expect(b.cells).toEqual((JSON.parse(embedded.out) as SweepJson).cells);
    const embeddedLogs = files(join(work, "embedded"));
    expect(embeddedLogs.size).toBe(400);
    expect(files(log)).toEqual(embeddedLogs);
  }, 180_000);
});

describe("fork --nats of an EnvProbe or aura-scene episode", () => {
  it("prints the summary a file fork prints: an EnvProbe fork's over its whole trajectory, its ancestors read from JetStream (a fork of a fork too); a scene fork's queries", async () => {
    const ns = suite.nats.namespace("fork-summary");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    const work = tempDir("fork-summary");
    const parent = "envprobe-s3-envprobe-simple";
    expect((await runCli(["run", "envprobe", "--seed", "3", ...nats, "-q"])).code).toBe(0);
    expect((await runCli(["run", "envprobe", "--seed", "3", "--log", join(work, "p"), "-q"])).code).toBe(0);
    // What a summary says between the counts and where the log went (the NATS one adds the state hash).
    const summaryOf = (out: string) => out.slice(out.indexOf("objectstate · regime"), out.indexOf("\nlog:"));
    const forks = [
      [["fork", parent, "--at", "5", "--condition", "periodic", ...nats], ["fork", join(work, "p"), "--at", "5", "--condition", "periodic", "--log", join(work, "f")]],
      [["fork", `${parent}~t5-periodic`, "--at", "9", "--condition", "no-probe", ...nats], ["fork", join(work, "f"), "--at", "9", "--condition", "no-probe", "--log", join(work, "ff")]],
    ];
    for (const [inNats, inFiles] of forks) {
      const [n, f] = await Promise.all([start(inNats!).done, start(inFiles!).done]);
      expect(n.code, n.err).toBe(0);
      expect(f.code, f.err).toBe(0);
      expect(summaryOf(f.out)).toMatch(/^objectstate · regime medium · policy \S+ after the fork at tick \d \(.* before\): .*\nA_H .* before the fork \(parent's polic/);
      expect(summaryOf(n.out)).toBe(summaryOf(f.out));
    }
    expect((await runCli(["run", "aura-scene", "--seed", "1", "--condition", "aura-intent", "--config", "examples/scene.json", ...nats, "-q"])).code).toBe(0);
    const scene = await runCli(["fork", "aura-scene-s1-aura-intent", "--at", "0", "--condition", "aura-intent-nomemory", ...nats]);
    expect(scene.code, scene.err).toBe(0);
    expect(scene.out).toMatch(/\n\nquery 2 \(demo\): .*\n  IntentFrame [\s\S]*\nquery 3 \(demo\): [\s\S]*\n\nlog:   jetstream:/);
  }, 60_000);
});
