// The kernel's and the distributed services' errors are data: each site raises a class with typed
// fields (services/kernel/errors.ts, services/distributed/errors.ts) keeping the exit code it had,
// and the words come from the command line's table (services/cli/messages.ts), checked here for a
// few entries against the text the command line printed before the errors became data.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT, exitCodeFor } from "../services/cli/exitCodes.ts";
import { MESSAGES, messageFor } from "../services/cli/messages.ts";
import { ConditionsInvalid, SeedsInvalid } from "../services/distributed/errors.ts";
import { parseSeeds } from "../services/distributed/jobs.ts";
import { ActorStateMissing, FlagValueInvalid, ForkTicksTooFew, LogDirUnusable, LogEmpty, LogStartInvalid, NotAnEpisode, WorldUnknown } from "../services/kernel/errors.ts";
import { explicitLogDir, forkTicks } from "../services/kernel/episodes.ts";
import { headerOf, resolveEpisodeDir } from "../services/kernel/replay.ts";
import { worldModuleNamed } from "../services/kernel/worlds.ts";
import type { LogRecord } from "../events/record.ts";
import { tempDir } from "./helpers.ts";

/** What `run` raised, for asserting on its class and fields. */
function raised(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("services raise typed errors", () => {
  it("an episode path that is none says which way, keeping exit 2", () => {
    const dir = tempDir("errors");
    const missing = raised(() => resolveEpisodeDir(join(dir, "absent")));
    expect(missing).toBeInstanceOf(NotAnEpisode);
    expect((missing as NotAnEpisode).fields).toEqual({ path: join(dir, "absent"), reason: "missing" });
    expect(exitCodeFor(missing)).toBe(EXIT.usage);
    expect((raised(() => resolveEpisodeDir(dir)) as NotAnEpisode).fields.reason).toBe("no-log-folder");
    const trace = join(dir, "trace.jsonl");
    writeFileSync(trace, "");
    expect((raised(() => resolveEpisodeDir(trace)) as NotAnEpisode).fields).toEqual({ path: trace, reason: "not-a-log-segment" });
  });

  it("flags out of form name the flag and the value", () => {
    const dir = tempDir("errors");
    const file = join(dir, "file");
    writeFileSync(file, "");
    expect((raised(() => explicitLogDir(" ")) as LogDirUnusable).fields).toEqual({ given: " ", reason: "empty" });
    expect((raised(() => explicitLogDir(file)) as LogDirUnusable).fields).toEqual({ given: file, reason: "is-a-file" });
    const backwards = raised(() => parseSeeds("1,9-3"));
    expect(backwards).toBeInstanceOf(SeedsInvalid);
    expect((backwards as SeedsInvalid).fields).toEqual({ part: "9-3", reason: "backwards" });
    expect((raised(() => parseSeeds("1-2000000")) as SeedsInvalid).fields).toEqual({ part: "1-2000000", reason: "too-many", count: 2_000_000, max: 1_000_000 });
    expect((raised(() => parseSeeds("a")) as SeedsInvalid).fields.reason).toBe("form");
    expect(exitCodeFor(backwards)).toBe(EXIT.usage);
  });

  it("a fork without a tick left, an unknown world and a log that starts wrong carry their numbers and names", () => {
    // Without --ticks the world is not asked whether it fixes its length.
    const tooFew = raised(() => forkTicks({ world: {} as never, ticks: 5 }, 4, undefined));
    expect(tooFew).toBeInstanceOf(ForkTicksTooFew);
    expect((tooFew as ForkTicksTooFew).fields).toEqual({ atTick: 4, ticks: 5, asked: false });
    const unknown = raised(() => worldModuleNamed("no-such-world"));
    expect(unknown).toBeInstanceOf(WorldUnknown);
    expect((unknown as WorldUnknown).fields.name).toBe("no-such-world");
    expect(exitCodeFor(unknown)).toBe(EXIT.usage);
    const empty = raised(() => headerOf([], "jetstream:ns/ep"));
    expect((empty as LogEmpty).fields).toEqual({ file: "jetstream:ns/ep", hint: "check-id-and-namespace" });
    const first = { seq: 0, type: "tick.committed", tick: 0, payload: {} } as unknown as LogRecord;
    expect((raised(() => headerOf([first], "x/log")) as LogStartInvalid).fields).toEqual({ file: "x/log", seq: 0, found: "tick.committed" });
  });

  it("a broken promise between sequencer and actor hosts stays exit 4", () => {
    expect(exitCodeFor(new ActorStateMissing({ actor: "a1", what: "state" }))).toBe(EXIT.internal);
  });
});

describe("the command line words them (services/cli/messages.ts)", () => {
  it("keeps the wording it printed before", () => {
    expect(MESSAGES.NotAnEpisode({ path: "runs/x", reason: "missing" })).toBe("runs/x: no such episode directory");
    expect(MESSAGES.FlagValueInvalid({ flag: "--ticks", expected: "positive-integer", got: "0" })).toBe("--ticks: expected a positive integer, got 0");
    expect(MESSAGES.SeedsInvalid({ part: "9-3", reason: "backwards" })).toBe("--seeds: range '9-3' runs backwards");
    expect(MESSAGES.SeedsInvalid({ part: "1-2000000", reason: "too-many", count: 2_000_000, max: 1_000_000 })).toBe("--seeds: range '1-2000000' has 2000000 seeds; at most 1,000,000 per sweep");
    expect(MESSAGES.ForkTicksTooFew({ atTick: 4, ticks: 5, asked: false })).toBe("--at 4: the parent runs 5 ticks, so its child would have none left; fork earlier, or give the child --ticks n (n > 5)");
    expect(MESSAGES.ForkTickMissing({ atTick: 9, committed: { first: 0, last: 3 } })).toBe("--at 9: the parent has no committed tick 9 (committed ticks: 0–3)");
    expect(MESSAGES.ConditionsInvalid({ world: "w", known: ["a", "b"], unknown: "c" })).toBe("--conditions: unknown condition 'c' for w (known: a, b)");
    expect(MESSAGES.WorldUnknown({ name: "x", known: [] })).toBe("unknown world 'x' (known: none registered)");
  });

  it("an error's own message is its wording, and other errors print their message", () => {
    const error = new ConditionsInvalid({ world: "w", known: ["a"] });
    expect(error.message).toBe("--conditions: expected at least one condition (known: a)");
    expect(messageFor(error)).toBe(error.message);
    expect(messageFor(new FlagValueInvalid({ flag: "--seed", expected: "seed", got: "-1" }))).toMatch(/^--seed: expected .+, got -1$/);
    expect(messageFor(new RangeError("plain"))).toBe("plain");
  });
});
