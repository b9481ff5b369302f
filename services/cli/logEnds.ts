// What `replay`, `inspect` and `fork` share: the flags a log's two ends can refute, checked before
// the log is read whole, and the replay of a log from files or JetStream.
import { InvalidPayload, LogCorrupted, TornTail, UnknownEventType } from "../../events/errors.ts";
import type { LogRecord } from "../../events/record.ts";
import { peekLog, scanLog, type LogEnds } from "../../infra/fileEventStore.ts";
import { forkTicks } from "../kernel/episodes.ts";
import { headerOf, layoutOf, replayEpisode, replayRecords, resolveEpisodeDir, UsageError, type EpisodeHeader, type ReplayOptions, type ReplayResult } from "../kernel/replay.ts";
import { namesActor } from "../views/text.ts";
import type { EndsCheck } from "./distributed.ts";

/** The episode header at a log's first end; null when there is none or it does not read (the full read says why). */
export function headerAtEnds(ends: LogEnds, log: string): EpisodeHeader | null {
  if (ends.first === null) return null;
  try {
    return headerOf([ends.first], log);
  } catch {
    return null;
  }
}

/**
 * A replay of the episode directory `log`, or with --nats of the JetStream episode `log`; `check`
 * sees the log's two ends first, either way, so the flags they refute fail before the replay.
 */
export async function replayOf(log: string, flags: { nats?: string; namespace: string }, options: ReplayOptions, check: EndsCheck, role: string): Promise<ReplayResult> {
  // The NATS client is loaded only for a log in JetStream.
  if (flags.nats !== undefined) return (await import("./distributed.ts")).replayFromNats(log, flags.nats, flags.namespace, options, check, role);
  const logDir = layoutOf(resolveEpisodeDir(log)).log;
  check(peekLog(logDir));
  return replayEpisode(log, options).catch(async (error: unknown) => {
    // A view drawn tick by tick (inspect of a town) gets the ticks before damage too, as before a
    // divergence (README): the log is read whole before any replay, so it showed nothing.
    if (options.onTick === undefined || !(error instanceof LogCorrupted || error instanceof UnknownEventType || error instanceof InvalidPayload || error instanceof TornTail)) throw error;
    let intact: readonly LogRecord[] = [];
    try {
      const scan = scanLog(logDir, { onDamage: (records) => (intact = records) });
      intact = scan.records;
    } catch {
      // the records before the damage were handed over
    }
    if (intact.length > 1) {
      const dir = resolveEpisodeDir(log);
      await replayRecords(dir, intact, { snapshots: layoutOf(dir).snapshots, ...options }).then(
        (partial) => partial.host.stop(),
        () => undefined,
      );
    }
    throw error;
  });
}

/** The ticks whose state a log holds, for range errors: a fork's also starts from its parent's tick. */
function ticksHeldText(first: number, last: number | undefined): string {
  if (first === 0) return last === undefined ? "no committed tick yet" : `committed ticks: 0–${last}`;
  return `a fork after its parent's tick ${first - 1}: that tick's state${last === undefined ? "" : `, then its own committed ticks ${first}–${last}`}; earlier ticks are in the parent's log`;
}

export const ticksHeld = (result: ReplayResult): string => ticksHeldText(result.header.firstTick, result.records.findLast((r) => r.type === "tick.committed")?.tick);

/** The flags of `replay`, `inspect` and `fork` that a log's two ends can refute. */
export interface EndsFlags {
  readonly agent?: string;
  readonly toTick?: number;
  readonly from?: number;
  readonly to?: number;
  readonly at?: number;
  readonly condition?: string;
  readonly ticks?: number;
}

/**
 * Refuses the flags a log's two ends refute — its header's actors, world and length, its last
 * tick — with the message the replay would end with, before the log is read whole and replayed
 * (for a large town seconds to minutes, which a typo waited out). The same for a file log
 * (`peekLog`) and a JetStream one (`peekInNats`). Ends that cannot be read that way check nothing:
 * the full read says what is wrong with the log.
 */
export function checkEnds(ends: LogEnds, log: string, flags: EndsFlags): void {
  const header = headerAtEnds(ends, log);
  if (header === null) return;
  const { agent } = flags;
  const actors = header.payload.actors;
  if (agent !== undefined && Array.isArray(actors) && actors.every((id) => typeof id === "string") && !actors.some((id: string) => namesActor(id, agent))) throw unknownAgent(agent, header.episode, actors as string[]);
  if (ends.last === null || ends.lastTick === null) return;
  if (flags.from !== undefined && flags.from > ends.lastTick) throw new UsageError(`--from ${flags.from}: ${header.episode} has no tick ${flags.from} (its log ends at tick ${ends.lastTick})`);
  // The last committed tick: the last record's, or the one before when the log ends mid-tick.
  const committed = ends.last.type === "tick.committed" ? ends.lastTick : ends.lastTick - 1;
  const last = committed >= header.firstTick ? committed : undefined;
  const stateAt = last ?? header.firstTick - 1;
  if (flags.toTick !== undefined && (flags.toTick > stateAt || flags.toTick < header.firstTick - 1)) throw new UsageError(`--to-tick ${flags.toTick}: ${header.episode} has no committed tick ${flags.toTick} (${ticksHeldText(header.firstTick, last)})`);
  if (flags.to !== undefined && flags.to < header.firstTick) throw new UsageError(`--to ${flags.to}: ${header.episode} has no tick ${flags.to} (${ticksHeldText(header.firstTick, last)})`);
  if (flags.at !== undefined) {
    // As the fork says once it has read the parent (an --at before a fork's own ticks is left to it: it names the log to fork instead).
    if (flags.at > stateAt) throw new UsageError(`--at ${flags.at}: the parent has no committed tick ${flags.at} (committed ticks: ${last === undefined ? "none" : `${header.firstTick}–${last}`})`);
    if (flags.condition !== undefined) header.world.applyCondition(header.baseConfig, flags.condition);
    forkTicks(header, flags.at, flags.ticks);
  }
}

export const unknownAgent = (agent: string, episode: string, ids: readonly string[]): UsageError => {
  const shown = ids.length > 12 ? `${ids.slice(0, 12).join(", ")}, … (${ids.length} in all)` : ids.join(", ");
  return new UsageError(`--agent ${agent}: no actor of ${episode} has that id or name (actors: ${shown})`);
};
