import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { auratownWorld } from "../actors/auratown/world.ts";
import { seal, GENESIS_HASH, type LogRecord } from "../events/record.ts";
import { readSnapshotFile, type EpisodeSnapshot } from "../infra/snapshotStore.ts";
import { stateHashOf } from "../services/distributed/actorHost.ts";
import { forkEpisode, PROBETOWN_VERSION, runEpisode } from "../services/kernel/episodes.ts";
import { replayEpisode, restoreHost } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { firstSegment, logLines, logRecords, tempDir, withoutMetaLine } from "./helpers.ts";

const quiet = { trace: { exporter: "none" } as const };

async function run(seed: number, extra: Partial<Parameters<typeof runEpisode>[0]> = {}) {
  const dir = join(tempDir(`run${seed}`), "ep");
  return runEpisode({ world: "auratown", seed, dir, ...quiet, ...extra });
}

/** Rewrites a log after `mutate`, re-sealing the hash chain so only semantics differ. */
function reseal(dir: string, mutate: (records: LogRecord[]) => LogRecord[]): void {
  const records = mutate(logRecords(dir));
  let previous = GENESIS_HASH;
  const lines = records.map((r) => {
    const sealed = seal(previous, r.episode, r.seq, { type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause }, r.v, r.meta);
    previous = sealed.record.hash;
    return sealed.line;
  });
  writeFileSync(firstSegment(dir), lines.join(""));
}

describe("determinism", () => {
  it("two runs of the same world, seed and condition give logs identical except for meta", async () => {
    const a = await run(42);
    const b = await run(42, { trace: { exporter: "jsonl", file: join(tempDir("trace"), "t.jsonl") } });
    const ra = logRecords(a.dir);
    const rb = logRecords(b.dir);
    expect(ra.length).toBeGreaterThan(300);
    expect(rb.map(withoutMetaLine)).toEqual(ra.map(withoutMetaLine));
    expect(ra.every((r) => typeof r.meta?.ts === "string")).toBe(true);
    expect(rb.some((r) => typeof r.meta?.traceparent === "string")).toBe(true);
    const c = await run(43);
    expect(logRecords(c.dir).map(withoutMetaLine)).not.toEqual(ra.map(withoutMetaLine));
  });

  it("verify passes on an untouched log and fails naming the record when one byte changes", async () => {
    const a = await run(7);
    expect((await verifyEpisode(a.dir)).ok).toBe(true);
    const file = firstSegment(a.dir);
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    const target = lines.findIndex((l) => l.includes('"type":"agent.decided"'));
    const seq = JSON.parse(lines[target]!).seq;
    const at = text.indexOf('"action":"', text.indexOf(lines[target]!)) + 10;
    writeFileSync(file, text.slice(0, at) + (text[at] === "x" ? "y" : "x") + text.slice(at + 1));
    const report = await verifyEpisode(a.dir);
    expect(report.ok).toBe(false);
    expect(report.exitCode).toBe(3);
    expect(report.problem?.seq).toBe(seq);
    expect(report.text).toMatch(new RegExp(`000000000000\\.jsonl: seq ${seq} \\(line ${target + 1}\\): hash mismatch`));
  });

  it("verify names a .jsonl file in log/ that is not a segment (a last segment renamed by hand left the log looking interrupted, unsaid)", async () => {
    const a = await run(8);
    const file = firstSegment(a.dir);
    const lines = readFileSync(file, "utf8").split("\n");
    const cut = lines.findIndex((l) => l.includes('"tick":3,'));
    writeFileSync(file, lines.slice(0, cut).join("\n") + "\n");
    writeFileSync(join(a.dir, "log", `${cut}.jsonl`), lines.slice(cut).join("\n"));
    const report = await verifyEpisode(a.dir);
    expect(report.ok).toBe(true);
    expect(report.notes).toContain(`${join(a.dir, "log")} also holds ${cut}.jsonl, which is not read: a segment is named by its first record's seq in 12 digits (000000000000.jsonl), so a segment renamed by hand is left out of the log`);
  });

  it("a re-sealed log whose actor output was changed diverges at that record, with the difference", async () => {
    const a = await run(8);
    let seq = -1;
    expect(logRecords(a.dir)[0]!.meta?.probetown).toBe(PROBETOWN_VERSION);
    reseal(a.dir, (records) =>
      records.map((r) => {
        if (r.type === "episode.started") return { ...r, meta: { ...r.meta, probetown: "0.0.9" } };
        if (seq === -1 && r.type === "agent.decided") {
          seq = r.seq;
          return { ...r, payload: { ...(r.payload as object), action: "juggle flaming torches" } };
        }
        return r;
      }),
    );
    const report = await verifyEpisode(a.dir);
    expect(report.exitCode).toBe(1);
    expect(report.problem?.seq).toBe(seq);
    expect(report.problem?.details.join("\n")).toMatch(/payload\.action: "juggle flaming torches" → "/);
    expect(report.text).toMatch(new RegExp(`recorded by probetown 0\\.0\\.9, this is ${PROBETOWN_VERSION.replace(/\./g, "\\.")}`));
  });

  it("a state-only divergence is reported at the tick with a field-level diff from the kept snapshot", async () => {
    const a = await run(9, { snapshotEvery: 1 });
    reseal(a.dir, (records) =>
      records.map((r) =>
        r.type === "episode.started"
          ? { ...r, payload: { ...(r.payload as Record<string, unknown>), config: { ...((r.payload as { config: object }).config), memory: { capacity: 150, reflectionThreshold: 10, decay: 0.01, weights: { recency: 0.3, importance: 0.4, relevance: 0.3 } } } } }
          : r,
      ),
    );
    const report = await verifyEpisode(a.dir);
    expect(report.exitCode).toBe(1);
    expect(report.problem?.message).toMatch(/tick 0 state hash differs/);
    expect(report.notes).toEqual([]);
    expect(report.problem?.details.join("\n")).toMatch(/agent\/chen-mei\.params\.memory\.capacity: 200 → 150/);
  });
});

describe("forks", () => {
  it("continuing a fork with the parent's condition reproduces the parent's remaining log exactly", async () => {
    const parent = await run(42);
    for (const at of [0, 11, 32]) {
      const child = await forkEpisode({ parent: parent.dir, atTick: at, condition: "baseline", dir: join(tempDir("fork"), "child"), ...quiet });
      const childRecords = logRecords(child.dir);
      expect(childRecords[0]!.type).toBe("episode.forked");
      expect(childRecords[0]!.seq).toBe(child.atSeq);
      const strip = (r: LogRecord) => ({ seq: r.seq, tick: r.tick, type: r.type, from: r.from, to: r.to, payload: r.payload, cause: r.cause });
      const parentRest = logRecords(parent.dir).filter((r) => r.seq > child.atSeq).map(strip);
      expect(childRecords.slice(1).map(strip)).toEqual(parentRest);
      expect(child.stateHash).toBe(parent.stateHash);
      expect((await verifyEpisode(child.dir)).ok).toBe(true);
    }
  });

  it("a snapshot written when the agents were XState machines (persisted machine snapshots) still forks to the parent's log", async () => {
    const parent = await run(42, { ticks: 12, snapshotEvery: 1 });
    const snapDir = join(parent.dir, "snapshots");
    const childAt = 8;
    const key = readdirSync(snapDir)
      .filter((f) => /^[0-9a-f]+\.json$/.test(f))
      .map((f) => readSnapshotFile(join(snapDir, f)) as EpisodeSnapshot)
      .find((s) => s.tick === childAt)!.stateHash;
    const file = join(snapDir, `${key}.json`);
    const snap = readSnapshotFile(file) as EpisodeSnapshot & { actors: Record<string, { status: string; value: string; context: unknown }> };
    const values = new Set<string>();
    for (const [id, a] of Object.entries(snap.actors)) {
      values.add(a.value);
      // What a machine's getPersistedSnapshot() wrote before: its own fields around the same context and value.
      snap.actors[id] = { status: a.status, value: a.value, historyValue: {}, context: a.context, children: {} } as never;
    }
    expect(values.has("running") && (values.has("asleep") || values.has("awake"))).toBe(true);
    writeFileSync(file, JSON.stringify(snap));
    const child = await forkEpisode({ parent: parent.dir, atTick: childAt, condition: "baseline", dir: join(tempDir("fork"), "machine-snap"), ...quiet });
    const strip = (r: LogRecord) => ({ seq: r.seq, tick: r.tick, type: r.type, from: r.from, to: r.to, payload: r.payload, cause: r.cause });
    expect(logRecords(child.dir).slice(1).map(strip)).toEqual(logRecords(parent.dir).filter((r) => r.seq > child.atSeq).map(strip));
    expect(child.stateHash).toBe(parent.stateHash);
  });

  it("forking under another condition changes only what that condition touches", async () => {
    const parent = await run(42);
    const child = await forkEpisode({ parent: parent.dir, atTick: 10, condition: "no-reflection", dir: join(tempDir("fork"), "nr"), ...quiet });
    const after = (records: LogRecord[], type: string) => records.filter((r) => r.seq > child.atSeq && r.type === type).map((r) => [r.tick, r.from, r.payload]);
    const p = logRecords(parent.dir);
    const c = logRecords(child.dir);
    expect(after(p, "agent.reflected").length).toBeGreaterThan(0);
    expect(after(c, "agent.reflected")).toEqual([]);
    // Exogenous draws and routine-driven behaviour do not depend on reflection: identical.
    for (const type of ["world.incident", "agent.planned", "agent.decided", "location.occupancy"]) expect(after(c, type)).toEqual(after(p, type));
    expect((await verifyEpisode(child.dir)).ok).toBe(true);
    // The parent's log is untouched by forking.
    expect((await verifyEpisode(parent.dir)).ok).toBe(true);
  });

  it("forks from a replay when the parent kept no snapshot of that tick", async () => {
    const parent = await run(5, { snapshotEvery: 0 });
    const child = await forkEpisode({ parent: parent.dir, atTick: 6, condition: "baseline", dir: join(tempDir("fork"), "replayed"), ...quiet });
    expect(child.stateHash).toBe(parent.stateHash);
  });

  it("a fork whose parent's log was cut back before the fork point verifies against its base, saying so; without the base it says why it cannot be rebuilt", async () => {
    const parent = await run(12, { ticks: 8 });
    const child = await forkEpisode({ parent: parent.dir, atTick: 5, condition: "baseline", dir: join(tempDir("fork"), "short"), ...quiet });
    // The parent lost its last ticks after the fork was made (a crash, then `repair`).
    const file = firstSegment(parent.dir);
    const lines = readFileSync(file, "utf8").split("\n");
    const cut = lines.findIndex((l) => l.includes('"tick":4,'));
    writeFileSync(file, lines.slice(0, cut).join("\n") + "\n");
    const report = await verifyEpisode(child.dir);
    // It failed as a divergence (exit 1: "record seq … of the parent is missing"), though the fork is intact.
    expect(report.exitCode).toBe(0);
    expect(report.notes.join("\n")).toMatch(new RegExp(`the parent log .* ends at seq ${cut - 1}, before the fork point \\(seq ${child.atSeq}\\): it lost its last records after the fork was made .*checked the fork against its stored base snapshot only`));
    rmSync(join(child.dir, "snapshots"), { recursive: true });
    await expect(verifyEpisode(child.dir)).rejects.toThrow(new RegExp(`the fork's base snapshot [0-9a-f]{12}… is missing, and its parent's log \\(.*\\) ends at seq ${cut - 1}, tick 3, before the fork point \\(seq ${child.atSeq}, tick 5\\)`));
  });

  it("rejects a fork tick the parent never committed", async () => {
    const parent = await run(5, { ticks: 4 });
    await expect(forkEpisode({ parent: parent.dir, atTick: 9, condition: "baseline", ...quiet })).rejects.toThrow(/--at 9: the parent has no committed tick 9 \(committed ticks: 0–3\)/);
    await expect(forkEpisode({ parent: parent.dir, atTick: 1, condition: "nope", ...quiet })).rejects.toThrow(/unknown condition 'nope'/);
  });
});

describe("properties over random seeds", () => {
  it("replay equals the original run and every snapshot restores to its state hash", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 3, max: 34 }), async (seed, ticks) => {
        const r = await run(seed, { ticks, snapshotEvery: 1 });
        const replay = await replayEpisode(r.dir);
        replay.host.stop();
        expect(replay.stateHash).toBe(r.stateHash);
        expect(replay.lastTick).toBe(ticks - 1);
        const snapDir = join(r.dir, "snapshots");
        const files = readdirSync(snapDir).filter((f) => /^[0-9a-f]+\.json$/.test(f));
        expect(files.length).toBe(ticks);
        const committed = new Map(logRecords(r.dir).filter((x) => x.type === "tick.committed").map((x) => [x.tick, (x.payload as { stateHash: string }).stateHash]));
        for (const f of files) {
          const snap = readSnapshotFile(join(snapDir, f)) as EpisodeSnapshot;
          const host = restoreHost(auratownWorld, snap, auratownWorld.applyCondition(auratownWorld.resolveConfig(snap.config), snap.condition), snap.seed, snap.condition);
          expect(stateHashOf(snap.tick, host.digests())).toBe(snap.stateHash);
          expect(committed.get(snap.tick)).toBe(snap.stateHash);
          host.stop();
        }
      }),
      { numRuns: 20, seed: 20261122 },
    );
  });

  it("an altered snapshot is refused instead of restored", async () => {
    const r = await run(11, { ticks: 3 });
    const snapDir = join(r.dir, "snapshots");
    const file = join(snapDir, readdirSync(snapDir).find((f) => /^[0-9a-f]+\.json$/.test(f))!);
    const snap = readSnapshotFile(file) as EpisodeSnapshot & { actors: Record<string, { context: { action: string } }> };
    snap.actors["agent/lin-wei"]!.context.action = "dancing";
    const config = auratownWorld.resolveConfig(snap.config);
    expect(() => restoreHost(auratownWorld, snap, config, snap.seed, snap.condition)).toThrow(/does not hash to its key/);
    expect(logLines(r.dir).length).toBeGreaterThan(0);
  });
});
