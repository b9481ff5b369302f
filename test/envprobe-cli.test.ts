// `probetown sweep envprobe` and `report-envprobe` from the shell: bad specs exit 2 with a message
// naming the flag before anything runs; a small grid prints per-cell metrics and the wall time as
// JSON, writes one log per episode, and the report is rebuilt from those logs.
import { describe, expect, it } from "vitest";
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logRecords, tempDir, runCli, startCli } from "./helpers.ts";
import { envprobeJobsOf } from "../services/envprobe/natsSweep.ts";
import { jobsOf, sweepKeyOf, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { runDirect } from "../services/envprobe/direct.ts";

const cli = runCli;

describe("sweep envprobe (CLI)", () => {
  it("rejects bad specs with exit 2 and a message naming the flag", async () => {
    const work = tempDir("envprobe-cli-bad");
    const cases: [string[], RegExp][] = [
      [["--worlds", "atlantis", "--seeds", "0-1"], /--worlds: unknown 'atlantis'/],
      [["--policies", "psychic", "--seeds", "0-1"], /--policies: unknown 'psychic'/],
      [["--regimes", "extreme", "--seeds", "0-1"], /--regimes: unknown 'extreme'/],
      [["--horizon", "0", "--seeds", "0-1"], /--horizon expects an integer ≥ 1/],
      // No upper bound ran an episode of H = 1e9 ticks, for days, holding its log in memory.
      [["--horizon", "1001", "--seeds", "0-1"], /--horizon expects an integer ≤ 1000 \(the paper's horizons are 20, 30 and 40\), got '1001'/],
      [["--config", '{"horizon": 1e9}', "--seeds", "0-1"], /--config: .*horizon: at most 1000 ticks \(the paper's horizons are 20, 30 and 40\), got 1000000000/s],
      [["--seeds", "9-3"], /--seeds: range '9-3' runs backwards/],
      [["--seeds", "x"], /--seeds: expected integers and ranges/],
      [["--worlds", "", "--seeds", "0-1"], /--worlds: empty list; name some \(known: objectstate, tooldag, graphnav\), say 'all', or omit --worlds for the default/],
      [["--policies", " , ", "--seeds", "0-1"], /--policies: empty list/],
      // The flags choose each episode's world, regime and policy: the same keys in --config were ignored.
      [["--config", '{"world":"graphnav"}', "--seeds", "0-1"], /--config: "world" is chosen by --worlds in a sweep \(the config's "graphnav" would be overridden in every episode\); use --worlds graphnav instead/],
      [["--config", '{"regime":"high"}', "--seeds", "0-1"], /--config: "regime" is chosen by --regimes in a sweep/],
      [["--config", '{"policy":"oracle"}', "--seeds", "0-1"], /--config: "policy" is chosen by --policies in a sweep/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(["sweep", "envprobe", ...args, "--log", join(work, "never")]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
      expect(existsSync(join(work, "never"))).toBe(false);
    }
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--policies", "no-probe"])).err).toMatch(/--policies is for `sweep envprobe` only/);
  }, 120_000); // some 15 commands one after another: under 1 s in-process; spawned, 9 s in a CI run, more on a loaded machine

  it("runs a small grid: per-cell metrics and wall time as JSON, one log per episode, and the report from the logs", async () => {
    const work = tempDir("envprobe-cli");
    const log = join(work, "grid");
    const r = await cli(["sweep", "envprobe", "--worlds", "tooldag,graphnav", "--policies", "no-probe,envprobe-simple", "--regimes", "medium", "--seeds", "0-4", "--log", log, "--json"]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { episodes: number; seconds: number; cells: { world: string; policy: string; n: number; accuracy: number; success: number; pcw: { p: number } }[] };
    expect(out.episodes).toBe(20);
    expect(out.seconds).toBeGreaterThan(0);
    expect(out.cells.map((c) => `${c.world}/${c.policy}`)).toEqual(["tooldag/no-probe", "tooldag/envprobe-simple", "graphnav/no-probe", "graphnav/envprobe-simple"]);
    for (const c of out.cells) expect(c.n).toBe(5);
    expect(readdirSync(join(log, "tooldag-medium", "envprobe-simple")).sort()).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    const report = await cli(["report-envprobe", log, "--out", join(work, "report"), "--bootstrap", "500", "--json"]);
    expect(report.code, report.err).toBe(0);
    const md = readFileSync(join(work, "report", "report.md"), "utf8");
    expect(md).toMatch(/envprobe-simple vs periodic|### Per world and policy/);
    expect(md).toContain("| tooldag | envprobe-simple | 5 |");
    const json = JSON.parse(readFileSync(join(work, "report", "report.json"), "utf8")) as { episodes: number };
    expect(json.episodes).toBe(20);
  });

  it("--held-out: the low and high regimes run on a disjoint seed range, medium on --seeds; the report says which seeds each regime used", async () => {
    const work = tempDir("envprobe-heldout");
    const log = join(work, "grid");
    const r = await cli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,periodic", "--seeds", "0-5", "--held-out", "100-102", "--log", log, "--json"]);
    expect(r.code, r.err).toBe(0);
    const out = JSON.parse(r.out) as { episodes: number; heldOut: { seeds: string; regimes: string[] }; cells: { regime: string; policy: string; n: number }[] };
    expect(out.episodes).toBe(2 * (6 + 3 + 3));
    expect(out.heldOut).toMatchObject({ seeds: "100-102", regimes: ["low", "high"] });
    expect(out.cells.map((c) => `${c.regime}:${c.n}`)).toEqual(["low:3", "low:3", "medium:6", "medium:6", "high:3", "high:3"]);
    expect(readdirSync(join(log, "tooldag-low", "periodic")).sort()).toEqual(["s100", "s101", "s102"]);
    expect(readdirSync(join(log, "tooldag-medium", "periodic"))).toHaveLength(6);
    const report = await cli(["report-envprobe", log, "--out", join(work, "report"), "--bootstrap", "200"]);
    expect(report.code, report.err).toBe(0);
    const md = readFileSync(join(work, "report", "report.md"), "utf8");
    expect(md).toContain("## Regime low · seeds 100-102");
    expect(md).toContain("## Regime medium · seeds 0-5");

    // Overlapping ranges, no low/high regime, or another world: refused before anything runs.
    expect((await cli(["sweep", "envprobe", "--seeds", "0-5", "--held-out", "5-9", "--log", join(work, "never")])).err).toMatch(/--held-out: 1 seed\(s\) also in --seeds \(5\)/);
    expect((await cli(["sweep", "envprobe", "--seeds", "0-5", "--held-out", "9-x"])).err).toMatch(/--held-out: expected integers and ranges/);
    expect((await cli(["sweep", "envprobe", "--regimes", "medium", "--seeds", "0-5", "--held-out", "10-12"])).err).toMatch(/--held-out: applies to the low\/high/);
    expect((await cli(["sweep", "auratown", "--seeds", "1", "--held-out", "2"])).err).toMatch(/--held-out is for `sweep envprobe` only/);
    expect(existsSync(join(work, "never"))).toBe(false);

    // The NATS sweep chunks each regime's own seeds.
    const spec = sweepSpecOf({ worlds: "graphnav", policies: "no-probe", seeds: "0-9", heldOut: "50-53" });
    expect(jobsOf(spec).filter((j) => j.regime === "high").map((j) => j.seed)).toEqual([50, 51, 52, 53]);
    expect(envprobeJobsOf(spec, 3).map((j) => `${j.spec.regime}:${j.spec.seeds.join(",")}`).sort()).toEqual(["high:50,51,52", "high:53", "low:50,51,52", "low:53", "medium:0,1,2", "medium:3,4,5", "medium:6,7,8", "medium:9"]);
  });

  it("report-envprobe refuses a damaged or unfinished log (exit 3, naming the file and line) instead of reporting a partial episode", async () => {
    const work = tempDir("envprobe-damaged");
    const log = join(work, "grid");
    // Version-1 logs (one sealed record a line), edited line by line below; test/envprobe-compact-log.test.ts damages compact ones.
    expect((await cli(["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe", "--regimes", "medium", "--seeds", "0-1", "--log", log, "--log-format", "1", "--quiet"])).code).toBe(0);
    const file = join(log, "graphnav-medium", "no-probe", "s1", "log", "000000000000.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    const report = () => cli(["report-envprobe", log, "--out", join(work, "report")]);
    expect((await report()).code).toBe(0);
    expect((await report()).err).toBe("");

    // An interrupted sweep's folder (an episode never started): reported, saying what is missing.
    const kept = join(work, "s1-kept");
    renameSync(join(log, "graphnav-medium", "no-probe", "s1"), kept);
    const partial = await cli(["report-envprobe", log, "--out", join(work, "report"), "--json"]);
    expect(partial.code, partial.err).toBe(0);
    expect(partial.err).toContain(`report-envprobe: ${log} holds 1 of the 2 episodes its sweep asked for (.envprobe-sweep.json): 1 missing (first: graphnav-medium/no-probe/s1); the report covers the episodes present; run the same \`sweep envprobe\` command again to finish the sweep`);
    expect(JSON.parse(partial.out)).toMatchObject({ episodes: 1, sweepEpisodes: 2, missing: ["graphnav-medium/no-probe/s1"] });
    renameSync(kept, join(log, "graphnav-medium", "no-probe", "s1"));

    writeFileSync(file, lines.slice(0, 12).join("\n") + "\n"); // a run that stopped after 12 records
    const unfinished = await report();
    expect(unfinished.code).toBe(3);
    expect(unfinished.err).toContain(`${file}: line 12: the episode did not finish`);

    writeFileSync(file, lines.slice(0, 12).join("\n") + "\n" + lines[12]!.slice(0, 40)); // and its last line torn
    expect((await report()).err).toContain(`${file}: line 13: the last record is cut short`);

    writeFileSync(file, [...lines.slice(0, 5), "garbage", ...lines.slice(6)].join("\n"));
    expect((await report()).err).toContain(`${file}: line 6: not a log record`);

    // A record whose payload is not what its type says (the report reads payloads without their
    // schema): a count that is a string would concatenate into p_cw ("NaN", digits run together).
    const scored = lines.findIndex((l) => l.includes('"type":"envprobe.scored"'));
    writeFileSync(file, lines.map((l, i) => (i === scored ? l.replace(/"hc":\d+/, '"hc":"x"') : l)).join("\n"));
    const altered = await report();
    expect(altered.code).toBe(3);
    expect(altered.err).toContain(`${file}: line ${scored + 1}: unreadable envprobe.scored record: envprobe.scored hc: expected an integer ≥ 0, got "x"`);
    expect(altered.err).not.toContain("NaN");
  });

  it("a Ctrl-C says how far the sweep got and that the same command runs it again (exit 130)", async () => {
    const log = join(tempDir("envprobe-sigint"), "grid");
    const sweep = startCli(["sweep", "envprobe", "--seeds", "0-999", "--log", log, "--quiet"]);
    // Interrupted once episodes are being written.
    while (!existsSync(join(log, "objectstate-low"))) await new Promise((r) => setTimeout(r, 50));
    sweep.child.kill("SIGINT");
    const r = await sweep.done;
    expect(r.code).toBe(130);
    expect(r.err).toMatch(new RegExp(`^sweep envprobe: interrupted after \\d+ of 99000 episodes; the same command runs the sweep again into ${log.replace(/[/.-]/g, "\\$&")}, keeping every episode whose log is finished and running the rest`));
  }, 60_000);

  it("run again into its --log, a sweep keeps every episode whose log is complete and intact and reruns the rest: the JSON, the report and every log equal an uninterrupted sweep's", async () => {
    const work = tempDir("envprobe-rerun");
    // Version-1 logs, whose records the damage below edits as text (test/envprobe-compact-log.test.ts reruns over compact ones).
    const grid = ["sweep", "envprobe", "--worlds", "tooldag,graphnav", "--policies", "no-probe,envprobe-simple", "--regimes", "medium,high", "--seeds", "0-3", "--log-format", "1"];
    const whole = join(work, "whole");
    const cut = join(work, "cut");
    const first = await cli([...grid, "--log", whole, "--json"]);
    expect(first.code, first.err).toBe(0);
    expect(JSON.parse(first.out)).toMatchObject({ episodes: 32, kept: 0, ran: 32 });
    expect((await cli([...grid, "--log", cut, "--quiet"])).code).toBe(0);
    const segment = (key: string) => join(cut, key, "log", "000000000000.jsonl");
    // What an interrupted sweep leaves, and what a cheap check must not take for a finished episode:
    rmSync(join(cut, "tooldag-medium", "no-probe", "s3"), { recursive: true }); // never started
    const short = readFileSync(segment("graphnav-high/envprobe-simple/s2"), "utf8");
    writeFileSync(segment("graphnav-high/envprobe-simple/s2"), short.slice(0, 5000)); // torn mid-record
    const lines = readFileSync(segment("tooldag-high/no-probe/s1"), "utf8").split("\n");
    writeFileSync(segment("tooldag-high/no-probe/s1"), lines.slice(0, 40).join("\n") + "\n"); // stopped between records
    const tail = readFileSync(segment("graphnav-medium/no-probe/s0"), "utf8");
    writeFileSync(segment("graphnav-medium/no-probe/s0"), tail.replace(/"stateHash":"[0-9a-f]{4}(?=[0-9a-f]{60}"\},"seq":\d+,"tick":29,)/, '"stateHash":"0000')); // its last record altered
    cpSync(segment("tooldag-medium/envprobe-simple/s1"), segment("tooldag-medium/envprobe-simple/s0")); // another seed's log
    writeFileSync(join(cut, "graphnav-medium", "envprobe-simple", "s3", "log", "000000000001.jsonl"), "{}\n"); // a stray second segment
    expect(readFileSync(segment("graphnav-medium/no-probe/s0"), "utf8")).not.toBe(tail);

    const again = await cli([...grid, "--log", cut, "--json"]);
    expect(again.code, again.err).toBe(0);
    const a = JSON.parse(first.out) as { cells: unknown; episodes: number };
    const b = JSON.parse(again.out) as { cells: unknown; episodes: number; kept: number; ran: number };
    expect(b).toMatchObject({ episodes: 32, kept: 26, ran: 6 });
    expect(b.cells).toEqual(a.cells);
    const text = await cli([...grid, "--log", cut]);
    expect(text.out).toMatch(new RegExp(`32 episodes in [\\d.]+ s: 32 kept \\(their logs finished by an earlier run\\), 0 run now \\(1 worker thread\\); logs in ${cut.replace(/[/.-]/g, "\\$&")}`));
    // Every log is the uninterrupted sweep's, byte for byte (the stray segment gone), and so is the report.
    for (const key of jobsOf(sweepSpecOf({ worlds: "tooldag,graphnav", policies: "no-probe,envprobe-simple", regimes: "medium,high", seeds: "0-3" })).map(sweepKeyOf)) {
      expect(readdirSync(join(cut, key, "log")), key).toEqual(["000000000000.jsonl"]);
      expect(readFileSync(segment(key), "utf8"), key).toBe(readFileSync(join(whole, key, "log", "000000000000.jsonl"), "utf8"));
    }
    const report = async (log: string) => {
      const r = await cli(["report-envprobe", log, "--out", join(work, `report-${log === whole ? "whole" : "cut"}`), "--bootstrap", "300", "--json"]);
      expect(r.code, r.err).toBe(0);
      expect(r.err).toBe("");
      return JSON.parse(readFileSync(join(work, `report-${log === whole ? "whole" : "cut"}`, "report.json"), "utf8")) as unknown;
    };
    expect(await report(cut)).toEqual(await report(whole));

    // Another grid into the same --log: refused before anything runs, naming each difference.
    const other = await cli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,envprobe-simple", "--regimes", "medium,high", "--seeds", "0-5", "--horizon", "12", "--log", cut]);
    expect(other.code).toBe(2);
    expect(other.err).toContain(`--log ${cut}: holds another sweep's logs (its spec is in .envprobe-sweep.json), which differs from this one in --worlds (tooldag here, tooldag,graphnav there); --seeds (0-5 here, 0-3 there); --horizon/--config "horizon" (12 here, unset there)`);
    // The same grid with its lists in another order is the same sweep.
    const reordered = await cli(["sweep", "envprobe", "--worlds", "graphnav,tooldag", "--policies", "envprobe-simple,no-probe", "--regimes", "high,medium", "--seeds", "3,2,1,0", "--log", cut, "--json"]);
    expect(reordered.code, reordered.err).toBe(0);
    expect(JSON.parse(reordered.out)).toMatchObject({ episodes: 32, kept: 32, ran: 0 });
  }, 120_000); // 8 s in a CI run, more on a loaded machine

  it("report-envprobe counts each (world, regime, policy, seed) once: a copy of an episode under the folder is refused, naming both", async () => {
    const work = tempDir("envprobe-duplicate");
    const log = join(work, "grid");
    expect((await cli(["sweep", "envprobe", "--worlds", "graphnav", "--policies", "no-probe,periodic", "--regimes", "medium", "--seeds", "0-1", "--log", log, "--quiet"])).code).toBe(0);
    const episode = join(log, "graphnav-medium", "periodic", "s1");
    cpSync(episode, join(log, "backup", "s1"), { recursive: true });
    const r = await cli(["report-envprobe", log, "--out", join(work, "report")]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`two episodes of graphnav-medium periodic seed 1: ${join(log, "backup", "s1")} and ${episode}`);
    expect(existsSync(join(work, "report", "report.md"))).toBe(false);
  });
});

describe("run envprobe and fork (CLI)", () => {
  const configFile = (work: string, config: object): string => {
    const file = join(work, `cfg-${Object.values(config).join("-")}.json`);
    writeFileSync(file, JSON.stringify(config));
    return file;
  };
  const steps = (dir: string) => logRecords(dir).filter((r) => r.type === "envprobe.stepped").map((r) => ({ tick: r.tick, ...(r.payload as { kind: string; success: boolean }) }));

  it("refuses a --config that sets the policy (exit 2, naming --condition): the condition overrode it without a word", async () => {
    const work = tempDir("envprobe-run-policy");
    for (const [extra, overriddenBy] of [[[], "the default condition envprobe-simple"], [["--condition", "periodic"], "--condition periodic"]] as const) {
      const r = await cli(["run", "envprobe", "--seed", "1", "--config", '{"world":"tooldag","policy":"oracle"}', ...extra, "--log", join(work, "never"), "--trace", "none"]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(`"policy" is the envprobe condition, chosen by --condition, not the config (the config's "oracle" would be overridden by ${overriddenBy}); use --condition oracle instead`);
    }
    expect(existsSync(join(work, "never"))).toBe(false);
  });

  it("refuses --ticks and --days (exit 2, naming the flag and the horizon to set): an episode runs its horizon H", async () => {
    const work = tempDir("envprobe-run-ticks");
    const high = configFile(work, { world: "tooldag", regime: "high" });
    for (const [flag, value] of [["--ticks", "60"], ["--ticks", "20"], ["--days", "2"]] as const) {
      const r = await cli(["run", "envprobe", "--seed", "3", "--config", high, "--condition", "periodic", flag, value, "--log", join(work, "never"), "--trace", "none"]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(`${flag} ${value}: an envprobe episode runs its horizon H`);
      expect(r.err).toContain(`--config '{"horizon": ${flag === "--ticks" ? value : "n"}}' (or a file holding it)`);
    }
    expect(existsSync(join(work, "never"))).toBe(false);
    const endless = await cli(["run", "envprobe", "--seed", "3", "--config", '{"horizon": 1e9}', "--log", join(work, "never"), "--trace", "none"]);
    expect(endless.code, endless.err).toBe(2);
    expect(endless.err).toContain("horizon: at most 1000 ticks (the paper's horizons are 20, 30 and 40), got 1000000000");
    expect(existsSync(join(work, "never"))).toBe(false);
    // The limit is on new episodes: a log written with a longer horizon (before the limit) still
    // verifies, replays and is inspected.
    const old = join(work, "h1001");
    runDirect({ config: { horizon: 1001 }, policy: "envprobe-simple", seed: 3, dir: old });
    for (const command of [["verify", old], ["replay", old], ["inspect", old, "--from", "999"]]) expect((await cli(command)).code, command.join(" ")).toBe(0);
    // The horizon set in the config: H, the budget ⌊H/4⌋ and the ticks agree.
    // (--config takes the object inline as well as a file.)
    const long = await cli(["run", "envprobe", "--seed", "3", "--config", JSON.stringify({ world: "tooldag", regime: "high", horizon: 60 }), "--condition", "periodic", "--log", join(work, "h60"), "--trace", "none"]);
    expect(long.code, long.err).toBe(0);
    expect(long.out).toMatch(/task not solved in 60 steps \(H = 60\)/);
    expect(long.out).toMatch(/probes \d+ of 15/);
    expect(steps(join(work, "h60"))).toHaveLength(60);
  });

  it("fork of an envprobe log refuses --ticks (its horizon is the parent's); its summary says which probes were the parent's and which the child's policy spent", async () => {
    const work = tempDir("envprobe-fork-cli");
    const medium = configFile(work, { world: "tooldag", regime: "medium" });
    const parent = join(work, "parent");
    expect((await cli(["run", "envprobe", "--seed", "2", "--config", medium, "--log", parent, "--trace", "none", "--quiet"])).code).toBe(0);
    const parentSteps = steps(parent);
    const probesBy = (tick: number) => parentSteps.filter((s) => s.kind === "probe" && s.tick <= tick).length;
    expect(probesBy(5)).toBeGreaterThan(0);

    const refused = await cli(["fork", parent, "--at", "5", "--condition", "no-probe", "--ticks", "60", "--log", join(work, "never"), "--trace", "none"]);
    expect(refused.code, refused.err).toBe(2);
    expect(refused.err).toContain("--ticks 60: an envprobe fork runs to its parent's horizon H = 30");
    expect(existsSync(join(work, "never"))).toBe(false);

    const early = await cli(["fork", parent, "--at", "5", "--condition", "no-probe", "--log", join(work, "early"), "--trace", "none"]);
    expect(early.code, early.err).toBe(0);
    expect(early.out).toContain("policy no-probe after the fork at tick 5 (envprobe-simple before)");
    expect(early.out).toContain(`: ${probesBy(5)} before the fork (parent's policy envprobe-simple), 0 by no-probe;`);

    // Forked after the parent had solved the task: every probe, and the success, are the parent's.
    const solved = parentSteps.find((s) => s.success);
    expect(solved).toBeDefined();
    const at = solved!.tick + 2;
    const late = await cli(["fork", parent, "--at", String(at), "--condition", "no-probe", "--log", join(work, "late"), "--trace", "none"]);
    expect(late.code, late.err).toBe(0);
    expect(late.out).toContain(`probes ${probesBy(at)} of 7: ${probesBy(at)} before the fork (parent's policy envprobe-simple), 0 by no-probe;`);
    expect(late.out).toContain(`task solved at step ${solved!.tick + 1} (H = 30), before the fork, by the parent's policy envprobe-simple: the episode was over when no-probe took over`);

    // A fork of a fork: the probes before it were its ancestors'.
    const grandchild = await cli(["fork", join(work, "early"), "--at", "10", "--condition", "periodic", "--log", join(work, "grandchild"), "--trace", "none"]);
    expect(grandchild.code, grandchild.err).toBe(0);
    const own = steps(join(work, "grandchild")).filter((s) => s.kind === "probe").length;
    expect(grandchild.out).toMatch(new RegExp(`: ${probesBy(5)} before the fork \\(parent's policies envprobe-simple, then no-probe\\), ${own} by periodic;`));
  });
});
