// Issue 3 acceptance, end to end over the tests' nats-server (one test restarts a server of its own): actors spread over OS processes give
// the embedded log; a second sequencer is refused; a killed worker and a restarted server both
// end with complete, identical logs.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { JetStreamSnapshotStore, openSnapshotBuckets } from "../infra/jetStreamSnapshotStore.ts";
import { SnapshotDamaged } from "../events/errors.ts";
import { snapshotFixture } from "./contracts/snapshotStores.ts";
import { JetStreamJobQueue, jobQueueNames } from "../infra/jetStreamJobQueue.ts";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { runEpisode } from "../services/kernel/episodes.ts";
import { firstSegment, frozenWhen, logRecords, tempDir, withoutMetaLine, runCli, startCli, sweepFinished } from "./helpers.ts";
import { ensureLogStream } from "../infra/jetStreamEventStore.ts";
import { verifyFromNats } from "../services/cli/distributed.ts";
import { withNats } from "../services/distributed/episodes.ts";
import { connectNats, NatsReadStalled, NatsUnavailable } from "../infra/nats.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { natsForSuite, startTestNats } from "./natsServer.ts";


const start = startCli;

const suite = natsForSuite();

const readLogFromNats = (ns: string, episode: string, nc: NatsConnection = suite.nc): Promise<LogRecord[]> =>
  distributedBackend(nc, ns).eventStores.read(episode);

const embeddedLog = async (seed: number, ticks: number): Promise<LogRecord[]> => {
  const r = await runEpisode({ world: "auratown", seed, ticks, dir: join(tempDir("embedded"), "ep"), trace: { exporter: "none" } });
  return logRecords(r.dir);
};

const spans = (file: string) =>
  existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { name: string; traceId: string; spanId: string; parentSpanId?: string; kind: string }) : [];

describe("distributed runs over NATS", () => {
  it("a day with agents, environment and sequencer in three processes logs exactly the embedded records, verifies, and is one trace", async () => {
    const ns = suite.nats.namespace("three");
    const episode = "auratown-s42-baseline";
    const work = tempDir("three");
    const hostA = start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", "agent/chen-mei,agent/lin-wei,agent/zhang-hao", "--trace", `jsonl:${join(work, "a.jsonl")}`]);
    const hostB = start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", "agent/liu-yang,agent/wang-jun,env/auratown", "--trace", `jsonl:${join(work, "b.jsonl")}`]);
    const sequencer = start(["run", "auratown", "--seed", "42", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "--trace", `jsonl:${join(work, "seq.jsonl")}`]);
    const [s, a, b] = await Promise.all([sequencer.done, hostA.done, hostB.done]);
    expect(s.err).toBe("");
    expect(s.code).toBe(0);
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    expect(a.err).toMatch(/serving agent\/chen-mei, agent\/lin-wei, agent\/zhang-hao/);
    const distributed = await readLogFromNats(ns, episode);
    const embedded = await embeddedLog(42, 34);
    expect(distributed.length).toBe(embedded.length);
    expect(distributed.map(withoutMetaLine)).toEqual(embedded.map(withoutMetaLine));

    const v = await runCli(["verify", episode, "--nats", suite.nats.url, "--namespace", ns]);
    expect(v.out).toMatch(/^OK: auratown-s42-baseline: \d+ records, hash chain intact/);
    expect(v.code).toBe(0);

    // The JetStream copy replays and inspects like an episode directory.
    const lastCommitted = distributed.findLast((r) => r.type === "tick.committed")!;
    const replay = await runCli(["replay", episode, "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.out)).toMatchObject({ episode, lastTick: 33, stateHash: (lastCommitted.payload as { stateHash: string }).stateHash });
    const tick10 = distributed.find((r) => r.type === "tick.committed" && r.tick === 10)!;
    const kept = await runCli(["replay", episode, "--nats", suite.nats.url, "--namespace", ns, "--to-tick", "10", "--snapshot", "--json"]);
    expect(kept.code).toBe(0);
    const key = (tick10.payload as { stateHash: string }).stateHash;
    expect(JSON.parse(kept.out).snapshot).toContain(key);
    expect((await new JetStreamSnapshotStore(suite.nc, ns, episode).get(key))?.tick).toBe(10);
    const inspect = await runCli(["inspect", episode, "--nats", suite.nats.url, "--namespace", ns, "--from", "12", "--to", "12", "--agent", "lin-wei"]);
    expect(inspect.code).toBe(0);
    expect(inspect.out).toMatch(/tick 12 · Day 1 12:00[\s\S]*Lin Wei +@ /);
    // A fork kept in JetStream compares with its parent there, from the two logs.
    const fork = await runCli(["fork", episode, "--nats", suite.nats.url, "--namespace", ns, "--at", "20", "--condition", "baseline", "-q"]);
    expect(fork.code, fork.err).toBe(0);
    const diff = await runCli(["diff", episode, `${episode}~t20-baseline`, "--nats", suite.nats.url, "--namespace", ns, "--exit-code"]);
    expect(diff.code, diff.err).toBe(0);
    expect(diff.out).toMatch(/b forks a after tick 20\n.*IDENTICAL over ticks 21–33/);
    const typo = await runCli(["replay", "auratown-s43-baseline", "--nats", suite.nats.url, "--namespace", ns]);
    expect(typo.code).toBe(2);
    expect(typo.err).toMatch(/no episode auratown-s43-baseline in namespace \S+ at nats:\/\/\S+: it holds .*auratown-s42-baseline.* \(check the id and --namespace\)/);
    // Running the finished episode again into the same namespace is refused as a usage error.
    const again = await runCli(["run", "auratown", "--seed", "42", "--nats", suite.nats.url, "--namespace", ns, "-q"]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/episode auratown-s42-baseline already has a log in JetStream .*--resume/);

    // One trace across processes: every consumer span in the hosts continues a producer span of the sequencer.
    const seqSpans = spans(join(work, "seq.jsonl"));
    const producers = new Map(seqSpans.filter((x) => x.name.startsWith("deliver ")).map((x) => [x.spanId, x]));
    const traceIds = new Set(seqSpans.map((x) => x.traceId));
    expect(traceIds.size).toBe(1);
    const consumers = [...spans(join(work, "a.jsonl")), ...spans(join(work, "b.jsonl"))].filter((x) => x.name.startsWith("deliver "));
    expect(consumers.length).toBeGreaterThan(100);
    for (const c of consumers) {
      // DESIGN §8: the same `deliver <type>` name on both sides, the host's as the consumer.
      expect(c.kind).toBe("CONSUMER");
      expect(traceIds.has(c.traceId)).toBe(true);
      expect(producers.has(c.parentSpanId ?? "")).toBe(true);
    }
  }, 120_000);

  it("an actor host says where its trace goes and warns when its collector got none of it; a bare --trace jsonl for a JetStream log is refused (it went nowhere)", async () => {
    const ns = suite.nats.namespace("hosttrace");
    const episode = "auratown-s12-baseline";
    const collector = "http://127.0.0.1:9/v1/traces"; // nothing listens on the discard port
    const host = start(["actor-host", episode, "--nats", suite.nats.url, "--namespace", ns, "--actors", "all", "--trace", `otlp:${collector}`]);
    const run = await runCli(["run", "auratown", "--seed", "12", "--ticks", "2", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all", "-q"]);
    expect(run.code).toBe(0);
    const h = await host.done;
    expect(h.code).toBe(0);
    expect(h.err).toContain(`traces → OTLP ${collector}`);
    expect(h.err).toMatch(/actor-host: warning: \d+ trace spans could not be delivered \(connect ECONNREFUSED 127\.0\.0\.1:9\)/);

    const bare = await runCli(["run", "auratown", "--seed", "13", "--ticks", "1", "--nats", suite.nats.url, "--namespace", ns, "--trace", "jsonl"]);
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/--trace jsonl: a log in JetStream has no directory .*--trace jsonl:<file>/);
  }, 60_000);

  it("fork --nats: a child of a JetStream parent, in JetStream, continues the parent's records exactly under its condition; verify checks it against the parent there", async () => {
    const ns = suite.nats.namespace("fork");
    const parentRun = await runCli(["run", "auratown", "--seed", "9", "--ticks", "12", "--nats", suite.nats.url, "--namespace", ns]);
    expect(parentRun.code).toBe(0);
    // The readable summary a file run prints (it printed none with --nats): the same records, the same summary.
    const fileRun = await runCli(["run", "auratown", "--seed", "9", "--ticks", "12", "--log", join(tempDir("summary"), "ep")]);
    const summaryOf = (out: string) => out.slice(out.indexOf("Where everyone went"), out.indexOf("\nlog:"));
    expect(summaryOf(parentRun.out)).toMatch(/^Where everyone went\n[\s\S]*Stale beliefs: /);
    expect(summaryOf(parentRun.out)).toBe(summaryOf(fileRun.out));
    const parent = await readLogFromNats(ns, "auratown-s9-baseline");
    const fork = await runCli(["fork", "auratown-s9-baseline", "--at", "5", "--condition", "baseline", "--nats", suite.nats.url, "--namespace", ns, "-q"]);
    expect(fork.err).toBe("");
    expect(fork.code).toBe(0);
    expect(fork.out).toContain(`log:   jetstream:${ns}/auratown-s9-baseline~t5-baseline`);
    const child = await readLogFromNats(ns, "auratown-s9-baseline~t5-baseline");
    expect(child[0]!.type).toBe("episode.forked");
    const strip = (r: LogRecord) => ({ seq: r.seq, tick: r.tick, type: r.type, from: r.from, to: r.to, payload: r.payload, cause: r.cause });
    expect(child.slice(1).map(strip)).toEqual(parent.filter((r) => r.seq > child[0]!.seq).map(strip));
    const verified = await runCli(["verify", "auratown-s9-baseline~t5-baseline", "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    expect(verified.code).toBe(0);
    // No "parent log not found" note: the header was checked against the parent's record in JetStream.
    expect(JSON.parse(verified.out)).toMatchObject({ ok: true, notes: [] });
    const other = await runCli(["fork", "auratown-s9-baseline", "--at", "5", "--condition", "no-conversation", "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    expect(other.code).toBe(0);
    expect(JSON.parse(other.out).stateHash).not.toBe((parent.findLast((r) => r.type === "tick.committed")!.payload as { stateHash: string }).stateHash);
    const withLog = await runCli(["fork", "auratown-s9-baseline", "--at", "5", "--condition", "baseline", "--nats", suite.nats.url, "--namespace", ns, "--log", "x"]);
    expect(withLog.code).toBe(2);
    expect(withLog.err).toMatch(/--log: with --nats the child's log goes to JetStream/);
  }, 60_000);

  it("replay, inspect and fork --nats refuse the flags a log's two ends refute before reading it, as for a file log; an unknown episode id names what the namespace holds (follow's too, after a while); verify --nats reports progress", async () => {
    const ns = suite.nats.namespace("early");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    const episode = "auratown-s7-baseline";
    // The records of a 6-tick run, one message each, with one in the middle altered: reading or
    // replaying the log stops there (exit 3), so an answer naming the flag shows it was checked first.
    const lines = readFileSync(firstSegment((await runEpisode({ world: "auratown", seed: 7, ticks: 6, dir: join(tempDir("early"), "ep"), trace: { exporter: "none" } })).dir), "utf8").trimEnd().split("\n");
    await ensureLogStream(suite.nc, ns);
    const js = jetstream(suite.nc);
    for (const [i, line] of lines.entries()) await js.publish(`pt.${ns}.log.${episode}`, i === 40 ? line.replace('"tick":', '"tick":9') : line);
    expect((await runCli(["inspect", episode, ...nats])).code).toBe(3);
    const cases: [string[], string][] = [
      [["inspect", episode, "--agent", "nobody"], `--agent nobody: no actor of ${episode} has that id or name (actors: agent/chen-mei, agent/lin-wei, agent/liu-yang, agent/wang-jun, agent/zhang-hao, env/auratown)`],
      [["inspect", episode, "--from", "50"], `--from 50: ${episode} has no tick 50 (its log ends at tick 5)`],
      [["replay", episode, "--state", "--agent", "nobody"], `--agent nobody: no actor of ${episode}`],
      [["replay", episode, "--to-tick", "50"], `--to-tick 50: ${episode} has no committed tick 50 (committed ticks: 0–5)`],
      [["fork", episode, "--at", "50", "--condition", "baseline"], "--at 50: the parent has no committed tick 50 (committed ticks: 0–5)"],
      [["fork", episode, "--at", "2", "--condition", "sunny"], "unknown condition 'sunny' for auratown"],
      [["fork", episode, "--at", "2", "--condition", "baseline", "--ticks", "3"], "--ticks 3: the child's total ticks, counted from tick 0 as its parent's, so it would end at tick 2; forked after tick 2, it must run past it: give --ticks 4 or more"],
      [["fork", episode, "--at", "5", "--condition", "baseline"], "--at 5: the parent runs 6 ticks, so its child would have none left"],
      [["verify", "auratown-s8-baseline"], `no episode auratown-s8-baseline in namespace ${ns} at ${suite.nats.url}: it holds ${episode} (check the id and --namespace)`],
      [["replay", "auratown-s7.baseline"], "episode id 'auratown-s7.baseline' cannot be used in a NATS subject"],
    ];
    for (const [args, message] of cases) {
      const r = await runCli([...args, ...nats]);
      expect(r.err, args.join(" ")).toContain(message);
      expect(r.code, args.join(" ")).toBe(2);
    }
    // follow waits for an episode that has not started, but says after a while what is there instead.
    // So does an actor host (it waited silently for ever). Both wait at once: each says it after
    // the same 5 s (FOLLOW_HINT_MS), which the test waited out twice, one after the other.
    const typo = start(["follow", "auratown-s70-baseline", ...nats]);
    const host = start(["actor-host", "auratown-s70-baseline", ...nats, "--actors", "all"]);
    const followSaid = said(typo, /follow: no record of episode auratown-s70-baseline yet; it holds auratown-s7-baseline \(check the id and --namespace\); still waiting, Ctrl-C stops/);
    const hostSaid = said(host, /actor-host: no record of episode auratown-s70-baseline yet; it holds auratown-s7-baseline \(check the id and --namespace\); still waiting for its run \(`probetown run … --remote`\), Ctrl-C stops/);
    try {
      await followSaid;
      typo.child.kill("SIGINT");
      expect((await typo.done).code).toBe(0);
      await hostSaid;
    } finally {
      typo.child.kill("SIGINT");
      host.child.kill("SIGINT");
    }
    expect((await host.done).code).toBe(0);
    const empty = await runCli(["replay", episode, "--nats", suite.nats.url, "--namespace", suite.nats.namespace("empty")]);
    expect(empty.err).toMatch(/no episode auratown-s7-baseline in namespace \S+ at \S+: the namespace holds no episodes at all \(check --namespace\)/);
    // run --resume of an episode the namespace does not hold says it starts it (as for a file log).
    const fresh = await runCli(["run", "auratown", "--seed", "7", "--ticks", "2", "--resume", "--no-summary", "--nats", suite.nats.url, "--namespace", suite.nats.namespace("resume-new")]);
    expect(fresh.code).toBe(0);
    expect(fresh.err).toMatch(/^run --resume: no log of episode auratown-s7-baseline in namespace \S+ yet; starting the episode there\n/);
    // verify --nats reports its progress tick by tick (drawn as a bar on a terminal), as for a file log.
    const intact = suite.nats.namespace("progress");
    expect((await runCli(["run", "auratown", "--seed", "7", "--ticks", "3", "--nats", suite.nats.url, "--namespace", intact, "-q"])).code).toBe(0);
    const seen: [number, number][] = [];
    expect((await verifyFromNats(episode, suite.nats.url, intact, { onProgress: (done, total) => void seen.push([done, total]) })).exitCode).toBe(0);
    expect(seen).toEqual([[1, 3], [2, 3], [3, 3]]);
  }, 120_000);

  it("a server that stops answering mid-command (a request times out, a log read stalls) is named with its URL, exit 2, not an internal error", async () => {
    const silent = withNats(suite.nats.url, "verify", async (nc) => {
      nc.subscribe("probetown.test.silent"); // takes the request, never answers
      return nc.request("probetown.test.silent", "", { timeout: 100 });
    });
    const timedOut = await silent.then(() => null, (error: unknown) => error as Error);
    expect(timedOut).toBeInstanceOf(NatsUnavailable);
    expect(timedOut!.message).toMatch(/^--nats nats:\/\/\S+: the server stopped answering verify \(timeout\); nothing logged is lost: run the command again once it answers$/);
    const stalled = await withNats(suite.nats.url, "replay", () => Promise.reject(new NatsReadStalled("reading jetstream:PT_LOG_x/pt.x.log.e: no message for 10 s after 3 of 9 (is the server up?)"))).catch((error: unknown) => error as Error);
    // NatsUnavailable is exit 2 (the README's table: with --nats, no server).
    expect(stalled).toBeInstanceOf(NatsUnavailable);
    expect(stalled.message).toContain("the server stopped answering replay (reading jetstream:PT_LOG_x/pt.x.log.e: no message for 10 s");
  });

  it("a damaged JetStream tail: verify names the way out (a resume), and `run --resume` says what it cut and where it kept it", async () => {
    const ns = suite.nats.namespace("damaged");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    expect((await runCli(["run", "auratown", "--seed", "4", "--ticks", "4", ...nats, "-q"])).code).toBe(0);
    await jetstream(suite.nc).publish(`pt.${ns}.log.auratown-s4-baseline`, "not json at all\n");
    const damaged = await runCli(["verify", "auratown-s4-baseline", ...nats]);
    expect(damaged.code).toBe(3);
    expect(damaged.out).toMatch(/not valid JSON .*\n {2}records before this one are intact; `probetown run … --resume --nats …` .* cuts the damaged messages off, keeping them on its cut subject/);
    const resumed = await runCli(["run", "auratown", "--seed", "4", "--ticks", "4", ...nats, "--resume"]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toContain(`cut back to the last good record; the cut bytes are kept in the subject pt.${ns}.cut.auratown-s4-baseline`);
    expect((await runCli(["verify", "auratown-s4-baseline", ...nats])).code).toBe(0);
  }, 60_000);

  it("a damaged latest-snapshot KV entry: `run --resume` continues from the snapshots the log names, as for a file pointer, and a snapshot put replaces the entry", async () => {
    const ns = suite.nats.namespace("damaged-latest");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    expect((await runCli(["run", "auratown", "--seed", "6", "--ticks", "6", "--snapshot-every", "2", ...nats, "-q"])).code).toBe(0);
    const { index, indexName } = await openSnapshotBuckets(suite.nc, ns);
    const latestKey = "auratown-s6-baseline.latest";
    await index.put(latestKey, "garbage");
    const resumed = await runCli(["run", "auratown", "--seed", "6", "--ticks", "6", "--snapshot-every", "2", ...nats, "--resume", "-q"]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(new RegExp(`^run --resume: the latest-snapshot pointer \\(KV bucket '${indexName}', key '${latestKey.replaceAll(".", "\\.")}'\\) is damaged: not a \\{key, tick\\} JSON object whose key is a state hash; it is kept as it is until the next snapshot replaces it; continuing after tick 5 from snapshot [0-9a-f]{12}…\n$`));
    expect((await index.get(latestKey))?.string()).toBe("garbage");
    const store = new JetStreamSnapshotStore(suite.nc, ns, "auratown-s6-baseline");
    await expect(store.latest()).rejects.toBeInstanceOf(SnapshotDamaged);
    const snapshot = snapshotFixture("damaged-latest", 9);
    await store.put(snapshot);
    expect(await store.latest()).toBe(snapshot.stateHash);
  }, 60_000);

  it("follow, started before the episode, prints its records live in log order and stops by itself after the last tick", async () => {
    const ns = suite.nats.namespace("follow");
    const episode = "auratown-s8-baseline";
    const follower = start(["follow", episode, "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    await said(follower, /waiting for records/);
    const run = await runCli(["run", "auratown", "--seed", "8", "--ticks", "6", "--nats", suite.nats.url, "--namespace", ns, "--fsync", "commit", "-q"]);
    expect(run.code).toBe(0);
    const followed = await follower.done;
    expect(followed.code).toBe(0);
    expect(followed.err).toMatch(/committed its last tick \(5\); done/);
    const logged = await readLogFromNats(ns, episode);
    const printed = followed.out.trim().split("\n").map((l) => JSON.parse(l) as LogRecord);
    expect(printed.map(withoutMetaLine)).toEqual(logged.map(withoutMetaLine));
    // Afterwards, from a seq: only the tail, still ending on its own; the text form heads each tick.
    const tail = await runCli(["follow", episode, "--nats", suite.nats.url, "--namespace", ns, "--from-seq", String(logged.length - 3), "-q"]);
    expect(tail.code).toBe(0);
    expect(tail.out.split("\n").filter((l) => l.startsWith("  #")).map((l) => Number(/#(\d+)/.exec(l)![1]))).toEqual([logged.length - 3, logged.length - 2, logged.length - 1]);
    expect(tail.out).toMatch(/^tick 5\n/);
  }, 60_000);

  it("a second sequencer for an episode that is being written is rejected and says so", async () => {
    const ns = suite.nats.namespace("second");
    // The first sequencer holds the episode while it waits for actor hosts that never come.
    const first = start(["run", "auratown", "--seed", "5", "--nats", suite.nats.url, "--namespace", ns, "--remote", "all"]);
    // Its header is logged once it holds the writer lock (2.5 s of sleep did not always see it there on a loaded machine).
    await waitForPartialLog(ns, "auratown-s5-baseline", 0);
    const second = await runCli(["run", "auratown", "--seed", "5", "--nats", suite.nats.url, "--namespace", ns]);
    const wrongActor = await runCli(["actor-host", "auratown-s5-baseline", "--nats", suite.nats.url, "--namespace", ns, "--actors", "agent/nobody"]);
    first.child.kill("SIGTERM");
    await first.done;
    expect(wrongActor.code).toBe(2);
    expect(wrongActor.err).toMatch(/--actors: episode auratown-s5-baseline has no actor agent\/nobody \(actors: agent\/chen-mei, /);
    expect(second.code).toBe(2);
    expect(second.err).toMatch(/episode auratown-s5-baseline already has a sequencer .*a second writer is rejected/);
  }, 60_000);

  const workerArgs = (ns: string, url = suite.nats.url) => ["worker", "--nats", url, "--namespace", ns, "--ack-wait", "2000", "--lock-ttl", "2000"];

  /** Waits until `episode`'s JetStream log holds more than `n` records (and is not finished). */
  async function waitForPartialLog(ns: string, episode: string, n: number, nc = suite.nc): Promise<number> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const records = await readLogFromNats(ns, episode, nc).catch(() => [] as LogRecord[]);
      if (records.length > n) return records.length;
      if (Date.now() > deadline) throw new Error(`episode ${episode} never reached ${n} records`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * Waits until `episode`'s JetStream log holds more than `n` records, looked at while the workers
   * are frozen, and leaves them frozen (frozenWhen): a worker runs a 34-tick episode in a few tenths
   * of a second, and a read that saw 150 records saw it done some 50 ms later.
   */
  async function frozenPast(workers: readonly ReturnType<typeof start>[], ns: string, episode: string, n: number, nc = suite.nc): Promise<number> {
    await waitForPartialLog(ns, episode, 0, nc); // started: their start is not slowed by the freezing
    let seen = 0;
    await frozenWhen(workers.map((w) => w.child), async () => (seen = (await readLogFromNats(ns, episode, nc)).length) > n, `${n} records of ${episode}`);
    return seen;
  }

  async function expectSweepLogsEqualEmbedded(ns: string, seeds: readonly number[], ticks: number, nc = suite.nc): Promise<void> {
    for (const seed of seeds) {
      const distributed = await readLogFromNats(ns, `auratown-s${seed}-baseline`, nc);
      const seqs = distributed.map((r) => r.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      const embedded = await embeddedLog(seed, ticks);
      const firstDiff = distributed.findIndex((r, i) => JSON.stringify(withoutMetaLine(r)) !== JSON.stringify(withoutMetaLine(embedded[i]!)));
      if (firstDiff >= 0) console.error("DIFF", seed, firstDiff, JSON.stringify(distributed.slice(firstDiff - 2, firstDiff + 3)), "\nEMB", JSON.stringify(embedded.slice(firstDiff - 2, firstDiff + 3)));
      expect(distributed.map(withoutMetaLine)).toEqual(embedded.map(withoutMetaLine));
    }
  }

  interface SweepReport { ok: number; failed: number; outcomes: { id: string; ok: boolean; attempt: number; worker: string; stateHash: string; resumedAfterTick?: number; logRecords?: number; error?: string }[] }

  it("a worker killed with SIGKILL mid-episode: its job is redelivered, resumes the partial log, and every log equals an undisturbed run", async () => {
    const ns = suite.nats.namespace("kill");
    const seeds = [1, 2, 3];
    const sweep = start(["sweep", "auratown", "--seeds", "1-3", "--ticks", "34", "--snapshot-every", "4", "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    const doomed = start(workerArgs(ns));
    const seen = await frozenPast([doomed], ns, "auratown-s1-baseline", 150);
    doomed.child.kill("SIGKILL");
    await doomed.done;
    const partial = (await readLogFromNats(ns, "auratown-s1-baseline")).length;
    const rescuer = start(workerArgs(ns));
    const s = await sweep.done;
    rescuer.child.kill("SIGTERM");
    await rescuer.done;
    expect(s.code).toBe(0);
    const report = JSON.parse(s.out) as SweepReport;
    expect(report.ok).toBe(3);
    const redelivered = report.outcomes.find((o) => o.id === "auratown-s1-baseline")!;
    expect(seen).toBeGreaterThan(150);
    expect(partial).toBeLessThan((await embeddedLog(1, 34)).length);
    expect(redelivered.attempt).toBeGreaterThanOrEqual(2);
    expect(redelivered.resumedAfterTick).toBeGreaterThanOrEqual(3);
    // The outcome counts the whole log, as an undisturbed run's does.
    expect(redelivered.logRecords).toBe((await embeddedLog(1, 34)).length);
    await expectSweepLogsEqualEmbedded(ns, seeds, 34);
  }, 180_000);

  it("a worker stopped by SIGTERM says what it did; a second SIGTERM leaves its running job to the queue, which another worker continues from its log", async () => {
    const ns = suite.nats.namespace("stop-twice");
    const sweep = start(["sweep", "auratown", "--seeds", "31", "--ticks", "300", "--snapshot-every", "4", "--nats", suite.nats.url, "--namespace", ns, "--json"]);
    const first = start(workerArgs(ns));
    await frozenPast([first], ns, "auratown-s31-baseline", 100);
    const noticed = said(first, /finishing auratown-s31-baseline first \(a second Ctrl-C or SIGTERM leaves it to the queue\)/);
    first.child.kill("SIGTERM"); // taken when it goes on, its job still running
    first.child.kill("SIGCONT");
    await noticed;
    first.child.kill("SIGTERM");
    const stopped = await first.done;
    expect(stopped.code).toBe(0);
    expect(stopped.err).toMatch(/: stopped by SIGTERM, then by SIGTERM again: 0 jobs finished; left auratown-s31-baseline unfinished to the queue: redelivered after the queue's ack wait \(2 s\) to a worker, which continues it from its log; .*\n$/);
    const rescuer = start(workerArgs(ns));
    const s = await sweep.done;
    expect(s.code, s.err).toBe(0);
    const outcome = (JSON.parse(s.out) as SweepReport).outcomes[0]!;
    expect(outcome.attempt).toBeGreaterThanOrEqual(2);
    expect(outcome.resumedAfterTick).toBeGreaterThanOrEqual(0);
    rescuer.child.kill("SIGTERM");
    const r = await rescuer.done;
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/: stopped by SIGTERM after 1 job finished; no job was running\n$/);
    await expectSweepLogsEqualEmbedded(ns, [31], 300);
  }, 180_000);

  it("a worker's job that resumes a log past a damaged latest-snapshot pointer says so on the worker's stderr, naming the episode", async () => {
    const ns = suite.nats.namespace("worker-note");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    expect((await runCli(["run", "auratown", "--seed", "8", "--ticks", "4", "--snapshot-every", "2", ...nats, "-q"])).code).toBe(0);
    const { index } = await openSnapshotBuckets(suite.nc, ns);
    await index.put("auratown-s8-baseline.latest", "garbage");
    const worker = start(workerArgs(ns));
    const s = await runCli(["sweep", "auratown", "--seeds", "8", "--ticks", "4", "--snapshot-every", "2", ...nats, "--json"]);
    expect(s.code, s.err).toBe(0);
    expect((JSON.parse(s.out) as SweepReport).outcomes[0]).toMatchObject({ resumedAfterTick: 3, records: 0 });
    worker.child.kill("SIGTERM");
    const w = await worker.done;
    expect(w.err).toMatch(/: auratown-s8-baseline: the latest-snapshot pointer \(KV bucket .*\) is damaged: .*; continuing after tick 3 from snapshot [0-9a-f]{12}…\n/);
  }, 60_000);

  it("a worker's job that resumes a log with a damaged JetStream tail says, as `run --resume` does, what it cut and where it kept it, naming the episode (it cut it without a word)", async () => {
    const ns = suite.nats.namespace("worker-cut");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    expect((await runCli(["run", "auratown", "--seed", "9", "--ticks", "4", ...nats, "-q"])).code).toBe(0);
    const records = await readLogFromNats(ns, "auratown-s9-baseline");
    await jetstream(suite.nc).publish(`pt.${ns}.log.auratown-s9-baseline`, '{"seq": 9');
    const worker = start(workerArgs(ns));
    const s = await runCli(["sweep", "auratown", "--seeds", "9", "--ticks", "4", ...nats, "--json"]);
    expect(s.code, s.err).toBe(0);
    expect((JSON.parse(s.out) as SweepReport).outcomes[0]).toMatchObject({ ok: true, records: 0 });
    worker.child.kill("SIGTERM");
    const w = await worker.done;
    expect(w.err).toMatch(new RegExp(`: auratown-s9-baseline: jetstream:PT_LOG_${ns}/pt\\.${ns}\\.log\\.auratown-s9-baseline \\(stream seq \\d+\\): not valid JSON .*: line ${records.length + 1}: torn final record \\(9 bytes without a complete JSON line; last good record seq ${records.length - 1}\\)\ncut back to the last good record; the cut bytes are kept in the subject pt\\.${ns}\\.cut\\.auratown-s9-baseline\n`));
    expect((await readLogFromNats(ns, "auratown-s9-baseline")).map(withoutMetaLine)).toEqual(records.map(withoutMetaLine));
  }, 60_000);

  it("sweep --workers: what its local workers' resumes cut or passed over is said on the sweep's stderr, naming worker and episode, without their routine lines; with -q too, as `run --resume -q` says it (they ran with --quiet: nothing reached the user)", async () => {
    const damaged = async (name: string) => {
      const ns = suite.nats.namespace(name);
      const nats = ["--nats", suite.nats.url, "--namespace", ns];
      for (const seed of ["8", "9"]) expect((await runCli(["run", "auratown", "--seed", seed, "--ticks", "4", "--snapshot-every", "2", ...nats, "-q"])).code).toBe(0);
      // Seed 9's log gets a torn message at its end; seed 8's latest-snapshot pointer is damaged.
      const records = await readLogFromNats(ns, "auratown-s9-baseline");
      await jetstream(suite.nc).publish(`pt.${ns}.log.auratown-s9-baseline`, '{"seq": 9');
      const { index } = await openSnapshotBuckets(suite.nc, ns);
      await index.put("auratown-s8-baseline.latest", "garbage");
      const sweep = ["sweep", "auratown", "--seeds", "8-9", "--ticks", "4", "--snapshot-every", "2", ...nats, "--workers", "1"];
      return { ns, records, sweep };
    };
    const cut = (ns: string, records: readonly LogRecord[]) =>
      `local-1@\\S+:\\d+: auratown-s9-baseline: jetstream:PT_LOG_${ns}/pt\\.${ns}\\.log\\.auratown-s9-baseline \\(stream seq \\d+\\): not valid JSON .*: line ${records.length + 1}: torn final record \\(9 bytes without a complete JSON line; last good record seq ${records.length - 1}\\)\ncut back to the last good record; the cut bytes are kept in the subject pt\\.${ns}\\.cut\\.auratown-s9-baseline\n`;
    const pointer = "local-1@\\S+:\\d+: auratown-s8-baseline: the latest-snapshot pointer \\(KV bucket .*\\) is damaged: .*; continuing after tick 3 from snapshot [0-9a-f]{12}…\n";
    const routine = /taking episode|done \(attempt|stopped by|its sweep ended|lost the NATS server/;

    const plain = await damaged("local-notes");
    const s = await runCli(plain.sweep);
    expect(s.code, s.err).toBe(0);
    expect(s.err).toMatch(new RegExp(cut(plain.ns, plain.records)));
    expect(s.err).toMatch(new RegExp(pointer));
    expect(s.err).not.toMatch(routine);
    expect((await readLogFromNats(plain.ns, "auratown-s9-baseline")).map(withoutMetaLine)).toEqual(plain.records.map(withoutMetaLine));

    // --quiet prints only the summary, and what the resumes cut or passed over: those lines alone.
    const quiet = await damaged("local-notes-q");
    const q = await runCli([...quiet.sweep, "-q"]);
    expect(q.code, q.err).toBe(0);
    expect(q.out).toMatch(/^2 episodes: 2 ok, 0 failed in /);
    expect(q.err).toMatch(new RegExp(`^(${cut(quiet.ns, quiet.records)}${pointer}|${pointer}${cut(quiet.ns, quiet.records)})$`));
  }, 60_000);

  it("restarting the NATS server mid-sweep: every episode completes once, with logs identical to an undisturbed run", async () => {
    // A server of its own: the shared one is other tests' too.
    const own = await startTestNats({ own: true });
    const nc = await connectNats(own.url, { name: "distributed-restart" });
    try {
      const ns = own.namespace("restart");
      const seeds = [11, 12, 13, 14];
      const sweep = start(["sweep", "auratown", "--seeds", "11-14", "--ticks", "34", "--snapshot-every", "4", "--nats", own.url, "--namespace", ns, "--json"]);
      const workers = [start(workerArgs(ns, own.url)), start(workerArgs(ns, own.url))];
      // Restarted while the episodes run (they could all be done before a test held up on a loaded machine restarted it).
      await frozenPast(workers, ns, "auratown-s11-baseline", 100, nc);
      const restarted = own.restart(); // stopped at once; the workers go on after
      for (const w of workers) w.child.kill("SIGCONT");
      await restarted;
      await sweepFinished<SweepReport>(sweep, workers, seeds);
      const s = await sweep.done;
      // The sweep said the server went away and came back (it used to wait in silence).
      expect(s.err).toMatch(/sweep: lost the NATS server at nats:\/\/127\.0\.0\.1:\d+; reconnecting/);
      expect(s.err).toMatch(/sweep: reconnected to nats:\/\/127\.0\.0\.1:\d+ after \d+\.\d s/);
      await expectSweepLogsEqualEmbedded(ns, seeds, 34, nc);
    } finally {
      await nc.close().catch(() => undefined);
      await own.stop();
    }
  }, 180_000);

  it("sweep --workers starts local workers, and a resubmitted sweep runs nothing twice", async () => {
    const ns = suite.nats.namespace("idem");
    const args = ["sweep", "auratown", "--seeds", "21-24", "--ticks", "4", "--nats", suite.nats.url, "--namespace", ns, "--json"];
    const first = await runCli([...args, "--workers", "2"]);
    expect(first.code).toBe(0);
    const a = JSON.parse(first.out) as SweepReport;
    expect(a.ok).toBe(4);
    // No workers this time: the outcomes are already recorded, so the sweep completes at once.
    const again = await runCli(args);
    expect(again.code).toBe(0);
    const b = JSON.parse(again.out) as typeof a & { alreadyFinished: number };
    expect(b.alreadyFinished).toBe(4);
    // Said as served, not as queued and run (it said "4 episodes queued … start workers" and a rate).
    const told = await runCli(args.filter((a) => a !== "--json"));
    expect(told.code).toBe(0);
    expect(told.err).toContain(`sweep: 4 episodes in namespace ${ns}: 4 already finished (served from their recorded outcomes), none queued`);
    expect(told.err).not.toMatch(/queued in namespace|start workers/);
    expect(told.out).toMatch(/^4 episodes: 4 ok, 0 failed in \d+\.\d s \(all 4 already finished; none ran now\)\n/);
    const byId = (r: typeof a) => Object.fromEntries(r.outcomes.map((o) => [o.id, [o.worker, o.stateHash]]));
    expect(byId(b)).toEqual(byId(a));
    for (const seed of [21, 22, 23, 24]) {
      const records = await readLogFromNats(ns, `auratown-s${seed}-baseline`);
      expect(records.filter((r) => r.type === "episode.started")).toHaveLength(1);
      expect(records.filter((r) => r.type === "tick.committed")).toHaveLength(4);
    }
    // Other settings for the same ids: the recorded outcomes are not returned as this sweep's.
    const other = await runCli(args.map((a) => (a === "4" ? "5" : a)));
    expect(other.code).toBe(2);
    const c = JSON.parse(other.out) as { ok: number; outcomes: { ok: boolean; error?: string }[] };
    expect(c.ok).toBe(0);
    expect(c.outcomes[0]!.error).toMatch(/an earlier sweep already ran episode auratown-s2\d-baseline here with other settings \(ticks: 4 there, 5 asked for\)/);
  }, 120_000);

  it("a sweep episode whose id a `run` already used is refused, and the hint does not blame another sweep", async () => {
    const ns = suite.nats.namespace("collide");
    expect((await runCli(["run", "auratown", "--seed", "5", "--ticks", "3", "--nats", suite.nats.url, "--namespace", ns, "-q"])).code).toBe(0);
    const sweep = await runCli(["sweep", "auratown", "--seeds", "5-6", "--ticks", "2", "--nats", suite.nats.url, "--namespace", ns, "--workers", "1", "-q"]);
    expect(sweep.code).toBe(2);
    expect(sweep.out).toMatch(/FAILED auratown-s5-baseline after 1 attempt: .*another header \(ticks/);
    expect(sweep.out).toContain("another episode (from `run` or another sweep) has that id: use another --namespace");
    expect(sweep.out).not.toContain("an episode of another sweep");
  }, 60_000);

  /** Resolves once `p` has said `pattern` on stderr (the data so far is checked too). */
  const said = (p: ReturnType<typeof start>, pattern: RegExp): Promise<string> =>
    new Promise((resolve, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`never said ${pattern}: ${err}`)), 30_000);
      p.child.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
        if (pattern.test(err)) {
          clearTimeout(timer);
          resolve(err);
        }
      });
    });

  it("worker --ack-wait and --lock-ttl given on an existing namespace take effect, higher or lower, and say so; left unset they change nothing", async () => {
    const ns = suite.nats.namespace("flags");
    // A run creates the namespace's lock bucket (10 s), a sweep's queue opening its consumer (30 s).
    expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "2", "--nats", suite.nats.url, "--namespace", ns, "-q"])).code).toBe(0);
    const queue = await JetStreamJobQueue.open(suite.nc, ns);
    await queue.close();
    const jsm = await jetstreamManager(suite.nc);
    const ackWait = async () => ((await jsm.consumers.info(jobQueueNames(ns).jobs, "workers")).config.ack_wait ?? 0) / 1e6;
    const lockTtl = async () => (await jsm.streams.info(`KV_pt_locks_${ns}`)).config.max_age / 1e6;
    const ready = /taking episode and envprobe sweep jobs/;
    const worker = async (...flags: string[]) => {
      const w = start(["worker", "--nats", suite.nats.url, "--namespace", ns, ...flags]);
      const err = await said(w, ready);
      // Signalled on that line: it stops as it says (about half the time the signal came before
      // its listener, and the default action killed it without a word).
      w.child.kill("SIGTERM");
      const stopped = await w.done;
      expect(stopped.code, stopped.err).toBe(0);
      expect(stopped.err).toMatch(/: stopped by SIGTERM after 0 jobs finished; no job was running\n$/);
      return err;
    };
    const plain = await worker();
    expect(plain).not.toMatch(/ack wait|lock/);
    expect([await ackWait(), await lockTtl()]).toEqual([30_000, 10_000]);
    const lower = await worker("--ack-wait", "3000", "--lock-ttl", "2000");
    expect(lower).toContain("worker: the queue's ack wait was 30000 ms; set to 3000 ms for this namespace");
    // Lowered too (writers renew their locks often enough for any ttl the flag takes; it was refused).
    expect(lower).toContain(`worker: the writer-lock ttl was 10000 ms; set to 2000 ms for namespace ${ns} (a killed writer's episode is taken over after up to 4 s)`);
    expect([await ackWait(), await lockTtl()]).toEqual([3000, 2000]);
    const higher = await worker("--lock-ttl", "15000");
    expect(higher).toContain(`worker: the writer-lock ttl was 2000 ms; set to 15000 ms for namespace ${ns}`);
    expect(higher).not.toMatch(/ack wait/);
    expect([await ackWait(), await lockTtl()]).toEqual([3000, 15_000]);
    const same = await worker("--lock-ttl", "15000");
    expect(same).not.toMatch(/lock/);
    const tooShort = await runCli(["worker", "--nats", suite.nats.url, "--namespace", ns, "--lock-ttl", "500"]);
    expect(tooShort.code).toBe(2);
    expect(tooShort.err).toContain("--lock-ttl expects an integer ≥ 1000, got '500'");
  }, 60_000);
});
