// `probetown inspect <log>`: the readable timeline of an episode.
import type { ReplayOptions } from "../../kernel/replay.ts";
import { UsageError } from "../../kernel/usageError.ts";
import type { WorldInspection } from "../../kernel/worldModule.ts";
import { isRegisteredWorld, worldModuleNamed } from "../../kernel/worlds.ts";
import { pickRecords, renderRecordTimeline } from "../../views/records.ts";
import { namesActor, prettyJsonPieces, writePieces } from "../../views/text.ts";
import type { EndsCheck } from "../distributed.ts";
import { EXIT } from "../exitCodes.ts";
import { checkEnds, replayOf, ticksHeld, unknownAgent } from "../logEnds.ts";
import { progressBar } from "../progress.ts";

export async function cmdInspect(log: string, flags: { from?: number; to?: number; agent?: string; all?: boolean; json?: boolean; nats?: string; namespace: string }): Promise<number> {
  if (flags.from !== undefined && flags.to !== undefined && flags.from > flags.to) throw new UsageError(`--from ${flags.from} is after --to ${flags.to}`);
  const agent = flags.agent;
  // Flags a log's two ends can refute are checked before the replay, which for a large town takes
  // seconds to minutes (a typo in --agent waited out the whole replay).
  const check: EndsCheck = (ends) => checkEnds(ends, log, { ...(agent === undefined ? {} : { agent }), ...(flags.from === undefined ? {} : { from: flags.from }), ...(flags.to === undefined ? {} : { to: flags.to }) });
  // A world with its own view (the town's timeline, drawn from every actor's state per tick) writes
  // it as each tick is replayed; other worlds' timelines are read from their records.
  const bar = progressBar(!flags.json, "inspect: replaying");
  // A progress bar on the terminal the timeline goes to stops when the timeline starts.
  let barShown = true;
  const beforeOutput = (): void => {
    if (!process.stdout.isTTY) return;
    barShown = false;
    bar.stop();
  };
  // The world's own view, when its module has one (set once the log's header is read).
  const world: { view: WorldInspection | null } = { view: null };
  const viewOptions: Pick<ReplayOptions, "onHeader" | "onTick"> = {
    onHeader: (header, host) => {
      const make = isRegisteredWorld(header.world.name) ? worldModuleNamed(header.world.name).inspect : undefined;
      world.view = make?.(flags, (chunk) => void process.stdout.write(chunk), beforeOutput) ?? null;
      world.view?.options.onHeader?.(header, host);
    },
    onTick: (tick, host, records) => world.view?.options.onTick?.(tick, host, records),
  };
  // The text timeline ends at --to, so the replay does too (the JSON's summary covers the whole episode).
  const toTick = flags.json || flags.to === undefined ? {} : { toTick: flags.to };
  const result = await replayOf(log, flags, { ...toTick, ...viewOptions, onProgress: (done, total) => barShown && bar.update(done, total) }, check, "inspect")
    .catch((error: unknown) => {
      // The ticks before a divergence or damage are shown, then the error.
      bar.stop();
      world.view?.flush();
      throw error;
    })
    .finally(bar.stop);
  result.host.stop();
  const filter = { ...(flags.from === undefined ? {} : { from: flags.from }), ...(flags.to === undefined ? {} : { to: flags.to }), ...(flags.agent === undefined ? {} : { agent: flags.agent }) };
  if (agent !== undefined && !result.host.ids.some((id) => namesActor(id, agent))) throw unknownAgent(agent, result.header.episode, result.host.ids);
  if (flags.from !== undefined && flags.from > result.lastTick) throw new UsageError(`--from ${flags.from}: ${result.header.episode} has no tick ${flags.from} (${ticksHeld(result)})`);
  if (flags.to !== undefined && flags.to < result.header.firstTick) throw new UsageError(`--to ${flags.to}: ${result.header.episode} has no tick ${flags.to} (${ticksHeld(result)})`);
  const shown = world.view;
  if (shown !== null && shown.active()) {
    shown.finish(result);
    return EXIT.ok;
  }
  // Written in pieces: a large log's JSON can exceed what one string holds.
  const write = (chunk: string): void => void process.stdout.write(chunk);
  if (flags.json) {
    writePieces(prettyJsonPieces({ episode: result.header.episode, world: result.header.world.name, records: pickRecords(result.records, filter) }), write);
    write("\n");
  } else {
    process.stdout.write(`${result.header.episode} · ${result.header.world.name} · seed ${result.header.seed} · condition ${result.header.condition}\n`);
    process.stdout.write(renderRecordTimeline(result.records, filter) + "\n");
  }
  return EXIT.ok;
}
