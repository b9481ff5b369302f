// A round's deliveries go to each actor host in one request (a `wave`), the tick's part digests
// with the last round's: the log is the embedded run's, record for record. Hosts of an earlier
// build (no `waves` in their ping answer) still get one `deliver` request per record.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedBackend, type Backend } from "../infra/backend.ts";
import { InProcessTransport, type RequestOptions } from "../infra/transport.ts";
import { actorIndexOf, recipientsOf, type LogRecord } from "../events/record.ts";
import { ActorHost, type HostRequest, type WaveDelivery } from "../services/distributed/actorHost.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { headerOf } from "../services/kernel/replay.ts";
import { logRecords, tempDir, withoutMetaLine } from "./helpers.ts";

const HOST_A = ["agent/chen-mei", "agent/lin-wei", "agent/zhang-hao"];
const HOST_B = ["agent/liu-yang", "agent/wang-jun", "env/auratown"];
const subjectOf = (episode: string, id: string) => `pt.test.actor.${episode}.${id}`;

interface Sent {
  readonly subject: string;
  readonly request: HostRequest;
}

/** An in-process transport that keeps every request it carries. */
class Counting extends InProcessTransport {
  readonly sent: Sent[] = [];
  override request<Req, Res>(subject: string, message: Req, options?: RequestOptions): Promise<Res> {
    this.sent.push({ subject, request: message as HostRequest });
    return super.request(subject, message, options);
  }
}

/** The log's rounds: each record's round number (a phase record, or a record caused by the current round, starts the next). */
function roundsOf(records: readonly LogRecord[]): Map<number, number> {
  const round = new Map<number, number>();
  let n = -1;
  let first = Number.POSITIVE_INFINITY;
  for (const r of records) {
    if (r.cause === null || r.cause >= first) {
      n++;
      first = r.seq;
    }
    round.set(r.seq, n);
  }
  return round;
}

/** Runs the seed-42 day with its actors in two "processes" (hosts on their own subjects) of this one. */
async function spreadDay(dir: string, header: LogRecord, earlierBuild: readonly string[] = []) {
  const h = headerOf([header], "header");
  const definitions = h.world.actors(h.config, h.seed);
  const transport = new Counting();
  for (const ids of [HOST_A, HOST_B]) {
    const host = new ActorHost(h.world, definitions, { only: ids });
    const serving = (episode: string, id: string) => subjectOf(episode, id);
    if (ids === earlierBuild) {
      // A host of an earlier build: its ping says no `waves`, and a wave request is nothing it knows.
      for (const id of ids)
        transport.serve<HostRequest, unknown>(serving(h.episode, id), (request) => {
          if (request.kind === "ping") return { actors: host.ids };
          if (request.kind === "wave") return undefined;
          return host.handle(request);
        });
    } else host.serveEach(transport, (id) => serving(h.episode, id));
  }
  const backend: Backend = { ...embeddedBackend, transports: { open: () => transport } };
  const result = await runEpisode({ world: "auratown", seed: 42, dir, trace: { exporter: "none" }, snapshotEvery: 0, placement: { remote: "all", subjectOf } }, backend);
  return { result, sent: transport.sent };
}

describe("delivery waves", () => {
  it("a round costs one request per actor host it reaches, digests asked beside the last phase's rounds, and the log is the embedded run's", async () => {
    const work = tempDir("waves");
    const embedded = await runEpisode({ world: "auratown", seed: 42, dir: join(work, "embedded"), trace: { exporter: "none" }, snapshotEvery: 0 });
    const logged = logRecords(embedded.dir);
    const { result, sent } = await spreadDay(join(work, "spread"), logged[0]!);
    expect(result.stateHash).toBe(embedded.stateHash);
    expect(logRecords(result.dir).map(withoutMetaLine)).toEqual(logged.map(withoutMetaLine));

    // Every request a tick made was a wave or the digests of a host that a round of the tick's last
    // phase did not reach (asked beside that round, at most one per host and tick): no record went alone.
    const ticking = sent.filter((s) => s.request.kind !== "ping" && s.request.kind !== "restore" && s.request.kind !== "release" && s.request.kind !== "snapshot");
    expect(new Set(ticking.map((s) => s.request.kind))).toEqual(new Set(["wave", "digest"]));
    const during = ticking.filter((s) => s.request.kind === "wave");
    const digestsAsked = new Map<string, number>();
    for (const { subject, request } of ticking) if (request.kind === "digest") digestsAsked.set(subject, (digestsAsked.get(subject) ?? 0) + 1);
    expect(Math.max(...digestsAsked.values())).toBeLessThanOrEqual(result.ticks);
    // Each wave holds records of one round only, each at most once; and every (round, host) pair
    // that has a recipient on the host got exactly one request.
    const rounds = roundsOf(logged);
    const hostOf = (id: string) => (HOST_A.includes(id) ? "A" : "B");
    const subjectHost = (subject: string) => hostOf(subject.split(".").slice(4).join("."));
    const got = new Map<string, number>();
    for (const { subject, request } of during) {
      const deliveries = (request as { deliveries: readonly WaveDelivery[] }).deliveries;
      const seqs = deliveries.map((d) => d.record.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      const inRounds = new Set(seqs.map((seq) => rounds.get(seq)));
      expect(inRounds.size).toBe(1);
      const key = `${[...inRounds][0]}/${subjectHost(subject)}`;
      got.set(key, (got.get(key) ?? 0) + 1);
    }
    const actors = actorIndexOf([...HOST_A, ...HOST_B]);
    const expected = new Map<string, number>();
    for (const r of logged) for (const id of recipientsOf(r.to, r.from, actors)) expected.set(`${rounds.get(r.seq)}/${hostOf(id)}`, 1);
    expect(got).toEqual(expected);
    const ticks = result.ticks;
    // Before waves: one request per record per recipient and one digest request per actor each tick.
    const perRecord = logged.reduce((n, r) => n + recipientsOf(r.to, r.from, actors).length, 0) + ticks * actors.ids.length;
    expect(ticking.length).toBeLessThan(perRecord / 2);
  });

  it("a host of an earlier build gets one request per record and its own digest requests, beside a host that takes waves, and the log is the same", async () => {
    const work = tempDir("waves-old");
    const embedded = await runEpisode({ world: "auratown", seed: 42, dir: join(work, "embedded"), trace: { exporter: "none" }, snapshotEvery: 0 });
    const logged = logRecords(embedded.dir);
    const { result, sent } = await spreadDay(join(work, "spread"), logged[0]!, HOST_B);
    expect(result.stateHash).toBe(embedded.stateHash);
    expect(logRecords(result.dir).map(withoutMetaLine)).toEqual(logged.map(withoutMetaLine));
    const kinds = (host: readonly string[]) => new Set(sent.filter((s) => host.some((id) => s.subject.endsWith(id))).map((s) => s.request.kind));
    expect(kinds(HOST_B).has("wave")).toBe(false);
    expect(kinds(HOST_B).has("deliver")).toBe(true);
    expect(kinds(HOST_B).has("digest")).toBe(true);
    expect(kinds(HOST_A).has("deliver")).toBe(false);
    expect(kinds(HOST_A).has("wave")).toBe(true);
  });
});
