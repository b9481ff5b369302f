// A run that died part-way (a worker killed mid-episode) continues from its latest snapshot and
// log tail and ends with exactly the log an uninterrupted run writes.
import { describe, expect, it } from "vitest";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runEpisode } from "../services/episodes.ts";
import { verifyEpisode } from "../services/verify.ts";
import { FileSnapshotStore, type EpisodeSnapshot } from "../infra/snapshotStore.ts";
import { logLines, logRecords, tempDir, withoutMetaLine } from "./helpers.ts";

const quiet = { trace: { exporter: "none" } } as const;

/** A copy of a finished run's directory as a crash would leave it: the first `keep` records, half of the next, snapshots up to `snapshotTick`. */
function crashedCopy(full: string, keep: number, snapshotTick: number | null): string {
  const dir = join(tempDir("crashed"), "ep");
  mkdirSync(join(dir, "log"), { recursive: true });
  const lines = logLines(full);
  const next = lines[keep] ?? "";
  writeFileSync(join(dir, "log", "000000000000.jsonl"), lines.slice(0, keep).join("\n") + "\n" + next.slice(0, Math.floor(next.length / 2)));
  if (snapshotTick !== null) {
    const store = new FileSnapshotStore(join(dir, "snapshots"));
    const snapDir = join(full, "snapshots");
    for (const f of readdirSync(snapDir).filter((name) => /^[0-9a-f]+\.json$/.test(name))) {
      const snap = JSON.parse(readFileSync(join(snapDir, f), "utf8")) as EpisodeSnapshot;
      if (snap.tick <= snapshotTick) void store.put(snap);
    }
  }
  return dir;
}

describe("resuming an interrupted episode", () => {
  it("continues after the latest snapshot and reproduces the uninterrupted log exactly", async () => {
    const full = await runEpisode({ world: "auratown", seed: 17, ticks: 10, dir: join(tempDir("full"), "ep"), ...quiet });
    const records = logRecords(full.dir);
    const tick6 = records.findIndex((r) => r.tick === 6 && r.type === "tick.phase");
    const dir = crashedCopy(full.dir, tick6 + 5, 4);
    const resumed = await runEpisode({ world: "auratown", seed: 17, ticks: 10, dir, resume: true, ...quiet });
    expect(resumed.resumedAfterTick).toBe(4);
    expect(resumed.stateHash).toBe(full.stateHash);
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
    expect(resumed.records).toBe(records.length - (tick6 + 5));
    expect((await verifyEpisode(dir)).ok).toBe(true);
  });

  it("starts over from the first tick when no snapshot was kept, still appending nothing twice", async () => {
    const full = await runEpisode({ world: "auratown", seed: 18, ticks: 6, dir: join(tempDir("full"), "ep"), ...quiet });
    const dir = crashedCopy(full.dir, 40, null);
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
