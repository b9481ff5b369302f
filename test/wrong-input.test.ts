// A user's obvious mistakes — a file of another kind where a command expects an episode, a
// sweep's logs or a results file — are bad input (exit 2) named as such, not a verdict on a log
// that was never given (an episode "not started", exit 0; a "damaged log", exit 3). And the
// help texts say what each option needs and defaults to, and their examples work as shown.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firstSegment, repoRoot, runCli, tempDir } from "./helpers.ts";

const cli = runCli;

describe("a file or folder of another kind than the command reads", () => {
  const work = tempDir("wrong-input");
  const day = join(work, "day");

  it("a JSONL file outside a log/ folder (a trace, a results file) is refused, naming what to give", async () => {
    expect((await cli(["run", "auratown", "--seed", "3", "--ticks", "3", "--log", day, "--quiet"])).code).toBe(0);
    const trace = join(day, "trace.jsonl");
    for (const args of [["verify", trace], ["verify", trace, "--json"], ["replay", trace], ["inspect", trace], ["repair", trace], ["fork", trace, "--at", "1", "--condition", "baseline", "--log", join(work, "child")]]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toContain(`${trace}: not an episode log (a log segment lies in an episode's log/ folder; a trace or results file is not one): give the episode directory, the folder holding log/ (${day} for the episode this file lies in)`);
    }
    // A segment in its log/ folder still names its episode.
    expect((await cli(["verify", firstSegment(day)])).out).toMatch(/^OK: auratown-s3-baseline/);
  });

  it("report-envprobe over an episode of another world says so (it was a damaged log, exit 3)", async () => {
    const r = await cli(["report-envprobe", day, "--out", join(work, "report")]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`probetown: error: ${day}: an episode of the world auratown, not an EnvProbe one: report-envprobe reads the EnvProbe episodes of a \`sweep envprobe --log\` folder (or a \`run envprobe\` episode)\n`);
  });

  it("report given a log, a trace, a summary JSON or a folder says it is not a results file and which to give (it listed every field missing)", async () => {
    const summary = join(work, "day.json");
    const run = await cli(["replay", day, "--json"]);
    expect(run.code).toBe(0);
    writeFileSync(summary, run.out);
    const give = "give the results JSONL an eval or experiment writes (an eval's <out>/<benchmark>/results-<conditions>.jsonl, an experiment's <out>/results.jsonl)";
    const cases: [string, string][] = [
      [firstSegment(day), `${firstSegment(day)}:1: an episode log's record, not a results row: ${give}`],
      [join(day, "trace.jsonl"), `${join(day, "trace.jsonl")}:1: a trace span, not a results row: ${give}`],
      [summary, `${summary}: one JSON document (a summary of a sweep or an eval, written with --json or --out?), not results rows, one JSON object a line: ${give}`],
      [day, `${day}: a directory, not a results file: ${give}`],
    ];
    for (const [file, message] of cases) {
      const r = await cli(["report", file, "--out", join(work, "report-rows")]);
      expect(r.code, file).toBe(2);
      expect(r.err, file).toBe(`probetown: error: ${message}\n`);
    }
  });
  it("eval given another benchmark's query file says which it is and which eval reads it (it listed 20 queries' missing fields)", async () => {
    const data = join(repoRoot, "data", "aura");
    const cases: [string, string, string, string][] = [
      ["privacy", "implicit_intent_scene_a.json", "fixed-probe", "this is an implicit-intent benchmark file (scenes, and queries with gold_required_tools), not a privacy one: `probetown eval implicit --file …` reads it"],
      ["factual", "implicit_intent_scene_a.json", "fixed-probe", "this is an implicit-intent benchmark file (scenes, and queries with gold_required_tools), not a factual one: `probetown eval implicit --file …` reads it"],
      ["implicit", "factual_queries.json", "aura-intent", "this is a factual benchmark file (queries with requires, no scenes), not an implicit-intent one: `probetown eval factual --file …` reads it"],
      ["implicit", "privacy_queries.json", "aura-intent", "this is a privacy benchmark file (queries with allowed_tools and forbidden_tools), not an implicit-intent one: `probetown eval privacy --file …` reads it"],
      ["privacy", "factual_queries.json", "fixed-probe", "this is a factual benchmark file (queries with requires, no scenes), not a privacy one: `probetown eval factual --file …` reads it"],
    ];
    for (const [bench, file, condition, problem] of cases) {
      const r = await cli(["eval", bench, "--file", join(data, file), "--condition", condition, "--seeds", "1", "--out", join(work, "eval"), "--quiet"]);
      expect(r.code, `${bench} ${file}`).toBe(2);
      expect(r.err, `${bench} ${file}`).toMatch(new RegExp(`${file.replace(".", "\\.")}: invalid (implicit-intent|privacy|factual) benchmark:\\n  - ${problem.replace(/[()`.]/g, "\\$&")}\\n$`));
    }
  });
  it("experiment given a YAML spec under another name says specs are JSON unless named .yaml/.yml (it said 'not valid JSON' and no more)", async () => {
    const spec = join(work, "spec.txt");
    writeFileSync(spec, readFileSync(join(repoRoot, "experiments", "privacy-slice.yaml")));
    const r = await cli(["experiment", spec]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^probetown: error: ${spec.replace(/[.]/g, "\\.")}: not valid JSON \\(.*\\); an experiment spec is read as JSON unless its name ends in \\.yaml or \\.yml\\n$`));
  });
});

describe("help texts", () => {
  const work = tempDir("help-examples");

  it("run --help's inline --config examples are accepted by the worlds they name (auratown refused the one shown, envprobe's horizon)", async () => {
    const help = (await cli(["run", "--help"])).out.replace(/\s+/g, " ");
    const examples = [...help.matchAll(/'(\{[^']*\})' \(([a-z-]+)\)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(examples.map(([, world]) => world).sort()).toEqual(["auratown", "envprobe"]);
    for (const [json, world] of examples) {
      const r = await cli(["run", world, "--seed", "1", "--config", json, "--trace", "none", "--log", join(work, `config-${world}`), "--quiet"]);
      expect(r.code, `${world} ${json}: ${r.err}`).toBe(0);
    }
  });

  it("every required option says so in its help line (commander marks none: report --help showed --out as optional)", async () => {
    const cases: [string[], string[]][] = [
      [["report"], ["--out <dir>"]],
      [["report-envprobe"], ["--out <dir>"]],
      [["eval", "implicit"], ["--file <queries.json>", "--condition <names>"]],
      [["fork"], ["--at <tick>", "--condition <name>"]],
      [["sweep"], ["--seeds <list>"]],
      [["ask"], ["--tick <n>", "--agent <name>"]],
      [["worker"], ["--nats <url>"]],
    ];
    for (const [command, flags] of cases) {
      const help = (await cli([...command, "--help"])).out;
      // An option's help runs from its flag to the next option's line.
      const entries = help.split(/\n(?= {2}-)/);
      for (const flag of flags) {
        const entry = entries.find((e) => e.trimStart().startsWith(flag));
        expect(entry, `${command.join(" ")} ${flag}`).toBeDefined();
        expect(entry!.replace(/\s+/g, " "), `${command.join(" ")} ${flag}`).toContain("(required)");
      }
      // Optional ones do not.
      expect(entries.filter((e) => e.includes("(required)")).length, command.join(" ")).toBe(flags.length);
    }
  });

  it("eval --max-steps states its default, the one the eval uses", async () => {
    const help = (await cli(["eval", "implicit", "--help"])).out.replace(/\s+/g, " ");
    const stated = /--max-steps <n> probe budget ceiling \(default (\d+)/.exec(help)?.[1];
    expect(stated).toBeDefined();
    const r = await cli(["eval", "implicit", "--file", join(repoRoot, "data", "aura", "implicit_intent_scene_a.json"), "--condition", "aura-intent", "--seeds", "1", "--out", join(work, "eval"), "--json", "--quiet"]);
    expect(r.code, r.err).toBe(0);
    expect((JSON.parse(r.out) as { maxSteps: number }).maxSteps).toBe(Number(stated));
    for (const bench of ["privacy", "factual"]) {
      expect((await cli(["eval", bench, "--help"])).out.replace(/\s+/g, " "), bench).toMatch(/--max-steps <n> AURA GapRouted's budget ceiling \(default 5,/);
    }
  });

  it("sweep --help states what --snapshot-every and an envprobe sweep's --log default to", async () => {
    const help = (await cli(["sweep", "--help"])).out.replace(/\s+/g, " ");
    expect(help).toContain("--snapshot-every <n> keep a snapshot every n ticks; 0 keeps only the last (default: as run, by the log's growth and the run's time;");
    expect(help).toContain("envprobe: ");
    expect(help).toContain("--log keeps every episode's log under that directory (default: not kept)");
    // And so it is: an envprobe sweep without --log keeps none.
    const cwd = tempDir("sweep-nolog");
    const r = await cli(["sweep", "envprobe", "--worlds", "tooldag", "--regimes", "low", "--policies", "no-probe", "--seeds", "0-1"], cwd);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/logs not kept \(use --log <dir>\)\n$/);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
