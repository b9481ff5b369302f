// A sweep pool task (infra/pool.ts): runs a chunk of EnvProbe episodes through the direct driver
// and answers with each episode's metrics (computed from the records it wrote), keeping an episode
// whose log a run of the same sweep already finished (services/envprobe/keep.ts). A failure is
// answered as its message, which the sweep rethrows.
import { threadId } from "node:worker_threads";
import { keepOrRun } from "./keep.ts";
import { registerWorld } from "../kernel/worlds.ts";
import envprobe from "./module.ts";

// A thread of its own: the world's record types are registered here too, before any log is read.
registerWorld(envprobe);
import type { EnvprobeJob } from "./sweep.ts";
import type { EpisodeMetrics } from "./metrics.ts";
import type { LogFormat } from "./direct.ts";

export interface SweepChunk {
  readonly jobs: readonly EnvprobeJob[];
  readonly log: string | null;
  readonly config: Readonly<Record<string, unknown>>;
  readonly logFormat?: LogFormat;
}

/** `thread`: the worker thread that ran the chunk (its threadId), for the sweep's progress per worker. */
export type SweepChunkResult = { readonly done: EpisodeMetrics[]; readonly kept: number; readonly thread: number; readonly error?: undefined } | { readonly error: string };

export default function runChunk({ jobs, log, config, logFormat }: SweepChunk): SweepChunkResult {
  try {
    let kept = 0;
    const done = jobs.map((j) => {
      const r = keepOrRun(j, log, config, logFormat);
      if (r.kept) kept++;
      return r.metrics;
    });
    return { done, kept, thread: threadId };
  } catch (error) {
    return { error: `${(error as Error).message}` };
  }
}
