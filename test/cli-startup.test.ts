// Issue 22: the command line starts fast. Its program definition (services/cli/main.ts and what it
// imports) loads no NATS client, OpenTelemetry, model client, Effect or xstate: each command's
// action, and what it needs, is loaded when that command runs. Checked by running the CLI with a
// module hook that records every module resolved (no timings: machines are noisy), and by mapping
// every error class to its exit code by its tag, without `instanceof` against the heavy modules' classes.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { registeredWorlds } from "../services/kernel/worlds.ts";
import { loadWorldClis, WORLD_NAMES } from "../services/worlds.ts";
import { InvalidPayload, isDamage, LogCorrupted, SequenceConflict, SnapshotDamaged, TornTail, UnknownEventType } from "../events/errors.ts";
import { CompactLogReadOnly, CompactRecordDamaged } from "../events/compactLog.ts";
import { EpisodeExists, StorageFailed, WriterLocked } from "../infra/eventStore.ts";
import { InvalidSubjectToken, NatsReplicasInvalid, NatsUnavailable } from "../infra/nats.ts";
import { ReplicasMismatch } from "../infra/jetstream/replicas.ts";
import { InputRejected } from "../events/inputRejected.ts";
import { InternalError } from "../events/internalError.ts";
import { JobRejected } from "../infra/jobQueue.ts";
import { ReportOptionInvalid } from "../services/analysis/report.ts";
import { ResultsInvalid } from "../services/analysis/results.ts";
import { EXIT, EXIT_BY_TAG, exitCodeFor, tagOf } from "../services/cli/exitCodes.ts";
import { SweepStorageFailed } from "../services/cli/distributed.ts";
import { ActorFailed } from "../services/distributed/actorHost.ts";
import { NotEnvProbeEpisode } from "../services/envprobe/metrics.ts";
import { EnvprobeSweepFailed } from "../services/envprobe/natsSweep.ts";
import { FlagInvalid } from "../services/kernel/usageError.ts";
import { LocalWorkersGone } from "../services/distributed/episodes.ts";
import { ActorHostLost, Interrupted } from "../services/kernel/episodes.ts";
import { SpecInvalid } from "../services/aura/experiment.ts";
import { Divergence, EndOfLog, UsageError } from "../services/kernel/replay.ts";
import { CLI, repoRoot, tempDir } from "./helpers.ts";

/** Packages the CLI's startup must not load (a path segment of a resolved module). */
const HEAVY = ["@nats-io", "@opentelemetry", "openai", "effect", "xstate"];

const HOOK = `import { registerHooks } from "node:module";
import { writeFileSync } from "node:fs";
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on("exit", () => writeFileSync(process.env.PROBETOWN_MODULES_OUT, [...seen].join("\\n")));
`;

const work = tempDir("cli-startup");
const hook = join(work, "record-modules.mjs");
writeFileSync(hook, HOOK);

/** `probetown …` with every module it resolved (their URLs). */
function modulesOf(args: string[]): { code: number | null; out: string; err: string; modules: string[] } {
  const file = join(work, `modules-${args.join("_").replace(/[^\w-]/g, "_")}.txt`);
  const r = spawnSync(process.execPath, ["--import", hook, CLI, ...args], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", PROBETOWN_MODULES_OUT: file } });
  return { code: r.status, out: r.stdout, err: r.stderr, modules: readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) };
}

/** The heavy packages among resolved modules, by name. */
const heavyIn = (modules: readonly string[], packages: readonly string[] = HEAVY): string[] =>
  [...new Set(modules.flatMap((url) => packages.filter((p) => url.includes(`/node_modules/${p}/`))))].sort();

describe("CLI startup (issue 22)", () => {
  it("--version and --help load no NATS, OpenTelemetry, openai, Effect or xstate", () => {
    const version = modulesOf(["--version"]);
    expect(version.code).toBe(0);
    expect(version.out.trim()).toMatch(/^\d+\.\d+\.\d+/);
    // The hook sees the CLI's own modules too: it did record this run.
    expect(version.modules.some((url) => url.endsWith("/services/cli/main.ts"))).toBe(true);
    expect(heavyIn(version.modules)).toEqual([]);
    const help = modulesOf(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: probetown");
    expect(heavyIn(help.modules)).toEqual([]);
    // The worlds' command-line manifests are read (their commands are listed), their modules are not.
    for (const modules of [version.modules, help.modules]) {
      expect(modules.some((url) => /\/services\/[\w-]+\/cli\.ts$/.test(url))).toBe(true);
      expect(modules.filter((url) => /\/services\/[\w-]+\/module\.ts$/.test(url))).toEqual([]);
    }
  });

  it("a command's --help, and a flag refused before its action, load none of them either", () => {
    for (const args of [["run", "--help"], ["eval", "implicit", "--help"], ["help", "sweep"], ["ask", "--help"], ["run", "auratown", "--seed", "x"], ["replay", "x", "--namespace", "ns"], ["verify", "x", "--nats", "http://x"]]) {
      const r = modulesOf(args);
      expect(r.code, `${args.join(" ")}\n${r.err}`).toBe(args.includes("--help") || args[0] === "help" ? 0 : 2);
      expect(heavyIn(r.modules), args.join(" ")).toEqual([]);
    }
  });

  it("verify of a file log loads no NATS client nor model client", () => {
    const r = modulesOf(["verify", join(repoRoot, "test/fixtures/envprobe-pre-b0-graphnav-oracle"), "--quiet"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("OK: ");
    expect(heavyIn(r.modules, ["@nats-io", "openai"])).toEqual([]);
  });

  it("each world is registered under the name --help shows, in its order", () => {
    expect([...WORLD_NAMES]).toEqual(registeredWorlds().map((w) => w.definition.name));
  });

  it("every error maps to the exit code it had, by its tag, and carries that code itself", async () => {
    const damage = [
      new LogCorrupted({ file: "f", line: 1, seq: 0, reason: "r" }),
      new TornTail({ file: "f", line: 1, afterSeq: 0, bytes: 3 }),
      new UnknownEventType({ file: "f", seq: 0, type: "t" }),
      new InvalidPayload({ file: "f", seq: 0, type: "t", reason: "r" }),
      new SnapshotDamaged({ where: "w", reason: "r" }),
    ];
    for (const error of damage) {
      expect(isDamage(error)).toBe(true);
      expect(exitCodeFor(error), error._tag).toBe(EXIT.damaged);
      expect(error.exitCode, error._tag).toBe(EXIT.damaged);
    }
    const cases: Array<[unknown, number]> = [
      [new Divergence(3, 1, "differs", ["a", "b"]), EXIT.diverged],
      [new LocalWorkersGone("gone", false), EXIT.usage],
      [new LocalWorkersGone("gone", true), EXIT.internal],
      [new UsageError("bad"), EXIT.usage],
      [new SpecInvalid("spec.json", ["bad"]), EXIT.usage],
      [new InvalidSubjectToken("bad token"), EXIT.usage],
      [new NatsReplicasInvalid("PROBETOWN_NATS_REPLICAS: bad"), EXIT.usage],
      [new ReplicasMismatch("PT_LOG_default", 1, 3, false), EXIT.usage],
      [new SequenceConflict({ episode: "e", expected: 1, actual: 2 }), EXIT.usage],
      [new WriterLocked("e", "holder", "where"), EXIT.usage],
      [new EpisodeExists("e", "exists"), EXIT.usage],
      [new NatsUnavailable("nats://127.0.0.1:4222", new Error("refused")), EXIT.usage],
      [new ActorHostLost("e", "agent/a", "gone"), EXIT.usage],
      [new InputRejected("world", "unknown world 'x'"), EXIT.usage],
      [new InputRejected("config", "invalid auratown config: x"), EXIT.usage],
      [new InputRejected("flag", "--trace: x"), EXIT.usage],
      [new FlagInvalid("--seed expects an integer, got 'x'"), EXIT.usage],
      [new NotEnvProbeEpisode("auratown"), EXIT.usage],
      [new ReportOptionInvalid({ flag: "--metric", reason: "r" }), EXIT.usage],
      [new ResultsInvalid({ file: "f", problems: [] }), EXIT.usage],
      [new SweepStorageFailed("disk full"), EXIT.usage],
      [new CompactLogReadOnly("runs/x/log holds a compact log"), EXIT.usage],
      [new CompactRecordDamaged("hash mismatch"), EXIT.damaged],
      [new InternalError("cannot happen"), EXIT.internal],
      [new ActorFailed("agent/a", { type: "t", payload: {}, from: "env/e", seq: 1, tick: 0 }, new Error("boom")), EXIT.internal],
      [new EndOfLog(3), EXIT.internal],
      [new Interrupted("e", 1, 2, "SIGINT"), EXIT.internal],
      [new EnvprobeSweepFailed({ failures: [], jobs: 1 }), EXIT.internal],
      [new JobRejected("bad spec"), EXIT.internal],
      // A wrapper of ours that is internal, around a full disk, is the machine's trouble.
      [new JobRejected("no space", { cause: Object.assign(new Error("no space"), { code: "ENOSPC" }) }), EXIT.usage],
      // Only our errors' own codes count, not a library's `exitCode`.
      [Object.assign(new Error("commander"), { exitCode: 0 }), EXIT.internal],
      // The tag decides, never the wording: a plain error that reads like bad input is internal.
      [new Error("unknown world 'x'"), EXIT.internal],
      [Object.assign(new Error("no such file"), { code: "ENOENT" }), EXIT.usage],
      [new StorageFailed("f", "disk full", 3, true), EXIT.usage],
      [Object.assign(new Error("no space"), { code: "ENOSPC" }), EXIT.usage],
      [new Error("boom"), EXIT.internal],
      ["not an error", EXIT.internal],
    ];
    // The worlds' own error tags are in their manifests (services/cli/worldCli.ts `errors`).
    const tableCode = new Map<string, number>([...Object.entries(EXIT_BY_TAG), ...(await loadWorldClis()).flatMap((w) => Object.entries(w.errors ?? {}))]);
    for (const [error, code] of cases) {
      expect(exitCodeFor(error), String(error)).toBe(code);
      // The table and the class agree (a wrapper around a full disk excepted: the disk decides).
      const tag = tagOf(error);
      const own = error instanceof Error && "exitCode" in error ? error.exitCode : undefined;
      if (tag !== undefined && !(error instanceof JobRejected && error.cause !== undefined)) expect(own, String(error)).toBe(tableCode.get(tag));
    }
  });
});
