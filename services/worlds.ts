// The worlds this build includes: one line each, a world's name and its module (loaded on demand,
// so `--help` names them without loading any). `loadWorlds` registers them all; the command line,
// worker threads, benches and the test setup call it before anything reads a log.
import type { WorldModule } from "./kernel/worldModule.ts";

const BUILT_IN: Readonly<Record<string, () => Promise<{ readonly default: WorldModule }>>> = {
  auratown: () => import("./auratown/module.ts"),
  "aura-scene": () => import("./aura/module.ts"),
  envprobe: () => import("./envprobe/module.ts"),
  household: () => import("./household/module.ts"),
};

export const WORLD_NAMES: readonly string[] = Object.keys(BUILT_IN);

let loaded: Promise<void> | null = null;

/** Registers every built-in world (once; later calls wait for the first). */
export function loadWorlds(): Promise<void> {
  loaded ??= (async () => {
    // Loaded here, not imported above: naming the worlds for --help loads nothing of them.
    const { registerWorld } = await import("./kernel/worlds.ts");
    for (const load of Object.values(BUILT_IN)) registerWorld((await load()).default);
  })();
  return loaded;
}
