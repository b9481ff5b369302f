// `probetown diff`: two episodes compared from their logs alone (a fork against its parent, two
// forks, two runs), over the ticks both hold.
import { describe, expect, it } from "vitest";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { compareLogs, type EpisodeDiff } from "../services/kernel/episodeDiff.ts";
import { firstSegment, logRecords, runCli, tempDir } from "./helpers.ts";

const quiet = { trace: { exporter: "none" } as const, fsync: "never" as const };

describe("probetown diff", () => {
  const work = tempDir("diff");
  const parent = join(work, "parent");
  const same = join(work, "same");
  const other = join(work, "no-conversation");
  const ready = (async () => {
    await runEpisode({ world: "auratown", seed: 42, dir: parent, ...quiet });
    await forkEpisode({ parent, atTick: 10, condition: "baseline", dir: same, ...quiet });
    await forkEpisode({ parent, atTick: 10, condition: "no-conversation", dir: other, ...quiet });
  })();

  it("a fork with its parent's condition is identical over the ticks both hold: exit 0, also with --exit-code", async () => {
    await ready;
    const r = await runCli(["diff", parent, same, "--exit-code"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/b forks a after tick 10/);
    expect(r.out).toMatch(/IDENTICAL over ticks 11–33 \(the ticks both hold\): the same \d+ records/);
    const json = JSON.parse((await runCli(["diff", parent, same, "--json"])).out) as EpisodeDiff;
    expect(json.identical).toBe(true);
    expect(json.compared).toEqual({ first: 11, last: 33 });
    expect(json.types.every((t) => t.a === t.b)).toBe(true);
    expect(json.actors).toEqual([]);
  });

  it("a fork under another condition: what that condition touches, and whose state follows (exit 1 with --exit-code)", async () => {
    await ready;
    const r = await runCli(["diff", parent, other, "--exit-code"]);
    expect(r.code, r.err).toBe(1);
    const json = JSON.parse((await runCli(["diff", parent, other, "--json"])).out) as EpisodeDiff;
    expect(json.identical).toBe(false);
    // Only conversations differ in number; the parent held some after tick 10, the fork none.
    const held = logRecords(parent).filter((x) => x.type === "conversation.held" && x.tick > 10).length;
    expect(held).toBeGreaterThan(0);
    expect(json.types.filter((t) => t.a !== t.b)).toEqual([{ type: "conversation.held", a: held, b: 0 }]);
    // The condition is the environment's parameter: its state differs from the first tick on.
    expect(json.firstDifference).toMatchObject({ tick: 11, state: ["env/auratown"] });
    expect(json.actors[0]).toMatchObject({ actor: "env/auratown", firstTick: 11 });
    expect(r.out).toMatch(/first difference: tick 11, the state it commits \(its other records are the same\): env\/auratown/);
    expect(r.out).toMatch(new RegExp(`conversation\\.held\\s+${held} → 0 \\(−${held}\\)`));
    // Without --exit-code a difference is a result, not a failure (as git diff).
    expect((await runCli(["diff", parent, other])).code).toBe(0);
    // Two forks of one parent are siblings.
    expect((await runCli(["diff", same, other])).out).toMatch(/both fork auratown-s42-baseline after tick 10/);
  });

  it("names the first differing record, by its place in the tick, when a record differs or one side has more", async () => {
    await ready;
    const a = logRecords(parent);
    const at = a.findIndex((x) => x.type === "private_state.changed" && x.tick === 12);
    const edited = a.map((x, i) => (i === at ? { ...x, payload: { ...(x.payload as object), emotional_state: "elated" } } : x));
    const d = compareLogs(a, edited, "a", "b");
    expect(d.firstDifference).toMatchObject({ tick: 12, a: { seq: a[at]!.seq, type: "private_state.changed" }, b: { payload: { emotional_state: "elated" } } });
    expect(d.firstDifference!.index).toBe(at - a.findIndex((x) => x.tick === 12 && x.type === "tick.started"));
    // A record one side does not have: the other side's record against none, and counts that differ.
    const fewer = compareLogs(a, a.filter((_, i) => i !== at), "a", "b");
    expect(fewer.firstDifference).toMatchObject({ tick: 12, a: { type: "private_state.changed" } });
    expect(fewer.types.find((t) => t.type === "private_state.changed")).toMatchObject({ b: fewer.types.find((t) => t.type === "private_state.changed")!.a - 1 });
  });

  it("compares a log ending in a torn record as far as it is whole, saying so; logs with no tick in common compare nothing", async () => {
    await ready;
    const torn = join(work, "torn");
    await runEpisode({ world: "auratown", seed: 42, dir: torn, ...quiet });
    appendFileSync(firstSegment(torn), '{"cause":null,"episode":"auratown-s42-baseline","fr');
    const r = await runCli(["diff", parent, torn, "--exit-code"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/IDENTICAL over ticks 0–33/);
    expect(r.out).toMatch(/note: b's log ends in a torn record .*compared as far as it is whole/);
    const short = join(work, "short");
    await runEpisode({ world: "auratown", seed: 42, ticks: 5, dir: short, ...quiet });
    const none = await runCli(["diff", short, other, "--exit-code"]);
    expect(none.code).toBe(1);
    expect(none.out).toMatch(/the logs hold no committed tick in common \(a: ticks 0–4, b: ticks 11–33\): nothing to compare/);
  });

  it("refuses episodes of two worlds, and a path that is no episode, naming them (exit 2); a damaged log is exit 3", async () => {
    await ready;
    const probe = join(work, "envprobe");
    await runEpisode({ world: "envprobe", seed: 3, dir: probe, ...quiet });
    const worlds = await runCli(["diff", parent, probe]);
    expect(worlds.code).toBe(2);
    expect(worlds.err).toMatch(/is an episode of world auratown and .* one of envprobe: only episodes of one world can be compared/);
    const missing = await runCli(["diff", parent, join(work, "nowhere")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nowhere/);
    const damaged = join(work, "damaged");
    await runEpisode({ world: "auratown", seed: 42, dir: damaged, ...quiet });
    const lines = readFileSync(firstSegment(damaged), "utf8").split("\n");
    lines[99] = lines[99]!.replace('"tick":', '"tick": ');
    writeFileSync(firstSegment(damaged), lines.join("\n"));
    const bad = await runCli(["diff", parent, damaged]);
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/line 100/);
  });
});
