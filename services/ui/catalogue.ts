// The episodes the dashboard shows: every episode directory under the runs folder, summarised from
// the two ends of its log (peekLog reads kilobytes, however long the log), and the fork tree from
// each fork's header, and the model calls its log holds (modelCalls.ts: each byte read once while
// the server runs). Reading never modifies a log.
import { existsSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { logWriter, peekLog, type LogEnds } from "../../infra/fileEventStore.ts";
import type { LogRecord } from "../../events/record.ts";
import { modelCallsOf, type ModelCalls } from "./modelCalls.ts";

/** `live`: not finished, and its writer holds the log's lock now (a run under way). */
export type EpisodeStatus = "finished" | "interrupted" | "damaged" | "empty" | "live";

export interface EpisodeSummary {
  /** The episode directory relative to the runs folder, with "/" separators: the API's key. */
  readonly id: string;
  readonly episode: string | null;
  readonly world: string | null;
  readonly seed: number | null;
  readonly condition: string | null;
  /** The ticks the run was asked for, from its header. */
  readonly plannedTicks: number | null;
  /** The last tick the log reaches. */
  readonly lastTick: number | null;
  readonly records: number;
  /** From the log's ends; `damaged` when they cannot be read (verify's message then says why). */
  readonly status: EpisodeStatus;
  /** A fork's parent, as its header names it: the parent's id when it lies under the runs folder. */
  readonly fork: { readonly parentEpisode: string; readonly parentId: string | null; readonly atTick: number; readonly parentCondition: string } | null;
  /** The log's model calls (models asked, tokens spent); null when not counted (a JetStream log). */
  readonly modelCalls: ModelCalls | null;
  /**
   * Wall-clock milliseconds from the first record to the last, from their `meta.ts` (the only place
   * a log keeps wall-clock time: it is not hashed); null when either has none. A resumed run's
   * includes the time it lay interrupted.
   */
  readonly durationMs: number | null;
}

export interface HeaderPayload {
  readonly world?: string;
  readonly seed?: number;
  readonly condition?: string;
  readonly ticks?: number;
  readonly parent?: string;
  readonly parentLog?: string;
  readonly atTick?: number;
  readonly parentCondition?: string;
}

export const idOf = (root: string, dir: string): string => relative(root, dir).split(sep).join("/") || ".";

/** A log's ends say finished when its last record commits the last planned tick. */
function statusOf(first: LogRecord | null, last: LogRecord | null, planned: number | null): EpisodeStatus {
  if (first === null && last === null) return "empty";
  if (first === null || last === null) return "damaged";
  if (last.type !== "tick.committed" || planned === null) return "interrupted";
  // Ticks count from 0 (a 3-tick run commits ticks 0, 1, 2).
  return last.tick >= planned - 1 ? "finished" : "interrupted";
}

/** An episode's row from its log's two ends; `parentId` finds a fork's parent among the episodes shown. */
/** Milliseconds between two records' wall-clock stamps (`meta.ts`), or null. */
export function durationOf(first: LogRecord | null, last: LogRecord | null): number | null {
  const from = Date.parse(String(first?.meta?.ts ?? ""));
  const to = Date.parse(String(last?.meta?.ts ?? ""));
  return Number.isFinite(from) && Number.isFinite(to) && to >= from ? to - from : null;
}

export function summaryFromEnds(id: string, ends: LogEnds, parentId: (header: HeaderPayload) => string | null, modelCalls: ModelCalls | null = null): EpisodeSummary {
  const { first, last } = ends;
  const header = (first?.payload ?? {}) as HeaderPayload;
  const planned = typeof header.ticks === "number" ? header.ticks : null;
  const isFork = first?.type === "episode.forked";
  return {
    id,
    episode: first?.episode ?? null,
    world: header.world ?? null,
    seed: header.seed ?? null,
    condition: header.condition ?? null,
    plannedTicks: planned,
    lastTick: ends.lastTick,
    records: first !== null && last !== null ? last.seq - first.seq + 1 : 0,
    status: statusOf(first, last, planned),
    fork: isFork ? { parentEpisode: header.parent ?? "", parentId: parentId(header), atTick: header.atTick ?? 0, parentCondition: header.parentCondition ?? "" } : null,
    modelCalls,
    durationMs: durationOf(first, last),
  };
}

/** `countCalls` false: the log is not read past its ends (it now resolves outside the runs folder). */
export function summarise(root: string, dir: string, countCalls = true): EpisodeSummary {
  let ends: LogEnds;
  let calls: ModelCalls | null;
  try {
    ends = peekLog(join(dir, "log"));
  } catch {
    ends = { first: null, last: null, lastTick: null };
  }
  try {
    calls = countCalls ? modelCallsOf(dir) : null;
  } catch {
    calls = null;
  }
  const summary = summaryFromEnds(idOf(root, dir), ends, (header) => {
    // `parentLog` is the parent's log folder relative to the fork's directory (episodes.ts).
    if (typeof header.parentLog !== "string" || header.parentLog.startsWith("jetstream:")) return null;
    const parentDir = resolve(dir, header.parentLog, "..");
    return !relative(root, parentDir).startsWith("..") && existsSync(join(parentDir, "log")) ? idOf(root, parentDir) : null;
  }, calls);
  // An unfinished log whose writer lock names a live process is a run under way (a line it has not
  // finished writing is not damage then, as `inspect` reads it).
  return summary.status !== "finished" && countCalls && logWriter(join(dir, "log")) !== null ? { ...summary, status: "live" } : summary;
}
