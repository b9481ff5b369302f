// A run that died part-way (a worker killed mid-episode) continues from its latest snapshot and
// log tail and ends with exactly the log an uninterrupted run writes.
import { describe, expect, it } from "vitest";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { FileSnapshotStore, readSnapshotFile, type EpisodeSnapshot } from "../infra/snapshotStore.ts";
import { logLines, logRecords, tempDir, withoutMetaLine } from "./helpers.ts";
import { snapshotFixture } from "./contracts/snapshotStores.ts";
import { openFileEventStoreForAppend } from "../infra/fileEventStore.ts";

const quiet = { trace: { exporter: "none" } } as const;

/** A copy of a finished run's directory as a crash would leave it: the first `keep` records, half of the next, snapshots up to `snapshotTick`. */
async function crashedCopy(full: string, keep: number, snapshotTick: number | null): Promise<string> {
  const dir = join(tempDir("crashed"), "ep");
  mkdirSync(join(dir, "log"), { recursive: true });
  const lines = logLines(full);
  const next = lines[keep] ?? "";
  writeFileSync(join(dir, "log", "000000000000.jsonl"), lines.slice(0, keep).join("\n") + "\n" + next.slice(0, Math.floor(next.length / 2)));
  if (snapshotTick !== null) {
    const store = new FileSnapshotStore(join(dir, "snapshots"));
    const snapDir = join(full, "snapshots");
    for (const f of readdirSync(snapDir).filter((name) => /^[0-9a-f]+\.json$/.test(name))) {
      const snap = readSnapshotFile(join(snapDir, f)) as EpisodeSnapshot;
      if (snap.tick <= snapshotTick) await store.put(snap);
    }
  }
  return dir;
}

describe("resuming an interrupted episode", () => {
  it("continues after the latest snapshot and reproduces the uninterrupted log exactly", async () => {
    // A snapshot every tick (the default keeps a short run's last tick only): the copy keeps those up to tick 4.
    const full = await runEpisode({ world: "auratown", seed: 17, ticks: 10, dir: join(tempDir("full"), "ep"), snapshotEvery: 1, ...quiet });
    const records = logRecords(full.dir);
    const tick6 = records.findIndex((r) => r.tick === 6 && r.type === "tick.phase");
    const dir = await crashedCopy(full.dir, tick6 + 5, 4);
    const resumed = await runEpisode({ world: "auratown", seed: 17, ticks: 10, dir, resume: true, ...quiet });
    expect(resumed.resumedAfterTick).toBe(4);
    expect(resumed.stateHash).toBe(full.stateHash);
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
    expect(resumed.records).toBe(records.length - (tick6 + 5));
    expect((await verifyEpisode(dir)).ok).toBe(true);
  });

  it("starts over from the first tick when no snapshot was kept, still appending nothing twice", async () => {
    const full = await runEpisode({ world: "auratown", seed: 18, ticks: 6, dir: join(tempDir("full"), "ep"), ...quiet });
    const dir = await crashedCopy(full.dir, 40, null);
    const resumed = await runEpisode({ world: "auratown", seed: 18, ticks: 6, dir, resume: true, ...quiet });
    expect(resumed.resumedAfterTick).toBe(-1);
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(logRecords(full.dir).map(withoutMetaLine));
  });

  it("does nothing for a finished episode, and refuses a log started with other settings", async () => {
    const full = await runEpisode({ world: "auratown", seed: 19, ticks: 4, dir: join(tempDir("full"), "ep"), ...quiet });
    const before = logLines(full.dir);
    const again = await runEpisode({ world: "auratown", seed: 19, ticks: 4, dir: full.dir, resume: true, ...quiet });
    expect(again.records).toBe(0);
    expect(again.stateHash).toBe(full.stateHash);
    expect(logLines(full.dir)).toEqual(before);
    await expect(runEpisode({ world: "auratown", seed: 19, ticks: 5, dir: full.dir, resume: true, ...quiet })).rejects.toThrow(/started with another header/);
  });
});

describe("resuming a log cut back behind its snapshots", () => {
  it("continues from the newest snapshot the log holds the record of, keeps the later ones and says which it used", async () => {
    const full = await runEpisode({ world: "auratown", seed: 21, ticks: 10, dir: join(tempDir("full"), "ep"), snapshotEvery: 1, ...quiet });
    const records = logRecords(full.dir);
    // A crash (or `repair` of a torn tail) left the log part-way through tick 6; the snapshots of ticks 6–9 outlived it.
    const tick6 = records.findIndex((r) => r.tick === 6 && r.type === "tick.phase");
    const dir = await crashedCopy(full.dir, tick6 + 3, 9);
    const kept = readdirSync(join(dir, "snapshots")).sort();
    expect(JSON.parse(readFileSync(join(dir, "snapshots", "latest.json"), "utf8"))).toMatchObject({ tick: 9 });
    // Cut as `repair` cuts it: verify holds, and says the snapshots outlived the ticks the log lost.
    const { store } = openFileEventStoreForAppend(join(dir, "log"), { episode: full.episode });
    await store.close();
    const verified = await verifyEpisode(dir);
    expect(verified.ok).toBe(true);
    expect(verified.notes.join("\n")).toMatch(/the latest snapshot \(.*snapshots\/[0-9a-f]{64}\.json\) is of tick 9, past the log's last committed tick 5: the log was cut back after it was taken .*it is kept, not used/);
    const notes: string[] = [];
    const resumed = await runEpisode({ world: "auratown", seed: 21, ticks: 10, dir, resume: true, snapshotEvery: 1, onResumeNote: (n) => notes.push(n), ...quiet });
    expect(resumed.resumedAfterTick).toBe(5);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/the latest snapshot, of tick 9 .* is past the log's end \(its last committed tick is 5, .*it is kept, not used; continuing after tick 5 from .*snapshots\/[0-9a-f]{64}\.json/);
    // Nothing was removed (the later snapshots are those the finished run writes again), and the log is the uninterrupted one.
    expect(readdirSync(join(dir, "snapshots")).sort()).toEqual(expect.arrayContaining(kept));
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
    expect((await verifyEpisode(dir)).ok).toBe(true);
  });

  it("starts over, saying so, when no snapshot of a tick the log holds is stored", async () => {
    const full = await runEpisode({ world: "auratown", seed: 22, ticks: 8, dir: join(tempDir("full"), "ep"), snapshotEvery: 1, ...quiet });
    const records = logRecords(full.dir);
    const tick5 = records.findIndex((r) => r.tick === 5 && r.type === "tick.phase");
    const dir = await crashedCopy(full.dir, tick5 + 2, 7);
    // Only snapshots past the cut are left (those of ticks the log holds were removed as a cache).
    for (const f of readdirSync(join(dir, "snapshots"))) {
      if (f === "latest.json") continue;
      const tick = (readSnapshotFile(join(dir, "snapshots", f)) as EpisodeSnapshot).tick;
      if (tick < 5) rmSync(join(dir, "snapshots", f));
    }
    const notes: string[] = [];
    const resumed = await runEpisode({ world: "auratown", seed: 22, ticks: 8, dir, resume: true, onResumeNote: (n) => notes.push(n), ...quiet });
    expect(resumed.resumedAfterTick).toBe(-1);
    expect(notes.join("\n")).toMatch(/of tick 7 .*past the log's end.*continuing from the episode's start/);
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
  });
});

describe("resuming with a damaged latest-snapshot pointer", () => {
  it("continues from the newest snapshot the log holds the record of, saying the pointer is damaged and which snapshot it used, and keeps the pointer as it is", async () => {
    const full = await runEpisode({ world: "auratown", seed: 23, ticks: 8, dir: join(tempDir("full"), "ep"), snapshotEvery: 1, ...quiet });
    const records = logRecords(full.dir);
    const tick5 = records.findIndex((r) => r.tick === 5 && r.type === "tick.phase");
    const dir = await crashedCopy(full.dir, tick5 + 2, 4);
    for (const damage of ["{\"key\": \"not a hash\", \"tick\": 4}", "{\"key\": \"ab"]) {
      const copy = join(tempDir("damaged-pointer"), "ep");
      cpSync(dir, copy, { recursive: true });
      const copyPointer = join(copy, "snapshots", "latest.json");
      writeFileSync(copyPointer, damage);
      const notes: string[] = [];
      // snapshotEvery 0: the only snapshot put is the last tick's, which replaces the damaged pointer.
      const resumed = await runEpisode({ world: "auratown", seed: 23, ticks: 8, dir: copy, resume: true, snapshotEvery: 0, onResumeNote: (n) => notes.push(n), ...quiet });
      expect(resumed.resumedAfterTick).toBe(4);
      expect(notes).toEqual([expect.stringMatching(/^the latest-snapshot pointer \(.*snapshots\/latest\.json\) is damaged: not a \{key, tick\} JSON object whose key is a state hash; it is kept as it is until the next snapshot replaces it; continuing after tick 4 from .*snapshots\/[0-9a-f]{64}\.json$/)]);
      expect(logRecords(copy).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
      expect((await verifyEpisode(copy)).ok).toBe(true);
      expect(JSON.parse(readFileSync(copyPointer, "utf8"))).toMatchObject({ tick: 7 });
    }
    // A finished episode puts nothing: the damaged pointer is left as evidence.
    writeFileSync(join(full.dir, "snapshots", "latest.json"), "garbage");
    const notes: string[] = [];
    const again = await runEpisode({ world: "auratown", seed: 23, ticks: 8, dir: full.dir, resume: true, onResumeNote: (n) => notes.push(n), ...quiet });
    expect(again.records).toBe(0);
    expect(notes.join("\n")).toMatch(/pointer .* is damaged: .*; continuing after tick 7 from /);
    expect(readFileSync(join(full.dir, "snapshots", "latest.json"), "utf8")).toBe("garbage");
  });
});

describe("the file snapshot store's latest pointer", () => {
  it("moves to a snapshot put again when a crash left it behind (between the file and the pointer), as the JetStream store does", async () => {
    const store = new FileSnapshotStore(join(tempDir("latest"), "snapshots"));
    const three = snapshotFixture("a", 3);
    const five = snapshotFixture("a", 5);
    await store.put(three);
    await store.put(five);
    expect(await store.latest()).toBe(five.stateHash);
    writeFileSync(join(store.location, "latest.json"), JSON.stringify({ key: three.stateHash, tick: 3 }));
    await store.put(five);
    expect(await store.latest()).toBe(five.stateHash);
    await store.put(three);
    expect(await store.latest()).toBe(five.stateHash);
  });
});
