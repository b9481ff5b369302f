// The worlds this build includes: one line each, a world's name, its module and its command-line
// manifest (services/cli/worldCli.ts), both loaded on demand: `--help` reads the manifests, which
// load nothing of the worlds. `loadWorlds` registers the modules; the command line, worker
// threads, benches and the test setup call it before anything reads a log.
import type { WorldModule } from "./kernel/worldModule.ts";
import type { WorldCli } from "./cli/worldCli.ts";

export interface WorldEntry {
  readonly module: () => Promise<{ readonly default: WorldModule }>;
  readonly cli?: () => Promise<{ readonly default: WorldCli }>;
}

const BUILT_IN: Readonly<Record<string, WorldEntry>> = {
  auratown: { module: () => import("./auratown/module.ts"), cli: () => import("./auratown/cli.ts") },
  "aura-scene": { module: () => import("./aura/module.ts"), cli: () => import("./aura/cli.ts") },
  envprobe: { module: () => import("./envprobe/module.ts"), cli: () => import("./envprobe/cli.ts") },
  household: { module: () => import("./household/module.ts"), cli: () => import("./household/cli.ts") },
};

export const WORLD_NAMES: readonly string[] = Object.keys(BUILT_IN);

/** This build's worlds and those added since (addWorld), in order. */
export const worldNames = (): readonly string[] => entries().map(([name]) => name);

/** Worlds added beyond this build's (a test's own), after them. */
const added = new Map<string, WorldEntry>();

const entries = (): [string, WorldEntry][] => [...Object.entries(BUILT_IN), ...added];

let loaded: Promise<void> | null = null;

/** Registers every world (once; later calls wait for the first). */
export function loadWorlds(): Promise<void> {
  loaded ??= (async () => {
    // Loaded here, not imported above: naming the worlds for --help loads nothing of them.
    const { registerWorld } = await import("./kernel/worlds.ts");
    for (const [, entry] of entries()) registerWorld((await entry.module()).default);
  })();
  return loaded;
}

/**
 * Registers one world of this build by name, alone (a worker thread replaying part of one
 * episode needs its world only, and starts sooner without the others); the rest when the build
 * has no world of that name.
 */
export async function loadWorld(name: string): Promise<void> {
  const entry = Object.hasOwn(BUILT_IN, name) ? BUILT_IN[name] : added.get(name);
  if (entry === undefined) return loadWorlds();
  const { registerWorld } = await import("./kernel/worlds.ts");
  registerWorld((await entry.module()).default);
}

/**
 * Adds a world to this build (a test's world: one line), registered at once and its manifest read
 * whenever the program is built from then on.
 */
export async function addWorld(name: string, entry: WorldEntry): Promise<void> {
  if (Object.hasOwn(BUILT_IN, name) || added.has(name)) return;
  added.set(name, entry);
  const { registerWorld } = await import("./kernel/worlds.ts");
  await loadWorlds();
  registerWorld((await entry.module()).default);
}

/** Every world's command-line manifest, in the worlds' order (a world without one has none). */
export async function loadWorldClis(): Promise<readonly WorldCli[]> {
  const manifests = await Promise.all(entries().map(async ([, entry]) => (entry.cli === undefined ? null : (await entry.cli()).default)));
  return manifests.filter((m): m is WorldCli => m !== null);
}
