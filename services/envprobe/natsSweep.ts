// `probetown sweep envprobe … --nats <url>`: the same grid as the embedded sweep, queued as jobs on
// the JetStream work queue (infra/jetStreamJobQueue.ts) and run by `probetown worker` processes.
//
// A job is a chunk of one cell's seeds (world, regime, policy; up to `chunk` seeds, 64 by default:
// ~130 ms of work against a few ms of queue round trips). Its id names the cell and the seed range
// and ends with a hash of everything the job does (cell, exact seeds, config overrides, log
// directory), so resubmitting a sweep enqueues nothing twice and a finished job returns its
// recorded outcome. A worker runs a job's episodes one after another through the direct driver,
// exactly as the embedded sweep's threads do, writing each log to `<log>/<world>-<regime>/<policy>/
// s<seed>/log` when the sweep has `--log` (a directory every worker can reach: a shared filesystem)
// and returning every episode's metrics as the job's outcome. A worker killed mid-job leaves some of
// the job's logs written; the redelivered job keeps every one that is complete and intact
// (services/envprobe/keep.ts, as the embedded sweep does) and runs the rest, replacing a partial
// log whole, so the logs and the metrics end as an uninterrupted run's. The same holds for the
// sweep resubmitted in a fresh namespace into the same --log. With `--log-store jetstream` there is
// no directory: each log is an object in the namespace's log-object bucket, put once its episode is
// complete, kept alike on redelivery (services/envprobe/jetStreamLogs.ts).
import { Schema } from "effect";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { canonicalJson, sha256Hex } from "../../events/canonical.ts";
import { JetStreamJobQueue } from "../../infra/jetStreamJobQueue.ts";
import { JobRejected, type Job, type JobContext, type JobOutcome } from "../../infra/jobQueue.ts";
import { SpanKind, SpanStatusCode, context as otelContext, trace, type Tracer } from "@opentelemetry/api";
import { contextOfTraceparent, type TelemetryConfig } from "../../infra/telemetry.ts";
import { jobSpans, workerTrace } from "../distributed/jobTracing.ts";
import { LocalWorkersGone, spawnWorkers, watchWorkers, withNats } from "../distributed/episodes.ts";
import { natsFlagHint } from "../../infra/nats.ts";
import { keepOrRun } from "./keep.ts";
import { JETSTREAM_LOG_STORE, JetStreamKeeper, sweepLogName } from "./jetStreamLogs.ts";
import { LogObjects } from "../../infra/jetStreamLogObjects.ts";
import { cellsOf, type EpisodeMetrics } from "./metrics.ts";
import { inGridOrder, markSweepLog, runEpisodesThroughSequencer, seedsOf, type SweepResult, type SweepSpec } from "./sweep.ts";
import { makeLlmGateway, mergeProblems, resolveLlmConfig, sumTotals, type EndpointProblem, type UsageTotals } from "../llm/index.ts";
import type { Kind } from "../../actors/envprobe/kinds/index.ts";
import type { Policy } from "../../actors/envprobe/config.ts";
import { DEFAULT_CHUNK } from "./chunk.ts";
import { InternalError } from "../../events/internalError.ts";
import { SweepProgressWriter } from "../kernel/sweepProgressFile.ts";
import { messageOf } from "../../events/errorMessage.ts";

export { DEFAULT_CHUNK };

/** What a job carries: one cell and some of its seeds; `log` is the sweep's absolute --log or null. */
export const EnvprobeChunkSpec = Schema.Struct({
  kind: Schema.Literal("envprobe"),
  world: Schema.String,
  regime: Schema.String,
  policy: Schema.String,
  seeds: Schema.Array(Schema.Int),
  config: Schema.Record(Schema.String, Schema.Unknown),
  log: Schema.NullOr(Schema.String),
  /** `--log-format 1` (absent: the default, compact), so a default job's id is what it was before formats. */
  logFormat: Schema.optionalKey(Schema.Literals([1, 2])),
  /**
   * `--log-store jetstream`: the logs go to the namespace's log-object bucket below this sweep name
   * (services/envprobe/jetStreamLogs.ts), not to a directory (`log` is null).
   */
  logObjects: Schema.optionalKey(Schema.String),
  /** An LLM agent's grid: the endpoint settings without the key (the worker's environment has it). */
  llm: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
});
export type EnvprobeChunkSpec = typeof EnvprobeChunkSpec.Type;

const decodeChunk = Schema.decodeUnknownSync(EnvprobeChunkSpec);

/** A job's outcome: the metrics of each of its episodes, in seed order. */
export interface EnvprobeChunkResult {
  readonly episodes: readonly EpisodeMetrics[];
  /** Of those, episodes whose log in the sweep's --log was already finished: kept, not run (absent in outcomes recorded before this was counted). */
  readonly kept?: number;
  /** An LLM agent's chunk: the model calls this worker made for it. */
  readonly llm?: UsageTotals;
  /** An LLM agent's chunk: why its calls fell back for the configuration's sake (a refused key, model or URL; an unreachable endpoint). */
  readonly endpointProblems?: readonly EndpointProblem[];
}

/** One or more jobs of a NATS sweep ended without an outcome (each failed `maxAttempts` times). */
export class EnvprobeSweepFailed extends TaggedError {
  readonly _tag = "EnvprobeSweepFailed";
  readonly failures: ReadonlyArray<{ readonly id: string; readonly attempt: number; readonly error: string }>;
  readonly jobs: number;
  constructor(fields: { readonly failures: ReadonlyArray<{ readonly id: string; readonly attempt: number; readonly error: string }>; readonly jobs: number }) {
    const shown = fields.failures.slice(0, 5).map((f) => `${f.id} after ${f.attempt} attempts: ${f.error}`);
    super(`sweep envprobe over NATS: ${fields.failures.length} of ${fields.jobs} jobs failed, so no metrics were written (${shown.join("; ")}${fields.failures.length > 5 ? "; …" : ""})`);
    this.failures = fields.failures;
    this.jobs = fields.jobs;
  }
  get exitCode(): 4 {
    return ExitCode.internal;
  }
}

export { isEnvprobeJob } from "./jobKind.ts";

/** The sweep's jobs: chunks of each cell's seeds, chunk-major so that workers share every cell. */
export function envprobeJobsOf(spec: SweepSpec, chunk = DEFAULT_CHUNK, llm?: Readonly<Record<string, unknown>>): Job<EnvprobeChunkSpec>[] {
  const size = Math.max(1, Math.floor(chunk));
  const jobs: Job<EnvprobeChunkSpec>[] = [];
  const longest = Math.max(...spec.regimes.map((regime) => seedsOf(spec, regime).length));
  for (let from = 0; from < longest; from += size) {
    for (const world of spec.worlds) {
      for (const regime of spec.regimes) {
        const seeds = seedsOf(spec, regime).slice(from, from + size);
        if (seeds.length === 0) continue;
        for (const policy of spec.policies) {
          const job: EnvprobeChunkSpec = { kind: "envprobe", world, regime, policy, seeds, config: { ...(spec.config ?? {}) }, log: spec.log ?? null, ...(spec.logFormat === undefined || spec.logFormat === 2 ? {} : { logFormat: spec.logFormat }), ...(spec.logStore === JETSTREAM_LOG_STORE ? { logObjects: sweepLogName(spec.config ?? {}) } : {}), ...(llm === undefined ? {} : { llm: { ...llm } }) };
          const hash = sha256Hex(canonicalJson(job)).slice(0, 12);
          jobs.push({ id: `envprobe-${world}-${regime}-${policy}-s${seeds[0]}-${seeds.at(-1)}-${hash}`, spec: job });
        }
      }
    }
  }
  return jobs;
}

/** What a worker runs jobs over: its connection and namespace (a chunk keeping its logs in JetStream needs them). */
export interface JobNats {
  readonly nc: NatsConnection;
  readonly namespace: string;
}

/** The namespace's log-object bucket, opened once per connection and namespace (created when missing). */
const openedObjects = new WeakMap<NatsConnection, Map<string, Promise<LogObjects>>>();
function logObjectsOf(nats: JobNats): Promise<LogObjects> {
  let byNamespace = openedObjects.get(nats.nc);
  if (byNamespace === undefined) openedObjects.set(nats.nc, (byNamespace = new Map()));
  let opening = byNamespace.get(nats.namespace);
  if (opening === undefined) {
    opening = LogObjects.open(nats.nc, nats.namespace, true).then((o) => o!);
    const attempt = opening;
    byNamespace.set(nats.namespace, attempt);
    attempt.catch(() => byNamespace.delete(nats.namespace));
  }
  return opening;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs one chunk job (a worker's handler for EnvProbe jobs). Between episodes it yields to the
 * event loop, so the queue's heartbeat keeps the job while a long chunk runs. With a tracer (a
 * traced worker) the chunk is a span, continuing the trace of the job's traceparent (a traced
 * sweep's job span), with a span per episode under it that names its outcome.
 */
export async function runEnvprobeChunk(job: Job, _context?: JobContext, tracer?: Tracer, nats?: JobNats): Promise<EnvprobeChunkResult> {
  const spec = decodeChunk(job.spec);
  const logObjects = spec.logObjects;
  if (logObjects !== undefined && (nats === undefined || spec.llm !== undefined)) throw new JobRejected(`job ${job.id}: its logs go to JetStream (--log-store jetstream), ${nats === undefined ? "and this runner has no NATS connection" : "which an LLM agent's grid does not do"}`);
  const cell = { "probetown.world": "envprobe", "probetown.envprobe.world": spec.world, "probetown.envprobe.regime": spec.regime, "probetown.condition": spec.policy };
  const chunkSpan = tracer?.startSpan(`envprobe chunk ${job.id}`, { kind: SpanKind.CONSUMER, attributes: { ...cell, "probetown.job.id": job.id, "probetown.envprobe.seeds": spec.seeds.length } }, contextOfTraceparent(job.traceparent));
  try {
    if (spec.llm !== undefined) return await runLlmChunk(job.id, spec, spec.llm);
    const inChunk = chunkSpan === undefined ? otelContext.active() : trace.setSpan(otelContext.active(), chunkSpan);
    const episodes: EpisodeMetrics[] = [];
    let kept = 0;
    const cellJobs = spec.seeds.map((seed) => ({ world: spec.world as Kind, regime: spec.regime, policy: spec.policy as Policy, seed }));
    const keeper = logObjects === undefined ? null : await JetStreamKeeper.open(await logObjectsOf(nats!), logObjects, cellJobs, spec.config, spec.logFormat);
    for (const seed of spec.seeds) {
      const span = tracer?.startSpan(`envprobe episode ${spec.world}-${spec.regime}-${spec.policy}-s${seed}`, { attributes: { ...cell, "probetown.seed": seed } }, inChunk);
      // As on the embedded sweep's threads: a log this sweep already finished is kept, the rest run.
      const j = { world: spec.world as Kind, regime: spec.regime, policy: spec.policy as Policy, seed };
      const r = keeper === null ? keepOrRun(j, spec.log, spec.config, spec.logFormat) : await keeper.keepOrRun(j);
      span?.setAttributes({
        "probetown.envprobe.kept": r.kept, "probetown.envprobe.success": r.metrics.success, "probetown.envprobe.steps": r.metrics.steps,
        "probetown.envprobe.accuracy": r.metrics.accuracy, "probetown.envprobe.probes": r.metrics.probes, "probetown.envprobe.useful": r.metrics.useful,
      });
      span?.end();
      episodes.push(r.metrics);
      if (r.kept) kept++;
      await nextTurn();
    }
    // The outcome only once every log is stored: a job acknowledged is a job whose logs are there.
    await keeper?.flush();
    chunkSpan?.setAttribute("probetown.envprobe.kept", kept);
    return { episodes, kept };
  } catch (error) {
    chunkSpan?.recordException(error as Error);
    chunkSpan?.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
    throw error;
  } finally {
    chunkSpan?.end();
  }
}

/**
 * An LLM agent's chunk: its episodes through the sequencer, answered by a gateway to the job's
 * endpoint with this worker's API key (PROBETOWN_LLM_API_KEY / OPENAI_API_KEY), `concurrency` at once.
 * A redelivered chunk resumes the logs its first run left, so the answers it paid for are not asked
 * for again and every log ends as an uninterrupted run's.
 */
async function runLlmChunk(id: string, spec: EnvprobeChunkSpec, settings: Readonly<Record<string, unknown>>): Promise<EnvprobeChunkResult> {
  const resolved = resolveLlmConfig({ configObject: { label: `job ${id}: llm`, value: settings }, roles: ["belief"] }).config;
  if (resolved === null) throw new InternalError(`job ${id}: llm: no endpoint in the job's settings`);
  const gateway = makeLlmGateway(resolved);
  const jobs = spec.seeds.map((seed) => ({ world: spec.world as Kind, regime: spec.regime, policy: spec.policy as Policy, seed }));
  const { episodes, kept } = await runEpisodesThroughSequencer(jobs, { config: spec.config, log: spec.log, lanes: resolved.concurrency ?? 4, llm: gateway.responder, resume: true });
  return { episodes: episodes.sort((a, b) => a.seed - b.seed), kept, llm: gateway.accounting().total, endpointProblems: gateway.problems() };
}

export interface NatsSweepOptions {
  readonly url: string;
  readonly namespace: string;
  /** Local `probetown worker` processes to start for this sweep (0: workers run elsewhere). */
  readonly workers: number;
  /** Seeds per job (default 64). */
  readonly chunk?: number;
  /** Called once the jobs are queued (e.g. to say where to start workers). */
  readonly onQueued?: (jobs: number) => void;
  /** An LLM agent's grid: the endpoint settings each job carries (never the key). */
  readonly llm?: Readonly<Record<string, unknown>>;
  /** Nothing on stderr about local workers that end. */
  readonly quiet?: boolean;
  /**
   * A traced sweep (`--trace`): a span per job, whose traceparent the job carries, and the local
   * workers started with the same `--trace`; their chunk spans continue the job's trace.
   */
  readonly trace?: TelemetryConfig;
  /** Told when some of the job spans never reached the exporter's destination. */
  readonly onTraceUndelivered?: (lost: { readonly spans: number; readonly error: string }) => void;
}

export interface NatsSweepResult extends SweepResult {
  readonly jobs: number;
  readonly chunk: number;
  /** Jobs whose outcome came from a later delivery (a worker died or failed mid-job). */
  readonly redelivered: readonly string[];
  /** Episodes of jobs that had finished before this submit (a resubmitted sweep): their recorded outcomes, not run now. */
  readonly alreadyFinished: number;
  /** An LLM agent's grid: the model calls of every job's last (successful) run, summed. */
  readonly llm?: UsageTotals;
  /** An LLM agent's grid: the workers' endpoint problems, one per kind (each job's gateway meets them anew). */
  readonly endpointProblems?: readonly EndpointProblem[];
}

/** Queues the grid on `nc`'s work queue and gathers every job's outcome. */
export async function gatherEnvprobeSweep(nc: NatsConnection, spec: SweepSpec, options: Omit<NatsSweepOptions, "url"> & { readonly url?: string }, progress?: (done: number, total: number, kept: number) => void): Promise<NatsSweepResult> {
  const chunk = options.chunk ?? DEFAULT_CHUNK;
  const jobs = envprobeJobsOf(spec, chunk, options.llm);
  const total = jobs.reduce((n, j) => n + j.spec.seeds.length, 0);
  const started = performance.now();
  const queue = await JetStreamJobQueue.open(nc, options.namespace);
  const spans = jobSpans(options.trace ?? null, (job) => {
    const c = job.spec as EnvprobeChunkSpec;
    return { "probetown.world": "envprobe", "probetown.envprobe.world": c.world, "probetown.envprobe.regime": c.regime, "probetown.condition": c.policy, "probetown.envprobe.seeds": c.seeds.length };
  });
  const children = options.url === undefined ? [] : spawnWorkers(options.workers, options.url, options.namespace, { quiet: options.quiet, trace: workerTrace(options.trace ?? null) });
  // Workers that all end (none could connect, or they crashed) take no more jobs: stop waiting.
  let gone: LocalWorkersGone | null = null;
  const unwatch = watchWorkers(children, options.quiet, (g) => {
    gone = g;
    void queue.close();
  }, queue.ackWaitMs);
  let episodesSoFar = 0;
  let perWorker: SweepProgressWriter | null = null;
  try {
    markSweepLog(spec);
    // Made before any job is queued: a replica count the server cannot keep fails the sweep here, not each job.
    if (spec.logStore === JETSTREAM_LOG_STORE) await LogObjects.open(nc, options.namespace, true);
    // Per NATS worker (by its name), for the dashboard: in --log when the sweep has one.
    perWorker = new SweepProgressWriter(spec.log ?? null, total);
    const submitted = await queue.submit(spans.tag(jobs));
    spans.submitted(submitted);
    const finishedBefore = new Set(submitted.finished);
    const alreadyFinished = jobs.reduce((n, j) => n + (finishedBefore.has(j.id) ? j.spec.seeds.length : 0), 0);
    options.onQueued?.(jobs.length);
    const episodes: EpisodeMetrics[] = [];
    const failures: { id: string; attempt: number; error: string }[] = [];
    const redelivered: string[] = [];
    const usage: UsageTotals[] = [];
    const problems: Array<readonly EndpointProblem[]> = [];
    let kept = 0;
    const expected = new Map(jobs.map((j) => [j.id, j.spec.seeds.length]));
    for await (const outcome of queue.outcomes(jobs.map((j) => j.id)) as AsyncIterable<JobOutcome<EnvprobeChunkResult>>) {
      spans.settle(outcome);
      if (outcome.attempt > 1) redelivered.push(outcome.id);
      const got = outcome.ok ? outcome.result?.episodes : undefined;
      if (got === undefined || got.length !== expected.get(outcome.id)) {
        failures.push({ id: outcome.id, attempt: outcome.attempt, error: outcome.error ?? `expected ${expected.get(outcome.id)} episodes' metrics, got ${got?.length ?? "none"}` });
        continue;
      }
      episodes.push(...got);
      episodesSoFar = episodes.length;
      // A job served from its recorded outcome ran nothing now: all its episodes count as kept.
      perWorker.add(outcome.worker, got.length, finishedBefore.has(outcome.id) ? got.length : (outcome.result?.kept ?? 0));
      // A job served from its recorded outcome ran nothing now: its kept count was that earlier run's.
      if (!finishedBefore.has(outcome.id)) kept += outcome.result?.kept ?? 0;
      if (outcome.result?.llm !== undefined) usage.push(outcome.result.llm);
      if (outcome.result?.endpointProblems !== undefined) problems.push(outcome.result.endpointProblems);
      progress?.(episodes.length, total, kept);
    }
    if (failures.length > 0) throw new EnvprobeSweepFailed({ failures, jobs: jobs.length });
    const seconds = (performance.now() - started) / 1000;
    inGridOrder(spec, episodes);
    const llm = sumTotals(usage);
    // A job whose calls all met HTTP errors while other jobs' calls completed met a passing outage, not an endpoint that never serves
    // (EnvProbe asks one model, its belief role, so the sweep's counts are that model's: `errors_only` is per model).
    const endpointProblems = mergeProblems(...problems).filter((p) => p.kind !== "errors_only" || llm.calls === llm.failed);
    return { episodes, cells: cellsOf(episodes), seconds, workers: options.workers, log: spec.logStore === JETSTREAM_LOG_STORE ? jetStreamLogWhere(options.namespace, spec) : (spec.log ?? null), kept, jobs: jobs.length, chunk, redelivered: redelivered.sort(), alreadyFinished, ...(options.llm === undefined ? {} : { llm, endpointProblems }) };
  } catch (error) {
    if (gone === null) throw error;
    const g = gone as LocalWorkersGone;
    throw new LocalWorkersGone(`sweep envprobe: ${g.message}; ${episodesSoFar} of ${total} episodes finished, the other ${total - episodesSoFar} stay queued in namespace ${options.namespace}: the same sweep command runs them (the finished ones are served from their outcomes), or start workers with \`probetown worker ${options.url === undefined ? "--nats <url>" : natsFlagHint(options.url).flag} --namespace ${options.namespace}\`${options.url === undefined ? "" : natsFlagHint(options.url).after}`, g.internal);
  } finally {
    perWorker?.finish();
    unwatch();
    for (const child of children) child.kill("SIGTERM");
    await queue.close();
    const lost = await spans.close();
    if (lost !== null) options.onTraceUndelivered?.(lost);
  }
}

/** Where a sweep's logs in JetStream are, as its summary says: `jetstream:<namespace>/<sweep>` (what `verify --nats … --namespace <namespace> <sweep>` takes). */
export const jetStreamLogWhere = (namespace: string, spec: SweepSpec): string => `jetstream:${namespace}/${sweepLogName(spec.config ?? {})}`;

/** Connects to `options.url` (a dead URL is a `NatsUnavailable` naming it) and runs the sweep there. */
export function runSweepOverNats(spec: SweepSpec, options: NatsSweepOptions, progress?: (done: number, total: number, kept: number) => void): Promise<NatsSweepResult> {
  return withNats(options.url, "sweep", (nc) => gatherEnvprobeSweep(nc, spec, options, progress));
}
