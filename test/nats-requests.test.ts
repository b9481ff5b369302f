// What a sweep episode asks of nats-server (issue 3). On a 2-core machine every request the server
// wakes up for costs about 0.1 ms of its CPU, which the 2 workers do not get: these tests count,
// with a second connection subscribed to everything, the requests a worker makes per episode, so a
// round trip added on this path is noticed (exact counts, not timings).
import { describe, expect, it } from "vitest";
import type { JetStreamClient, JetStreamPublishOptions, PubAck } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection, type Payload } from "@nats-io/transport-node";
import { JetStreamJobQueue } from "../infra/jetStreamJobQueue.ts";
import { JetStreamSnapshotStore, openSnapshotBuckets } from "../infra/jetStreamSnapshotStore.ts";
import { natsName } from "../infra/nats.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { jetStreamWhere } from "../services/distributed/episodes.ts";
import { episodeJobHandler, jobsOf } from "../services/distributed/jobs.ts";
import { snapshotFixture } from "./contracts/snapshotStores.ts";
import { natsForSuite } from "./natsServer.ts";

const suite = natsForSuite();

/** Counts the messages the server routes whose subject contains `ns`, by kind, while `run` runs. */
async function countWhile(url: string, ns: string, run: () => Promise<void>): Promise<Map<string, number>> {
  const spy: NatsConnection = await connect({ servers: url });
  const counts = new Map<string, number>();
  const add = (kind: string) => counts.set(kind, (counts.get(kind) ?? 0) + 1);
  spy.subscribe(">", {
    callback: (_error, m) => {
      const s = m.subject;
      if (!s.includes(ns)) return;
      if (s.startsWith("$JS.API.DIRECT.GET.")) add(`direct get ${s.split(".")[4]!.replace(ns, "<ns>")}`);
      else if (s.startsWith("$JS.API.")) {
        // $JS.API.STREAM.INFO.<stream>, $JS.API.STREAM.MSG.GET.<stream>, $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>…
        const t = s.split(".");
        const [verb, stream] = t[3] === "MSG" ? [t.slice(2, 5).join("."), t[5]!] : [t.slice(2, 4).join("."), t[4]!];
        // The submitter's requests per sweep (what is queued, the outcomes reader) are not the worker's.
        if (!(stream.startsWith("PT_RESULTS_") && verb.startsWith("CONSUMER.")) && !(verb === "STREAM.INFO" && !stream.startsWith("PT_LOG_"))) add(`api ${verb} ${stream.replace(ns, "<ns>")}`);
      }
      else if (s.startsWith("$JS.ACK.")) add(m.reply === undefined || m.reply === "" ? "ack" : "ack awaiting a reply");
      else if (s.startsWith("$KV.")) add(`kv ${s.split(".")[1]!.replace(ns, "<ns>")}${s.endsWith(".latest") ? ` latest${m.headers?.get("Nats-Expected-Last-Msg-Id") ? " sent with its entry" : ""}` : ""}`);
      else if (s.startsWith(`pt.${ns}.`) && m.reply !== undefined && !m.reply.startsWith("$JS.ACK.")) add(`publish ${s.split(".")[2]}`);
    },
  });
  await spy.flush();
  try {
    await run();
    await spy.flush();
    await new Promise((r) => setTimeout(r, 200));
    await spy.flush();
  } finally {
    await spy.close();
  }
  return counts;
}

const perEpisode = (counts: Map<string, number>, episodes: number) => Object.fromEntries([...counts].map(([k, n]) => [k, n / episodes]).sort());

describe("requests per sweep episode", () => {
  it("a new AURATown morning (12 ticks, snapshot every 4) costs the worker 12 round trips, none to learn that its log or latest pointer is empty", async () => {
    const { nc, nats } = suite;
    const ns = nats.namespace("budget");
    const queue = await JetStreamJobQueue.open(nc, ns);
    const worker = queue.work("w", episodeJobHandler(distributedBackend(nc, ns), jetStreamWhere(ns)));
    const mornings = (from: number, count: number) => jobsOf({ world: "auratown", seeds: Array.from({ length: count }, (_, i) => from + i), conditions: ["baseline"], ticks: 12, snapshotEvery: 4 });
    const drain = async (jobs: ReturnType<typeof mornings>) => {
      await queue.submit(jobs);
      for await (const o of queue.outcomes(jobs.map((j) => j.id))) expect(o.ok, JSON.stringify(o)).toBe(true);
    };
    try {
      await drain(mornings(1000, 1)); // opens the streams, buckets and consumer once per process
      const episodes = 3;
      const counts = await countWhile(nats.url, ns, () => drain(mornings(1, episodes)));
      expect(perEpisode(counts, episodes)).toEqual({
        "publish jobs": 1, // the submit
        "api CONSUMER.MSG.NEXT PT_JOBS_<ns>": 1, // the worker's pull
        "api STREAM.MSG.GET PT_RESULTS_<ns>": 1, // has this job an outcome already (a redelivery)?
        "kv pt_locks_<ns>": 2, // the writer lock: create, delete
        "api STREAM.INFO PT_LOG_<ns>": 1, // is the log empty? (no consumer is made to find out)
        "publish log": 3, // one message per snapshot (fsync "snapshot")
        "kv pt_snapidx_<ns>": 3, // the snapshots
        "kv pt_snapidx_<ns> latest sent with its entry": 3, // the latest pointer: no read before the first, no round trip of its own
        "publish results": 1, // the outcome
        ack: 1, // the job's ack, not awaited: it goes out with the next pull
      });
    } finally {
      await worker.stop();
      await queue.close();
    }
  }, 120_000);

  it("a store's first put creates `latest` without reading it, and still never moves it back", async () => {
    const { nc, nats } = suite;
    const ns = nats.namespace("latest-first");
    const [t4, t6, t8] = [4, 6, 8].map((t) => snapshotFixture("first", t));
    const earlier = new JetStreamSnapshotStore(nc, ns, "ep-first");
    await earlier.put(t6!);
    // A resumed run's store: its first put finds latest at a later tick and leaves it.
    const counts = await countWhile(nats.url, ns, () => new JetStreamSnapshotStore(nc, ns, "ep-first").put(t4!).then(() => undefined));
    expect(await earlier.latest()).toBe(t6!.stateHash);
    expect(counts.get("direct get KV_pt_snapidx_<ns>")).toBeGreaterThan(0); // the conflict made it read
    await new JetStreamSnapshotStore(nc, ns, "ep-first").put(t8!);
    expect(await earlier.latest()).toBe(t8!.stateHash);
    // A deleted pointer is created again.
    const index = await new Kvm(nc).open(natsName("pt_snapidx", ns));
    await index.delete("ep-first.latest");
    const fresh = new JetStreamSnapshotStore(nc, ns, "ep-first");
    await fresh.put(t4!);
    expect(await fresh.latest()).toBe(t4!.stateHash);
  }, 60_000);

  it("a `latest` write sent with its entry lands only right behind it: another write in between makes the store move it after the entry's ack", async () => {
    const { nc, nats } = suite;
    const ns = nats.namespace("latest-behind");
    const buckets = await openSnapshotBuckets(nc, ns);
    // Another episode's snapshot reaches the bucket between this store's entry and its latest write.
    let entry: Promise<PubAck> | null = null;
    let refused = 0;
    let armed = false;
    const js = {
      publish: (subject: string, data?: Payload, options?: Partial<JetStreamPublishOptions>) => {
        if (!armed) return buckets.js.publish(subject, data, options);
        if (options?.msgID !== undefined) return (entry = buckets.js.publish(subject, data, options));
        if (entry === null) return buckets.js.publish(subject, data, options);
        const behind = entry;
        entry = null;
        return behind
          .then(() => buckets.js.publish(`$KV.${buckets.indexName}.other.${t7!.stateHash}`, "{}"))
          .then(() => buckets.js.publish(subject, data, options))
          .catch((error: unknown) => { refused++; throw error; });
      },
    } as JetStreamClient;
    const store = new JetStreamSnapshotStore(nc, ns, "ep-behind", async () => ({ ...buckets, js }));
    const [t3, t7] = [3, 7].map((t) => snapshotFixture("behind", t));
    await store.put(t3!);
    armed = true;
    await store.put(t7!);
    expect(refused).toBe(1);
    expect(await store.latest()).toBe(t7!.stateHash);
    expect((await store.get(t7!.stateHash))?.tick).toBe(7);
  }, 60_000);
});
