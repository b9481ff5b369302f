// The `probetown` command line. Exit codes (stable, for scripts):
//   0 success · 1 verification failed (the log is intact but replay diverges from it)
//   2 bad usage or input (flags, config, unknown world/condition) · 3 the log is damaged
//   (corrupt, torn, unknown event type, malformed payload) · 4 unexpected internal error
//   5 finished, but the model endpoint refused (key, model, URL), could not be reached or answered
//   every call to a model with an error, so its calls fell back to the deterministic backends (the
//   log is complete and valid)
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import cliProgress from "cli-progress";
import { worlds } from "../../actors/worlds.ts";
import { resolveNewEpisodeConfig } from "../../actors/actor.ts";
import { InvalidPayload, isDamage, LogCorrupted, SnapshotDamaged, TornTail, UnknownEventType, SequenceConflict } from "../../events/errors.ts";
import { parseTraceFlag, type TelemetryConfig } from "../../infra/telemetry.ts";
import { openFileEventStoreForAppend, peekLog, scanLog, type LogEnds } from "../../infra/fileEventStore.ts";
import { EpisodeExists, isStorageError, WriterLocked, type FsyncPolicy } from "../../infra/eventStore.ts";
import { Effect } from "effect";
import type { TownConfig } from "../../actors/auratown/config.ts";
import { ActorHostLost, episodeIdOf, filesWhere, forkTicks, Interrupted, PROBETOWN_VERSION, forkEpisode, forkEpisodeEffect, resumeNotes, runEpisode, runEpisodeEffect, type CommonOptions, type EpisodeResult, type ForkOptions, type ForkResult, type RunOptions } from "../episodes.ts";
import { DEFAULT_NAMESPACE, jetStreamWhere, LocalWorkersGone, remotePlacement, withNats } from "../distributed.ts";
import { distributedLayer } from "../../infra/natsLayers.ts";
import { Embedded } from "../../infra/layers.ts";
import { InvalidSubjectToken, NATS_URL_ENV, NATS_URL_FROM_ENV, natsFlagHint, NatsUnavailable, shownNatsUrl, splitNatsUrl } from "../../infra/nats.ts";
import { MIN_LOCK_TTL_MS, peekJetStreamLog, readJetStreamLog } from "../../infra/jetStreamEventStore.ts";
import { cmdActorHost, cmdFollow, cmdSweep, cmdWorker, jetStreamParents, keepSnapshotInNats, listFlag, lockWaitNotice, peekInNats, replayFromNats, verifyFromNats, type EndsCheck } from "./distributed.ts";
import { cmdReport, REPORT_METRICS } from "./report.ts";
import { Divergence, headerOf, isPathError, layoutOf, replayEpisode, replayRecordsEffect, resolveEpisodeDir, snapshotOfReplay, UsageError, type EpisodeHeader, type ReplayOptions, type ReplayResult } from "../replay.ts";
import { FileSnapshotStore } from "../../infra/snapshotStore.ts";
import { collectRow, DETAILED_TOWN_ACTORS, renderRecordSummary, renderSummary, summarize, type TickRow } from "../views/auratown.ts";
import { townInspection } from "./inspect.ts";
import { verifyEpisode } from "../verify.ts";
import { treeReportText, verifyTree } from "../verifyTree.ts";
import { registerEval } from "./eval.ts";
import { registerFidelity } from "./fidelity.ts";
import { signalExitCode, stopAfterTickOnSignals } from "./signals.ts";
import { addLlmOptions, EXIT_ENDPOINT, gatewayExit, llmForFork, llmForRun, type LlmCliFlags } from "./llm.ts";
import { cmdEnvprobeReport, cmdEnvprobeSweep, envprobeLogSummary, type EnvprobeSweepFlags, type ParentLogs } from "./envprobe.ts";
import { llmUsageLine, llmUsageOf, pickRecords, renderLlmUsage, renderRecordTimeline, renderSceneSummary } from "../views/records.ts";
import type { LogRecord } from "../../events/record.ts";
import { DEFAULT_CHUNK } from "../envprobe/natsSweep.ts";
import { MAX_HORIZON } from "../../actors/envprobe/config.ts";
import { registerExperiment } from "./experiment.ts";
import { registerAsk } from "./ask.ts";
import { cmdDiff } from "./diff.ts";
import { addHelpExamples } from "./examples.ts";
import { SEED_RULE } from "../../actors/rng.ts";
import { checkTownRunDisk, checkTownRunFits, type TownRunDisk } from "./limits.ts";
import { namesActor, prettyJsonPieces, shownPath, writePieces } from "../views/text.ts";

export const EXIT = { ok: 0, diverged: 1, usage: 2, damaged: 3, internal: 4, endpoint: EXIT_ENDPOINT } as const;

function integer(flag: string, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER, why = "") {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError(`${flag} expects an integer, got '${value}'`);
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${flag} expects an integer ${min > Number.MIN_SAFE_INTEGER ? `from ${min} to ${Math.min(max, Number.MAX_SAFE_INTEGER)}` : `within ±${Number.MAX_SAFE_INTEGER}`}, got '${value}'`);
    if (n < min) throw new InvalidArgumentError(`${flag} expects an integer ≥ ${min}, got '${value}'`);
    if (n > max) throw new InvalidArgumentError(`${flag} expects an integer ≤ ${max}${why}, got '${value}'`);
    return n;
  };
}

/** `--config` is a JSON file, or the JSON object itself when it starts with `{` (quick overrides). */
function readConfigFile(path: string): unknown {
  let text: string;
  // `[…]` too, so an inline array is told it is not an object rather than that no such file exists.
  if (/^\s*[{[]/.test(path)) text = path;
  else {
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new UsageError(`--config ${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--config ${path}: not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`--config ${path}: expected a JSON object of config fields, got ${Array.isArray(value) ? "an array" : String(value)}`);
  return value;
}

function progressBar(enabled: boolean, label: string): { update: (done: number, total: number) => void; stop: () => void } {
  if (!enabled || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} ticks · {eta_formatted} left`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}

interface NatsFlags {
  nats?: string;
  namespace: string;
}

interface EpisodeFlags {
  log?: string;
  trace?: string;
  snapshotEvery?: number;
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
  const where = result.traceFile === null ? result.traceDescription : shownPath(result.traceFile);
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

/**
 * The summary of a log read back, by its world (the town's own view is drawn from ticks instead, when
 * kept); `usage: false` leaves out the model usage (a caller that prints it on its own).
 */
function worldSummary(dir: string, logged: readonly LogRecord[], actors: number, usage = true, parents?: ParentLogs): string | null {
  const world = (logged[0]?.payload as { world?: string } | undefined)?.world;
  if (world === "auratown") return renderRecordSummary(logged, actors);
  const llm = usage ? renderLlmUsage(logged) : null;
  const withLlm = (text: string | null) => (text === null ? llm : llm === null ? text : `${text}\n${llm}`);
  if (world === "aura-scene") return withLlm(renderSceneSummary(logged));
  if (world === "envprobe") return withLlm(envprobeLogSummary(dir, logged, parents));
  return null;
}

/**
 * Worlds whose episodes can call models: their logs are read back for the model usage (the summary's
 * `llm:` line, `llm` in --json), which counts every call the episode's log holds, a resumed run's
 * earlier ones too.
 */
const MODEL_WORLDS: ReadonlySet<string> = new Set(["aura-scene", "envprobe"]);

function report(result: EpisodeResult, rows: TickRow[], records: Parameters<typeof summarize>[0], flags: EpisodeFlags, title: string): void {
  const lines = [title, countsLine(result), `state hash ${result.stateHash}`];
  const logged = MODEL_WORLDS.has(result.world) ? scanLog(result.logDir).records : null;
  if (flags.json) {
    const summary = rows.length > 0 ? summarize(records, rows) : null;
    const llm = logged === null ? null : llmUsageOf(logged);
    process.stdout.write(
      JSON.stringify({ episode: result.episode, dir: result.dir, log: result.logDir, trace: result.traceFile, ticks: result.ticks, records: result.records, seconds: result.seconds, stateHash: result.stateHash, ...resumedField(result), summary, llm }, null, 2) + "\n",
    );
    return;
  }
  if (!flags.quiet) {
    process.stdout.write(lines.join("\n") + "\n\n");
    if (flags.summary !== false && result.resumedAfterTick === undefined) {
      if (rows.length > 0) process.stdout.write(renderSummary(summarize(records, rows)) + "\n\n");
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
  if (!flags.quiet) process.stdout.write(`check: npx probetown verify ${shownPath(result.dir)}    timeline: npx probetown inspect ${shownPath(result.dir)}\n`);
}

/**
 * What `run` and `fork` share: options from the flags, a progress bar, and per-tick rows for the
 * summary (collected while the episode runs, small towns only); `finish` prints the result.
 */
function episodeSession(flags: EpisodeFlags & { nats?: string }, label: string) {
  const bar = progressBar(!flags.json && !flags.quiet, label);
  const rows: TickRow[] = [];
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
    ...(flags.fsync === undefined ? {} : { fsync: flags.fsync }),
    observer: { onTick: (result, host) => void (host.ids.length <= DETAILED_TOWN_ACTORS && host.ids.includes("env/auratown") && rows.push(collectRow(result.tick, host))) },
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
      const usage = logged === undefined || logged === null || !MODEL_WORLDS.has(result.world) ? null : llmUsageOf(logged);
      if (flags.json) process.stdout.write(JSON.stringify({ episode: result.episode, log: result.dir, ticks: result.ticks, records: result.records, seconds: result.seconds, stateHash: result.stateHash, ...resumedField(result), llm: usage }, null, 2) + "\n");
      else {
        if (!flags.quiet) process.stdout.write(`${title}\n${countsLine(result)}\nstate hash ${result.stateHash}\n${usage === null ? "" : `${llmUsageLine(usage)}\n`}\n`);
        if (!flags.quiet && wantsSummary(result) && logged != null) {
          const text = rows.length > 0 ? renderSummary(summarize(logged, rows)) : worldSummary(result.dir, logged, result.actors, false, parents);
          if (text !== null) process.stdout.write(text + "\n\n");
        }
        process.stdout.write(`log:   ${result.dir}\ntrace: ${traceLine(result)}\n`);
        if (!flags.quiet) process.stdout.write(`check: ${check}\n`);
      }
      return EXIT.ok;
    }
    const records = rows.length > 0 ? scanLog(result.logDir).records : [];
    report(result, rows, records, flags, title);
    return EXIT.ok;
  };
  return { options, finish, wantsSummary, interrupted };
}

/**
 * This command line with `--resume` (and the episode directory, when it was chosen for the run:
 * `run` without `--log` goes to runs/<episode>-2 when runs/<episode> is taken, which a `--resume`
 * without `--log` would not find), quoted for a POSIX shell.
 */
function resumeCommand(dir: string, addLog: boolean): string {
  const args = process.argv.slice(2).filter((a) => a !== "--resume");
  const quoted = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  return [...args, ...(addLog ? ["--log", shownPath(dir)] : []), "--resume"].map(quoted).join(" ");
}

/** The episode header at a log's first end; null when there is none or it does not read (the full read says why). */
function headerAtEnds(ends: LogEnds, log: string): EpisodeHeader | null {
  if (ends.first === null) return null;
  try {
    return headerOf([ends.first], log);
  } catch {
    return null;
  }
}

/** A fork of a town runs its parent's town for the child's ticks (--ticks, or the parent's): refused as a run would be when the heap cannot hold it. */
function checkForkFits(ends: LogEnds, log: string, ticks: number | undefined, child: { at: number; disk: TownRunDisk | null }): void {
  const header = headerAtEnds(ends, log);
  if (header === null || header.world.name !== "auratown") return;
  const named = { town: `${log}: the parent's town`, length: ticks === undefined ? `${log}: the parent's ${header.ticks} ticks` : `--ticks ${ticks}` };
  checkTownRunFits(header.config as TownConfig, ticks ?? header.ticks, named);
  // The child writes the ticks after the fork point.
  if (child.disk !== null) checkTownRunDisk(header.config as TownConfig, (ticks ?? header.ticks) - child.at - 1, named, child.disk);
}

/** Where a new episode's files go and what of them grows with its length (`--snapshot-every`, a JSONL trace). */
function diskOf(flags: EpisodeFlags): TownRunDisk {
  const trace = traceFrom(flags);
  return { dir: flags.log ?? "runs", trace: trace === "default" || trace.exporter === "jsonl", ...(flags.snapshotEvery === undefined ? {} : { snapshotEvery: flags.snapshotEvery }) };
}

/** Rethrows a store's "this episode already has a log" with what this command's user can do about it. */
const hintIfExists = (hint: string) => (error: unknown): never => {
  throw error instanceof EpisodeExists ? new EpisodeExists(error.episode, `${error.message}; ${hint}`) : error;
};

/** The command that checks an episode written to JetStream (the line a run or fork ends with). */
const verifyInNats = (episode: string, url: string, ns: string): string => {
  const { flag, after } = natsFlagHint(url);
  return `npx probetown verify ${episode} ${flag}${ns === DEFAULT_NAMESPACE ? "" : ` --namespace ${ns}`}${after}`;
};

async function cmdRun(worldName: string, flags: EpisodeFlags & NatsFlags & LlmCliFlags & { seed: number; condition?: string; ticks?: number; days?: number; config?: string; agents?: number; remote?: string; resume?: boolean }): Promise<number> {
  if (worlds[worldName] === undefined) throw new UsageError(`unknown world '${worldName}' (known: ${Object.keys(worlds).join(", ")})`);
  const fixedBy = worlds[worldName]!.lengthFixedBy;
  if (fixedBy !== undefined && (flags.ticks !== undefined || flags.days !== undefined)) {
    throw new UsageError(flags.ticks !== undefined ? `--ticks ${flags.ticks}: ${fixedBy(flags.ticks)}` : `--days ${flags.days}: ${fixedBy("n")}`);
  }
  let config: unknown = flags.config === undefined ? undefined : readConfigFile(flags.config);
  const conditionKey = worlds[worldName]!.conditionConfigKey;
  if (conditionKey !== undefined && config !== undefined && conditionKey in (config as object)) {
    const named = (config as Record<string, unknown>)[conditionKey];
    throw new UsageError(`--config ${flags.config}: "${conditionKey}" is the ${worldName} condition, chosen by --condition, not the config (the config's ${JSON.stringify(named)} would be overridden by ${flags.condition === undefined ? `the default condition ${worlds[worldName]!.defaultCondition}` : `--condition ${flags.condition}`}); use --condition ${typeof named === "string" ? named : "<name>"} instead`);
  }
  if (flags.agents !== undefined) {
    if (worldName !== "auratown") throw new UsageError(`--agents: only auratown has a roster to grow (${worldName} sets its actors by its config)`);
    if (flags.agents < 5) throw new UsageError(`--agents: the town has 5 residents; expected 5 or more, got ${flags.agents}`);
    // As --ticks with --days: two sizes, one of them silently dropped (--agents won).
    const extra = (config as { extraAgents?: unknown } | undefined)?.extraAgents;
    if (extra !== undefined && extra !== flags.agents - 5) throw new UsageError(`--agents ${flags.agents} and --config ${flags.config}: "extraAgents": ${JSON.stringify(extra)} both say how large the town is (${flags.agents} residents, or 5 + ${JSON.stringify(extra)}): give one of them`);
    config = { ...(config as object | undefined), extraAgents: flags.agents - 5 };
  }
  const llm = llmForRun(worldName, config, flags);
  config = llm.config;
  const world = worlds[worldName]!;
  let resolved: unknown;
  try {
    resolved = resolveNewEpisodeConfig(world, config);
  } catch (error) {
    // Checked here, before anything runs, so the error can name the file it came from.
    throw new UsageError(`${flags.config === undefined ? "" : `--config ${flags.config}: `}${(error as Error).message}`);
  }
  const perDay = world.defaultTicks(resolved);
  if (flags.ticks !== undefined && flags.days !== undefined) throw new UsageError("--ticks and --days both say how long to run: give one of them");
  const ticks = flags.ticks ?? (flags.days === undefined ? undefined : flags.days * perDay);
  // The town and its length, before anything is built (a resumed run is checked as it was started).
  if (worldName === "auratown") {
    const length = flags.days !== undefined ? { length: `--days ${flags.days}` } : flags.ticks !== undefined ? { length: `--ticks ${flags.ticks}` } : {};
    const named = { town: flags.agents !== undefined ? `--agents ${flags.agents}` : `--config ${flags.config}: extraAgents`, ...length };
    checkTownRunFits(resolved as TownConfig, ticks ?? perDay, named);
    // A resumed run's log is already there; a full disk stops it, and --resume continues it.
    if (flags.nats === undefined && flags.resume !== true) checkTownRunDisk(resolved as TownConfig, ticks ?? perDay, named, diskOf(flags));
  }
  const condition = flags.condition ?? world.defaultCondition;
  const session = episodeSession(flags, worldName);
  const title = (episode: string) => `${worldName} · seed ${flags.seed} · condition ${condition} · episode ${episode}`;
  // A resume that cuts a damaged tail says what it cut and where the bytes were kept; one that does
  // not continue from the latest snapshot (one past a cut log's end) says which it used.
  const notes = resumeNotes((note) => void process.stderr.write(`run --resume: ${note}\n`), flags.nats === undefined ? "file" : "subject");
  const options: RunOptions = { ...session.options, world: worldName, seed: flags.seed, condition, config, ...(ticks === undefined ? {} : { ticks }), ...(flags.resume ? { resume: true, ...notes } : {}), ...(llm.llm === undefined ? {} : { llm: llm.llm }) };
  if (flags.nats === undefined) {
    if (flags.remote !== undefined) throw new UsageError("--remote: actors in other processes need --nats <url>");
    if (flags.resume && !flags.quiet) {
      // A typo in --log would otherwise start a fresh episode without a word.
      const { dir, log } = filesWhere(flags.log, true)(episodeIdOf(worldName, flags.seed, condition));
      if (!existsSync(log) || readdirSync(log).length === 0) process.stderr.write(`run --resume: no log at ${shownPath(dir)} yet; starting the episode there\n`);
    }
    let result: EpisodeResult;
    try {
      result = await runEpisode(options);
    } catch (error) {
      return session.interrupted(error, (dir) => `continue it with \`probetown ${resumeCommand(dir, flags.log === undefined)}\``);
    }
    const code = session.finish(result, title(episodeIdOf(worldName, flags.seed, condition)));
    return code === EXIT.ok ? gatewayExit("run", llm.gateway) : code;
  }
  if (flags.log !== undefined) throw new UsageError("--log: with --nats the log goes to JetStream; drop --log");
  const ns = flags.namespace;
  const remote = flags.remote;
  const url = flags.nats;
  const namespaceFlag = ns === DEFAULT_NAMESPACE ? "" : ` --namespace ${ns}`;
  // Hosts are often started after the sequencer: say what it waits for, and how to start them.
  const onWait = ({ episode, actors, timeoutMs }: { episode: string; actors: readonly string[]; timeoutMs: number }): void => {
    if (!flags.quiet) process.stderr.write(`run: waiting for actor hosts serving ${actors.join(", ")} of episode ${episode}, up to ${Math.round(timeoutMs / 1000)} s in all (start them with \`probetown actor-host ${episode} ${natsFlagHint(url).flag}${namespaceFlag} --actors ${actors.join(",")}\`${natsFlagHint(url).after})\n`);
  };
  const placement = remote === undefined ? {} : { placement: remotePlacement(ns, listFlag("--remote", remote), onWait) };
  // The model usage is counted from the episode's whole log, read back (a resumed run's earlier calls too).
  let logged = null as LogRecord[] | null;
  const result = await withNats(flags.nats, { role: "run", quiet: flags.quiet }, async (nc) => {
    if (flags.resume && !flags.quiet) {
      // As for a file log: a typo in --namespace would otherwise start a fresh episode without a word.
      const episode = episodeIdOf(worldName, flags.seed, condition);
      const ends = await peekJetStreamLog(nc, ns, episode);
      if (ends.first === null && ends.last === null) process.stderr.write(`run --resume: no log of episode ${episode} in namespace ${ns} yet; starting the episode there\n`);
    }
    const ran = await Effect.runPromise(runEpisodeEffect({ ...options, where: jetStreamWhere(ns), ...placement }).pipe(Effect.provide(distributedLayer(nc, ns, { actors: flags.remote === undefined ? "in-process" : "nats", onLockWait: lockWaitNotice(flags.quiet) })))).catch(
      hintIfExists("continue it with --resume, or choose another --namespace"),
    );
    // Read back for the model usage, and the summary (as the file path reads its log file).
    if (MODEL_WORLDS.has(ran.world) || session.wantsSummary(ran)) logged = await readJetStreamLog(nc, ns, ran.episode);
    return ran;
  });
  const code = session.finish(result, title(result.episode), verifyInNats(result.episode, flags.nats, ns), logged);
  return code === EXIT.ok ? gatewayExit("run", llm.gateway) : code;
}

async function cmdFork(log: string, flags: EpisodeFlags & NatsFlags & LlmCliFlags & { at: number; condition: string; ticks?: number; reuseLlm?: boolean }): Promise<number> {
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
    const forked = await Effect.runPromise(forkEpisodeEffect({ ...options, ...llm, parentWhere: where, where }).pipe(Effect.provide(distributedLayer(nc, ns)))).catch(
      hintIfExists("this fork was made before; inspect or verify it by that id, or fork into another --namespace"),
    );
    afterFork?.();
    if (MODEL_WORLDS.has(forked.world) || session.wantsSummary(forked)) logged = await readJetStreamLog(nc, ns, forked.episode);
    if (forked.world === "envprobe" && session.wantsSummary(forked) && logged !== null) parents = await jetStreamParents(nc, logged);
    return forked;
  });
  const code = session.finish(result, title(result), verifyInNats(result.episode, nats, ns), logged, parents);
  return code === EXIT.ok ? gatewayExit("fork", gateway) : code;
}

/** A folder that is not itself an episode (no log/, not a log path) but holds episodes below it. */
function isEpisodeTree(path: string): boolean {
  if (!existsSync(path) || !statSync(path).isDirectory() || existsSync(join(path, "log"))) return false;
  return !/[\\/]log[\\/]?$/.test(path);
}

async function cmdVerifyTree(root: string, flags: { json?: boolean; quiet?: boolean }): Promise<number> {
  const bar = !flags.json && !flags.quiet && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: "verify [{bar}] {value}/{total} episodes · {eta_formatted} left", stream: process.stderr, hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
    : null;
  const report = await verifyTree(resolve(root), {
    onProgress: (done, total) => {
      if (done === 1) bar?.start(total, 0);
      bar?.update(done);
    },
  });
  bar?.stop();
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(treeReportText(report) + "\n");
  return report.episodes === 0 ? 2 : report.exitCode;
}

async function cmdVerify(log: string, flags: { json?: boolean; quiet?: boolean } & NatsFlags): Promise<number> {
  if (flags.nats === undefined && isEpisodeTree(log)) return cmdVerifyTree(log, flags);
  const bar = progressBar(!flags.json && !flags.quiet, "verify");
  const options = { onProgress: bar.update };
  const report = await (flags.nats === undefined ? verifyEpisode(log, options) : verifyFromNats(log, flags.nats, flags.namespace, options)).finally(bar.stop);
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(report.text + "\n");
  return report.exitCode;
}

/**
 * A replay of the episode directory `log`, or with --nats of the JetStream episode `log`; `check`
 * sees the log's two ends first, either way, so the flags they refute fail before the replay.
 */
async function replayOf(log: string, flags: { nats?: string; namespace: string }, options: ReplayOptions, check: EndsCheck, role: string): Promise<ReplayResult> {
  if (flags.nats !== undefined) return replayFromNats(log, flags.nats, flags.namespace, options, check, role);
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
      await Effect.runPromise(replayRecordsEffect(dir, intact, { snapshots: layoutOf(dir).snapshots, ...options }).pipe(Effect.provide(Embedded))).then(
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

const ticksHeld = (result: ReplayResult): string => ticksHeldText(result.header.firstTick, result.records.findLast((r) => r.type === "tick.committed")?.tick);

/** The flags of `replay`, `inspect` and `fork` that a log's two ends can refute. */
interface EndsFlags {
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
function checkEnds(ends: LogEnds, log: string, flags: EndsFlags): void {
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

async function cmdReplay(log: string, flags: { toTick?: number; json?: boolean; state?: boolean; agent?: string; snapshot?: boolean; nats?: string; namespace: string }): Promise<number> {
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
  if (flags.state && agent === undefined && !flags.json && stateIds.length > DETAILED_TOWN_ACTORS) process.stderr.write(`replay: the state of all ${stateIds.length} actors follows; --agent <id or name> prints one actor's\n`);
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
    ...(flags.snapshot ? { snapshot: flags.nats === undefined ? await keepSnapshot(resolveEpisodeDir(log), result) : `${await keepSnapshotInNats(snapshotOfReplay(result), flags.nats, flags.namespace)} (JetStream namespace ${flags.namespace})` } : {}),
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

async function cmdInspect(log: string, flags: { from?: number; to?: number; agent?: string; all?: boolean; json?: boolean; nats?: string; namespace: string }): Promise<number> {
  if (flags.from !== undefined && flags.to !== undefined && flags.from > flags.to) throw new UsageError(`--from ${flags.from} is after --to ${flags.to}`);
  const agent = flags.agent;
  // Flags a log's two ends can refute are checked before the replay, which for a large town takes
  // seconds to minutes (a typo in --agent waited out the whole replay).
  const check: EndsCheck = (ends) => checkEnds(ends, log, { ...(agent === undefined ? {} : { agent }), ...(flags.from === undefined ? {} : { from: flags.from }), ...(flags.to === undefined ? {} : { to: flags.to }) });
  // The town's timeline is drawn from every actor's state per tick, written as each tick is
  // replayed; other worlds read their records.
  const bar = progressBar(!flags.json, "inspect: replaying");
  // A progress bar on the terminal the timeline goes to stops when the timeline starts.
  let barShown = true;
  const town = townInspection(flags, (chunk) => void process.stdout.write(chunk), () => {
    if (!process.stdout.isTTY) return;
    barShown = false;
    bar.stop();
  });
  // The text timeline ends at --to, so the replay does too (the JSON's summary covers the whole episode).
  const toTick = flags.json || flags.to === undefined ? {} : { toTick: flags.to };
  const result = await replayOf(log, flags, { ...toTick, ...town.options, onProgress: (done, total) => barShown && bar.update(done, total) }, check, "inspect")
    .catch((error: unknown) => {
      // The ticks before a divergence or damage are shown, then the error.
      bar.stop();
      town.flush();
      throw error;
    })
    .finally(bar.stop);
  result.host.stop();
  const filter = { ...(flags.from === undefined ? {} : { from: flags.from }), ...(flags.to === undefined ? {} : { to: flags.to }), ...(flags.agent === undefined ? {} : { agent: flags.agent }) };
  if (agent !== undefined && !result.host.ids.some((id) => namesActor(id, agent))) throw unknownAgent(agent, result.header.episode, result.host.ids);
  if (flags.from !== undefined && flags.from > result.lastTick) throw new UsageError(`--from ${flags.from}: ${result.header.episode} has no tick ${flags.from} (${ticksHeld(result)})`);
  if (flags.to !== undefined && flags.to < result.header.firstTick) throw new UsageError(`--to ${flags.to}: ${result.header.episode} has no tick ${flags.to} (${ticksHeld(result)})`);
  if (town.active()) {
    town.finish(result);
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

const unknownAgent = (agent: string, episode: string, ids: readonly string[]): UsageError => {
  const shown = ids.length > 12 ? `${ids.slice(0, 12).join(", ")}, … (${ids.length} in all)` : ids.join(", ");
  return new UsageError(`--agent ${agent}: no actor of ${episode} has that id or name (actors: ${shown})`);
};

async function cmdRepair(log: string): Promise<number> {
  const dir = resolveEpisodeDir(log);
  const logDir = layoutOf(dir).log;
  // Damage before the end is reported as the append would (exit 3), saying that repair leaves it;
  // an intact log needs no write, nor its writer lock (a read-only one failed with EACCES on the lock file).
  let scan: ReturnType<typeof scanLog>;
  try {
    scan = scanLog(logDir);
  } catch (error) {
    if (!isDamage(error)) throw error;
    process.stderr.write(`probetown: damaged log: ${error.message}\n  repair cuts only a torn final record (a crash mid-write); damage before the end is left as it is, nothing was changed\n`);
    return EXIT.damaged;
  }
  const episode = scan.records[0]?.episode;
  if (episode === undefined) throw new UsageError(`${shownPath(logDir)}: no complete record to keep; nothing to repair`);
  if (scan.torn === null) {
    process.stdout.write(`${shownPath(logDir)}: intact, nothing to repair\n`);
    return EXIT.ok;
  }
  try {
    accessSync(logDir, constants.W_OK);
    accessSync(scan.lastFile ?? logDir, constants.W_OK);
  } catch (error) {
    throw new UsageError(`${scan.torn.message}; cannot cut it: ${shownPath(logDir)} cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the log is left as it is: make it writable and repair again`);
  }
  let cut: { torn: TornTail; kept: string } | null = null;
  const { store, records } = openFileEventStoreForAppend(logDir, { episode, onRecovered: (torn, kept) => (cut = { torn, kept }) });
  await store.close();
  const done = cut as { torn: TornTail; kept: string } | null;
  process.stdout.write(
    done === null
      ? `${shownPath(logDir)}: intact, nothing to repair\n`
      : `${done.torn.message}\ncut back to seq ${records.at(-1)?.seq}; the cut bytes are kept in ${shownPath(done.kept)}\n`,
  );
  return EXIT.ok;
}

function cmdWorlds(): number {
  for (const [name, world] of Object.entries(worlds)) {
    process.stdout.write(`${name}: ${world.description}\n  conditions:\n`);
    const width = Math.max(...Object.keys(world.conditions).map((c) => c.length));
    for (const [c, info] of Object.entries(world.conditions)) process.stdout.write(`    ${c.padEnd(width)}  ${info.description}${c === world.defaultCondition ? " (default)" : ""}\n`);
  }
  return EXIT.ok;
}

/** `--nats <url>` (what it does for this command) and its `--namespace <ns>`. */
const natsOption = (help: string) => new Option("--nats <url>", `${help}; \`--nats ${NATS_URL_FROM_ENV}\` reads the URL from ${NATS_URL_ENV} (credentials stay out of ps)`);

/**
 * `--nats env`: the URL (with any credentials) comes from PROBETOWN_NATS_URL, so it stays out of
 * `ps`, shell history and the command lines of the workers `sweep --workers` starts.
 */
function natsUrlFromEnv(): string {
  const url = process.env[NATS_URL_ENV];
  if (url === undefined || url.trim() === "") throw new UsageError(`--nats env: reads the server URL from ${NATS_URL_ENV}, which is not set`);
  return url.trim();
}

/** Checks a --nats URL as it is read: nats.js would take an http:// or tls:// URL and fail later, or connect without TLS. */
function checkNatsUrl(value: string): void {
  const { scheme, credentials, rest } = splitNatsUrl(value);
  const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?\/?$/.exec(rest);
  // Said by us, not commander, whose message would repeat the value with any password in it. A
  // list of servers (`nats://a:4222,nats://b:4222`) is not taken either.
  if ((scheme !== "" && scheme.toLowerCase() !== "nats://") || m === null || Number(m[2] ?? 4222) > 65535 || credentials?.includes("://") === true) throw new UsageError(`--nats: expected a NATS server URL like nats://127.0.0.1:4222 (host and port; TLS is not configured by probetown), got '${shownNatsUrl(value)}'`);
}
const namespaceOption = () =>
  new Option("--namespace <ns>", "JetStream namespace (stream, queue and bucket names) with --nats").default(DEFAULT_NAMESPACE).argParser((value: string) => {
    // It becomes a subject token and part of stream names (at most 255 characters with their prefixes).
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) throw new InvalidArgumentError(`expected 1–200 letters, digits, '-' or '_' (it names NATS subjects and streams), got '${value}'`);
    return value;
  });

function episodeOptions(cmd: Command): Command {
  return cmd
    .option("--log <dir>", "episode directory to create (default: runs/<episode>, suffixed if taken)")
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: jsonl beside the log)")
    .option("--snapshot-every <n>", "keep a snapshot every n ticks; 0 keeps only the last (default: every tick up to 64 actors)", integer("--snapshot-every", 0))
    .addOption(new Option("--fsync <policy>", "when the log is made durable: every append, every tick commit, at snapshots only (a crash loses the ticks since, which `run --resume` re-runs), or never forced").choices(["always", "commit", "snapshot", "never"]).default("commit"))
    .option("--no-summary", "skip the readable summary")
    .option("--json", "print a machine-readable result")
    .option("-q, --quiet", "print only where the log and trace went");
}

export function buildProgram(exit: (code: number) => void): Command {
  const program = new Command()
    .name("probetown")
    .version(PROBETOWN_VERSION, "-V, --version", "print probetown's version")
    .description("Event-sourced multi-agent simulation: run, replay, verify, fork and inspect episodes.\nExit codes: 0 ok · 1 verification failed · 2 bad usage/input · 3 damaged log or snapshot · 4 internal error · 5 finished, but the model endpoint refused (key, model, URL), could not be reached or answered every call to a model with an error: its calls fell back to the deterministic backends (the log is complete and valid)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .hook("preAction", (_program, command) => {
      const given = command.opts().nats as string | undefined;
      const nats = given === NATS_URL_FROM_ENV ? natsUrlFromEnv() : given;
      if (nats !== given) command.setOptionValue("nats", nats);
      if (nats !== undefined) checkNatsUrl(nats);
      // A namespace only means something in JetStream: given without --nats it would be ignored.
      if (command.getOptionValueSource("namespace") === "cli" && command.opts().nats === undefined) {
        throw new UsageError(`--namespace ${String(command.opts().namespace)}: a namespace applies with --nats <url> (without it everything stays in files)`);
      }
    });
  const wrap =
    <A extends unknown[]>(fn: (...args: A) => Promise<number> | number) =>
    async (...args: A) =>
      exit(await fn(...args));

  episodeOptions(
    program
      .command("run")
      .description("run an episode on the embedded default (file log, in-process actors) and print where the log went")
      .argument("<world>", `world to run (${Object.keys(worlds).join(", ")})`)
      .requiredOption("--seed <n>", `episode seed (required): ${SEED_RULE}, as in sweep --seeds and eval --seeds`, integer("--seed", 0))
      .option("--condition <name>", "named condition (default: the world's, marked in `probetown worlds`: auratown baseline, aura-scene aura-intent, envprobe envprobe-simple)")
      .option("--ticks <n>", "ticks to run (default: one day)", integer("--ticks", 1))
      .option("--days <n>", "days to run (34 ticks each by default)", integer("--days", 1))
      .option("--agents <n>", "town size: the 5 residents plus generated ones", integer("--agents", 1))
      .option("--config <file|json>", "world config overrides, merged over the defaults: a JSON file, or the object inline: '{\"speed\": 2}' (auratown), '{\"horizon\": 60}' (envprobe)")
      .addOption(natsOption("distributed: log and snapshots in JetStream, actors reachable over NATS (e.g. nats://127.0.0.1:4222)"))
      .addOption(namespaceOption())
      .option("--remote <ids>", "with --nats: actors served by `probetown actor-host` processes (comma-separated ids, or 'all')")
      .option("--resume", "continue an interrupted episode with the same settings (its --log directory, default runs/<episode>, or its JetStream log): restore the latest snapshot the log reaches (one past a cut log's end is kept, not used), check the logged tail, append the rest (with --remote, the actor hosts restore it too)"),
  );
  addLlmOptions(program.commands.at(-1)!).action(wrap(cmdRun));

  episodeOptions(
    program
      .command("fork")
      .description("start a child episode from a parent's state after tick <t>, under a condition")
      .argument("<log>", "parent episode directory (with --nats: the parent's episode id)")
      .addOption(natsOption("the parent's log is in JetStream, and the child's goes there too"))
      .addOption(namespaceOption())
      .requiredOption("--at <tick>", "fork after this committed tick", integer("--at", 0))
      .requiredOption("--condition <name>", "the child's condition")
      .option("--ticks <n>", "total ticks of the child (default: the parent's)", integer("--ticks", 1))
      .option("--reuse-llm", "serve the parent's recorded LLM answers for identical requests (no HTTP); others go to --llm, or fall back"),
  );
  addLlmOptions(program.commands.at(-1)!, { fork: true }).action(wrap(cmdFork));

  program
    .command("verify")
    .description("check the hash chain, replay every actor and recompute every tick's state hash; exit 0 when the log holds")
    .argument("<log>", "episode directory (with --nats: the episode id), or a folder of episodes (a sweep's --log, an eval's --out): every episode below it is verified, on every core")
    .option("--json", "machine-readable report")
    .option("-q, --quiet", "no progress bar (shown on a terminal, for one episode or a folder of them)")
    .addOption(natsOption("verify a log kept in JetStream"))
    .addOption(namespaceOption())
    .action(wrap(cmdVerify));

  program
    .command("actor-host")
    .description("host some actors of an episode in this process, for a sequencer run with --nats --remote; exits when the episode ends (its sequencer releases them, or its last tick is committed; at once for a finished episode), or with exit 2 when its sequencer has gone quiet (--idle-timeout)")
    .argument("<episode>", "episode id (e.g. auratown-s42-baseline)")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(namespaceOption())
    .requiredOption("--actors <ids>", "comma-separated actor ids (e.g. agent/chen-mei,env/auratown) or 'all'")
    .option("--idle-timeout <seconds>", "while serving, stop (exit 2) when the sequencer has asked nothing for this long: it has gone (default 300)", integer("--idle-timeout", 1))
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none; a bare jsonl writes actor-host-<pid>.trace.jsonl in the current directory)")
    .option("-q, --quiet", "print nothing")
    .action(wrap(cmdActorHost));

  program
    .command("worker")
    .description("take jobs from the JetStream work queue and run them: episodes of `sweep <world> --nats` (a redelivered job resumes its partial log) and chunks of `sweep envprobe --nats` (logs to the sweep's --log; an LLM agent's chunks call its endpoint with this process's PROBETOWN_LLM_API_KEY or OPENAI_API_KEY); Ctrl-C stops after the running jobs, saying what it did; a second Ctrl-C stops at once, leaving them to the queue (redelivered after its ack wait, continued from their logs)")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(namespaceOption())
    .option("--concurrency <n>", "episodes run at once by this worker", integer("--concurrency", 1), 1)
    .option("--name <name>", "worker name shown in outcomes")
    // No commander defaults: only a flag actually given changes a namespace that already has a queue or lock bucket.
    .option("--ack-wait <ms>", "a job is redelivered when its worker is silent this long (default: 30000 for a new namespace, else the namespace's; given, it updates the namespace's queue)", integer("--ack-wait", 1000))
    .option("--lock-ttl <ms>", "an episode's writer lock expires this long after its writer died (default: 10000 for a new namespace, else the namespace's; given, it sets the namespace's, higher or lower)", integer("--lock-ttl", MIN_LOCK_TTL_MS))
    .addOption(new Option("--fsync <policy>", "when an episode's log is published: every tick commit, or at snapshots and the end (a redelivered job re-runs the ticks since)").choices(["commit", "snapshot"]).default("snapshot"))
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none; a bare jsonl writes worker-<pid>.trace.jsonl in the current directory): each episode continues its job's trace (a traced sweep's), an EnvProbe chunk is a span with one per episode")
    .option("--notes-only", "print only what concerns a job's log: what a redelivered job's resume cut or passed over, and waits for another writer's lock (not the jobs taken and done; a sweep's local workers run so)")
    .option("-q, --quiet", "print nothing but what a redelivered job's resume cut or passed over, as run --resume -q")
    .action(wrap(cmdWorker));

  program
    .command("follow")
    .description("print an episode's JetStream log live: the records already written, then each new one as it is appended; stops after its last tick is committed (Ctrl-C stops earlier)")
    .argument("<episode>", "episode id (e.g. auratown-s42-baseline); it may not have started yet")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(namespaceOption())
    .option("--from-seq <n>", "start at this record seq (default: the first)", integer("--from-seq", 0))
    .option("--json", "one record per line as JSON (the log's records, meta included)")
    .option("-q, --quiet", "no status lines on stderr")
    .action(wrap(cmdFollow));

  program
    .command("sweep")
    .description("run a matrix of episodes (seeds × conditions): in this process, or queued for workers with --nats; prints a summary")
    .argument("<world>", `world to run (${Object.keys(worlds).join(", ")})`)
    .requiredOption("--seeds <list>", `seeds: ranges and lists like 1-200 or 1,5,9 (each ${SEED_RULE}, as run --seed)`)
    .option("--conditions <list>", "comma-separated conditions (default: the world's, see `probetown worlds`)")
    .option("--ticks <n>", "ticks per episode (default: one day)", integer("--ticks", 1))
    .option("--config <file|json>", "world config overrides: a JSON file, or the object inline")
    .option("--snapshot-every <n>", "keep a snapshot every n ticks; 0 keeps only the last (default: every tick up to 64 actors, as run; a resumed job restarts from the latest)", integer("--snapshot-every", 0))
    .addOption(natsOption("queue the episodes in JetStream for `probetown worker` processes (envprobe too: chunks of seeds per job; logs go to --log on a filesystem the workers share)"))
    .addOption(namespaceOption())
    .option("--workers <n>", "with --nats: start n local worker processes for this sweep (0: use workers started elsewhere); envprobe without --nats: worker threads (0: every core), or with an LLM agent episodes at a time (0: 4; the gateway's concurrency caps the calls in flight)", integer("--workers", 0), 0)
    .option("--held-out <list>", "envprobe: the paper's disjoint held-out seeds for the low and high regimes (medium keeps --seeds), e.g. --seeds 0-219 --held-out 1000-1219")
    .option("--chunk <n>", `envprobe with --nats: seeds of one (world, regime, policy) cell per job (default ${DEFAULT_CHUNK})`, integer("--chunk", 1))
    .option("--out <file>", "write every outcome as JSON")
    .option("--json", "print the outcomes as JSON")
    .option("-q, --quiet", "print only the summary, and what an episode's resume cut or passed over (as run --resume -q)")
    .option("--worlds <list>", "envprobe: objectstate,tooldag,graphnav (default: all)")
    .option("--regimes <list>", "envprobe: low,medium,high or the release's S1,S2,S3 (default: low,medium,high)")
    .option("--policies <list>", "envprobe: probing policies (default: the paper's grid; see `worlds`)")
    .option("--horizon <n>", "envprobe: override the regime's horizon H", integer("--horizon", 1, MAX_HORIZON, " (the paper's horizons are 20, 30 and 40)"))
    .option("--log <dir>", "where the episodes go: <dir>/<episode id> (default runs/<episode id>; an existing one of the same episode is resumed, or kept when finished); envprobe: keep every episode's log under this directory (default: not kept)")
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none): a span per job, whose trace its episode continues (one trace per episode; workers started by --workers trace alike); a bare jsonl writes each episode's trace beside its log, without job spans; envprobe: with --nats only");
  addLlmOptions(program.commands.at(-1)!)
    .action(wrap((world: string, flags: Parameters<typeof cmdSweep>[1] & EnvprobeSweepFlags & { config?: string }) => {
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
      return cmdSweep(world, { ...flags, ...(config === undefined ? {} : { config }) });
    }));

  program
    .command("report-envprobe")
    .description("EnvProbe paired report (Tables 1/2 layouts, paired bootstrap, McNemar, Bonferroni, Pareto SVG, confident-wrong audit) from a sweep's --log directory or --out metrics file")
    .argument("<source>", "a `sweep envprobe --log` directory, or its `--out` metrics JSON")
    .requiredOption("--out <dir>", "directory for report.md, report.json and the SVG")
    .option("--bootstrap <n>", "paired bootstrap resamples per comparison", integer("--bootstrap", 100), 10_000)
    .option("--seed <n>", "bootstrap seed (a named RNG stream per comparison)", integer("--seed", 0), 0)
    .option("--title <text>", "report title")
    .option("--json", "print where the files went as JSON")
    .action(wrap(cmdEnvprobeReport));

  program
    .command("replay")
    .description("rebuild an episode's state from its log (no model calls) and print its state hash")
    .argument("<log>", "episode directory (with --nats: the episode id)")
    .option("--to-tick <t>", "stop after this tick", integer("--to-tick", 0))
    .option("--state", "print every actor's state at that tick")
    .option("--agent <id>", "with --state: only this actor's state (id like lin-wei, or name)")
    .option("--snapshot", "keep a snapshot of that tick in the episode's snapshots/, or with --nats in its JetStream snapshot store (any committed tick)")
    .option("--json", "machine-readable result")
    .addOption(natsOption("replay a log kept in JetStream"))
    .addOption(namespaceOption())
    .action(wrap(cmdReplay));

  program
    .command("inspect")
    .description("readable timeline: who did what where, and each agent's private state and beliefs by tick")
    .argument("<log>", "episode directory (with --nats: the episode id)")
    .option("--from <tick>", "first tick to show", integer("--from", 0))
    .option("--to <tick>", "last tick to show", integer("--to", 0))
    .option("--agent <id>", "only this agent (id like lin-wei, or name)")
    .option("--all", `every agent's events, state and beliefs by tick, also in a town of more than ${DETAILED_TOWN_ACTORS} actors (summarised per tick without it)`)
    .option("--json", "per-tick state as JSON")
    .addOption(natsOption("inspect a log kept in JetStream"))
    .addOption(namespaceOption())
    .action(wrap(cmdInspect));

  program
    .command("diff")
    .description("what differs between two episodes of one world (a fork and its parent, two forks, two runs), from their logs alone: the first differing record, record counts by type, and whose state differs from which tick, over the ticks both hold")
    .argument("<a>", "episode directory (with --nats: the episode id)")
    .argument("<b>", "episode directory (with --nats: the episode id)")
    .option("--exit-code", "exit 1 when the two differ over the ticks both hold (or hold none in common), 0 when identical")
    .option("--json", "machine-readable result")
    .addOption(natsOption("compare logs kept in JetStream (both in --namespace)"))
    .addOption(namespaceOption())
    .action(wrap(cmdDiff));

  program
    .command("repair")
    .description("cut a torn final record (a crash mid-write) back to the last good record; the cut bytes are kept beside the log")
    .argument("<log>", "episode directory")
    .action(wrap(cmdRepair));

  program
    .command("report")
    .description("write the experiment report (markdown, JSON, SVG charts) from a results JSONL file; no episode is rerun")
    .argument("<results>", "results JSONL, one row per query × seed × condition (schema: services/results.ts)")
    .requiredOption("--out <dir>", "directory for report.md, report.json and the charts")
    .option("--reference <condition>", "condition the others are compared with (default: the first in the file); comma-separate one per benchmark")
    .addOption(new Option("--metric <name>", "score used for comparisons, blocks and charts (default: the first the rows have of implicit, accuracy, correct, literal, recall; privacy rows: recall)").choices([...REPORT_METRICS]))
    .option("--bootstrap <n>", "bootstrap resamples", integer("--bootstrap", 100), 5000)
    .option("--seed <n>", "bootstrap seed (a named RNG stream per comparison)", integer("--seed", 0), 0)
    .option("--title <text>", "report title")
    .option("--json", "print where the files went as JSON")
    .action(wrap(cmdReport));

  registerEval(program, exit);
  registerExperiment(program, exit);
  registerAsk(program, exit);
  registerFidelity(program, exit);

  program.command("worlds").description("list worlds and their conditions").action(wrap(cmdWorlds));
  // Commander marks no option as required in the help: `report --help` showed --out like any other.
  const markRequired = (command: Command): void => {
    for (const option of command.options) if (option.mandatory && !option.description.includes("(required)")) option.description += " (required)";
    command.commands.forEach(markRequired);
  };
  markRequired(program);
  addHelpExamples(program);
  return program;
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof Divergence) return EXIT.diverged;
  if (error instanceof LocalWorkersGone) return error.internal ? EXIT.internal : EXIT.usage;
  if (isDamage(error)) return EXIT.damaged;
  // A lost actor host is the NATS side's trouble, not the program's: the log is kept for a resume.
  if (error instanceof UsageError || error instanceof InvalidSubjectToken || error instanceof SequenceConflict || error instanceof WriterLocked || error instanceof EpisodeExists || error instanceof NatsUnavailable || error instanceof ActorHostLost) return EXIT.usage;
  if (error instanceof Error && /^(unknown (world|condition)|invalid [\w-]+ config|--)/.test(error.message)) return EXIT.usage;
  // A full or failing disk is the machine's trouble, not the program's; what was logged is kept.
  if (isPathError(error) || isStorageError(error)) return EXIT.usage;
  return EXIT.internal;
}

export async function main(argv: string[]): Promise<void> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const e = error as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === "string" && e.code.startsWith("commander.")) {
      code = e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help" ? EXIT.ok : EXIT.usage;
    } else {
      code = exitCodeFor(error);
      const label = error instanceof SnapshotDamaged ? "damaged snapshot" : code === EXIT.damaged ? "damaged log" : code === EXIT.diverged ? "divergence" : "error";
      process.stderr.write(`probetown: ${label}: ${(error as Error).message}\n`);
      if (error instanceof Divergence) for (const line of error.details) process.stderr.write(`  ${line}\n`);
      // A torn tail is what a crash mid-write leaves: say how to get past it (commands that read a log refuse it as it is).
      if (error instanceof TornTail && error.file.endsWith(".jsonl")) {
        const dir = shownPath(resolve(error.file, "..", ".."));
        const fork = peekLog(resolve(error.file, "..")).first?.type === "episode.forked";
        process.stderr.write(`  \`probetown repair ${dir}\` cuts the log back to its last good record (the cut bytes are kept beside it)${fork ? "" : `; \`probetown run … --log ${dir} --resume\` continues the episode`}\n`);
      }
      if (code === EXIT.internal && process.env.PROBETOWN_DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
    }
  }
  process.exitCode = code;
}

// A reader that stops early (`probetown inspect … | head`) closes the pipe: stop quietly, as Unix
// tools do, instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT.ok);
  });
}

// Run as the CLI (`node services/cli/main.ts`; bin/probetown.js calls main itself), not when imported
// for buildProgram (services/cli/reference.ts renders docs/cli.md from it).
if (import.meta.main) await main(process.argv);
