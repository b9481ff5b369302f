// EnvProbe determinism: the same (world, seed, regime, policy) gives the same log; the direct
// sweep driver writes exactly the log `runEpisode` writes; `verify` replays both; and the
// exogenous mutation stream is the same for every policy on a seed (common random numbers).
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { GRID_POLICIES } from "../actors/envprobe/config.ts";
import { KINDS } from "../actors/envprobe/kinds/index.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { logRecords, tempDir } from "./helpers.ts";
import { recordBody, type LogRecord } from "../events/record.ts";

describe("envprobe determinism", () => {
  it("the same world, seed, regime and policy give identical logs", () => {
    for (const world of KINDS) {
      for (const policy of ["random", "envprobe-simple", "oracle"]) {
        const a = runDirect({ config: { world, regime: "high" }, policy, seed: 11 });
        const b = runDirect({ config: { world, regime: "high" }, policy, seed: 11 });
        expect(b.lines).toEqual(a.lines);
        expect(b.stateHash).toBe(a.stateHash);
      }
    }
  });

  it("the direct driver writes runEpisode's log record for record, and verify replays it", async () => {
    const work = tempDir("envprobe-eq");
    for (const world of KINDS) {
      const config = { world, regime: "medium" };
      for (const policy of ["envprobe-simple", "oracle-tw", "random"]) {
        const direct = runDirect({ config, policy, seed: 5, dir: join(work, `d-${world}-${policy}`) });
        await runEpisode({ world: "envprobe", seed: 5, condition: policy, config, dir: join(work, `r-${world}-${policy}`), trace: { exporter: "none" }, snapshotEvery: 0, fsync: "never" });
        const viaSequencer = logRecords(join(work, `r-${world}-${policy}`));
        expect(viaSequencer.map((r) => r.hash)).toEqual(direct.lines.map((l) => (JSON.parse(l) as { hash: string }).hash));
        expect(direct.lines.map((l) => recordBody(JSON.parse(l) as LogRecord))).toEqual(viaSequencer.map(recordBody));
        const report = await verifyEpisode(join(work, `d-${world}-${policy}`));
        expect(report.ok, report.text).toBe(true);
        expect(report.ticks).toBe(30);
      }
    }
  });

  it("a fork of a sweep log with its own policy reproduces the rest of the log; with another policy it verifies", async () => {
    const work = tempDir("envprobe-fork");
    const parent = join(work, "parent");
    const direct = runDirect({ config: { world: "graphnav", regime: "high" }, policy: "envprobe-simple", seed: 4, dir: parent });
    await forkEpisode({ parent, atTick: 5, condition: "envprobe-simple", dir: join(work, "same"), trace: { exporter: "none" } });
    const child = logRecords(join(work, "same"));
    expect(child[0]!.type).toBe("episode.forked");
    const rest = direct.lines.map((l) => JSON.parse(l) as LogRecord).filter((r) => r.seq > child[0]!.seq);
    expect(child.slice(1).map((r) => [r.seq, r.type, JSON.stringify(r.payload)])).toEqual(rest.map((r) => [r.seq, r.type, JSON.stringify(r.payload)]));
    await forkEpisode({ parent, atTick: 5, condition: "oracle-tw", dir: join(work, "other"), trace: { exporter: "none" } });
    const report = await verifyEpisode(join(work, "other"));
    expect(report.ok, report.text).toBe(true);
  });

  it("every policy on one seed faces the same exogenous lock and edge flips (common random numbers)", () => {
    for (const world of ["objectstate", "graphnav"] as const) {
      for (const seed of [1, 2, 3]) {
        // Door and edge flips do not depend on the agent (a toggle either way): the steps and
        // fields that flip must be equal across policies over the steps both episodes ran.
        const flips = GRID_POLICIES.map((policy) => {
          const r = runDirect({ config: { world, regime: "high" }, policy, seed });
          const out: string[] = [];
          let steps = 0;
          for (const line of r.lines) {
            const rec = JSON.parse(line) as { type: string; payload: { t: number; changes?: [number, string, string][] } };
            if (rec.type === "envprobe.stepped") steps = rec.payload.t;
            if (rec.type !== "envprobe.mutated") continue;
            for (const [field, from, to] of rec.payload.changes!) if ((from === "open" || from === "locked") && (to === "open" || to === "locked")) out.push(`${rec.payload.t}:${field}`);
          }
          return { steps, out };
        });
        const common = Math.min(...flips.map((f) => f.steps));
        const upTo = (f: { out: string[] }) => f.out.filter((x) => Number(x.split(":")[0]) <= common);
        expect(common).toBeGreaterThan(0);
        for (const f of flips) expect(upTo(f)).toEqual(upTo(flips[0]!));
        expect(upTo(flips[0]!).length).toBeGreaterThan(0);
      }
    }
  });

  it("the mutation stream never shifts: the same draws apply whatever the agent does (identical actions → identical mutations)", () => {
    // A condition that never probes (EnvProbe-Simple with an unreachable threshold) acts like
    // No-Probe, so every mutation event must be identical: the streams are not condition-named.
    for (const world of KINDS) {
      const a = runDirect({ config: { world, regime: "high" }, policy: "no-probe", seed: 9 });
      const b = runDirect({ config: { world, regime: "high", rhoThreshold: 99 }, policy: "envprobe-simple", seed: 9 });
      const muts = (lines: readonly string[]) => lines.filter((l) => l.includes('"type":"envprobe.mutated"')).map((l) => (JSON.parse(l) as { payload: unknown }).payload);
      expect(muts(b.lines)).toEqual(muts(a.lines));
    }
  });
});
