// `sweep envprobe --nats <url> --log-store jetstream`: each episode's log kept as an object in the
// namespace's log-object bucket (services/envprobe/jetStreamLogs.ts) instead of a shared --log
// folder. The objects hold the very bytes the embedded sweep's --log files hold, the metrics are the
// embedded sweep's; a redelivered job keeps every intact object and runs (and replaces) the rest;
// `verify --nats … <sweep>` verifies them all and names a damaged one (exit 3); `export-logs` writes
// them out as the sweep's --log folder; a worker killed mid-job leaves whole objects only, which
// its job's redelivery keeps; the flag without --nats is refused (exit 2).
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { Objm } from "@nats-io/obj";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { LogObjects, logObjectsBucket } from "../infra/jetStreamLogObjects.ts";
import { envprobeJobsOf, runEnvprobeChunk } from "../services/envprobe/natsSweep.ts";
import { sweepLogName } from "../services/envprobe/jetStreamLogs.ts";
import { MARKER, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { SWEEP_PROGRESS_FILE } from "../services/kernel/sweepProgressFile.ts";
import { frozenWhen, runCli, startCli, tempDir } from "./helpers.ts";
import { JetStreamJobQueue } from "../infra/jetStreamJobQueue.ts";
import { natsForSuite } from "./natsServer.ts";

const suite = natsForSuite();

const grid = ["--worlds", "tooldag", "--policies", "no-probe,envprobe-simple", "--regimes", "medium"];

/** Every log file under `dir` by its episode folder (`tooldag-medium/no-probe/s0`) → its text. */
function logFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== MARKER && name !== SWEEP_PROGRESS_FILE) out.set(relative(dir, join(d, "..")), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

/** The objects below `sweep` (their names less the sweep's) → their text. */
async function objectTexts(ns: string, sweep: string): Promise<Map<string, string>> {
  const objects = (await LogObjects.open(suite.nc, ns, false))!;
  const out = new Map<string, string>();
  for (const name of await objects.names(sweep)) out.set(name.slice(sweep.length + 1), (await objects.get(name))!);
  return out;
}

/** A log with one record's payload changed (the line after the header): its chain no longer holds. */
const tampered = (text: string): string => {
  const lines = text.split("\n");
  const at = lines.findIndex((l, i) => i > 2 && /\d/.test(l));
  lines[at] = lines[at]!.replace(/\d/, (d) => String((Number(d) + 1) % 10));
  return lines.join("\n");
};

describe("sweep envprobe over NATS with its logs in JetStream", () => {
  it("gives the embedded sweep's metrics and log bytes; verify checks the objects; export-logs writes them as the sweep's --log", async () => {
    const work = tempDir("envprobe-js-logs");
    const args = [...grid, "--seeds", "0-5"];
    const embedded = await runCli(["sweep", "envprobe", ...args, "--workers", "1", "--log", join(work, "embedded"), "--out", join(work, "embedded.json"), "--json"]);
    expect(embedded.code, embedded.err).toBe(0);
    const ns = suite.nats.namespace("envprobe-js");
    const distributed = await runCli(["sweep", "envprobe", ...args, "--nats", suite.nats.url, "--namespace", ns, "--chunk", "4", "--log-store", "jetstream", "--workers", "1", "--out", join(work, "nats.json"), "--json"]);
    expect(distributed.code, distributed.err).toBe(0);
    const sweep = sweepLogName({});
    const summary = JSON.parse(distributed.out) as { episodes: number; ran: number; log: string; nats: { jobs: number } };
    expect(summary).toMatchObject({ episodes: 12, ran: 12, log: `jetstream:${ns}/${sweep}`, nats: { jobs: 4 } });
    const metrics = (f: string) => JSON.parse(readFileSync(join(work, f), "utf8")) as { episodeMetrics: unknown[]; cells: unknown[] };
    expect(metrics("nats.json").episodeMetrics).toEqual(metrics("embedded.json").episodeMetrics);
    expect(metrics("nats.json").cells).toEqual(metrics("embedded.json").cells);
    // Each object is the embedded sweep's log file, byte for byte (compact, format 2).
    const files = logFiles(join(work, "embedded"));
    expect(files.size).toBe(12);
    expect(await objectTexts(ns, sweep)).toEqual(files);

    const verify = await runCli(["verify", "--nats", suite.nats.url, "--namespace", ns, sweep]);
    expect(verify.code, verify.out + verify.err).toBe(0);
    expect(verify.out).toMatch(new RegExp(`^OK: 12 episodes under jetstream:${ns}/${sweep} \\([\\d,]+ records\\) in [\\d.]+ s — 12 hold, 0 diverged, 0 damaged`));
    const one = await runCli(["verify", "--nats", suite.nats.url, "--namespace", ns, `${sweep}/tooldag-medium/no-probe/s3`, "--json"]);
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse(one.out)).toMatchObject({ episodes: 1, ok: 1, exitCode: 0 });

    const exported = await runCli(["export-logs", sweep, "--nats", suite.nats.url, "--namespace", ns, "--out", join(work, "exported"), "--json"]);
    expect(exported.code, exported.err).toBe(0);
    expect(JSON.parse(exported.out)).toMatchObject({ objects: 12, written: 12, unreadable: [] });
    expect(logFiles(join(work, "exported"))).toEqual(files);
    const report = await runCli(["report-envprobe", join(work, "exported"), "--out", join(work, "report"), "--bootstrap", "100", "--json"]);
    expect(report.code, report.err).toBe(0);
    expect(JSON.parse(report.out)).toMatchObject({ episodes: 12 });
  }, 120_000);

  it("a redelivered job keeps every intact object and runs the rest; verify names a damaged object, exit 3", async () => {
    const ns = suite.nats.namespace("envprobe-js-redelivered");
    const spec = sweepSpecOf({ worlds: "tooldag", policies: "no-probe", regimes: "medium", seeds: "0-5", logStore: "jetstream" });
    const [job, ...others] = envprobeJobsOf(spec, 6);
    expect(others).toEqual([]);
    const nats = { nc: suite.nc, namespace: ns };
    const first = await runEnvprobeChunk(job!, undefined, undefined, nats);
    expect(first).toMatchObject({ kept: 0 });
    const sweep = sweepLogName(spec.config ?? {});
    const intact = await objectTexts(ns, sweep);
    expect([...intact.keys()]).toEqual([0, 1, 2, 3, 4, 5].map((s) => `tooldag-medium/no-probe/s${s}`));

    // Three of six gone or damaged, as a worker killed mid-job and a damaged store could leave them.
    const objects = (await LogObjects.open(suite.nc, ns, false))!;
    const name = (seed: number) => `${sweep}/tooldag-medium/no-probe/s${seed}`;
    await objects.put(name(1), intact.get("tooldag-medium/no-probe/s1")!.slice(0, 3000));
    await objects.put(name(2), tampered(intact.get("tooldag-medium/no-probe/s2")!));
    await (await new Objm(suite.nc).open(logObjectsBucket(ns))).delete(name(4));

    const again = await runEnvprobeChunk(job!, { attempt: 2, worker: "rescuer" }, undefined, nats);
    expect(again.kept).toBe(3);
    expect(again.episodes).toEqual(first.episodes);
    expect(await objectTexts(ns, sweep)).toEqual(intact);
    // Run once more, everything is kept.
    expect((await runEnvprobeChunk(job!, { attempt: 3, worker: "rescuer" }, undefined, nats)).kept).toBe(6);

    await objects.put(name(3), tampered(intact.get("tooldag-medium/no-probe/s3")!));
    const verify = await runCli(["verify", "--nats", suite.nats.url, "--namespace", ns, sweep]);
    expect(verify.code, verify.out + verify.err).toBe(3);
    expect(verify.out).toMatch(/^FAILED: 6 episodes under .* 5 hold, 0 diverged, 1 damaged/);
    expect(verify.out).toContain(`  jetstream:${ns}/${name(3)}: `);
    // Bytes changed in the store itself (the chunk replaced): they do not hash to the object's digest.
    const store = await new Objm(suite.nc).open(logObjectsBucket(ns));
    const nuid = (await store.info(name(5)))!.nuid;
    const chunks = `$O.${logObjectsBucket(ns)}.C.${nuid}`;
    await (await jetstreamManager(suite.nc)).streams.purge(`OBJ_${logObjectsBucket(ns)}`, { filter: chunks });
    await jetstream(suite.nc).publish(chunks, tampered(intact.get("tooldag-medium/no-probe/s5")!));
    const both = await runCli(["verify", "--nats", suite.nats.url, "--namespace", ns, sweep, "--chain-only"]);
    expect(both.code, both.out + both.err).toBe(3);
    expect(both.out).toMatch(/^FAILED: 6 episodes under .* 4 hold, 0 diverged, 2 damaged/);
    expect(both.out).toContain(`  jetstream:${ns}/${name(3)}: `);
    expect(both.out).toContain(`  jetstream:${ns}/${name(5)}: DAMAGED: object store '${logObjectsBucket(ns)}', object '${name(5)}': cannot be read back as stored`);
    const exported = await runCli(["export-logs", sweep, "--nats", suite.nats.url, "--namespace", ns, "--out", join(tempDir("envprobe-js-export"), "out")]);
    expect(exported.code, exported.err).toBe(3);
    expect(exported.out).toMatch(/^5 of 6 logs below \S+ written to .*\n  not written: \S+\/s5: object store/);

    const missing = await runCli(["verify", "--nats", suite.nats.url, "--namespace", ns, `${sweep}/graphnav-medium`]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`no episode ${sweep}/graphnav-medium in namespace ${ns}`);
    expect(missing.err).toContain(`; nor is it a name of its log objects, which are below ${sweep}`);
  }, 60_000);

  it("a worker killed with SIGKILL mid-job: the redelivered job keeps the objects it put, and objects and metrics equal the embedded sweep's", async () => {
    const work = tempDir("envprobe-js-kill");
    const ns = suite.nats.namespace("envprobe-js-kill");
    // Created first, so the queue's consumer redelivers after 2 s instead of 30 s.
    const queue = await JetStreamJobQueue.open(suite.nc, ns, { ackWaitMs: 2000 });
    await queue.close();
    const args = [...grid, "--seeds", "0-199"];
    const sweep = startCli(["sweep", "envprobe", ...args, "--nats", suite.nats.url, "--namespace", ns, "--chunk", "100", "--log-store", "jetstream", "--json"]);
    const worker = (name: string) => startCli(["worker", "--nats", suite.nats.url, "--namespace", ns, "--name", name]);
    const doomed = worker("doomed");
    // Killed while its first job has put some of its 100 logs, not all (so that job is unfinished):
    // looked at while it is frozen.
    const name = sweepLogName({});
    const someOfTheFirst = async () => {
      const objects = await LogObjects.open(suite.nc, ns, false);
      const n = objects === null ? 0 : (await objects.names(name)).length;
      return n >= 1 && n < 100;
    };
    await frozenWhen([doomed.child], someOfTheFirst, "some of the first job's logs");
    doomed.child.kill("SIGKILL");
    await doomed.done;
    const rescuer = worker("rescuer");
    const s = await sweep.done;
    rescuer.child.kill("SIGTERM");
    const r = await rescuer.done;
    expect(s.code, s.err + r.err).toBe(0);
    const b = JSON.parse(s.out) as { episodes: number; kept: number; cells: unknown[]; nats: { redelivered: string[] } };
    expect(b.episodes).toBe(400);
    expect(b.nats.redelivered.length).toBeGreaterThanOrEqual(1);
    expect(b.kept).toBeGreaterThanOrEqual(1);
    expect(r.err).toMatch(/rescuer@.*: envprobe-tooldag-medium-.* done \(attempt 2, 100 envprobe episodes/);

    const embedded = await runCli(["sweep", "envprobe", ...args, "--workers", "1", "--log", join(work, "embedded"), "--json"]);
    expect(embedded.code, embedded.err).toBe(0);
    expect(b.cells).toEqual((JSON.parse(embedded.out) as { cells: unknown[] }).cells);
    const exported = await runCli(["export-logs", name, "--nats", suite.nats.url, "--namespace", ns, "--out", join(work, "exported"), "-q"]);
    expect(exported.code, exported.err).toBe(0);
    const files = logFiles(join(work, "embedded"));
    expect(files.size).toBe(400);
    expect(logFiles(join(work, "exported"))).toEqual(files);
  }, 180_000);

  it("--log-store jetstream needs --nats, and no --log beside it: exit 2", async () => {
    const work = tempDir("envprobe-js-bad");
    const without = await runCli(["sweep", "envprobe", ...grid, "--seeds", "0-1", "--log-store", "jetstream"]);
    expect(without.code).toBe(2);
    expect(without.err).toContain("--log-store jetstream: the logs go to the JetStream of the sweep's NATS server, and there is none: give --nats <url>");
    const both = await runCli(["sweep", "envprobe", ...grid, "--seeds", "0-1", "--log-store", "jetstream", "--nats", suite.nats.url, "--log", join(work, "logs")]);
    expect(both.code).toBe(2);
    expect(both.err).toContain("--log-store jetstream keeps the logs in JetStream, not under --log");
    const unknown = await runCli(["sweep", "envprobe", ...grid, "--seeds", "0-1", "--log-store", "s3"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("--log-store expects files or jetstream, got 's3'");
  }, 30_000);
});
