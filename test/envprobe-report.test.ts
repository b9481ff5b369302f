// report-envprobe's Table 1 Bonferroni adjustment: the label states the m its p-values were
// multiplied by, which is the number of the family's comparisons the episodes allow (a partial
// sweep has fewer than the paper's 6, and says which are missing); report.json carries the same m.
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EpisodeMetrics } from "../services/envprobe/metrics.ts";
import { loadEpisodes, writeReport, type EnvprobeReport } from "../services/envprobe/report.ts";
import { UsageError } from "../services/kernel/replay.ts";
import { tempDir } from "./helpers.ts";

/** Synthetic metrics: each policy's A_H differs a little by seed, so every p is finite and not 1. */
function episodes(worlds: readonly string[], policies: readonly string[], seeds = 30): EpisodeMetrics[] {
  return worlds.flatMap((world) =>
    policies.flatMap((policy, k) =>
      Array.from({ length: seeds }, (_, seed) => {
        const accuracy = 0.7 + 0.01 * k + ((seed * (k + 3)) % 7) * 0.01;
        return {
          world, regime: "medium", policy, seed, horizon: 30, budget: 7, steps: 30, success: (seed + k) % 3 === 0, accuracy,
          procedural: world === "tooldag" ? accuracy : null, spatial: world === "tooldag" ? null : accuracy,
          probes: 2, useful: 1, collapse: null, actionCollapse: null, highConfidence: 100, confidentWrong: 10, wrongBeliefs: 40, mutations: 3,
        };
      }),
    ),
  );
}

function report(input: EpisodeMetrics[]): { json: EnvprobeReport; md: string } {
  const dir = tempDir("envprobe-report");
  writeReport(input, dir, { iterations: 300 });
  return { json: JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as EnvprobeReport, md: readFileSync(join(dir, "report.md"), "utf8") };
}

describe("report-envprobe: Table 1's Bonferroni family", () => {
  it("a sweep of some policies adjusts by the comparisons it has, says that m, and names the paper's family of 6 and what is missing", () => {
    const { json, md } = report(episodes(["tooldag", "objectstate"], ["envprobe-simple", "periodic", "no-probe"]));
    const rows = json.table1.medium!;
    expect(rows.map((c) => c.label)).toEqual(["envprobe-simple vs periodic (procedural)", "envprobe-simple vs periodic (all)", "envprobe-simple vs periodic (spatial)"]);
    for (const c of rows) expect(c.pBonferroni).toBeCloseTo(Math.min(1, 3 * c.p), 12);
    expect(rows.some((c) => c.pBonferroni! < 1)).toBe(true);
    expect(json.family.medium).toEqual({
      m: 3,
      paperM: 6,
      missing: [
        { label: "envprobe-cd vs envprobe-simple (procedural)", why: "envprobe-cd not run on tooldag" },
        { label: "envprobe-minus-u vs envprobe-simple (procedural)", why: "envprobe-minus-u not run on tooldag" },
        { label: "no-probe vs self-uncertainty (spatial)", why: "self-uncertainty not run on objectstate or graphnav" },
      ],
    });
    expect(md).not.toContain("m = 6");
    expect(md).not.toContain("(the 6-comparison family)");
    expect(md).toContain("### Table 1: A_H comparisons (3 of the paper's 6-comparison family)");
    expect(md).toContain("| p (Bonferroni, m = 3) |");
    expect(md).toMatch(/The paper's Bonferroni family has 6 comparisons .*min\(1, 3·p\), not min\(1, 6·p\)\. Missing: envprobe-cd vs envprobe-simple \(procedural\) \(envprobe-cd not run on tooldag\); .*no-probe vs self-uncertainty \(spatial\)/);
    // The column holds the p-values report.json has.
    const line = md.split("\n").find((l) => l.startsWith("| envprobe-simple vs periodic (procedural) |"))!;
    const shown = line.split(" | ")[7]!;
    const want = rows[0]!.pBonferroni!;
    expect(shown).toBe(want < 0.001 ? "< 0.001" : want.toFixed(3));
  });

  it("the whole family: m = 6, nothing missing", () => {
    const { json, md } = report(episodes(["tooldag", "objectstate", "graphnav"], ["envprobe-simple", "periodic", "envprobe-cd", "envprobe-minus-u", "no-probe", "self-uncertainty"]));
    expect(json.family.medium).toEqual({ m: 6, paperM: 6, missing: [] });
    for (const c of json.table1.medium!) expect(c.pBonferroni).toBeCloseTo(Math.min(1, 6 * c.p), 12);
    expect(md).toContain("### Table 1: A_H comparisons (the 6-comparison family)");
    expect(md).toContain("| p (Bonferroni, m = 6) |");
    expect(md).not.toContain("The paper's Bonferroni family has");
  });

  it("no comparison of the family: says so instead of an empty table", () => {
    const { json, md } = report(episodes(["graphnav"], ["random", "oracle"]));
    expect(json.family.medium!.m).toBe(0);
    expect(json.table1.medium).toEqual([]);
    expect(md).toContain("None of them could be made on these episodes, so there is nothing to adjust.");
    expect(md).not.toContain("p (Bonferroni");
  });
});

describe("report-envprobe: a metrics file's entries are checked before they are counted", () => {
  const file = (entries: unknown[]): string => {
    const path = join(tempDir("envprobe-metrics-file"), "grid.json");
    writeFileSync(path, JSON.stringify({ cells: [], episodeMetrics: entries }));
    return path;
  };
  const good = episodes(["tooldag"], ["envprobe-simple", "periodic"], 3);

  it("reads a well-formed file", async () => {
    expect(await loadEpisodes(file(good))).toEqual(good);
  });

  it("refuses a hand-edited, truncated, repeated or empty entry list (usage error naming the entry and field) instead of averaging NaN or 'undefined' into the tables", async () => {
    const cases: [unknown[], RegExp][] = [
      [[{ ...good[0], accuracy: "0.9" }, ...good.slice(1)], /episodeMetrics\[0\] is not an episode's metrics: Expected number at \["accuracy"\]/],
      [[...good.slice(0, 2), (({ world: _w, ...rest }) => rest)(good[2]!)], /episodeMetrics\[2\] is not an episode's metrics: Missing key at \["world"\]/],
      [[null, ...good], /episodeMetrics\[0\] is not an episode's metrics: Expected object/],
      [[{ ...good[0], highConfidence: -3 }], /episodeMetrics\[0\] is not an episode's metrics: .*highConfidence/],
      [[...good, good[4]], /two episodes of tooldag-medium periodic seed 1: .*episodeMetrics\[4\] and .*episodeMetrics\[6\]; a report counts each \(world, regime, policy, seed\) once/],
      [[], /episodeMetrics is empty: no episodes to report on/],
    ];
    for (const [entries, message] of cases) {
      const error = await loadEpisodes(file(entries)).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(message);
    }
  });
});
