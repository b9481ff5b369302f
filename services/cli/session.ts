// What `run` and `fork` share: the flags of a new episode, the session that runs it (progress bar,
// Ctrl-C, its world's live summary) and what they print when it ends.
import { existsSync } from "node:fs";
import { basename, dirname } from "node:path";
import { scanLog } from "../../infra/fileEventStore.ts";
import type { FsyncPolicy } from "../../infra/eventStore.ts";
import { DEFAULT_NAMESPACE, natsFlagHint } from "../../infra/natsSettings.ts";
import { parseTraceFlag, type TelemetryConfig } from "../../infra/telemetry.ts";
import type { LogRecord } from "../../events/record.ts";
import { EpisodeExists } from "../../infra/eventStore.ts";
import { Interrupted, type CommonOptions, type EpisodeObserver, type EpisodeResult } from "../kernel/episodes.ts";
import { UsageError } from "../kernel/usageError.ts";
import type { LiveSummary, NewEpisodeDisk, ParentLogs, WorldModule } from "../kernel/worldModule.ts";
import { isRegisteredWorld, worldModuleNamed } from "../kernel/worlds.ts";
import { llmUsageLine, llmUsageOf, renderLlmUsage } from "../views/records.ts";
import { shownPath } from "../views/text.ts";
import { EXIT } from "./exitCodes.ts";
import { progressBar } from "./progress.ts";
import { signalExitCode, stopAfterTickOnSignals } from "./signals.ts";

export interface NatsFlags {
  nats?: string;
  namespace: string;
}

export interface EpisodeFlags {
  log?: string;
  trace?: string;
  snapshotEvery?: number;
  snapshotLogBytes?: number;
  snapshotSeconds?: number;
  fsync?: FsyncPolicy;
  json?: boolean;
  quiet?: boolean;
  summary?: boolean;
}

const BESIDE_LOG = "\0beside-log";

/** `--trace`: absent or a bare `jsonl` means a JSONL file beside the log. */
function traceFrom(flags: EpisodeFlags & { nats?: string }): TelemetryConfig | "default" {
  if (flags.trace === undefined) return "default";
  const config = parseTraceFlag(flags.trace, BESIDE_LOG);
  if (config.exporter !== "jsonl" || config.file !== BESIDE_LOG) return config;
  // A log in JetStream has no directory, and its default trace is none: a bare jsonl went nowhere, said "tracing off".
  if (flags.nats !== undefined) throw new UsageError("--trace jsonl: a log in JetStream has no directory to put its trace beside; name the file: --trace jsonl:<file>");
  return "default";
}

/** Where the trace went, and a warning on stderr when some of it never arrived. */
function traceLine(result: EpisodeResult): string {
  const where = result.traceFile === null ? result.traceDescription : `${shownPath(result.traceFile)}${result.traceSampling === undefined ? "" : ` (sampled: ${result.traceSampling})`}`;
  const lost = result.traceUndelivered;
  if (lost === undefined) return where;
  process.stderr.write(`probetown: warning: ${lost.spans} trace spans could not be delivered (${lost.error}); the log is complete, the trace is not\n`);
  return `${where} (${lost.spans} spans NOT delivered: ${lost.error})`;
}

/** A resumed run's --json says after which tick it continued (-1: from the start), as a sweep's outcomes do. */
const resumedField = (result: EpisodeResult): { resumedAfterTick?: number } => (result.resumedAfterTick === undefined ? {} : { resumedAfterTick: result.resumedAfterTick });

function countsLine(result: EpisodeResult): string {
  if (result.resumedAfterTick !== undefined) {
    const from = result.resumedAfterTick < 0 ? "resumed from its start (the logged records checked, not appended again)" : `resumed after tick ${result.resumedAfterTick}`;
    return `${result.ticks} ticks, ${result.actors} actors: ${from}, ${result.records} records appended in ${result.seconds.toFixed(2)} s`;
  }
  return `${result.ticks} ticks, ${result.records} records, ${result.actors} actors in ${result.seconds.toFixed(2)} s`;
}

/** The world a log or result names, when this build has it. */
const moduleOf = (world: string | undefined): WorldModule | null => (world !== undefined && isRegisteredWorld(world) ? worldModuleNamed(world) : null);

/** A world without a live summary: it collects nothing, and the log's summary is printed. */
const NO_LIVE_SUMMARY: LiveSummary = { onTick: () => {}, text: () => null, json: () => null };

/**
 * Whether a world's episodes can call models: their logs are read back for the model usage (the
 * summary's `llm:` line, `llm` in --json), which counts every call the episode's log holds, a
 * resumed run's earlier ones too.
 */
export const callsModels = (world: string): boolean => moduleOf(world)?.summaries?.callsModels === true;

/**
 * The summary of a log read back, by its world's module (a live summary, drawn from ticks, replaces
 * it when it has rows); `usage: false` leaves out the model usage (a caller that prints it on its own).
 */
function worldSummary(dir: string, logged: readonly LogRecord[], actors: number, usage = true, parents?: ParentLogs): string | null {
  const module = moduleOf((logged[0]?.payload as { world?: string } | undefined)?.world);
  const text = module?.summaries?.fromLog?.({ dir, records: logged, actors, ...(parents === undefined ? {} : { parents }) }) ?? null;
  const llm = usage && module?.summaries?.callsModels === true ? renderLlmUsage(logged) : null;
  return text === null ? llm : llm === null ? text : `${text}\n${llm}`;
}

function report(result: EpisodeResult, live: LiveSummary | null, flags: EpisodeFlags, title: string): void {
  const lines = [title, countsLine(result), `state hash ${result.stateHash}`];
  const logged = callsModels(result.world) ? scanLog(result.logDir).records : null;
  // A live summary reads the log back only when it collected rows.
  const liveRecords = (): readonly LogRecord[] => logged ?? scanLog(result.logDir).records;
  if (flags.json) {
    const summary = live === null ? null : live.json(liveRecords());
    const llm = logged === null ? null : llmUsageOf(logged);
    process.stdout.write(
      JSON.stringify({ episode: result.episode, dir: result.dir, log: result.logDir, trace: result.traceFile, ticks: result.ticks, records: result.records, seconds: result.seconds, stateHash: result.stateHash, ...resumedField(result), summary, llm }, null, 2) + "\n",
    );
    return;
  }
  if (!flags.quiet) {
    process.stdout.write(lines.join("\n") + "\n\n");
    if (flags.summary !== false && result.resumedAfterTick === undefined) {
      const drawn = live === null ? null : live.text(liveRecords());
      if (drawn !== null) process.stdout.write(drawn + "\n\n");
      else {
        const text = worldSummary(result.dir, logged ?? scanLog(result.logDir).records, result.actors);
        if (text !== null) process.stdout.write(text + "\n\n");
      }
    } else if (flags.summary !== false && logged !== null) {
      // A resumed run's summary is not drawn, but its model usage is the episode's, from the whole log.
      const llm = renderLlmUsage(logged);
      if (llm !== null) process.stdout.write(llm + "\n\n");
    }
  }
  process.stdout.write(`log:   ${shownPath(result.logDir)}\n`);
  process.stdout.write(`trace: ${traceLine(result)}\n`);
  if (!flags.quiet) {
    process.stdout.write(`check: npx probetown verify ${shownPath(result.dir)}    timeline: npx probetown inspect ${shownPath(result.dir)}\n`);
    // Only a file log can be browsed: the dashboard reads episode folders under --runs.
    if (result.logDir !== undefined && existsSync(result.dir)) process.stdout.write(`view:  ${uiCommandLine(result.dir, moduleOf(result.world)?.ui !== undefined)}\n`);
  }
}

/**
 * The dashboard command that shows the episode in `dir` (a file log), and the page that opens this
 * episode: its world's own view (the town replay) when the world has one, else its timeline. The
 * episode's id in the dashboard is its folder's name below `--runs`, which is the folder above it.
 */
export function uiCommandLine(dir: string, worldView: boolean): string {
  const page = `#/episode?id=${encodeURIComponent(basename(dir))}${worldView ? "&view=world" : ""}`;
  return `npx probetown ui --runs ${shownPath(dirname(dir))}   then open http://127.0.0.1:4173/${page}`;
}

/**
 * What `run` and `fork` share: options from the flags, a progress bar, and per-tick rows for the
 * summary (collected while the episode runs, small towns only); `finish` prints the result.
 */
export function episodeSession(flags: EpisodeFlags & { nats?: string }, label: string) {
  const bar = progressBar(!flags.json && !flags.quiet, label);
  // Chosen at the first tick, by the world the host runs (a fork learns it from its parent's log).
  let live: LiveSummary | null = null;
  const onTick: NonNullable<EpisodeObserver["onTick"]> = (result, host) => {
    live ??= moduleOf(host.worldName)?.summaries?.live?.() ?? NO_LIVE_SUMMARY;
    live.onTick(result, host);
  };
  // A file run stops on Ctrl-C after the tick in progress, and `interrupted` says where it stands.
  const command = label === "fork" ? "fork" : "run";
  const stop = flags.nats === undefined ? stopAfterTickOnSignals(command, () => bar.stop()) : null;
  /**
   * The exit code and what to say when the episode stopped on a signal (`how` continues it), else
   * rethrows: the log holds every tick up to the one it stopped after.
   */
  const interrupted = (error: unknown, how: (dir: string) => string): number => {
    stop?.release();
    if (!(error instanceof Interrupted)) throw error;
    bar.stop();
    process.stderr.write(`${command}: stopped by ${error.reason} after tick ${error.afterTick} of ticks 0–${error.lastTick}; the log in ${shownPath(error.dir)} holds every tick up to ${error.afterTick}; ${how(error.dir)}\n`);
    return signalExitCode(error.reason);
  };
  /** Whether the readable summary is printed (not for a resumed run: its ticks were partly run before). */
  const wantsSummary = (result: EpisodeResult): boolean => !flags.json && !flags.quiet && flags.summary !== false && result.resumedAfterTick === undefined;
  const options: CommonOptions = {
    trace: traceFrom(flags),
    ...(flags.log === undefined ? {} : { dir: flags.log }),
    ...(flags.snapshotEvery === undefined ? {} : { snapshotEvery: flags.snapshotEvery }),
    ...(flags.snapshotLogBytes === undefined ? {} : { snapshotLogBytes: flags.snapshotLogBytes }),
    ...(flags.snapshotSeconds === undefined ? {} : { snapshotMs: flags.snapshotSeconds * 1000 }),
    ...(flags.fsync === undefined ? {} : { fsync: flags.fsync }),
    observer: { onTick },
    progress: bar.update,
    ...(stop === null ? {} : { stop: stop.signal }),
  };
  /**
   * `check` replaces the verify hint for logs kept elsewhere (JetStream); `logged` is such a log
   * read back, for its model usage (a model world's) and the summary the file path prints;
   * `parents`: a fork's ancestors' logs, read back too (an EnvProbe fork's summary covers its whole
   * trajectory).
   */
  const finish = (result: EpisodeResult, title: string, check?: string, logged?: readonly LogRecord[] | null, parents?: ParentLogs): number => {
    bar.stop();
    stop?.release();
    if (check !== undefined) {
      const usage = logged === undefined || logged === null || !callsModels(result.world) ? null : llmUsageOf(logged);
      if (flags.json) process.stdout.write(JSON.stringify({ episode: result.episode, log: result.dir, ticks: result.ticks, records: result.records, seconds: result.seconds, stateHash: result.stateHash, ...resumedField(result), llm: usage }, null, 2) + "\n");
      else {
        if (!flags.quiet) process.stdout.write(`${title}\n${countsLine(result)}\nstate hash ${result.stateHash}\n${usage === null ? "" : `${llmUsageLine(usage)}\n`}\n`);
        if (!flags.quiet && wantsSummary(result) && logged != null) {
          const text = live?.text(logged) ?? worldSummary(result.dir, logged, result.actors, false, parents);
          if (text !== null) process.stdout.write(text + "\n\n");
        }
        process.stdout.write(`log:   ${result.dir}\ntrace: ${traceLine(result)}\n`);
        if (!flags.quiet) process.stdout.write(`check: ${check}\n`);
      }
      return EXIT.ok;
    }
    report(result, live, flags, title);
    return EXIT.ok;
  };
  return { options, finish, wantsSummary, interrupted };
}

/** Where a new episode's files go and what of them grows with its length (`--snapshot-every`, a JSONL trace). */
export function diskOf(flags: EpisodeFlags): NewEpisodeDisk {
  const trace = traceFrom(flags);
  return { dir: flags.log ?? "runs", trace: trace === "default" || trace.exporter === "jsonl", ...(flags.snapshotEvery === undefined ? {} : { snapshotEvery: flags.snapshotEvery }) };
}

/** Rethrows a store's "this episode already has a log" with what this command's user can do about it. */
export const hintIfExists = (hint: string) => (error: unknown): never => {
  throw error instanceof EpisodeExists ? new EpisodeExists(error.episode, `${error.message}; ${hint}`) : error;
};

/** The command that checks an episode written to JetStream (the line a run or fork ends with). */
export const verifyInNats = (episode: string, url: string, ns: string): string => {
  const { flag, after } = natsFlagHint(url);
  return `npx probetown verify ${episode} ${flag}${ns === DEFAULT_NAMESPACE ? "" : ` --namespace ${ns}`}${after}`;
};
