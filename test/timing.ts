// Bounds on how long something waited, that hold on a busy machine. A test that checks a timeout
// (a request cut at 150 ms, not at the default 5 s; a retry it must not make) compared wall-clock
// time with a bound, and failed when a loaded machine kept the process from running long enough:
// the time a process spent running, or ready to run but waiting for a CPU, is not waiting.
//
// A stopwatch here counts the time a process's main thread (where Node's timers and I/O callbacks
// run) spent asleep: wall-clock time minus its time on a CPU and in the run queue, as the kernel
// accounts them in /proc/<pid>/task/<pid>/schedstat. Where that file is missing (not Linux) it
// counts wall-clock time.
import { readFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";

/** Milliseconds the thread has been running and waiting to run, or null without schedstat. */
function busyMs(pid: number): number | null {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(/\s+/).map(Number);
    return running === undefined || waiting === undefined || Number.isNaN(running + waiting) ? null : (running + waiting) / 1e6;
  } catch {
    return null;
  }
}

export interface AsleepWatch {
  /** Milliseconds the watched thread spent asleep since the watch started. */
  asleepMs(): number;
}

/** Starts counting the time this process's main thread spends asleep (in timers, I/O, other processes' answers). */
export function asleepWatch(pid = process.pid): AsleepWatch {
  const startedAt = performance.now();
  const busyAtStart = busyMs(pid);
  return {
    asleepMs() {
      const wall = performance.now() - startedAt;
      const busy = busyMs(pid);
      return busyAtStart === null || busy === null ? wall : wall - (busy - busyAtStart);
    },
  };
}

/**
 * Counts the time a child process's main thread spends asleep from now until it exits; the kernel's
 * figures are sampled every 20 ms while it runs (they go with it), so the count may miss up to the
 * last 20 ms. Resolves when the child has exited.
 */
export function asleepUntilExit(child: ChildProcess): Promise<number> {
  const pid = child.pid!;
  const startedAt = performance.now();
  const busyAtStart = busyMs(pid);
  let last = { at: startedAt, busy: busyAtStart };
  const sample = (): void => {
    const busy = busyMs(pid);
    if (busy !== null) last = { at: performance.now(), busy };
  };
  const timer = setInterval(sample, 20);
  return new Promise((resolve) => {
    const done = (): void => {
      clearInterval(timer);
      resolve(busyAtStart === null || last.busy === null ? performance.now() - startedAt : last.at - startedAt - (last.busy - busyAtStart));
    };
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once("exit", done);
  });
}
