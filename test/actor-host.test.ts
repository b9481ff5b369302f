// Actor hosts end with their episode whoever ends it (its sequencer, another sequencer, nobody for
// too long), and say truly why; a `run --remote` that failed (no hosts, a host killed) can be
// resumed with remote actors, whose hosts are set back to where the log continues, and the
// finished log equals an uninterrupted run's except `meta`. Over a private nats-server.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { jetStreamWhere, remotePlacement } from "../services/distributed/episodes.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { frozenWhen, logRecords, runCli, startCli, tempDir, until, withoutMetaLine, type CliProcess } from "./helpers.ts";
import { natsForSuite } from "./natsServer.ts";
import { asleepUntilExit } from "./timing.ts";

const suite = natsForSuite();

const readLog = (ns: string, episode: string): Promise<LogRecord[]> =>
  distributedBackend(suite.nc, ns).eventStores.read(episode);

const embeddedLog = async (seed: number, ticks: number): Promise<LogRecord[]> =>
  logRecords((await runEpisode({ world: "auratown", seed, ticks, dir: join(tempDir("embedded"), "ep"), trace: { exporter: "none" } })).dir);

async function expectLogEqualsEmbedded(ns: string, seed: number, ticks: number): Promise<void> {
  const logged = await readLog(ns, `auratown-s${seed}-baseline`);
  expect(logged.map(withoutMetaLine)).toEqual((await embeddedLog(seed, ticks)).map(withoutMetaLine));
}

interface Watched extends CliProcess {
  /** Resolves with stderr so far once it matches `pattern`. */
  said(pattern: RegExp, ms?: number): Promise<string>;
  /** The exit, or code "timeout" (and the process killed) when it has not exited within `ms`. */
  within(ms: number): Promise<{ code: number | null | "timeout"; out: string; err: string }>;
}

function start(args: string[]): Watched {
  const p = startCli(args);
  let err = "";
  p.child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  return {
    ...p,
    said: (pattern, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + ms;
        const look = () => {
          if (pattern.test(err)) return resolve(err);
          if (Date.now() > deadline || p.child.exitCode !== null) return reject(new Error(`never said ${pattern}: ${err}`));
          setTimeout(look, 50);
        };
        look();
      }),
    within: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms)));
      const first = await Promise.race([p.done, late]);
      clearTimeout(timer);
      if (first !== "timeout") return first;
      p.child.kill("SIGKILL");
      return { ...(await p.done), code: "timeout" };
    },
  };
}

/** A run that found no actor host: its log holds the header only (and its error says how to go on). */
async function headerOnlyLog(ns: string, seed: number, ticks: number): Promise<void> {
  const run = runEpisode({ world: "auratown", seed, ticks, where: jetStreamWhere(ns), placement: { ...remotePlacement(ns, "all"), readyTimeoutMs: 1000 } }, distributedBackend(suite.nc, ns, { actors: "nats" }));
  await expect(run).rejects.toThrow(/no actor host answered for agent\/chen-mei, .* within 1 s .*continue the episode with `run --resume`/);
  expect((await readLog(ns, `auratown-s${seed}-baseline`)).map((r) => r.type)).toEqual(["episode.started"]);
}

/** A `run --resume` that must finish with these hosts, each released by its sequencer at the end. */
async function resumeWith(sequencer: Watched, hosts: readonly Watched[]): Promise<{ code: number | null | "timeout"; out: string; err: string }> {
  const resumed = await sequencer.within(90_000);
  if (resumed.code !== 0) console.error(resumed.err);
  expect(resumed.code).toBe(0);
  for (const h of await Promise.all(hosts.map((host) => host.within(10_000)))) {
    expect(h.code).toBe(0);
    expect(h.err).toMatch(/its sequencer released these actors; stopping/);
  }
  return resumed;
}

/**
 * Waits until the episode's log holds more than `n` records, looked at while its `sequencer` is
 * frozen, and leaves it frozen (frozenWhen): it cannot finish the episode before the test acts.
 */
async function partialLog(ns: string, episode: string, n: number, sequencer: Watched): Promise<void> {
  const size = async () => (await readLog(ns, episode).catch(() => [] as LogRecord[])).length;
  await until(async () => (await size()) > 0, `episode ${episode} to start`, 60_000); // its start is not slowed by the freezing
  await frozenWhen([sequencer.child], async () => (await size()) > n, `${n} records of ${episode}`);
}

const AGENTS_A = "agent/chen-mei,agent/lin-wei,agent/zhang-hao";
const AGENTS_B = "agent/liu-yang,agent/wang-jun,env/auratown";

describe("actor hosts and remote runs that fail", () => {
  // Two lanes side by side, each suite `concurrent` and its tests not (one after the other in their
  // lane); each test has a namespace of its own. Most of each is waiting: for hosts and sequencers
  // to start, an idle timeout, a killed host to be noticed. One after the other they took some 45 s.
  const lane = { concurrent: true } as const;
  const inLane = (timeout: number) => ({ concurrent: false, timeout });

  describe("hosts that stop", lane, () => {
    it("a host says truly why it stops on a signal, stops by itself when another sequencer finishes its episode, and exits at once on a finished one", inLane(90_000), async () => {
      const ns = suite.nats.namespace("ends");
      const episode = "auratown-s31-baseline";
      const host = (...extra: string[]) => start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", "all", ...extra]);
      await headerOnlyLog(ns, 31, 6);

      const signalled = host();
      await signalled.said(/serving agent\/chen-mei/);
      signalled.child.kill("SIGTERM");
      const s = await signalled.within(10_000);
      expect(s.code).toBe(0);
      expect(s.err).toContain(`actor-host: stopped while serving episode ${episode} (0 of 6 ticks committed); no sequencer had asked for these actors`);
      expect(s.err).not.toMatch(/waits for these actors/);

      // A local resume finishes the episode: the host, never asked, notices the last commit and stops.
      const waiting = host();
      await waiting.said(/serving /);
      const resumed = await runCli(["run", "auratown", "--seed", "31", "--ticks", "6", "--nats", suite.nats.url, "--namespace", ns, "--resume", "-q"]);
      expect(resumed.code).toBe(0);
      const w = await waiting.within(10_000);
      expect(w.code).toBe(0);
      expect(w.err).toContain(`actor-host: episode ${episode} finished (6 of 6 ticks committed; its last tick was committed by a sequencer that never asked for these actors); stopping`);

      // A finished episode has nothing to serve: said at once, without serving (its start is most of
      // the wait, which a loaded machine makes longer).
      const late = await host().within(30_000);
      expect(late.code).toBe(0);
      expect(late.err).toContain(`actor-host: episode ${episode} is already finished (6 of 6 ticks committed); nothing to serve`);
      expect(late.err).not.toMatch(/serving/);
      await expectLogEqualsEmbedded(ns, 31, 6);
    });

    it("a sequencer killed mid-run: its hosts stop after --idle-timeout saying so; `run --resume --remote all` with new hosts continues from the latest snapshot and the log equals an uninterrupted run's", inLane(180_000), async () => {
      const ns = suite.nats.namespace("idle");
      const episode = "auratown-s32-baseline";
      const host = (actors: string, ...extra: string[]) => start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", actors, ...extra]);
      // A snapshot every tick (the default keeps a day's last only): the resume restores the hosts from one.
      const run = (...extra: string[]) => start(["run", "auratown", "--seed", "32", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "--snapshot-every", "1", ...extra]);
      const [a, b] = [host(AGENTS_A, "--idle-timeout", "3"), host(AGENTS_B, "--idle-timeout", "3")];
      const sequencer = run();
      await partialLog(ns, episode, 150, sequencer);
      sequencer.child.kill("SIGKILL");
      await sequencer.done;
      for (const h of await Promise.all([a.within(20_000), b.within(20_000)])) {
        expect(h.code).toBe(2);
        expect(h.err).toMatch(new RegExp(`actor-host: the sequencer of episode ${episode} has asked nothing for 3 s \\(--idle-timeout\\); stopping with the episode unfinished \\(\\d+ of 34 ticks committed\\): continue it with \`probetown run … --resume\``));
      }

      const resumed = await resumeWith(run("--resume"), [host(AGENTS_A), host(AGENTS_B)]);
      expect(resumed.out).toMatch(/resumed after tick \d+/);
      await expectLogEqualsEmbedded(ns, 32, 34);
    });
  });

  describe("runs that lose their hosts", lane, () => {
    it("an actor host SIGKILLed mid-run fails the run naming the actor and episode (exit 2); the surviving host (set back to the snapshot) and a new one finish it with `--resume --remote all`, as an uninterrupted run", inLane(180_000), async () => {
      const ns = suite.nats.namespace("lost");
      const episode = "auratown-s33-baseline";
      const host = (actors: string) => start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", actors]);
      // A snapshot every tick (the default keeps a day's last only): the resume restores the hosts from one.
      const run = (...extra: string[]) => start(["run", "auratown", "--seed", "33", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "--snapshot-every", "1", ...extra]);
      const [a, b] = [host(AGENTS_A), host(AGENTS_B)];
      const sequencer = run();
      await partialLog(ns, episode, 150, sequencer);
      b.child.kill("SIGKILL");
      sequencer.child.kill("SIGCONT");
      const waited = asleepUntilExit(sequencer.child);
      await b.done;
      const failed = await sequencer.within(60_000);
      expect(failed.code).toBe(2);
      // Killed mid-request or between two: told within seconds (the sequencer's exit included), not at
      // the 30 s request timeout; counted is the time the sequencer waited, not the time a busy
      // machine kept it from running (test/timing.ts).
      expect(await waited).toBeLessThan(20_000);
      expect(failed.err).toMatch(new RegExp(`error: episode ${episode}: the actor host serving (agent/liu-yang|agent/wang-jun|env/auratown) stopped answering \\(.*\\); the log so far is kept: start an actor host for \\1 again and continue the episode with \`run --resume\``));

      await resumeWith(run("--resume"), [a, host(AGENTS_B)]);
      await expectLogEqualsEmbedded(ns, 33, 34);
    });

    it("`run --resume --remote all` of a run that found no hosts says which actors it waits for, and finishes once their hosts come", inLane(90_000), async () => {
      const ns = suite.nats.namespace("wait");
      const episode = "auratown-s34-baseline";
      await headerOnlyLog(ns, 34, 6);
      const sequencer = start(["run", "auratown", "--seed", "34", "--ticks", "6", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "--resume"]);
      await sequencer.said(new RegExp(`run: waiting for actor hosts serving agent/chen-mei, agent/lin-wei, agent/liu-yang, agent/wang-jun, agent/zhang-hao, env/auratown of episode ${episode}, up to 30 s in all \\(start them with \`probetown actor-host ${episode} --nats nats://127\\.0\\.0\\.1:\\d+ --namespace ${ns} --actors agent/chen-mei,`));
      const h = start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", "all"]);
      const s = await sequencer.within(60_000);
      if (s.code !== 0) console.error(s.err);
      expect(s.code).toBe(0);
      expect((await h.within(10_000)).code).toBe(0);
      await expectLogEqualsEmbedded(ns, 34, 6);
    });
  });
});
