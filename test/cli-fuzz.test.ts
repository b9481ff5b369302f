// The command line under random flags, values and files (issue 27): for the commands that read
// (verify, replay, inspect, diff, repair, worlds, report, report-envprobe, tasks show, experiment
// with a spec that is none), whatever a user types ends in an exit code of what it is, never an
// internal error (exit 4) nor a stack trace. In process (runCli): a few thousand calls. Commands
// that run episodes (run, fork, sweep, eval, ask) are left out: a draw could run a long one. The
// draws are seeded (PROBETOWN_FUZZ_SEED, PROBETOWN_FUZZ_RUNS to explore others); it found an
// experiment spec of 50,000 nested arrays overflowing the stack (exit 4).
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdirSync, writeFileSync, cpSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { firstSegment, runCli, tempDir } from "./helpers.ts";

const work = tempDir("cli-fuzz");
const cwd = join(work, "cwd");
const files: Record<string, string> = {};

/** What a flag's value may be: numbers of every form, words, and paths of every kind. */
const NUMBERS = ["0", "1", "2", "-1", "3", "100", "1e12", "1000000000000", "9007199254740993", "NaN", "1.5", "0x10", "", " ", "-0", "+5", "99999999999999999999"];
const WORDS = ["x", "baseline", "no-reflection", "lin-wei", "agent/lin-wei", "env/auratown", "implicit", "recall", "all", "--json", "-q", "é", "a".repeat(300), "{}", "[]", '{"__proto__":{}}', "'", "\\", "..", "~"];

/** `--out`, `--log`, `--runs`: places under this test's folder only (a draw must write nowhere else). */
const outPaths = (n: number) => [join(work, `out-${n}`), join(work, "out-file"), join(work, "episode", "log", "o"), `rel-${n}`, ""];

const WRITES = new Set(["--out", "--log", "--runs", "--pool"]);

/** Each command's arguments (`prefer`: the inputs it reads, drawn most often: names in `files`, or words), its flags with a value, and its switches. */
const COMMANDS: Record<string, { readonly positional: number; readonly prefer: readonly string[]; readonly flags: readonly string[]; readonly switches: readonly string[] }> = {
  verify: { positional: 1, prefer: ["episode", "child", "grid", "segment"], flags: [], switches: ["--json", "-q"] },
  replay: { positional: 1, prefer: ["episode", "child", "segment"], flags: ["--to-tick", "--agent"], switches: ["--state", "--snapshot", "--json"] },
  inspect: { positional: 1, prefer: ["episode", "child"], flags: ["--from", "--to", "--agent"], switches: ["--json", "--all"] },
  diff: { positional: 2, prefer: ["episode", "child", "grid"], flags: [], switches: ["--exit-code", "--json"] },
  repair: { positional: 1, prefer: ["episode", "child", "segment"], flags: [], switches: [] },
  worlds: { positional: 0, prefer: [], flags: [], switches: [] },
  report: { positional: 1, prefer: ["results", "resultsProto", "results"], flags: ["--out", "--reference", "--metric", "--bootstrap", "--seed", "--title"], switches: ["--json"] },
  "report-envprobe": { positional: 1, prefer: ["grid", "episode"], flags: ["--out", "--bootstrap", "--seed", "--title"], switches: ["--json"] },
  "tasks show": { positional: 1, prefer: ["@tea-for-two", "@laundry-day", "@gen-coop-d2-standard-s7", "task"], flags: [], switches: ["--json"] },
  experiment: { positional: 1, prefer: ["spec", "proto", "deep"], flags: [], switches: ["--report-only", "--json", "-q"] },
};
/** Values a flag of each kind is drawn from most often (others: any value). */
const FLAG_VALUES: Record<string, readonly string[]> = {
  "--to-tick": ["0", "1", "2", "5"], "--from": ["0", "1", "3"], "--to": ["0", "2", "9"], "--agent": ["lin-wei", "Lin Wei", "agent/lin-wei", "nobody"],
  "--bootstrap": ["100", "200", "99", "500001"], "--seed": ["0", "7"], "--reference": ["a", "b", "c", "a,b"], "--metric": ["implicit", "recall", "llm-implicit", "x"], "--title": ["t", "<b>"],
};
// A flag given to a command without it, or a namespace without --nats: refused before anything runs.
const STRAYS = ["--namespace", "--nats", "--seed", "--bogus", "--ticks", "--workers", "--config"];

beforeAll(async () => {
  mkdirSync(cwd, { recursive: true });
  const episode = join(work, "episode");
  expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "3", "--log", episode, "-q"])).code).toBe(0);
  const child = join(work, "child");
  expect((await runCli(["fork", episode, "--at", "1", "--condition", "no-reflection", "--log", child, "-q"])).code).toBe(0);
  const grid = join(work, "grid");
  expect((await runCli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,periodic", "--regimes", "low", "--seeds", "0-1", "--log", grid, "-q"])).code).toBe(0);
  const write = (name: string, text: string) => {
    const file = join(work, name);
    writeFileSync(file, text);
    return file;
  };
  const row = (condition: string, query: number, seed: number) =>
    JSON.stringify({ v: 1, benchmark: "implicit", condition, backend: "deterministic", query, scene: "A", subcategory: "mood", seed, literalCoverage: 1, implicitCoverage: condition === "a" ? 0.5 + query / 1000 : 0.4, probes: 1, disclosure: 1, goldToolRecall: 1, forbiddenViolations: 0, correct: null, log: "runs/x" });
  const rows = ["a", "b"].flatMap((c) => [1, 2, 3].flatMap((q) => [1, 2].map((s) => row(c, q, s))));
  const big = write("big.json", "");
  truncateSync(big, 300 * 2 ** 20);
  Object.assign(files, {
    episode, child, grid,
    segment: firstSegment(episode),
    task: write("task.json", '{"id":"x","max_turns":3}'),
    trace: join(episode, "trace.jsonl"),
    snapshots: join(episode, "snapshots"),
    results: write("results.jsonl", `${rows.join("\n")}\n`),
    resultsProto: write("results-proto.jsonl", `${rows[0]}\n{"__proto__":{"v":1}}\n`),
    garbage: write("garbage.json", "\u0001\u0002not json at all {"),
    empty: write("empty.json", ""),
    proto: write("proto.json", '{"a":{"constructor":{}},"queries":[]}'),
    array: write("array.json", "[1,2,3]"),
    deep: write("deep.json", `${"[".repeat(50_000)}${"]".repeat(50_000)}`),
    spec: write("spec.yaml", "name: x\nbenchmark: nope\nseeds: [1, 2]\n"),
    big,
    dir: work,
    missing: join(work, "missing"),
    root: "/",
    devZero: "/dev/zero",
    devNull: "/dev/null",
    proc: "/proc/x",
  });
}, 120_000);

describe("the command line under random input", () => {
  it("never ends in an internal error or a stack trace (2,000 draws over the reading commands)", async () => {
    const paths = () => Object.values(files);
    const value = (flag: string) =>
      WRITES.has(flag)
        ? fc.nat({ max: 20 }).chain((n) => fc.constantFrom(...outPaths(n)))
        : fc.oneof(fc.constantFrom(...NUMBERS), fc.constantFrom(...WORDS), fc.constantFrom(...paths()), fc.string({ maxLength: 12 }).filter((s) => !s.includes("\0")));
    const pair = (flag: string): fc.Arbitrary<string[]> =>
      flag === "--nats"
        ? fc.constant([flag, "http://127.0.0.1:1"])
        : fc.oneof({ weight: 2, arbitrary: FLAG_VALUES[flag] === undefined || WRITES.has(flag) ? value(flag) : fc.constantFrom(...FLAG_VALUES[flag]) }, { weight: 1, arbitrary: value(flag) }).map((v) => [flag, v]);
    const call = fc.constantFrom(...Object.keys(COMMANDS)).chain((name) => {
      const spec = COMMANDS[name]!;
      const own = spec.flags.length === 0 ? fc.constant<string[][]>([]) : fc.array(fc.constantFrom(...spec.flags).chain(pair), { maxLength: 3 });
      // Mostly the command's own flags; now and then one it has not (refused before anything runs).
      const flagPairs = fc.oneof({ weight: 4, arbitrary: own }, { weight: 1, arbitrary: fc.tuple(own, fc.constantFrom(...STRAYS).chain(pair)).map(([o, s]) => [...o, s]) });
      const preferred = spec.prefer.map((p) => (p.startsWith("@") ? p.slice(1) : files[p]!));
      const argument = fc.oneof(
        ...(preferred.length === 0 ? [] : [{ weight: 5, arbitrary: fc.constantFrom(...preferred) }]),
        { weight: 2, arbitrary: fc.constantFrom<string>(...paths()) },
        { weight: 1, arbitrary: fc.constantFrom<string>(...WORDS) },
      );
      return fc.tuple(
        fc.constant<string[]>(name.split(" ")),
        fc.oneof({ weight: 6, arbitrary: fc.array(argument, { minLength: spec.positional, maxLength: spec.positional }) }, { weight: 1, arbitrary: fc.array(argument, { maxLength: spec.positional + 1 }) }),
        flagPairs,
        fc.subarray([...spec.switches]),
      ).map(([command, positional, pairs, switches]) => [...command, ...positional, ...pairs.flat(), ...switches]);
    });
    const seed = Number(process.env.PROBETOWN_FUZZ_SEED ?? 27);
    await fc.assert(
      fc.asyncProperty(call, async (args) => {
        const r = await runCli(args, cwd);
        const stack = /\n\s+at .+:\d+:\d+\)?\n/.test(r.err);
        if (r.code === 4 || stack || r.code === null) throw new Error(`probetown ${JSON.stringify(args)} ended ${r.code}:\n${r.err.slice(0, 2000)}`);
        expect([0, 1, 2, 3]).toContain(r.code);
      }),
      { numRuns: Number(process.env.PROBETOWN_FUZZ_RUNS ?? 2000), seed, endOnFailure: true },
    );
  }, 600_000);
});
