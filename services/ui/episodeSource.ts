// An episode as the server reads it, wherever its log is: its row (from the log's two ends, read
// again on each request, so a running episode's row moves on), its records (checked, cached while
// the log is unchanged), and its new records as they are appended.
import { existsSync } from "node:fs";
import { episodeDirsUnder } from "../kernel/verifyTree.ts";
import { idOf, summarise, type EpisodeSummary } from "./catalogue.ts";
import { confined } from "./confinement.ts";
import { followFileLog, type LiveBatch } from "./fileFollow.ts";
import { loadLog, type LoadedLog } from "./records.ts";

export interface EpisodeSource {
  readonly id: string;
  /** The episode directory for a file log (verification reads it), null for a JetStream log. */
  readonly dir: string | null;
  summary(): Promise<EpisodeSummary>;
  load(): Promise<LoadedLog>;
  /** Batches of the records after seq `after`, as they are appended, until `signal` aborts or the log reads as damaged. */
  follow(after: number, signal: AbortSignal): AsyncIterable<LiveBatch>;
}

/** A log that has become unreadable (a symlink out of the runs folder put in since the start). */
const REFUSED: LoadedLog = { records: [], damage: "the log now resolves outside the runs folder (a symbolic link): not read", firstSeq: 0 };

export function fileEpisode(root: string, dir: string, id: string): EpisodeSource {
  const readable = () => confined(root, dir);
  return {
    id,
    dir,
    summary: async () => summarise(root, dir, readable()),
    load: async () => (readable() ? loadLog(dir) : REFUSED),
    follow: (after, signal) => followFileLog(dir, after, signal, readable),
  };
}

/**
 * Every episode directory under `root` (an episode whose log lies outside it through a symlink is
 * not the folder's, and is left out), keyed by its path below `root`.
 */
export function fileEpisodesUnder(root: string): EpisodeSource[] {
  if (!existsSync(root)) return [];
  return episodeDirsUnder(root)
    .filter((dir) => confined(root, dir))
    .map((dir) => fileEpisode(root, dir, idOf(root, dir)));
}
