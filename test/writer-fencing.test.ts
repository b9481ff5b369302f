// Fencing (issue 27): a writer that may no longer hold its episode's writer lock cannot append, on
// either store. JetStream: a writer paused past its lock's ttl (its renewals stopped, so the entry
// may have expired and been taken) fences itself at its next append or renewal. Files: a pid lock
// does not expire, but a lock file that names another process (taken over from a host that saw
// this pid as dead) or was removed fences the writer at its next write (its tick's commit).
import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Draft } from "../events/record.ts";
import { SequenceConflict } from "../events/errors.ts";
import { StaleWriter } from "../infra/eventStore.ts";
import { createFileEventStore, readLog } from "../infra/fileEventStore.ts";
import { createJetStreamEventStore, readJetStreamLog, resumeJetStreamEventStore, MIN_LOCK_TTL_MS } from "../infra/jetStreamEventStore.ts";
import { connectNats } from "../infra/nats.ts";
import { tempDir } from "./helpers.ts";
import { startTestNats } from "./natsServer.ts";

const phase = (tick: number): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase: `p${tick}` }, tick, cause: null });
const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection"); }, (e: unknown) => e);

/** Stops this thread's event loop for `ms`, as SIGSTOP or a frozen VM stops a writer: no timer runs. */
const pauseThread = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const expectFenced = (error: unknown, fence: StaleWriter["fence"]) => {
  expect(error).toBeInstanceOf(StaleWriter);
  expect(error).toBeInstanceOf(SequenceConflict);
  expect((error as StaleWriter)._tag).toBe("SequenceConflict");
  expect((error as StaleWriter).exitCode).toBe(2);
  expect((error as StaleWriter).fence).toBe(fence);
};

describe("fencing a file-store writer", () => {
  const work = tempDir("fencing");

  it("a writer whose lock file names another process, or was removed, writes nothing more; close leaves the other's lock", async () => {
    for (const how of ["taken", "removed"] as const) {
      const log = join(work, how, "log");
      const store = createFileEventStore(log, { episode: `e-${how}` });
      await store.append([phase(0)], { expectedSeq: -1 });
      await store.commit();
      // A pid lock does not expire: paused, the writer still holds it.
      pauseThread(50);
      await store.append([phase(1)], { expectedSeq: 0 });
      const lockFile = join(log, "writer.lock");
      // As takePidLock takes over a lock whose holder it sees dead (from another host, say).
      if (how === "taken") writeFileSync(lockFile, "4194000\n");
      else writeFileSync(lockFile, "");
      // A tick's records are written at its commit, after the lock is checked: the commit is
      // refused, and the tick's records appended before the takeover are not written either.
      await store.append([phase(2)], { expectedSeq: 1 });
      expectFenced(await rejection(store.commit()), "lock-taken-over");
      // Fenced for good: nothing more is taken.
      expectFenced(await rejection(store.append([phase(1)], { expectedSeq: 0 })), "lock-taken-over");
      await store.close();
      expect(readLog(log).map((r) => r.seq)).toEqual([0]);
      if (how === "taken") expect(readFileSync(lockFile, "utf8")).toBe("4194000\n");
    }
  });
});

const server = await startTestNats();
const nc = await connectNats(server.url, { name: "writer-fencing-test" });
afterAll(async () => {
  await nc.close().catch(() => undefined);
  await server.stop();
}, 30_000);

describe("fencing a JetStream writer", () => {

  it("a writer paused past its lock's ttl cannot append or commit, whichever it does first; a resume takes the episode over", async () => {
    const ns = server.namespace("paused");
    const ttl = MIN_LOCK_TTL_MS;
    // A: its next step after the pause is an append. B: the renewal timer runs first, then it commits.
    const a = await createJetStreamEventStore(nc, ns, "ep-a", { episode: "ep-a", lockTtlMs: ttl });
    const b = await createJetStreamEventStore(nc, ns, "ep-b", { episode: "ep-b", lockTtlMs: ttl });
    for (const store of [a, b]) {
      await store.append([phase(0)], { expectedSeq: -1 });
      await store.commit();
    }
    await b.append([phase(1)], { expectedSeq: 0 });
    pauseThread(ttl + 500);
    expectFenced(await rejection(a.append([phase(1)], { expectedSeq: 0 })), "paused-past-ttl");
    // Timers overdue by the pause run now (the renewal's own check), before B's commit.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expectFenced(await rejection(b.commit()), "paused-past-ttl");
    // Fenced for good: nothing more is taken.
    expectFenced(await rejection(a.append([phase(1)], { expectedSeq: 0 })), "paused-past-ttl");
    await a.close();
    await b.close();
    expect((await readJetStreamLog(nc, ns, "ep-a")).map((r) => r.seq)).toEqual([0]);
    expect((await readJetStreamLog(nc, ns, "ep-b")).map((r) => r.seq)).toEqual([0]);
    // The episode goes on under a new lock, from where the fenced writer's last publish left it.
    const { store: next, records } = await resumeJetStreamEventStore(nc, ns, "ep-b", { episode: "ep-b", lockTtlMs: ttl });
    expect(records.map((r) => r.seq)).toEqual([0]);
    await next.append([phase(1)], { expectedSeq: 0 });
    await next.close();
    expect((await readJetStreamLog(nc, ns, "ep-b")).map((r) => r.seq)).toEqual([0, 1]);
  }, 60_000);

  it("a writer that keeps running keeps its lock past the ttl (renewed), and appends", async () => {
    const ns = server.namespace("running");
    const store = await createJetStreamEventStore(nc, ns, "ep", { episode: "ep", lockTtlMs: MIN_LOCK_TTL_MS });
    await store.append([phase(0)], { expectedSeq: -1 });
    await store.commit();
    // Event-driven waits, never a frozen loop: the renewal timer runs throughout.
    await new Promise((resolve) => setTimeout(resolve, MIN_LOCK_TTL_MS + 500));
    await store.append([phase(1)], { expectedSeq: 0 });
    await store.commit();
    await store.close();
    expect((await readJetStreamLog(nc, ns, "ep")).map((r) => r.seq)).toEqual([0, 1]);
  }, 60_000);
});
