// `probetown sweep <world> --seeds <list>`: a matrix of episodes, in this process or queued in
// JetStream (cli/distributed.ts), or the world's own sweep engine when it has one (EnvProbe's grid).
import { resolveNewEpisodeConfig } from "../../../actors/actor.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { isRegisteredWorld, registeredWorlds, worldModuleNamed } from "../../kernel/worlds.ts";
import { cmdSweep as cmdEpisodeSweep } from "../distributed.ts";
import type { EnvprobeSweepFlags } from "../../envprobe/commands.ts";
import { readConfigFile } from "../flags.ts";

/** The flags of the worlds' own sweeps, which the kernel's episode sweep does not take. */
const OWN_SWEEP_FLAGS = ["worlds", "regimes", "policies", "horizon", "chunk", "heldOut"] as const;

export function cmdSweep(world: string, flags: Parameters<typeof cmdEpisodeSweep>[1] & EnvprobeSweepFlags & { config?: string }): Promise<number> | number {
  if (!isRegisteredWorld(world)) throw new UsageError(`unknown world '${world}' (known: ${registeredWorlds().map((w) => w.definition.name).join(", ")})`);
  const module = worldModuleNamed(world);
  const ownSweeps = registeredWorlds().filter((w) => w.sweep !== undefined).map((w) => `\`sweep ${w.definition.name}\``);
  if (module.sweep === undefined && (flags.llm !== undefined || flags.llmConfig !== undefined || (flags.model?.length ?? 0) > 0)) {
    throw new UsageError(`--llm: \`sweep ${world}\` has no LLM roles (a world's own sweep may: ${ownSweeps.join(", ")}; aura-scene runs on models through \`eval\` and \`experiment\`)`);
  }
  const config = flags.config === undefined ? undefined : readConfigFile(flags.config);
  if (module.sweep !== undefined) return module.sweep({ ...flags, ...(config === undefined ? {} : { config }) });
  const only = OWN_SWEEP_FLAGS.filter((k) => flags[k] !== undefined);
  if (only.length > 0) throw new UsageError(`--${only[0] === "heldOut" ? "held-out" : only[0]} is for ${ownSweeps.join(", ")} only`);
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
