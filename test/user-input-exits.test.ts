// What a user gives never ends in an internal error (exit 4) (issue 27): an altered and rehashed
// log met by `run --resume`, a folder holding a fork whose parent is gone, `verify /`, and a
// sweep's --log inside another episode's log folder each end with the code of what they are,
// naming what is wrong.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GENESIS_HASH, seal, type LogRecord } from "../events/record.ts";
import { EpisodeFolderRefused } from "../services/kernel/errors.ts";
import { distinctPrefixes } from "../events/hashPrefixes.ts";
import { episodeDirsUnder } from "../services/kernel/verifyTree.ts";
import { firstSegment, logRecords, runCli, tempDir } from "./helpers.ts";

const work = tempDir("user-input-exits");

/** Rewrites an episode's log as `mutate` leaves its records, re-sealing the hash chain: only what they say differs. */
function reseal(dir: string, mutate: (records: LogRecord[]) => LogRecord[]): void {
  let previous = GENESIS_HASH;
  const lines = mutate(logRecords(dir)).map((r) => {
    const sealed = seal(previous, r.episode, r.seq, { type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause }, r.v, r.meta);
    previous = sealed.record.hash;
    return sealed.line;
  });
  writeFileSync(firstSegment(dir), lines.join(""));
}

describe("a log altered and rehashed", () => {
  it("run --resume over a tick.committed whose stateHash was edited is the divergence verify reports (exit 1), not exit 4", async () => {
    const dir = join(work, "resume");
    expect((await runCli(["run", "auratown", "--seed", "5", "--ticks", "6", "--log", dir, "-q"])).code).toBe(0);
    // Cut after tick 3 (an interrupted run), and say tick 2's state was another.
    reseal(dir, (records) => {
      const kept = records.slice(0, records.findIndex((r) => r.type === "tick.committed" && r.tick === 3) + 1);
      const committed = kept.find((r) => r.type === "tick.committed" && r.tick === 2)!;
      (committed.payload as { stateHash: string }).stateHash = "f".repeat(64);
      return kept;
    });
    const seq = logRecords(dir).find((r) => r.type === "tick.committed" && r.tick === 2)!.seq;
    const verify = await runCli(["verify", dir]);
    expect(verify.code).toBe(1);
    const resume = await runCli(["run", "auratown", "--seed", "5", "--ticks", "6", "--log", dir, "--resume", "-q"]);
    expect(resume.code, resume.err).toBe(1);
    expect(resume.err).toMatch(new RegExp(`probetown: divergence: divergence at seq ${seq} \\(tick 2\\): tick 2 state hash differs \\(recorded ffffffffffff…, replayed [0-9a-f]{12}…\\)\\n`));
    expect(resume.err).toContain("actors whose state differs: (none: the recorded stateHash ffffffffffff… is not the hash of the recorded parts,");
    expect(resume.err).toContain("the logged tail run --resume checks, from the snapshot it continued from, holds another state here than the run reproduces; `probetown verify` on the episode says more");
    // What verify says of the tick, resume says too.
    expect(resume.err).toContain(verify.out.split("\n")[0]!.replace(/^FAILED: /, ""));
  });

  it("hash prefixes in a divergence are cut long enough to differ", () => {
    const a = `${"ab".repeat(10)}1${"0".repeat(43)}`;
    const b = `${"ab".repeat(10)}2${"0".repeat(43)}`;
    const [pa, pb] = distinctPrefixes(a, b);
    expect(pa).not.toBe(pb);
    expect(pa).toBe(`${"ab".repeat(10)}1000…`);
    expect(distinctPrefixes("1".repeat(64), "2".repeat(64))).toEqual([`${"1".repeat(12)}…`, `${"2".repeat(12)}…`]);
    expect(distinctPrefixes("abc", "abd")).toEqual(["abc", "abd"]);
  });
});

describe("a hash mismatch in the chain", () => {
  it("shows the recomputed and stored hashes to where they differ (12 digits showed two hashes sharing them as equal)", async () => {
    const dir = join(work, "chain");
    expect((await runCli(["run", "auratown", "--seed", "2", "--ticks", "2", "--log", dir, "-q"])).code).toBe(0);
    const file = firstSegment(dir);
    const lines = readFileSync(file, "utf8").split("\n");
    const record = JSON.parse(lines[3]!) as { hash: string };
    const h = record.hash;
    const stored = `${h.slice(0, 20)}${h[20] === "0" ? "1" : "0"}${h.slice(21)}`;
    lines[3] = lines[3]!.replace(h, stored);
    writeFileSync(file, lines.join("\n"));
    const r = await runCli(["verify", dir]);
    expect(r.code).toBe(3);
    expect(r.out + r.err).toContain(`(recomputed ${h.slice(0, 24)}…, stored ${stored.slice(0, 24)}…)`);
  });
});

describe("verify of a folder", () => {
  it("a fork whose parent and base snapshot are gone is exit 2 in a folder as alone, naming the parent's log", async () => {
    const tree = join(work, "tree");
    const parent = join(tree, "parent");
    const child = join(tree, "child");
    expect((await runCli(["run", "auratown", "--seed", "7", "--ticks", "4", "--log", parent, "-q"])).code).toBe(0);
    expect((await runCli(["fork", parent, "--at", "1", "--condition", "no-reflection", "--log", child, "-q"])).code).toBe(0);
    rmSync(parent, { recursive: true });
    for (const name of readdirSync(join(child, "snapshots"))) rmSync(join(child, "snapshots", name));
    const alone = await runCli(["verify", child]);
    expect(alone.code).toBe(2);
    const message = `${join(child, "snapshots")}: the fork's base snapshot`;
    expect(alone.err).toContain(message);
    expect(alone.err).toContain("and its parent's log (../parent/log) is not there to rebuild it from");
    const folder = await runCli(["verify", tree]);
    expect(folder.code, folder.out + folder.err).toBe(2);
    expect(folder.out).toContain(`${child}: could not be checked: ${message}`);
    expect(folder.out).toContain("its parent's log (../parent/log) is not there");
  });

  it("verify / is refused as the filesystem root (it walked every folder until EACCES)", async () => {
    const r = await runCli(["verify", "/"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe("probetown: error: /: the filesystem root, not a folder of episodes: give an episode directory, or the folder a sweep or an eval wrote its episodes to\n");
  });

  it("the walk for episodes is bounded in depth and folders, naming the bound", () => {
    const root = join(work, "deep");
    mkdirSync(join(root, "a", "b", "c", "d"), { recursive: true });
    for (const n of [1, 2, 3]) mkdirSync(join(root, `w${n}`));
    const depth = (() => {
      try {
        return episodeDirsUnder(root, { folders: 100, depth: 2 });
      } catch (e) {
        return e;
      }
    })();
    expect(depth).toBeInstanceOf(EpisodeFolderRefused);
    expect((depth as EpisodeFolderRefused).fields).toEqual({ dir: root, reason: "depth", limit: 2 });
    expect((depth as Error).message).toBe(`${root}: folders nested more than 2 deep below it, not a folder of episodes: give an episode directory, or the folder a sweep or an eval wrote its episodes to`);
    expect(() => episodeDirsUnder(root, { folders: 4, depth: 10 })).toThrow(`${root}: more than 4 folders below it`);
    expect(episodeDirsUnder(root, { folders: 100, depth: 10 })).toEqual([]);
  });
});

describe("a sweep's --log inside another episode's folders", () => {
  it("sweep envprobe --log <episode>/log/x is refused as sweep auratown's is, writing nothing there", async () => {
    const episode = join(work, "owner");
    expect((await runCli(["run", "auratown", "--seed", "1", "--ticks", "2", "--log", episode, "-q"])).code).toBe(0);
    const before = readdirSync(join(episode, "log"));
    for (const world of ["envprobe", "auratown"]) {
      const r = await runCli(["sweep", world, "--seeds", "1", "--log", join(episode, "log", "x")]);
      expect(r.code, world).toBe(2);
      expect(r.err, world).toBe(`probetown: error: --log ${join(episode, "log", "x")}: lies in ${join(episode, "log")}, the log folder of the episode in ${episode}; its files would be mixed with that episode's: choose a directory outside it\n`);
    }
    expect(readdirSync(join(episode, "log"))).toEqual(before);
    expect(existsSync(join(episode, "log", "x"))).toBe(false);
  });
});

