// The JetStream event store (DESIGN §7): the EventStores contract against the tests' nats-server,
// then what only JetStream can get wrong: dedupe, the writer lock across connections, the
// server-side fence for a stale writer, cutting a damaged tail on resume, live follow.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { LogCorrupted, SequenceConflict, type TornTail } from "../events/errors.ts";
import { GENESIS_HASH, seal, type Draft, type LogRecord } from "../events/record.ts";
import { WriterLocked, type EventStore } from "../infra/eventStore.ts";
import { readLog } from "../infra/fileEventStore.ts";
import {
  createJetStreamEventStore,
  followJetStreamLog,
  jetStreamEventStores,
  readJetStreamLog,
  resumeJetStreamEventStore,
  scanJetStreamLog,
  setLockTtl,
  MIN_LOCK_TTL_MS,
} from "../infra/jetStreamEventStore.ts";
import { connectNats, kvKey, natsName, NatsUnavailable, subjects } from "../infra/nats.ts";
import { catalogueProblem, payloadProblem } from "../events/catalogue.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { eventStoresContract } from "./contracts/eventStores.ts";
import { logRecords, stopped, tempDir, until } from "./helpers.ts";
import { startTestNats } from "./natsServer.ts";
import { asleepWatch } from "./timing.ts";

const server = await startTestNats();
const nc = await connectNats(server.url, { name: "jetstream-event-store-test" });
const connections: NatsConnection[] = [nc];
const connectAnother = async () => {
  const other = await connectNats(server.url, { name: "jetstream-event-store-test-2" });
  connections.push(other);
  return other;
};

afterAll(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  await server.stop();
}, 30_000);

let episodes = 0;
const freshEpisode = () => `ep${++episodes}`;

eventStoresContract("JetStream", jetStreamEventStores(nc, server.namespace("contract")), freshEpisode);

const phase = (tick: number, name: string): Draft => ({ type: "tick.phase", from: "episode", to: "env/x", payload: { phase: name }, tick, cause: null });
const phases = (n: number, from = 0) => Array.from({ length: n }, (_, i) => phase(i + from, `p${i + from}`));

/** A well-formed record line, as another writer would publish it. */
const line = (previousHash: string, episode: string, seq: number, draft: Draft) => {
  const { record, line: text } = seal(previousHash, episode, seq, draft, 1);
  return { record, data: text.slice(0, -1) };
};

const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error("expected a rejection"); }, (e: unknown) => e as Error);

/** How many messages (commit batches) a subject holds. */
async function countOn(subject: string, stream: string, on: NatsConnection = nc): Promise<number> {
  const jsm = await jetstreamManager(on);
  return (await jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;
}

async function messagesOn(subject: string, stream: string): Promise<string[]> {
  const js = jetstream(nc);
  const consumer = await js.consumers.get(stream, { filter_subjects: subject });
  const out: string[] = [];
  const jsm = await jetstreamManager(nc);
  const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  if (last === null) return out;
  const messages = await consumer.consume();
  for await (const m of messages) {
    out.push(m.string());
    if (m.seq >= last.seq) break;
  }
  await consumer.delete().catch(() => undefined);
  return out;
}

describe("JetStream event store", () => {
  it("publishes a commit as one message of record lines, and does not double a retried publish that carries the same Nats-Msg-Id", async () => {
    const ns = server.namespace("dedupe");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    const written = await store.append(phases(3), { expectedSeq: -1 });
    await store.commit();
    const jsm = await jetstreamManager(nc);
    const stream = natsName("PT_LOG", ns);
    expect(await countOn(subjects.log(ns, episode), stream)).toBe(1);
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: subjects.log(ns, episode) });
    expect(stored!.string().split("\n").map((t) => (JSON.parse(t) as LogRecord).hash)).toEqual(written.map((r) => r.hash));
    const msgId = stored!.header.get("Nats-Msg-Id");
    expect(msgId).toMatch(new RegExp(`^${episode}:0-2:\\d+$`));
    const again = await jetstream(nc).publish(subjects.log(ns, episode), stored!.string(), { msgID: msgId });
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(stored!.seq);
    await store.close();
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(await countOn(subjects.log(ns, episode), stream)).toBe(1);
  });

  it("treats a duplicate ack for a first publish as someone else's record and refuses to go on", async () => {
    const ns = server.namespace("foreign-id");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    const kv = await new Kvm(nc).open(natsName("pt_locks", ns));
    const lock = await kv.get(kvKey(episode));
    // Another message already took the id the store will give the batch of seqs 0–2 (on another subject of the stream).
    await jetstream(nc).publish(subjects.cut(ns, episode), "foreign", { msgID: `${episode}:0-2:${lock!.revision}` });
    await store.append(phases(3), { expectedSeq: -1 });
    const error = await rejection(store.commit());
    expect(error.message).toMatch(new RegExp(`episode ${episode}: .*must be reopened \\(resume\\) to repair`));
    expect(error.message).toContain("seqs 0–2");
    expect(error.message).toContain("not this writer's");
    await expect(store.append(phases(1, 3), { expectedSeq: 2 })).rejects.toThrow(/must be reopened/);
    await expect(store.commit()).rejects.toThrow(/must be reopened/);
    await store.close();
  });

  it("rejects a second writer from another connection, naming the holder", async () => {
    const ns = server.namespace("second-writer");
    const episode = freshEpisode();
    const first = await createJetStreamEventStore(nc, ns, episode, { episode });
    const other = await connectAnother();
    const second = await rejection(createJetStreamEventStore(other, ns, episode, { episode }));
    expect(second).toBeInstanceOf(WriterLocked);
    expect(second.message).toMatch(new RegExp(`episode ${episode} already has a sequencer \\([^:]+:${process.pid}, since \\d{4}-.*\\); a second writer is rejected`));
    await first.close();
    // Released: now the other connection may take it.
    const taken = await createJetStreamEventStore(other, ns, episode, { episode });
    await taken.close();
  });

  it("refuses to create a log over an existing one", async () => {
    const ns = server.namespace("exists");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    await store.append(phases(1), { expectedSeq: -1 });
    await store.close();
    const error = await rejection(createJetStreamEventStore(nc, ns, episode, { episode }));
    expect(error.message).toContain(`episode ${episode} already has a log in JetStream stream ${natsName("PT_LOG", ns)}`);
  });

  it("resume waits for a live writer's renewed lock and then rejects; a dead writer's lock expires", async () => {
    const ns = server.namespace("lock-ttl");
    const episode = freshEpisode();
    // Renewed every 333 ms whatever the ttl: 2 s, not 1 s, lets a loaded machine miss a few renewals.
    const lockTtlMs = 2000;
    const live = await createJetStreamEventStore(nc, ns, episode, { episode, lockTtlMs });
    await live.append(phases(2), { expectedSeq: -1 });
    await live.commit();
    const other = await connectAnother();
    const started = Date.now();
    const notices: { episode: string; holder: string; waitMs: number }[] = [];
    const rejected = await rejection(resumeJetStreamEventStore(other, ns, episode, { episode, lockTtlMs, onLockWait: (n) => notices.push(n) }));
    expect(rejected).toBeInstanceOf(WriterLocked);
    // It said once, when it started, whose lock it was waiting for and for how long at most.
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ episode, holder: expect.stringMatching(/:\d+, since /) });
    expect(notices[0]!.waitMs).toBeGreaterThan(lockTtlMs);
    expect(notices[0]!.waitMs).toBeLessThanOrEqual(lockTtlMs + 2000);
    expect(rejected.message).toContain("a second writer is rejected");
    // It waited for ttl + 2 s, during which the live writer kept renewing its lock.
    expect(Date.now() - started).toBeGreaterThanOrEqual(lockTtlMs + 1900);
    await live.append(phases(1, 2), { expectedSeq: 1 });
    await live.commit();
    await live.close();

    // A writer that dies (its connection goes away without closing the store) stops renewing.
    const doomed = await connectAnother();
    const { store: dead } = await resumeJetStreamEventStore(doomed, ns, episode, { episode, lockTtlMs });
    await dead.append(phases(1, 3), { expectedSeq: 2 });
    await dead.commit();
    await doomed.close();
    const resumed = await resumeJetStreamEventStore(nc, ns, episode, { episode, lockTtlMs });
    expect(resumed.records.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    await resumed.store.append(phases(1, 4), { expectedSeq: 3 });
    await resumed.store.close();
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
  }, 30_000);

  it("a lock ttl lowered under a writer that holds its lock (worker --lock-ttl): the lock is still renewed in time, and a resume waits by the lowered ttl", async () => {
    const ns = server.namespace("lock-lower");
    const episode = freshEpisode();
    const live = await createJetStreamEventStore(nc, ns, episode, { episode, lockTtlMs: 10_000 });
    await live.append(phases(2), { expectedSeq: -1 });
    await live.commit();
    expect(await setLockTtl(nc, ns, MIN_LOCK_TTL_MS)).toMatchObject({ beforeMs: 10_000, ttlMs: MIN_LOCK_TTL_MS });
    // Renewed every third of the ttl it opened the bucket with (3.3 s), the lock expired after 1 s
    // and a second writer took the episode; and the resume waited by the old ttl (12 s).
    const other = await connectAnother();
    const waited = asleepWatch();
    const notices: { waitMs: number }[] = [];
    const rejected = await rejection(resumeJetStreamEventStore(other, ns, episode, { episode, lockTtlMs: 10_000, onLockWait: (n) => notices.push(n) }));
    expect(rejected).toBeInstanceOf(WriterLocked);
    expect(notices[0]!.waitMs).toBeLessThanOrEqual(MIN_LOCK_TTL_MS + 2000);
    // About 3 s; by the old ttl it was 12 s (the time waited, not the time a busy machine held this process up).
    expect(waited.asleepMs()).toBeLessThan(9000);
    await live.append(phases(1, 2), { expectedSeq: 1 });
    await live.commit();
    await live.close();
    await expect(setLockTtl(nc, ns, 500)).rejects.toThrow(/at least 1000 ms, got 500/);
  }, 30_000);

  it("a writer whose view is stale is fenced by the server, and the log keeps only well-formed records", async () => {
    const ns = server.namespace("fence");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    const written = await store.append(phases(2), { expectedSeq: -1 });
    await store.commit();
    // Another writer (bypassing the lock) appends seq 2 between two commits.
    const other = await connectAnother();
    const intruder = line(written[1]!.hash, episode, 2, phase(9, "intruder"));
    await jetstream(other).publish(subjects.log(ns, episode), intruder.data);
    await store.append(phases(2, 2), { expectedSeq: 1 });
    const error = await rejection(store.commit());
    expect(error).toBeInstanceOf(SequenceConflict);
    expect(error.message).toContain(`episode ${episode}`);
    expect(error.message).toContain("another writer (sequencer) appended");
    expect((error as SequenceConflict).actual).toBe(2);
    expect(error.message).toContain("rejected the append of seq 2–3");
    await expect(store.append(phases(1, 4), { expectedSeq: 3 })).rejects.toBeInstanceOf(SequenceConflict);
    await store.close();
    const records = await readJetStreamLog(nc, ns, episode);
    expect(records.map((r) => r.hash)).toEqual([written[0]!.hash, written[1]!.hash, intruder.record.hash]);
    // Every publish carries the expectation: nothing of the stale commit landed after the intruder.
    expect(await countOn(subjects.log(ns, episode), natsName("PT_LOG", ns))).toBe(2);
    expect(await countOn(subjects.cut(ns, episode), natsName("PT_LOG", ns))).toBe(0);
    // The next writer appends seq 3 again: a new lock epoch, so dedupe does not swallow it.
    const { store: next, records: resumed } = await resumeJetStreamEventStore(nc, ns, episode, { episode });
    expect(resumed).toHaveLength(3);
    await next.append(phases(2, 3), { expectedSeq: 2 });
    await next.close();
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
  });

  it("a lost writer lock fences later appends", async () => {
    const ns = server.namespace("lock-lost");
    const episode = freshEpisode();
    // The thief's entry lives as long as the ttl: a renewal any time before then finds it.
    const lockTtlMs = 10_000;
    const store = await createJetStreamEventStore(nc, ns, episode, { episode, lockTtlMs });
    const kv = await new Kvm(nc).open(natsName("pt_locks", ns));
    await kv.put(kvKey(episode), JSON.stringify({ owner: "thief:1", since: "2020-01-01T00:00:00.000Z" }));
    // Renewals run every 333 ms, and none writes once one found the other revision: time is all there is to wait for.
    await new Promise((r) => setTimeout(r, 1500));
    const error = await rejection(store.append(phases(1), { expectedSeq: -1 }));
    expect(error).toBeInstanceOf(SequenceConflict);
    expect(error.message).toContain("taken over by thief:1");
    await store.close();
    // Closing a fenced store leaves the new holder's lock alone.
    expect((await kv.get(kvKey(episode)))?.string()).toContain("thief:1");
  });

  it("a writer keeps its lock when its own renewal landed unanswered, or when the lock expired unclaimed (a server restart)", async () => {
    const ns = server.namespace("lock-kept");
    const episode = freshEpisode();
    const lockTtlMs = 1500;
    const store = await createJetStreamEventStore(nc, ns, episode, { episode, lockTtlMs });
    await store.append(phases(1), { expectedSeq: -1 });
    const kv = await new Kvm(nc).open(natsName("pt_locks", ns));
    const mine = (await kv.get(kvKey(episode)))!.string();
    // The same value under a newer revision: what a renewal applied by the server, whose reply was
    // lost in the restart, leaves behind. The writer adopts it: its next renewal lands on it.
    const put = await kv.put(kvKey(episode), mine);
    await until(async () => ((await kv.get(kvKey(episode)))?.revision ?? 0) > put, "a renewal after the put");
    await store.append(phases(1, 1), { expectedSeq: 0 });
    // The entry gone (it expired while the server was away) and nobody else took it: the writer takes it again.
    await kv.delete(kvKey(episode));
    await until(async () => (await kv.get(kvKey(episode)))?.string() === mine, "the lock taken again");
    await store.append(phases(1, 2), { expectedSeq: 1 });
    await store.commit();
    expect((await kv.get(kvKey(episode)))?.string()).toBe(mine);
    await store.close();
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual([0, 1, 2]);
  });

  it("resume refuses a gap (a complete record out of seq) as the file store does: exit 3, nothing cut, the lock released", async () => {
    const ns = server.namespace("gap");
    const stream = natsName("PT_LOG", ns);
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    const written = await store.append(phases(3), { expectedSeq: -1 });
    await store.close();
    // Records 4 and 5 without 3 (one batch message): a gap, then a record chained from the missing
    // one; then a well-formed message after it.
    const four = line(written[2]!.hash, episode, 4, phase(4, "p4"));
    const five = line(four.record.hash, episode, 5, phase(5, "p5"));
    const six = line(five.record.hash, episode, 6, phase(6, "p6"));
    const js = jetstream(nc);
    await js.publish(subjects.log(ns, episode), `${four.data}\n${five.data}`);
    await js.publish(subjects.log(ns, episode), six.data);

    // Reading reports the damage (location, stream seq, record seq) and modifies nothing.
    const read = await rejection(readJetStreamLog(nc, ns, episode));
    expect(read).toBeInstanceOf(LogCorrupted);
    expect(read.message).toMatch(new RegExp(`^jetstream:${stream}/${subjects.log(ns, episode).replace(/\./g, "\\.")} \\(stream seq \\d+\\): seq 4 \\(line 4\\): expected seq 3, found 4`));

    // Twice: the first refusal released the lock (the second is refused for the damage, not the lock).
    for (let i = 0; i < 2; i++) {
      const recovered: TornTail[] = [];
      const error = await rejection(resumeJetStreamEventStore(nc, ns, episode, { episode, onRecovered: (torn) => recovered.push(torn) }));
      expect(error).toBeInstanceOf(LogCorrupted);
      expect((error as LogCorrupted).completeRecord).toBe(true);
      expect((error as LogCorrupted).seq).toBe(4);
      expect((error as LogCorrupted).exitCode).toBe(3);
      expect(recovered).toEqual([]);
    }
    expect(await countOn(subjects.cut(ns, episode), stream)).toBe(0);
    expect(await countOn(subjects.log(ns, episode), stream)).toBe(3);
  });

  it("resume refuses a message whose later line breaks the chain, and a record of another episode", async () => {
    const ns = server.namespace("bad-line");
    const stream = natsName("PT_LOG", ns);
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    await store.append(phases(2), { expectedSeq: -1 });
    await store.commit();
    await store.append(phases(2, 2), { expectedSeq: 1 });
    await store.close();
    const before = await readJetStreamLog(nc, ns, episode);
    // A batch whose first line is a good seq 4, whose second line breaks the chain.
    const good = line(before[3]!.hash, episode, 4, phase(4, "p4"));
    const broken = line(GENESIS_HASH, episode, 5, phase(5, "p5"));
    await jetstream(nc).publish(subjects.log(ns, episode), `${good.data}\n${broken.data}`);
    const chain = await rejection(resumeJetStreamEventStore(nc, ns, episode, { episode }));
    expect(chain).toBeInstanceOf(LogCorrupted);
    expect((chain as LogCorrupted).completeRecord).toBe(true);
    expect((chain as LogCorrupted).seq).toBe(5);
    expect(await countOn(subjects.cut(ns, episode), stream)).toBe(0);

    // A valid record of another episode, chained on this log's last record: foreign, refused alike.
    const other = freshEpisode();
    const ns2 = server.namespace("foreign-episode");
    const own = await createJetStreamEventStore(nc, ns2, other, { episode: other });
    const mine = await own.append(phases(2), { expectedSeq: -1 });
    await own.close();
    await jetstream(nc).publish(subjects.log(ns2, other), line(mine[1]!.hash, "someone-else", 2, phase(2, "p2")).data);
    const foreign = await rejection(resumeJetStreamEventStore(nc, ns2, other, { episode: other }));
    expect(foreign).toBeInstanceOf(LogCorrupted);
    expect((foreign as LogCorrupted).completeRecord).toBe(true);
    expect((foreign as LogCorrupted).exitCode).toBe(3);
  });

  it("resume cuts a message that is not records (bad JSON), and refuses a duplicate seq", async () => {
    const ns = server.namespace("bad-json");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    const written = await store.append(phases(2), { expectedSeq: -1 });
    await store.close();
    const js = jetstream(nc);
    await js.publish(subjects.log(ns, episode), "{\"seq\":");
    const recovered: TornTail[] = [];
    const { store: resumed, records } = await resumeJetStreamEventStore(nc, ns, episode, { episode, onRecovered: (torn) => recovered.push(torn) });
    expect(records.map((r) => r.hash)).toEqual(written.map((r) => r.hash));
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.afterSeq).toBe(1);
    await resumed.close();
    expect(await messagesOn(subjects.cut(ns, episode), natsName("PT_LOG", ns))).toEqual(["{\"seq\":"]);
    expect(await readJetStreamLog(nc, ns, episode)).toHaveLength(2);

    await js.publish(subjects.log(ns, episode), line(written[0]!.hash, episode, 1, phase(1, "p1")).data); // duplicate seq 1
    const duplicate = await rejection(resumeJetStreamEventStore(nc, ns, episode, { episode }));
    expect(duplicate).toBeInstanceOf(LogCorrupted);
    expect((duplicate as LogCorrupted).completeRecord).toBe(true);
    expect(await countOn(subjects.cut(ns, episode), natsName("PT_LOG", ns))).toBe(1);
  });

  it("resume of an empty episode creates its log", async () => {
    const ns = server.namespace("resume-empty");
    const episode = freshEpisode();
    const { store, records } = await resumeJetStreamEventStore(nc, ns, episode, { episode });
    expect(records).toEqual([]);
    expect(store.head()).toEqual({ seq: -1, hash: GENESIS_HASH });
    await store.append(phases(1), { expectedSeq: -1 });
    await store.close();
    expect(await readJetStreamLog(nc, ns, episode)).toHaveLength(1);
  });

  it("follow yields the records appended after it started, from the requested seq", async () => {
    const ns = server.namespace("follow");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    await store.append(phases(2), { expectedSeq: -1 });
    await store.commit();
    const seen: number[] = [];
    const following = (async () => {
      for await (const record of followJetStreamLog(nc, ns, episode, 1)) {
        seen.push(record.seq);
        if (record.seq === 5) break;
      }
    })();
    await until(() => seen.length === 1, "the record before the follow");
    await store.append(phases(2, 2), { expectedSeq: 1 });
    await store.commit();
    await until(() => seen.length === 3, "the first records appended after it started");
    await store.append(phases(2, 4), { expectedSeq: 3 });
    await store.commit();
    await following;
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    await store.close();

    const controller = new AbortController();
    const stopped: number[] = [];
    const aborted = (async () => {
      for await (const record of followJetStreamLog(nc, ns, episode, 0, { signal: controller.signal })) stopped.push(record.seq);
    })();
    // Aborted once it has every record (300 ms were not always enough on a loaded machine): the follow then ends.
    await until(() => stopped.length === 6, "the follow to yield every record");
    controller.abort();
    await aborted;
    expect(stopped).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("a fork's log continues from the parent's hash and scans back", async () => {
    const ns = server.namespace("fork");
    const episode = freshEpisode();
    const parentHash = "cd".repeat(32);
    const header: Draft = {
      type: "episode.forked",
      from: "episode",
      to: null,
      payload: { world: "w", seed: 1, parent: "p", parentLog: "p", atSeq: 40, atTick: 3, parentHash, parentStateHash: "x", condition: "c", parentCondition: "c", config: {}, actors: [], ticks: 5 },
      tick: 3,
      cause: null,
    };
    const store = await createJetStreamEventStore(nc, ns, episode, { episode, firstSeq: 41, previousHash: parentHash });
    expect(store.head()).toEqual({ seq: 40, hash: parentHash });
    await store.append([header, phase(3, "x")], { expectedSeq: 40 });
    await store.close();
    const scanned = await scanJetStreamLog(nc, ns, episode);
    expect(scanned).toMatchObject({ torn: null, tornOffset: -1, lastFile: null });
    expect(scanned.records.map((r) => r.seq)).toEqual([41, 42]);
    const { store: resumed, records } = await resumeJetStreamEventStore(nc, ns, episode, { episode, firstSeq: 41, previousHash: parentHash });
    expect(records).toHaveLength(2);
    const [next] = await resumed.append([phase(4, "y")], { expectedSeq: 42 });
    expect(next!.seq).toBe(43);
    await resumed.close();
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual([41, 42, 43]);
  });

  it("reads a log that was never written as no records, like the file store", async () => {
    expect(readLog(join(tempDir("missing"), "log"))).toEqual([]);
    const ns = server.namespace("empty");
    // Neither the stream nor the subject exists yet; reading creates nothing.
    expect(await readJetStreamLog(nc, ns, "nothing-here")).toEqual([]);
    const jsm = await jetstreamManager(nc);
    await expect(jsm.streams.info(natsName("PT_LOG", ns))).rejects.toThrow();
    const store = await createJetStreamEventStore(nc, ns, "other", { episode: "other" });
    await store.close();
    expect(await scanJetStreamLog(nc, ns, "nothing-here")).toEqual({ records: [], torn: null, tornOffset: -1, lastFile: null });
  });

  it("stores a real AURATown log and reads it back checked; the fast catalogue check agrees with payloadProblem", async () => {
    const run = await runEpisode({ world: "auratown", seed: 3, ticks: 12, dir: join(tempDir("js-real"), "ep"), trace: { exporter: "none" } });
    const embedded = logRecords(run.dir);
    const ns = server.namespace("real");
    const store = await createJetStreamEventStore(nc, ns, run.episode, { episode: run.episode });
    let expected = -1;
    for (let i = 0; i < embedded.length; i += 40) {
      const drafts = embedded.slice(i, i + 40).map((r): Draft => ({ type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause, v: r.v }));
      expected = (await store.append(drafts, { expectedSeq: expected })).at(-1)!.seq;
      await store.commit();
    }
    await store.close();
    const read = await readJetStreamLog(nc, ns, run.episode);
    expect(read.map((r) => r.hash)).toEqual(embedded.map((r) => r.hash));

    // Every payload, and damaged variants of it, judged the same by the fast path and the schema.
    const damaged = (payload: unknown): unknown[] => {
      if (payload === null || typeof payload !== "object") return [null, 1.5, "x", [payload]];
      if (Array.isArray(payload)) return [null, {}, [...payload, payload[0] ?? null], payload.slice(1), payload.map(() => null), payload.map(() => 1.5)];
      const out: unknown[] = [[], null, "x"];
      const o = payload as Record<string, unknown>;
      for (const key of Object.keys(o)) {
        const { [key]: _gone, ...without } = o;
        out.push(without, { ...o, [key]: null }, { ...o, [key]: 1.5 }, { ...o, [key]: "x" }, { ...o, [key]: [] }, { ...o, [key]: {} }, { ...o, [key]: 2 ** 60 });
        for (const inner of damaged(o[key]).slice(0, 4)) out.push({ ...o, [key]: inner });
      }
      return out;
    };
    let compared = 0;
    for (const r of embedded) {
      for (const payload of [r.payload, ...damaged(r.payload)]) {
        expect(catalogueProblem(r.type, payload) === null, `${r.type} ${JSON.stringify(payload).slice(0, 200)}`).toBe(payloadProblem(r.type, payload) === null);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(embedded.length * 5);
    expect(catalogueProblem("no.such.type", {})).toMatch(/unknown event type/);
  }, 60_000);

  it("reports an unreachable server as NatsUnavailable naming the URL", async () => {
    const url = "nats://127.0.0.1:1";
    const error = await rejection(connectNats(url, { timeoutMs: 1000 }));
    expect(error).toBeInstanceOf(NatsUnavailable);
    expect(error.message).toContain(url);
  });

  it.skipIf(process.env.NATS_URL !== undefined && process.env.NATS_URL !== "")("retries publishes whose acks did not come in time, and dedupe keeps them single", async () => {
    // A server of its own, paused (SIGSTOP) while a batch is in flight: the commit times out on
    // the acks, retries with the same msg ids, and the server, resumed, stores each record once.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address() as { port: number };
        probe.close(() => resolve(address.port));
      });
    });
    const child = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", tempDir("nats-paused")], { stdio: "ignore" });
    try {
      const url = `nats://127.0.0.1:${port}`;
      let own: NatsConnection | null = null;
      for (let i = 0; i < 100 && own === null; i++) own = await connectNats(url, { timeoutMs: 500 }).catch(async () => { await new Promise((r) => setTimeout(r, 50)); return null; });
      connections.push(own!);
      const store = await createJetStreamEventStore(own!, "paused", "ep", { episode: "ep", ackTimeoutMs: 700 });
      await store.append(phases(20), { expectedSeq: -1 });
      await store.commit();
      child.kill("SIGSTOP");
      await stopped(child.pid!);
      await store.append(phases(100, 20), { expectedSeq: 19 });
      const committing = store.commit();
      await new Promise((r) => setTimeout(r, 1000)); // past the ack timeout: the retry is sent
      child.kill("SIGCONT");
      await committing;
      await store.append(phases(5, 120), { expectedSeq: 119 });
      await store.close();
      const records = await readJetStreamLog(own!, "paused", "ep");
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 125 }, (_, i) => i));
      // One message per commit, the retried one stored once.
      const info = await (await jetstreamManager(own!)).streams.info(natsName("PT_LOG", "paused"), { subjects_filter: subjects.log("paused", "ep") });
      expect(info.state.subjects?.[subjects.log("paused", "ep")]).toBe(3);
    } finally {
      child.kill("SIGCONT");
      child.kill("SIGTERM");
    }
  }, 30_000);

  it("a commit across a server restart retries unacked publishes without doubling them", async () => {
    // A server of its own, restarted under the commit (the shared one is other tests' too).
    const own = await startTestNats({ own: true });
    const ownNc = await connectNats(own.url, { name: "jetstream-event-store-restart" });
    connections.push(ownNc);
    try {
      const ns = own.namespace("restart");
      const episode = freshEpisode();
      const store = await createJetStreamEventStore(ownNc, ns, episode, { episode, ackTimeoutMs: 1500 });
      await store.append(phases(50), { expectedSeq: -1 });
      await store.commit();
      await store.append(phases(200, 50), { expectedSeq: 49 });
      await own.restart({ downMs: 200 });
      await store.commit();
      await store.append(phases(10, 250), { expectedSeq: 249 });
      await store.close();
      const records = await readJetStreamLog(ownNc, ns, episode);
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 260 }, (_, i) => i));
      expect(await countOn(subjects.log(ns, episode), natsName("PT_LOG", ns), ownNc)).toBe(3);
    } finally {
      await ownNc.close().catch(() => undefined);
      await own.stop();
    }
  }, 30_000);

  it("keeps appends local: append publishes nothing, each commit publishes its records as one message", async () => {
    const ns = server.namespace("pipeline");
    const stream = natsName("PT_LOG", ns);
    const episode = freshEpisode();
    const subject = subjects.log(ns, episode);
    const store: EventStore = await createJetStreamEventStore(nc, ns, episode, { episode });
    let expected = -1;
    for (let tick = 0; tick < 20; tick++) {
      const records = await store.append(phases(25, tick * 25), { expectedSeq: expected });
      expected = records.at(-1)!.seq;
      if (tick === 2) expect(await countOn(subject, stream)).toBe(0);
      if (tick % 4 === 3) await store.commit();
    }
    expect(await countOn(subject, stream)).toBe(5);
    await store.commit(); // nothing pending: publishes nothing
    expect(await countOn(subject, stream)).toBe(5);
    // A commit not awaited before the next append and commit: they run in order.
    const a = store.commit();
    await store.append(phases(10, 500), { expectedSeq: 499 });
    await Promise.all([a, store.commit()]);
    await store.close();
    expect(await countOn(subject, stream)).toBe(6);
    const records = await readJetStreamLog(nc, ns, episode);
    expect(records).toHaveLength(510);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 510 }, (_, i) => i));
  });

  it("with the 'snapshot' policy, commits publish nothing and a flush (or close) publishes every pending tick as one message", async () => {
    const ns = server.namespace("snapshot-policy");
    const stream = natsName("PT_LOG", ns);
    const episode = freshEpisode();
    const subject = subjects.log(ns, episode);
    const store: EventStore = await createJetStreamEventStore(nc, ns, episode, { episode, fsync: "snapshot" });
    let expected = -1;
    for (let tick = 0; tick < 8; tick++) {
      expected = (await store.append(phases(5, tick * 5), { expectedSeq: expected })).at(-1)!.seq;
      await store.commit();
      if (tick === 3) {
        expect(await countOn(subject, stream)).toBe(0);
        await store.flush();
        expect(await countOn(subject, stream)).toBe(1);
      }
    }
    expect(await countOn(subject, stream)).toBe(1);
    await store.close();
    expect(await countOn(subject, stream)).toBe(2);
    expect((await readJetStreamLog(nc, ns, episode)).map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });
  it("splits a commit over 512 KB (a 1,000-agent tick) into several messages and reads it back intact", async () => {
    const ns = server.namespace("split");
    const stream = natsName("PT_LOG", ns);
    const episode = freshEpisode();
    const subject = subjects.log(ns, episode);
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    // 1,000 records of ~1.2 KB each: ~1.3 MB in one commit, more than the server's 1 MB max_payload.
    const big = Array.from({ length: 1000 }, (_, i) => phase(1, `agent-${i}-${"x".repeat(1200)}`));
    const written = await store.append([phase(0, "start"), ...big], { expectedSeq: -1 });
    await store.commit();
    await store.append(phases(2, 2), { expectedSeq: 1000 });
    await store.close();
    const messages = await countOn(subject, stream);
    expect(messages).toBeGreaterThanOrEqual(4); // ≥ 3 for the big commit, 1 for the last
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq });
      expect(m!.data.length).toBeLessThanOrEqual(512 * 1024);
      expect(m!.header.get("Nats-Msg-Id")).toMatch(new RegExp(`^${episode}:\\d+-\\d+:\\d+$`));
    }
    const read = await readJetStreamLog(nc, ns, episode);
    expect(read.map((r) => r.hash)).toEqual([...written.map((r) => r.hash), ...read.slice(1001).map((r) => r.hash)]);
    expect(read.map((r) => r.seq)).toEqual(Array.from({ length: 1003 }, (_, i) => i));
    expect(read[500]!.payload).toEqual(big[499]!.payload);
    const { store: resumed, records } = await resumeJetStreamEventStore(nc, ns, episode, { episode });
    expect(records).toHaveLength(1003);
    await resumed.close();
  });

  it("reads a log longer than one pull, and stops at the end it saw while a writer goes on", async () => {
    const ns = server.namespace("long");
    const episode = freshEpisode();
    const store = await createJetStreamEventStore(nc, ns, episode, { episode });
    for (let i = 0; i < 10; i++) {
      await store.append(phases(500, i * 500), { expectedSeq: i * 500 - 1 });
      await store.commit();
    }
    const reading = readJetStreamLog(nc, ns, episode);
    await store.append(phases(500, 5000), { expectedSeq: 4999 });
    await store.commit();
    const records = await reading;
    expect(records.length).toBeGreaterThanOrEqual(5000);
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: records.length }, (_, i) => i));
    await store.close();
    expect(await readJetStreamLog(nc, ns, episode)).toHaveLength(5500);
  });
});
