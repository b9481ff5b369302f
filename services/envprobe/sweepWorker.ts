// A sweep worker thread: runs chunks of EnvProbe episodes through the direct driver and sends
// back each episode's metrics (computed from the records it wrote), keeping an episode whose log
// a run of the same sweep already finished (services/envprobe/keep.ts).
import { parentPort, workerData } from "node:worker_threads";
import { keepOrRun } from "./keep.ts";
import type { EnvprobeJob } from "./sweep.ts";

const { log, config } = workerData as { log: string | null; config: Record<string, unknown> };

parentPort!.on("message", (jobs: EnvprobeJob[]) => {
  try {
    let kept = 0;
    const done = jobs.map((j) => {
      const r = keepOrRun(j, log, config);
      if (r.kept) kept++;
      return r.metrics;
    });
    parentPort!.postMessage({ done, kept });
  } catch (error) {
    parentPort!.postMessage({ error: `${(error as Error).message}` });
  }
});
parentPort!.postMessage({ ready: true });
