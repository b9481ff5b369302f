import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename as basenameOf, join } from "node:path";
import { canonicalJson } from "../events/canonical.ts";
import { InvalidPayload, LogCorrupted, SequenceConflict, TornTail, UnknownEventType } from "../events/errors.ts";
import { seal, GENESIS_HASH, type Draft } from "../events/record.ts";
import { createFileEventStore, openFileEventStoreForAppend, peekLog, readLog, scanLog } from "../infra/fileEventStore.ts";
import { CLI, firstSegment, logRecords, repoRoot, runCli, tempDir, withoutMetaLine } from "./helpers.ts";

const phase = (tick: number, phase: string): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase }, tick, cause: null });

async function sampleLog(n = 10): Promise<string> {
  const dir = join(tempDir("store"), "log");
  const store = createFileEventStore(dir, { episode: "ep" });
  const drafts = Array.from({ length: n }, (_, i) => phase(i, `p${i}`));
  const split = Math.min(4, n);
  await store.append(drafts.slice(0, split), { expectedSeq: -1 });
  await store.append(drafts.slice(split), { expectedSeq: split - 1 });
  await store.close();
  return dir;
}

const segment = (dir: string) => join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);

describe("canonical JSON and the hash chain", () => {
  it("sorts keys at every depth and rejects values that are not JSON", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
  });

  it("chains each record to the previous hash and keeps meta out of it", () => {
    const a = seal(GENESIS_HASH, "ep", 0, phase(0, "a"), 1, { ts: "2026-01-01T00:00:00Z" }).record;
    const b = seal(GENESIS_HASH, "ep", 0, phase(0, "a"), 1, { ts: "1999-01-01T00:00:00Z", host: "other" }).record;
    expect(a.hash).toBe(b.hash);
    const next = seal(a.hash, "ep", 1, phase(0, "b"), 1).record;
    const other = seal(GENESIS_HASH, "ep", 1, phase(0, "b"), 1).record;
    expect(next.hash).not.toBe(other.hash);
    const line = seal(GENESIS_HASH, "ep", 0, { ...phase(0, "a"), payload: { z: 1, phase: "a" } }, 1, { ts: "2026-01-01T00:00:00Z" }).line;
    expect(JSON.parse(line).meta.ts).toBe("2026-01-01T00:00:00Z");
    // The payload is written in canonical (sorted-key) form whatever order the draft used.
    expect(line).toContain('"payload":{"phase":"a","z":1}');
  });
});

describe("file event store", () => {
  it("appends in order and reads back the same records", async () => {
    const dir = await sampleLog(10);
    const records = readLog(dir);
    expect(records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(records.map((r) => (r.payload as { phase: string }).phase)).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`));
  });

  it("fences appends by expected sequence", async () => {
    const dir = join(tempDir("fence"), "log");
    const store = createFileEventStore(dir, { episode: "ep" });
    await store.append([phase(0, "a")], { expectedSeq: -1 });
    await expect(store.append([phase(0, "b")], { expectedSeq: -1 })).rejects.toBeInstanceOf(SequenceConflict);
    await store.close();
    expect(readLog(dir)).toHaveLength(1);
  });

  it("rejects a second writer on the same episode while the first holds it", async () => {
    const dir = await sampleLog(3);
    const first = openFileEventStoreForAppend(dir, { episode: "ep" });
    expect(() => openFileEventStoreForAppend(dir, { episode: "ep" })).toThrow(/already has a sequencer/);
    await first.store.close();
    const again = openFileEventStoreForAppend(dir, { episode: "ep" });
    await again.store.close();
  });

  it("reports a torn final record with file and last good seq, and never modifies the file on read", async () => {
    const dir = await sampleLog(6);
    const file = segment(dir);
    appendFileSync(file, '{"cause":null,"episode":"ep","from":"epis');
    const before = readFileSync(file);
    const scan = scanLog(dir);
    expect(scan.records).toHaveLength(6);
    expect(scan.torn).toBeInstanceOf(TornTail);
    expect(scan.torn!.message).toMatch(/000000000000\.jsonl: line 7: torn final record .*last good record seq 5/);
    expect(() => readLog(dir)).toThrow(TornTail);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("cuts a torn tail back when opened for append, keeping the cut bytes, and continues the chain", async () => {
    const dir = join(tempDir("torn"), "log");
    const writer = createFileEventStore(dir, { episode: "ep" });
    // Non-ASCII payloads: the cut must happen at a byte offset, not a character index.
    await writer.append(Array.from({ length: 6 }, (_, i) => phase(i, `p${i} 👩‍🍳 café`)), { expectedSeq: -1 });
    await writer.close();
    const file = segment(dir);
    const tail = '{"cause":null,"episode":"ep","from":"epis';
    appendFileSync(file, tail);
    let recovered = "";
    const { store, records } = openFileEventStoreForAppend(dir, { episode: "ep", onRecovered: (_t, kept) => (recovered = kept) });
    expect(records).toHaveLength(6);
    expect(readFileSync(recovered, "utf8")).toBe(tail);
    await store.append([phase(6, "after")], { expectedSeq: 5 });
    await store.close();
    expect(readLog(dir).map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // Torn again at the same offset (a resumed run killed mid-way through the same record): the first cut bytes are kept too.
    const first = recovered;
    const offset = Number(/\.torn-(\d+)$/.exec(first)![1]);
    const again = '{"cause":null,"episode":"ep","from":"episode","pay';
    writeFileSync(file, Buffer.concat([readFileSync(file).subarray(0, offset), Buffer.from(again)]));
    const reopened = openFileEventStoreForAppend(dir, { episode: "ep", onRecovered: (_t, kept) => (recovered = kept) });
    await reopened.store.close();
    expect(recovered).toBe(`${first}-2`);
    expect(readFileSync(recovered, "utf8")).toBe(again);
    expect(readFileSync(first, "utf8")).toBe(tail);
  });

  it("reports a malformed record mid-file with file and seq and keeps every record before it", async () => {
    const dir = await sampleLog(8);
    const file = segment(dir);
    const lines = readFileSync(file, "utf8").split("\n");
    lines[4] = lines[4]!.slice(0, 30) + "}}}garbage";
    writeFileSync(file, lines.join("\n"));
    const error = (() => {
      try {
        scanLog(dir);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(LogCorrupted);
    expect((error as LogCorrupted).message).toMatch(/000000000000\.jsonl: seq 4 \(line 5\): not valid JSON/);
    expect(() => openFileEventStoreForAppend(dir, { episode: "ep" })).toThrow(LogCorrupted);
    expect(readFileSync(file, "utf8").split("\n")).toEqual(lines);
    expect(existsSync(join(dir, "writer.lock"))).toBe(false);
  });

  it("names the altered record when one byte of a stored value changes", async () => {
    const dir = await sampleLog(8);
    const file = segment(dir);
    const text = readFileSync(file, "utf8");
    const at = text.indexOf('"p5"');
    writeFileSync(file, text.slice(0, at + 2) + "X" + text.slice(at + 3));
    expect(() => scanLog(dir)).toThrow(/seq 5 \(line 6\): hash mismatch/);
  });

  it("reports reordered records by sequence number", async () => {
    const dir = await sampleLog(8);
    const file = segment(dir);
    const lines = readFileSync(file, "utf8").split("\n");
    [lines[2], lines[3]] = [lines[3]!, lines[2]!];
    writeFileSync(file, lines.join("\n"));
    expect(() => scanLog(dir)).toThrow(/seq 3 \(line 3\): expected seq 2, found 3/);
  });

  it("reports an unknown event type and a malformed payload at their seq", async () => {
    const dir = join(tempDir("types"), "log");
    const store = createFileEventStore(dir, { episode: "ep" });
    await store.append([phase(0, "a"), { type: "tick.phase", from: "episode", to: null, payload: { phase: 42 }, tick: 0, cause: null, v: 1 }], { expectedSeq: -1 });
    await store.close();
    expect(() => scanLog(dir)).toThrow(InvalidPayload);
    expect(() => scanLog(dir)).toThrow(/seq 1 \(line 2\): payload of 'tick.phase' does not match its schema/);

    const dir2 = join(tempDir("types2"), "log");
    const store2 = createFileEventStore(dir2, { episode: "ep" });
    await store2.append([phase(0, "a"), { type: "mystery.event", from: "x", to: null, payload: {}, tick: 0, cause: null, v: 1 }], { expectedSeq: -1 });
    await store2.close();
    expect(() => scanLog(dir2)).toThrow(UnknownEventType);
    expect(() => scanLog(dir2)).toThrow(/seq 1 \(line 2\): unknown event type 'mystery.event'/);
    expect(scanLog(dir2, { validate: false }).records).toHaveLength(2);
  });

  it("rolls over to a new segment and reads across segments", async () => {
    const dir = join(tempDir("roll"), "log");
    const store = createFileEventStore(dir, { episode: "ep", segmentBytes: 600 });
    for (let i = 0; i < 12; i++) await store.append([phase(i, `p${i}`)], { expectedSeq: i - 1 });
    await store.close();
    expect(readdirSync(dir).filter((f) => f.endsWith(".jsonl")).length).toBeGreaterThan(2);
    expect(readLog(dir).map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it("writes a tick's appends at its commit, and rolls segments where it would have appended them one by one", async () => {
    const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort().map((f) => readFileSync(join(dir, f), "utf8"));
    const ticks = [[0, 1, 2], [3], [4, 5, 6, 7], [8, 9], [10, 11, 12, 13, 14]];
    // The same appends, committed after each one, and committed a tick at a time.
    const eachDir = join(tempDir("commit-each"), "log");
    const each = createFileEventStore(eachDir, { episode: "ep", segmentBytes: 700, fsync: "never" });
    const tickDir = join(tempDir("commit-tick"), "log");
    const byTick = createFileEventStore(tickDir, { episode: "ep", segmentBytes: 700 });
    const stamp = { ts: "2026-11-29T12:00:00.000Z" };
    for (const seqs of ticks) {
      for (const i of seqs) {
        await each.append([phase(i, `p${i}`)], { expectedSeq: i - 1, meta: () => stamp });
        await each.commit();
      }
      const before = segments(tickDir).join("");
      for (const i of seqs) await byTick.append([phase(i, `p${i}`)], { expectedSeq: i - 1, meta: () => stamp });
      // Sealed (the head moved), not yet in the file: a reader sees whole ticks.
      expect(byTick.head().seq).toBe(seqs.at(-1));
      expect(segments(tickDir).join("")).toBe(before);
      await byTick.commit();
      expect(segments(tickDir)).toEqual(segments(eachDir));
    }
    expect(segments(tickDir).length).toBeGreaterThan(2);
    // What a tick appended before it stopped is written at close, as appending wrote it before.
    await byTick.append([phase(15, "p15")], { expectedSeq: 14, meta: () => stamp });
    await byTick.close();
    await each.close();
    expect(readLog(tickDir).map((r) => r.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });
});

/** The error scanLog throws for a log, or null. */
const scanError = (dir: string): unknown => {
  try {
    scanLog(dir);
  } catch (e) {
    return e;
  }
  return null;
};

describe("bytes no store writes", () => {
  /** Edits the first segment's lines, and checks the scan names the damage and appending refuses, leaving the file as it is. */
  async function edited(edit: (lines: string[]) => string, expected: RegExp): Promise<string> {
    const dir = await sampleLog(6);
    const file = segment(dir);
    writeFileSync(file, edit(readFileSync(file, "utf8").split("\n").slice(0, -1)));
    const before = readFileSync(file);
    const error = scanError(dir);
    expect(error).toBeInstanceOf(LogCorrupted);
    expect((error as LogCorrupted).message).toMatch(expected);
    expect(() => openFileEventStoreForAppend(dir, { episode: "ep" })).toThrow(expected);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(existsSync(join(dir, "writer.lock"))).toBe(false);
    return dir;
  }

  it("a blank line between records, or at the end, is damage naming the file, line and the seq before it", async () => {
    await edited((lines) => [...lines.slice(0, 3), "", ...lines.slice(3)].join("\n") + "\n", /000000000000\.jsonl: line 4: a blank line after seq 2: expected one record per line, LF-terminated/);
    await edited((lines) => lines.join("\n") + "\n\n", /000000000000\.jsonl: line 7: a blank line after seq 5: expected one record per line, LF-terminated/);
    await edited((lines) => ["  ", ...lines].join("\n") + "\n", /line 1: a blank line before the first record/);
  });

  it("a CRLF line ending, whitespace around a record or a respaced record is damage, though every record's hash holds", async () => {
    await edited((lines) => lines.join("\r\n") + "\r\n", /000000000000\.jsonl: seq 0 \(line 1\): the line ends with a carriage return \(a CRLF line ending\): expected one record per line, LF-terminated/);
    await edited((lines) => lines.map((l, i) => (i === 3 ? `${l}  ` : l)).join("\n") + "\n", /seq 3 \(line 4\): whitespace before or after the record/);
    await edited((lines) => lines.map((l, i) => (i === 2 ? l.replace('"cause":null,', '"cause": null, ') : l)).join("\n") + "\n", /seq 2 \(line 3\): the line is not the text its record was sealed as/);
    // The last line without its newline is still read (a crash can stop a write just before it), CR or not.
    await edited((lines) => lines.join("\n") + "\r", /seq 5 \(line 6\): the line ends with a carriage return/);
  });

  /** A log of 12 records over several segments, and its segment files. */
  async function rolled(): Promise<{ dir: string; files: string[] }> {
    const dir = join(tempDir("segments"), "log");
    const store = createFileEventStore(dir, { episode: "ep", segmentBytes: 600 });
    for (let i = 0; i < 12; i++) await store.append([phase(i, `p${i}`)], { expectedSeq: i - 1 });
    await store.close();
    const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort().map((f) => join(dir, f));
    expect(files.length).toBeGreaterThan(2);
    return { dir, files };
  }

  it("an empty last segment named for the next seq (a crash right after a roll, or a torn first record cut) is read and appended to", async () => {
    const { dir } = await rolled();
    writeFileSync(join(dir, "000000000012.jsonl"), "");
    expect(scanLog(dir).records).toHaveLength(12);
    // The log's end, as commands read it before a full read to check their flags, is the segment before.
    expect(peekLog(dir).last?.seq).toBe(11);
    const { store } = openFileEventStoreForAppend(dir, { episode: "ep", segmentBytes: 600 });
    await store.append([phase(12, "after")], { expectedSeq: 11 });
    await store.close();
    expect(readFileSync(join(dir, "000000000012.jsonl"), "utf8")).toMatch(/^\{"cause":null,.*"seq":12,/);
    // Torn in its first record: the cut leaves the segment empty, and appending continues there.
    writeFileSync(join(dir, "000000000013.jsonl"), '{"cause":null,"episode":"ep","fr');
    const reopened = openFileEventStoreForAppend(dir, { episode: "ep", segmentBytes: 600 });
    expect(readFileSync(join(dir, "000000000013.jsonl"), "utf8")).toBe("");
    await reopened.store.append([phase(13, "again")], { expectedSeq: 12 });
    await reopened.store.close();
    expect(readLog(dir).map((r) => r.seq)).toEqual(Array.from({ length: 14 }, (_, i) => i));
  });

  it("an empty segment before another, an empty last one named for another seq, or a misnamed segment is damage", async () => {
    const { dir, files } = await rolled();
    const second = files[1]!;
    const first = readLog(dir).find((r) => r.seq === Number(second.slice(-18, -6)))!;
    expect(first).toBeDefined();
    // An empty segment in the middle (named between two others).
    const between = join(dir, `${String(first.seq - 1).padStart(12, "0")}.jsonl`);
    writeFileSync(between, "");
    expect(scanError(dir)).toBeInstanceOf(LogCorrupted);
    expect((scanError(dir) as LogCorrupted).message).toMatch(new RegExp(`${String(first.seq - 1).padStart(12, "0")}\\.jsonl: line 1: an empty segment after seq ${first.seq - 1}, before .*${basenameOf(second)}`));
    expect(() => openFileEventStoreForAppend(dir, { episode: "ep" })).toThrow(/an empty segment/);
    rmSync(between);
    // An empty last segment whose name is not the next seq.
    writeFileSync(join(dir, "000000000020.jsonl"), "");
    expect((scanError(dir) as LogCorrupted).message).toMatch(/000000000020\.jsonl: line 1: an empty last segment named for seq 20, after seq 11: .* 12/);
    rmSync(join(dir, "000000000020.jsonl"));
    // A segment renamed (its records still in order).
    const renamed = join(dir, `${String(first.seq + 1).padStart(12, "0")}.jsonl`);
    renameSync(second, renamed);
    expect((scanError(dir) as LogCorrupted).message).toMatch(new RegExp(`${basenameOf(renamed)}: seq ${first.seq} \\(line 1\\): the segment's name says its first record is seq ${first.seq + 1}, but it begins with seq ${first.seq}`));
    renameSync(renamed, second);
    expect(scanLog(dir).records).toHaveLength(12);
    // A segment that ends without its newline, followed by another.
    const text = readFileSync(files[0]!, "utf8");
    writeFileSync(files[0]!, text.slice(0, -1));
    expect((scanError(dir) as LogCorrupted).message).toMatch(/000000000000\.jsonl: seq \d+ \(line \d+\): the segment ends without a newline after this record/);
  });
});

// `ulimit -f` caps the size of files the child may write (the kernel answers EFBIG, Node ignores
// SIGXFSZ): a disk that fills up part-way through a run, without needing a small filesystem.
describe("a disk that fills up mid-run", () => {
  const limited = (kib: number, args: string[]) =>
    spawnSync("bash", ["-c", `ulimit -f ${kib}; exec "$0" "$@"`, process.execPath, CLI, ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });

  it("stops with exit 2 naming the file and the last good record, cuts the partial batch, and a resume finishes the same log", async () => {
    const dir = tempDir("diskfull");
    // A snapshot every tick: the disk refuses snapshot files too, and none may be left part-written.
    const full = limited(40, ["run", "auratown", "--seed", "42", "--log", dir, "--trace", "none", "--quiet", "--snapshot-every", "1"]);
    expect(full.status).toBe(2);
    const lastGood = Number(/last good record \(seq (\d+)\)/.exec(full.stderr)?.[1]);
    expect(full.stderr).toContain("000000000000.jsonl");
    expect(full.stderr).toContain("--resume");
    const text = readFileSync(firstSegment(dir), "utf8");
    expect(text.endsWith("\n")).toBe(true); // no torn record left behind
    const records = text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { seq: number });
    expect(records.at(-1)!.seq).toBe(lastGood);
    expect(readdirSync(join(dir, "snapshots")).filter((f) => f.includes(".tmp-"))).toEqual([]);
    expect((await runCli(["verify", dir])).code).toBe(0);

    const resumed = await runCli(["run", "auratown", "--seed", "42", "--log", dir, "--trace", "none", "--quiet", "--resume", "--snapshot-every", "1"]);
    expect(resumed.code).toBe(0);
    const whole = tempDir("diskfull-whole");
    expect((await runCli(["run", "auratown", "--seed", "42", "--log", whole, "--trace", "none", "--quiet"])).code).toBe(0);
    expect(logRecords(dir).map(withoutMetaLine)).toEqual(logRecords(whole).map(withoutMetaLine));
  });

  it("a sweep stops at the first episode the disk refuses, and the same command runs the rest later", async () => {
    const dir = tempDir("diskfull-sweep");
    const full = limited(40, ["sweep", "auratown", "--seeds", "1-3", "--log", dir, "--quiet"]);
    expect(full.status).toBe(2);
    expect(full.stderr).toContain("sweep stopped after 0 of 3 episodes finished");
    expect(full.stderr).toContain("auratown-s1-baseline");
    // one failure, not one per episode, each retried
    expect(readdirSync(dir)).toEqual(["auratown-s1-baseline"]);
    const rerun = await runCli(["sweep", "auratown", "--seeds", "1-3", "--log", dir, "--json"]);
    expect(rerun.code).toBe(0);
    expect((JSON.parse(rerun.out) as { ok: number }).ok).toBe(3);
    expect((await runCli(["verify", dir])).code).toBe(0);
  });

  it("a run stopped before its first record was whole resumes from the start", async () => {
    const dir = tempDir("empty-segment");
    mkdirSync(join(dir, "log"));
    writeFileSync(join(dir, "log", "000000000000.jsonl"), "");
    expect((await runCli(["run", "auratown", "--seed", "42", "--ticks", "3", "--log", dir, "--trace", "none", "--quiet", "--resume"])).code).toBe(0);
    expect((await runCli(["verify", dir])).code).toBe(0);
  });

  it("a snapshot the disk cannot take leaves no partial file and names the snapshot", () => {
    const dir = tempDir("diskfull-snap");
    const script = `import { createHash } from "node:crypto";
import { FileSnapshotStore } from ${JSON.stringify(join(repoRoot, "infra/snapshotStore.ts"))};
const store = new FileSnapshotStore(${JSON.stringify(dir)});
await store.put({ world: "w", episode: "e", seed: 1, condition: "c", config: {}, tick: 3, seq: 9, headHash: "0".repeat(64), stateHash: "a".repeat(64), parts: {}, actors: { big: Array.from({ length: 4000 }, (_, i) => createHash("sha256").update(String(i)).digest("base64")).join("") } });`;
    const r = spawnSync("bash", ["-c", `ulimit -f 16; exec "$0" --input-type=module -e "$1"`, process.execPath, script], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`could not store the snapshot of tick 3`);
    expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });
});
