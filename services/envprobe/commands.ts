// `probetown sweep envprobe …`: the EnvProbe grid embedded on all cores (services/envprobe/sweep.ts),
// or with --nats queued for `probetown worker` processes (services/envprobe/natsSweep.ts).
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { LogRecord } from "../../events/record.ts";
import { scanLog } from "../../infra/fileEventStore.ts";
import cliProgress from "cli-progress";
import { episodeCount, HELD_OUT_REGIMES, isSameSweepLog, MARKER, missingFromSweepLog, renderCells, runSweep, seedsLabel, sweepBeliefModel, sweepKeyOf, sweepSpecOf, type SweepResult } from "./sweep.ts";
import { DEFAULT_CHUNK, runSweepOverNats, type NatsSweepResult } from "./natsSweep.ts";
import { JETSTREAM_LOG_STORE, sweepLogName } from "./jetStreamLogs.ts";
import { DEFAULT_NAMESPACE } from "../distributed/episodes.ts";
import { natsFlagHint, shownNatsUrl } from "../../infra/nats.ts";
import { sweepRate } from "../cli/distributed.ts";
import { checkOutDir, checkOutFile } from "../cli/outputs.ts";
import { loadEpisodes, writeReport } from "./report.ts";
import { EpisodeAccumulator } from "./metrics.ts";
import { UsageError } from "../kernel/replay.ts";
import { explicitLogDir } from "../kernel/episodes.ts";
import { parseTraceFlag, type TelemetryConfig } from "../../infra/telemetry.ts";
import { endpointExit, oneRoleLlm, type LlmCliFlags } from "../cli/llm.ts";
import { plural } from "../views/text.ts";

export interface EnvprobeSweepFlags extends LlmCliFlags {
  readonly worlds?: string;
  readonly regimes?: string;
  readonly policies?: string;
  readonly conditions?: string;
  readonly seeds: string;
  readonly heldOut?: string;
  readonly log?: string;
  readonly workers?: number;
  readonly horizon?: number;
  readonly config?: unknown;
  /** With --log: the logs' format (1, or 2: compact, the default). */
  readonly logFormat?: number;
  /** Where the logs are kept: files (under --log) or, with --nats, jetstream (the namespace's log-object bucket). */
  readonly logStore?: "files" | "jetstream";
  readonly out?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
  /** Queue the grid on this NATS server's JetStream work queue instead of running it here. */
  readonly nats?: string;
  readonly namespace?: string;
  /** With --nats: seeds of one cell per job. */
  readonly chunk?: number;
  /** With --nats: a span per job, continued by the workers' chunk and episode spans. */
  readonly trace?: string;
}

export async function cmdEnvprobeSweep(flags: EnvprobeSweepFlags & { readonly ticks?: number; readonly snapshotEvery?: number }): Promise<number> {
  if (flags.ticks !== undefined) throw new UsageError("sweep envprobe: use --horizon (ticks are the regime's horizon H)");
  if (flags.snapshotEvery !== undefined) throw new UsageError("sweep envprobe keeps logs only (no snapshots): --snapshot-every does not apply");
  // --conditions is the generic spelling of --policies.
  if (flags.policies !== undefined && flags.conditions !== undefined) throw new UsageError("--conditions and --policies name the same thing for envprobe (its conditions are policies): give one of them");
  const policies = flags.policies ?? flags.conditions;
  const nats = flags.nats;
  checkOutFile(flags.out);
  if (flags.log !== undefined) {
    // As `sweep <world> --log`: a folder inside another episode's log or snapshot folder mixed this sweep's logs into that episode's.
    checkOutDir(flags.log, `--log ${flags.log}`, "the episodes' logs");
    explicitLogDir(flags.log);
  }
  if (flags.chunk !== undefined && nats === undefined) throw new UsageError("--chunk: seeds per job apply to a sweep queued with --nats");
  const inJetStream = flags.logStore === JETSTREAM_LOG_STORE;
  if (inJetStream && nats === undefined) throw new UsageError("--log-store jetstream: the logs go to the JetStream of the sweep's NATS server, and there is none: give --nats <url> (the workers' server), or keep the logs in a directory with --log <dir>");
  if (inJetStream && flags.log !== undefined) throw new UsageError(`--log-store jetstream keeps the logs in JetStream, not under --log ${flags.log}: give one of them`);
  const trace = envprobeSweepTrace(flags.trace, nats !== undefined);
  // The LLM agent (role `belief`): its model goes into every episode's config, one gateway answers them all.
  const agent = oneRoleLlm(flags.config, flags, "sweep envprobe", "belief");
  if (inJetStream && agent !== null) throw new UsageError("--log-store jetstream: an LLM agent's grid runs its episodes through the sequencer, whose logs its workers keep under --log <dir> (a shared filesystem); JetStream log objects are for the scripted agents' grids");
  // The whole spec is checked before anything is enqueued (or NATS is even contacted). A sweep may
  // be run again into its own --log directory: it keeps the episodes whose logs are finished and runs
  // the rest, and an LLM agent's resume (their logged answers are not asked for again).
  const { logStore: _store, ...rest } = flags;
  const spec = sweepSpecOf({ ...rest, ...(inJetStream ? { logStore: JETSTREAM_LOG_STORE } : {}), ...(policies === undefined ? {} : { policies }), ...(agent === null ? {} : { config: agent.config }) }, isSameSweepLog);
  const model = sweepBeliefModel(spec);
  const total = episodeCount(spec);
  const bar = !flags.json && !flags.quiet && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: "envprobe sweep [{bar}] {value}/{total} episodes{kept} · {eta_formatted} left", stream: process.stderr, hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
    : null;
  let result: SweepResult | NatsSweepResult;
  if (nats === undefined) {
    bar?.start(total, 0, { kept: "" });
    // The main thread only collects results here, so a Ctrl-C is seen at once: say where the sweep stands.
    let finished = 0;
    const onSignal = (signal: NodeJS.Signals): void => {
      bar?.stop();
      process.stderr.write(`sweep envprobe: interrupted after ${finished} of ${total} episodes; the same command runs the sweep again${spec.log === undefined ? "" : ` into ${spec.log}, keeping every episode whose log is finished and running the rest (one cut short by the interrupt too)`}\n`);
      process.exit(signal === "SIGINT" ? 130 : 143);
    };
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    try {
      result = await runSweep(
        spec,
        (done, _total, kept) => {
          finished = done;
          bar?.update(done, { kept: keptLabel(kept) });
        },
        agent?.gateway.responder,
      );
    } finally {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    }
  } else {
    const namespace = flags.namespace ?? DEFAULT_NAMESPACE;
    const workers = flags.workers ?? 0;
    result = await runSweepOverNats(spec, {
      url: nats, namespace, workers, chunk: flags.chunk ?? DEFAULT_CHUNK, quiet: flags.quiet === true || flags.json === true, ...(agent === null ? {} : { llm: agent.settings }),
      ...(trace === null ? {} : { trace, onTraceUndelivered: (lost) => process.stderr.write(`sweep envprobe: warning: ${lost.spans} trace spans of its jobs could not be delivered (${lost.error}); the metrics are complete, the trace is not\n`) }),
      onQueued: (jobs) => {
        if (!flags.json && !flags.quiet && workers === 0) process.stderr.write(`sweep envprobe: ${total} episodes queued as ${jobs} jobs in namespace ${namespace}; start workers with \`probetown worker ${natsFlagHint(nats).flag} --namespace ${namespace}\`${natsFlagHint(nats).after}\n`);
        bar?.start(total, 0, { kept: "" });
      },
    }, (done, _total, kept) => bar?.update(done, { kept: keptLabel(kept) }));
  }
  bar?.stop();
  // Over NATS the workers called the model (with their own key) and reported their usage per job.
  const usage = "jobs" in result ? result.llm : agent?.gateway.accounting().total;
  const seeds = seedsLabel(spec.seeds);
  // A resubmitted NATS sweep's finished jobs are their recorded outcomes, read back, and kept
  // episodes are their finished logs, read back: neither is in the rate.
  const served = "jobs" in result ? result.alreadyFinished : 0;
  const ranNow = result.episodes.length - served - result.kept;
  const summary = {
    worlds: spec.worlds, regimes: spec.regimes, policies: spec.policies, seeds, seedCount: spec.seeds.length,
    ...(spec.heldOut === undefined ? {} : { heldOut: { seeds: seedsLabel(spec.heldOut), seedCount: spec.heldOut.length, regimes: spec.regimes.filter((r) => HELD_OUT_REGIMES.includes(r)) } }),
    episodes: result.episodes.length, kept: result.kept, ran: ranNow, seconds: result.seconds, episodesPerSecond: ranNow / result.seconds,
    workers: result.workers, log: result.log,
    ...("jobs" in result ? { nats: { url: shownNatsUrl(nats ?? ""), namespace: flags.namespace ?? DEFAULT_NAMESPACE, jobs: result.jobs, chunk: result.chunk, redelivered: result.redelivered, alreadyFinished: result.alreadyFinished } } : {}),
    cells: result.cells,
    ...(model === null ? {} : { agent: `llm:${model}`, llm: usage ?? null }),
  };
  if (flags.out !== undefined) writeFileSync(flags.out, JSON.stringify({ ...summary, episodeMetrics: result.episodes }) + "\n");
  if (flags.json) process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  else {
    if (!flags.quiet) process.stdout.write(renderCells(result.cells) + "\n\n");
    const how = "jobs" in result
      ? `over NATS: ${result.jobs} jobs of up to ${result.chunk} episodes, ${plural(result.workers, "local worker process", "local worker processes")}${result.redelivered.length > 0 ? `, ${result.redelivered.length} jobs redelivered` : ""}`
      : model === null ? plural(result.workers, "worker thread", "worker threads") : plural(result.workers, "episode at a time", "episodes at a time");
    const sweepName = inJetStream && nats !== undefined ? sweepLogName(spec.config ?? {}) : null;
    const where = result.log === null
      ? "; logs not kept (use --log <dir>)"
      : sweepName === null
        ? `; logs in ${result.log}`
        : `; logs in ${result.log} (\`probetown verify ${natsFlagHint(nats!).flag} --namespace ${flags.namespace ?? DEFAULT_NAMESPACE} ${sweepName}\` checks them, \`probetown export-logs … ${sweepName} --out <dir>\` writes them to files)`;
    if (result.kept === 0) process.stdout.write(`${result.episodes.length} episodes in ${result.seconds.toFixed(1)} s (${sweepRate(result.episodes.length, served, result.seconds, 0)}, ${how})${where}\n`);
    else {
      // A sweep run again into its --log: what it kept, what it ran, and the rate of the latter only.
      const rate = ranNow === 0 ? how : `${(ranNow / result.seconds).toFixed(0)} episodes/s, ${how}`;
      process.stdout.write(`${result.episodes.length} episodes in ${result.seconds.toFixed(1)} s: ${served > 0 ? `${served} already finished (recorded outcomes), ` : ""}${result.kept} kept (their logs finished by an earlier run), ${ranNow} run now (${rate})${where}\n`);
    }
    if (model !== null) {
      process.stdout.write(
        usage === undefined
          ? `agent llm:${model} with no endpoint: every step fell back to the scripted update (logged)\n`
          : `agent llm:${model}: ${usage.calls} belief calls, ${usage.failed} fell back to the scripted update, ${usage.httpRequests} HTTP requests, ${usage.promptTokens} + ${usage.completionTokens} tokens${usage.costUsd > 0 ? `, $${usage.costUsd}` : ""}\n`,
      );
    }
    if (flags.out !== undefined) process.stdout.write(`metrics: ${flags.out}\n`);
  }
  if (agent === null || usage === undefined) return 0;
  // Over NATS the workers met the endpoint, with the key from their own environment.
  const problems = "jobs" in result ? (result.endpointProblems ?? []) : agent.gateway.problems();
  return endpointExit("sweep envprobe", problems, {
    baseURL: agent.baseURL, calls: usage.calls, failed: usage.failed, logsAre: result.log === null ? "the metrics are" : "the logs are",
    modelFrom: "--model belief=…", ...("jobs" in result ? { keyFrom: "PROBETOWN_LLM_API_KEY or OPENAI_API_KEY in the workers' environment" } : {}),
  });
}

/**
 * `sweep envprobe --trace`: over NATS, a span per job (continued by the workers' chunk and episode
 * spans). The embedded grid runs on worker threads through the direct driver, which has no
 * telemetry (about 7 ms an episode): tracing it is refused rather than silently ignored.
 */
function envprobeSweepTrace(flag: string | undefined, overNats: boolean): TelemetryConfig | null {
  if (flag === undefined) return null;
  const config = parseTraceFlag(flag, "");
  if (config.exporter === "none") return null;
  if (!overNats) throw new UsageError("--trace: the embedded `sweep envprobe` runs its episodes on worker threads without telemetry; trace the grid over NATS (--nats <url> --workers <n> --trace …), or one episode with `run envprobe --trace …`");
  if (config.exporter === "jsonl" && config.file === "") throw new UsageError("--trace jsonl: a sweep over NATS has no directory to put its trace beside; name the file: --trace jsonl:<file>");
  return config;
}

/** The progress bar's note of episodes kept from an earlier run (none: nothing shown). */
const keptLabel = (kept: number): string => (kept === 0 ? "" : ` (${kept} kept)`);

export interface EnvprobeReportFlags {
  readonly out: string;
  readonly bootstrap: number;
  readonly seed: number;
  readonly title?: string;
  readonly json?: boolean;
}

/** `probetown report-envprobe <logs|metrics.json> --out <dir>`: the paired report, from logs. */
export async function cmdEnvprobeReport(source: string, flags: EnvprobeReportFlags): Promise<number> {
  checkOutDir(flags.out, `--out ${flags.out}`, "the report");
  const started = performance.now();
  const episodes = await loadEpisodes(source);
  const loaded = (performance.now() - started) / 1000;
  // An interrupted sweep's folder: the report would quietly cover only what finished.
  const sweep = statSync(source).isDirectory() ? missingFromSweepLog(source, new Set(episodes.map(sweepKeyOf))) : null;
  if (sweep !== null && sweep.missing.length > 0) {
    process.stderr.write(
      `report-envprobe: ${source} holds ${sweep.expected - sweep.missing.length} of the ${sweep.expected} episodes its sweep asked for (${MARKER}): ${sweep.missing.length} missing (first: ${sweep.missing.slice(0, 3).join(", ")}${sweep.missing.length > 3 ? ", …" : ""}); ` +
        "the report covers the episodes present; run the same `sweep envprobe` command again to finish the sweep\n",
    );
  }
  const report = writeReport(episodes, flags.out, { iterations: flags.bootstrap, seed: flags.seed, ...(flags.title === undefined ? {} : { title: flags.title }) });
  const seconds = (performance.now() - started) / 1000;
  if (flags.json) process.stdout.write(JSON.stringify({ out: flags.out, files: report.files, episodes: report.episodes, ...(sweep === null ? {} : { sweepEpisodes: sweep.expected, missing: sweep.missing }), seconds, loadSeconds: loaded }, null, 2) + "\n");
  else process.stdout.write(`${report.episodes} episodes read in ${loaded.toFixed(1)} s; report in ${seconds.toFixed(1)} s: ${report.files.map((f) => join(flags.out, f)).join(", ")}\n`);
  if (report.unpaired.groups > 0) process.stderr.write(`report-envprobe: incomplete grid: ${report.unpaired.groups} (world, regime, seed) ${report.unpaired.groups === 1 ? "group lacks" : "groups lack"} some policy (${report.unpaired.examples.join("; ")}${report.unpaired.groups > 3 ? "; …" : ""}); their seeds drop out of those pairs\n`);
  return 0;
}
