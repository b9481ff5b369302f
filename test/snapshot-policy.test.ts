// Which ticks keep a snapshot (services/kernel/snapshotPolicy.ts), decided from an injected clock
// and log size, and what resume and fork do when the tick they need has none: they start from the
// nearest snapshot before it and replay forward, to the same state as with a snapshot every tick.
import { describe, expect, it } from "vitest";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forkEpisode, runEpisode, snapshotPolicyOf } from "../services/kernel/episodes.ts";
import { headerOf, nearestSnapshot, replayedSnapshot } from "../services/kernel/replay.ts";
import { ACTOR_SNAPSHOT_BYTES, DEFAULT_SNAPSHOT_MS, MIN_LOG_BYTES, snapshotDue, SnapshotSchedule, type SinceLastSnapshot } from "../services/kernel/snapshotPolicy.ts";
import { FileSnapshotStore, readSnapshotFile, type EpisodeSnapshot } from "../infra/snapshotStore.ts";
import { SnapshotDamaged } from "../events/errors.ts";
import { logLines, logRecords, tempDir, withoutMetaLine } from "./helpers.ts";

const quiet = { trace: { exporter: "none" } } as const;

/** A tick in the middle of a 100-tick episode of 6 actors, nothing logged or timed since the last snapshot. */
const at = (s: Partial<SinceLastSnapshot> = {}): SinceLastSnapshot => ({ tick: 50, firstTick: 0, lastTick: 99, logBytes: 0, ms: 0, last: null, actors: 6, ...s });

describe("the snapshot decision", () => {
  it("keeps the last tick's always, whatever the policy", () => {
    for (const policy of [{}, { every: 0 }, { every: 7 }, { logBytes: 10 ** 12, ms: 10 ** 12 }]) expect(snapshotDue(policy, at({ tick: 99, last: { bytes: 10 ** 9, costMs: 10 ** 9 } }))).toBe(true);
  });

  it("--snapshot-every n counts ticks from the episode's first, and 0 keeps the last only", () => {
    const kept = (every: number) => Array.from({ length: 100 }, (_, tick) => tick).filter((tick) => snapshotDue({ every }, at({ tick, logBytes: 10 ** 9, ms: 10 ** 9 })));
    expect(kept(1)).toHaveLength(100);
    expect(kept(25)).toEqual([24, 49, 74, 99]);
    expect(kept(0)).toEqual([99]);
    // A fork's episode starts at its first tick: counted from there.
    expect(snapshotDue({ every: 5 }, at({ tick: 14, firstTick: 10 }))).toBe(true);
    expect(snapshotDue({ every: 5 }, at({ tick: 15, firstTick: 10 }))).toBe(false);
  });

  it("by default keeps one once the log has grown by 10× the last snapshot's size, with a 1 MiB floor", () => {
    const last = { bytes: 300_000, costMs: 1 };
    expect(snapshotDue({}, at({ last, logBytes: 2_999_999, ms: 100 }))).toBe(false);
    expect(snapshotDue({}, at({ last, logBytes: 3_000_000, ms: 100 }))).toBe(true);
    const small = { bytes: 1000, costMs: 0 };
    expect(snapshotDue({}, at({ last: small, logBytes: MIN_LOG_BYTES - 1 }))).toBe(false);
    expect(snapshotDue({}, at({ last: small, logBytes: MIN_LOG_BYTES }))).toBe(true);
  });

  it("before the run's first snapshot guesses its size from the actors", () => {
    const guess = 10 * 1000 * ACTOR_SNAPSHOT_BYTES;
    expect(snapshotDue({}, at({ actors: 1000, logBytes: guess - 1 }))).toBe(false);
    expect(snapshotDue({}, at({ actors: 1000, logBytes: guess }))).toBe(true);
  });

  it("keeps one once a minute of run time has passed, however little was logged", () => {
    expect(snapshotDue({}, at({ ms: DEFAULT_SNAPSHOT_MS - 1, logBytes: 10 }))).toBe(false);
    expect(snapshotDue({}, at({ ms: DEFAULT_SNAPSHOT_MS, logBytes: 10 }))).toBe(true);
    expect(snapshotDue({ ms: 5000 }, at({ ms: 5000 }))).toBe(true);
    expect(snapshotDue({ logBytes: 100 }, at({ logBytes: 100 }))).toBe(true);
    expect(snapshotDue({ logBytes: 100 }, at({ logBytes: 99 }))).toBe(false);
  });

  it("never comes sooner than 9× the last one's cost after it (snapshots ≤ 10% of the run's time)", () => {
    const last = { bytes: 10, costMs: 1000 };
    expect(snapshotDue({ logBytes: 1, ms: 1 }, at({ last, logBytes: 10 ** 9, ms: 8999 }))).toBe(false);
    expect(snapshotDue({ logBytes: 1, ms: 1 }, at({ last, logBytes: 10 ** 9, ms: 9000 }))).toBe(true);
  });

  it("--snapshot-every overrides the thresholds (sweeps and evals pass it)", () => {
    expect(snapshotPolicyOf({ snapshotEvery: 0, snapshotLogBytes: 5, snapshotMs: 5 })).toEqual({ every: 0 });
    expect(snapshotPolicyOf({ snapshotLogBytes: 5 })).toEqual({ logBytes: 5 });
    expect(snapshotPolicyOf({})).toEqual({});
  });

  it("a schedule measures from its last snapshot, on the clock and log size it is given", () => {
    let now = 1000;
    let bytes = 0;
    const schedule = new SnapshotSchedule({ logBytes: 500 }, 6, () => bytes, () => now);
    bytes = 499;
    expect(schedule.due(3, 0, 99)).toBe(false);
    bytes = 500;
    expect(schedule.due(4, 0, 99)).toBe(true);
    const started = now;
    now += 10; // the snapshot took 10 ms
    schedule.record(42, started);
    // 500 more bytes, but sooner than 9× its cost: not yet.
    bytes = 1000;
    now += 89;
    expect(schedule.due(5, 0, 99)).toBe(false);
    now += 1;
    expect(schedule.due(6, 0, 99)).toBe(true);
    expect(schedule.taken).toBe(1);
  });
});

/** A run's snapshots' ticks, from its snapshots/ folder. */
const snapshotTicks = (dir: string): number[] =>
  readdirSync(join(dir, "snapshots"))
    .filter((f) => f !== "latest.json")
    .map((f) => (readSnapshotFile(join(dir, "snapshots", f)) as EpisodeSnapshot).tick)
    .sort((a, b) => a - b);

const lastHash = (dir: string): string => logRecords(dir).at(-1)!.hash;

/** A parent's directory and a fork's beside it in one temp folder: a fork's header names its parent's log relatively, so two such pairs give the same chain. */
const pair = (label: string) => {
  const base = tempDir(label);
  return { parent: join(base, "ep"), child: join(base, "child") };
};

describe("resume and fork between snapshots", () => {
  it("the default keeps a 1-day five-resident town's last tick only, and its log is every-tick's", async () => {
    const every = await runEpisode({ world: "auratown", seed: 31, ticks: 12, dir: join(tempDir("every"), "ep"), snapshotEvery: 1, ...quiet });
    const sparse = await runEpisode({ world: "auratown", seed: 31, ticks: 12, dir: join(tempDir("default"), "ep"), ...quiet });
    expect(snapshotTicks(every.dir)).toHaveLength(12);
    expect(snapshotTicks(sparse.dir)).toEqual([11]);
    expect(sparse.snapshots?.count).toBe(1);
    expect(sparse.stateHash).toBe(every.stateHash);
    expect(lastHash(sparse.dir)).toBe(lastHash(every.dir));
    expect(logRecords(sparse.dir).map(withoutMetaLine)).toEqual(logRecords(every.dir).map(withoutMetaLine));
  });

  it("a fork at a tick between two snapshots starts from the earlier one and gives the child every-tick snapshots give", async () => {
    const [e, s] = [pair("every"), pair("sparse")];
    const every = await runEpisode({ world: "auratown", seed: 32, ticks: 14, dir: e.parent, snapshotEvery: 1, ...quiet });
    const sparse = await runEpisode({ world: "auratown", seed: 32, ticks: 14, dir: s.parent, snapshotEvery: 4, ...quiet });
    expect(snapshotTicks(sparse.dir)).toEqual([3, 7, 11, 13]);
    const records = logRecords(sparse.dir);
    const header = headerOf(records, sparse.dir);
    const store = new FileSnapshotStore(join(sparse.dir, "snapshots"));
    const nearest = await nearestSnapshot(header, records, 9, store);
    expect(nearest?.tick).toBe(7);
    nearest?.host.stop();
    // Rebuilt from tick 7's snapshot and two ticks replayed: the state every tick's run kept at tick 9.
    const rebuilt = await replayedSnapshot(sparse.dir, records, 9, join(sparse.dir, "snapshots"));
    const kept = await new FileSnapshotStore(join(every.dir, "snapshots")).get(rebuilt.stateHash);
    expect(kept?.tick).toBe(9);
    expect(JSON.parse(JSON.stringify(rebuilt.actors))).toEqual(JSON.parse(JSON.stringify(kept!.actors)));

    const fromEvery = await forkEpisode({ parent: every.dir, atTick: 9, condition: "no-conversation", dir: e.child, ...quiet });
    const fromSparse = await forkEpisode({ parent: sparse.dir, atTick: 9, condition: "no-conversation", dir: s.child, ...quiet });
    expect(fromSparse.stateHash).toBe(fromEvery.stateHash);
    expect(lastHash(fromSparse.dir)).toBe(lastHash(fromEvery.dir));
    expect(logRecords(fromSparse.dir).map(withoutMetaLine)).toEqual(logRecords(fromEvery.dir).map(withoutMetaLine));
  });

  it("a fork refuses a damaged earlier snapshot it would start from (exit 3, saying what removing it does), and without it starts from the one before", async () => {
    const [s, e] = [pair("sparse"), pair("every")];
    const sparse = await runEpisode({ world: "auratown", seed: 33, ticks: 10, dir: s.parent, snapshotEvery: 3, ...quiet });
    const every = await runEpisode({ world: "auratown", seed: 33, ticks: 10, dir: e.parent, snapshotEvery: 1, ...quiet });
    const records = logRecords(sparse.dir);
    const header = headerOf(records, sparse.dir);
    const snapshots = join(sparse.dir, "snapshots");
    const keyOf = (tick: number) => (records.find((r) => r.type === "tick.committed" && r.tick === tick)!.payload as { stateHash: string }).stateHash;
    writeFileSync(join(snapshots, `${keyOf(5)}.json`), "{ not json");
    const refused = await forkEpisode({ parent: sparse.dir, atTick: 7, condition: "baseline", ticks: 10, dir: s.child, ...quiet }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SnapshotDamaged);
    expect((refused as SnapshotDamaged).exitCode).toBe(3);
    expect((refused as SnapshotDamaged).reason).toContain("remove it, and the replay to tick 7 starts from an earlier snapshot or the episode's start");
    rmSync(join(snapshots, `${keyOf(5)}.json`));
    const nearest = await nearestSnapshot(header, records, 7, new FileSnapshotStore(snapshots));
    expect(nearest?.tick).toBe(2);
    nearest?.host.stop();
    rmSync(join(snapshots, `${keyOf(2)}.json`));
    expect(await nearestSnapshot(header, records, 7, new FileSnapshotStore(snapshots))).toBeNull();
    rmSync(s.child, { recursive: true, force: true });
    const child = await forkEpisode({ parent: sparse.dir, atTick: 7, condition: "baseline", ticks: 10, dir: s.child, ...quiet });
    const reference = await forkEpisode({ parent: every.dir, atTick: 7, condition: "baseline", ticks: 10, dir: e.child, ...quiet });
    expect(child.stateHash).toBe(reference.stateHash);
    expect(lastHash(child.dir)).toBe(lastHash(reference.dir));
  });

  it("a run cut between two snapshots resumes from the earlier one and ends with the uninterrupted log", async () => {
    const full = await runEpisode({ world: "auratown", seed: 34, ticks: 12, dir: join(tempDir("full"), "ep"), snapshotEvery: 5, ...quiet });
    expect(snapshotTicks(full.dir)).toEqual([4, 9, 11]);
    const lines = logLines(full.dir);
    const records = logRecords(full.dir);
    // Killed part-way through tick 8: the log holds ticks up to 7, and the snapshot of tick 4 only.
    const cut = records.findIndex((r) => r.tick === 8 && r.type === "tick.phase") + 2;
    const dir = join(tempDir("cut"), "ep");
    cpSync(full.dir, dir, { recursive: true });
    const segment = readdirSync(join(dir, "log")).filter((f) => f.endsWith(".jsonl"));
    expect(segment).toHaveLength(1);
    writeFileSync(join(dir, "log", segment[0]!), lines.slice(0, cut).join("\n") + "\n");
    for (const f of readdirSync(join(dir, "snapshots"))) if (f === "latest.json" || (readSnapshotFile(join(dir, "snapshots", f)) as EpisodeSnapshot).tick > 4) rmSync(join(dir, "snapshots", f));
    writeFileSync(join(dir, "snapshots", "latest.json"), JSON.stringify({ key: (records.find((r) => r.type === "tick.committed" && r.tick === 4)!.payload as { stateHash: string }).stateHash, tick: 4 }));
    const resumed = await runEpisode({ world: "auratown", seed: 34, ticks: 12, dir, resume: true, ...quiet });
    expect(resumed.resumedAfterTick).toBe(4);
    expect(resumed.stateHash).toBe(full.stateHash);
    expect(lastHash(dir)).toBe(lastHash(full.dir));
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
  });
});
