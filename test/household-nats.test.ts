// A household episode over NATS logs exactly what the embedded run logs: with its log in
// JetStream and its actors in process, and with every actor served by an `actor-host` process;
// the probes at its end included. Then verify and inspect read it from JetStream.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { logRecords, runCli, startCli, tempDir, withoutMetaLine } from "./helpers.ts";
import { natsForSuite } from "./natsServer.ts";

const suite = natsForSuite();
const TASK = "gen-mixed-d3-hard-s2310";

const readLogFromNats = (ns: string, episode: string): Promise<LogRecord[]> => distributedBackend(suite.nc, ns).eventStores.read(episode);

describe("household over NATS", () => {
  it("logs the embedded run's records, in process and with remote actor hosts", async () => {
    const dir = join(tempDir("hh-embedded"), "ep");
    expect((await runCli(["run", "household", "--seed", "2", "--task", TASK, "--condition", "first-order", "--log", dir, "-q"])).code).toBe(0);
    const embedded = logRecords(dir);
    expect(embedded.some((r) => r.type === "household.probeScored")).toBe(true);
    const episode = "household-s2-first-order";

    const ns = suite.nats.namespace("household");
    const inProcess = await runCli(["run", "household", "--seed", "2", "--task", TASK, "--condition", "first-order", "--nats", suite.nats.url, "--namespace", ns, "-q"]);
    expect(inProcess.code, inProcess.err).toBe(0);
    expect((await readLogFromNats(ns, episode)).map(withoutMetaLine)).toEqual(embedded.map(withoutMetaLine));

    const remoteNs = suite.nats.namespace("household-remote");
    const host = startCli(["actor-host", episode, "--nats", suite.nats.url, "--namespace", remoteNs, "--actors", "all"]);
    const run = await runCli(["run", "household", "--seed", "2", "--task", TASK, "--condition", "first-order", "--nats", suite.nats.url, "--namespace", remoteNs, "--remote", "all", "-q"]);
    const hosted = await host.done;
    expect(run.code, run.err).toBe(0);
    expect(hosted.code, hosted.err).toBe(0);
    expect((await readLogFromNats(remoteNs, episode)).map(withoutMetaLine)).toEqual(embedded.map(withoutMetaLine));

    const verify = await runCli(["verify", episode, "--nats", suite.nats.url, "--namespace", remoteNs]);
    expect(verify.code, verify.err).toBe(0);
    const inspect = await runCli(["inspect", episode, "--nats", suite.nats.url, "--namespace", remoteNs, "--from", "2", "--to", "2"]);
    expect(inspect.out).toContain("turn 2\n");
  }, 120_000);
});
