// The outage window (--nats-outage) sets how long a NATS outage is ridden out: inside it a run
// completes with the log an undisturbed run writes, past it the run stops naming the window and the
// exact --resume command. A file of its own (beside nats-outage.test.ts), with servers of its own,
// so the two files' timed outages run side by side.
import type { NatsConnection } from "@nats-io/transport-node";
import { beforeAll, describe, expect, it } from "vitest";
import { JetStreamSnapshotStore } from "../infra/jetStreamSnapshotStore.ts";
import { lastJetStreamRecord } from "../infra/jetstream/read.ts";
import { frozenWhen, runCli, startCli, until } from "./helpers.ts";
import { natsForSuite, type TestNats } from "./natsServer.ts";

// The shared server: the undisturbed run, the windows refused. The outages are on servers of their own.
const suite = natsForSuite();

/** A server and a connection to it. */
type Server = { readonly nats: TestNats; readonly nc: NatsConnection };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the outage window (--nats-outage)", () => {
  // Past a boundary or not: each test runs the CLI in a process of its own against a server of its
  // lane's own, stopped (SIGSTOP) or killed and restarted on its port and store while the run goes on.
  // No test counts seconds: the outages are far inside or past their windows, and the one past its
  // window keeps the server away until the run has given up.
  const episode = "auratown-s42-baseline";
  // A snapshot every tick: the tests start their outage at the run's first snapshot, which the
  // default policy would keep only at the last tick.
  const runArgs = (server: Server, ns: string, ...more: string[]) => ["run", "auratown", "--seed", "42", "--days", "2", "--agents", "20", "--snapshot-every", "1", "--nats", server.nats.url, "--namespace", ns, "--no-summary", ...more];
  const hasSnapshot = async (server: Server, ns: string): Promise<boolean> => (await new JetStreamSnapshotStore(server.nc, ns, episode).latest().catch(() => null)) !== null;
  /** The log's last record, seq and hash: equal heads, equal logs (the hash chains every record before it). */
  const head = async (server: Server, ns: string) => {
    const last = await lastJetStreamRecord(server.nc, ns, episode);
    return last === null ? null : { seq: last.seq, hash: last.hash };
  };
  const verified = async (server: Server, ns: string) => {
    const v = await runCli(["verify", episode, "--nats", server.nats.url, "--namespace", ns]);
    expect(v.out).toMatch(/hash chain intact/);
    return v.code;
  };
  let undisturbed: { seq: number; hash: string } | null = null;

  beforeAll(async () => {
    const ns = suite.nats.namespace("undisturbed");
    expect((await runCli(runArgs(suite, ns, "-q"))).code).toBe(0);
    undisturbed = await head(suite, ns);
    expect(undisturbed?.seq).toBeGreaterThan(1000);
  }, 120_000);

  /** Starts the run, and once it has a snapshot (mid-run for sure: it is frozen until then) calls `outage` with a function that lets it go on. */
  async function midRun(server: Server, ns: string, outage: (letGo: () => void) => Promise<void>, ...more: string[]) {
    const run = startCli(runArgs(server, ns, ...more));
    await frozenWhen([run.child], () => hasSnapshot(server, ns), "the run's first snapshot");
    await outage(() => run.child.kill("SIGCONT"));
    return run.done;
  }

  // Two lanes side by side (each suite `concurrent`, its tests `concurrent: false`: one after the
  // other in their lane), each with a server of its own that its tests stop, restart and freeze:
  // the 3 s window's outages beside the default window's (most of each is waiting out an outage).
  // One after the other the four took some 51 s. Two lanes, not four tests at once: the runs
  // are CPU-bound until their outage.
  const lane = { concurrent: true } as const;
  const inLane = (timeout: number) => ({ concurrent: false, timeout });

  describe("--nats-outage 3", lane, () => {
    const own = natsForSuite({ own: true });

    it("--nats-outage 3: a hung server (SIGSTOP) for 1 s and a restarted one (SIGKILL) down for 1 s are ridden out, and each log equals the undisturbed run's", inLane(180_000), async () => {
      const hung = own.nats.namespace("w3-hung");
      const paused = await midRun(own, hung, async (letGo) => {
        await own.nats.pause();
        letGo();
        await sleep(1000);
        own.nats.resume();
      }, "--nats-outage", "3");
      if (paused.code !== 0) console.error(paused.err);
      expect(paused.code).toBe(0);
      const restarted = own.nats.namespace("w3-restart");
      const killed = await midRun(own, restarted, (letGo) => own.nats.restart({ hard: true, whileDown: async () => { letGo(); await sleep(1000); } }), "--nats-outage", "3");
      if (killed.code !== 0) console.error(killed.err);
      expect(killed.code).toBe(0);
      for (const ns of [hung, restarted]) {
        expect(await verified(own, ns)).toBe(0);
        expect(await head(own, ns)).toEqual(undisturbed);
      }
    });

    it("--nats-outage 3, the server away longer: exit 2 naming the window and the exact --resume command, which completes the log as the undisturbed run's", inLane(180_000), async () => {
      const ns = own.nats.namespace("w3-gone");
      // Down (5 s and more) until the run has given up.
      let run!: ReturnType<typeof startCli>;
      const r = await (async () => {
        run = startCli(runArgs(own, ns, "--nats-outage", "3"));
        await frozenWhen([run.child], () => hasSnapshot(own, ns), "the run's first snapshot");
        const restarted = own.nats.restart({ hard: true, whileDown: async () => {
          run.child.kill("SIGCONT");
          await Promise.all([run.done, sleep(5000)]);
        } });
        const done = await run.done;
        await restarted;
        return done;
      })();
      expect(r.code).toBe(2);
      const said = new RegExp(`probetown: error: --nats nats://127\\.0\\.0\\.1:\\d+: the server stayed away longer than the 3 s NATS outage window \\(--nats-outage\\) while run was writing .* of episode ${episode} \\(.+\\); nothing logged is lost: once the server is back, \`probetown (run auratown --seed 42 .*--namespace ${ns} --no-summary --nats-outage 3 --resume)\` continues episode ${episode}`);
      expect(r.err).toMatch(said);
      const resume = said.exec(r.err)![1]!.split(" ");
      expect(resume).toEqual([...runArgs(own, ns, "--nats-outage", "3").slice(0), "--resume"]);
      const resumed = await runCli(resume);
      if (resumed.code !== 0) console.error(resumed.err);
      expect(resumed.code).toBe(0);
      expect(await verified(own, ns)).toBe(0);
      expect(await head(own, ns)).toEqual(undisturbed);
    });
  });

  describe("the default window", lane, () => {
    const own = natsForSuite({ own: true });

    it("the default window (15 s): a server killed mid-run and back 12 s later is ridden out, and the log equals the undisturbed run's", inLane(180_000), async () => {
      const ns = own.nats.namespace("w15-restart");
      const r = await midRun(own, ns, (letGo) => own.nats.restart({ hard: true, whileDown: async () => { letGo(); await sleep(12_000); } }));
      if (r.code !== 0) console.error(r.err);
      expect(r.err).toMatch(/run: reconnected to nats:\/\/127\.0\.0\.1:\d+ after \d+\.\d s/);
      expect(r.code).toBe(0);
      expect(await verified(own, ns)).toBe(0);
      expect(await head(own, ns)).toEqual(undisturbed);
    });

    it("a server not up yet when the run starts (back 7 s later, inside the default window): the first connect is retried, and the run completes", inLane(120_000), async () => {
      const ns = own.nats.namespace("w15-start");
      let run!: ReturnType<typeof startCli>;
      // Before the fix the first connect gave up after 5 s. The 7 s count from the run's first
      // attempt (its notice), not from its spawn: on a loaded machine Node took longer than 7 s to
      // load the CLI, found the server back, and said nothing (an empty stderr, a failed test).
      await own.nats.restart({ hard: true, whileDown: async () => {
        run = startCli(runArgs(own, ns));
        let said = "";
        run.child.stderr!.on("data", (d: Buffer) => (said += d.toString()));
        await until(() => said.includes("no NATS server answers") || run.child.exitCode !== null, "the run's first connect attempt", 60_000);
        await sleep(7000);
      } });
      const r = await run.done;
      if (r.code !== 0) console.error(r.err);
      expect(r.err).toMatch(/run: no NATS server answers at nats:\/\/127\.0\.0\.1:\d+ yet \(.+\); trying again for up to 15 s \(--nats-outage\)/);
      expect(r.code).toBe(0);
      expect(await verified(own, ns)).toBe(0);
      expect(await head(own, ns)).toEqual(undisturbed);
    });
  });

  it("a window that is not whole seconds from 1 to 3600, or given without --nats, is refused (exit 2)", async () => {
    for (const value of ["0", "1.5", "abc", "3601"]) {
      const r = await runCli(["verify", "x", "--nats", suite.nats.url, "--nats-outage", value]);
      expect(r.code, value).toBe(2);
      expect(r.err, value).toMatch(/--nats-outage.*expected whole seconds from 1 to 3600/);
    }
    const alone = await runCli(["verify", "x", "--nats-outage", "3"]);
    expect(alone.code).toBe(2);
    expect(alone.err).toMatch(/--nats-outage 3: the outage window applies with --nats <url>/);
  });
});
