// `probetown fork <log> --at <tick> --condition <name>`: a child episode from a parent's state.
import type { LogRecord } from "../../../events/record.ts";
import { peekLog, type LogEnds } from "../../../infra/fileEventStore.ts";
import { readJetStreamLog } from "../../../infra/jetStreamEventStore.ts";
import { distributedBackend } from "../../../infra/natsBackend.ts";
import { jetStreamWhere, withNats } from "../../distributed/episodes.ts";
import { forkEpisode, type ForkOptions, type ForkResult } from "../../kernel/episodes.ts";
import { layoutOf, resolveEpisodeDir } from "../../kernel/replay.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { shownPath } from "../../views/text.ts";
import { jetStreamParents, peekInNats, type EndsCheck } from "../distributed.ts";
import type { NewEpisodeDisk, ParentLogs } from "../../kernel/worldModule.ts";
import { isRegisteredWorld, worldModuleNamed } from "../../kernel/worlds.ts";
import { EXIT } from "../exitCodes.ts";
import { gatewayExit, llmForFork, type LlmCliFlags } from "../llm.ts";
import { checkEnds, headerAtEnds } from "../logEnds.ts";
import { diskOf, episodeSession, hintIfExists, callsModels, verifyInNats, type EpisodeFlags, type NatsFlags } from "../session.ts";

/** A fork runs its parent's world for the child's ticks (--ticks, or the parent's): refused as a run would be when this machine cannot hold it. */
function checkForkFits(ends: LogEnds, log: string, ticks: number | undefined, child: { at: number; disk: NewEpisodeDisk | null }): void {
  const header = headerAtEnds(ends, log);
  if (header === null || !isRegisteredWorld(header.world.name)) return;
  const checks = worldModuleNamed(header.world.name).newEpisode;
  const named = { size: `${log}: the parent's ${header.world.name} world`, length: ticks === undefined ? `${log}: the parent's ${header.ticks} ticks` : `--ticks ${ticks}` };
  checks?.checkHeap?.(header.config, ticks ?? header.ticks, named);
  // The child writes the ticks after the fork point.
  if (child.disk !== null) checks?.checkDisk?.(header.config, (ticks ?? header.ticks) - child.at - 1, named, child.disk);
}

export async function cmdFork(log: string, flags: EpisodeFlags & NatsFlags & LlmCliFlags & { at: number; condition: string; ticks?: number; reuseLlm?: boolean }): Promise<number> {
  const session = episodeSession(flags, "fork");
  const title = (result: ForkResult) => `fork of ${result.parent} after tick ${flags.at} (seq ${result.atSeq}) · condition ${flags.condition} · episode ${result.episode}`;
  const options: ForkOptions = { ...session.options, parent: log, atTick: flags.at, condition: flags.condition, ...(flags.ticks === undefined ? {} : { ticks: flags.ticks }) };
  const nats = flags.nats;
  const check: EndsCheck = (ends) => {
    checkEnds(ends, log, { at: flags.at, condition: flags.condition, ...(flags.ticks === undefined ? {} : { ticks: flags.ticks }) });
    checkForkFits(ends, log, flags.ticks, { at: flags.at, disk: nats === undefined ? diskOf(flags) : null });
  };
  if (nats === undefined) {
    const { afterFork, gateway, ...llm } = llmForFork(log, flags);
    check(peekLog(layoutOf(resolveEpisodeDir(log)).log));
    let result: ForkResult;
    try {
      result = await forkEpisode({ ...options, ...llm });
    } catch (error) {
      // A fork's id is fixed by its parent, tick and condition, and forks are not resumed.
      return session.interrupted(error, (dir) => `a fork is not resumed: remove ${shownPath(dir)} and fork again`);
    }
    afterFork?.();
    const code = session.finish(result, title(result));
    return code === EXIT.ok ? gatewayExit("fork", gateway) : code;
  }
  // Parent and child both in JetStream, in one namespace.
  if (flags.log !== undefined) throw new UsageError("--log: with --nats the child's log goes to JetStream; drop --log");
  const ns = flags.namespace;
  const where = jetStreamWhere(ns);
  let logged = null as LogRecord[] | null;
  let parents: ParentLogs | undefined;
  let gateway: ReturnType<typeof llmForFork>["gateway"];
  const result = await withNats(nats, { role: "fork", quiet: flags.quiet }, async (nc) => {
    check(await peekInNats(nc, nats, ns, log));
    const parentRecords = flags.reuseLlm === true ? await readJetStreamLog(nc, ns, log) : undefined;
    const { afterFork, gateway: forkGateway, ...llm } = llmForFork(log, flags, parentRecords);
    gateway = forkGateway;
    // A fork's id is fixed by its parent, tick and condition, and forks are not resumed.
    const forked = await forkEpisode({ ...options, ...llm, parentWhere: where, where }, distributedBackend(nc, ns)).catch(
      hintIfExists("this fork was made before; inspect or verify it by that id, or fork into another --namespace"),
    );
    afterFork?.();
    if (callsModels(forked.world) || session.wantsSummary(forked)) logged = await readJetStreamLog(nc, ns, forked.episode);
    if (worldModuleNamed(forked.world).summaries?.coversAncestors === true && session.wantsSummary(forked) && logged !== null) parents = await jetStreamParents(nc, logged);
    return forked;
  });
  const code = session.finish(result, title(result), verifyInNats(result.episode, nats, ns), logged, parents);
  return code === EXIT.ok ? gatewayExit("fork", gateway) : code;
}
