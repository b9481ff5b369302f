// EnvProbe as a world module: one agent repairing a belief table by budgeted probes while the world
// drifts (actors/envprobe/), its LLM belief role, its summary and its own grid sweep.
import type { EnvprobeConfig } from "../../actors/envprobe/config.ts";
import { envprobeWorld } from "../../actors/envprobe/world.ts";
import type { WorldModule } from "../kernel/worldModule.ts";
import type { EnvprobeSweepFlags } from "./commands.ts";
import { isEnvprobeJob } from "./jobKind.ts";
import { envprobeLogSummary } from "./summary.ts";

const envprobe: WorldModule<EnvprobeConfig> = {
  definition: envprobeWorld,
  models: {
    roles: ["belief"],
    // The optional LLM judge of its answers (actors/envprobe/llm.ts).
    otherRoles: ["judge"],
    // `--model belief=none` keeps the scripted agent, whose logs are exactly as before.
    withModels: (config, models) => (models.belief === undefined || models.belief === null ? null : { ...(config as object | undefined), llm: { belief: models.belief } }),
  },
  summaries: { callsModels: true, coversAncestors: true, fromLog: ({ dir, records, parents }) => envprobeLogSummary(dir, records, parents) },
  // Its grid (worlds × regimes × policies × seeds) runs on its own driver (services/envprobe/sweep.ts).
  sweep: async (flags) => (await import("./commands.ts")).cmdEnvprobeSweep(flags as EnvprobeSweepFlags),
  // Its --log holds the sweep's spec first, then `<world-regime>/<policy>/s<seed>` per job.
  sweepLog: { depth: 3, progress: async (log, finished) => (await import("./sweep.ts")).missingFromSweepLog(log, finished) },
  // With --nats its grid is queued as chunks of seeds (services/envprobe/natsSweep.ts): a worker
  // runs a chunk's episodes through the direct driver, logs to the sweep's --log
  // (or, with --log-store jetstream, to the namespace's log-object bucket).
  jobs: {
    owns: isEnvprobeJob,
    run: async (job, context, tracer, nats) => {
      const chunk = await (await import("./natsSweep.ts")).runEnvprobeChunk(job, context, tracer, nats);
      return { result: chunk, done: `${chunk.episodes.length} envprobe episodes` };
    },
  },
};

export default envprobe;
