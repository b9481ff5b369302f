// The names of the worlds this build can run (actors/worlds.ts), in its order, apart from the
// worlds themselves so that the command line names them in --help without loading their actors.

export const WORLD_NAMES = ["auratown", "aura-scene", "envprobe"] as const;
export type WorldName = (typeof WORLD_NAMES)[number];
