// The JobQueue contract (DESIGN §7): the in-process pool and the JetStream work queue must pass
// the same assertions. `open` returns a fresh, empty queue; the test closes it. For JetStream,
// open it with a short ackWaitMs (about 1.5 s) so the abandon test's redelivery comes quickly.
import { describe, expect, it } from "vitest";
import { JobRejected, type Job, type JobOutcome, type JobQueue, type WorkerHandle } from "../../infra/jobQueue.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Reads `ids`' outcomes, failing with what arrived if they do not all arrive within `ms`. */
export async function collectOutcomes(queue: JobQueue, ids: readonly string[], ms = 20_000): Promise<JobOutcome[]> {
  const got: JobOutcome[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`outcomes timed out after ${ms} ms; got ${JSON.stringify(got.map((o) => o.id))} of ${JSON.stringify(ids)}`)), ms);
  });
  try {
    await Promise.race([
      (async () => {
        for await (const outcome of queue.outcomes(ids)) got.push(outcome);
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
  return got;
}

const jobs = (prefix: string, n: number): Job<{ n: number }>[] => Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, spec: { n: i } }));
const ids = (js: readonly Job[]) => js.map((j) => j.id);

export function jobQueueContract(name: string, open: () => Promise<JobQueue>): void {
  const withQueue = async (body: (queue: JobQueue, workers: WorkerHandle[]) => Promise<void>) => {
    const queue = await open();
    const workers: WorkerHandle[] = [];
    try {
      await body(queue, workers);
    } finally {
      await Promise.all(workers.map((w) => w.abandon()));
      await queue.close();
    }
  };

  // In order, also inside a suite whose tests run concurrently (test/job-queue-contract.test.ts).
  describe(`JobQueue contract: ${name}`, { concurrent: false }, () => {
    it("runs every submitted job and yields one outcome per id", async () => {
      await withQueue(async (queue, workers) => {
        const batch = jobs("a", 6);
        await queue.submit(batch);
        workers.push(queue.work("w1", async (job) => (job.spec as { n: number }).n * 2, { concurrency: 2 }));
        const outcomes = await collectOutcomes(queue, ids(batch));
        expect(outcomes.map((o) => o.id).sort()).toEqual(ids(batch).sort());
        for (const o of outcomes) {
          expect(o).toMatchObject({ ok: true, worker: "w1", attempt: 1 });
          expect(o.result).toBe(Number(o.id.split("-")[1]) * 2);
        }
        await workers[0]!.stop();
      });
    });

    it("runs an id submitted twice only once (while queued, and after it is done)", async () => {
      await withQueue(async (queue, workers) => {
        const runs = new Map<string, number>();
        expect(await queue.submit([{ id: "dup", spec: 1 }, { id: "dup", spec: 2 }])).toEqual({ queued: ["dup"], pending: [], finished: [] });
        expect(await queue.submit([{ id: "dup", spec: 3 }, { id: "other", spec: 4 }])).toEqual({ queued: ["other"], pending: ["dup"], finished: [] });
        workers.push(queue.work("w1", async (job) => {
          runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
          return job.spec;
        }));
        const first = await collectOutcomes(queue, ["dup", "other"]);
        expect(first.map((o) => o.id).sort()).toEqual(["dup", "other"]);
        expect(first.find((o) => o.id === "dup")!.result).toBe(1);
        // What a resubmission says it did: nothing queued, the finished id served from its outcome.
        expect(await queue.submit([{ id: "dup", spec: 5 }])).toEqual({ queued: [], pending: [], finished: ["dup"] });
        await sleep(500);
        expect(runs.get("dup")).toBe(1);
        expect(runs.get("other")).toBe(1);
        const again = await collectOutcomes(queue, ["dup"]);
        expect(again).toHaveLength(1);
        expect(again[0]!.result).toBe(1);
      });
    });

    it("retries a throwing handler: fails twice then succeeds on attempt 3", async () => {
      await withQueue(async (queue, workers) => {
        const attempts: number[] = [];
        await queue.submit([{ id: "flaky", spec: null }]);
        workers.push(queue.work("w1", async (_job, context) => {
          attempts.push(context.attempt);
          if (context.attempt < 3) throw new Error(`flake ${context.attempt}`);
          return "fine";
        }));
        const [outcome] = await collectOutcomes(queue, ["flaky"]);
        expect(outcome).toMatchObject({ id: "flaky", ok: true, result: "fine", attempt: 3, worker: "w1" });
        expect(attempts).toEqual([1, 2, 3]);
      });
    });

    it("reports a job that always fails as ok:false with its error after maxAttempts", async () => {
      await withQueue(async (queue, workers) => {
        let calls = 0;
        await queue.submit([{ id: "doomed", spec: null }]);
        workers.push(queue.work("w1", async () => {
          calls++;
          throw new Error("boom");
        }, { maxAttempts: 3 }));
        const [outcome] = await collectOutcomes(queue, ["doomed"]);
        expect(outcome).toMatchObject({ id: "doomed", ok: false, error: "boom", attempt: 3 });
        expect(outcome!.rejected).toBeUndefined();
        expect(outcome!.result).toBeUndefined();
        await sleep(300);
        expect(calls).toBe(3);
      });
    });

    it("fails a job whose handler rejects it (JobRejected) at once, without retrying it", async () => {
      await withQueue(async (queue, workers) => {
        let calls = 0;
        await queue.submit([{ id: "rejected", spec: null }]);
        workers.push(queue.work("w1", async () => {
          calls++;
          throw new JobRejected("bad spec");
        }, { maxAttempts: 3 }));
        const [outcome] = await collectOutcomes(queue, ["rejected"]);
        expect(outcome).toMatchObject({ id: "rejected", ok: false, error: "bad spec", attempt: 1, rejected: true });
        await sleep(300);
        expect(calls).toBe(1);
      });
    });

    it("runs a failed job again when it is submitted again (a done one is not)", async () => {
      await withQueue(async (queue, workers) => {
        let calls = 0;
        await queue.submit([{ id: "flaky", spec: null }, { id: "fine", spec: null }]);
        const handle = queue.work("w1", async (job) => {
          if (job.id === "fine") return "ok";
          calls++;
          if (calls === 1) throw new JobRejected("not yet");
          return "second time";
        });
        workers.push(handle);
        const first = await collectOutcomes(queue, ["flaky", "fine"]);
        expect(first.find((o) => o.id === "flaky")).toMatchObject({ ok: false, error: "not yet" });
        expect(await queue.submit([{ id: "flaky", spec: null }, { id: "fine", spec: null }])).toEqual({ queued: ["flaky"], pending: [], finished: ["fine"] });
        const again = await collectOutcomes(queue, ["flaky", "fine"]);
        expect(again.find((o) => o.id === "flaky")).toMatchObject({ ok: true, result: "second time", attempt: 1 });
        expect(again.find((o) => o.id === "fine")).toMatchObject({ ok: true, result: "ok" });
        expect(calls).toBe(2);
      });
    });

    it("shares jobs between two workers with concurrency", async () => {
      await withQueue(async (queue, workers) => {
        const batch = jobs("s", 16);
        let running = 0;
        let peak = 0;
        const handler = async (job: Job) => {
          running++;
          peak = Math.max(peak, running);
          await sleep(80);
          running--;
          return job.id;
        };
        await queue.submit(batch);
        workers.push(queue.work("left", handler, { concurrency: 2 }), queue.work("right", handler, { concurrency: 2 }));
        const outcomes = await collectOutcomes(queue, ids(batch));
        expect(outcomes.map((o) => o.id).sort()).toEqual(ids(batch).sort());
        expect(outcomes.every((o) => o.ok && o.result === o.id)).toBe(true);
        const byWorker = (w: string) => outcomes.filter((o) => o.worker === w).length;
        expect(byWorker("left")).toBeGreaterThan(0);
        expect(byWorker("right")).toBeGreaterThan(0);
        expect(peak).toBeGreaterThan(1);
        expect(peak).toBeLessThanOrEqual(4);
        await Promise.all(workers.map((w) => w.stop()));
      });
    });

    it("redelivers a job whose worker was abandoned mid-job to another worker (attempt 2)", async () => {
      await withQueue(async (queue, workers) => {
        let started!: () => void;
        const startedP = new Promise<void>((r) => (started = r));
        let release!: () => void;
        const released = new Promise<void>((r) => (release = r));
        const seen: Array<{ worker: string; attempt: number }> = [];
        const handler = async (job: Job, context: { attempt: number; worker: string }) => {
          seen.push({ worker: context.worker, attempt: context.attempt });
          if (context.worker === "doomed") {
            started();
            await released; // hangs until after the test has its outcome, as a dead worker's would
            return "from the abandoned worker";
          }
          return `done ${job.id}`;
        };
        await queue.submit([{ id: "long", spec: null }]);
        const doomed = queue.work("doomed", handler);
        await startedP;
        await doomed.abandon();
        workers.push(queue.work("rescuer", handler));
        const [outcome] = await collectOutcomes(queue, ["long"]);
        expect(outcome).toMatchObject({ id: "long", ok: true, result: "done long", worker: "rescuer", attempt: 2 });
        release();
        await sleep(300);
        expect(seen).toEqual([{ worker: "doomed", attempt: 1 }, { worker: "rescuer", attempt: 2 }]);
        const again = await collectOutcomes(queue, ["long"]);
        expect(again).toEqual([outcome]);
      });
    });

    it("yields outcomes of jobs that finished before outcomes() was called, in completion order", async () => {
      await withQueue(async (queue, workers) => {
        const batch = jobs("f", 5);
        await queue.submit(batch);
        const worker = queue.work("w1", async (job) => job.id);
        workers.push(worker);
        const live = await collectOutcomes(queue, ids(batch));
        await worker.stop();
        const later = await collectOutcomes(queue, ids(batch));
        expect(later).toEqual(live);
        const subset = [batch[3]!.id, batch[1]!.id];
        const some = await collectOutcomes(queue, subset);
        expect(some).toEqual(live.filter((o) => subset.includes(o.id)));
        expect(await collectOutcomes(queue, [])).toEqual([]);
      });
    });
  });
}
