// The worker-thread pool (tinypool) for this process's CPU-bound fan-outs: `verify <dir>` (an
// episode directory a task), the embedded `sweep envprobe` (a chunk of episodes a task) and
// `report-envprobe` reading a sweep's logs (a share of them a task). A worker module's default
// export answers one task; it runs as the .ts file it is, through Node's type stripping, as the
// rest of the code does. Each worker reports its own failures as part of its result (an Error's
// class and fields do not cross threads), so what is thrown here is a caller's `onResult`, or a
// thread that died.
// tinypool is loaded when a pool starts: `verify` of one episode, which starts none unless its log
// is large, does not load it (a command's start is measured: docs/benchmarks.md, CLI start).
const loadTinypool = async () => (await import("tinypool")).Tinypool;

export interface PoolRun<R> {
  /** Worker threads; at most one a task, at least one. */
  readonly threads: number;
  /**
   * Each result as it arrives (completion order), on this thread: progress, or a failure the
   * worker reported. What it throws fails the run.
   */
  readonly onResult?: (result: R, index: number) => void;
}

/**
 * Runs `tasks` on `threads` worker threads, each taking the next queued task when it finishes one
 * (a slow task holds up no share), and resolves with the results in task order, whatever order
 * they finished in. The first failure (an `onResult` that throws, a thread that dies) rejects with
 * its error and stops the rest: queued tasks are dropped and the threads ended. The threads live
 * as long as the run.
 */
export async function runOnPool<T, R>(worker: URL, tasks: readonly T[], options: PoolRun<R>): Promise<R[]> {
  if (tasks.length === 0) return [];
  const threads = Math.max(1, Math.min(options.threads, tasks.length));
  // Every thread is started up front (minThreads), ready for the queue.
  const Tinypool = await loadTinypool();
  const pool = new Tinypool({ filename: worker.href, minThreads: threads, maxThreads: threads });
  try {
    return await new Promise<R[]>((resolve, reject) => {
      const results = new Array<R>(tasks.length);
      let left = tasks.length;
      let failed = false;
      const fail = (error: unknown): void => {
        failed = true;
        reject(error);
      };
      tasks.forEach((task, index) => {
        (pool.run(task) as Promise<R>).then((result) => {
          if (failed) return;
          try {
            options.onResult?.(result, index);
          } catch (error) {
            fail(error);
            return;
          }
          results[index] = result;
          if (--left === 0) resolve(results);
        }, (error: unknown) => {
          if (!failed) fail(error);
        });
      });
    });
  } finally {
    await pool.destroy();
  }
}

/** A pool whose tasks are given as they become known (`runOnPool` takes them all at once). */
export interface OpenPool<T, R> {
  /** Queues a task: the next free thread takes it. */
  run(task: T): Promise<R>;
  /** Ends the threads; a task still queued or running rejects. */
  close(): Promise<void>;
}

/**
 * Starts `threads` worker threads of `worker` (all of them up front, as `runOnPool` does) for tasks
 * queued one at a time: `verify` gives a span of an episode to replay as soon as its scan of the
 * log has passed the span's end. The caller closes it.
 */
export async function openPool<T, R>(worker: URL, threads: number): Promise<OpenPool<T, R>> {
  const size = Math.max(1, threads);
  const Tinypool = await loadTinypool();
  const pool = new Tinypool({ filename: worker.href, minThreads: size, maxThreads: size });
  return {
    run: (task) => pool.run(task) as Promise<R>,
    close: () => pool.destroy(),
  };
}
