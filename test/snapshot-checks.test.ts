// Snapshots are used only when their content hashes to their key (issue 27): a file store's
// snapshot renamed onto another key is refused as the JetStream store refuses one, and
// `verify --snapshots` checks every snapshot of an episode, naming each damaged one (exit 3).
import { describe, expect, it } from "vitest";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SnapshotDamaged } from "../events/errors.ts";
import { FileSnapshotStore, SNAPSHOT_FILE_VERSION, snapshotFileText } from "../infra/snapshotStore.ts";
import { brotliCompressSync } from "node:zlib";
import { runCli, tempDir } from "./helpers.ts";

const keysIn = (dir: string): string[] => readdirSync(dir).filter((n) => /^[0-9a-f]+\.json$/.test(n)).map((n) => n.slice(0, -5)).sort();

describe("snapshot checks", () => {
  const work = tempDir("snapshot-checks");

  it("verify --snapshots passes intact snapshots and names each damaged one (exit 3)", async () => {
    const dir = join(work, "checked");
    expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "6", "--snapshot-every", "2", "--log", dir, "--quiet"])).code).toBe(0);
    const snaps = join(dir, "snapshots");
    const keys = keysIn(snaps);
    expect(keys.length).toBeGreaterThanOrEqual(3);

    const intact = await runCli(["verify", dir, "--snapshots", "--json"]);
    expect(intact.code, intact.err).toBe(0);
    expect((JSON.parse(intact.out) as { notes: string[] }).notes).toContain(`${keys.length} snapshots checked: each hashes to its key`);

    // One altered in place (a hashed field), one overwritten by another tick's snapshot (valid, but not its key's state).
    const [a, b, c] = keys as [string, string, string];
    const altered = snapshotFileText(join(snaps, `${a}.json`));
    expect(altered).toMatch(/"nearbyCount":\d+/);
    writeFileSync(join(snaps, `${a}.json`), altered.replace(/"nearbyCount":(\d+)/, (_m, n: string) => `"nearbyCount":${Number(n) + 1}`));
    copyFileSync(join(snaps, `${c}.json`), join(snaps, `${b}.json`));

    const damaged = await runCli(["verify", dir, "--snapshots", "--json"]);
    expect(damaged.code, damaged.err).toBe(3);
    const report = JSON.parse(damaged.out) as { exitCode: number; problem: { kind: string; details: string[] } };
    expect(report.exitCode).toBe(3);
    expect(report.problem.kind).toBe("damaged");
    expect(report.problem.details).toEqual([
      `${join(snaps, `${a}.json`)}: does not hash to its key: it was altered`,
      `${join(snaps, `${b}.json`)}: holds the snapshot of state ${c}, not ${b}`,
    ]);
    // Without --snapshots the log alone is verified (it holds).
    expect((await runCli(["verify", dir, "--quiet"])).code).toBe(0);
    // A folder of episodes: each one's snapshots too.
    const tree = await runCli(["verify", work, "--snapshots", "--json", "--quiet"]);
    expect(tree.code, tree.err).toBe(3);
    expect((JSON.parse(tree.out) as { damaged: number; episodes: number })).toMatchObject({ damaged: 1, episodes: 1 });
    expect((await runCli(["verify", work, "--json", "--quiet"])).code).toBe(0);
  }, 120_000);

  it("the file store refuses a snapshot stored under another key, and resume stops on it (exit 3, naming the file)", async () => {
    const dir = join(work, "renamed");
    expect((await runCli(["run", "auratown", "--seed", "4", "--ticks", "6", "--snapshot-every", "2", "--log", dir, "--quiet"])).code).toBe(0);
    const snaps = join(dir, "snapshots");
    const latest = (JSON.parse(readFileSync(join(snaps, "latest.json"), "utf8")) as { key: string }).key;
    const other = keysIn(snaps).find((k) => k !== latest)!;
    copyFileSync(join(snaps, `${other}.json`), join(snaps, `${latest}.json`));

    const error = await new FileSnapshotStore(snaps).get(latest).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotDamaged);
    expect((error as SnapshotDamaged).where).toBe(join(snaps, `${latest}.json`));
    expect((error as SnapshotDamaged).exitCode).toBe(3);

    const resumed = await runCli(["run", "auratown", "--seed", "4", "--ticks", "6", "--snapshot-every", "2", "--log", dir, "--resume", "--quiet"]);
    expect(resumed.code, resumed.err).toBe(3);
    expect(resumed.err).toContain(`damaged snapshot: ${join(snaps, `${latest}.json`)}: holds the snapshot of state ${other}, not ${latest}`);
  }, 120_000);

  it("snapshot files are compressed (version 2); version-1 files (plain JSON) still load; a damaged or altered compressed file is refused", async () => {
    const dir = join(work, "versions");
    expect((await runCli(["run", "auratown", "--seed", "5", "--ticks", "8", "--snapshot-every", "2", "--log", dir, "--quiet"])).code).toBe(0);
    const snaps = join(dir, "snapshots");
    const [a, b, c, d] = keysIn(snaps) as [string, string, string, string];
    expect(d).toBeDefined();
    const file = (key: string) => join(snaps, `${key}.json`);
    const header = `probetown-snapshot ${SNAPSHOT_FILE_VERSION} br\n`;
    for (const key of [a, b, c, d]) {
      const bytes = readFileSync(file(key));
      expect(bytes.subarray(0, header.length).toString("latin1")).toBe(header);
      // A tenth or so of the text: a third of the log's bytes before, for a short run.
      expect(bytes.length).toBeLessThan(0.25 * Buffer.byteLength(snapshotFileText(file(key))));
    }
    // Version 1, as runs before wrote it: the JSON text itself. It loads, and hashes to its key.
    const text = snapshotFileText(file(a));
    writeFileSync(file(a), text);
    expect((await new FileSnapshotStore(snaps).get(a))?.stateHash).toBe(a);
    const intact = await runCli(["verify", dir, "--snapshots", "--json"]);
    expect(intact.code, intact.err).toBe(0);
    // Version 2 with a hashed field altered (recompressed), with its body damaged, and a version this build does not read.
    writeFileSync(file(b), Buffer.concat([Buffer.from(header), brotliCompressSync(snapshotFileText(file(b)).replace(/"nearbyCount":(\d+)/, (_m, n: string) => `"nearbyCount":${Number(n) + 1}`))]));
    const damagedBody = readFileSync(file(c));
    damagedBody.fill(0x55, header.length + 10, header.length + 40);
    writeFileSync(file(c), damagedBody);
    writeFileSync(file(d), Buffer.concat([Buffer.from("probetown-snapshot 9 zstd\n"), readFileSync(file(d)).subarray(header.length)]));
    const damaged = await runCli(["verify", dir, "--snapshots", "--json"]);
    expect(damaged.code, damaged.err).toBe(3);
    const details = (JSON.parse(damaged.out) as { problem: { details: string[] } }).problem.details;
    expect(details).toHaveLength(3);
    expect(details).toContain(`${file(b)}: does not hash to its key: it was altered`);
    expect(details.find((line) => line.startsWith(`${file(c)}: `))).toBeDefined();
    expect(details).toContain(`${file(d)}: a snapshot file of version 9 (zstd), which this probetown does not read (it reads version 1, plain JSON, and version 2, brotli)`);
    const error = await new FileSnapshotStore(snaps).get(c).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotDamaged);
  }, 120_000);
});
