// The default job size of `sweep envprobe --nats`, apart from natsSweep.ts so that the command
// line shows it in --help without loading NATS.

/** Seeds of one cell per job unless `--chunk` says otherwise. */
export const DEFAULT_CHUNK = 64;
