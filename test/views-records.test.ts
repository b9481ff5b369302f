// run / fork / inspect on worlds without a town: aura-scene prints each query's IntentFrame, probes
// and answer; an EnvProbe fork prints its EnvProbe summary (parent prefix included); inspect shows
// a record timeline for both (it used to fail on any world but AURATown).
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { runCli, tempDir } from "./helpers.ts";

describe("views of aura-scene and EnvProbe episodes", () => {
  it("run aura-scene summarises each query; inspect prints its records by tick", async () => {
    const dir = join(tempDir("view-scene"), "ep");
    const run = await runCli(["run", "aura-scene", "--seed", "1", "--condition", "aura-intent", "--log", dir]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/query 1 \(demo\): Is Ben around\?\n {2}IntentFrame \(deterministic\): gap 0\.50 → budget 2/);
    expect(run.out).toMatch(/ {2}probe 1: get_agent_private_state\(agent_name=Ben\) → agent\/ben\n {4}answered \(disclosure 3\)/);
    expect(run.out).toMatch(/ {2}answer \(deterministic, disclosure 3\): /);
    expect(run.out).not.toMatch(/Town of/);
    const inspect = await runCli(["inspect", dir, "--agent", "ben"]);
    expect(inspect.code, inspect.err).toBe(0);
    expect(inspect.out).toMatch(/^aura-scene-s1-aura-intent · aura-scene · seed 1 · condition aura-intent\ntick 0\n/);
    expect(inspect.out).toMatch(/#4 probe\.requested probe\/aura → agent\/ben/);
    expect(inspect.out).not.toMatch(/user\.query/); // sent to the controller, not to Ben
  });

  it("an EnvProbe fork prints its EnvProbe summary; inspect filters its records by tick", async () => {
    const work = tempDir("view-envprobe");
    const sweep = await runCli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "periodic", "--regimes", "low", "--seeds", "3", "--log", join(work, "grid"), "--quiet"]);
    expect(sweep.code, sweep.err).toBe(0);
    const parent = join(work, "grid", "tooldag-low", "periodic", "s3");
    const fork = await runCli(["fork", parent, "--at", "2", "--condition", "envprobe-simple", "--log", join(work, "fork")]);
    expect(fork.code, fork.err).toBe(0);
    expect(fork.out).toMatch(/tooldag · regime low · policy envprobe-simple after the fork at tick 2 \(periodic before\): task (solved|not solved)/);
    expect(fork.out).toMatch(/A_H \d\.\d{3} \(procedural/);
    expect(fork.out).not.toMatch(/Town of/);
    const inspect = await runCli(["inspect", parent, "--from", "3", "--to", "3"]);
    expect(inspect.code, inspect.err).toBe(0);
    expect(inspect.out).toMatch(/\ntick 3\n {2}#\d+ tick\.started episode → agent\/envprobe/);
    expect(inspect.out).not.toMatch(/\ntick [024]\n/);
    expect(inspect.out).toMatch(/envprobe\.scored env\/envprobe → ·/);
  });
});
