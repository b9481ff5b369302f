// The worlds this build can run, by name.
import type { WorldDefinition } from "./actor.ts";
import { auratownWorld } from "./auratown/world.ts";
import { auraSceneWorld } from "./aura/world.ts";
import { envprobeWorld } from "./envprobe/world.ts";

export const worlds: Readonly<Record<string, WorldDefinition<any>>> = {
  auratown: auratownWorld,
  "aura-scene": auraSceneWorld,
  envprobe: envprobeWorld,
};

export function worldNamed(name: string): WorldDefinition<any> {
  const world = worlds[name];
  if (world === undefined) throw new Error(`unknown world '${name}' (known: ${Object.keys(worlds).join(", ")})`);
  return world;
}
