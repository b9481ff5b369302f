// Which queued jobs are EnvProbe chunks (rather than the kernel's episode jobs): apart from
// natsSweep.ts, so the module can name its jobs without loading the NATS sweep.
import type { Job } from "../../infra/jobQueue.ts";

/** Is this queued job an EnvProbe chunk (rather than an episode job)? */
export const isEnvprobeJob = (job: Job): boolean => typeof job.spec === "object" && job.spec !== null && (job.spec as { kind?: unknown }).kind === "envprobe";
