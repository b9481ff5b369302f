import { describe, expect, it } from "vitest";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { basename, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { firstSegment, logRecords, tempDir, runCli, startCli, until, withoutMetaLine } from "./helpers.ts";
import { checkTownRunDisk, checkTownRunFits, townRunDisk, townRunHeap } from "../services/auratown/limits.ts";
import { resolveNewEpisodeConfig } from "../actors/actor.ts";
import { worldNamed } from "../services/kernel/worlds.ts";
import { readSnapshotFile, snapshotFileText } from "../infra/snapshotStore.ts";
import type { TownConfig } from "../actors/auratown/config.ts";

const root = join(import.meta.dirname, "..");

const cli = runCli;

describe("probetown CLI", () => {
  const work = tempDir("cli");
  const dir = join(work, "day");

  it("run prints a readable summary and where the log and trace went", async () => {
    const r = await cli(["run", "auratown", "--seed", "42", "--log", dir]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Where everyone went/);
    expect(r.out).toMatch(/Conversations \(\d+\)/);
    expect(r.out).toMatch(/Stale beliefs: \d+ runs/);
    expect(r.out).toContain(`log:   ${join(dir, "log")}`);
    expect(r.out).toContain(`trace: ${join(dir, "trace.jsonl")}`);
    // The last tick's state hash, as a run over NATS prints it and replay recomputes it.
    const printed = /\nstate hash ([0-9a-f]{64})\n/.exec(r.out)?.[1];
    expect(printed).toBeDefined();
    expect((await cli(["replay", dir])).out).toContain(`state hash ${printed}`);
  });

  it("verify exits 0 on an intact log, 3 on a damaged one naming file and seq", async () => {
    expect((await cli(["verify", dir])).code).toBe(0);
    const file = firstSegment(dir);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, -40));
    const torn = await cli(["verify", dir]);
    expect(torn.code).toBe(3);
    expect(torn.out).toMatch(/000000000000\.jsonl: line \d+: torn final record .*last good record seq \d+/);
    const repaired = await cli(["repair", dir]);
    expect(repaired.code).toBe(0);
    expect(repaired.out).toMatch(/cut back to seq \d+; the cut bytes are kept in .*\.torn-\d+/);
    writeFileSync(file, text);
    expect((await cli(["repair", dir])).out).toMatch(/intact, nothing to repair/);
  });

  it("fork prints the child's log, and verify --json reports on it", async () => {
    const child = join(work, "child");
    const r = await cli(["fork", dir, "--at", "10", "--condition", "no-conversation", "--log", child, "--quiet"]);
    expect(r.code).toBe(0);
    expect(r.out.trim().split("\n")[0]).toBe(`log:   ${join(child, "log")}`);
    const v = await cli(["verify", child, "--json"]);
    expect(v.code).toBe(0);
    expect(JSON.parse(v.out)).toMatchObject({ ok: true, ticks: 23 });
    // The child holds its parent's tick 10 (its start) and its own ticks 11–33: ranges say so.
    expect((await cli(["replay", child, "--to-tick", "10"])).code).toBe(0);
    // --snapshot of that start is the fork's base snapshot, kept with it (it was exit 2, "no committed tick 10").
    const start = await cli(["replay", child, "--to-tick", "10", "--snapshot", "--json"]);
    expect(start.code, start.err).toBe(0);
    const kept = JSON.parse(start.out) as { stateHash: string; snapshot: string };
    expect(kept.snapshot).toBe(join(child, "snapshots", `${kept.stateHash}.json`));
    expect(readSnapshotFile(kept.snapshot)).toMatchObject({ tick: 10, stateHash: kept.stateHash });
    const early = await cli(["replay", child, "--to-tick", "4"]);
    expect(early.code).toBe(2);
    expect(early.err).toMatch(/--to-tick 4: .* has no committed tick 4 \(a fork after its parent's tick 10: that tick's state, then its own committed ticks 11–33; earlier ticks are in the parent's log\)/);
    const before = await cli(["inspect", child, "--from", "2", "--to", "5"]);
    expect(before.code).toBe(2);
    expect(before.err).toMatch(/--to 5: .* has no tick 5 \(a fork after its parent's tick 10/);
    // Its summary gives beliefs held since before the fork point a clock time too, like the rest.
    const summary = await cli(["fork", dir, "--at", "10", "--condition", "baseline", "--log", join(work, "child-summary")]);
    expect(summary.code).toBe(0);
    expect(summary.out).toMatch(/\(held since \d\d:\d\d\)/);
    expect(summary.out).not.toMatch(/\(held since t\d+\)/);
  });

  it("verify of a fork checks its parent's log up to the fork point only: damage after it is not the fork's, damage before it is reported (exit 3)", async () => {
    const parent = join(work, "forked-parent");
    const child = join(work, "forked-child");
    expect((await cli(["run", "auratown", "--seed", "6", "--ticks", "8", "--trace", "none", "--quiet", "--log", parent])).code).toBe(0);
    expect((await cli(["fork", parent, "--at", "2", "--condition", "no-reflection", "--trace", "none", "--quiet", "--log", child])).code).toBe(0);
    const good = readFileSync(firstSegment(parent), "utf8");
    const lines = good.split("\n");
    const atSeq = logRecords(child)[0]!.seq;
    const alter = (index: number) => writeFileSync(firstSegment(parent), lines.map((l, i) => (i === index ? l.replace('"tick":', '"tick":9') : l)).join("\n"));
    alter(atSeq + 20);
    const after = await cli(["verify", child]);
    expect(after.code, after.out + after.err).toBe(0);
    expect(after.out).toMatch(/^OK: /);
    alter(atSeq - 20);
    const before = await cli(["verify", child, "--json"]);
    expect(before.code, before.err).toBe(3);
    expect(JSON.parse(before.out).problem.message).toMatch(new RegExp(`^the fork's parent log is damaged before the fork point \\(seq ${atSeq}\\), so the fork's link to it cannot be checked: .*000000000000\\.jsonl: seq ${atSeq - 20} \\(line ${atSeq - 19}\\): hash mismatch`));
    writeFileSync(firstSegment(parent), good);
  });

  it("a fork whose snapshots/ folder is gone rebuilds its base from its parent's log (fork of a fork too); without the parent it says what is missing", async () => {
    const parent = join(work, "base-parent");
    const child = join(work, "base-child");
    const grandchild = join(work, "base-grandchild");
    expect((await cli(["run", "auratown", "--seed", "12", "--ticks", "8", "--trace", "none", "--quiet", "--log", parent])).code).toBe(0);
    expect((await cli(["fork", parent, "--at", "2", "--condition", "no-reflection", "--trace", "none", "--quiet", "--log", child])).code).toBe(0);
    expect((await cli(["fork", child, "--at", "4", "--condition", "baseline", "--trace", "none", "--quiet", "--log", grandchild])).code).toBe(0);
    const hashes = async (dir: string) => JSON.parse((await cli(["replay", dir, "--json"])).out).stateHash as string;
    const before = [await hashes(child), await hashes(grandchild)];
    rmSync(join(child, "snapshots"), { recursive: true });
    rmSync(join(grandchild, "snapshots"), { recursive: true });
    for (const dir of [child, grandchild]) {
      const v = await cli(["verify", dir]);
      expect(v.code, v.err).toBe(0);
      expect((await cli(["inspect", dir, "--to", "6"])).code).toBe(0);
    }
    expect([await hashes(child), await hashes(grandchild)]).toEqual(before);
    expect((await cli(["fork", grandchild, "--at", "6", "--condition", "no-conversation", "--trace", "none", "--quiet", "--log", join(work, "base-great")])).code).toBe(0);
    rmSync(parent, { recursive: true });
    const orphan = await cli(["verify", child]);
    expect(orphan.code).toBe(2);
    expect(orphan.err).toMatch(/base-child\/snapshots: the fork's base snapshot [0-9a-f]{12}… is missing, and its parent's log \(\.\.\/base-parent\/log\) is not there to rebuild it from\n$/);
  }, 120_000); // under 1 s with the commands in-process; spawned, 10 s in a CI run and 22 s on a loaded machine

  it("a damaged snapshot is a damaged input (exit 3, naming it), never an internal error", async () => {
    const parent = join(work, "snapped");
    expect((await cli(["run", "auratown", "--seed", "5", "--ticks", "6", "--snapshot-every", "2", "--log", parent, "--quiet"])).code).toBe(0);
    const snaps = join(parent, "snapshots");
    const pointer = JSON.parse(readFileSync(join(snaps, "latest.json"), "utf8")) as { key: string };
    const file = join(snaps, `${pointer.key}.json`);
    // Its JSON text (the file is compressed); written back as text, it is a version-1 file, which loads too.
    const good = snapshotFileText(file);
    // Altered: a resident's hashed state changed by hand, the key left as it was.
    expect(good).toMatch(/"nearbyCount":\d+/);
    writeFileSync(file, good.replace(/"nearbyCount":(\d+)/, (_m, n: string) => `"nearbyCount":${Number(n) + 1}`));
    const altered = await cli(["fork", parent, "--at", "5", "--ticks", "8", "--condition", "baseline", "--log", join(work, "snapped-fork")]);
    expect(altered.code, altered.err).toBe(3);
    // Named by its file, with what to do (the README's exit table promises the file).
    expect(altered.err).toBe(`probetown: damaged snapshot: ${file}: does not hash to its key: it was altered; remove it, and the fork replays the parent to tick 5 instead (the parent's log is not affected)\n`);
    const resumedOnIt = await cli(["run", "auratown", "--seed", "5", "--ticks", "6", "--snapshot-every", "2", "--log", parent, "--resume", "--quiet"]);
    expect(resumedOnIt.code, resumedOnIt.err).toBe(3);
    expect(resumedOnIt.err).toBe(`probetown: damaged snapshot: ${file}: does not hash to its key: it was altered; remove it, and \`run --resume\` continues from an earlier snapshot or the episode's start (the log is not affected)\n`);
    writeFileSync(file, "{ not json");
    const garbage = await cli(["fork", parent, "--at", "5", "--ticks", "8", "--condition", "baseline", "--log", join(work, "snapped-fork2")]);
    expect(garbage.code, garbage.err).toBe(3);
    expect(garbage.err).toContain(`${file}: snapshot is not valid JSON`);
    writeFileSync(file, good);
    // A damaged latest pointer is not needed: the log's committed ticks name the snapshots (it stopped the run, exit 3).
    writeFileSync(join(snaps, "latest.json"), "garbage");
    const resume = await cli(["run", "auratown", "--seed", "5", "--ticks", "6", "--snapshot-every", "2", "--log", parent, "--resume", "--quiet"]);
    expect(resume.code, resume.err).toBe(0);
    expect(resume.err).toBe(`run --resume: the latest-snapshot pointer (${join(snaps, "latest.json")}) is damaged: not a {key, tick} JSON object whose key is a state hash; it is kept as it is until the next snapshot replaces it; continuing after tick 5 from ${file}\n`);
    expect(readFileSync(join(snaps, "latest.json"), "utf8")).toBe("garbage");
  });

  it("inspect shows a tick's events and each agent's private state and beliefs", async () => {
    const r = await cli(["inspect", dir, "--from", "12", "--to", "12", "--agent", "lin-wei"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/tick 12 · Day 1 12:00/);
    expect(r.out).toMatch(/Lin Wei +@ Sunrise Cafe .*busy\/tired-focused \[workplace_loaded\]/);
    expect(r.out).toMatch(/believes .*Zhang Hao: .*\(STALE\)/);
    expect(r.out).not.toMatch(/Chen Mei +@/);
    // --json keeps to the agent too: its ticks and its part of the summary.
    const j = await cli(["inspect", dir, "--agent", "Lin Wei", "--json"]);
    expect(j.code).toBe(0);
    const { ticks, summary } = JSON.parse(j.out) as { ticks: { agents: { id: string }[] }[]; summary: { itineraries: object; conversations: { a: string; b: string }[]; staleBeliefs: { observer: string; target: string }[] } };
    expect(ticks.length).toBeGreaterThan(20);
    expect(new Set(ticks.flatMap((t) => t.agents.map((a) => a.id)))).toEqual(new Set(["agent/lin-wei"]));
    expect(Object.keys(summary.itineraries)).toEqual(["Lin Wei"]);
    for (const c of summary.conversations) expect([c.a, c.b]).toContain("Lin Wei");
    expect(summary.staleBeliefs.length).toBeGreaterThan(0);
    for (const b of summary.staleBeliefs) expect([b.observer, b.target]).toContain("Lin Wei");
  });

  it("a reader that closes the pipe early (inspect | head) ends inspect quietly with exit 0", async () => {
    const { child, done } = startCli(["inspect", dir]);
    // Close our end after the first chunk, as `head -1` does.
    child.stdout!.once("data", () => child.stdout!.destroy());
    const r = await done;
    expect(r.err).not.toMatch(/EPIPE|Unhandled|at /);
    expect(r.code).toBe(0);
  });

  it("replay rebuilds the state hash the run committed, at the end or at a chosen tick", async () => {
    const committed = logRecords(dir).filter((r) => r.type === "tick.committed");
    const r = await cli(["replay", dir, "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ lastTick: 33, incompleteTick: false });
    expect(out.stateHash).toBe((committed.at(-1)!.payload as { stateHash: string }).stateHash);
    const mid = JSON.parse((await cli(["replay", dir, "--to-tick", "9", "--json"])).out);
    expect(mid.lastTick).toBe(9);
    expect(mid.stateHash).toBe((committed[9]!.payload as { stateHash: string }).stateHash);
  });

  it("replay --snapshot keeps a snapshot of any committed tick; --state prints every actor's state", async () => {
    const committed = logRecords(dir).filter((r) => r.type === "tick.committed");
    const key = (committed[17]!.payload as { stateHash: string }).stateHash;
    rmSync(join(dir, "snapshots", `${key}.json`), { force: true }); // replay writes it (again, if the run kept one)
    const out = JSON.parse((await cli(["replay", dir, "--to-tick", "17", "--snapshot", "--state", "--json"])).out);
    expect(out.snapshot).toContain(`snapshots/${key}.json`);
    const snap = readSnapshotFile(join(dir, "snapshots", `${key}.json`));
    expect(snap).toMatchObject({ tick: 17, seq: committed[17]!.seq, stateHash: key });
    expect(Object.keys(out.state).sort()).toEqual(["agent/chen-mei", "agent/lin-wei", "agent/liu-yang", "agent/wang-jun", "agent/zhang-hao", "env/auratown"]);
    expect(out.state["agent/lin-wei"].private).toMatchObject({ availability: expect.any(String), rule: expect.any(String) });
  });

  it("replay of a log that ends part-way through a tick gives its last committed tick's state: --state is that tick's, and a --snapshot of it restores (a resume continues from it)", async () => {
    const full = join(work, "cut-full");
    const cut = join(work, "cut");
    const args = ["run", "auratown", "--seed", "11", "--ticks", "8", "--snapshot-every", "0", "--trace", "none", "--quiet"];
    expect((await cli([...args, "--log", full])).code).toBe(0);
    expect((await cli([...args, "--log", cut])).code).toBe(0);
    // Killed a few records into tick 6, before its only snapshot (the last tick's) was kept.
    const lines = readFileSync(firstSegment(cut), "utf8").split("\n");
    const committed5 = lines.findIndex((l) => l.includes('"type":"tick.committed"') && l.includes('"tick":5,'));
    writeFileSync(firstSegment(cut), lines.slice(0, committed5 + 6).join("\n") + "\n");
    rmSync(join(cut, "snapshots"), { recursive: true });
    const state = async (episode: string, extra: string[]) => JSON.parse((await cli(["replay", episode, "--state", "--json", ...extra])).out) as { lastTick: number; incompleteTick: boolean; stateHash: string; state: unknown };
    const atCut = await state(cut, []);
    const at5 = await state(full, ["--to-tick", "5"]);
    expect(atCut).toMatchObject({ lastTick: 5, incompleteTick: true, stateHash: at5.stateHash });
    expect(atCut.state).toEqual(at5.state);
    const kept = await cli(["replay", cut, "--snapshot"]);
    expect(kept.code, kept.err).toBe(0);
    expect(kept.out).toContain(`snapshots/${at5.stateHash}.json`);
    const resumed = await cli([...args, "--log", cut, "--resume"]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out + resumed.err).not.toMatch(/damaged/);
    expect(logRecords(cut).map(withoutMetaLine)).toEqual(logRecords(full).map(withoutMetaLine));
  });

  it("rejects bad input with exit 2 and a message naming the flag or value", async () => {
    const cases: [string[], RegExp][] = [
      [["run", "atlantis", "--seed", "1", "--log", join(work, "x1")], /unknown world 'atlantis' \(known: auratown, aura-scene, envprobe, household\)/],
      [["run", "auratown", "--seed", "forty"], /--seed expects an integer, got 'forty'/],
      [["run", "auratown", "--seed", "1", "--condition", "sunny", "--log", join(work, "x2")], /unknown condition 'sunny'/],
      [["run", "auratown", "--seed", "1", "--log", dir], /already holds an episode log/],
      [["fork", dir, "--at", "99", "--condition", "baseline", "--log", join(work, "x3")], /--at 99: the parent has no committed tick 99/],
      [["fork", dir, "--at", "33", "--condition", "baseline", "--log", join(work, "x3b")], /--at 33: the parent runs 34 ticks, so its child would have none left/],
      [["fork", dir, "--at", "5", "--ticks", "6", "--condition", "baseline", "--log", join(work, "x3c")], /--ticks 6: the child's total ticks, counted from tick 0 as its parent's, so it would end at tick 5; forked after tick 5, it must run past it: give --ticks 7 or more/],
      [["verify", join(work, "missing")], /no such episode directory/],
      [["replay", dir, "--to-tick", "999"], /--to-tick 999: .* has no committed tick 999 \(committed ticks: 0–33\)/],
      [["inspect", dir, "--agent", "nobody"], /--agent nobody: no actor of .* has that id or name \(actors: agent\/chen-mei/],
      [["inspect", dir, "--from", "99"], /--from 99: .* has no tick 99/],
      [["run", "auratown", "--seed", "2", "--log", dir, "--resume"], /holds the log of episode auratown-s42-baseline, not auratown-s2-baseline/],
      // It said to resume the fork "with that episode's world, seed and condition", which no run can.
      [["run", "auratown", "--seed", "42", "--log", join(work, "child"), "--resume"], /child\/log holds the log of the fork auratown-s42-baseline~t10-no-conversation, not auratown-s42-baseline \(a fork is not resumed: fork its parent again into another --log for more of it\); choose another --log$/m],
      [["run", "auratown", "--seed", "1", "--log", join(root, "package.json")], /--log .*package\.json: is a file; --log takes a directory/],
      [["run", "auratown", "--seed", "1", "--log", join(root, "package.json"), "--resume"], /--log .*package\.json: is a file; --log takes a directory/],
      [["run", "auratown", "--seed", "99999999999999999999"], /--seed expects an integer from 0 to 9007199254740991, got '99999999999999999999'/],
      // One rule for seeds: `run --seed -1` ran while `sweep --seeds` refused it, and a sweep took seeds past 2^53 - 1 (two typed apart were one) that every run then refused.
      [["run", "auratown", "--seed", "-1"], /--seed expects an integer ≥ 0, got '-1'/],
      [["sweep", "auratown", "--seeds", "-1", "--ticks", "1", "--log", join(work, "x7")], /--seeds: expected integers and ranges like 1-200 or 1,5,9 \(each seed an integer from 0 to 9007199254740991\), got '-1'/],
      [["sweep", "auratown", "--seeds", "9007199254740991-9007199254740993", "--ticks", "1", "--log", join(work, "x7")], /--seeds: '9007199254740991-9007199254740993': a seed is an integer from 0 to 9007199254740991/],
      [["sweep", "envprobe", "--seeds", "0-3", "--held-out", "99999999999999999999", "--log", join(work, "x7")], /--held-out: '99999999999999999999': a seed is an integer from 0 to 9007199254740991/],
      // Another episode's log or snapshot folder is its stores': a run there mixed its files in (and `verify <dir>/log` then checked the newcomer).
      [["run", "auratown", "--seed", "1", "--ticks", "2", "--log", join(dir, "log")], /--log .*day\/log: is the log folder of the episode in .*day; its files would be mixed with that episode's: choose a directory outside it/],
      [["run", "auratown", "--seed", "42", "--log", join(dir, "log"), "--resume"], /--log .*day\/log: is the log folder of the episode in .*day; --log names the episode directory: --log .*day$/m],
      [["fork", dir, "--at", "3", "--condition", "baseline", "--log", join(dir, "snapshots", "f")], /--log .*day\/snapshots\/f: lies in .*day\/snapshots, the snapshot folder of the episode in .*day/],
      [["sweep", "auratown", "--seeds", "1", "--ticks", "2", "--log", join(dir, "log", "sweep")], /--log .*day\/log\/sweep: lies in .*day\/log, the log folder of the episode in .*day/],
      // A JSONL trace there was appended to that episode's log segment (damaged: exit 3 from then on); one in the run's own log/ made the log find its folder taken (exit 4).
      [["run", "auratown", "--seed", "1", "--ticks", "2", "--log", join(work, "x5"), "--trace", `jsonl:${firstSegment(dir)}`], /--trace jsonl:.*day\/log\/000000000000\.jsonl: lies in .*day\/log, the log folder of the episode in .*day: a trace there is written among that episode's files; name a file outside it/],
      [["run", "auratown", "--seed", "1", "--ticks", "2", "--log", join(work, "x6"), "--trace", `jsonl:${join(work, "x6", "log", "000000000000.jsonl")}`], /--trace jsonl:.*x6\/log\/000000000000\.jsonl: lies in .*x6\/log, the log folder of this episode: a trace there is written among its files; name a file outside it/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(message);
    }
    expect(readdirSync(join(dir, "log")).filter((f) => !/^\d{12}\.jsonl/.test(f))).toEqual([]);
    // Two town sizes: --agents won over the config's extraAgents without a word.
    const sizes = await cli(["run", "auratown", "--seed", "1", "--ticks", "1", "--agents", "6", "--config", '{"extraAgents": 5}', "--log", join(work, "x4")]);
    expect(sizes.code).toBe(2);
    expect(sizes.err).toBe('probetown: error: --agents 6 and --config {"extraAgents": 5}: "extraAgents": 5 both say how large the town is (6 residents, or 5 + 5): give one of them\n');
    // An empty --log (an unset shell variable) was the current directory: log/ and trace.jsonl went there.
    const here = tempDir("empty-log");
    for (const args of [["run", "auratown", "--seed", "1", "--ticks", "1", "--log", ""], ["sweep", "auratown", "--seeds", "1", "--ticks", "1", "--log", ""]]) {
      const empty = await cli(args, here);
      expect(empty.code, args.join(" ")).toBe(2);
      expect(empty.err).toBe("probetown: error: --log: expected a directory, got ''\n");
    }
    expect(readdirSync(here)).toEqual([]);
    expect(existsSync(join(dir, "snapshots", "f"))).toBe(false);
  }, 120_000); // some 60 commands one after another: ~1 s in-process; spawned, 20 s in a CI run, more on a loaded machine

  it("rejects a malformed config file naming the file and field", async () => {
    const bad = join(work, "bad.json");
    writeFileSync(bad, JSON.stringify({ speed: 0, agents: [{ id: "lin-wei" }] }));
    const r = await cli(["run", "auratown", "--seed", "1", "--config", bad, "--log", join(work, "x4")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/invalid auratown config/);
    writeFileSync(bad, "{ nope");
    const r2 = await cli(["run", "auratown", "--seed", "1", "--config", bad, "--log", join(work, "x5")]);
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/--config .*bad\.json: not valid JSON/);
    for (const [config, message] of [
      [{ incidents: { rate: 2 } }, /incidents\.rate: expected a probability in \[0, 1\], got 2/],
      [{ clock: { tickMinutes: 7 } }, /clock\.tickMinutes: expected a positive number of minutes that divides the day/],
      [{ agents: [] }, /agents: expected at least one resident/],
    ] as const) {
      writeFileSync(bad, JSON.stringify(config));
      const r3 = await cli(["run", "auratown", "--seed", "1", "--config", bad, "--log", join(work, "x6")]);
      expect(r3.code).toBe(2);
      expect(r3.err).toMatch(/--config .*bad\.json: invalid auratown config/);
      expect(r3.err).toMatch(message);
    }
    writeFileSync(bad, "[]");
    expect((await cli(["run", "auratown", "--seed", "1", "--config", bad, "--log", join(work, "x8")])).err).toMatch(/--config .*bad\.json: expected a JSON object of config fields, got an array/);
    expect((await cli(["run", "auratown", "--seed", "1", "--config", "[1,2]", "--log", join(work, "x8")])).err).toMatch(/--config \[1,2\]: expected a JSON object of config fields, got an array/);
    writeFileSync(bad, JSON.stringify({ queries: [{ id: "1", text: "Is Ben around?" }, { id: "1", text: "Is Ana free?" }], order: ["1"] }));
    expect((await cli(["run", "aura-scene", "--seed", "1", "--config", bad, "--log", join(work, "x9")])).err).toMatch(/queries: the id '1' is used more than once/);
    writeFileSync(bad, JSON.stringify({ maxSteps: -1 }));
    const scene = await cli(["run", "aura-scene", "--seed", "1", "--condition", "literal", "--config", bad, "--log", join(work, "x7")]);
    expect(scene.code).toBe(2);
    expect(scene.err).toMatch(/--config .*bad\.json: invalid aura-scene config:\n {2}- maxSteps: expected ≥ 0, got -1/);
  });

  it("run --resume where there is no log yet says it starts the episode (a typo in --log would pass unnoticed)", async () => {
    const fresh = await cli(["run", "auratown", "--seed", "2", "--ticks", "2", "--log", join(work, "not-yet"), "--resume", "--trace", "none"]);
    expect(fresh.code).toBe(0);
    expect(fresh.err).toMatch(/run --resume: no log at .*not-yet yet; starting the episode there/);
    const again = await cli(["run", "auratown", "--seed", "2", "--ticks", "2", "--log", join(work, "not-yet"), "--resume", "--trace", "none"]);
    expect(again.err).not.toMatch(/no log at/);
    expect(again.out).toMatch(/resumed after tick 1, 0 records appended/);
    // A torn tail is cut by the resume, which says so and where the bytes went.
    const segment = firstSegment(join(work, "not-yet"));
    writeFileSync(segment, readFileSync(segment, "utf8").slice(0, -30));
    const torn = await cli(["run", "auratown", "--seed", "2", "--ticks", "2", "--log", join(work, "not-yet"), "--resume", "--trace", "none"]);
    expect(torn.code, torn.err).toBe(0);
    expect(torn.err).toMatch(/run --resume: .*000000000000\.jsonl: line \d+: torn final record .*\ncut back to the last good record; the cut bytes are kept in .*\.torn-\d+/);
    expect((await cli(["verify", join(work, "not-yet")])).code).toBe(0);
  });

  it("verify calls a log folder without its segments, or without its first one, damaged (exit 3) and says which", async () => {
    const base = join(work, "segments");
    expect((await cli(["run", "auratown", "--seed", "3", "--ticks", "4", "--log", base, "--trace", "none", "-q"])).code).toBe(0);
    const text = readFileSync(firstSegment(base), "utf8");
    rmSync(firstSegment(base));
    const empty = await cli(["verify", base]);
    expect(empty.code).toBe(3);
    expect(empty.out + empty.err).toMatch(/holds no records \(its segments are missing/);
    const lines = text.split("\n");
    writeFileSync(join(base, "log", "000000000040.jsonl"), lines.slice(40).join("\n"));
    const cut = await cli(["verify", base]);
    expect(cut.code).toBe(3);
    expect(cut.out + cut.err).toMatch(/seq 40 \(line 1\): the log begins at seq 40 with '[a-z._]+', not at seq 0 or with a fork's header: its first segment is missing/);
    expect(cut.out + cut.err).not.toMatch(/records before this one are intact/);
  });

  it("summarises a large town from its records", async () => {
    const r = await cli(["run", "auratown", "--seed", "4", "--agents", "70", "--ticks", "14", "--log", join(work, "big"), "--trace", "none"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Town of 70 agents: \d+ conversations, \d+ incidents, \d+ reflections, \d+ decisions/);
    expect(r.out).toMatch(/Private-state changes by the rule that fired: sleep \d+ · workplace_loaded \d+/);
  });

  it("refuses a town too large for the heap before building it, naming the flag, the need and the limit", async () => {
    const huge = await cli(["run", "auratown", "--seed", "1", "--agents", "100000000", "--log", join(work, "huge")]);
    expect(huge.code).toBe(2);
    expect(huge.err).toMatch(/--agents 100000000: a town of 100,000,000 residents needs about [\d.]+ GiB of heap .* more than this machine's [\d.]+ GiB of memory; use fewer/);
    // within the machine but above Node's default heap: how to raise it
    const big = spawnSync(process.execPath, ["--max-old-space-size=512", join(root, "services/cli/main.ts"), "run", "auratown", "--seed", "1", "--config", '{"extraAgents": 4000}', "--log", join(work, "big4k")], { encoding: "utf8" });
    expect(big.status).toBe(2);
    expect(big.stderr).toMatch(/--config \{"extraAgents": 4000\}: extraAgents: a town of 4,005 residents needs about 1\.1 GiB of heap .* limit of 0\.\d GiB; use fewer, or raise the limit with NODE_OPTIONS=--max-old-space-size=\d+/);
    expect(existsSync(join(work, "huge")) || existsSync(join(work, "big4k"))).toBe(false);
  });

  it("refuses a run too long for the heap up front (run --days and --ticks, run --resume, fork --ticks, sweep --ticks), naming the flag, the need and the days that fit", async () => {
    // At --ticks' own ceiling (MAX_TICKS, services/cli/flags.ts) five residents need ~140 GiB of heap.
    const refusal = /: 5 residents over [\d,.]+ days need about [\d.]+ GiB of heap \(~300 KiB a resident for the first day and ~100 KiB a resident for each further one: .*\), more than this machine's [\d.]+ GiB of memory: at most [\d,]+ days \([\d,]+ ticks\) of this town fit; run fewer/;
    const endless = await cli(["run", "auratown", "--seed", "1", "--days", "1000000", "--log", join(work, "endless")]);
    expect(endless.code).toBe(2);
    expect(endless.err).toMatch(new RegExp(`--days 1000000${refusal.source}`));
    const resumed = await cli(["run", "auratown", "--seed", "1", "--ticks", "10000000", "--log", join(work, "endless"), "--resume"]);
    expect(resumed.code).toBe(2);
    expect(resumed.err).toMatch(new RegExp(`--ticks 10000000${refusal.source}`));
    const sweep = await cli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "10000000", "--log", join(work, "endless-sweep")]);
    expect(sweep.code).toBe(2);
    expect(sweep.err).toMatch(new RegExp(`--ticks 10000000${refusal.source}`));
    const parent = join(work, "short-parent");
    expect((await cli(["run", "auratown", "--seed", "1", "--ticks", "3", "--log", parent, "--trace", "none", "--quiet"])).code).toBe(0);
    const fork = await cli(["fork", parent, "--at", "1", "--condition", "baseline", "--ticks", "10000000", "--log", join(work, "endless-fork")]);
    expect(fork.code).toBe(2);
    expect(fork.err).toMatch(new RegExp(`--ticks 10000000${refusal.source}`));
    expect(["endless", "endless-sweep", "endless-fork"].some((d) => existsSync(join(work, d)))).toBe(false);
    // Within the machine but above this Node's heap: the most days that fit, and how to raise it.
    const month = spawnSync(process.execPath, ["--max-old-space-size=1024", join(root, "services/cli/main.ts"), "run", "auratown", "--seed", "1", "--agents", "1000", "--days", "30", "--log", join(work, "month")], { encoding: "utf8" });
    expect(month.status).toBe(2);
    expect(month.stderr).toMatch(/--days 30: 1,000 residents over 30 days need about 3\.1 GiB of heap .* more than this Node's limit of 1\.\d GiB: at most \d+ days \(\d+ ticks\) of this town fit; run fewer, or raise the limit with NODE_OPTIONS=--max-old-space-size=\d+/);
  });

  it("holds sensible town runs within the heap: 1,000 residents for 3 days, 5 for 30, and exactly the days it names", () => {
    const town = (agents: number) => resolveNewEpisodeConfig(worldNamed("auratown"), { extraAgents: agents - 5 }) as TownConfig;
    const flags = { town: "--agents", length: "--days" };
    expect(() => checkTownRunFits(town(1000), 3 * 34, flags, 2 ** 30)).not.toThrow();
    expect(() => checkTownRunFits(town(5), 30 * 34, flags, 2 ** 28)).not.toThrow();
    // The days a refusal says fit do, and one more does not.
    const limit = 2 ** 30;
    let said = "";
    try {
      checkTownRunFits(town(1000), 100 * 34, flags, limit);
    } catch (error) {
      said = (error as Error).message;
    }
    const days = Number(/at most (\d+) days/.exec(said)?.[1]);
    expect(days).toBe(8);
    expect(() => checkTownRunFits(town(1000), days * 34, flags, limit)).not.toThrow();
    expect(() => checkTownRunFits(town(1000), (days + 1) * 34, flags, limit)).toThrow(/--days: 1,000 residents over 9 days/);
    expect(townRunHeap(1000, 3 * 34, 34)).toBe(1000 * (300 + 2 * 100) * 1024);
  });

  it("refuses a new town run that would fill its disk (a snapshot every tick of five residents: --days 1000000 asked 6.8 TB), naming how to write less", async () => {
    const town = resolveNewEpisodeConfig(worldNamed("auratown"), {}) as TownConfig;
    const flags = { town: "--agents 5", length: "--days 3000" };
    const disk = { dir: "runs", trace: true };
    const everyTick = { ...disk, snapshotEvery: 1 };
    // 3,000 days: 102,000 ticks, a snapshot each, of five residents: ~21 GiB.
    expect(townRunDisk(5, 3000 * 34, everyTick)).toBe(5 * 3000 * 34 * (3 * 1024 + 40 * 1024));
    expect(() => checkTownRunDisk(town, 3000 * 34, flags, everyTick, 10 * 2 ** 30)).toThrow(
      /^--days 3000: 5 residents over 3,000 days write about 20\.9 GiB \(~1\.5 KB a resident-tick of log and as much of trace, ~40 KB a resident a snapshot, a snapshot every tick\), more than the 10\.0 GiB free where runs goes; run fewer, keep fewer snapshots \(--snapshot-every n, or 0 for the last tick only\), or trace elsewhere \(--trace none\)$/,
    );
    // By default snapshots come by the log's growth: about a tenth of the log, and the last tick's.
    expect(townRunDisk(5, 3000 * 34, disk)).toBe(5 * 3000 * 34 * 3 * 1024 + Math.ceil((5 * 3000 * 34 * 1536) / 10) + 5 * 40 * 1024);
    expect(() => checkTownRunDisk(town, 3000 * 34, flags, disk, 10 * 2 ** 30)).not.toThrow();
    expect(() => checkTownRunDisk(town, 3000 * 34, flags, disk, 2 ** 30)).toThrow(
      /^--days 3000: 5 residents over 3,000 days write about 1\.5 GiB \(~1\.5 KB a resident-tick of log and as much of trace, ~40 KB a resident a snapshot, snapshots about a tenth of the log\), more than the 1\.0 GiB free where runs goes; run fewer, keep fewer snapshots \(--snapshot-every n, or 0 for the last tick only\), or trace elsewhere \(--trace none\)$/,
    );
    // The last tick's snapshot only, and no trace: it fits.
    expect(() => checkTownRunDisk(town, 3000 * 34, flags, { dir: "runs", trace: false, snapshotEvery: 0 }, 10 * 2 ** 30)).not.toThrow();
    // A month of the five residents, and three days of 1,000, fit in a few gigabytes.
    expect(townRunDisk(5, 30 * 34, everyTick)).toBeLessThan(2 ** 28);
    expect(townRunDisk(1000, 3 * 34, disk)).toBeLessThan(2 ** 29);
  });

  it("--help lists the commands and exit codes", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["run", "replay", "verify", "fork", "inspect"]) expect(r.out).toContain(c);
    expect(r.out).toMatch(/Exit codes: 0 ok · 1 verification failed/);
  });

  it("--version prints the package's version", async () => {
    const r = await cli(["--version"]);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version);
  });
});

describe("a run killed mid-episode", () => {
  it("leaves a log whose committed part verifies; a torn tail is reported and repaired", async () => {
    const dir = join(tempDir("kill"), "ep");
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [join(root, "services/cli/main.ts"), "run", "auratown", "--seed", "3", "--agents", "60", "--days", "30", "--log", dir, "--quiet", "--trace", "none"], { stdio: "ignore" });
    const { existsSync, statSync } = await import("node:fs");
    const segment = join(dir, "log", "000000000000.jsonl");
    // Wait until a good part of the log exists, then kill without warning (after 10 s it was killed
    // anyway, with no log at all on a loaded machine).
    await until(() => (existsSync(segment) && statSync(segment).size > 400_000) || child.exitCode !== null, "400 KB of log", 50_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    // Simulate the worst case too: a record cut in half by the crash.
    const { appendFileSync } = await import("node:fs");
    appendFileSync(segment, '{"cause":12,"episode":"auratown-s3-baseline","from":"agent/lin');
    const torn = await cli(["verify", dir]);
    expect(torn.code).toBe(3);
    expect(torn.out).toMatch(/torn final record/);
    const repaired = await cli(["repair", dir]);
    expect(repaired.code).toBe(0);
    const ok = await cli(["verify", dir, "--json"]);
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.out);
    expect(report.ok).toBe(true);
    expect(report.ticks).toBeGreaterThan(0);
    expect(report.records).toBeGreaterThan(100);
    expect(report.notes.join(" ")).toMatch(/of 1020 planned ticks are in the log|part-way through tick/);
    expect(report.notes).toContain(`\`probetown run … --log ${dir} --resume\`, with the flags that started it, continues it`);
  });
});

describe("a log cut back behind its snapshots, or edited by hand", () => {
  it("run --resume after repair continues from the newest snapshot the log holds and says which; the later ones are kept", async () => {
    const dir = join(tempDir("cut"), "ep");
    const run = ["run", "auratown", "--seed", "5", "--ticks", "8", "--log", dir, "--quiet", "--trace", "none", "--snapshot-every", "1"];
    expect((await cli(run)).code).toBe(0);
    const file = firstSegment(dir);
    const lines = readFileSync(file, "utf8").split("\n");
    const full = lines.filter((l) => l.length > 0).map((l) => JSON.parse(l) as { tick: number });
    // A crash that lost the last ticks: the log ends part-way through a record of tick 5.
    const at = full.findIndex((r) => r.tick === 5) + 2;
    writeFileSync(file, lines.slice(0, at).join("\n") + "\n" + lines[at]!.slice(0, 40));
    const snapshots = readdirSync(join(dir, "snapshots")).sort();
    expect((await cli(["repair", dir])).code).toBe(0);
    const resumed = await cli([...run, "--resume"]);
    expect(resumed.code).toBe(0);
    expect(resumed.err).toMatch(/run --resume: the latest snapshot, of tick 7 .* is past the log's end \(its last committed tick is 4, .* it is kept, not used; continuing after tick 4 from .*snapshots\/[0-9a-f]{64}\.json/);
    expect(readdirSync(join(dir, "snapshots")).sort()).toEqual(snapshots);
    expect((await cli(["verify", dir])).code).toBe(0);
  });

  it("a CRLF conversion or a blank line is damage (exit 3) naming the file and line: verify, replay, run --resume and repair refuse it, leaving the file as it is", async () => {
    const dir = join(tempDir("edited"), "ep");
    const run = ["run", "auratown", "--seed", "6", "--ticks", "3", "--log", dir, "--quiet", "--trace", "none"];
    expect((await cli(run)).code).toBe(0);
    const file = firstSegment(dir);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replaceAll("\n", "\r\n"));
    const verified = await cli(["verify", dir]);
    expect(verified.code).toBe(3);
    expect(verified.out).toMatch(/000000000000\.jsonl: seq 0 \(line 1\): the line ends with a carriage return \(a CRLF line ending\): expected one record per line, LF-terminated/);
    for (const args of [["replay", dir], [...run, "--resume"], ["repair", dir]]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(3);
      expect(r.err).toMatch(/damaged log: .*000000000000\.jsonl: seq 0 \(line 1\): the line ends with a carriage return/);
    }
    expect((await cli(["repair", dir])).err).toMatch(/\n  repair cuts only a torn final record \(a crash mid-write\); damage before the end is left as it is, nothing was changed\n$/);
    expect(readFileSync(file, "utf8")).toBe(text.replaceAll("\n", "\r\n"));
    const lines = text.split("\n");
    writeFileSync(file, [...lines.slice(0, 5), "", ...lines.slice(5)].join("\n"));
    expect((await cli(["verify", dir])).out).toMatch(/000000000000\.jsonl: line 6: a blank line after seq 4: expected one record per line, LF-terminated/);
    writeFileSync(file, text);
    expect((await cli(["verify", dir])).code).toBe(0);
  });
});

describe("verify of a log its run is still writing", () => {
  it("is no damage when read mid-record, nor an interrupted run to resume when read mid-tick: it says a process is writing it", async () => {
    const dir = join(tempDir("live"), "ep");
    expect((await cli(["run", "auratown", "--seed", "3", "--ticks", "4", "--quiet", "--trace", "none", "--log", dir])).code).toBe(0);
    const lines = readFileSync(firstSegment(dir), "utf8").split("\n");
    const tick3 = lines.findIndex((l) => l.includes('"type":"tick.started"') && l.includes('"tick":3,'));
    // Caught mid-tick and mid-record, as a reader sees a run's log between two of its writes.
    writeFileSync(firstSegment(dir), lines.slice(0, tick3 + 3).join("\n") + "\n" + lines[tick3 + 3]!.slice(0, 40));
    expect((await cli(["verify", dir])).code).toBe(3);
    // This test's process stands for the run: it is alive, and the lock names it.
    writeFileSync(join(dir, "log", "writer.lock"), `${process.pid}\n`);
    const live = await cli(["verify", dir]);
    expect(live.code, live.out).toBe(0);
    expect(live.out).toContain(`note: process ${process.pid} is writing this log (its run is going on): verified as far as it had written`);
    expect(live.out).toContain("note: the log ends part-way through tick 3 (being written); everything before it verified");
    expect(live.out).not.toMatch(/--resume|interrupted/);
    // inspect and replay of it show what is written (they failed on the part-written record, exit 3).
    const inspected = await cli(["inspect", dir]);
    expect(inspected.code, inspected.err).toBe(0);
    expect([...inspected.out.matchAll(/── tick (\d+) /g)].map((m) => Number(m[1]))).toEqual([0, 1, 2]);
    expect((await cli(["replay", dir])).out).toMatch(/^replayed auratown-s3-baseline to tick 2 /);
  });
});

describe("run --resume after kill -9", () => {
  it("continues the interrupted episode and ends with the log an uninterrupted run writes", async () => {
    const work = tempDir("resume-cli");
    const dir = join(work, "ep");
    const args = ["run", "auratown", "--seed", "8", "--days", "12", "--quiet", "--trace", "none"];
    const { spawn } = await import("node:child_process");
    const { existsSync, statSync } = await import("node:fs");
    const child = spawn(process.execPath, [join(root, "services/cli/main.ts"), ...args, "--log", dir], { stdio: "ignore" });
    const segment = join(dir, "log", "000000000000.jsonl");
    await until(() => (existsSync(segment) && statSync(segment).size > 300_000) || child.exitCode !== null, "300 KB of log", 50_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    const partial = logRecords(dir).length;
    const resumed = await cli([...args.filter((a) => a !== "--quiet"), "--log", dir, "--resume"]);
    expect(resumed.code).toBe(0);
    // By default a run keeps its first snapshot after ~2.4 MB of log: killed before it, the resume checks the log from the start.
    expect(resumed.out).toMatch(/408 ticks, 6 actors: (resumed after tick \d+|resumed from its start \(the logged records checked, not appended again\)), \d+ records appended/);
    const full = join(work, "full");
    expect((await cli([...args, "--log", full])).code).toBe(0);
    const strip = (r: { meta?: unknown }) => ({ ...r, meta: undefined });
    const records = logRecords(dir);
    expect(partial).toBeLessThan(records.length);
    expect(records.map(strip)).toEqual(logRecords(full).map(strip));
    expect((await cli(["verify", dir])).code).toBe(0);
  });
});

describe("run and fork stopped by Ctrl-C", () => {
  it("stop after the tick in progress, with the log ending on its commit and its lock released, and say how to continue (exit 130; SIGTERM 143)", async () => {
    const work = tempDir("sigint");
    // Without --log: the run goes to runs/<episode>-2 beside one that took runs/<episode>, which a --resume without --log would not find.
    expect((await cli(["run", "auratown", "--seed", "4", "--ticks", "2", "--quiet", "--trace", "none"], work)).code).toBe(0);
    const args = ["run", "auratown", "--seed", "4", "--days", "30", "--no-summary", "--trace", "none"];
    const stopped = async (cliArgs: string[], dir: string, signal: NodeJS.Signals) => {
      const child = spawn(process.execPath, [join(root, "services/cli/main.ts"), ...cliArgs], { cwd: work });
      const exited = new Promise((r) => child.on("exit", r));
      let err = "";
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      // A fork's first segment is named by its parent's seq at the fork point.
      const written = () => existsSync(join(dir, "log")) && readdirSync(join(dir, "log")).some((f) => f.endsWith(".jsonl") && readFileSync(join(dir, "log", f)).length > 200_000);
      await until(() => written() || child.exitCode !== null, "200 KB of log", 25_000);
      child.kill(signal);
      return { code: await exited, err };
    };
    const dir = join(work, "runs", "auratown-s4-baseline-2");
    const run = await stopped(args, dir, "SIGINT");
    expect(run.code, run.err).toBe(130);
    const said = /run: stopped by SIGINT after tick (\d+) of ticks 0–1019; the log in (\S+) holds every tick up to \1; continue it with `probetown (.*)`\n/.exec(run.err);
    expect(said, run.err).not.toBeNull();
    expect(said![2]).toBe(join("runs", "auratown-s4-baseline-2"));
    expect(said![3]).toBe(`${args.join(" ")} --log runs/auratown-s4-baseline-2 --resume`);
    const last = logRecords(dir).at(-1)!;
    expect(last).toMatchObject({ type: "tick.committed", tick: Number(said![1]) });
    expect(existsSync(join(dir, "log", "writer.lock"))).toBe(false);
    const verified = await cli(["verify", dir]);
    expect(verified.code).toBe(0);
    expect(verified.out).not.toMatch(/part-way/);
    // The command it names continues the episode to its end.
    const resumed = await cli(said![3]!.split(" "), work);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toMatch(new RegExp(`resumed after tick ${said![1]}`));
    // A fork is stopped the same way; it is not resumed, so it says to fork again.
    const child = join(work, "child");
    const fork = await stopped(["fork", dir, "--at", "3", "--condition", "no-reflection", "--log", child, "--no-summary", "--trace", "none"], child, "SIGTERM");
    expect(fork.code, fork.err).toBe(143);
    expect(fork.err).toMatch(/fork: stopped by SIGTERM after tick \d+ of ticks 0–1019; the log in child holds every tick up to \d+; a fork is not resumed: remove child and fork again\n/);
    expect(logRecords(child).at(-1)!.type).toBe("tick.committed");
    expect((await cli(["verify", child], work)).out).toMatch(/\nnote: a fork is not resumed: remove child and fork again for all of it$/m);
  });
});

describe("a second Ctrl-C", () => {
  it("sent the moment the first is acknowledged is caught, not the default action that kills the process", async () => {
    // The worker's pattern: acknowledge the first signal, then wait for a second. The child is held
    // busy for 300 ms after its acknowledgement, the way a loaded machine can pause it there.
    const script = [
      `import { signalsUntilRelease } from ${JSON.stringify(join(root, "services/cli/signals.ts"))};`,
      "const signals = signalsUntilRelease();",
      "const alive = setInterval(() => {}, 1000);",
      "process.stdout.write('waiting\\n');",
      "const first = await signals.next();",
      "process.stdout.write(`first ${first}\\n`);",
      "const until = Date.now() + 300; while (Date.now() < until);",
      "const second = await signals.next();",
      "signals.release();",
      "clearInterval(alive);",
      "process.stdout.write(`second ${second}\\n`);",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script]);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    let gone = false;
    const exited = new Promise<number | null>((r) => child.on("close", (code) => ((gone = true), r(code))));
    const when = async (text: string) => {
      while (!out.includes(text) && !gone) await new Promise((r) => setTimeout(r, 1));
    };
    await when("waiting");
    child.kill("SIGTERM");
    await when("first");
    child.kill("SIGTERM");
    expect(await exited, out).toBe(0);
    expect(out).toBe("waiting\nfirst SIGTERM\nsecond SIGTERM\n");
  });
});

describe("a place the log cannot be written", () => {
  it("is refused up front naming it (the trace beside the log was blamed, with --trace none as the remedy); repair of a read-only log that is intact says so", async () => {
    const work = tempDir("readonly");
    const episode = join(work, "ep");
    expect((await cli(["run", "auratown", "--seed", "2", "--ticks", "3", "--quiet", "--log", episode])).code).toBe(0);
    const locked = join(work, "locked");
    mkdirSync(locked);
    // Root writes anywhere: the command runs as nobody then, for whom 0555 is read-only as for anyone else.
    chmodSync(work, 0o755);
    for (const path of [locked, episode, join(episode, "log"), join(episode, "snapshots")]) chmodSync(path, 0o555);
    const asSomeone = (args: string[]) => {
      const r = spawnSync(process.execPath, [join(root, "services/cli/main.ts"), ...args], { cwd: work, encoding: "utf8", ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}) });
      return { code: r.status, out: r.stdout, err: r.stderr };
    };
    const fresh = asSomeone(["run", "auratown", "--seed", "2", "--ticks", "3", "--log", join("locked", "x")]);
    expect(fresh.code, fresh.err).toBe(2);
    expect(fresh.err).toBe("probetown: error: --log locked/x: cannot write to locked (EACCES); choose a directory you can write to\n");
    const resumed = asSomeone(["run", "auratown", "--seed", "2", "--ticks", "3", "--log", "ep", "--resume"]);
    expect(resumed.code, resumed.err).toBe(2);
    expect(resumed.err).toBe("probetown: error: --log ep: cannot write to ep/log (EACCES); the log is left as it is: make it writable to continue it\n");
    const intact = asSomeone(["repair", "ep"]);
    expect(intact.code, intact.err).toBe(0);
    expect(intact.out).toBe("ep/log: intact, nothing to repair\n");
    chmodSync(join(episode, "log"), 0o755);
    writeFileSync(firstSegment(episode), readFileSync(firstSegment(episode), "utf8").slice(0, -30));
    chmodSync(join(episode, "log"), 0o555);
    const torn = asSomeone(["repair", "ep"]);
    expect(torn.code, torn.err).toBe(2);
    expect(torn.err).toMatch(/torn final record .*; cannot cut it: ep\/log cannot be written \(EACCES\); the log is left as it is: make it writable and repair again\n$/);
    expect(existsSync(join(episode, "log", "writer.lock"))).toBe(false);
  });
});

describe("an output directory that is a file", () => {
  it("is refused up front naming the flag or spec field, for every command that writes one (Node's ENOTDIR/EEXIST came after the work, naming neither)", async () => {
    const work = tempDir("out-file");
    const file = join(work, "taken");
    writeFileSync(file, "not a folder\n");
    const rows = join(work, "rows.jsonl");
    writeFileSync(rows, '{"x":1}\n');
    const spec = join(work, "spec.json");
    writeFileSync(spec, JSON.stringify({ ...JSON.parse(readFileSync(join(root, "experiments/implicit-scene-a.json"), "utf8")), file: join(root, "data/aura/implicit_intent_scene_a.json"), out: join(file, "exp") }));
    const scene = join(root, "data/aura/implicit_intent_scene_a.json");
    const cases: [string[], string][] = [
      [["eval", "implicit", "--file", scene, "--condition", "literal", "--out", file], `--out ${file}: is a file; expected a directory for the episode logs and results`],
      [["eval", "implicit", "--file", scene, "--condition", "literal", "--out", join(file, "sub")], `--out ${join(file, "sub")}: ${file} is a file, not a folder; expected a directory`],
      [["report", rows, "--out", file], `--out ${file}: is a file; expected a directory for the report`],
      [["report-envprobe", work, "--out", file], `--out ${file}: is a file; expected a directory for the report`],
      [["sweep", "envprobe", "--worlds", "objectstate", "--policies", "random", "--regimes", "low", "--seeds", "1-2", "--log", file], `--log ${file}: is a file; expected a directory for the episodes' logs`],
      [["experiment", spec], `${spec}: field 'out' ${join(file, "exp")}: ${file} is a file, not a folder; expected a directory`],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args, work);
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(2);
      expect(r.err).toContain(`probetown: error: ${message}`);
    }
    expect(readFileSync(file, "utf8")).toBe("not a folder\n");
  });
});

describe("docker-compose.yml", () => {
  it("the sweeps go to the workers' namespace, apart from the day `up` runs (whose episode id the sweep's seed 42 would take)", () => {
    const compose = parseYaml(readFileSync(join(import.meta.dirname, "..", "docker-compose.yml"), "utf8")) as { services: Record<string, { command?: string[] }> };
    const namespaceOf = (service: string): string => {
      const command = compose.services[service]?.command ?? [];
      const at = command.indexOf("--namespace");
      return at === -1 ? "default" : command[at + 1]!;
    };
    const workers = namespaceOf("worker");
    expect(namespaceOf("sweep")).toBe(workers);
    expect(namespaceOf("sweep-envprobe")).toBe(workers);
    expect(namespaceOf("sequencer")).not.toBe(workers);
    expect(namespaceOf("actor-host-a")).toBe(namespaceOf("sequencer"));
    expect(namespaceOf("actor-host-b")).toBe(namespaceOf("sequencer"));
  });

  it("the cluster profile: three NATS nodes, each named, stored and routed apart, and a sweep and its workers in one namespace asking for as many replicas", () => {
    const root = join(import.meta.dirname, "..");
    type Service = { command?: string[]; environment?: Record<string, string>; volumes?: string[]; profiles?: string[] };
    // Merge keys (`<<: *nats-node`) resolved, as docker compose resolves them.
    const compose = parseYaml(readFileSync(join(root, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };
    const nodes = ["nats-1", "nats-2", "nats-3"].map((name) => ({ name, service: compose.services[name]! }));
    for (const { name, service } of nodes) {
      expect(service.profiles, name).toEqual(["cluster"]);
      expect(service.environment?.SERVER_NAME, name).toBe(name);
      expect(service.volumes, name).toContain(`${name}-data:/data`);
      // Routed to every node, logging in as `route` (the routes are on the command line: their URLs carry the password).
      const routes = service.command?.[service.command.indexOf("--routes") + 1]?.split(",") ?? [];
      expect(routes, name).toContain(`nats-route://route:\${PROBETOWN_NATS_PASSWORD:-probetown-local}@${name}:6222`);
    }
    const flag = (service: string, name: string): string | undefined => {
      const command = compose.services[service]?.command ?? [];
      const at = command.indexOf(name);
      return at === -1 ? undefined : command[at + 1];
    };
    for (const service of ["worker-cluster", "sweep-cluster"]) {
      expect(flag(service, "--nats-replicas"), service).toBe(String(nodes.length));
      expect(flag(service, "--namespace"), service).toBe(flag("worker-cluster", "--namespace"));
      expect(flag(service, "--nats"), service).toBe("env");
      expect(compose.services[service]?.environment?.PROBETOWN_NATS_URL?.replace(/^nats:\/\/probetown:\$\{PROBETOWN_NATS_PASSWORD:-probetown-local\}@(nats-\d):4222$/, "$1"), service).toMatch(/^nats-[123]$/);
    }
  });

  it("NATS requires a login inside the network: every server reads the password, every probetown service logs in with it through PROBETOWN_NATS_URL", () => {
    const root = join(import.meta.dirname, "..");
    type Service = { image?: string; command?: string[]; environment?: Record<string, string> };
    const compose = parseYaml(readFileSync(join(root, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };
    const PASSWORD = "${PROBETOWN_NATS_PASSWORD:-probetown-local}";
    const servers = Object.entries(compose.services).filter(([, s]) => s.image?.startsWith("nats:") === true);
    expect(servers.map(([name]) => name)).toEqual(["nats", "nats-1", "nats-2", "nats-3"]);
    for (const [name, service] of servers) {
      expect(service.environment?.NATS_PASSWORD, name).toBe(PASSWORD);
      const config = readFileSync(join(root, "infra", basename(service.command![1]!)), "utf8");
      expect(config, name).toMatch(/^authorization \{\n {2}user: probetown\n {2}password: \$NATS_PASSWORD\n\}$/m);
    }
    const probetown = Object.entries(compose.services).filter(([, s]) => s.image === "probetown:local");
    expect(probetown.length).toBeGreaterThanOrEqual(8);
    for (const [name, service] of probetown) {
      const command = service.command ?? [];
      expect(command[command.indexOf("--nats") + 1], name).toBe("env");
      expect(service.environment?.PROBETOWN_NATS_URL, name).toMatch(new RegExp(`^nats://probetown:${PASSWORD.replace(/[$\\{}:-]/g, "\\$&")}@nats(-[123])?:4222$`));
      // No password on a command line (`ps`, `docker inspect` show them).
      expect(command.join(" "), name).not.toMatch(/PASSWORD|probetown-local/);
    }
  });

  it("the image runs the Node the project pins (the CLI runs .ts directly: a floating tag could lack it)", () => {
    const root = join(import.meta.dirname, "..");
    const pinned = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> }).devDependencies.node;
    expect(readFileSync(join(root, "Dockerfile"), "utf8")).toMatch(new RegExp(`^FROM node:${pinned!.replace(/\./g, "\\.")}-bookworm-slim$`, "m"));
  });
});

describe("distributed flags without a server", () => {
  it("names the unreachable NATS URL, and refuses --remote without --nats", async () => {
    // A server that does not answer is waited for the outage window: 1 s here.
    const dead = await cli(["run", "auratown", "--seed", "1", "--nats", "nats://127.0.0.1:9", "--nats-outage", "1"]);
    expect(dead.code).toBe(2);
    expect(dead.err).toMatch(/--nats nats:\/\/127\.0\.0\.1:9: cannot connect to a NATS server .*is nats-server running with JetStream/);
    const remote = await cli(["run", "auratown", "--seed", "1", "--remote", "all"]);
    expect(remote.code).toBe(2);
    expect(remote.err).toMatch(/--remote: actors in other processes need --nats <url>/);
    expect((await cli(["worker"])).err).toMatch(/required option '--nats <url>'/);
    expect((await cli(["sweep", "auratown", "--seeds", "1-2", "--workers", "2"])).err).toMatch(/--workers: more than one worker needs --nats/);
    // Credentials in the URL are never printed; URLs nats.js would misread, and bad namespaces, are refused as read.
    const secret = await cli(["verify", "x", "--nats", "nats://bob:s3cret@127.0.0.1:9", "--nats-outage", "1"]);
    expect(secret.code).toBe(2);
    expect(secret.err).toMatch(/--nats nats:\/\/…@127\.0\.0\.1:9: cannot connect/);
    expect(secret.err).not.toMatch(/s3cret/);
    for (const url of ["http://127.0.0.1:4222", "tls://127.0.0.1:4222", "nats://127.0.0.1:99999", "", "http://bob:s3cret@127.0.0.1:4222"]) {
      const r = await cli(["verify", "x", "--nats", url]);
      expect(r.code, url).toBe(2);
      expect(r.err, url).not.toMatch(/s3cret/);
      expect(r.err, url).toMatch(/--nats: expected a NATS server URL like nats:\/\/127\.0\.0\.1:4222/);
    }
    const ns = await cli(["verify", "x", "--nats", "nats://127.0.0.1:9", "--namespace", "a.b"]);
    expect(ns.code).toBe(2);
    expect(ns.err).toMatch(/'--namespace <ns>' argument 'a\.b' is invalid/);
    const filesOnly = await cli(["run", "auratown", "--seed", "1", "--namespace", "lab"]);
    expect(filesOnly.code).toBe(2);
    expect(filesOnly.err).toMatch(/--namespace lab: a namespace applies with --nats <url>/);
  });
});

describe("probetown sweep, embedded", () => {
  it("sweep runs a seeds × conditions matrix in this process, writes each episode's log, and summarises", async () => {
    const cwd = tempDir("sweep");
    const r = await cli(["sweep", "auratown", "--seeds", "1-2", "--conditions", "baseline,no-reflection", "--ticks", "3", "--out", "outcomes.json"], cwd);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^4 episodes: 4 ok, 0 failed in [\d.]+ s/);
    const report = JSON.parse(readFileSync(join(cwd, "outcomes.json"), "utf8")) as { outcomes: { id: string; ok: boolean; stateHash: string }[] };
    expect(report.outcomes.map((o) => o.id).sort()).toEqual(["auratown-s1-baseline", "auratown-s1-no-reflection", "auratown-s2-baseline", "auratown-s2-no-reflection"]);
    expect((await cli(["verify", join(cwd, "runs", "auratown-s2-no-reflection")])).code).toBe(0);
    // A seed or condition named twice is one episode.
    const twice = await cli(["sweep", "auratown", "--seeds", "1,1-2", "--conditions", "baseline,no-reflection,baseline", "--ticks", "3"], cwd);
    expect(twice.code, twice.err).toBe(0);
    expect(twice.out).toMatch(/^4 episodes: 4 ok, 0 failed in [\d.]+ s/);
    expect((await cli(["sweep", "auratown", "--seeds", "3-1"], cwd)).err).toMatch(/--seeds: range '3-1' runs backwards/);
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--conditions", "nope"], cwd)).err).toMatch(/--conditions: unknown condition 'nope'/);
  });

  it("sweep stopped by Ctrl-C says where it stands, its logs ending on committed ticks, and the same command runs the rest (it died without a word)", async () => {
    const cwd = tempDir("sweep-sigint");
    const args = ["sweep", "auratown", "--seeds", "1-12", "--ticks", "200", "--log", "sw"];
    const child = spawn(process.execPath, [join(root, "services/cli/main.ts"), ...args], { cwd });
    const exited = new Promise((r) => child.on("exit", r));
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    await until(() => (existsSync(join(cwd, "sw")) && readdirSync(join(cwd, "sw")).length >= 3) || child.exitCode !== null, "3 episodes under way", 50_000);
    child.kill("SIGINT");
    expect(await exited, err).toBe(130);
    expect(err).toMatch(/sweep: stopped by SIGINT after \d+ of 12 episodes finished; the same sweep command \(--log sw\) runs the rest, continuing the one cut short from its last committed tick\n$/);
    for (const episode of readdirSync(join(cwd, "sw"))) {
      expect(existsSync(join(cwd, "sw", episode, "log", "writer.lock")), episode).toBe(false);
      expect(logRecords(join(cwd, "sw", episode)).at(-1)!.type, episode).toBe("tick.committed");
    }
    const rest = await cli([...args, "-q"], cwd);
    expect(rest.code, rest.err).toBe(0);
    expect(rest.out).toMatch(/^12 episodes: 12 ok, 0 failed/);
  });

  it("a resume's note (here: a damaged latest-snapshot pointer looked past) is said by an embedded sweep too, naming the episode, and run --json gives the tick a resume continued after", async () => {
    const cwd = tempDir("sweep-note");
    const args = ["sweep", "auratown", "--seeds", "1-2", "--ticks", "4", "--log", "sw"];
    expect((await cli([...args, "-q"], cwd)).code).toBe(0);
    writeFileSync(join(cwd, "sw", "auratown-s2-baseline", "snapshots", "latest.json"), "garbage");
    const again = await cli([...args, "--json"], cwd);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/^sweep: auratown-s2-baseline: the latest-snapshot pointer \(sw\/auratown-s2-baseline\/snapshots\/latest\.json\) is damaged: .*; continuing after tick 3 from sw\/auratown-s2-baseline\/snapshots\/[0-9a-f]{64}\.json$/m);
    expect(again.err).not.toContain("auratown-s1-baseline");
    // Said with --quiet too, as run --resume -q says it: nothing else.
    expect((await cli([...args, "--quiet"], cwd)).err).toMatch(/^sweep: auratown-s2-baseline: the latest-snapshot pointer \(sw\/auratown-s2-baseline\/snapshots\/latest\.json\) is damaged: .*; continuing after tick 3 from sw\/auratown-s2-baseline\/snapshots\/[0-9a-f]{64}\.json\n$/);
    const runArgs = ["run", "auratown", "--seed", "2", "--ticks", "4", "--log", join("sw", "auratown-s2-baseline"), "--resume", "--json"];
    const resumed = await cli(runArgs, cwd);
    expect(resumed.code, resumed.err).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({ records: 0, resumedAfterTick: 3 });
    expect(JSON.parse((await cli(["run", "auratown", "--seed", "3", "--ticks", "2", "--log", "fresh", "--json"], cwd)).out)).not.toHaveProperty("resumedAfterTick");
  });

  it("sweep run again over an episode whose log was torn (a crash mid-write) says, as run --resume does, what its resume cut and where it kept the bytes (it cut them without a word)", async () => {
    const cwd = tempDir("sweep-torn");
    const args = ["sweep", "auratown", "--seeds", "1-2", "--ticks", "4", "--log", "sw", "--snapshot-every", "1"];
    expect((await cli([...args, "-q"], cwd)).code).toBe(0);
    const victim = join(cwd, "sw", "auratown-s2-baseline");
    const whole = readFileSync(firstSegment(victim));
    const records = logRecords(victim);
    // The last record loses its last 40 bytes, its newline among them (`truncate -s -40`).
    const tear = () => truncateSync(firstSegment(victim), whole.length - 40);
    const offset = whole.lastIndexOf("\n", whole.length - 2) + 1;
    tear();
    const again = await cli(args, cwd);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toContain(
      `sweep: auratown-s2-baseline: sw/auratown-s2-baseline/log/000000000000.jsonl: line ${records.length}: torn final record (${whole.length - 40 - offset} bytes without a complete JSON line; last good record seq ${records.length - 2})\n` +
        `cut back to the last good record; the cut bytes are kept in sw/auratown-s2-baseline/log/000000000000.jsonl.torn-${offset}\n`,
    );
    expect(again.err).not.toContain("auratown-s1-baseline");
    expect(readFileSync(join(victim, "log", `000000000000.jsonl.torn-${offset}`))).toEqual(whole.subarray(offset, whole.length - 40));
    // The resume wrote the cut record again: the log is the undisturbed one.
    expect(logRecords(victim).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
    tear();
    // Said with --quiet too, as run --resume -q says it (the cut bytes' place is said nowhere else),
    // then the snapshot past the cut log's end it did not use; nothing else.
    const cutNote =
      `sweep: auratown-s2-baseline: sw/auratown-s2-baseline/log/000000000000.jsonl: line ${records.length}: torn final record (${whole.length - 40 - offset} bytes without a complete JSON line; last good record seq ${records.length - 2})\n` +
      `cut back to the last good record; the cut bytes are kept in sw/auratown-s2-baseline/log/000000000000.jsonl.torn-${offset}-2\n`;
    const quiet = await cli([...args, "--quiet"], cwd);
    expect(quiet.code, quiet.err).toBe(0);
    expect(quiet.err.startsWith(cutNote), quiet.err).toBe(true);
    expect(quiet.err.slice(cutNote.length)).toMatch(/^sweep: auratown-s2-baseline: the latest snapshot, of tick 3 \(.*\), is past the log's end .*; it is kept, not used; continuing after tick 2 from .*\n$/);
    expect(existsSync(join(victim, "log", `000000000000.jsonl.torn-${offset}-2`))).toBe(true);
  });

  it("sweep run again over an episode whose log is damaged fails it at once and exits 3, as verify does (tried 5 times, exit 4: an internal error)", async () => {
    const cwd = tempDir("sweep-damaged");
    const args = ["sweep", "auratown", "--seeds", "1-3", "--ticks", "4", "--log", "sw"];
    expect((await cli([...args, "-q"], cwd)).code).toBe(0);
    const victim = join(cwd, "sw", "auratown-s2-baseline");
    const lines = readFileSync(firstSegment(victim), "utf8").split("\n");
    writeFileSync(firstSegment(victim), lines.map((l, i) => (i === 10 ? l.replace('"tick":', '"tick":9') : l)).join("\n"));
    const again = await cli(args, cwd);
    expect(again.code, again.out + again.err).toBe(3);
    expect(again.out).toMatch(/^3 episodes: 2 ok, 1 failed/);
    expect(again.out).toMatch(/FAILED auratown-s2-baseline after 1 attempt: sw\/auratown-s2-baseline\/log\/000000000000\.jsonl: seq 10 \(line 11\): hash mismatch: .* \(the episode's log or snapshot is damaged: `probetown verify` it; removed, the same sweep runs it anew\)\n/);
    rmSync(victim, { recursive: true });
    expect((await cli([...args, "-q"], cwd)).code).toBe(0);
  });

  it("sweep: another sweep's episode under the same id fails at once (exit 2, the differing field named, --log suggested); --log puts the sweep elsewhere; bad input is refused before anything runs", async () => {
    const cwd = tempDir("cli-sweep-reuse");
    expect((await cli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "3", "-q"], cwd)).code).toBe(0);
    const clash = await cli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "4"], cwd);
    expect(clash.code).toBe(2);
    expect(clash.out).toMatch(/FAILED auratown-s1-baseline after 1 attempt: .*another header \(ticks: 3 in the log, 4 asked for\)/);
    expect(clash.out).toMatch(/pass --log <dir>/);
    const elsewhere = await cli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "4", "--log", "other", "-q"], cwd);
    expect(elsewhere.code, elsewhere.out).toBe(0);
    expect((await cli(["verify", join(cwd, "other", "auratown-s2-baseline")])).code).toBe(0);
    expect(logRecords(join(cwd, "other", "auratown-s1-baseline")).filter((r) => r.type === "tick.committed")).toHaveLength(4);
    writeFileSync(join(cwd, "typo.json"), JSON.stringify({ sped: 2 }));
    const typo = await cli(["sweep", "auratown", "--seeds", "5", "--config", "typo.json"], cwd);
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/--config: invalid auratown config: .*sped/);
    expect((await cli(["sweep", "auratown", "--seeds", "0-1000000000"], cwd)).err).toMatch(/at most 1,000,000 per sweep/);
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--conditions", ","], cwd)).err).toMatch(/--conditions: expected at least one condition/);
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--log", "typo.json"], cwd)).err).toMatch(/--log typo\.json: is a file; expected a directory/);
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--out", "other"], cwd)).err).toMatch(/--out other: is a directory; expected a file/);
  });
});
