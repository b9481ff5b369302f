// A world is a module (issue 22): the relay world lives only in test/worlds/relay/ and is added by
// the one registration line below (its module and its command-line manifest); the kernel and the
// command line then run, verify, replay, inspect, fork, diff and sweep it, paired report included,
// and run its own command, with nothing else changed.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isKnownEventType } from "../events/catalogue.ts";
import { registerEventTypes } from "../events/catalogue.ts";
import { worldNamed } from "../services/kernel/worlds.ts";
import { addWorld } from "../services/worlds.ts";
import { runCli } from "./cliInProcess.ts";
import relay from "./worlds/relay/module.ts";
import { relayEvents } from "./worlds/relay/events.ts";

await addWorld("relay", { module: () => import("./worlds/relay/module.ts"), cli: () => import("./worlds/relay/cli.ts") });

const dir = mkdtempSync(join(tmpdir(), "probetown-relay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a world registered as a module", () => {
  it("is listed, with its conditions, and its record types are in the catalogue", async () => {
    const r = await runCli(["worlds"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^relay: Relay: counters relay seeded steps/m);
    expect(r.out).toMatch(/ double +each counter steps 2–12 a tick/);
    expect(isKnownEventType("relay.counted")).toBe(true);
    expect(worldNamed("relay")).toBe(relay.definition);
  });

  it("runs, verifies, replays and inspects through the command line, with its own summary", async () => {
    const run = await runCli(["run", "relay", "--seed", "3", "--log", join(dir, "run")]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/relay: tally total \d+ over 12 relays/);
    expect((await runCli(["verify", join(dir, "run")])).code).toBe(0);
    const replay = await runCli(["replay", join(dir, "run")]);
    expect(replay.code, replay.err).toBe(0);
    const inspect = await runCli(["inspect", join(dir, "run"), "--json"]);
    expect(inspect.code, inspect.err).toBe(0);
    const records = (JSON.parse(inspect.out) as { records: { type: string }[] }).records;
    expect(records.filter((r) => r.type === "relay.counted")).toHaveLength(12);
  });

  it("forks into another condition, and diff names what changed from the fork on", async () => {
    const fork = await runCli(["fork", join(dir, "run"), "--at", "1", "--condition", "double", "--log", join(dir, "fork")]);
    expect(fork.code, fork.err).toBe(0);
    expect((await runCli(["verify", join(dir, "fork")])).code).toBe(0);
    const diff = await runCli(["diff", join(dir, "run"), join(dir, "fork")]);
    expect(diff.out).toMatch(/^DIFFERENT over ticks 2–3/m);
    expect(diff.out).toMatch(/first differing record: tick 2,/);
    expect(diff.out).toMatch(/counter\/0 +from tick 2/);
  });

  it("sweeps over conditions into per-condition metrics and a paired report", async () => {
    const out = join(dir, "sweep.json");
    const r = await runCli(["sweep", "relay", "--seeds", "1-5", "--conditions", "baseline,double", "--log", join(dir, "sweep"), "--out", out]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/double − baseline, total: [\d.]+ .* over 5 seeds/);
    const report = JSON.parse(readFileSync(out, "utf8")) as { metrics: { conditions: { condition: string; n: number; metrics: Record<string, { mean: number }> }[]; comparisons: { metric: string; n: number; meanDiff: number }[] } };
    const [base, double] = report.metrics.conditions;
    expect(base).toMatchObject({ condition: "baseline", n: 5 });
    // Doubling every step doubles the tally whatever the seed (the exogenous draws are the same).
    expect(double!.metrics.total!.mean).toBeCloseTo(2 * base!.metrics.total!.mean, 9);
    const total = report.metrics.comparisons.find((c) => c.metric === "total")!;
    expect(total).toMatchObject({ n: 5 });
    expect(total.meanDiff).toBeCloseTo(base!.metrics.total!.mean, 9);
  });

  it("adds its own command, run through the unchanged command line, and its help", async () => {
    const log = join(dir, "total");
    expect((await runCli(["run", "relay", "--seed", "5", "--log", log])).code).toBe(0);
    const r = await runCli(["relay-total", log, "--json"]);
    expect(r.code, r.err).toBe(0);
    const { total, meanRelayed } = JSON.parse(r.out) as { total: number; meanRelayed: number };
    // Twelve relays of steps 1–6 each, summed (and the summary `run` printed says the same total).
    expect(meanRelayed).toBeCloseTo(total / 12, 9);
    const run = await runCli(["run", "relay", "--seed", "5", "--log", join(dir, "total-again")]);
    expect(run.out).toContain(`relay: tally total ${total} over 12 relays`);
    // Another world's episode is refused as bad input (exit 2), by the world's own check.
    const other = await runCli(["relay-total", "test/fixtures/envprobe-pre-b0-graphnav-oracle"]);
    expect(other.code, other.err).toBe(2);
    expect(other.err).toContain("not a relay episode (its world is envprobe)");
    const help = await runCli(["--help"]);
    expect(help.out).toMatch(/Relay \(a test world\):\n {2}relay-total \[options\] <log> +the tally's total/);
    const runHelp = await runCli(["run", "--help"]);
    expect(runHelp.out.replace(/\s+/g, " ")).toContain("world to run (auratown, aura-scene, envprobe, household, relay)");
    expect(runHelp.out).toMatch(/Notes:\n {2}relay:\n {4}- its counters relay one seeded step a tick/);
    expect(runHelp.out.replace(/\s+/g, " ")).toContain(`'{"counters": 3}' (relay)`);
  });

  it("refuses a second world that defines a record type the first one owns", () => {
    expect(() => registerEventTypes("copycat", { "relay.counted": { ...relayEvents["relay.counted"] } })).toThrow(/world 'copycat' defines record type 'relay.counted', which world 'relay' already defines/);
  });
});
