// Log format 2 (events/compactLog.ts): an EnvProbe episode written compact holds the same records
// and hash chain as its version-1 log, verifies and replays to the same state hashes, is read by the
// metrics and the keep check alike, and its damage is caught naming file, line and seq (exit 3).
import { describe, expect, it } from "vitest";
import { cpSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir } from "./helpers.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import { metricsOfLog } from "../services/envprobe/metrics.ts";
import { keptMetrics } from "../services/envprobe/keep.ts";
import { canonicalJson } from "../events/canonical.ts";
import { CompactCodec, commitStateHash, COMPACT_LOG, decodeCompactText, SHORT_HASH } from "../events/compactLog.ts";
import { recordBody, sealedLine, type LogRecord } from "../events/record.ts";
import { openFileEventStoreForAppend, peekLog, readLog } from "../infra/fileEventStore.ts";
import { stateHashOf } from "../services/distributed/actorHost.ts";
import { envprobeWorld } from "../actors/envprobe/world.ts";
import { registerWorld } from "../services/kernel/worlds.ts";
import envprobe from "../services/envprobe/module.ts";

registerWorld(envprobe);

const segment = (dir: string) => join(dir, "log", "000000000000.jsonl");
const withoutMeta = ({ meta: _m, ...rest }: LogRecord) => rest;

/** The same episode written in both formats. */
function both(world: string, regime: string, policy: string, seed: number) {
  const work = tempDir("compact-log");
  const config = { world, regime };
  const v1 = join(work, "v1");
  const v2 = join(work, "v2");
  const a = runDirect({ config, policy, seed, dir: v1, logFormat: 1 });
  const b = runDirect({ config, policy, seed, dir: v2 });
  return { work, v1, v2, a, b };
}

describe("compact EnvProbe logs (format 2)", () => {
  it("decode to the version-1 log's records, line for line, with the same hash chain", () => {
    for (const world of ["objectstate", "tooldag", "graphnav"]) {
      for (const policy of ["no-probe", "envprobe-simple", "random", "oracle"]) {
        const { v1, v2, a, b } = both(world, "high", policy, 7);
        expect(b.stateHash).toBe(a.stateHash);
        const text1 = readFileSync(segment(v1), "utf8");
        const text2 = readFileSync(segment(v2), "utf8");
        // Several times smaller, and the default.
        expect(text2.length * 3).toBeLessThan(text1.length);
        const header = JSON.parse(text2.slice(0, text2.indexOf("\n"))) as LogRecord;
        expect(header.meta).toEqual({ log: COMPACT_LOG, probetown: expect.any(String) });
        const lines1 = text1.trimEnd().split("\n");
        const decoded = decodeCompactText(text2, true);
        expect(decoded.length).toBe(lines1.length);
        // Every record but the header (whose meta says the format) re-seals to the v1 line, byte for byte.
        decoded.forEach((r, i) => {
          if (i > 0) expect(sealedLine(r, recordBody(r))).toBe(lines1[i]);
        });
        // The file store's scan (what verify, replay, inspect and fork read) sees the same records.
        expect(readLog(join(v2, "log")).map(withoutMeta)).toEqual(readLog(join(v1, "log")).map(withoutMeta));
        // Only the last line keeps the whole hash.
        const last = text2.trimEnd().split("\n").at(-1)!;
        expect(last.endsWith(`"${decoded.at(-1)!.hash}"]`)).toBe(true);
        expect(text2.split("\n")[2]!.endsWith(`"${decoded[2]!.hash.slice(0, SHORT_HASH)}"]`)).toBe(true);
      }
    }
  });

  it("verify and replay: the same tick state hashes as the version-1 log; metrics, peek and the keep check read it", async () => {
    const { work, v1, v2 } = both("graphnav", "medium", "envprobe-simple", 3);
    for (const dir of [v1, v2]) {
      const r = await runCli(["verify", dir, "--json"]);
      expect(r.code, r.err).toBe(0);
    }
    const commits = (dir: string) => readLog(join(dir, "log")).filter((r) => r.type === "tick.committed").map((r) => (r.payload as { stateHash: string }).stateHash);
    expect(commits(v2)).toEqual(commits(v1));
    expect(commits(v2)).toHaveLength(30);
    // The decoder's state hash is the kernel's.
    const c = readLog(join(v2, "log")).find((r) => r.type === "tick.committed")!;
    const p = c.payload as { parts: Record<string, string> };
    expect(commitStateHash(c.tick, p.parts)).toBe(stateHashOf(c.tick, p.parts));
    // A fork of the compact log (its child is written as version 1, chained to the parent's v1 hash) verifies.
    const child = join(work, "child");
    const fork = await runCli(["fork", v2, "--at", "5", "--condition", "no-probe", "--log", child, "--trace", "none"]);
    expect(fork.code, fork.err).toBe(0);
    expect((await runCli(["verify", child])).code).toBe(0);
    // diff of the two formats: the same episode.
    const diff = await runCli(["diff", v1, v2]);
    expect(diff.code, diff.err).toBe(0);
    expect(diff.out).toContain("IDENTICAL");
    expect(metricsOfLog(v2)).toEqual(metricsOfLog(v1));
    const ends = peekLog(join(v2, "log"));
    expect(ends.last?.type).toBe("tick.committed");
    expect(ends.lastTick).toBe(29);
    const expected = { episode: "envprobe-s3-envprobe-simple", seed: 3, policy: "envprobe-simple", config: canonicalJson(envprobeWorld.resolveConfig({ world: "graphnav", regime: "medium" })) };
    expect(keptMetrics(v2, expected)).toEqual(metricsOfLog(v1));
    // Cut short after a commit: no longer kept (its last line keeps 8 digits).
    const lines = readFileSync(segment(v2), "utf8").trimEnd().split("\n");
    const cut = join(work, "cut");
    cpSync(v2, cut, { recursive: true });
    writeFileSync(segment(cut), `${lines.slice(0, 61).join("\n")}\n`);
    expect(keptMetrics(cut, expected)).toBeNull();
    // Nothing is appended to a compact log: it is refused (exit 2), not mixed with version-1 lines.
    let refused: unknown = null;
    try {
      openFileEventStoreForAppend(join(v2, "log"), { episode: "envprobe-s3-envprobe-simple" });
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ _tag: "CompactLogReadOnly", exitCode: 2 });
    expect(statSync(segment(v2)).size).toBe(lines.join("\n").length + 1);
  });

  it("a damaged compact record fails verify with exit 3, naming the file, line and seq", async () => {
    const { work, v2 } = both("tooldag", "medium", "envprobe-cd", 0);
    const lines = readFileSync(segment(v2), "utf8").trimEnd().split("\n");
    const damage = async (label: string, edit: (lines: string[]) => string[]) => {
      const dir = join(work, label);
      cpSync(v2, dir, { recursive: true });
      writeFileSync(segment(dir), `${edit([...lines]).join("\n")}\n`);
      const r = await runCli(["verify", dir]);
      expect(r.code, r.err).toBe(3);
      return `${r.out}${r.err}`;
    };
    const file = join(work, "value", "log", "000000000000.jsonl");
    // A value changed (line 9 holds seq 8, a decision): its 8 digits no longer match.
    const at = 8;
    const changed = await damage("value", (ls) => ls.map((l, i) => (i === at ? l.replace(/,(\d+),"c\+d/, (_m, t: string) => `,${Number(t) + 1},"c+d`) : l)));
    expect(changed).toContain(`${file}: seq 8 (line 9): hash mismatch`);
    // Respaced: the record holds, its text is not what was written.
    const respaced = await damage("respaced", (ls) => ls.map((l, i) => (i === 9 ? l.replace(/^\[(\d+),/, "[$1, ") : l)));
    expect(respaced).toContain("seq 9 (line 10): the line is not the text its record was encoded as");
    // Not JSON.
    expect(await damage("garbage", (ls) => ls.map((l, i) => (i === 12 ? "garbage" : l)))).toContain("seq 12 (line 13): not valid JSON");
    // A line lost: the chain breaks on the next one.
    expect(await damage("lost", (ls) => ls.filter((_l, i) => i !== 20))).toMatch(/seq 20 \(line 21\): hash mismatch/);
    // Cut short: the last line keeps 8 digits, not the whole hash.
    expect(await damage("cut", (ls) => ls.slice(0, 50))).toContain("seq 49 (line 50): the log ends on a line that keeps 8 digits of its hash");
    // A commit's part digest altered: caught on its line, though its state hash is not written.
    const commit = lines.findIndex((l, i) => i > 0 && l.startsWith("[5,"));
    expect(await damage("part", (ls) => ls.map((l, i) => (i === commit ? l.replace(/^\[5,"./, '[5,"z') : l)))).toContain(`seq ${commit} (line ${commit + 1}): hash mismatch`);
  });

  it("sweep envprobe writes format 2 by default and version 1 with --log-format 1; both verify, report and are kept alike", async () => {
    const work = tempDir("compact-sweep");
    const args = ["sweep", "envprobe", "--worlds", "objectstate,graphnav", "--policies", "no-probe,envprobe-simple", "--regimes", "low", "--seeds", "0-1", "--json"];
    const r2 = await runCli([...args, "--log", join(work, "g2")]);
    const r1 = await runCli([...args, "--log", join(work, "g1"), "--log-format", "1"]);
    expect(r2.code, r2.err).toBe(0);
    expect(r1.code, r1.err).toBe(0);
    const cells = (out: string) => (JSON.parse(out) as { cells: unknown }).cells;
    expect(cells(r2.out)).toEqual(cells(r1.out));
    const one = (g: string) => readFileSync(join(work, g, "graphnav-low", "envprobe-simple", "s1", "log", "000000000000.jsonl"), "utf8");
    expect(one("g2").split("\n")[1]!.startsWith("[")).toBe(true);
    expect(one("g1").split("\n")[1]!.startsWith("{")).toBe(true);
    for (const g of ["g1", "g2"]) {
      const v = await runCli(["verify", join(work, g)]);
      expect(v.code, v.err).toBe(0);
      const rep = await runCli(["report-envprobe", join(work, g), "--out", join(work, `report-${g}`), "--bootstrap", "200", "--json"]);
      expect(rep.code, rep.err).toBe(0);
    }
    expect(readFileSync(join(work, "report-g2", "report.json"), "utf8")).toBe(readFileSync(join(work, "report-g1", "report.json"), "utf8"));
    // Run again into its own --log: every compact log is kept.
    const again = await runCli([...args, "--log", join(work, "g2")]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ kept: 8, ran: 0 });
    // --log-format needs --log, and is 1 or 2.
    expect((await runCli([...args, "--log-format", "1"])).code).toBe(2);
    expect((await runCli([...args, "--log", join(work, "g3"), "--log-format", "3"])).code).toBe(2);
  }, 300_000); // ten commands, each starting worker threads: 90 s on a machine at load 14

  it("a rerun into the --log keeps intact compact logs and reruns the rest to the same bytes; report-envprobe refuses a damaged one naming file and line", async () => {
    const work = tempDir("compact-rerun");
    const grid = ["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe,envprobe-simple", "--regimes", "medium", "--seeds", "0-2"];
    const whole = join(work, "whole");
    const cut = join(work, "cut");
    expect((await runCli([...grid, "--log", whole, "--quiet"])).code).toBe(0);
    expect((await runCli([...grid, "--log", cut, "--quiet"])).code).toBe(0);
    const seg = (root: string, key: string) => join(root, key, "log", "000000000000.jsonl");
    const text = readFileSync(seg(cut, "graphnav-medium/no-probe/s0"), "utf8");
    writeFileSync(seg(cut, "graphnav-medium/no-probe/s0"), text.slice(0, 3000)); // torn
    const lines = readFileSync(seg(cut, "graphnav-medium/no-probe/s1"), "utf8").trimEnd().split("\n");
    writeFileSync(seg(cut, "graphnav-medium/no-probe/s1"), `${lines.slice(0, 40).join("\n")}\n`); // stopped after a line keeping 8 digits
    const last = readFileSync(seg(cut, "graphnav-medium/envprobe-simple/s2"), "utf8").trimEnd().split("\n");
    last[last.length - 1] = last.at(-1)!.replace(/"([0-9a-f])([0-9a-f]{63})"\]$/, (_m, d: string, rest: string) => `"${d === "0" ? "1" : "0"}${rest}"]`); // its whole hash altered
    writeFileSync(seg(cut, "graphnav-medium/envprobe-simple/s2"), `${last.join("\n")}\n`);
    const report = await runCli(["report-envprobe", cut, "--out", join(work, "report")]);
    expect(report.code).toBe(3);
    expect(report.err).toContain(`${seg(cut, "graphnav-medium/no-probe/s0")}: line`);
    const again = await runCli([...grid, "--log", cut, "--json"]);
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ episodes: 6, kept: 3, ran: 3 });
    for (const key of ["graphnav-medium/no-probe/s0", "graphnav-medium/no-probe/s1", "graphnav-medium/envprobe-simple/s2", "graphnav-medium/envprobe-simple/s0"]) {
      expect(readFileSync(seg(cut, key), "utf8"), key).toBe(readFileSync(seg(whole, key), "utf8"));
    }
  }, 300_000);

  it("the codec refuses a shape written out again and a hash of another length", () => {
    const { v2 } = both("objectstate", "low", "periodic", 1);
    const text = readFileSync(segment(v2), "utf8");
    const lines = text.trimEnd().split("\n");
    const header = JSON.parse(lines[0]!) as LogRecord;
    const records = decodeCompactText(text, true);
    // A line that refers to a shape, written with the shape spelled out again instead: refused.
    const parsed = lines.map((l, i) => (i === 0 ? null : (JSON.parse(l) as unknown[])));
    const definitions = parsed.filter((a) => a !== null && Array.isArray(a[0])).map((a) => a![0]);
    const ref = parsed.findIndex((a) => a !== null && typeof a[0] === "number");
    const codec = new CompactCodec(header);
    for (let i = 1; i < ref; i++) codec.decode(lines[i]!);
    const spelled = JSON.stringify([definitions[parsed[ref]![0] as number], ...parsed[ref]!.slice(1)]);
    expect(() => codec.decode(spelled)).toThrow(/not the text its record was encoded as/);
    const other = new CompactCodec(header);
    expect(() => other.decode(lines[1]!.replace(/"([0-9a-f]{8})"\]$/, '"$1a"]'))).toThrow(/a hash of 9 digits/);
    expect(records.length).toBe(lines.length);
  });
});
