// Episode jobs: what a sweep enqueues and a worker runs. A job is one episode of a matrix; its id
// is the episode id, so resubmitting a sweep never runs an episode twice, and a redelivered job
// (its worker died) resumes the partial log instead of starting another.
import { worldNamed } from "../kernel/worlds.ts";
import { isSeed } from "../../actors/rng.ts";
import { ConditionsInvalid, ConfigInvalid, JobSpecInvalid, SeedsInvalid } from "./errors.ts";
import { JobRejected, type Job, type JobHandler } from "../../infra/jobQueue.ts";
import { isStorageError } from "../../infra/eventStore.ts";
import type { TornTail } from "../../events/errors.ts";
import type { Backend } from "../../infra/backend.ts";
import { episodeIdOf, runEpisode, type CommonOptions, type EpisodeResult, type Where } from "../kernel/episodes.ts";
import { isPathError, UsageError } from "../kernel/replay.ts";
import { EpisodeIdTaken } from "../kernel/usageError.ts";
import { fieldDifferences } from "../views/text.ts";
import { messageOf } from "../../events/errorMessage.ts";

export interface EpisodeSpec {
  readonly world: string;
  readonly seed: number;
  readonly condition: string;
  readonly ticks?: number;
  /** A partial world config merged over the defaults. */
  readonly config?: unknown;
  readonly snapshotEvery?: number;
}

export interface EpisodeOutcome {
  readonly episode: string;
  readonly location: string;
  readonly stateHash: string;
  readonly ticks: number;
  /** Records this attempt appended (a resumed job appends only the rest). */
  readonly records: number;
  /** Records the episode's log holds (the same whether or not its job was resumed). */
  readonly logRecords?: number;
  readonly seconds: number;
  readonly resumedAfterTick?: number;
  /** The spec the episode ran with: a resubmitted id whose settings differ is told apart by it. */
  readonly spec?: EpisodeSpec;
}

/** What differs between the spec an outcome was run with and the one asked for now, field by field. */
export function specDifferences(ran: EpisodeSpec | undefined, asked: EpisodeSpec): string[] {
  if (ran === undefined) return ["its settings were not recorded (an earlier build ran it)"];
  // The snapshot cadence changes how a job resumes, not what it produces.
  return fieldDifferences(ran, asked, "there", ["snapshotEvery"]);
}

export interface Matrix {
  readonly world: string;
  readonly seeds: readonly number[];
  readonly conditions: readonly string[];
  readonly ticks?: number;
  readonly config?: unknown;
  readonly snapshotEvery?: number;
}

/** One job per (condition, seed), in that order; ids are episode ids. */
export function jobsOf(m: Matrix): Job<EpisodeSpec>[] {
  const world = worldNamed(m.world);
  if (m.conditions.length === 0) throw new ConditionsInvalid({ world: m.world, known: Object.keys(world.conditions) });
  for (const c of m.conditions) if (world.conditions[c] === undefined) throw new ConditionsInvalid({ world: m.world, known: Object.keys(world.conditions), unknown: c });
  // Checked once here, not by every job on every delivery.
  try {
    world.resolveConfig(m.config);
  } catch (error) {
    throw new ConfigInvalid({ detail: messageOf(error) });
  }
  const jobs: Job<EpisodeSpec>[] = [];
  // A condition named twice is one episode id: its second job would wait for an outcome already counted.
  for (const condition of new Set(m.conditions)) {
    for (const seed of m.seeds) {
      const spec: EpisodeSpec = {
        world: m.world, seed, condition,
        ...(m.ticks === undefined ? {} : { ticks: m.ticks }),
        ...(m.config === undefined ? {} : { config: m.config }),
        ...(m.snapshotEvery === undefined ? {} : { snapshotEvery: m.snapshotEvery }),
      };
      jobs.push({ id: episodeIdOf(m.world, seed, condition), spec });
    }
  }
  return jobs;
}

/** More seeds than any sweep runs: a typo (`0-1000000000`) is refused rather than allocated. */
const MAX_SEEDS = 1_000_000;

/** `1-200`, `1,5,9` or a mix (`1-3,10`): the seeds of a sweep. */
export function parseSeeds(text: string): number[] {
  const seeds: number[] = [];
  for (const part of text.split(",")) {
    const range = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (range === null) throw new SeedsInvalid({ part, reason: "form" });
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    // Past 2^53 - 1 two seeds typed apart are one number (and the run refused it, failing every episode).
    if (!isSeed(from) || !isSeed(to)) throw new SeedsInvalid({ part: part.trim(), reason: "not-a-seed" });
    if (to < from) throw new SeedsInvalid({ part, reason: "backwards" });
    if (to - from >= MAX_SEEDS) throw new SeedsInvalid({ part, reason: "too-many", count: to - from + 1, max: MAX_SEEDS });
    for (let s = from; s <= to; s++) seeds.push(s);
  }
  return [...new Set(seeds)];
}

function specOf(job: Job): EpisodeSpec {
  const s = job.spec as Partial<EpisodeSpec> | null;
  if (s === null || typeof s !== "object" || typeof s.world !== "string" || !Number.isSafeInteger(s.seed) || typeof s.condition !== "string") {
    throw new JobSpecInvalid({ job: job.id, reason: "shape" });
  }
  return s as EpisodeSpec;
}

export interface JobNotes {
  /** Told, with the episode, when a resumed job does not continue from the latest snapshot (see CommonOptions.onResumeNote). */
  readonly onResumeNote?: (episode: string, note: string) => void;
  /** Told, with the episode, when a resumed job had to cut a damaged tail off its log, and where the cut bytes were kept (see CommonOptions.onRecovered). */
  readonly onRecovered?: (episode: string, torn: TornTail, keptAt: string) => void;
  /** Told, with the episode, when some of a traced episode's spans never reached the exporter's destination. */
  readonly onTraceUndelivered?: (episode: string, lost: { readonly spans: number; readonly error: string }) => void;
}

/**
 * A job handler that runs (or resumes) the job's episode on the stores of `backend`. The episode
 * id must equal the job id: that is what makes a job idempotent. The log is made durable at the
 * job's snapshots and its end unless `fsync` says otherwise: a redelivered job resumes from its
 * latest snapshot, so durability per tick would buy nothing but round trips.
 */
export function episodeJobHandler(backend: Backend, where: (episode: string) => Where, options: Pick<CommonOptions, "trace" | "fsync" | "stop"> & JobNotes = {}): JobHandler {
  const traced = options.trace !== undefined && (options.trace === "default" || options.trace.exporter !== "none");
  const handler: JobHandler = async (job) => {
    const spec = specOf(job);
    if (episodeIdOf(spec.world, spec.seed, spec.condition) !== job.id) throw new JobSpecInvalid({ job: job.id, reason: "id", expectedId: episodeIdOf(spec.world, spec.seed, spec.condition) });
    const result: EpisodeResult = await runEpisode(
      {
        world: spec.world, seed: spec.seed, condition: spec.condition, where, resume: true,
        trace: options.trace ?? { exporter: "none" },
        // A traced sweep's job carries its span: the episode's trace continues it.
        ...(traced && job.traceparent !== undefined ? { traceparent: job.traceparent } : {}),
        ...(spec.ticks === undefined ? {} : { ticks: spec.ticks }),
        ...(spec.config === undefined ? {} : { config: spec.config }),
        ...(spec.snapshotEvery === undefined ? {} : { snapshotEvery: spec.snapshotEvery }),
        fsync: options.fsync ?? "snapshot",
        ...(options.stop === undefined ? {} : { stop: options.stop }),
        ...(options.onResumeNote === undefined ? {} : { onResumeNote: (note: string) => options.onResumeNote!(job.id, note) }),
        ...(options.onRecovered === undefined ? {} : { onRecovered: (torn: TornTail, keptAt: string) => options.onRecovered!(job.id, torn, keptAt) }),
      },
      backend,
    );
    if (result.traceUndelivered !== undefined) options.onTraceUndelivered?.(job.id, result.traceUndelivered);
    const outcome: EpisodeOutcome = {
      episode: result.episode, location: result.dir, stateHash: result.stateHash, ticks: result.ticks, records: result.records, logRecords: result.logRecords, seconds: result.seconds,
      ...(result.resumedAfterTick === undefined ? {} : { resumedAfterTick: result.resumedAfterTick }),
      spec,
    };
    return outcome;
  };
  // A bad spec, a log left by another episode under this id, a path that cannot be a directory, or
  // a disk that is full fails the same on every delivery.
  return (job, context) =>
    handler(job, context).catch((error: unknown) => {
      throw error instanceof UsageError || isPathError(error) || isStorageError(error) ? new JobRejected(messageOf(error), { cause: error, ...(error instanceof EpisodeIdTaken ? { reason: "episode-id-taken" as const } : {}) }) : error;
    });
}
