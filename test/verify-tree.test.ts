// `probetown verify <folder>`: every episode below a sweep's --log is verified in one command; one
// damaged log fails the whole folder with exit 3 and is named, the others still counted as holding.
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firstSegment, tempDir, runCli } from "./helpers.ts";
import { episodeDirsUnder, verifyTree } from "../services/verifyTree.ts";

const cli = runCli;

describe("verify on a folder of episodes", () => {
  it("verifies every log of a sweep, and names the one that is damaged", async () => {
    const log = join(tempDir("verify-tree"), "grid");
    const sweep = cli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,periodic", "--regimes", "medium", "--seeds", "0-2", "--log", log, "--json"]);
    expect(sweep.code, sweep.err).toBe(0);
    const dirs = episodeDirsUnder(log);
    expect(dirs).toHaveLength(6);

    const clean = cli(["verify", log]);
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

    const damaged = cli(["verify", log]);
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
    expect(cli(["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe", "--regimes", "medium", "--seeds", "0-1", "--log", log, "--quiet"]).code).toBe(0);
    const victim = episodeDirsUnder(log).find((d) => d.endsWith("s1"))!;
    const file = firstSegment(victim);
    // Cut at a record boundary inside tick 5: every line left is intact.
    const lines = readFileSync(file, "utf8").split("\n");
    const cut = lines.findIndex((l) => /"tick":5,/.test(l) && l.includes('"type":"envprobe.decided"'));
    writeFileSync(file, lines.slice(0, cut + 1).join("\n") + "\n");

    const r = cli(["verify", log]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/^OK: 2 episodes under .* — 2 hold \(1 of them unfinished\), 0 diverged, 0 damaged/);
    expect(r.out).toContain(`unfinished: ${victim}: the log ends part-way through tick 5 (an interrupted run)`);
    const report = await verifyTree(log, { threads: 1 });
    expect(report.unfinished.map((e) => e.dir)).toEqual([victim]);
    expect(report.ok).toBe(2);
  });

  it("a folder with no episodes below it is a usage error", () => {
    const empty = join(tempDir("verify-tree-empty"), "nothing");
    mkdirSync(empty);
    const r = cli(["verify", empty]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/no episode directories/);
  });
});
