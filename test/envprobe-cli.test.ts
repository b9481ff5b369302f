// `probetown sweep envprobe` and `report-envprobe` from the shell: bad specs exit 2 with a message
// naming the flag before anything runs; a small grid prints per-cell metrics and the wall time as
// JSON, writes one log per episode, and the report is rebuilt from those logs.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, runCli } from "./helpers.ts";
import { envprobeJobsOf } from "../services/envprobe/natsSweep.ts";
import { jobsOf, sweepSpecOf } from "../services/envprobe/sweep.ts";

const cli = runCli;

describe("sweep envprobe (CLI)", () => {
  it("rejects bad specs with exit 2 and a message naming the flag", () => {
    const work = tempDir("envprobe-cli-bad");
    const cases: [string[], RegExp][] = [
      [["--worlds", "atlantis", "--seeds", "0-1"], /--worlds: unknown 'atlantis'/],
      [["--policies", "psychic", "--seeds", "0-1"], /--policies: unknown 'psychic'/],
      [["--regimes", "extreme", "--seeds", "0-1"], /--regimes: unknown 'extreme'/],
      [["--horizon", "0", "--seeds", "0-1"], /--horizon expects an integer ≥ 1/],
      [["--seeds", "9-3"], /--seeds: range '9-3' runs backwards/],
      [["--seeds", "x"], /--seeds: expected integers and ranges/],
    ];
    for (const [args, message] of cases) {
      const r = cli(["sweep", "envprobe", ...args, "--log", join(work, "never")]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
      expect(existsSync(join(work, "never"))).toBe(false);
    }
    expect(cli(["sweep", "auratown", "--seeds", "1", "--policies", "no-probe"]).err).toMatch(/--policies is for `sweep envprobe` only/);
  });

  it("runs a small grid: per-cell metrics and wall time as JSON, one log per episode, and the report from the logs", () => {
    const work = tempDir("envprobe-cli");
    const log = join(work, "grid");
    const r = cli(["sweep", "envprobe", "--worlds", "tooldag,graphnav", "--policies", "no-probe,envprobe-simple", "--regimes", "medium", "--seeds", "0-4", "--log", log, "--json"]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { episodes: number; seconds: number; cells: { world: string; policy: string; n: number; accuracy: number; success: number; pcw: { p: number } }[] };
    expect(out.episodes).toBe(20);
    expect(out.seconds).toBeGreaterThan(0);
    expect(out.cells.map((c) => `${c.world}/${c.policy}`)).toEqual(["tooldag/no-probe", "tooldag/envprobe-simple", "graphnav/no-probe", "graphnav/envprobe-simple"]);
    for (const c of out.cells) expect(c.n).toBe(5);
    expect(readdirSync(join(log, "tooldag-medium", "envprobe-simple")).sort()).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    const report = cli(["report-envprobe", log, "--out", join(work, "report"), "--bootstrap", "500", "--json"]);
    expect(report.code, report.err).toBe(0);
    const md = readFileSync(join(work, "report", "report.md"), "utf8");
    expect(md).toMatch(/envprobe-simple vs periodic|### Per world and policy/);
    expect(md).toContain("| tooldag | envprobe-simple | 5 |");
    const json = JSON.parse(readFileSync(join(work, "report", "report.json"), "utf8")) as { episodes: number };
    expect(json.episodes).toBe(20);
  });

  it("--held-out: the low and high regimes run on a disjoint seed range, medium on --seeds; the report says which seeds each regime used", () => {
    const work = tempDir("envprobe-heldout");
    const log = join(work, "grid");
    const r = cli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,periodic", "--seeds", "0-5", "--held-out", "100-102", "--log", log, "--json"]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { episodes: number; heldOut: { seeds: string; regimes: string[] }; cells: { regime: string; policy: string; n: number }[] };
    expect(out.episodes).toBe(2 * (6 + 3 + 3));
    expect(out.heldOut).toMatchObject({ seeds: "100-102", regimes: ["low", "high"] });
    expect(out.cells.map((c) => `${c.regime}:${c.n}`)).toEqual(["low:3", "low:3", "medium:6", "medium:6", "high:3", "high:3"]);
    expect(readdirSync(join(log, "tooldag-low", "periodic")).sort()).toEqual(["s100", "s101", "s102"]);
    expect(readdirSync(join(log, "tooldag-medium", "periodic"))).toHaveLength(6);
    const report = cli(["report-envprobe", log, "--out", join(work, "report"), "--bootstrap", "200"]);
    expect(report.code, report.err).toBe(0);
    const md = readFileSync(join(work, "report", "report.md"), "utf8");
    expect(md).toContain("## Regime low · seeds 100-102");
    expect(md).toContain("## Regime medium · seeds 0-5");

    // Overlapping ranges, no low/high regime, or another world: refused before anything runs.
    expect(cli(["sweep", "envprobe", "--seeds", "0-5", "--held-out", "5-9", "--log", join(work, "never")]).err).toMatch(/--held-out: 1 seed\(s\) also in --seeds \(5\)/);
    expect(cli(["sweep", "envprobe", "--seeds", "0-5", "--held-out", "9-x"]).err).toMatch(/--held-out: expected integers and ranges/);
    expect(cli(["sweep", "envprobe", "--regimes", "medium", "--seeds", "0-5", "--held-out", "10-12"]).err).toMatch(/--held-out: applies to the low\/high/);
    expect(cli(["sweep", "auratown", "--seeds", "1", "--held-out", "2"]).err).toMatch(/--held-out is for `sweep envprobe` only/);
    expect(existsSync(join(work, "never"))).toBe(false);

    // The NATS sweep chunks each regime's own seeds.
    const spec = sweepSpecOf({ worlds: "graphnav", policies: "no-probe", seeds: "0-9", heldOut: "50-53" });
    expect(jobsOf(spec).filter((j) => j.regime === "high").map((j) => j.seed)).toEqual([50, 51, 52, 53]);
    expect(envprobeJobsOf(spec, 3).map((j) => `${j.spec.regime}:${j.spec.seeds.join(",")}`).sort()).toEqual(["high:50,51,52", "high:53", "low:50,51,52", "low:53", "medium:0,1,2", "medium:3,4,5", "medium:6,7,8", "medium:9"]);
  });

  it("report-envprobe refuses a damaged or unfinished log (exit 3, naming the file and line) instead of reporting a partial episode", () => {
    const work = tempDir("envprobe-damaged");
    const log = join(work, "grid");
    expect(cli(["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe", "--regimes", "medium", "--seeds", "0-1", "--log", log, "--quiet"]).code).toBe(0);
    const file = join(log, "graphnav-medium", "no-probe", "s1", "log", "000000000000.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    const report = () => cli(["report-envprobe", log, "--out", join(work, "report")]);
    expect(report().code).toBe(0);

    writeFileSync(file, lines.slice(0, 12).join("\n") + "\n"); // a run that stopped after 12 records
    const unfinished = report();
    expect(unfinished.code).toBe(3);
    expect(unfinished.err).toContain(`${file}: line 12: the episode did not finish`);

    writeFileSync(file, lines.slice(0, 12).join("\n") + "\n" + lines[12]!.slice(0, 40)); // and its last line torn
    expect(report().err).toContain(`${file}: line 13: the last record is cut short`);

    writeFileSync(file, [...lines.slice(0, 5), "garbage", ...lines.slice(6)].join("\n"));
    expect(report().err).toContain(`${file}: line 6: not a log record`);
  });
});
