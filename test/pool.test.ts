// infra/pool.ts: results in task order whatever order they finish in, every thread used, and the
// first failure (a task's, or what onResult throws) rejects the run and stops what is queued.
import { describe, expect, it } from "vitest";
import { runOnPool } from "../infra/pool.ts";

const worker = new URL("./fixtures/poolWorker.ts", import.meta.url);
type Task = { value: number; ms: number; throw?: boolean };
type Result = { doubled: number; thread: number };

describe("worker-thread pool", () => {
  it("answers in task order, not completion order, over every thread", async () => {
    // The first task is the slowest: one thread holds it while the other takes the rest.
    const tasks = Array.from({ length: 8 }, (_, i) => ({ value: i, ms: i === 0 ? 600 : 10 }));
    const seen: number[] = [];
    const results = await runOnPool<Task, Result>(worker, tasks, { threads: 2, onResult: (_, index) => seen.push(index) });
    expect(results.map((r) => r.doubled)).toEqual([0, 2, 4, 6, 8, 10, 12, 14]);
    expect(new Set(results.map((r) => r.thread)).size).toBe(2);
    expect([...seen].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(seen.at(-1)).toBe(0);
    expect(await runOnPool(worker, [], { threads: 4 })).toEqual([]);
  });

  it("rejects with the first failure and runs nothing queued after it", async () => {
    const tasks = [{ value: 1, ms: 0 }, ...Array.from({ length: 20 }, (_, i) => ({ value: 10 + i, ms: 50 }))];
    const seen: number[] = [];
    await expect(
      runOnPool<Task, Result>(worker, tasks, {
        threads: 1,
        onResult: (r) => {
          seen.push(r.doubled);
          if (r.doubled === 2) throw new Error("stop here");
        },
      }),
    ).rejects.toThrow("stop here");
    expect(seen).toEqual([2]);
    await expect(runOnPool<Task, Result>(worker, [{ value: 1, ms: 0 }, { value: 2, ms: 0, throw: true }], { threads: 2 })).rejects.toThrow("task 2 failed");
  });
});
