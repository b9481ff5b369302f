// `probetown sweep <world> --seeds <list>`: a matrix of episodes, in this process or queued in
// JetStream (cli/distributed.ts), or the world's own sweep engine when it has one (a grid of its own;
// its flags come from its command-line manifest, and main.ts refuses them for other worlds).
import { resolveNewEpisodeConfig } from "../../../actors/actor.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { isRegisteredWorld, registeredWorlds, worldModuleNamed } from "../../kernel/worlds.ts";
import { cmdSweep as cmdEpisodeSweep } from "../distributed.ts";
import { checkWorkers, readConfigFile } from "../flags.ts";
import type { LlmCliFlags } from "../llmOptions.ts";

export function cmdSweep(world: string, flags: Parameters<typeof cmdEpisodeSweep>[1] & LlmCliFlags & { config?: string; manyWorkers?: boolean }): Promise<number> | number {
  checkWorkers(flags.workers, flags.manyWorkers === true);
  if (!isRegisteredWorld(world)) throw new UsageError(`unknown world '${world}' (known: ${registeredWorlds().map((w) => w.definition.name).join(", ")})`);
  const module = worldModuleNamed(world);
  const ownSweeps = registeredWorlds().filter((w) => w.sweep !== undefined).map((w) => `\`sweep ${w.definition.name}\``);
  if (module.sweep === undefined && (flags.llm !== undefined || flags.llmConfig !== undefined || (flags.model?.length ?? 0) > 0)) {
    throw new UsageError(`--llm: \`sweep ${world}\` has no LLM roles (a world's own sweep may: ${ownSweeps.join(", ")}; other worlds run on models through their own commands: see \`probetown --help\`)`);
  }
  const config = flags.config === undefined ? undefined : readConfigFile(flags.config);
  if (module.sweep !== undefined) return module.sweep({ ...flags, ...(config === undefined ? {} : { config }) });
  // Each episode of an embedded sweep (or of its local --workers) runs on this machine.
  const checkHeap = module.newEpisode?.checkHeap;
  if (checkHeap !== undefined && (flags.nats === undefined || flags.workers > 0)) {
    let resolved: unknown = null;
    try {
      resolved = resolveNewEpisodeConfig(module.definition, config);
    } catch {
      // A bad config is the sweep's to name.
    }
    if (resolved !== null) checkHeap(resolved, flags.ticks ?? module.definition.defaultTicks(resolved), { size: `--config ${flags.config}: extraAgents`, ...(flags.ticks === undefined ? {} : { length: `--ticks ${flags.ticks}` }) });
  }
  return cmdEpisodeSweep(world, { ...flags, ...(config === undefined ? {} : { config }) });
}
