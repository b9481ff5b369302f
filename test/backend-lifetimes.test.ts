// A run releases what it opened in one fixed order, the transport, then the log, then the trace
// (so the trace still sees the log close), whether it succeeds or fails; a failed run's error is
// the one it rejects with, even when a release fails too. Shown with a recording fake backend
// around the embedded one.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedBackend, type Backend } from "../infra/backend.ts";
import { ExitCode, TaggedError } from "../events/taggedError.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { withResources } from "../infra/resources.ts";
import { tempDir } from "./helpers.ts";

class ObserverFailed extends TaggedError {
  readonly _tag = "ObserverFailed";
  readonly exitCode = ExitCode.internal;
}

interface Recording {
  readonly backend: Backend;
  readonly events: string[];
  /** What the log's close was told the run failed with (undefined: it did not). */
  readonly logFailures: unknown[];
}

/** The embedded backend, recording each open and release; `failing` names a release that throws, `refuseLog` makes opening the log fail. */
function recordingBackend(failing?: "transport" | "log" | "trace", refuseLog = false): Recording {
  const events: string[] = [];
  const logFailures: unknown[] = [];
  const fail = (what: string): void => {
    if (failing === what) throw new ObserverFailed(`closing the ${what} failed`);
  };
  const backend: Backend = {
    eventStores: {
      ...embeddedBackend.eventStores,
      create: async (location, options) => {
        events.push("open log");
        if (refuseLog) throw new ObserverFailed("opening the log failed");
        return embeddedBackend.eventStores.create(location, options);
      },
      close: async (store, failure) => {
        events.push("close log");
        logFailures.push(failure);
        await embeddedBackend.eventStores.close(store, failure);
        fail("log");
      },
    },
    snapshotStores: embeddedBackend.snapshotStores,
    transports: {
      open: () => {
        events.push("open transport");
        const transport = embeddedBackend.transports.open();
        const close = transport.close.bind(transport);
        transport.close = async () => {
          events.push("close transport");
          await close();
          fail("transport");
        };
        return transport;
      },
    },
    tracing: {
      open: (config) => {
        events.push("open trace");
        const telemetry = embeddedBackend.tracing.open(config);
        return {
          get enabled() { return telemetry.enabled; },
          get tracer() { return telemetry.tracer; },
          get description() { return telemetry.description; },
          flush: () => telemetry.flush(),
          undelivered: () => telemetry.undelivered(),
          shutdown: async () => {
            events.push("close trace");
            await telemetry.shutdown();
            fail("trace");
          },
        };
      },
    },
  };
  return { backend, events, logFailures };
}

const OPENED = ["open trace", "open log", "open transport"];
const RELEASED = ["close transport", "close log", "close trace"];

const run = (backend: Backend, failAtTick?: number) =>
  runEpisode(
    {
      world: "auratown", seed: 7, ticks: 3, dir: join(tempDir("lifetimes"), "ep"), trace: { exporter: "none" },
      ...(failAtTick === undefined ? {} : { observer: { onTick: (result) => { if (result.tick === failAtTick) throw new ObserverFailed(`tick ${failAtTick}`); } } }),
    },
    backend,
  );

describe("a run's resources", () => {
  it("are released transport, log, trace after a run that succeeds", async () => {
    const r = recordingBackend();
    const result = await run(r.backend);
    expect(result.ticks).toBe(3);
    expect(r.events).toEqual([...OPENED, ...RELEASED]);
    expect(r.logFailures).toEqual([undefined]);
  });

  it("are released in the same order when the run fails, the log told why, and the run's error is thrown", async () => {
    const r = recordingBackend();
    const error = await run(r.backend, 1).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(ObserverFailed);
    expect(r.events).toEqual([...OPENED, ...RELEASED]);
    expect(r.logFailures).toEqual([error]);
  });

  it("are all released when one release fails as well, and the run's own error wins", async () => {
    const r = recordingBackend("transport");
    const error = await run(r.backend, 0).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ message: "tick 0" });
    expect(r.events).toEqual([...OPENED, ...RELEASED]);
  });

  it("are all released when a release fails after a run that succeeded, which then rejects with that failure", async () => {
    const r = recordingBackend("log");
    const error = await run(r.backend).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ message: "closing the log failed" });
    expect(r.events).toEqual([...OPENED, ...RELEASED]);
  });

  it("opened before a failure are released, and nothing after it is opened", async () => {
    const r = recordingBackend(undefined, true);
    const error = await run(r.backend).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ message: "opening the log failed" });
    expect(r.events).toEqual(["open trace", "open log", "close trace"]);
  });
});

describe("withResources", () => {
  it("releases last opened first, each with the failure, and keeps the body's error over a release's", async () => {
    const released: string[] = [];
    const boom = new ObserverFailed("body");
    const outcome = await withResources(async (resources) => {
      resources.add("a", async (name, failure) => void released.push(`${name}:${String((failure as Error | undefined)?.message)}`));
      resources.add("b", async () => {
        released.push("b");
        throw new ObserverFailed("release b");
      });
      throw boom;
    }).then(() => null, (e: unknown) => e);
    expect(outcome).toBe(boom);
    expect(released).toEqual(["b", "a:body"]);
  });
});
