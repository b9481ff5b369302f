// `probetown sweep <world> --seeds <list>`: a matrix of episodes, the EnvProbe grid (cli/envprobe.ts)
// or any other world's episodes (cli/distributed.ts), in this process or queued in JetStream.
import { resolveNewEpisodeConfig } from "../../../actors/actor.ts";
import type { TownConfig } from "../../../actors/auratown/config.ts";
import { worlds } from "../../../actors/worlds.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { cmdSweep as cmdEpisodeSweep } from "../distributed.ts";
import { cmdEnvprobeSweep, type EnvprobeSweepFlags } from "../envprobe.ts";
import { readConfigFile } from "../flags.ts";
import { checkTownRunFits } from "../limits.ts";

export function cmdSweep(world: string, flags: Parameters<typeof cmdEpisodeSweep>[1] & EnvprobeSweepFlags & { config?: string }): Promise<number> | number {
  if (worlds[world] === undefined) throw new UsageError(`unknown world '${world}' (known: ${Object.keys(worlds).join(", ")})`);
  if (world !== "envprobe" && (flags.llm !== undefined || flags.llmConfig !== undefined || (flags.model?.length ?? 0) > 0)) throw new UsageError(`--llm: \`sweep ${world}\` has no LLM roles (the EnvProbe agent has: belief, in \`sweep envprobe\`; aura-scene runs on models through \`eval\` and \`experiment\`)`);
  const config = flags.config === undefined ? undefined : readConfigFile(flags.config);
  if (world === "envprobe") {
    if (flags.ticks !== undefined) throw new UsageError("sweep envprobe: use --horizon (ticks are the regime's horizon H)");
    if (flags.snapshotEvery !== undefined) throw new UsageError("sweep envprobe keeps logs only (no snapshots): --snapshot-every does not apply");
    return cmdEnvprobeSweep({ ...flags, ...(config === undefined ? {} : { config }) });
  }
  const only = (["worlds", "regimes", "policies", "horizon", "chunk", "heldOut"] as const).filter((k) => flags[k] !== undefined);
  if (only.length > 0) throw new UsageError(`--${only[0] === "heldOut" ? "held-out" : only[0]} is for \`sweep envprobe\` only`);
  // Each episode of an embedded sweep (or of its local --workers) runs a town on this machine.
  if (world === "auratown" && (flags.nats === undefined || flags.workers > 0)) {
    let resolved: TownConfig | null = null;
    try {
      resolved = resolveNewEpisodeConfig(worlds[world]!, config) as TownConfig;
    } catch {
      // A bad config is the sweep's to name.
    }
    if (resolved !== null) checkTownRunFits(resolved, flags.ticks ?? worlds[world]!.defaultTicks(resolved), { town: `--config ${flags.config}: extraAgents`, ...(flags.ticks === undefined ? {} : { length: `--ticks ${flags.ticks}` }) });
  }
  return cmdEpisodeSweep(world, { ...flags, ...(config === undefined ? {} : { config }) });
}
