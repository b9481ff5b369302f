// A sweep run again into its own --log keeps every episode whose log is already complete and intact,
// and runs (replacing) the rest. The check is cheap, about what reading the metrics costs anyway:
//
// - the log is the one segment `log/000000000000.jsonl` alone in its folder, ending with a newline;
// - its first record is this job's `episode.started` (episode id, seed, policy, and the very config
//   the sweep would run, compared as canonical JSON), chained to the genesis hash;
// - its last record is a `tick.committed` chained to the record before it (the hash recomputed from
//   both lines), with seq = number of lines - 1 (no line lost or repeated);
// - the metrics read from it (as `report-envprobe` reads them) find the horizon's last tick committed
//   and every record they parse well-formed.
//
// A compact log (format 2, events/compactLog.ts) is decoded whole instead, its chain recomputed (its
// last line decodes only after every line before it), and it must end on a commit keeping its whole hash.
//
// What it does not check: in a version-1 log the hashes of the records in between, in either the
// state hashes (replaying the actors): that is `probetown verify <log>`, which a kept log passes
// exactly when a rerun's would.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { envprobeWorld } from "../../actors/envprobe/world.ts";
import { canonicalJson } from "../../events/canonical.ts";
import { FIRST_SEGMENT, recordOrNull } from "../../infra/fileEventStore.ts";
import { expectedHash, GENESIS_HASH, type LogRecord } from "../../events/record.ts";
import { decodeCompactText, isCompactHeader } from "../../events/compactLog.ts";
import { runDirect, type LogFormat } from "./direct.ts";
import { metricsOfSegments, type EpisodeMetrics } from "./metrics.ts";
import { episodeDirOf, episodeNameOf, type EnvprobeJob } from "./sweep.ts";

/** What a kept log's header must say: the job's episode under the sweep's config. */
export interface KeepExpected {
  readonly episode: string;
  readonly seed: number;
  readonly policy: string;
  /** Canonical JSON of the episode's resolved config (the header's `config`). */
  readonly config: string;
}


/** The metrics of the episode logged in `dir` when its log is complete and intact (above), else null. */
export function keptMetrics(dir: string, expected: KeepExpected): EpisodeMetrics | null {
  const logDir = join(dir, "log");
  if (!existsSync(logDir)) return null;
  const names = readdirSync(logDir);
  if (names.length !== 1 || names[0] !== FIRST_SEGMENT) return null;
  const file = join(logDir, FIRST_SEGMENT);
  return keptMetricsOfText(readFileSync(file, "utf8"), expected, dir, file);
}

/**
 * The metrics of an episode's log `text` (one whole log, as its one segment holds it) when it is
 * complete, intact and this job's (above), else null; `dir` and `file` name it in what metrics say.
 */
export function keptMetricsOfText(text: string, expected: KeepExpected, dir: string, file: string): EpisodeMetrics | null {
  if (!text.endsWith("\n")) return null;
  const firstEnd = text.indexOf("\n");
  const lastStart = text.lastIndexOf("\n", text.length - 2) + 1;
  const prevStart = text.lastIndexOf("\n", lastStart - 2) + 1;
  if (lastStart === 0 || prevStart >= lastStart) return null;
  const header = recordOrNull(text.slice(0, firstEnd));
  if (header === null) return null;
  const p = header.payload as { seed?: unknown; condition?: unknown; config?: unknown } | null;
  if (header.type !== "episode.started" || header.seq !== 0 || header.episode !== expected.episode || p === null || typeof p !== "object") return null;
  if (p.seed !== expected.seed || p.condition !== expected.policy || canonicalJson(p.config ?? null) !== expected.config) return null;
  if (header.hash !== expectedHash(GENESIS_HASH, header)) return null;
  if (isCompactHeader(header)) {
    // A compact log's last line decodes only after every line before it: the whole chain is
    // recomputed (each line's 8 digits and each commit's whole hash), more than a version-1 log's check.
    let records: LogRecord[];
    try {
      records = decodeCompactText(text, true);
    } catch {
      return null;
    }
    if (records.at(-1)!.type !== "tick.committed") return null;
  } else {
    const prev = recordOrNull(text.slice(prevStart, lastStart - 1));
    const last = recordOrNull(text.slice(lastStart, text.length - 1));
    if (prev === null || last === null) return null;
    if (last.type !== "tick.committed" || last.episode !== expected.episode || prev.seq !== last.seq - 1 || last.hash !== expectedHash(prev.hash, last)) return null;
    let lines = 0;
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
    if (last.seq !== lines - 1) return null;
  }
  try {
    return metricsOfSegments(dir, [file], [text]);
  } catch {
    return null;
  }
}

const configs = new Map<string, string>();

/** The header config a direct run of this job writes (resolved once per sweep config, world and regime). */
export function expectedConfig(config: Readonly<Record<string, unknown>>, j: EnvprobeJob): string {
  const key = `${j.world}|${j.regime}|${canonicalJson(config)}`;
  let json = configs.get(key);
  if (json === undefined) {
    json = canonicalJson(envprobeWorld.resolveConfig({ ...config, world: j.world, regime: j.regime }));
    if (configs.size > 256) configs.clear();
    configs.set(key, json);
  }
  return json;
}

/**
 * One job of a scripted sweep through the direct driver: with a --log, an episode whose log is there,
 * complete and intact is kept (its metrics read from it), any other is run and its log replaced whole.
 */
export function keepOrRun(j: EnvprobeJob, log: string | null, config: Readonly<Record<string, unknown>>, logFormat?: LogFormat): { readonly metrics: EpisodeMetrics; readonly kept: boolean } {
  const episode = episodeNameOf(j);
  const dir = log === null ? undefined : episodeDirOf(log, j);
  if (dir !== undefined) {
    const kept = keptMetrics(dir, { episode, seed: j.seed, policy: j.policy, config: expectedConfig(config, j) });
    if (kept !== null) return { metrics: kept, kept: true };
  }
  const r = runDirect({ config: { ...config, world: j.world, regime: j.regime }, policy: j.policy, seed: j.seed, episode, ...(dir === undefined ? {} : { dir }), ...(logFormat === undefined ? {} : { logFormat }) });
  return { metrics: r.metrics, kept: false };
}
