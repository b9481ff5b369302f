// The report's "paper findings" verdicts follow the data: the same claim is reproduced, reversed or
// a tie depending only on the episodes it is given (synthetic metrics, so each case is exact).
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import type { EpisodeMetrics } from "../services/envprobe/metrics.ts";
import { writeReport, type Finding } from "../services/envprobe/report.ts";
import { tempDir } from "./helpers.ts";

type Shape = { accuracy: number; success: (seed: number) => boolean; probes?: number; hc?: number; cw?: number };

function episodes(world: string, shapes: Record<string, Shape>, seeds = 40): EpisodeMetrics[] {
  const out: EpisodeMetrics[] = [];
  for (const [policy, s] of Object.entries(shapes)) {
    for (let seed = 0; seed < seeds; seed++) {
      // A small seed-dependent wobble shared by every policy keeps the pairs realistic and the CIs finite.
      const accuracy = Math.min(1, Math.max(0, s.accuracy + ((seed % 5) - 2) * 0.01 + (policy.length % 3) * 0.001 * ((seed % 2) - 0.5)));
      out.push({
        world, regime: "medium", policy, seed, horizon: 30, budget: 7, steps: 30, success: s.success(seed), accuracy,
        procedural: world === "tooldag" ? accuracy : null, spatial: world === "tooldag" ? null : accuracy,
        probes: s.probes ?? 0, useful: 0, collapse: null, actionCollapse: null, highConfidence: s.hc ?? 100, confidentWrong: s.cw ?? 10, wrongBeliefs: 40, mutations: 3,
      });
    }
  }
  return out;
}

const findingsOf = (input: EpisodeMetrics[]): readonly Finding[] => writeReport(input, tempDir("findings"), { iterations: 500 }).findings;
const verdict = (fs: readonly Finding[], claim: RegExp, stratum: string) => fs.find((f) => claim.test(f.claim) && f.stratum === stratum)?.verdict;

describe("EnvProbe report: the paper's findings", () => {
  it("reports each claim as the episodes say: reproduced, partly, not reproduced, or not run", () => {
    const always = () => true;
    const tooldag = episodes("tooldag", {
      "envprobe-cd": { accuracy: 0.9, success: always, probes: 4 },
      "envprobe-simple": { accuracy: 0.9, success: always, probes: 4 },
      periodic: { accuracy: 0.85, success: (s) => s % 3 === 0, probes: 7 },
      "self-uncertainty": { accuracy: 0.7, success: always, probes: 0, hc: 100, cw: 40 },
      "no-probe": { accuracy: 0.7, success: always },
    });
    const graphnav = episodes("graphnav", {
      "envprobe-simple": { accuracy: 0.8, success: always, probes: 4 },
      periodic: { accuracy: 0.8, success: always, probes: 7 },
      "self-uncertainty": { accuracy: 0.85, success: always, probes: 3 },
      "no-probe": { accuracy: 0.75, success: always },
    });
    const found = findingsOf([...tooldag, ...graphnav]);
    expect(verdict(found, /Structural/, "procedural")).toBe("reproduced");
    expect(verdict(found, /uncertainty-only/, "procedural")).toBe("reproduced");
    expect(verdict(found, /uncertainty-only/, "spatial")).toBe("not reproduced");
    expect(verdict(found, /trades task success/, "procedural")).toBe("reproduced");
    // Periodic = No-Probe + 5 pp on graphnav, with no loss of task success: only half the claim.
    expect(verdict(found, /trades task success/, "spatial")).toBe("partly");
    const su = found.find((f) => /uncertainty-only/.test(f.claim) && f.stratum === "procedural")!;
    expect(su.evidence).toMatch(/Pr\(wrong \| conf ≥ 0\.7\) 0\.400, Pr\(conf ≥ 0\.7 \| wrong\) \d\.\d{3}/);

    // The same claim reversed: Periodic now ahead of (c+d) on tooldag.
    const reversed = findingsOf(episodes("tooldag", { "envprobe-cd": { accuracy: 0.8, success: always }, periodic: { accuracy: 0.9, success: always } }));
    const structural = reversed.find((f) => /Structural/.test(f.claim))!;
    expect(structural.verdict).toBe("not reproduced");
    expect(structural.why).toBe("Periodic is ahead");
    // Policies that did not run are said to be missing, not scored.
    expect(verdict(reversed, /uncertainty-only/, "procedural")).toBe("not run");
  });

  it("puts the findings at the top of report.md", () => {
    const dir = tempDir("findings-md");
    writeReport(episodes("tooldag", { "envprobe-cd": { accuracy: 0.9, success: () => true }, periodic: { accuracy: 0.9, success: () => true } }), dir, { iterations: 200 });
    const md = readFileSync(join(dir, "report.md"), "utf8");
    expect(md.indexOf("## The paper's findings")).toBeGreaterThan(0);
    expect(md.indexOf("## The paper's findings")).toBeLessThan(md.indexOf("## Regime medium"));
    expect(md).toMatch(/\| Structural \(c\+d\) probing beats Periodic on procedural A_H \| medium \| procedural \| .* \| \*\*not reproduced\*\*: no difference the CI can tell from zero \|/);
    expect(md).not.toMatch(/Incomplete grid/);
  });

  it("says when the grid is incomplete: the groups that lack a policy, whose seeds drop out of its pairs", () => {
    const all = episodes("tooldag", { "envprobe-cd": { accuracy: 0.9, success: () => true }, periodic: { accuracy: 0.8, success: () => true } });
    const missing = all.find((e) => e.policy === "periodic")!;
    const dir = tempDir("findings-unpaired");
    const report = writeReport(all.filter((e) => e !== missing), dir, { iterations: 200 });
    expect(report.unpaired).toEqual({ groups: 1, examples: [`tooldag-${missing.regime} s${missing.seed} lacks periodic`] });
    expect(readFileSync(join(dir, "report.md"), "utf8")).toMatch(/\*\*Incomplete grid:\*\* 1 \(world, regime, seed\) group lacks some policy \(tooldag-medium s\d+ lacks periodic\)/);
  });
});
