// A report pool task (infra/pool.ts): reads a share of a sweep's episode logs and answers with
// their metrics, or with the first damaged log's error as its fields (an Error's class does not
// cross threads).
import { LogCorrupted } from "../../events/errors.ts";
import { metricsOfLog, type EpisodeMetrics } from "./metrics.ts";
import { registerWorld } from "../kernel/worlds.ts";
import envprobe from "./module.ts";

// A thread of its own: the world's record types are registered here too, before any log is read.
registerWorld(envprobe);

export type LoadResult =
  | { readonly metrics: EpisodeMetrics[] }
  | { readonly metrics?: undefined; readonly damaged: { readonly file: string; readonly line: number; readonly reason: string } | null; readonly message: string };

export default function loadShare(dirs: readonly string[]): LoadResult {
  try {
    return { metrics: dirs.map((d) => metricsOfLog(d)) };
  } catch (error) {
    return { damaged: error instanceof LogCorrupted ? { file: error.file, line: error.line, reason: error.reason } : null, message: (error as Error).message };
  }
}
