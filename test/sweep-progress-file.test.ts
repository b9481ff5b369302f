// A sweep's progress per worker (services/kernel/sweepProgressFile.ts): the file a sweep with --log
// keeps beside its spec, outside every episode log, for the dashboard. Its writer (fake timers:
// written at once, then at most once per interval, and at the end) and a real sweep on two worker
// threads, whose file adds up to the sweep.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runSweep, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { readSweepProgress, SWEEP_PROGRESS_FILE, SweepProgressWriter } from "../services/kernel/sweepProgressFile.ts";
import { tempDir } from "./helpers.ts";

afterEach(() => void vi.useRealTimers());

describe("a sweep's progress per worker", () => {
  it("is written at once, then at most once per interval while results come, and marked finished at the end", async () => {
    vi.useFakeTimers();
    const log = tempDir("sweep-progress");
    const writer = new SweepProgressWriter(log, 5, 1000);
    expect(readSweepProgress(log)).toMatchObject({ total: 5, done: 0, finished: false, workers: [] });
    writer.add("thread 1", 2);
    writer.add("thread 2", 1, 1);
    // Within the interval: not yet written.
    expect(readSweepProgress(log)!.done).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(readSweepProgress(log)).toMatchObject({ done: 3, finished: false, workers: [{ worker: "thread 1", done: 2, kept: 0 }, { worker: "thread 2", done: 1, kept: 1 }] });
    writer.add("thread 1", 2);
    writer.finish();
    expect(readSweepProgress(log)).toMatchObject({ total: 5, done: 5, finished: true, workers: [{ worker: "thread 1", done: 4, kept: 0 }, { worker: "thread 2", done: 1, kept: 1 }] });
    expect(readdirSync(log)).toEqual([SWEEP_PROGRESS_FILE]); // the temporary file was renamed over it
    // A sweep that stops short: its last write is not finished.
    const short = new SweepProgressWriter(log, 5, 1000);
    short.add("lane 1", 1);
    short.finish();
    expect(readSweepProgress(log)).toMatchObject({ done: 1, finished: false });
  });

  it("writes nothing without a --log, and reads a file that is not one as none", () => {
    const writer = new SweepProgressWriter(null, 3);
    writer.add("thread 1", 3);
    writer.finish();
    const log = tempDir("sweep-progress-bad");
    expect(readSweepProgress(log)).toBeNull();
    writeFileSync(join(log, SWEEP_PROGRESS_FILE), "{not json");
    expect(readSweepProgress(log)).toBeNull();
    writeFileSync(join(log, SWEEP_PROGRESS_FILE), JSON.stringify({ total: 2, done: 1, finished: false, updated: "x", workers: [{ worker: "a", done: 1, kept: 0 }, { worker: 3 }] }));
    expect(readSweepProgress(log)!.workers).toEqual([{ worker: "a", done: 1, kept: 0 }]);
  });

  it("a sweep on two worker threads leaves its progress per thread beside its spec, adding up to the sweep", async () => {
    const log = join(tempDir("sweep-progress-run"), "grid");
    // 88 episodes: two chunks of the pool (64 a chunk), so both threads can take one.
    const spec = sweepSpecOf({ seeds: "0-43", worlds: "graphnav", regimes: "low", policies: "no-probe,oracle", log, workers: 2 });
    const result = await runSweep(spec);
    const file = readSweepProgress(log)!;
    expect(file).toMatchObject({ total: 88, done: 88, finished: true });
    expect(file.workers.length).toBeGreaterThanOrEqual(1);
    expect(file.workers.length).toBeLessThanOrEqual(2);
    for (const w of file.workers) expect(w.worker).toMatch(/^thread \d+$/);
    expect(file.workers.reduce((n, w) => n + w.done, 0)).toBe(result.episodes.length);
    expect(file.workers.every((w) => w.kept === 0)).toBe(true);
    // Not inside any episode's folder: the logs hold only their segments.
    expect(existsSync(join(log, "graphnav-low", "oracle", "s0", SWEEP_PROGRESS_FILE))).toBe(false);
    expect(readdirSync(join(log, "graphnav-low", "oracle", "s0", "log"))).toEqual(["000000000000.jsonl"]);
    // Run again into the same --log: every episode kept, and the file says so.
    await runSweep(spec);
    const again = readSweepProgress(log)!;
    expect(again).toMatchObject({ done: 88, finished: true });
    expect(again.workers.reduce((n, w) => n + w.kept, 0)).toBe(88);
    expect(JSON.parse(readFileSync(join(log, SWEEP_PROGRESS_FILE), "utf8")).updated).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
