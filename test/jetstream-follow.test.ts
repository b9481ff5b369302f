// Following a JetStream log across a NATS server restart (killed, started again on the same
// store): the ordered consumer behind follow is gone with the server, and nats.js's own recovery
// could stall after one message; follow must go on from the record after the last one it
// yielded — no gap, no duplicate — and `probetown follow` must still end after the last tick.
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type { Draft, LogRecord } from "../events/record.ts";
import { createJetStreamEventStore, followJetStreamLog } from "../infra/jetStreamEventStore.ts";
import { connectNats, isNatsTimeout, natsName, NatsReadStalled } from "../infra/nats.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { runCli, startCli, until, withoutMetaLine } from "./helpers.ts";
import { startTestNats, type TestNats } from "./natsServer.ts";

const servers: TestNats[] = [];
const connections: NatsConnection[] = [];
afterAll(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  for (const s of servers) await s.stop();
}, 30_000);

/** A private server (each test restarts its own), or the shared one, and a connection to it. */
async function privateNats(own = true): Promise<{ server: TestNats; nc: NatsConnection }> {
  const server = await startTestNats({ own });
  servers.push(server);
  const nc = await connectNats(server.url, { name: "jetstream-follow-test" });
  connections.push(nc);
  return { server, nc };
}

const phase = (tick: number): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase: `p${tick}` }, tick, cause: null });

/**
 * Follows until seq `last` (or until `ms` pass: then it aborts and returns what it saw); `seen`
 * grows as it goes.
 */
function followUntil(nc: NatsConnection, ns: string, episode: string, last: number, ms: number): { readonly seen: readonly number[]; readonly done: Promise<number[]> } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  const seen: number[] = [];
  const done = (async () => {
    try {
      for await (const record of followJetStreamLog(nc, ns, episode, 0, { signal: controller.signal })) {
        seen.push(record.seq);
        if (record.seq === last) break;
      }
    } finally {
      clearTimeout(timer);
    }
    return seen;
  })();
  return { seen, done };
}

/** Whether a follower's consumer is on the server: it reads the namespace's log stream (which it creates). */
const following = async (nc: NatsConnection, ns: string): Promise<boolean> => {
  const jsm = await jetstreamManager(nc);
  try {
    return (await jsm.streams.info(natsName("PT_LOG", ns))).state.consumer_count > 0;
  } catch {
    return false; // no stream yet
  }
};

const upTo = (n: number) => Array.from({ length: n + 1 }, (_, i) => i);

// The five tests run at once (describe.concurrent): each restarts a server of its own or uses a
// namespace of its own, and most of each is waiting (a restart, a stalled consumer's 5 s request,
// a quiet follow's 5 s), which one after the other took some 45 s.

describe.concurrent("follow across a NATS server restart", () => {
  it("started before the episode, with the server killed before its first record: yields every record once, in order", async () => {
    const { server, nc } = await privateNats();
    const ns = server.namespace("before");
    const follower = followUntil(nc, ns, "ep", 39, 30_000);
    // Killed once the follower has its consumer (half a second was not always enough on a loaded machine).
    await until(() => following(nc, ns), "the follower's consumer");
    await server.restart({ hard: true, downMs: 1000 });
    // The writer comes later, as a run started after the restart does, on its own connection.
    const writer = await connectNats(server.url, { name: "jetstream-follow-test-writer" });
    connections.push(writer);
    const store = await createJetStreamEventStore(writer, ns, "ep", { episode: "ep" });
    for (let tick = 0; tick < 40; tick++) {
      await store.append([phase(tick)], { expectedSeq: tick - 1 });
      await store.commit();
      await new Promise((r) => setTimeout(r, 20));
    }
    await store.close();
    expect(await follower.done).toEqual(upTo(39));
  }, 60_000);

  it("mid-episode, with commits before and after the restart: goes on after the last record it yielded", async () => {
    const { server, nc } = await privateNats();
    const ns = server.namespace("during");
    const store = await createJetStreamEventStore(nc, ns, "ep", { episode: "ep", ackTimeoutMs: 1500 });
    let seq = -1;
    const commitTicks = async (from: number, to: number) => {
      for (let tick = from; tick < to; tick++) {
        seq = (await store.append([phase(tick), phase(tick)], { expectedSeq: seq })).at(-1)!.seq;
        await store.commit();
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await commitTicks(0, 10);
    const follower = followUntil(nc, ns, "ep", 79, 30_000);
    await commitTicks(10, 20);
    // Restarted once the follower has yielded every record committed before (not after a guessed 200 ms).
    await until(() => follower.seen.length === 40, "the follower to reach seq 39");
    await server.restart({ hard: true, downMs: 1000 });
    await commitTicks(20, 40);
    await store.close();
    expect(await follower.done).toEqual(upTo(79));
  }, 60_000);

  it("probetown follow, started before a run, prints the whole episode and ends after its last tick when the server restarted in between", async () => {
    const { server, nc } = await privateNats();
    const ns = server.namespace("cli");
    const episode = "auratown-s23-baseline";
    const follower = startCli(["follow", episode, "--nats", server.url, "--namespace", ns, "--json"]);
    // Restarted once it follows (1.5 s did not always cover the CLI's start on a loaded machine).
    await until(() => following(nc, ns), "follow's consumer");
    await server.restart({ hard: true, downMs: 1000 });
    const run = await runCli(["run", "auratown", "--seed", "23", "--ticks", "6", "--nats", server.url, "--namespace", ns, "--fsync", "commit", "-q"]);
    expect(run.code).toBe(0);
    const stop = setTimeout(() => follower.child.kill("SIGINT"), 30_000);
    const followed = await follower.done;
    clearTimeout(stop);
    expect(followed.err).toMatch(/follow: reconnected to nats:\/\/127\.0\.0\.1:\d+ after/);
    expect(followed.err).toMatch(/committed its last tick \(5\); done/);
    expect(followed.code).toBe(0);
    const logged = await distributedBackend(nc, ns).eventStores.read(episode);
    const printed = followed.out.trim().split("\n").map((l) => JSON.parse(l) as LogRecord);
    expect(printed.map(withoutMetaLine)).toEqual(logged.map(withoutMetaLine));
  }, 90_000);
});

describe.concurrent("follow and the outage window (--nats-outage)", () => {
  it("a server that stays away longer than the window ends the follow (NatsReadStalled: exit 2 through withNats), not a wait for ever", async () => {
    const server = await startTestNats({ own: true });
    servers.push(server);
    const nc = await connectNats(server.url, { name: "jetstream-follow-window", outageMs: 1500 });
    connections.push(nc);
    const ns = server.namespace("window");
    const store = await createJetStreamEventStore(nc, ns, "ep", { episode: "ep" });
    await store.append([phase(0)], { expectedSeq: -1 });
    await store.commit();
    const seen: number[] = [];
    const ended = (async () => {
      for await (const record of followJetStreamLog(nc, ns, "ep", 0)) seen.push(record.seq);
    })().then(() => null, (e: unknown) => e);
    await until(() => seen.length === 1, "the follower's first record");
    let error: unknown = null;
    // Down until the follow has ended (it would wait for ever before).
    await server.restart({ hard: true, whileDown: async () => (error = await ended) });
    expect(error).toBeInstanceOf(NatsReadStalled);
    expect((error as Error).message).toMatch(/following .*: JetStream did not answer for longer than the 1\.5 s NATS outage window \(--nats-outage\)/);
    expect(isNatsTimeout(error)).toBe(true);
    await store.close().catch(() => undefined);
  }, 60_000);
});

describe.concurrent("probetown follow of an episode whose writer stopped", () => {
  it("says so once it has been quiet with nobody holding its writer lock, not while its writer holds it, and goes on waiting", async () => {
    const { server, nc } = await privateNats(false);
    const ns = server.namespace("stopped");
    const store = await createJetStreamEventStore(nc, ns, "ep", { episode: "ep" });
    for (let tick = 0; tick < 3; tick++) {
      await store.append([phase(tick)], { expectedSeq: tick - 1 });
      await store.commit();
    }
    const follower = startCli(["follow", "ep", "--nats", server.url, "--namespace", ns]);
    let err = "";
    follower.child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const stopped = /follow: episode ep has had no new record for \d+ s and nobody holds its writer lock: its writer stopped before its first tick was committed \(`probetown run … --resume`, or its sweep's redelivered job, continues it\); still waiting/;
    try {
      // Quiet, but its writer is alive and holds the lock: nothing said (before, nothing was said either way);
      // 8 s from its start, past the 5 s after which it would say so.
      await until(() => err.includes("waiting for records"), "follow to start");
      await new Promise((r) => setTimeout(r, 8000));
      expect(err).not.toMatch(stopped);
      await store.close(); // the lock is released: nobody writes the episode any more
      const deadline = Date.now() + 15_000;
      while (!stopped.test(err) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(err).toMatch(stopped);
      expect(follower.child.exitCode).toBeNull(); // still waiting
    } finally {
      follower.child.kill("SIGINT");
    }
    expect((await follower.done).code).toBe(0);
  }, 60_000);
});
