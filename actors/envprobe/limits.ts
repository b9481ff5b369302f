// Limits on an EnvProbe config, apart from config.ts so that the command line checks --horizon
// without loading the config's schema.

/**
 * The longest horizon a config may set: 25× the paper's longest (20/30/40 for low/medium/high).
 * An episode runs every tick of its horizon, solved or not, and a run holds its log in memory
 * (≈ 750 bytes a tick once solved): H = 1,000 takes about a second and writes under 1 MB, while
 * `"horizon": 1e9` would run for days and exhaust memory long before.
 */
export const MAX_HORIZON = 1000;
