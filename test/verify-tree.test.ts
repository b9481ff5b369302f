// `probetown verify <folder>`: every episode below a sweep's --log is verified in one command; one
// damaged log fails the whole folder with exit 3 and is named, the others still counted as holding.
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firstSegment, tempDir, runCli } from "./helpers.ts";
import { episodeDirsUnder, verifyTree } from "../services/kernel/verifyTree.ts";

const cli = runCli;

describe("verify on a folder of episodes", () => {
  it("verifies every log of a sweep, and names the one that is damaged", async () => {
    const log = join(tempDir("verify-tree"), "grid");
    // Version-1 logs, whose text the damage below edits (test/envprobe-compact-log.test.ts damages compact ones).
    const sweep = await cli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,periodic", "--regimes", "medium", "--seeds", "0-2", "--log", log, "--log-format", "1", "--json"]);
    expect(sweep.code, sweep.err).toBe(0);
    const dirs = episodeDirsUnder(log);
    expect(dirs).toHaveLength(6);

    const clean = await cli(["verify", log]);
    expect(clean.code, clean.out + clean.err).toBe(0);
    expect(clean.out).toMatch(/^OK: 6 episodes under .* — 6 hold, 0 diverged, 0 damaged/);

    // Change one payload value of one record without re-sealing it: the hash chain breaks there.
    const victim = dirs.find((d) => d.includes("periodic") && d.endsWith("s1"))!;
    const file = firstSegment(victim);
    const lines = readFileSync(file, "utf8").split("\n");
    const at = lines.findIndex((l, i) => i > 2 && /"tick":3,/.test(l));
    expect(at).toBeGreaterThan(0);
    lines[at] = lines[at]!.replace(/"tick":3,/, '"tick":4,');
    writeFileSync(file, lines.join("\n"));

    const damaged = await cli(["verify", log]);
    expect(damaged.code).toBe(3);
    expect(damaged.out).toMatch(/FAILED: 6 episodes .* 5 hold, 0 diverged, 1 damaged/);
    expect(damaged.out).toContain(victim);
    expect(damaged.out).toMatch(new RegExp(`seq ${at} \\(line ${at + 1}\\)`));

    const report = await verifyTree(log, { threads: 1 });
    expect(report.failures.map((f) => f.dir)).toEqual([victim]);
    expect(report.ok).toBe(5);
  });

  it("names the logs that hold but stop before their last tick (an interrupted sweep), instead of a plain OK", async () => {
    const log = join(tempDir("verify-tree-unfinished"), "grid");
    // Version-1 logs, cut as an interrupted run leaves one (a compact log is written whole: one cut short is damage).
    expect((await cli(["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe", "--regimes", "medium", "--seeds", "0-1", "--log", log, "--log-format", "1", "--quiet"])).code).toBe(0);
    const victim = episodeDirsUnder(log).find((d) => d.endsWith("s1"))!;
    const file = firstSegment(victim);
    // Cut at a record boundary inside tick 5: every line left is intact.
    const lines = readFileSync(file, "utf8").split("\n");
    const cut = lines.findIndex((l) => /"tick":5,/.test(l) && l.includes('"type":"envprobe.decided"'));
    writeFileSync(file, lines.slice(0, cut + 1).join("\n") + "\n");

    const r = await cli(["verify", log]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^OK: 2 episodes under .* — 2 hold \(1 of them unfinished\), 0 diverged, 0 damaged/);
    expect(r.out).toContain(`unfinished: ${victim}: the log ends part-way through tick 5 (an interrupted run)`);
    const report = await verifyTree(log, { threads: 1 });
    expect(report.unfinished.map((e) => e.dir)).toEqual([victim]);
    expect(report.ok).toBe(2);
  });

  it("an episode whose run stopped before its first record is not started, not damaged: named, with how to run it, exit 0 as an interrupted run", async () => {
    const log = join(tempDir("verify-tree-not-started"), "grid");
    const args = ["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe", "--regimes", "medium", "--seeds", "0-2", "--log", log, "--quiet"];
    expect((await cli(args)).code).toBe(0);
    const [, s1, s2] = episodeDirsUnder(log);
    // What a sweep stopped before an episode's first record leaves: an empty first segment (the
    // store cuts a part-written batch back), or no segment when the disk refused even that.
    writeFileSync(firstSegment(s1!), "");
    rmSync(firstSegment(s2!));

    const tree = await cli(["verify", log]);
    expect(tree.code, tree.out + tree.err).toBe(0);
    expect(tree.out).toMatch(/^OK: 3 episodes under .* — 1 hold, 2 not started, 0 diverged, 0 damaged/);
    expect(tree.out).toContain(`not started: ${s1}: its log holds no record yet: its run stopped before the episode's first record (killed, or a full disk)`);
    expect(tree.out).toContain(`not started: ${s2}: its log/ folder holds no segment`);
    expect(tree.out).toMatch(/runs from its beginning when the command that made it runs again: the same sweep/);
    const report = await verifyTree(log, { threads: 1 });
    expect(report.notStarted.map((e) => e.dir)).toEqual([s1, s2]);
    expect([report.ok, report.damaged, report.exitCode]).toEqual([1, 0, 0]);

    // The episode alone says the same; replay and inspect have nothing to show (exit 2), not damage.
    const one = await cli(["verify", s1!]);
    expect(one.code, one.out + one.err).toBe(0);
    expect(one.out).toContain(`NOT STARTED: ${s1}: its log holds no record yet`);
    expect(one.out).toContain(`note: the command that made it starts it from the beginning: \`probetown run … --resume --log ${s1}\` with that run's flags, or the same sweep or experiment again`);
    const inspect = await cli(["inspect", s1!]);
    expect(inspect.code).toBe(2);
    expect(inspect.err).toMatch(/not started: .*there is nothing to replay or inspect/);

    // As the note says, the same sweep runs them.
    expect((await cli(args)).code).toBe(0);
    expect((await cli(["verify", log])).out).toMatch(/^OK: 3 episodes under .* — 3 hold, 0 diverged, 0 damaged/);
  });

  it("a fork never started is made again, not resumed; a log whose segments are gone while its snapshots remain is damaged", async () => {
    const work = tempDir("verify-not-started-fork");
    const fork = join(work, "fork");
    mkdirSync(join(fork, "log"), { recursive: true });
    writeFileSync(join(fork, "log", "000000000040.jsonl"), "");
    const r = await cli(["verify", fork]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toContain(`note: a fork's, which is not resumed: remove ${fork} and fork again`);
    mkdirSync(join(fork, "snapshots"));
    writeFileSync(join(fork, "snapshots", "x.json"), "{}");
    rmSync(join(fork, "log", "000000000040.jsonl"));
    const gone = await cli(["verify", fork]);
    expect(gone.code).toBe(3);
    expect(gone.out).toMatch(/holds no records \(its segments are missing/);
  });

  it("a folder with no episodes below it is a usage error", async () => {
    const empty = join(tempDir("verify-tree-empty"), "nothing");
    mkdirSync(empty);
    const r = await cli(["verify", empty]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/no episode directories/);
  });
});
