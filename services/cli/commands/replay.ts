// `probetown replay <log>`: an episode's state rebuilt from its log, and its state hash.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { FileSnapshotStore } from "../../../infra/snapshotStore.ts";
import { layoutOf, resolveEpisodeDir, snapshotOfReplay, UsageError, type ReplayResult } from "../../kernel/replay.ts";
import { namesActor, shownPath } from "../../views/text.ts";
import type { EndsCheck } from "../distributed.ts";
import { EXIT } from "../exitCodes.ts";
import { checkEnds, replayOf, ticksHeld, unknownAgent } from "../logEnds.ts";
import { progressBar } from "../progress.ts";

/** Past this many actors, `--state` without `--agent` is long: say how to print one (as a run stops summarising per actor). */
const MANY_ACTORS = 64;

export async function cmdReplay(log: string, flags: { toTick?: number; json?: boolean; state?: boolean; agent?: string; snapshot?: boolean; nats?: string; namespace: string }): Promise<number> {
  const agent = flags.agent;
  if (agent !== undefined && flags.state !== true) throw new UsageError("--agent: chooses whose state --state prints; give --state too");
  const bar = progressBar(!flags.json, "replay");
  const check: EndsCheck = (ends) => checkEnds(ends, log, { ...(agent === undefined ? {} : { agent }), ...(flags.toTick === undefined ? {} : { toTick: flags.toTick }) });
  const result = await replayOf(log, flags, { ...(flags.toTick === undefined ? {} : { toTick: flags.toTick }), onProgress: bar.update }, check, "replay").finally(bar.stop);
  if (flags.toTick !== undefined && (flags.toTick > result.lastTick || flags.toTick < result.header.firstTick - 1)) {
    result.host.stop();
    throw new UsageError(`--to-tick ${flags.toTick}: ${result.header.episode} has no committed tick ${flags.toTick} (${ticksHeld(result)})`);
  }
  // A 1,000-agent town's state is 300,000 lines: --agent prints one actor's.
  const stateIds = agent === undefined ? result.host.ids : result.host.ids.filter((id) => namesActor(id, agent));
  if (agent !== undefined && stateIds.length === 0) {
    result.host.stop();
    throw unknownAgent(agent, result.header.episode, result.host.ids);
  }
  if (flags.state && agent === undefined && !flags.json && stateIds.length > MANY_ACTORS) process.stderr.write(`replay: the state of all ${stateIds.length} actors follows; --agent <id or name> prints one actor's\n`);
  const out = {
    episode: result.header.episode,
    world: result.header.world.name,
    seed: result.header.seed,
    condition: result.header.condition,
    ticks: result.lastTick - result.header.firstTick + 1,
    lastTick: result.lastTick,
    lastSeq: result.lastSeq,
    stateHash: result.stateHash,
    incompleteTick: result.incompleteTick,
    seconds: result.seconds,
    ...(flags.snapshot ? { snapshot: flags.nats === undefined ? await keepSnapshot(resolveEpisodeDir(log), result) : `${await (await import("../distributed.ts")).keepSnapshotInNats(snapshotOfReplay(result), flags.nats, flags.namespace)} (JetStream namespace ${flags.namespace})` } : {}),
    ...(flags.state ? { state: Object.fromEntries(stateIds.map((id) => [id, (result.header.world.diffView ?? result.header.world.hashView)(id, result.host.contextOf(id))])) } : {}),
  };
  if (flags.json) process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  else {
    process.stdout.write(
      `replayed ${out.episode} to tick ${out.lastTick} (seq ${out.lastSeq}) in ${out.seconds.toFixed(3)} s\nstate hash ${out.stateHash}\n` +
        (out.incompleteTick ? `note: the log ends part-way through tick ${out.lastTick + 1} (an interrupted run); state is as of tick ${out.lastTick}\n` : "") +
        ("snapshot" in out ? `snapshot: ${out.snapshot}\n` : "") +
        ("state" in out ? `${JSON.stringify(out.state, null, 2)}\n` : ""),
    );
  }
  result.host.stop();
  return EXIT.ok;
}

/** Stores the replayed tick's snapshot beside the log (so forks from it need no replay). */
async function keepSnapshot(dir: string, result: ReplayResult): Promise<string> {
  const h = result.header;
  if (h.kind === "forked" && result.lastTick === h.firstTick - 1) {
    // The fork's base (its parent's state after the fork tick) is kept with the fork already.
    const base = join(layoutOf(dir).snapshots, `${String(h.payload.parentStateHash)}.json`);
    if (existsSync(base)) return shownPath(base);
  }
  const snapshot = snapshotOfReplay(result);
  const key = await new FileSnapshotStore(layoutOf(dir).snapshots).put(snapshot);
  return shownPath(join(layoutOf(dir).snapshots, `${key}.json`));
}
