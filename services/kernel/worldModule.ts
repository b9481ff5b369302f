// A world as a module: its definition (actors, tick plan, conditions, config, record types; pure,
// in actors/<world>/) and what the services and the command line need of it beyond the kernel —
// its model roles, its summaries and inspect view, the checks on a new episode, its metrics and
// its own sweep engine when it has one. Every hook is optional: a world that is only a definition
// runs, replays, verifies, forks, diffs and sweeps like any other.
import type { WorldDefinition } from "../../actors/actor.ts";
import type { Tracer } from "@opentelemetry/api";
import type { LlmRole } from "../../events/llm.ts";
import type { Job, JobContext } from "../../infra/jobQueue.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import type { LogRecord } from "../../events/record.ts";
import type { ActorHost } from "../distributed/actorHost.ts";
import type { TickResult } from "./sequencer.ts";
import type { EpisodeHeader, ReplayOptions, ReplayResult } from "./replay.ts";

/** A fork's ancestors' logs, found from the child's `parentLog` (files or JetStream); null when gone. */
export type ParentLogs = (parentLog: string, childDir: string) => { readonly dir: string; readonly records: readonly LogRecord[] } | null;

/** The models of a world's roles, as `--llm`/`--model` give them (a role left out stays deterministic). */
export type RoleModels = Readonly<Partial<Record<LlmRole, string | null>>>;

export interface WorldModels {
  /** The roles `--model role=…` may name for this world's episodes (registered as model roles with the world). */
  readonly roles: readonly LlmRole[];
  /** Roles its own commands ask beyond its episodes' (an LLM judge), registered too. */
  readonly otherRoles?: readonly LlmRole[];
  /**
   * The config with its models (they are part of the episode header, so replay knows them); null
   * when no role got a model (the episode then stays on its deterministic backends).
   */
  readonly withModels: (config: unknown, models: RoleModels) => unknown | null;
}

/** A summary drawn from the actors' states tick by tick while an episode runs. */
export interface LiveSummary {
  readonly onTick: (result: TickResult, host: ActorHost) => void;
  /** null when it collected nothing (the log's summary is printed instead). */
  readonly text: (records: readonly LogRecord[]) => string | null;
  readonly json: (records: readonly LogRecord[]) => unknown;
}

export interface WorldSummaries {
  /** Its episodes may call models: their logs are read back for the model-usage line. */
  readonly callsModels?: boolean;
  /** What `run` and `fork` print at the end, from the log read back (`parents`: a fork's ancestors). */
  /** A fork's summary covers its ancestors' steps too: their logs are read back for it. */
  readonly coversAncestors?: boolean;
  readonly fromLog?: (o: { readonly dir: string; readonly records: readonly LogRecord[]; readonly actors: number; readonly parents?: ParentLogs }) => string | null;
  readonly live?: () => LiveSummary;
}

export interface InspectFlags {
  readonly from?: number;
  readonly to?: number;
  readonly agent?: string;
  readonly all?: boolean;
  readonly json?: boolean;
}

/** A world's own `inspect` view, written tick by tick as the replay makes each tick. */
export interface WorldInspection {
  readonly options: Pick<ReplayOptions, "onHeader" | "onTick">;
  /** Whether the log is this world's (known once its header is read). */
  readonly active: () => boolean;
  readonly finish: (result: ReplayResult) => void;
  /** When the replay fails part-way: writes out what was drawn before it. */
  readonly flush: () => void;
}

/** The flags a refusal of a new episode names. */
export interface NewEpisodeFlags {
  /** The flag that sized the world (`--agents 5000`, `--config f.json: extraAgents`). */
  readonly size: string;
  /** The flag that set its length, when one did. */
  readonly length?: string;
}

/** Where a new episode's files go and what of them grows with its length. */
export interface NewEpisodeDisk {
  readonly dir: string;
  readonly trace: boolean;
  readonly snapshotEvery?: number;
}

export interface WorldNewEpisode<Config> {
  /**
   * `run`'s flags the world's manifest added (services/<world>/cli.ts `options.run`), read into
   * the config given (`--config`, or undefined); absent: the config is used as given.
   */
  readonly withRunFlags?: (config: unknown, flags: Readonly<Record<string, unknown>>) => unknown;
  /**
   * `run --agents <n>`: the config grown to `n` agents (`configFile` names where a clashing size
   * came from); absent: the world sets its actors by its config and `--agents` is refused.
   */
  readonly withAgents?: (config: unknown, agents: number, configFile: string | undefined) => unknown;
  /** Refuses (UsageError) an episode of `ticks` ticks the heap cannot hold, before it starts. */
  readonly checkHeap?: (config: Config, ticks: number, flags: NewEpisodeFlags) => void;
  /** Refuses (UsageError) `ticks` new ticks that would fill the disk under `disk.dir`. */
  readonly checkDisk?: (config: Config, ticks: number, flags: NewEpisodeFlags, disk: NewEpisodeDisk) => void;
}

export interface WorldModule<Config = any> {
  readonly definition: WorldDefinition<Config>;
  readonly models?: WorldModels;
  readonly summaries?: WorldSummaries;
  readonly inspect?: (flags: InspectFlags, write: (chunk: string) => void, beforeOutput: () => void) => WorldInspection;
  readonly newEpisode?: WorldNewEpisode<Config>;
  /**
   * An episode's scores from its log (name → value), compared across conditions by a sweep's
   * paired report. Absent: a sweep reports outcomes only.
   */
  readonly metrics?: (records: readonly LogRecord[]) => Readonly<Record<string, number>>;
  /**
   * The world's own `sweep` (a grid engine of its own), given the command's parsed flags and the
   * `--config` file read; absent: the kernel's episode sweep.
   */
  readonly sweep?: (flags: object) => Promise<number> | number;
  /** The jobs its own sweep queues for `probetown worker` (with --nats), when it queues its own. */
  readonly jobs?: WorldJobs;
  /** The world's own view in `probetown ui` (services/ui), beside the timeline every world has. */
  readonly ui?: WorldUi;
  /** What its own sweep leaves in its --log as it runs: the dashboard's sweep progress reads it. */
  readonly sweepLog?: WorldSweepLog;
}

/** A world's own sweep's --log folder as the dashboard counts its progress. */
export interface WorldSweepLog {
  /** How many folders below the --log each episode directory lies. */
  readonly depth: number;
  /**
   * The jobs the sweep whose spec `log` holds asked for, and those among them not in `finished`
   * (episode directories relative to `log`, "/"-separated); null when `log` holds no such spec.
   */
  readonly progress: (log: string, finished: ReadonlySet<string>) => Promise<{ readonly expected: number; readonly missing: readonly string[] } | null>;
}

/** A world's dashboard view: its data, computed from a log on the server, and the module that draws it. */
export interface WorldUi {
  /** The view's tab label. */
  readonly label: string;
  /**
   * What the view draws, from an episode's records (JSON-serialisable); `episode.dir` is where its
   * log lives on disk (null in JetStream), for files a world writes beside its episodes.
   */
  readonly data: (records: readonly LogRecord[], episode: { readonly dir: string | null }) => unknown;
  /**
   * A part of the view asked for when it is shown (`/api/world-view?id=…&<query>`: the query's
   * other parameters), for a view too large to send whole (a town's frame per tick); absent: the
   * view takes no parameter but `id`. A refusal's message names the parameter (a 400).
   */
  readonly part?: (records: readonly LogRecord[], episode: { readonly dir: string | null }, query: Readonly<Record<string, string>>) => WorldUiPart;
  /**
   * The browser module that draws it: an ES module exporting `View({data, part})`, a Preact
   * component (`part(params)` fetches a part, resolving to its data), importing only `preact`,
   * `preact/hooks` and `htm` (the dashboard's import map).
   */
  readonly script: URL;
}

/** A view's part, or why the query was refused. */
export type WorldUiPart = { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly message: string };

/** A world's own sweep jobs, as a worker takes them from the queue beside the kernel's episode jobs. */
export interface WorldJobs {
  /** Whether a queued job is one of this world's. */
  readonly owns: (job: Job) => boolean;
  /**
   * Runs one; `done` says what it did, for the worker's line (`12 envprobe episodes`). `nats`: the
   * worker's connection and namespace, for a job that keeps what it makes in JetStream.
   */
  readonly run: (job: Job, context: JobContext, tracer: Tracer | undefined, nats: { readonly nc: NatsConnection; readonly namespace: string }) => Promise<{ readonly result: unknown; readonly done: string }>;
}

export type { EpisodeHeader };
