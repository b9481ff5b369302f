// A sweep worker thread: runs chunks of EnvProbe episodes through the direct driver and sends
// back each episode's metrics (computed from the records it wrote).
import { parentPort, workerData } from "node:worker_threads";
import { runDirect } from "./direct.ts";
import { episodeDirOf, episodeNameOf, type EnvprobeJob } from "./sweep.ts";

const { log, config } = workerData as { log: string | null; config: Record<string, unknown> };

parentPort!.on("message", (jobs: EnvprobeJob[]) => {
  try {
    const done = jobs.map((j) => {
      const r = runDirect({
        config: { ...config, world: j.world, regime: j.regime },
        policy: j.policy,
        seed: j.seed,
        episode: episodeNameOf(j),
        ...(log === null ? {} : { dir: episodeDirOf(log, j) }),
      });
      return r.metrics;
    });
    parentPort!.postMessage({ done });
  } catch (error) {
    parentPort!.postMessage({ error: `${(error as Error).message}` });
  }
});
parentPort!.postMessage({ ready: true });
