// The bounds on what a user gives (issue 27): every input file is refused above its kind's size
// before it is read whole (a device such as /dev/zero read up to the limit), parsed inputs refuse
// the keys that name an object's prototype, and numeric flags have ceilings that name the limit —
// each a usage error (exit 2) naming the file, key or flag and what was expected.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statfsSync, truncateSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { InputFileTooLarge, InputKeyForbidden, InputNestedTooDeep } from "../services/kernel/errors.ts";
import { checkParsedInput, INPUT_LIMITS, inputShapeProblem, MAX_INPUT_DEPTH, readInputFile } from "../services/kernel/inputFile.ts";
import { checkWorkers, MAX_TICKS, MAX_WORKERS, WORKERS_PER_CORE } from "../services/cli/flags.ts";
import { analyze, ReportOptionInvalid } from "../services/analysis/report.ts";
import { MAX_BOOTSTRAP_ITERATIONS } from "../services/analysis/reportMetrics.ts";
import { parseResults, ResultsInvalid } from "../services/analysis/results.ts";
import { loadSpec } from "../services/aura/experiment.ts";
import { UsageError } from "../services/kernel/usageError.ts";
import { CLI, runCli, tempDir } from "./helpers.ts";

const work = tempDir("input-bounds");
/** A sparse file of `bytes` (no disk used): a file too large, measured before it is read. */
const sparse = (name: string, bytes: number): string => {
  const file = join(work, name);
  writeFileSync(file, "");
  truncateSync(file, bytes);
  return file;
};
const GB = 2 ** 30;
const error = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
};

describe("input files are bounded before they are read whole", () => {
  it("a regular file above its kind's limit is refused by its size, naming it and the limit", () => {
    const file = sparse("config.json", INPUT_LIMITS.config + 1);
    const e = error(() => readInputFile(file, "config", `--config ${file}`));
    expect(e).toBeInstanceOf(InputFileTooLarge);
    expect((e as InputFileTooLarge).exitCode).toBe(2);
    expect((e as InputFileTooLarge).fields).toEqual({ label: `--config ${file}`, kind: "config", size: INPUT_LIMITS.config + 1, limit: INPUT_LIMITS.config });
    expect((e as Error).message).toBe(`--config ${file}: 1.0 MiB, more than the 1.0 MiB an input config file may hold (docs/configuration.md, "Input files")`);
    // At the limit it is read.
    const fits = join(work, "fits.json");
    writeFileSync(fits, "x".repeat(INPUT_LIMITS.config));
    expect(readInputFile(fits, "config")).toHaveLength(INPUT_LIMITS.config);
  });

  it("a device is read up to the limit and refused past it", () => {
    const e = error(() => readInputFile("/dev/zero", "config", "--config /dev/zero"));
    expect(e).toBeInstanceOf(InputFileTooLarge);
    expect((e as InputFileTooLarge).fields.size).toBeNull();
    expect((e as Error).message).toBe(`--config /dev/zero: not a regular file, and more than the 1.0 MiB an input config file may hold (docs/configuration.md, "Input files")`);
    // Node's own errors are left to the caller, who words them.
    expect((error(() => readInputFile(join(work, "absent.json"), "config")) as NodeJS.ErrnoException).code).toBe("ENOENT");
  });

  it("every command that reads an input file refuses a 1 GB one (exit 2), naming the file and its limit", async () => {
    const big = sparse("big.json", GB);
    const bigSpec = sparse("big.yaml", GB);
    const cases: [string[], string][] = [
      [["run", "auratown", "--seed", "1", "--config", big, "--log", join(work, "c")], `--config ${big}: 1024.0 MiB, more than the 1.0 MiB an input config file may hold`],
      [["run", "aura-scene", "--seed", "1", "--llm-config", big, "--log", join(work, "l")], `--llm-config ${big}: 1024.0 MiB, more than the 1.0 MiB an input config file may hold`],
      [["eval", "factual", "--file", big, "--condition", "fixed-probe", "--out", join(work, "e")], `--file ${big}: 1024.0 MiB, more than the 16.0 MiB an input dataset file may hold`],
      [["eval", "implicit", "--file", big, "--condition", "fixed-probe", "--out", join(work, "e")], `--file ${big}: 1024.0 MiB, more than the 16.0 MiB an input dataset file may hold`],
      [["eval", "privacy", "--file", big, "--condition", "fixed-probe", "--out", join(work, "e")], `--file ${big}: 1024.0 MiB, more than the 16.0 MiB an input dataset file may hold`],
      [["experiment", bigSpec], `${bigSpec}: 1024.0 MiB, more than the 1.0 MiB an input spec file may hold`],
      [["run", "household", "--seed", "1", "--task", big, "--log", join(work, "h")], `${big}: 1024.0 MiB, more than the 16.0 MiB an input dataset file may hold`],
      [["report", big, "--out", join(work, "r")], `${big}: 1024.0 MiB, more than the 256.0 MiB an input results file may hold`],
      [["report-envprobe", big, "--out", join(work, "r")], `${big}: 1024.0 MiB, more than the 256.0 MiB an input results file may hold`],
      [["run", "auratown", "--seed", "1", "--config", "/dev/zero", "--log", join(work, "z")], "--config /dev/zero: not a regular file, and more than the 1.0 MiB an input config file may hold"],
    ];
    for (const [args, message] of cases) {
      const rssBefore = process.memoryUsage().rss;
      const started = performance.now();
      const r = await runCli(args);
      expect(r.code, `${args.join(" ")}\n${r.err}`).toBe(2);
      expect(r.err, args.join(" ")).toContain(`probetown: error: ${message} (docs/configuration.md, "Input files")\n`);
      // Refused before reading: no gigabyte held, and no time spent reading one.
      expect(performance.now() - started, args.join(" ")).toBeLessThan(2000);
      expect(process.memoryUsage().rss - rssBefore, args.join(" ")).toBeLessThan(100 * 2 ** 20);
    }
  });

  it("--config /dev/zero and a 1 GB benchmark file end a process with exit 2 in under 2 s of CPU and 200 MB (the process boundary is the point: its peak RSS)", () => {
    const big = sparse("bench.json", GB);
    // Reports the process's peak RSS (kB) and CPU time (µs) as it exits: CPU, not wall-clock time, which a loaded machine stretches.
    const usage = `--import=data:text/javascript,process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("usage "+u.maxRSS+" "+(u.userCPUTime+u.systemCPUTime)+"\\n")})`;
    for (const args of [["run", "auratown", "--seed", "1", "--config", "/dev/zero", "--log", join(work, "p")], ["eval", "factual", "--file", big, "--condition", "fixed-probe", "--out", join(work, "pe")]]) {
      const r = spawnSync(process.execPath, [usage, CLI, ...args], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      expect(r.status, r.stderr).toBe(2);
      const [, rssKb, cpuUs] = /usage (\d+) (\d+)/.exec(r.stderr)?.map(Number) ?? [];
      expect(rssKb, r.stderr).toBeGreaterThan(0);
      expect(rssKb! * 1024, args.join(" ")).toBeLessThan(200 * 2 ** 20);
      // Node's start and the command line's modules take most of it; an unbounded read took minutes.
      expect(cpuUs! / 1e6, args.join(" ")).toBeLessThan(2);
    }
  });
});

describe("parsed inputs refuse the keys that name an object's prototype", () => {
  it("finds the key at any depth, naming where it is, without recursing", () => {
    expect(inputShapeProblem(JSON.parse('{"a":{"b":[1,{"__proto__":{}}]}}'))).toEqual({ reason: "key", key: "__proto__", at: "a.b[1].__proto__" });
    expect(inputShapeProblem({ agents: [{ name: "x", constructor: 1 }] })).toEqual({ reason: "key", key: "constructor", at: "agents[0].constructor" });
    expect(inputShapeProblem({ prototype: null })).toEqual({ reason: "key", key: "prototype", at: "prototype" });
    expect(inputShapeProblem({ proto: 1, constructors: [], a: { prototypes: 2 } })).toBeNull();
    const e = error(() => checkParsedInput({ a: JSON.parse('{"__proto__":1}') as unknown }, "--config x.json"));
    expect(e).toBeInstanceOf(InputKeyForbidden);
    expect((e as InputKeyForbidden).exitCode).toBe(2);
    expect((e as InputKeyForbidden).fields).toEqual({ label: "--config x.json", key: "__proto__", at: "a.__proto__" });
  });

  it("an input nested past MAX_INPUT_DEPTH is refused, naming where (50,000 nested arrays overflowed the stack of what read them: exit 4)", async () => {
    const nested = (n: number): unknown => JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`);
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH))).toBeNull();
    expect(inputShapeProblem(nested(MAX_INPUT_DEPTH + 1))).toEqual({ reason: "depth", at: `${"[0]".repeat(MAX_INPUT_DEPTH)}`, limit: MAX_INPUT_DEPTH });
    const e = error(() => checkParsedInput(nested(50_000), "spec.json"));
    expect(e).toBeInstanceOf(InputNestedTooDeep);
    expect((e as InputNestedTooDeep).fields.limit).toBe(MAX_INPUT_DEPTH);
    const deep = join(work, "deep.json");
    writeFileSync(deep, `${"[".repeat(50_000)}${"]".repeat(50_000)}`);
    for (const args of [["experiment", deep], ["run", "auratown", "--seed", "1", "--config", deep, "--log", join(work, "deep-run")], ["eval", "factual", "--file", deep, "--condition", "fixed-probe", "--out", join(work, "deep-eval")]]) {
      const r = await runCli(args);
      expect(r.code, `${args.join(" ")}\n${r.err}`).toBe(2);
      expect(r.err).toContain(`${args[0] === "experiment" ? deep : args.includes("--config") ? `--config ${deep}` : `--file ${deep}`}: nested more than ${MAX_INPUT_DEPTH} objects or arrays deep (at ${"[0]".repeat(MAX_INPUT_DEPTH)}); an input is refused past that depth\n`);
    }
  });

  it("--config (inline or a file) with such a key is refused (exit 2) naming the key, before anything runs", async () => {
    const file = join(work, "proto-config.json");
    writeFileSync(file, '{"memory":{"constructor":{"capacity":3}}}');
    const inline = '{"__proto__":{"extraAgents":3}}';
    for (const [config, message] of [
      [inline, `--config ${inline}: key '__proto__' (at __proto__) is refused in an input: it names an object's prototype; remove or rename it`],
      [file, `--config ${file}: key 'constructor' (at memory.constructor) is refused in an input: it names an object's prototype; remove or rename it`],
    ] as const) {
      const log = join(work, `proto-run-${config === file ? "file" : "inline"}`);
      const r = await runCli(["run", "auratown", "--seed", "1", "--ticks", "2", "--config", config, "--log", log]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toBe(`probetown: error: ${message}\n`);
      expect(existsSync(log)).toBe(false);
    }
  });

  it("an experiment spec (YAML) and a results row with such a key are refused, naming the key", () => {
    const spec = join(work, "proto.yaml");
    writeFileSync(spec, "name: x\nbenchmark: implicit\nreport:\n  prototype: 1\n");
    const e = error(() => loadSpec(spec));
    expect(e).toBeInstanceOf(InputKeyForbidden);
    expect((e as InputKeyForbidden).fields).toEqual({ label: spec, key: "prototype", at: "report.prototype" });
    const rows = error(() => parseResults('{"__proto__":{"v":1}}\n', "rows.jsonl"));
    expect(rows).toBeInstanceOf(ResultsInvalid);
    expect((rows as ResultsInvalid).exitCode).toBe(2);
    expect((rows as Error).message).toContain("rows.jsonl:1: field '__proto__': key '__proto__' is refused in an input (it names an object's prototype)");
  });
});

describe("numeric flags have ceilings that name the limit", () => {
  it("report --bootstrap above its ceiling is exit 2 naming the flag and the limit (a trillion was an allocation failure, exit 4)", async () => {
    const r = await runCli(["report", join(work, "no-rows.jsonl"), "--out", join(work, "r"), "--bootstrap", "1000000000000"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--bootstrap expects an integer ≤ ${MAX_BOOTSTRAP_ITERATIONS} (resamples per comparison), got '1000000000000'`);
    expect((await runCli(["report", join(work, "no-rows.jsonl"), "--out", join(work, "r"), "--bootstrap", "1e12"])).code).toBe(2);
    // The service refuses it too, for a spec's report.bootstrap or a caller of its own.
    const e = error(() => analyze([], { bootstrapIterations: 1e12 }));
    expect(e).toBeInstanceOf(ReportOptionInvalid);
    expect((e as ReportOptionInvalid).flag).toBe("--bootstrap");
    expect((e as ReportOptionInvalid).reason).toBe(`expected an integer from 1 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")} (resamples per comparison), got 1000000000000`);
    const spec = join(work, "boot.json");
    writeFileSync(spec, JSON.stringify({ name: "x", benchmark: "implicit", report: { bootstrap: 1e12 } }));
    const specError = error(() => loadSpec(spec));
    expect(specError).toBeInstanceOf(UsageError);
    expect((specError as Error).message).toContain(`field 'report.bootstrap': expected an integer from 100 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")}`);
  });

  it("sweep --workers above WORKERS_PER_CORE × cores needs --many-workers, and never exceeds MAX_WORKERS", async () => {
    expect(() => checkWorkers(8, false, 2)).not.toThrow();
    const e = error(() => checkWorkers(9, false, 2));
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toBe(`--workers 9: at most 8 (${WORKERS_PER_CORE} per core, 2 cores here) unless --many-workers says so (up to ${MAX_WORKERS})`);
    expect(() => checkWorkers(9, true, 2)).not.toThrow();
    const over = WORKERS_PER_CORE * availableParallelism() + 1;
    const r = await runCli(["sweep", "envprobe", "--seeds", "1", "--workers", String(over)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`--workers ${over}: at most ${over - 1}`);
    const huge = await runCli(["sweep", "envprobe", "--seeds", "1", "--workers", "100000", "--many-workers"]);
    expect(huge.code).toBe(2);
    expect(huge.err).toContain(`--workers expects an integer ≤ ${MAX_WORKERS}, got '100000'`);
  });

  it("--ticks above MAX_TICKS is refused for every world, naming the limit", async () => {
    for (const args of [["run", "aura-scene", "--seed", "1"], ["sweep", "auratown", "--seeds", "1"]]) {
      const r = await runCli([...args, "--ticks", String(MAX_TICKS + 1)]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`--ticks expects an integer ≤ ${MAX_TICKS} (ticks per episode), got '${MAX_TICKS + 1}'`);
    }
  });
});

describe("the worlds' own counts have ceilings too", () => {
  it("tasks generate --count, eval enacttom --runs and fidelity --envprobe-seeds name theirs (each ran without end)", async () => {
    const cases: [string[], string][] = [
      [["tasks", "generate", "--seed", "1", "--count", "1000000000", "--out", join(work, "tg")], "--count expects an integer ≤ 10000 (tasks), got '1000000000'"],
      [["eval", "enacttom", "--runs", "900000000", "--out", join(work, "en")], "--runs expects an integer ≤ 100 (runs per task), got '900000000'"],
      [["fidelity", "--envprobe-seeds", "900000000", "--out", join(work, "f.md")], "--envprobe-seeds expects an integer ≤ 10000 (seeds: the paper's n is 220), got '900000000'"],
      [["report-envprobe", work, "--out", join(work, "re"), "--bootstrap", "1000000000"], `--bootstrap expects an integer ≤ ${MAX_BOOTSTRAP_ITERATIONS} (resamples per comparison), got '1000000000'`],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toContain(message);
    }
  });
});

describe("--log on a filesystem that holds no files", () => {
  const virtual = existsSync("/proc") && statfsSync("/proc").blocks === 0;
  it.runIf(virtual)("--log /proc/x says it cannot be written (it said 0.0 GiB free)", async () => {
    const r = await runCli(["run", "auratown", "--seed", "1", "--ticks", "2", "--log", "/proc/x"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe("probetown: error: --log /proc/x: cannot write to /proc (a virtual filesystem, which holds no files); choose a directory you can write to\n");
  });
});

mkdirSync(work, { recursive: true });
