// `probetown experiment`: spec validation (errors name the spec file and the field), the job
// matrix, cells served from their logs (a rerun runs no episode: log files keep their mtimes and
// sizes, the results and report are byte-identical), --report-only, a lost cell log rerun alone,
// changed settings refused until --fresh, another experiment's out directory refused, the implicit
// and privacy benchmarks through the same path, and the CLI (plain progress lines when stderr is
// not a TTY, exit 2 on a bad spec or on --fresh with --report-only).
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSpec, runExperiment, scanMatrix, SpecInvalid } from "../services/aura/experiment.ts";
import { loadResults } from "../services/analysis/results.ts";
import { runCliAsSpawned, tempDir } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..");
const FACTUAL = join(ROOT, "data/aura/factual_queries.json");
const SCENE_A = join(ROOT, "data/aura/implicit_intent_scene_a.json");
const PRIVACY = join(ROOT, "data/aura/privacy_queries.json");

/** Every file under `dir` with its mtime and size. */
function fileStats(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out.set(p, `${s.mtimeMs}:${s.size}`);
      }
    }
  };
  walk(dir);
  return out;
}

function specProblem(dir: string, spec: unknown, name = "spec.json"): string {
  const file = join(dir, name);
  writeFileSync(file, typeof spec === "string" ? spec : JSON.stringify(spec));
  try {
    loadSpec(file);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the spec to be rejected");
}

describe("experiment specs", () => {
  it("names the spec file and each bad field", () => {
    const dir = tempDir("spec-bad");
    writeFileSync(join(dir, "q.json"), readFileSync(FACTUAL));
    const m = specProblem(dir, { benchmark: "factual", file: "q.json", seeds: [42, "x"], conditions: ["vanilla", "literal"], forks: { warmup: 0 }, judges: ["llm"], maxSteps: 2.5, report: { reference: "nope" }, colour: "red" });
    expect(m).toContain(join(dir, "spec.json"));
    expect(m).toContain("field 'colour': unknown field");
    expect(m).toContain("field 'seeds'");
    expect(m).toContain("field 'conditions': unknown for the factual benchmark: 'literal'");
    expect(m).toContain("field 'forks.warmup': expected an integer ≥ 1");
    expect(m).toContain("field 'judges'");
    expect(m).toContain("field 'maxSteps'");
    expect(m).toContain("field 'report.reference'");
    // The spec's bootstrap takes the rule `report --bootstrap` does; warm-up is ≥ 1 as a field, as for --warmup.
    const few = specProblem(dir, { benchmark: "factual", file: "q.json", seeds: [1], conditions: ["vanilla"], warmup: 0, report: { bootstrap: 5 } });
    expect(few).toContain(join(dir, "spec.json"));
    expect(few).toContain("field 'report.bootstrap': expected an integer from 100 to 500,000 (bootstrap resamples, as `report --bootstrap`), got 5");
    expect(few).toContain("field 'warmup': expected an integer ≥ 1");
    expect(specProblem(dir, { benchmark: "implicit", world: "auratown", file: "q.json", seeds: [1], conditions: ["literal"] })).toContain("field 'world': the implicit benchmark runs on 'aura-scene'");
    expect(specProblem(dir, { benchmark: "quiz", file: "q.json", seeds: [1], conditions: ["x"] })).toContain("field 'benchmark': expected one of implicit, privacy, factual");
    expect(specProblem(dir, { benchmark: "factual", file: "nowhere.json", seeds: [1], conditions: ["vanilla"] })).toContain("field 'file': no such file");
    expect(specProblem(dir, { benchmark: "factual", file: ".", seeds: [1], conditions: ["vanilla"] })).toMatch(/field 'file': .* is not a file \(expected the benchmark's queries JSON\)/);
    expect(specProblem(dir, "benchmark: [unclosed", "spec.yaml")).toMatch(/spec\.yaml: not valid YAML/);
    const e = (() => {
      try {
        loadSpec(join(dir, "spec.json"));
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(SpecInvalid);
  });

  it("reads the query file with the spec: one not of its benchmark, not JSON, or without a named scene is its field's problem, and no out directory is claimed", async () => {
    const dir = tempDir("spec-file");
    writeFileSync(join(dir, "q.json"), readFileSync(FACTUAL));
    writeFileSync(join(dir, "broken.json"), "not json");
    const other = specProblem(dir, { name: "k", benchmark: "implicit", file: "q.json", seeds: [1], conditions: ["literal"], out: "out" });
    expect(other).toContain(join(dir, "spec.json"));
    expect(other).toMatch(/field 'file': .*q\.json: invalid implicit-intent benchmark:\n {6}- this is a factual benchmark file \(queries with requires, no scenes\), not an implicit-intent one: `probetown eval factual --file …` reads it$/m);
    // It was found only once the experiment had claimed `out` for 'k' (implicit): the corrected spec was then refused as another experiment's.
    expect(existsSync(join(dir, "out"))).toBe(false);
    writeFileSync(join(dir, "fixed.json"), JSON.stringify({ name: "k", benchmark: "factual", file: "q.json", seeds: [1], conditions: ["vanilla"], out: "out" }));
    expect(() => loadSpec(join(dir, "fixed.json"))).not.toThrow();
    const broken = specProblem(dir, { benchmark: "factual", file: "broken.json", seeds: [1], conditions: ["vanilla"] });
    expect(broken).toMatch(/field 'file': .*broken\.json: not valid JSON/);
    expect(broken).not.toContain("--file");
    expect(specProblem(dir, { benchmark: "implicit", file: SCENE_A, seeds: [1], conditions: ["literal"], scenes: ["nope"] })).toContain("field 'scenes': no scene 'nope' in");
  });

  it("reads YAML, resolves paths against the spec's directory and fills defaults", () => {
    const dir = tempDir("spec-yaml");
    writeFileSync(join(dir, "q.json"), readFileSync(FACTUAL));
    writeFileSync(join(dir, "f.yaml"), "benchmark: factual\nfile: q.json\nseeds: 1-3\nconditions: [fixed-probe, aura-gap-routed]\nout: out\n");
    const spec = loadSpec(join(dir, "f.yaml"));
    expect(spec).toMatchObject({ name: "f", world: "auratown", queries: join(dir, "q.json"), seeds: [1, 2, 3], warmup: 10, maxSteps: 5, judges: ["rule"], out: join(dir, "out") });
    expect(scanMatrix(spec)).toMatchObject({ cells: 3 * 2 * 50 });
  });
});

describe("experiment runs", () => {
  it("factual: runs the matrix once; a rerun (results deleted) runs no episode and writes the same results and report", async () => {
    const dir = tempDir("experiment-factual");
    const queries = JSON.parse(readFileSync(FACTUAL, "utf8")) as { queries: unknown[] };
    writeFileSync(join(dir, "q.json"), JSON.stringify({ queries: queries.queries.filter((_, i) => i % 10 === 0) }));
    writeFileSync(join(dir, "spec.yaml"), "name: small\nbenchmark: factual\nfile: q.json\nseeds: [42, 123]\nconditions: [fixed-probe, aura-gap-routed]\nforks: { warmup: 10 }\nout: out\nreport: { reference: fixed-probe, bootstrap: 200 }\n");
    const spec = loadSpec(join(dir, "spec.yaml"));
    const first = await runExperiment(spec);
    expect(first).toMatchObject({ cells: 2 * 2 * 5, ran: 20, served: 0 });
    expect(loadResults(first.results)).toHaveLength(20);
    const report = readFileSync(first.report.report, "utf8");
    const results = readFileSync(first.results, "utf8");
    expect(report).toContain("factual");
    const logs = fileStats(join(dir, "out", "logs"));

    rmSync(first.results);
    const again = await runExperiment(loadSpec(join(dir, "spec.yaml")));
    expect(again).toMatchObject({ cells: 20, ran: 0, served: 20 });
    expect(fileStats(join(dir, "out", "logs"))).toEqual(logs);
    expect(readFileSync(again.results, "utf8")).toBe(results);
    expect(readFileSync(again.report.report, "utf8")).toBe(report);

    const only = await runExperiment(spec, { reportOnly: true });
    expect(only.ran).toBe(0);
    expect(readFileSync(only.report.report, "utf8")).toBe(report);
    expect(fileStats(join(dir, "out", "logs"))).toEqual(logs);

    // A lost cell: --report-only names it; a rerun runs that cell alone and gives the same rows.
    rmSync(join(dir, "out", "logs", "q", "s123", "q21-aura-gap-routed"), { recursive: true });
    await expect(runExperiment(spec, { reportOnly: true })).rejects.toThrow(/1 of 20 cells have no finished log of this spec .*q21-aura-gap-routed, which holds no log\)/);
    const healed = await runExperiment(spec);
    expect(healed).toMatchObject({ ran: 1, served: 19 });
    expect(readFileSync(healed.results, "utf8")).toBe(results);

    // Served logs replay (--verify); a changed budget or warm-up makes every cell stale: refused,
    // naming the fields (as for implicit and privacy), until --fresh reruns them all.
    expect(await runExperiment(spec, { verify: true })).toMatchObject({ ran: 0, served: 20, replaced: 0 });
    const respec = (name: string, extra: string) => loadSpec((writeFileSync(join(dir, name), readFileSync(join(dir, "spec.yaml"), "utf8").replace("forks: { warmup: 10 }\n", "") + extra), join(dir, name)));
    const healedLogs = fileStats(join(dir, "out", "logs"));
    const spec3 = respec("spec3.yaml", "maxSteps: 3\nwarmup: 10\n");
    expect(scanMatrix(spec3).missing).toHaveLength(20);
    await expect(runExperiment(spec3, { reportOnly: true })).rejects.toThrow(/20 of 20 cells have no finished log of this spec .*, which holds a log made with other settings than this spec's \(a run without --report-only names the fields/);
    await expect(runExperiment(spec3)).rejects.toThrow(/holds another episode \(maxSteps: 5 in the log, 3 asked for\); pass --fresh to rerun it/);
    await expect(runExperiment(respec("spec11.yaml", "warmup: 11\n"))).rejects.toThrow(/holds another episode \(warmup: 10 in the log, 11 asked for\); pass --fresh/);
    expect(fileStats(join(dir, "out", "logs"))).toEqual(healedLogs);
    await expect(runExperiment(spec3, { fresh: true, reportOnly: true })).rejects.toThrow(/--fresh and --report-only cannot be combined/);
    expect(await runExperiment(spec3, { fresh: true })).toMatchObject({ ran: 20, served: 0 });
    expect(scanMatrix(spec).missing).toHaveLength(20);
  }, 120_000);

  it("a question edited in the query file (same id) is not served its old answer: factual and privacy cells are refused naming both wordings", async () => {
    const dir = tempDir("experiment-edited");
    const factual = JSON.parse(readFileSync(FACTUAL, "utf8")) as { queries: Array<{ query: string }> };
    const privacy = JSON.parse(readFileSync(PRIVACY, "utf8")) as { queries: Array<{ query: string }> };
    writeFileSync(join(dir, "f.json"), JSON.stringify({ queries: factual.queries.slice(0, 2) }));
    writeFileSync(join(dir, "p.json"), JSON.stringify({ ...privacy, queries: privacy.queries.slice(0, 2) }));
    writeFileSync(join(dir, "f.yaml"), "benchmark: factual\nfile: f.json\nseeds: [1]\nconditions: [aura-gap-routed]\nout: out-f\nreport: { bootstrap: 100 }\n");
    writeFileSync(join(dir, "p.yaml"), "benchmark: privacy\nfile: p.json\nseeds: [1]\nconditions: [aura-gap-routed]\nout: out-p\nreport: { bootstrap: 100 }\n");
    expect(await runExperiment(loadSpec(join(dir, "f.yaml")))).toMatchObject({ ran: 2 });
    expect(await runExperiment(loadSpec(join(dir, "p.yaml")))).toMatchObject({ ran: 1 });
    const was = [factual.queries[1]!.query, privacy.queries[1]!.query];
    factual.queries[1]!.query = privacy.queries[1]!.query = "Who else is here with me?";
    writeFileSync(join(dir, "f.json"), JSON.stringify({ queries: factual.queries.slice(0, 2) }));
    writeFileSync(join(dir, "p.json"), JSON.stringify({ ...privacy, queries: privacy.queries.slice(0, 2) }));
    // Both were served from their logs: the rows were the old question's answers.
    await expect(runExperiment(loadSpec(join(dir, "f.yaml")))).rejects.toThrow(`q2-aura-gap-routed: holds another episode (question: "${was[0]}" in the log, "Who else is here with me?" asked for); pass --fresh`);
    await expect(runExperiment(loadSpec(join(dir, "p.yaml")))).rejects.toThrow(/s1-aura-gap-routed: holds another episode \(query 202: "Is it morning.* in the log, "Who else is here with me\?" asked for\); pass --fresh/);
    await expect(runExperiment(loadSpec(join(dir, "p.yaml")), { reportOnly: true })).rejects.toThrow(/which holds a log made with other settings than this spec's/);
    expect(await runExperiment(loadSpec(join(dir, "f.yaml")), { fresh: true })).toMatchObject({ ran: 2 });
    expect(await runExperiment(loadSpec(join(dir, "f.yaml")))).toMatchObject({ ran: 0, served: 2 });
  });

  it("one run per output directory: another live run's lock is refused naming its pid; a dead run's lock is taken over", async () => {
    const dir = tempDir("experiment-lock");
    writeFileSync(join(dir, "i.json"), JSON.stringify({ benchmark: "implicit", file: SCENE_A, seeds: [42], conditions: ["literal"], out: "out" }));
    const spec = loadSpec(join(dir, "i.json"));
    mkdirSync(spec.out, { recursive: true });
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(spec.out, "experiment.lock"), `${other.pid}\n`);
      await expect(runExperiment(spec)).rejects.toThrow(new RegExp(`another run of this experiment \\(process ${other.pid}\\) is writing`));
      expect(existsSync(join(spec.out, "logs"))).toBe(false);
    } finally {
      other.kill("SIGKILL");
      await new Promise((r) => other.once("exit", r));
    }
    // Its holder is gone now: the lock is stale, taken over, and released at the end.
    expect(await runExperiment(spec)).toMatchObject({ cells: 1, ran: 1 });
    expect(existsSync(join(spec.out, "experiment.lock"))).toBe(false);
  }, 60_000);

  it("implicit and privacy benchmarks go through the same matrix, rows derived from the logs", async () => {
    const dir = tempDir("experiment-implicit");
    writeFileSync(join(dir, "i.json"), JSON.stringify({ benchmark: "implicit", file: SCENE_A, seeds: [42], conditions: ["literal", "aura-intent"], out: "out-i", report: { reference: "literal", bootstrap: 200 } }));
    const imp = await runExperiment(loadSpec(join(dir, "i.json")));
    expect(imp).toMatchObject({ cells: 2, ran: 2 });
    const rows = loadResults(imp.results);
    expect(rows).toHaveLength(50);
    const mean = (c: string) => rows.filter((r) => r.condition === c).reduce((s, r) => s + (r.implicitCoverage ?? 0), 0) / 25;
    expect(mean("aura-intent")).toBeGreaterThan(mean("literal") + 0.5);
    expect((await runExperiment(loadSpec(join(dir, "i.json")))).ran).toBe(0);

    writeFileSync(join(dir, "p.yaml"), `benchmark: privacy\nfile: ${PRIVACY}\nseeds: [42]\nconditions: [fixed-probe, aura-gap-routed]\nforks: { warmup: 6 }\nout: out-p\n`);
    const priv = await runExperiment(loadSpec(join(dir, "p.yaml")));
    expect(priv).toMatchObject({ cells: 2, ran: 2 });
    const prow = loadResults(priv.results);
    expect(prow).toHaveLength(60);
    expect(prow.filter((r) => r.condition === "fixed-probe").every((r) => r.probes === 8)).toBe(true);
    const stats = fileStats(join(dir, "out-p", "logs"));
    expect((await runExperiment(loadSpec(join(dir, "p.yaml")))).ran).toBe(0);
    expect(fileStats(join(dir, "out-p", "logs"))).toEqual(stats);

    // Another experiment's out directory is refused, naming both (--fresh does not change that);
    // one from before the owner file was written is told by its logs.
    const outputs = () => ["results.jsonl", "report/report.md"].map((f) => readFileSync(join(dir, "out-i", f), "utf8"));
    const kept = outputs();
    writeFileSync(join(dir, "p2.yaml"), `benchmark: privacy\nfile: ${PRIVACY}\nseeds: [42]\nconditions: [fixed-probe]\nout: out-i\n`);
    await expect(runExperiment(loadSpec(join(dir, "p2.yaml")), { fresh: true })).rejects.toThrow(/out .*out-i: holds experiment 'i' \(implicit\), not 'p2' \(privacy\).*only that same experiment may run again into it\); choose another out directory or remove it/);
    writeFileSync(join(dir, "i2.json"), JSON.stringify({ name: "other", benchmark: "implicit", file: SCENE_A, seeds: [42], conditions: ["literal"], out: "out-i" }));
    await expect(runExperiment(loadSpec(join(dir, "i2.json")))).rejects.toThrow(/holds experiment 'i' \(implicit\), not 'other' \(implicit\)/);
    expect(outputs()).toEqual(kept);
    rmSync(join(dir, "out-i", ".experiment.json"));
    await expect(runExperiment(loadSpec(join(dir, "p2.yaml")))).rejects.toThrow(/out .*out-i: holds the logs of another benchmark file \(logs\/implicit_intent_scene_a\)/);
    expect((await runExperiment(loadSpec(join(dir, "i.json")))).ran).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "out-i", ".experiment.json"), "utf8"))).toEqual({ benchmark: "implicit", name: "i" });
  }, 120_000);

  it("a cell log and a town warm-up log torn by a crash mid-write: the same command continues the cell, saying as `run --resume` does what it cut and where it kept the bytes, and runs the warm-up again (both were refused, exit 3)", async () => {
    const dir = tempDir("experiment-torn");
    const queries = JSON.parse(readFileSync(FACTUAL, "utf8")) as { queries: unknown[] };
    writeFileSync(join(dir, "q.json"), JSON.stringify({ queries: queries.queries.filter((_, i) => i % 10 === 0) }));
    writeFileSync(join(dir, "spec.yaml"), "name: torn\nbenchmark: factual\nfile: q.json\nseeds: [42]\nconditions: [aura-gap-routed]\nforks: { warmup: 10 }\nout: out\n");
    const experiment = async (...flags: string[]) => await runCliAsSpawned(["experiment", "spec.yaml", ...flags], dir);
    expect((await experiment("-q")).status).toBe(0);
    const results = readFileSync(join(dir, "out", "results.jsonl"), "utf8");
    const cell = join("out", "logs", "q", "s42", "q1-aura-gap-routed");
    const segment = join(dir, cell, "log", "000000000000.jsonl");
    const whole = readFileSync(segment);
    const lines = whole.toString("utf8").split("\n").filter((l) => l.length > 0);
    const town = join(dir, "out", "logs", "q", "town-s42-w10", "log", "000000000000.jsonl");
    // Each log's last record loses its last 30 bytes, its newline among them (`truncate -s -30`).
    const tear = () => {
      truncateSync(segment, whole.length - 30);
      truncateSync(town, statSync(town).size - 30);
    };
    tear();
    const again = await experiment();
    expect(again.status, again.stderr).toBe(0);
    const offset = whole.lastIndexOf("\n", whole.length - 2) + 1;
    expect(again.stderr).toContain(
      `experiment torn: ${cell}/log/000000000000.jsonl: line ${lines.length}: torn final record (${whole.length - 30 - offset} bytes without a complete JSON line; last good record seq ${lines.length - 2})\n` +
        `cut back to the last good record; the cut bytes are kept in ${cell}/log/000000000000.jsonl.torn-${offset}\n`,
    );
    expect(again.stdout).toMatch(/cells: 5 \(1 run now, 4 served from their logs\)/);
    expect(readFileSync(join(dir, "out", "results.jsonl"), "utf8")).toBe(results);
    expect(readFileSync(join(dir, cell, "log", `000000000000.jsonl.torn-${offset}`))).toEqual(whole.subarray(offset, whole.length - 30));
    const withoutMeta = (l: string) => l.replace(/,"meta":\{[^}]*\}/, "");
    expect(readFileSync(segment, "utf8").split("\n").filter((l) => l.length > 0).map(withoutMeta)).toEqual(lines.map(withoutMeta));
    tear();
    // --quiet drops progress, not the word that a log was cut.
    const quiet = await experiment("-q");
    expect(quiet.status).toBe(0);
    expect(quiet.stderr).toMatch(/^experiment torn: .*: torn final record .*\ncut back to the last good record; the cut bytes are kept in .*\n/);
    expect(quiet.stderr.split("\n").every((l) => l === "" || /^experiment torn: |^cut back to the last good record/.test(l))).toBe(true);
  }, 60_000);

  it("CLI: plain progress lines off a TTY, a summary on stdout, exit 2 naming the spec on a bad one", async () => {
    const dir = tempDir("experiment-cli");
    writeFileSync(join(dir, "i.json"), JSON.stringify({ benchmark: "implicit", file: SCENE_A, seeds: [42, 123], conditions: ["aura-intent"], out: "out" }));
    const run = await runCliAsSpawned(["experiment", join(dir, "i.json")]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/experiment i: \[2\/2\] aura-intent A_cafe_morning s123/);
    expect(run.stdout).toMatch(/cells: 2 \(2 run now, 0 served from their logs\)/);
    const again = await runCliAsSpawned(["experiment", join(dir, "i.json"), "--report-only", "--json"]);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ cells: 2, ran: 0, served: 2 });
    const both = await runCliAsSpawned(["experiment", join(dir, "i.json"), "--fresh", "--report-only"]);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--fresh and --report-only cannot be combined/);
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ benchmark: "implicit", file: SCENE_A, seeds: [], conditions: ["aura-intent"] }));
    const bad = await runCliAsSpawned(["experiment", join(dir, "bad.json")]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`${join(dir, "bad.json")}: invalid experiment spec`);
    expect(bad.stderr).toContain("field 'seeds'");
  }, 60_000);
});
