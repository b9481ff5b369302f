// A NATS server that goes away: snapshot puts are retried across a restart as log publishes are
// (idempotently), a server that stays away ends a run with an error naming the URL, the episode and
// what was being written (exit 2, like any unreachable server), and a port that accepts TCP without
// speaking NATS ends every command at once after its message (nats.js left that socket open). The
// outage window itself is in nats-outage-window.test.ts, on servers of its own, so the two files'
// timed outages run side by side.
import { execFileSync, type ChildProcess } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errors, type Payload } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamPublishOptions } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { JetStreamJobQueue, jobQueueNames } from "../infra/jetStreamJobQueue.ts";
import { JetStreamSnapshotStore, openSnapshotBuckets, type SnapshotBuckets } from "../infra/jetStreamSnapshotStore.ts";
import { closeNats, connectNats, NatsUnavailable, NatsWriteLost } from "../infra/nats.ts";
import { lastJetStreamRecord } from "../infra/jetstream/read.ts";
import { setLockTtl } from "../infra/jetstream/lock.ts";
import { withNats } from "../services/distributed/episodes.ts";
import { snapshotFixture } from "./contracts/snapshotStores.ts";
import { frozenWhen, logRecords, runCli, startCli, tempDir, until } from "./helpers.ts";
import { natsForSuite, startTestNats, type TestNats } from "./natsServer.ts";
import { asleepUntilExit, asleepWatch } from "./timing.ts";

// A server of the file's own: its tests stop, restart and freeze it.
const suite = natsForSuite({ own: true });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pids of the child processes of `pid`, in pid order, or none (ps exits 1 then). */
const childrenOf = (pid: number): string[] => {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)]).toString().split("\n").map((line) => line.trim()).filter((line) => line !== "");
  } catch {
    return [];
  }
};

/** The pid of a child process of `pid`, or "" while it has none. */
const childOf = (pid: number): string => childrenOf(pid)[0] ?? "";

/** The snapshot of `label` at `tick`, as episode `episode` stores it. */
const snapshotOf = (episode: string, label: string, tick: number) => ({ ...snapshotFixture(label, tick), episode });

/** A namespace's buckets whose KV index runs `wrap` around the real one. */
const bucketsWith = (ns: string, wrap: (index: KV) => KV, wrapJs: (js: JetStreamClient) => JetStreamClient = (js) => js) => async (): Promise<SnapshotBuckets> => {
  const buckets = await openSnapshotBuckets(suite.nc, ns);
  return { ...buckets, index: wrap(buckets.index), js: wrapJs(buckets.js) };
};

// Two lanes side by side: the tests that stop, restart and freeze the file's server, one after the
// other, and beside them, one after the other, those that freeze a server of their own, need a
// server that stays up, or none. Each lane is a `concurrent` suite and the suites in it are not,
// so only the lanes overlap. One after the other all of them took some 100 s, most of it waiting
// (outages, an ack wait, a hung server's 15 s).
const lane = { concurrent: true } as const;
const inLane = { concurrent: false } as const;

describe("on the file's server, which they stop, restart and freeze", lane, () => {
  describe("snapshot puts across a NATS outage", inLane, () => {
    it("a put made while the server is down (SIGKILL, back later than a request waits) lands once it is back, and `latest` moves to it", async () => {
      const ns = suite.nats.namespace("put-down");
      // Its requests wait 1 s (not JetStream's default 5 s), so that 2.5 s down is longer than one
      // waits: the put's first tries time out while the server is away (it was down 6.5 s).
      const buckets = { ...(await openSnapshotBuckets(suite.nc, ns)), js: jetstream(suite.nc, { timeout: 1000 }) };
      const store = new JetStreamSnapshotStore(suite.nc, ns, "ep-down", async () => buckets);
      await store.put(snapshotOf("ep-down", "down", 1));
      const restarted = suite.nats.restart({ hard: true, downMs: 2500 });
      await sleep(300);
      const next = snapshotOf("ep-down", "down", 2);
      await expect(store.put(next)).resolves.toBe(next.stateHash);
      await restarted;
      expect(await store.latest()).toBe(next.stateHash);
      expect((await new JetStreamSnapshotStore(suite.nc, ns, "ep-down").get(next.stateHash))?.tick).toBe(2);
    }, 60_000);

    it("a content put and a `latest` update that landed with their replies lost are retried, and the retry finds them there", async () => {
      const ns = suite.nats.namespace("reply-lost");
      const lost: string[] = [];
      // The first put, create and update each land on the server, then lose their reply (a timeout,
      // as across a restart): through KV's API, and as the raw publishes that send a snapshot's entry
      // and its `latest` write together.
      const once = async <T>(kind: string, write: () => Promise<T>): Promise<T> => {
        const result = await write();
        if (!lost.includes(kind)) {
          lost.push(kind);
          throw new errors.TimeoutError();
        }
        return result;
      };
      const publishLost = (js: JetStreamClient): JetStreamClient =>
        new Proxy(js, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (prop !== "publish" || typeof value !== "function") return value;
            return (subject: string, data?: Payload, options?: Partial<JetStreamPublishOptions>) => {
              const kind = !subject.endsWith(".latest") ? "put" : options?.expect?.lastSubjectSequence === 0 ? "create" : "update";
              return once(kind, () => (value as JetStreamClient["publish"]).call(target, subject, data, options));
            };
          },
        });
      const replyLost = (index: KV): KV =>
        new Proxy(index, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown;
            if (typeof prop !== "string" || !["put", "create", "update"].includes(prop) || typeof value !== "function") return value;
            return (...args: unknown[]) => once(prop, () => (value as (...a: unknown[]) => Promise<number>).apply(target, args));
          },
        });
      const store = new JetStreamSnapshotStore(suite.nc, ns, "ep-lost", bucketsWith(ns, replyLost, publishLost));
      const first = snapshotOf("ep-lost", "lost", 1);
      const second = snapshotOf("ep-lost", "lost", 2);
      await store.put(first); // the content put and the `latest` create sent with it lose their replies
      await store.put(second); // the `latest` update (compare-and-set on the revision it wrote) loses its reply
      expect(lost).toEqual(["put", "create", "update"]);
      const plain = new JetStreamSnapshotStore(suite.nc, ns, "ep-lost");
      expect(await plain.latest()).toBe(second.stateHash);
      expect((await plain.get(first.stateHash))?.tick).toBe(1);
      // The store's view of `latest` is right after the retries: the next put moves it in one step.
      const third = snapshotOf("ep-lost", "lost", 3);
      await store.put(third);
      expect(await plain.latest()).toBe(third.stateHash);
    }, 30_000);

    it("a server that stays away past the put's limit: the put fails naming the episode and the snapshot, and a command names the URL and --resume", async () => {
      const ns = suite.nats.namespace("put-gone");
      const store = new JetStreamSnapshotStore(suite.nc, ns, "ep-gone", undefined, 1000);
      await store.put(snapshotOf("ep-gone", "gone", 1));
      // Down until the put has given up (it was a guessed 9 s).
      let failed!: () => void;
      const putFailed = new Promise<void>((resolve) => (failed = resolve));
      const restarted = suite.nats.restart({ hard: true, whileDown: () => putFailed });
      await sleep(300);
      const error = await store.put(snapshotOf("ep-gone", "gone", 2)).then(() => null, (e: unknown) => e);
      failed();
      await restarted;
      expect(error).toBeInstanceOf(NatsWriteLost);
      expect((error as Error).message).toMatch(/^episode ep-gone: the snapshot of tick 2 \(state [0-9a-f]+\) did not reach JetStream \(timeout\); reopen the episode \(resume\)/);
      const command = await withNats(suite.nats.url, { role: "run", quiet: true }, () => Promise.reject(error)).then(() => null, (e: unknown) => e);
      expect(command).toBeInstanceOf(NatsUnavailable);
      expect((command as Error).message).toMatch(/^--nats nats:\/\/127\.0\.0\.1:\d+: the server stayed away longer than the 15 s NATS outage window \(--nats-outage\) while run was writing the snapshot of tick 2 .* of episode ep-gone \(timeout\); .*`probetown run … --resume`/);
    }, 60_000);
  });

  describe("closing a connection to a hung server", inLane, () => {
    it("gives its drain up once the server has been silent a second (not 5 s), and does not wait at all after a failure it caused", async () => {
      const [drained, away] = await Promise.all([connectNats(suite.nats.url), connectNats(suite.nats.url)]);
      // A subscription and a message nobody awaits: what a drain is for.
      for (const c of [drained, away]) {
        c.subscribe("pt.closing.>");
        c.publish("pt.closing.x", "unawaited");
        await c.flush();
      }
      await suite.nats.pause();
      try {
        // How long each waited: no timer fires early, and the upper bounds count the time this
        // process waited, not the time a busy machine kept it from running (test/timing.ts).
        const timed = async (close: () => Promise<void>) => {
          const started = performance.now();
          const watch = asleepWatch();
          await close();
          return { wall: performance.now() - started, asleep: watch.asleepMs() };
        };
        const [silent, failed] = await Promise.all([timed(() => closeNats(drained)), timed(() => closeNats(away, { serverAway: true }))]);
        expect(silent.wall).toBeGreaterThanOrEqual(900);
        expect(silent.asleep).toBeLessThan(2500);
        expect(failed.asleep).toBeLessThan(500);
        expect(drained.isClosed() && away.isClosed()).toBe(true);
      } finally {
        suite.nats.resume();
      }
      // A server that answers is drained as before.
      const live = await connectNats(suite.nats.url);
      const watch = asleepWatch();
      await closeNats(live);
      expect(watch.asleepMs()).toBeLessThan(900);
    }, 30_000);
  });

  describe("the CLI across a NATS outage", inLane, () => {
    /** Whether the episode's `latest` snapshot exists: the run is under way. */
    const hasSnapshot = async (ns: string, episode: string): Promise<boolean> => (await new JetStreamSnapshotStore(suite.nc, ns, episode).latest().catch(() => null)) !== null;

    it("run survives a SIGKILLed server restarted on its store mid-run (snapshots every tick), and its log verifies", async () => {
      const ns = suite.nats.namespace("run-restart");
      const run = startCli(["run", "auratown", "--seed", "17", "--days", "3", "--agents", "20", "--nats", suite.nats.url, "--namespace", ns, "--no-summary", "--snapshot-every", "1"]);
      // Mid-run for sure: frozen once it has a snapshot, let go once the server is down (a run of 20
      // days, for a busy machine not to finish it before a guessed 1.5 s, took 110 s there).
      await frozenWhen([run.child], () => hasSnapshot(ns, "auratown-s17-baseline"), "the run's first snapshot");
      await suite.nats.restart({ hard: true, whileDown: async () => {
        run.child.kill("SIGCONT");
        await sleep(2000);
      } });
      const r = await run.done;
      if (r.code !== 0) console.error(r.err);
      expect(r.err).toMatch(/run: lost the NATS server at nats:\/\/127\.0\.0\.1:\d+; reconnecting/);
      expect(r.err).toMatch(/run: reconnected to nats:\/\/127\.0\.0\.1:\d+ after \d+\.\d s/);
      expect(r.code).toBe(0);
      const v = await runCli(["verify", "auratown-s17-baseline", "--nats", suite.nats.url, "--namespace", ns]);
      expect(v.out).toMatch(/^OK: auratown-s17-baseline: \d+ records, hash chain intact, 102 tick state hashes recomputed/);
      expect(v.code).toBe(0);
    }, 120_000);

    it("run --remote all with two actor hosts survives a SIGKILLed server restarted mid-run: the hosts' requests are sent again, each delivery handled once, and the log equals the embedded run's", async () => {
      const ns = suite.nats.namespace("remote-restart");
      const episode = "auratown-s33-baseline";
      const host = (actors: string) => startCli(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", actors]);
      const hosts = [host("agent/chen-mei,agent/lin-wei,agent/zhang-hao"), host("agent/liu-yang,agent/wang-jun,env/auratown")];
      const run = startCli(["run", "auratown", "--seed", "33", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "--snapshot-every", "1", "--no-summary"]);
      // Frozen mid-run (a snapshot is kept), let go once the server is down: its next requests to the
      // hosts, and their replies, meet the outage (a request failed at once with the connection, exit 4, or
      // found no host until the hosts had reconnected: exit 2).
      await frozenWhen([run.child], () => hasSnapshot(ns, episode), "the run's first snapshot");
      await suite.nats.restart({ hard: true, whileDown: async () => {
        run.child.kill("SIGCONT");
        await sleep(2000);
      } });
      const r = await run.done;
      if (r.code !== 0) console.error(r.err);
      expect(r.err).toMatch(/run: reconnected to nats:\/\/127\.0\.0\.1:\d+ after \d+\.\d s/);
      expect(r.code).toBe(0);
      for (const h of await Promise.all(hosts.map((p) => p.done))) expect(h.code, h.err).toBe(0);
      // Equal last records (seq and hash: the hash chains every record before it, meta aside), equal logs.
      const dir = join(tempDir("remote-embedded"), "ep");
      expect((await runCli(["run", "auratown", "--seed", "33", "--log", dir, "-q"])).code).toBe(0);
      const embedded = logRecords(dir).at(-1)!;
      const last = await lastJetStreamRecord(suite.nc, ns, episode);
      expect({ seq: last?.seq, hash: last?.hash }).toEqual({ seq: embedded.seq, hash: embedded.hash });
    }, 180_000);

    it("run whose server stays away: exit 2 naming the URL, the episode, what was being written and --resume; --resume then finishes it", async () => {
      const ns = suite.nats.namespace("run-gone");
      // A snapshot every tick: the first one says the run is under way (the default keeps the last tick's only).
      const args = ["run", "auratown", "--seed", "17", "--days", "3", "--agents", "20", "--nats", suite.nats.url, "--namespace", ns, "-q", "--snapshot-every", "1"];
      // A 3 s window, from the variable (as a sweep's workers get theirs) rather than the flag: the
      // default 15 s is the same code waiting longer, and nats-outage-window.test.ts rides out 12 s of it.
      const run = startCli(args, { PROBETOWN_NATS_OUTAGE: "3" });
      // Mid-run for sure: frozen once it has a snapshot, let go once the server is down, which it stays
      // until the run has given up (it was a guessed 40 s, and a run of 20 days for a busy machine not
      // to finish it first).
      await frozenWhen([run.child], () => hasSnapshot(ns, "auratown-s17-baseline"), "the run's first snapshot");
      const restarted = suite.nats.restart({ hard: true, whileDown: () => {
        run.child.kill("SIGCONT");
        return run.done;
      } });
      const r = await run.done;
      expect(r.err).toMatch(/probetown: error: --nats nats:\/\/127\.0\.0\.1:\d+: the server stayed away longer than the 3 s NATS outage window \(--nats-outage\) while run was writing (the snapshot of tick \d+|the log records of seqs? [\d–]+) .*of episode auratown-s17-baseline \(.+\); nothing logged is lost: .*`probetown run auratown --seed 17 .* --resume`/);
      expect(r.code).toBe(2);
      await restarted;
      const resumed = await runCli([...args, "--resume"]);
      expect(resumed.code).toBe(0);
      const v = await runCli(["verify", "auratown-s17-baseline", "--nats", suite.nats.url, "--namespace", ns]);
      expect(v.code).toBe(0);
    }, 150_000);
  });
});

describe("beside them, on servers of their own or that stay up", lane, () => {
  describe("sweeps whose local workers end", inLane, () => {
    // The shared server: these tests kill workers, not the server.
    const shared = natsForSuite();

    it("a sweep whose local workers all end (killed, or none could connect) stops with exit 2, saying what is left queued", async () => {
      const ns = shared.nats.namespace("workers-gone");
      const nsEnvprobe = shared.nats.namespace("workers-gone-envprobe");
      const sweeps = [
        startCli(["sweep", "auratown", "--seeds", "1-4", "--ticks", "300", "--nats", shared.nats.url, "--namespace", ns, "--workers", "1"]),
        startCli(["sweep", "envprobe", "--regimes", "medium", "--seeds", "0-2000", "--nats", shared.nats.url, "--namespace", nsEnvprobe, "--workers", "1", "--log", join(tempDir("workers-gone"), "grid")]),
      ];
      const results = await Promise.all(
        sweeps.map(async (sweep) => {
          let worker = "";
          while ((worker = childOf(sweep.child.pid!)) === "") await sleep(100);
          await sleep(2000);
          process.kill(Number(worker), "SIGKILL");
          // Before the fix the sweep waited for ever for outcomes that nobody was going to produce.
          const killer = setTimeout(() => sweep.child.kill("SIGKILL"), 30_000);
          const r = await sweep.done;
          clearTimeout(killer);
          return { ...r, worker };
        }),
      );
      const [auratown, envprobe] = results as [(typeof results)[number], (typeof results)[number]];
      expect(auratown.err).toContain(`sweep: local worker local-1 (pid ${auratown.worker}) ended (killed by SIGKILL); no local worker left`);
      expect(auratown.err).toMatch(new RegExp(`probetown: error: sweep: its local worker ended \\(killed by SIGKILL\\) before the sweep finished; \\d of 4 episodes finished, the other \\d stay queued in namespace ${ns}: the same sweep command runs them .*, or start workers with \`probetown worker --nats nats://127\\.0\\.0\\.1:\\d+ --namespace ${ns}\``));
      expect(auratown.code).toBe(2);
      expect(envprobe.err).toMatch(new RegExp(`probetown: error: sweep envprobe: its local worker ended \\(killed by SIGKILL\\) before the sweep finished; \\d+ of 66033 episodes finished, the other \\d+ stay queued in namespace ${nsEnvprobe}`));
      expect(envprobe.code).toBe(2);
    }, 90_000);

    it("a sweep one of whose two local workers is killed says when the job it held goes to the other (the queue's ack wait), and finishes", async () => {
      const ns = shared.nats.namespace("worker-killed");
      // A short ack wait for this namespace, as `worker --ack-wait 2000` sets it, and a short
      // writer-lock ttl, as `worker --lock-ttl 2000` does: the job's next worker took over its
      // episode once the killed one's lock had expired, up to 20 s later with the default 10 s.
      await JetStreamJobQueue.open(shared.nc, ns, { ackWaitMs: 2000, setAckWait: true });
      await setLockTtl(shared.nc, ns, 2000);
      const sweep = startCli(["sweep", "auratown", "--seeds", "1-4", "--ticks", "150", "--config", '{"extraAgents": 15}', "--nats", shared.nats.url, "--namespace", ns, "--workers", "2"]);
      let workers: string[] = [];
      while ((workers = childrenOf(sweep.child.pid!)).length < 2) await sleep(100);
      const worker = workers[0]!;
      // Killed while it holds a job: both workers are frozen once each holds one (they fetch one at
      // a time), and local-1 is killed then. A guessed 3 s sometimes came after the four episodes
      // were all done (the worker gone, kill ESRCH), and was 3 s of waiting otherwise.
      const jsm = await jetstreamManager(shared.nc);
      const bothBusy = async () => (await jsm.consumers.info(jobQueueNames(ns).jobs, "workers").catch(() => null))?.num_ack_pending === 2;
      const byPid = (pid: string) => ({ pid: Number(pid), kill: (signal: NodeJS.Signals) => process.kill(Number(pid), signal) }) as unknown as ChildProcess;
      await frozenWhen(workers.map(byPid), bothBusy, "both workers holding a job");
      process.kill(Number(worker), "SIGKILL");
      process.kill(Number(workers[1]), "SIGCONT");
      const killer = setTimeout(() => sweep.child.kill("SIGKILL"), 60_000);
      const r = await sweep.done;
      clearTimeout(killer);
      // It went quiet after "1 of 2 left" while the job waited out the ack wait.
      expect(r.err).toContain(`sweep: local worker local-1 (pid ${worker}) ended (killed by SIGKILL); 1 of 2 left; a job it was running goes to the workers left after the queue's ack wait (2 s) and continues from its log`);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^4 episodes: 4 ok, 0 failed/);
    }, 90_000);
  });

  describe("a server that hangs and stays hung", inLane, () => {
    // A server of its own, which it freezes: the other lane's tests stop and restart the file's.
    const own = natsForSuite({ own: true });

    /** Waits until the episode's `latest` snapshot exists: the run is under way. */
    async function waitForSnapshots(ns: string, episode: string): Promise<void> {
      const store = new JetStreamSnapshotStore(own.nc, ns, episode);
      const deadline = Date.now() + 60_000;
      while ((await store.latest().catch(() => null)) === null) {
        if (Date.now() > deadline) throw new Error(`episode ${episode} stored no snapshot`);
        await sleep(20);
      }
    }

    it("run whose server hangs (SIGSTOP) and stays hung: exit 2 naming what was being written, and the process ends", async () => {
      const ns = own.nats.namespace("run-hung");
      const run = startCli(["run", "auratown", "--seed", "17", "--days", "20", "--agents", "20", "--nats", own.nats.url, "--namespace", ns, "--no-summary"]);
      await waitForSnapshots(ns, "auratown-s17-baseline");
      await own.nats.pause();
      const asleep = asleepUntilExit(run.child);
      try {
        // Before the fix the message came after ~25 s and then the process never exited: closing the
        // connection left the socket of a reconnect still waiting for the hung server's INFO open.
        const killer = setTimeout(() => run.child.kill("SIGKILL"), 60_000);
        const r = await run.done;
        clearTimeout(killer);
        // A write waits out the outage window (15 s by default: its ack, then the stream not answering)
        // before it is given up; then the command ends at once. It waited 10 s more for the hung server after that:
        // the writer lock's release (a 5 s request) and the connection's drain (5 s). Counted is the
        // time the run waited, not the time a busy machine kept it from running (its wall-clock time
        // was 20.1 s beside other work, against 15 s on an idle machine).
        expect((await asleep) / 1000).toBeLessThan(20);
        expect(r.err).toMatch(/run: lost the NATS server at nats:\/\/127\.0\.0\.1:\d+; reconnecting/);
        expect(r.err).toMatch(/probetown: error: --nats nats:\/\/127\.0\.0\.1:\d+: the server stayed away longer than the 15 s NATS outage window \(--nats-outage\) while run was writing .* of episode auratown-s17-baseline \(.+\); nothing logged is lost: .*`probetown run auratown --seed 17 .* --resume`/);
        expect(r.code).toBe(2);
      } finally {
        own.nats.resume();
      }
    }, 120_000);
  });

  describe("a port that accepts TCP but does not speak NATS", inLane, () => {
    let server: Server;
    let port = 0;
    const held = new Set<Socket>();
    beforeAll(async () => {
      server = createServer((socket) => {
        held.add(socket);
        socket.on("close", () => held.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it("verify, run, worker, follow and sweep say they cannot connect and exit 2 at once", async () => {
      const url = `nats://127.0.0.1:${port}`;
      const commands = [["verify", "x"], ["run", "auratown", "--seed", "1"], ["worker"], ["follow", "x"], ["sweep", "auratown", "--seeds", "1-2"]];
      const results = await Promise.all(
        commands.map(async (command) => {
          const cli = startCli([...command, "--nats", url, "--nats-outage", "2"]);
          // Before the fix the message came after ~6 s, and then the process never exited. Killed
          // (and failed) when it has not ended 10 s after its message: five CLIs starting at once on a
          // busy machine took most of the 20 s that were allowed from their start.
          let err = "";
          let killer: NodeJS.Timeout | undefined;
          const kill = () => cli.child.kill("SIGKILL");
          cli.child.stderr!.on("data", (d: Buffer) => {
            err += d.toString();
            if (killer === undefined && /cannot connect/.test(err)) killer = setTimeout(kill, 10_000);
          });
          const backstop = setTimeout(kill, 50_000); // no message at all
          const r = await cli.done;
          clearTimeout(killer);
          clearTimeout(backstop);
          return { command: command[0], ...r };
        }),
      );
      for (const r of results) {
        expect(r.err, r.command).toMatch(new RegExp(`--nats nats://127\\.0\\.0\\.1:${port}: cannot connect to a NATS server within the 2 s NATS outage window \\(--nats-outage\\) \\(timeout\\)`));
        expect(r.code, r.command).toBe(2);
      }
    }, 90_000);
  });

  describe("a host name that does not resolve", inLane, () => {
    it("is said to be one, with the URL to check (not whether nats-server runs), exit 2", async () => {
      // .invalid never resolves (RFC 2606).
      const r = await runCli(["verify", "x", "--nats", "nats://no-such-host.invalid:4222"]);
      expect(r.err).toMatch(/--nats nats:\/\/no-such-host\.invalid:4222: cannot resolve the server's host name \(getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\); check the host in the URL/);
      expect(r.code).toBe(2);
    }, 30_000);
  });

  describe("a server whose JetStream storage is full", inLane, () => {
    let small: TestNats;
    beforeAll(async () => {
      small = await startTestNats({ config: "jetstream { max_file_store: 307200 }" });
    }, 30_000);
    afterAll(async () => {
      await small?.stop();
    }, 30_000);

    it("run stops with exit 2 naming the refused records and the last good one, and the logged prefix verifies; a new run is told the storage is full", async () => {
      const ns = small.namespace("full");
      // A snapshot every tick fills the store part-way through the log (the default's one snapshot, of the last tick, would come after it).
      const r = await runCli(["run", "auratown", "--seed", "42", "--nats", small.url, "--namespace", ns, "-q", "--snapshot-every", "1"]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/JetStream refused seqs? [\d–]+: insufficient resources; the log still ends on its last good record \(seq (\d+)\): free the server's JetStream storage or raise its limits .* --resume/);
      const v = await runCli(["verify", "auratown-s42-baseline", "--nats", small.url, "--namespace", ns]);
      expect(v.code).toBe(0);
      const next = await runCli(["run", "auratown", "--seed", "43", "--nats", small.url, "--namespace", ns, "-q"]);
      expect(next.code).toBe(2);
      expect(next.err).toMatch(/the server's JetStream storage is full \(insufficient resources\); free its store_dir or raise max_file_store/);
    }, 120_000);
  });
});
