// The worlds an episode can run in, registered by name (services/worlds.ts registers this build's;
// a test may register its own). The kernel looks worlds up here and never names one.
import type { WorldDefinition } from "../../actors/actor.ts";
import { registerEventTypes } from "../../events/catalogue.ts";
import { registerLlmRoles } from "../../events/llm.ts";
import { WorldNameTaken, WorldUnknown } from "./errors.ts";
import type { WorldModule } from "./worldModule.ts";

const registered = new Map<string, WorldModule>();

/** Adds a world and its record types. Registering the same module again is a no-op. */
export function registerWorld(module: WorldModule): void {
  const name = module.definition.name;
  const known = registered.get(name);
  if (known === module) return;
  if (known !== undefined) throw new WorldNameTaken({ name });
  registerEventTypes(name, module.definition.events);
  registerLlmRoles([...(module.models?.roles ?? []), ...(module.models?.otherRoles ?? [])]);
  registered.set(name, module);
}

/** The registered worlds, in the order they were registered. */
export const registeredWorlds = (): readonly WorldModule[] => [...registered.values()];

export function worldModuleNamed(name: string): WorldModule {
  const module = registered.get(name);
  if (module === undefined) throw new WorldUnknown({ name, known: [...registered.keys()] });
  return module;
}

export const worldNamed = (name: string): WorldDefinition<any> => worldModuleNamed(name).definition;

export const isRegisteredWorld = (name: string): boolean => registered.has(name);
