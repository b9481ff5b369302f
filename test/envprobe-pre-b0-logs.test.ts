// Logs written before commit 7596a13 (b₀ = g₀, the calibration model, the paper's Oracle and Judge)
// must stay replayable: their headers hold the config of the schema of their time, which the
// world resolves with the defaults of that time (config.ts PRE_B0_DEFAULTS), while a partial
// --config still gets today's. The fixtures were written by that code (`git worktree add /tmp/old
// 7596a13^`, `run envprobe --seed 3 --config '{"world": …, "horizon": 8}'`), each with one of its
// snapshots (tick 4): the Judge of that code (the fixed critic, probes `judge:rho=…`, fresh fields
// skipped, guessed priors, the constant calibration) and its Oracle (only fields the plan depends on).
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { defaultConfig, isPreB0Config, LEGACY_CALIBRATION, PRE_B0_DEFAULTS } from "../actors/envprobe/config.ts";
import { envprobeWorld } from "../actors/envprobe/world.ts";
import { forkEpisode } from "../services/kernel/episodes.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { logRecords, repoRoot, tempDir } from "./helpers.ts";

const FIXTURES = [
  { name: "envprobe-pre-b0-objectstate-judge", condition: "envprobe-judge", why: "judge:rho=" },
  { name: "envprobe-pre-b0-graphnav-oracle", condition: "oracle", why: "mismatch d=" },
] as const;
const dirOf = (name: string) => join(repoRoot, "test/fixtures", name);
const headerConfig = (name: string) => (logRecords(dirOf(name))[0]!.payload as { config: unknown }).config;

/** A record as it compares across two logs (the meta line and hash chain aside). */
const same = (r: { type: string; from: string; to: unknown; tick: number; cause: unknown; payload: unknown }) => ({ type: r.type, from: r.from, to: r.to, tick: r.tick, cause: r.cause, payload: r.payload });

describe("envprobe logs written before 7596a13", () => {
  it.each(FIXTURES)("$name verifies and replays with today's code, as it ran", async (f) => {
    const dir = dirOf(f.name);
    const records = logRecords(dir);
    expect(records.some((r) => r.type === "envprobe.decided" && String((r.payload as { why: string }).why).startsWith(f.why))).toBe(true);
    const report = await verifyEpisode(dir);
    expect(report.ok, report.text).toBe(true);
    const replay = await replayEpisode(dir);
    replay.host.stop();
    expect(replay.lastTick).toBe(7);
    expect(replay.header.baseConfig).toMatchObject({ initialBeliefs: "guess", skipFresh: true, oracleNeedsDependency: true, legacy: "pre-b0", calibration: LEGACY_CALIBRATION });
  });

  // Tick 4: from the snapshot that code kept (its actors' parameters predate today's); tick 5: no
  // snapshot, the parent is replayed to it. Either way the child under the same condition is its parent.
  it.each(FIXTURES.flatMap((f) => [4, 5].map((at) => ({ ...f, at }))))("$name forks after tick $at under its condition into the same episode", async (f) => {
    const parent = dirOf(f.name);
    const child = join(tempDir("pre-b0-fork"), "child");
    await forkEpisode({ parent, atTick: f.at, condition: f.condition, dir: child, trace: { exporter: "none" }, fsync: "never" });
    const report = await verifyEpisode(child);
    expect(report.ok, report.text).toBe(true);
    const mine = logRecords(child).filter((r) => r.type !== "episode.forked");
    const theirs = logRecords(parent).filter((r) => r.tick > f.at);
    expect(mine.map(same)).toEqual(theirs.map(same));
  }, 30_000);

  it("tells a header of that code from a --config and from a header of today's", () => {
    for (const f of FIXTURES) expect(isPreB0Config(headerConfig(f.name))).toBe(true);
    // A header written today (every key of today's schema), and partial configs a user gives.
    expect(isPreB0Config(envprobeWorld.resolveConfig({ world: "tooldag" }))).toBe(false);
    const old = headerConfig(FIXTURES[0].name) as Record<string, unknown>;
    const { policy: _policy, ...withoutPolicy } = old;
    for (const partial of [{}, { world: "tooldag", horizon: 8 }, withoutPolicy, { calibration: old.calibration }]) {
      expect(isPreB0Config(partial)).toBe(false);
      const c = envprobeWorld.resolveConfig(partial);
      expect({ initialBeliefs: c.initialBeliefs, skipFresh: c.skipFresh, oracleNeedsDependency: c.oracleNeedsDependency, legacy: c.legacy }).toEqual({
        initialBeliefs: defaultConfig.initialBeliefs, skipFresh: defaultConfig.skipFresh, oracleNeedsDependency: defaultConfig.oracleNeedsDependency, legacy: undefined,
      });
    }
    // Old calibration keys given in a --config keep today's driftScale (a partial calibration).
    expect(envprobeWorld.resolveConfig({ calibration: old.calibration }).calibration.driftScale).toBe(defaultConfig.calibration.driftScale);
    // A key added since, or one the old schema did not have, makes it not that code's header.
    expect(isPreB0Config({ ...old, skipFresh: true })).toBe(false);
    expect(isPreB0Config({ ...old, calibration: { ...(old.calibration as object), driftScale: 0 } })).toBe(false);
    // A --config may ask for that code's defaults.
    expect(envprobeWorld.resolveConfig({ legacy: "pre-b0" })).toEqual(PRE_B0_DEFAULTS);
  });

  it("condition envprobe-judge is the old fixed critic only under the pre-b0 semantics", () => {
    const old = envprobeWorld.resolveConfig(headerConfig(FIXTURES[0].name));
    expect(envprobeWorld.applyCondition(old, "envprobe-judge").policy).toBe("envprobe-judge");
    expect(() => envprobeWorld.applyCondition(envprobeWorld.resolveConfig({}), "envprobe-judge")).toThrow(/model critic/);
  });
});
