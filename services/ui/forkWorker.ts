// A dashboard fork as a pool task (infra/pool.ts): the kernel's `forkEpisode` on a worker thread,
// so a large town's fork (its parent restored or replayed, the rest of its day run) leaves the
// server's event loop free. Failures come back as results: an Error's class does not cross threads.
import { forkEpisode } from "../kernel/episodes.ts";
import { UsageError } from "../kernel/usageError.ts";
import { loadWorlds } from "../worlds.ts";

// A thread of its own: the build's worlds are registered here too, before any log is read.
await loadWorlds();

export interface ForkTask {
  readonly parentDir: string;
  readonly atTick: number;
  readonly condition: string;
  readonly dir: string;
}

export type ForkAnswer =
  | { readonly ok: true; readonly episode: string; readonly dir: string; readonly records: number }
  | { readonly ok: false; readonly usage: boolean; readonly message: string };

export default async function forkTask(task: ForkTask): Promise<ForkAnswer> {
  try {
    // No model endpoint: a world's model calls take their deterministic fallbacks.
    const result = await forkEpisode({ parent: task.parentDir, atTick: task.atTick, condition: task.condition, dir: task.dir, trace: { exporter: "none" }, fsync: "commit" });
    return { ok: true, episode: result.episode, dir: result.dir, records: result.records };
  } catch (error) {
    return { ok: false, usage: error instanceof UsageError, message: error instanceof Error ? error.message : String(error) };
  }
}
