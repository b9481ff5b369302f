// `verify` in spans between snapshots on worker threads gives the one-thread verify's report
// (issue 26): equal on logs that hold, the same first failing tick on a log with an altered
// record, and a snapshot that does not hold is never trusted. `verify --chain-only` checks the
// log's integrity without replaying its actors.
import { describe, expect, it } from "vitest";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Chain } from "../events/canonical.ts";
import { GENESIS_HASH, recordBody, sealedLine, type LogRecord } from "../events/record.ts";
import { verifyEpisode, type VerifyReport } from "../services/kernel/verify.ts";
import { replayInSpans } from "../services/kernel/verifySpans.ts";
import { layoutOf } from "../services/kernel/replay.ts";
import { snapshotFileText } from "../infra/snapshotStore.ts";
import replaySpan from "../services/kernel/verifySpanWorker.ts";
import { firstSegment, runCli, tempDir } from "./helpers.ts";

/** Spans even for a short log, this thread without a head start: the workers get most of it. */
const inSpans = { threads: 3, spans: { from: 0, headStart: 0 } } as const;
const oneThread = { threads: 1 } as const;

/** A report without its timings, to compare a parallel verify with a one-thread one. */
const comparable = (r: VerifyReport) => ({ ...r, seconds: 0, eventsPerSecond: 0, text: r.text.replace(/\([\d.]+ s, [\d,]+ events\/s\)/, "") });

/** Rewrites the log with `edit` applied to the record at `seq`, and the hash chain resealed after it (an alteration a chain check cannot see). */
function alterAndReseal(dir: string, seq: number, edit: (r: LogRecord) => LogRecord): void {
  const file = firstSegment(dir);
  const records = readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as LogRecord);
  let previous = GENESIS_HASH;
  const lines = records.map((r0) => {
    const r = r0.seq === seq ? edit(r0) : r0;
    const body = recordBody(r);
    const sealed = { ...r, hash: sha256Chain(previous, body) };
    previous = sealed.hash;
    return sealedLine(sealed, body);
  });
  writeFileSync(file, lines.join("\n") + "\n");
}

const recordsOf = (dir: string): LogRecord[] => readFileSync(firstSegment(dir), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as LogRecord);

describe("verify in spans between snapshots", () => {
  const work = tempDir("verify-parallel");
  const good = join(work, "good");

  it("gives the one-thread report on logs that hold, having replayed them in spans", async () => {
    // 10 agents: a snapshot every tick (the default up to 64 actors).
    expect((await runCli(["run", "auratown", "--seed", "11", "--ticks", "12", "--config", '{"extraAgents":5}', "--snapshot-every", "1", "--log", good, "--quiet"])).code).toBe(0);
    const spans = await replayInSpans(good, layoutOf(good), { threads: 3, from: 0, headStart: 0 });
    expect(spans).not.toBeNull();
    expect(spans).toMatchObject({ lastTick: 11, incompleteTick: false, torn: null, count: recordsOf(good).length });
    const sequential = await verifyEpisode(good, oneThread);
    expect(sequential.exitCode).toBe(0);
    expect(comparable(await verifyEpisode(good, inSpans))).toEqual(comparable(sequential));

    // A fork: its first span starts from its base snapshot.
    const fork = join(work, "fork");
    expect((await runCli(["fork", good, "--at", "3", "--condition", "baseline", "--snapshot-every", "1", "--log", fork, "--quiet"])).code).toBe(0);
    expect(await replayInSpans(fork, layoutOf(fork), { threads: 3, from: 0, headStart: 0 })).toMatchObject({ lastTick: 11 });
    expect(comparable(await verifyEpisode(fork, inSpans))).toEqual(comparable(await verifyEpisode(fork, oneThread)));

    // An interrupted run (the log ends part-way through a tick): the last span replays its tail.
    const cut = join(work, "cut");
    cpSync(good, cut, { recursive: true });
    const lines = readFileSync(firstSegment(cut), "utf8").trimEnd().split("\n");
    writeFileSync(firstSegment(cut), lines.slice(0, -3).join("\n") + "\n");
    expect(await replayInSpans(cut, layoutOf(cut), { threads: 3, from: 0, headStart: 0 })).toMatchObject({ lastTick: 10, incompleteTick: true });
    const cutReport = await verifyEpisode(cut, inSpans);
    expect(cutReport.unfinished).toMatch(/part-way through tick 11/);
    expect(comparable(cutReport)).toEqual(comparable(await verifyEpisode(cut, oneThread)));
  }, 300_000);

  it("fails at the same tick as one thread on a log with an altered record, resealed", async () => {
    const altered = join(work, "altered");
    cpSync(good, altered, { recursive: true });
    // A decision late in the log, in a worker's span.
    const target = recordsOf(altered).findLast((r) => r.type === "agent.decided" && r.tick === 9)!;
    alterAndReseal(altered, target.seq, (r) => ({ ...r, payload: { ...(r.payload as object), action: "juggle in the square" } }));
    expect(await replayInSpans(altered, layoutOf(altered), { threads: 3, from: 0, headStart: 0 })).toBeNull();
    const sequential = await verifyEpisode(altered, oneThread);
    expect(sequential).toMatchObject({ exitCode: 1, problem: { kind: "diverged", seq: target.seq } });
    expect(comparable(await verifyEpisode(altered, inSpans))).toEqual(comparable(sequential));
    // The chain holds, and so does each tick's state hash against its parts: --chain-only cannot see it.
    expect((await verifyEpisode(altered, { chainOnly: true })).exitCode).toBe(0);
  }, 300_000);

  it("never trusts a snapshot that does not hold: an altered one is refused, and a log it would cover still fails at its tick", async () => {
    const records = recordsOf(good);
    const committed = records.filter((r) => r.type === "tick.committed");
    const keyOf = (r: LogRecord) => (r.payload as { stateHash: string }).stateHash;
    const snapshotOf = (dir: string, tick: number) => join(dir, "snapshots", `${keyOf(committed.find((r) => r.tick === tick)!)}.json`);
    const alterSnapshot = (file: string) => {
      const text = snapshotFileText(file);
      expect(text).toMatch(/"nearbyCount":\d+/);
      writeFileSync(file, text.replace(/"nearbyCount":(\d+)/, (_m, n: string) => `"nearbyCount":${Number(n) + 1}`));
    };

    // A log that holds, with every snapshot altered: the spans are refused, and verify holds as on one thread.
    const tampered = join(work, "tampered-snapshot");
    cpSync(good, tampered, { recursive: true });
    for (const name of readdirSync(join(tampered, "snapshots")).filter((n) => /^[0-9a-f]+\.json$/.test(n))) alterSnapshot(join(tampered, "snapshots", name));
    expect(await replayInSpans(tampered, layoutOf(tampered), { threads: 3, from: 0, headStart: 0 })).toBeNull();
    const header = records[0]!;
    const at = committed.find((r) => r.tick === 7)!;
    const offset = Buffer.byteLength(readFileSync(firstSegment(tampered), "utf8").split("\n").slice(0, at.seq).join("\n")) + 1;
    const span = await replaySpan({ dir: tampered, snapshots: join(tampered, "snapshots"), header, start: { seq: at.seq, hash: at.hash, tick: 7, file: firstSegment(tampered), offset }, snapshot: keyOf(at), toSeq: records.at(-1)!.seq, last: true });
    expect(span).toMatchObject({ ok: false, why: expect.stringContaining("does not hash to its key") as unknown });
    const holds = await verifyEpisode(tampered, inSpans);
    expect(holds.exitCode).toBe(0);
    expect(comparable(holds)).toEqual(comparable(await verifyEpisode(tampered, oneThread)));

    // An altered record after tick 7, and the snapshot of tick 7 altered too: it fails where one thread fails.
    const both = join(work, "record-and-snapshot");
    cpSync(good, both, { recursive: true });
    const target = records.find((r) => r.type === "agent.decided" && r.tick === 8)!;
    alterAndReseal(both, target.seq, (r) => ({ ...r, payload: { ...(r.payload as object), action: "juggle in the square" } }));
    alterSnapshot(snapshotOf(both, 7));
    const sequential = await verifyEpisode(both, oneThread);
    expect(sequential).toMatchObject({ exitCode: 1, problem: { seq: target.seq } });
    expect(comparable(await verifyEpisode(both, inSpans))).toEqual(comparable(sequential));
  }, 300_000);
});

describe("verify --chain-only", () => {
  const work = tempDir("verify-chain-only");
  const dir = join(work, "day");

  it("passes a log that holds, without replaying, and catches a broken chain (exit 3) and a broken tick sequence (exit 1)", async () => {
    expect((await runCli(["run", "auratown", "--seed", "12", "--ticks", "6", "--log", dir, "--quiet"])).code).toBe(0);
    const ok = await runCli(["verify", dir, "--chain-only"]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toMatch(/6 ticks in sequence, each state hash the hash of its parts; actors not replayed \(--chain-only\)/);

    // A record altered in place: the chain breaks there, as the full verify reports it.
    const broken = join(work, "broken");
    cpSync(dir, broken, { recursive: true });
    const lines = readFileSync(firstSegment(broken), "utf8").split("\n");
    const at = lines.findIndex((l) => l.includes('"type":"agent.decided"'));
    lines[at] = lines[at]!.replace(/"action":"[^"]*"/, '"action":"juggle in the square"');
    writeFileSync(firstSegment(broken), lines.join("\n"));
    const chain = await verifyEpisode(broken, { chainOnly: true });
    const full = await verifyEpisode(broken, oneThread);
    expect(chain).toMatchObject({ exitCode: 3, problem: { kind: "damaged", seq: at } });
    expect(chain.problem).toEqual(full.problem);
    expect((await runCli(["verify", broken, "--chain-only", "--json"])).code).toBe(3);

    // A tick's recorded state hash altered and the chain resealed: no longer the hash of its parts.
    const rehashed = join(work, "rehashed");
    cpSync(dir, rehashed, { recursive: true });
    const commit = recordsOf(rehashed).filter((r) => r.type === "tick.committed")[2]!;
    alterAndReseal(rehashed, commit.seq, (r) => ({ ...r, payload: { ...(r.payload as object), stateHash: "0".repeat(64) } }));
    expect(await verifyEpisode(rehashed, { chainOnly: true })).toMatchObject({ exitCode: 1, problem: { kind: "diverged", seq: commit.seq } });
    expect(await verifyEpisode(rehashed, oneThread)).toMatchObject({ exitCode: 1, problem: { seq: commit.seq } });

    // A record moved to another tick, resealed.
    const moved = join(work, "moved");
    cpSync(dir, moved, { recursive: true });
    const decided = recordsOf(moved).find((r) => r.type === "agent.decided" && r.tick === 3)!;
    alterAndReseal(moved, decided.seq, (r) => ({ ...r, tick: 4 }));
    expect(await verifyEpisode(moved, { chainOnly: true })).toMatchObject({ exitCode: 1, problem: { seq: decided.seq } });
  }, 300_000);
});
