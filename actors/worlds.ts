// The worlds this build can run, by name.
import type { WorldDefinition } from "./actor.ts";
import { auratownWorld } from "./auratown/world.ts";
import { auraSceneWorld } from "./aura/world.ts";
import { envprobeWorld } from "./envprobe/world.ts";
import type { WorldName } from "./worldNames.ts";
import { InputRejected } from "../events/inputRejected.ts";

// Every name of WORLD_NAMES, and no other (a test checks the order too).
const byName = {
  auratown: auratownWorld,
  "aura-scene": auraSceneWorld,
  envprobe: envprobeWorld,
} satisfies Record<WorldName, WorldDefinition<any>>;

export const worlds: Readonly<Record<string, WorldDefinition<any>>> = byName;

export function worldNamed(name: string): WorldDefinition<any> {
  const world = worlds[name];
  if (world === undefined) throw new InputRejected("world", `unknown world '${name}' (known: ${Object.keys(worlds).join(", ")})`);
  return world;
}
