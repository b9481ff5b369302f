import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { Job, JobQueue } from "../infra/jobQueue.ts";
import { InProcessJobQueue } from "../infra/inProcessJobQueue.ts";
import { JetStreamJobQueue, jobQueueNames, type JetStreamJobQueueOptions } from "../infra/jetStreamJobQueue.ts";
import { connectNats, subjects } from "../infra/nats.ts";
import { collectOutcomes, jobQueueContract } from "./contracts/jobQueue.ts";
import { startTestNats, type TestNats } from "./natsServer.ts";
import { asleepWatch } from "./timing.ts";
import { until } from "./helpers.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

jobQueueContract("in-process pool", async () => new InProcessJobQueue());

/** A JetStream queue on its own connection and namespace; closing it closes the connection too. */
async function openJetStream(nats: TestNats, label: string, options: JetStreamJobQueueOptions = {}): Promise<{ queue: JobQueue; nc: NatsConnection; ns: string }> {
  const nc = await connectNats(nats.url, { name: `job-queue-test-${label}` });
  const ns = nats.namespace(label);
  const inner = await JetStreamJobQueue.open(nc, ns, { ackWaitMs: 1500, backoffMs: 100, ...options });
  const queue: JobQueue = {
    submit: (jobs) => inner.submit(jobs),
    work: (worker, handler, opts) => inner.work(worker, handler, opts),
    outcomes: (ids) => inner.outcomes(ids),
    close: async () => {
      await inner.close();
      await nc.close();
    },
  };
  return { queue, nc, ns };
}

// The JetStream queue's tests and its restart tests run side by side, each suite's tests in order
// (the suites `concurrent`, their tests not): each suite has its own server and its own namespaces,
// and most of each test is waiting (an ack wait, heartbeats, a restart). One after the other they
// took some 22 s.
const lane = { concurrent: true } as const;
const inLane = { concurrent: false } as const;

describe("JetStreamJobQueue", lane, () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startTestNats();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  jobQueueContract("JetStream work queue", async () => (await openJetStream(nats, "contract")).queue);

  it("keeps a job that runs longer than ack_wait from being redelivered (working() heartbeats)", inLane, async () => {
    const { queue } = await openJetStream(nats, "long");
    try {
      const runs: Array<{ worker: string; attempt: number }> = [];
      const handler = async (job: Job, context: { attempt: number; worker: string }) => {
        runs.push(context);
        await sleep(4000); // well past the 1.5 s ack_wait
        return job.id;
      };
      await queue.submit([{ id: "slow", spec: null }]);
      const workers = [queue.work("a", handler), queue.work("b", handler)];
      const [outcome] = await collectOutcomes(queue, ["slow"]);
      expect(outcome).toMatchObject({ id: "slow", ok: true, attempt: 1 });
      await Promise.all(workers.map((w) => w.stop()));
      expect(runs).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });

  it("a job whose outcome is recorded while its message is not yet acked is finished for a resubmit (a success), queued anew (a failure)", inLane, async () => {
    const { queue, nc, ns } = await openJetStream(nats, "acking");
    try {
      // No worker: both messages stay in the queue; the outcomes are written as a worker writes
      // them just before its ack (the window a resubmit can fall into).
      expect(await queue.submit([{ id: "done", spec: null }, { id: "failed", spec: null }])).toEqual({ queued: ["done", "failed"], pending: [], finished: [] });
      const js = jetstream(nc);
      await js.publish(subjects.result(ns, "done"), JSON.stringify({ id: "done", ok: true, result: 1, worker: "w", attempt: 1 }));
      await js.publish(subjects.result(ns, "failed"), JSON.stringify({ id: "failed", ok: false, error: "boom", worker: "w", attempt: 5 }));
      expect(await queue.submit([{ id: "done", spec: null }, { id: "failed", spec: null }])).toEqual({ queued: ["failed"], pending: [], finished: ["done"] });
    } finally {
      await queue.close();
    }
  });

  it("creates its streams and consumer idempotently, also when two open at once", inLane, async () => {
    const nc = await connectNats(nats.url);
    try {
      const ns = nats.namespace("idem");
      const [a, b] = await Promise.all([JetStreamJobQueue.open(nc, ns, { ackWaitMs: 1500 }), JetStreamJobQueue.open(nc, ns, { ackWaitMs: 1500 })]);
      const c = await JetStreamJobQueue.open(nc, ns, { ackWaitMs: 9000 });
      expect(c.ackWaitMs).toBe(1500); // the existing consumer's ack wait is used
      const jsm = await jetstreamManager(nc);
      const names = jobQueueNames(ns);
      const jobs = await jsm.streams.info(names.jobs);
      expect(jobs.config).toMatchObject({ retention: "workqueue", storage: "file", subjects: [`pt.${ns}.jobs.>`] });
      expect(jobs.config.duplicate_window).toBeGreaterThanOrEqual(10 * 60 * 1e9);
      const results = await jsm.streams.info(names.results);
      expect(results.config).toMatchObject({ retention: "limits", storage: "file", max_msgs_per_subject: 1, subjects: [`pt.${ns}.results.>`] });
      const consumer = await jsm.consumers.info(names.jobs, "workers");
      expect(consumer.config).toMatchObject({ ack_policy: "explicit", ack_wait: 1500 * 1e6 });
      await Promise.all([a.close(), b.close(), c.close()]);
    } finally {
      await nc.close();
    }
  });

  it("an explicit ack wait updates an existing queue's consumer and says what it was; one left unset keeps the namespace's", inLane, async () => {
    const nc = await connectNats(nats.url);
    try {
      const ns = nats.namespace("ackwait");
      const first = await JetStreamJobQueue.open(nc, ns, { ackWaitMs: 9000 });
      const kept = await JetStreamJobQueue.open(nc, ns);
      expect(kept.ackWaitMs).toBe(9000);
      expect(kept.ackWaitChange).toBeNull();
      const same = await JetStreamJobQueue.open(nc, ns, { ackWaitMs: 9000, setAckWait: true });
      expect(same.ackWaitChange).toBeNull();
      const set = await JetStreamJobQueue.open(nc, ns, { ackWaitMs: 1500, setAckWait: true, backoffMs: 100 });
      expect(set.ackWaitMs).toBe(1500);
      expect(set.ackWaitChange).toEqual({ fromMs: 9000, toMs: 1500, inFlight: 0 });
      const jsm = await jetstreamManager(nc);
      expect((await jsm.consumers.info(jobQueueNames(ns).jobs, "workers")).config.ack_wait).toBe(1500 * 1e6);
      // A job whose worker went silent comes back after the new ack wait, not the old 9 s.
      await set.submit([{ id: "silent", spec: null }]);
      let taken!: () => void;
      const takenNow = new Promise<void>((r) => (taken = r));
      let release!: () => void;
      const hung = new Promise<void>((r) => (release = r));
      const silent = set.work("silent", async () => {
        taken();
        await hung;
        return "never";
      });
      await takenNow;
      const silentSince = asleepWatch();
      await silent.abandon();
      const rescuer = set.work("rescuer", async (job) => job.id);
      const [outcome] = await collectOutcomes(set, ["silent"]);
      expect(outcome).toMatchObject({ ok: true, worker: "rescuer", attempt: 2 });
      // The time waited (test/timing.ts): after the new 1.5 s ack wait, not the old 9 s.
      expect(silentSince.asleepMs()).toBeLessThan(6000);
      release();
      await rescuer.stop();
      await Promise.all([first.close(), kept.close(), same.close(), set.close()]);
    } finally {
      await nc.close();
    }
  });
});

describe("JetStreamJobQueue across a server restart", lane, () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await startTestNats({ own: true });
  });
  afterAll(async () => {
    await nats?.stop();
  });

  for (const hard of [false, true]) {
    it(`completes every job exactly once when the server ${hard ? "is killed" : "restarts"} mid-run`, inLane, async () => {
      const { queue, nc, ns } = await openJetStream(nats, hard ? "kill" : "restart");
      try {
        const batch: Job[] = Array.from({ length: 24 }, (_, i) => ({ id: `r-${i}`, spec: i }));
        await queue.submit(batch);
        const runs = new Map<string, number>();
        let restarted = false;
        let ranAfterRestart = 0;
        const handler = async (job: Job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          if (restarted) ranAfterRestart++;
          await sleep(150);
          return job.spec;
        };
        // Outcomes are read from before the restart to after it: the reader must resume.
        const seen: string[] = [];
        const reading = (async () => {
          const got = [];
          for await (const outcome of queue.outcomes(batch.map((j) => j.id))) {
            got.push(outcome);
            seen.push(outcome.id);
          }
          return got;
        })();
        const workers = [queue.work("a", handler, { concurrency: 2 }), queue.work("b", handler, { concurrency: 2 })];
        while (seen.length < 4) await sleep(20);
        await nats.restart({ hard, downMs: 700 });
        restarted = true;
        const got = await Promise.race([reading, sleep(45_000).then(() => { throw new Error(`timed out; got ${seen.length} outcomes`); })]);
        expect(got.map((o) => o.id).sort()).toEqual(batch.map((j) => j.id).sort());
        expect(got.every((o) => o.ok && o.result === Number(o.id.slice(2)))).toBe(true);
        // Some jobs ran after the restart, so the workers went on pulling.
        expect(ranAfterRestart).toBeGreaterThan(0);
        expect([...runs.keys()].sort()).toEqual(batch.map((j) => j.id).sort());
        // One result per job in the results stream, and the work queue drained.
        const jsm = await jetstreamManager(nc);
        const names = jobQueueNames(ns);
        expect((await jsm.streams.info(names.results)).state.messages).toBe(batch.length);
        // Acks are asynchronous, and one sent as the server was killed is lost: the queue's answer is
        // that the job's redelivery finds its result and is acked then (#run), which needs a worker.
        // So wait for the drain with the workers still pulling (a job left undrained still fails here),
        // then stop them.
        await until(async () => (await jsm.streams.info(names.jobs)).state.messages === 0, "the work queue to drain", 15_000);
        await Promise.all(workers.map((w) => w.stop()));
        expect((await jsm.streams.info(names.jobs)).state.messages).toBe(0);
        // And a later reader still gets them all.
        expect(await collectOutcomes(queue, batch.map((j) => j.id))).toHaveLength(batch.length);
      } finally {
        await queue.close();
      }
    });
  }
});
