// Running and forking episodes on a Backend (infra/backend.ts): by default the embedded one (file
// event store, in-process transport, one actor host, file snapshots); a distributed run passes
// another backend, not other code.
import { accessSync, constants, existsSync, statfsSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { resolveNewEpisodeConfig, type ActorDefinition, type WorldDefinition } from "../../actors/actor.ts";
import { canonicalJson } from "../../events/canonical.ts";
import type { Transport } from "../../infra/transport.ts";
import { worldNamed } from "./worlds.ts";
import { isSeed } from "../../actors/rng.ts";
import type { LogRecord } from "../../events/record.ts";
import { SnapshotDamaged, type TornTail } from "../../events/errors.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import type { EventStore, FsyncPolicy } from "../../infra/eventStore.ts";
import { segmentFiles } from "../../infra/fileEventStore.ts";
import { embeddedBackend, type Backend } from "../../infra/backend.ts";
import { withResources } from "../../infra/resources.ts";
import type { EpisodeSnapshot, SerializedActor, SnapshotStore } from "../../infra/snapshotStore.ts";
import { SnapshotSchedule, type SnapshotPolicy } from "./snapshotPolicy.ts";
import { contextOfTraceparent, linkOfTraceparent, type TelemetryConfig } from "../../infra/telemetry.ts";
import { ActorHost, WAVE_PROTOCOL, type HostRequest, type PingReply } from "../distributed/actorHost.ts";
import { NoResponder } from "../../infra/transport.ts";
import { headerOf, HOST_SUBJECT, layoutOf, loggedLlm, replayedSnapshot, resolveEpisodeDir, restoreHost, ResumeStore, snapshotActors, snapshotNamed, type EpisodeHeader } from "./replay.ts";
import { ActorHostsAbsent, DirNotWritable, EpisodeHeaderDiffers, FlagValueInvalid, ForkTickMissing, ForkTicksTooFew, LogDirInEpisode, LogDirUnusable, RemoteActorsUnknown, RemoteForkRefused, TicksFixed, TraceFileInEpisode } from "./errors.ts";
import { bySubject, Sequencer, SEQUENCER_ID, singleHost, type LlmResponder, type Routing, type TickResult, type WaveHost } from "./sequencer.ts";
import { fieldDifferences, shownPath } from "../views/text.ts";
import { PROBETOWN_VERSION } from "./version.ts";
import { messageOf } from "../../events/errorMessage.ts";

export { PROBETOWN_VERSION };

export interface EpisodeObserver {
  /** Called after every committed tick with the live host (read-only use). */
  onTick?(result: TickResult, host: ActorHost): void;
  onRecord?(record: LogRecord): void;
}

export interface CommonOptions {
  /** Episode directory; default runs/<episode> (suffixed -2, -3 … if taken). Ignored by non-file locations. */
  readonly dir?: string;
  /** Where the episode's log and snapshots live; default: an episode directory of files. */
  readonly where?: (episode: string) => Where;
  readonly trace?: TelemetryConfig | "default";
  /**
   * The W3C traceparent of the span a new episode's span continues (a sweep's job span, carried by
   * the job): the episode's trace is the job's. A resumed episode continues the trace its header names.
   */
  readonly traceparent?: string;
  /**
   * Snapshot every N ticks (0: only the last tick). Default: chosen by the log's growth and the run's
   * time since the last snapshot (`snapshotLogBytes`, `snapshotMs`; services/kernel/snapshotPolicy.ts).
   */
  readonly snapshotEvery?: number;
  /** Without `snapshotEvery`: a snapshot once the log has grown by this many bytes since the last (default: 10× the last one's size, at least 1 MiB). */
  readonly snapshotLogBytes?: number;
  /** Without `snapshotEvery`: a snapshot once this many ms of run time have passed since the last (default 60 000). */
  readonly snapshotMs?: number;
  readonly fsync?: FsyncPolicy;
  /** Actors served by other processes (actor hosts), and how they are addressed. */
  readonly placement?: Placement;
  /** Continue an existing partial log (a redelivered job): restore the latest snapshot, check the logged tail, append the rest. */
  readonly resume?: boolean;
  readonly observer?: EpisodeObserver;
  readonly progress?: (done: number, total: number) => void;
  /** Who answers the actors' `llm.requested` (the LLM gateway); without one every request fails with `no_backend` and actors fall back. */
  readonly llm?: LlmResponder;
  /** Told when resuming had to cut a damaged tail off the log, and where the cut bytes were kept. */
  readonly onRecovered?: (torn: TornTail, keptAt: string) => void;
  /** Told when a resume does not continue from the latest snapshot (one past the log's end, after a cut): which one it used, and why. */
  readonly onResumeNote?: (note: string) => void;
  /** Once aborted, the run stops after the tick in progress is committed, failing with Interrupted. */
  readonly stop?: AbortSignal;
}

/**
 * What a resume that cut a damaged tail off the log says, whichever command resumed it (`run
 * --resume`, a sweep's or a worker's episode, an experiment's cell): what was cut, and where its
 * bytes were kept (a file beside the log, or JetStream's cut subject).
 */
export function tailCutNote(torn: TornTail, keptAt: string, keptIn: "file" | "subject"): string {
  return `${torn.message}\ncut back to the last good record; the cut bytes are kept in ${keptIn === "file" ? shownPath(keptAt) : `the subject ${keptAt}`}`;
}

/** Both of a resume's notes (a tail it cut, a snapshot it did not continue from) told to one `note`. */
export function resumeNotes(note: (text: string) => void, keptIn: "file" | "subject"): Pick<CommonOptions, "onRecovered" | "onResumeNote"> {
  return { onRecovered: (torn, keptAt) => note(tailCutNote(torn, keptAt, keptIn)), onResumeNote: note };
}

/** Where an episode's pieces live, as locations of the backend's event and snapshot stores. */
export interface Where {
  readonly log: string;
  readonly snapshots: string;
  /** The episode directory, or another description of where it lives (shown to users). */
  readonly dir: string;
  /** Trace export when none is asked for. */
  readonly trace: TelemetryConfig;
}

export interface Placement {
  /** Actors hosted elsewhere ("all": every actor); the rest are hosted in this process. */
  readonly remote: readonly string[] | "all";
  readonly subjectOf: (episode: string, actorId: string) => string;
  /** How long to wait for the remote actor hosts to answer (default 30 s). */
  readonly readyTimeoutMs?: number;
  /** Told once when some remote actors do not answer at once and the run starts waiting for them. */
  readonly onWait?: (notice: { readonly episode: string; readonly actors: readonly string[]; readonly timeoutMs: number }) => void;
}

/**
 * A remote actor's host stopped answering mid-run (killed, hung, its machine gone). Not an
 * internal error: the log so far is intact, and a resumed run with a host for the actor continues it.
 */
export class ActorHostLost extends TaggedError {
  readonly _tag = "ActorHostLost";
  /** The NATS side's trouble, not the program's: the log is kept for a resume. */
  readonly exitCode = ExitCode.usage;
  readonly episode: string;
  readonly actorId: string;
  constructor(episode: string, actorId: string, detail: string) {
    super(`episode ${episode}: the actor host serving ${actorId} stopped answering (${detail}); the log so far is kept: start an actor host for ${actorId} again and continue the episode with \`run --resume\` and the same flags (its hosts are set back to the state the log continues from)`);
    this.episode = episode;
    this.actorId = actorId;
  }
}

/** A run or fork stopped on request (`CommonOptions.stop`: Ctrl-C) after a committed tick: its log ends on that tick's commit. */
export class Interrupted extends TaggedError {
  readonly _tag = "Interrupted";
  /** The command line answers it with the signal's own code (services/cli/session.ts): reaching exitCodeFor, it escaped that. */
  readonly exitCode = ExitCode.internal;
  readonly episode: string;
  /** The last tick committed, and the episode's last. */
  readonly afterTick: number;
  readonly lastTick: number;
  /** What asked the run to stop (the signal's name). */
  readonly reason: string;
  /** The episode directory (set once known). */
  readonly dir: string;
  constructor(episode: string, afterTick: number, lastTick: number, reason: string, dir = "") {
    super(`episode ${episode}: stopped by ${reason} after tick ${afterTick} of ${lastTick}`);
    this.episode = episode;
    this.afterTick = afterTick;
    this.lastTick = lastTick;
    this.reason = reason;
    this.dir = dir;
  }
}

export interface RunOptions extends CommonOptions {
  readonly world: string;
  readonly seed: number;
  readonly condition?: string;
  /** A partial world config merged over the defaults. */
  readonly config?: unknown;
  readonly ticks?: number;
}

export interface EpisodeResult {
  readonly episode: string;
  /** The world's name (what reads the log back needs it). */
  readonly world: string;
  readonly dir: string;
  readonly logDir: string;
  readonly traceDescription: string;
  /** How the trace was sampled when not every span was (OTEL_TRACES_SAMPLER, a large run's default). */
  readonly traceSampling?: string;
  /** Spans the trace exporter could not deliver (an unreachable collector), with its first error. */
  readonly traceUndelivered?: { readonly spans: number; readonly error: string };
  readonly traceFile: string | null;
  readonly firstTick: number;
  readonly ticks: number;
  /** Records this run appended (a resumed run appends only the rest). */
  readonly records: number;
  /** Records the episode's log holds now, whoever appended them (a fork's from its first seq). */
  readonly logRecords: number;
  readonly seconds: number;
  readonly stateHash: string;
  readonly actors: number;
  /** Set when the run continued a partial log: the tick it restarted after (-1: from the start). */
  readonly resumedAfterTick?: number;
  /** Snapshots this run kept (the last tick's among them), their bytes, and the seconds the run waited for them. */
  readonly snapshots?: { readonly count: number; readonly bytes: number; readonly seconds: number };
}

/**
 * The episode directory whose log/ or snapshots/ folder `dir` is or lies in, or null: what is there
 * is that episode's stores' (a run given `--log runs/day2/log` put its own log/, snapshots/ and
 * trace in day2's log folder, and `verify runs/day2/log` then checked the newcomer, not day2).
 */
export function episodeFolderAround(dir: string): { readonly episode: string; readonly folder: string } | null {
  for (let d = resolve(dir), up = dirname(d); up !== d; d = up, up = dirname(d)) {
    const name = basename(d);
    if ((name === "log" || name === "snapshots") && segmentFiles(join(up, "log")).length > 0) return { episode: up, folder: d };
  }
  return null;
}

/** An explicit `--log` (of `run`, `fork`, `sweep`): a directory, created when missing, that is no episode's log or snapshot folder. */
export function explicitLogDir(explicit: string, resume = false): string {
  // resolve("") is the current directory: `--log ""` (an unset shell variable) wrote log/ and trace.jsonl there.
  if (explicit.trim() === "") throw new LogDirUnusable({ given: explicit, reason: "empty" });
  const dir = resolve(explicit);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new LogDirUnusable({ given: explicit, reason: "is-a-file" });
  const owner = episodeFolderAround(dir);
  if (owner !== null) {
    const kind = basename(owner.folder) === "log" ? "log" : "snapshot";
    const isFolder = owner.folder === dir;
    throw new LogDirInEpisode({ given: explicit, kind, folder: shownPath(owner.folder), episode: shownPath(owner.episode), isFolder, resumeHere: resume && isFolder && kind === "log" });
  }
  return dir;
}

function chooseDir(explicit: string | undefined, episode: string): string {
  if (explicit !== undefined) {
    const dir = explicitLogDir(explicit);
    if (existsSync(join(dir, "log"))) throw new LogDirUnusable({ given: explicit, reason: "holds-a-log" });
    return dir;
  }
  const base = resolve("runs", episode);
  if (!existsSync(base)) return base;
  for (let n = 2; ; n++) if (!existsSync(`${base}-${n}`)) return `${base}-${n}`;
}

/** DirNotWritable's `code` for a folder on a filesystem that holds no files (proc, sysfs). */
export const VIRTUAL_FILESYSTEM = "a virtual filesystem, which holds no files";

/**
 * Refuses up front an episode directory this process cannot write (Node's EACCES named a mkdir or
 * a lock file, and a trace beside the log was blamed first, with `--trace none` as the remedy):
 * the nearest folder that exists, and a resumed log's folder and last segment.
 */
export function checkWritable(dir: string, explicit: string | undefined, resume: boolean): void {
  const log = join(dir, "log");
  const segment = segmentFiles(log).at(-1);
  let folder = dir;
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  const needed = resume && existsSync(log) ? [log, ...(segment === undefined ? [] : [segment])] : [folder];
  for (const path of needed) {
    let code: string | null = null;
    try {
      accessSync(path, constants.W_OK);
      // A filesystem of no blocks (/proc, /sys) takes no files, even from root, whom access() lets
      // through: `--log /proc/x` was refused as a disk with "0.0 GiB free", then failed to mkdir.
      if (statfsSync(path).blocks === 0) code = VIRTUAL_FILESYSTEM;
    } catch (error) {
      code = (error as NodeJS.ErrnoException).code ?? messageOf(error);
    }
    if (code !== null) {
      throw new DirNotWritable({ dir: shownPath(dir), ...(explicit === undefined ? {} : { given: explicit }), path: shownPath(path), code, resume: resume && existsSync(log) });
    }
  }
}

/**
 * A JSONL trace file in a log or snapshot folder, this episode's or another's, is refused: its spans
 * were appended to another episode's log segment (damaging it: exit 3 from then on), and one in this
 * episode's log/ was created before the log, which then found its folder taken (exit 4).
 */
function checkTraceFile(file: string, where: Where): void {
  const path = resolve(file);
  const own = [where.log, where.snapshots].find((folder) => path.startsWith(resolve(folder) + sep));
  const owner = own === undefined ? episodeFolderAround(dirname(path)) : { episode: where.dir, folder: resolve(own) };
  if (owner === null) return;
  const episode = owner.episode === where.dir ? {} : { episode: shownPath(owner.episode) };
  throw new TraceFileInEpisode({ file, folder: shownPath(owner.folder), kind: basename(owner.folder) === "log" ? "log" : "snapshot", ...episode });
}

/** The embedded layout: an episode directory with log/, snapshots/ and trace.jsonl. */
export const filesWhere = (explicit: string | undefined, resume = false) => (episode: string): Where => {
  const dir = resume ? (explicit === undefined ? resolve("runs", episode) : explicitLogDir(explicit, true)) : chooseDir(explicit, episode);
  checkWritable(dir, explicit, resume);
  const layout = layoutOf(dir);
  return { log: layout.log, snapshots: layout.snapshots, dir, trace: { exporter: "jsonl", file: layout.trace } };
};

export const episodeIdOf = (world: string, seed: number, condition: string): string => `${world}-s${seed}-${condition}`;

interface Drive {
  readonly world: WorldDefinition;
  readonly episode: string;
  readonly seed: number;
  readonly condition: string;
  readonly baseConfig: unknown;
  readonly config: unknown;
  /** Creates the in-process actors (all of them, or those not placed elsewhere; `restore` from a snapshot). */
  readonly definitions: readonly ActorDefinition[];
  readonly firstSeq: number;
  readonly previousHash?: string;
  readonly firstTick: number;
  readonly lastTick: number;
  readonly header: (actorIds: readonly string[]) => { type: string; payload: unknown; tick: number };
  /** A fork's base: the parent's snapshot the child starts from (kept beside the child's log as is). */
  readonly base?: EpisodeSnapshot;
  /** The base's actors, checked and given the child's condition: what the child's actors start from. */
  readonly baseActors?: Readonly<Record<string, unknown>>;
  /** A fork's parent record it starts after (its `tick.committed`): its traceparent, linked from the child's episode span. */
  readonly parentTraceparent?: string;
}

/** Where a run starts: fresh (or a fork's base), or after the latest snapshot of a partial log. */
interface Start {
  readonly host: ActorHost | null;
  readonly firstTick: number;
  /** Records already in the log, and the index of the first one the run must reproduce. */
  readonly logged: readonly LogRecord[];
  readonly from: number;
  /** The key of the snapshot the run continues from (null: the episode's start). */
  readonly snapshot: string | null;
}

/** Runs an episode's ticks on the backend's stores, transport and tracing. */
const drive = (d: Drive, o: CommonOptions, backend: Backend): Promise<EpisodeResult> =>
  withResources(async (resources) => {
    const started = performance.now();
    const where = (o.where ?? filesWhere(o.dir, o.resume))(d.episode);
    const traceConfig: TelemetryConfig = o.trace === undefined || o.trace === "default" ? where.trace : o.trace;
    if (traceConfig.exporter === "jsonl" && traceConfig.file !== undefined) checkTraceFile(traceConfig.file, where);
    const actorIds = d.definitions.map((def) => def.id).sort();
    const remote = o.placement === undefined ? [] : o.placement.remote === "all" ? actorIds : [...o.placement.remote];
    const unknown = remote.filter((id) => !actorIds.includes(id));
    if (unknown.length > 0) throw new RemoteActorsUnknown({ unknown, actors: actorIds });
    if (remote.length > 0 && d.base !== undefined) throw new RemoteForkRefused();
    // Opened in this order, released in reverse when the run ends (also on failure): the transport,
    // then the log; the trace is flushed last, after the log is closed.
    // The actor count chooses the default sampler (a large run's trace is sampled unless OTEL_TRACES_SAMPLER says).
    const telemetry = resources.add(backend.tracing.open({ ...traceConfig, actors: actorIds.length }), (t) => t.shutdown().catch(() => undefined));
    const previous = d.previousHash === undefined ? {} : { previousHash: d.previousHash };
    const createOptions = { episode: d.episode, fsync: o.fsync ?? "commit", firstSeq: d.firstSeq, ...previous, ...(o.onRecovered === undefined ? {} : { onRecovered: o.onRecovered }) } as const;
    const stores = backend.eventStores;
    const opened = o.resume === true ? await stores.resume(where.log, createOptions) : { store: await stores.create(where.log, createOptions), records: [] as LogRecord[] };
    resources.add(opened.store, (store, failure) => stores.close(store, failure));
    const headBefore = opened.store.head().seq;
    const snapshots = backend.snapshotStores.at(where.snapshots);
    const transport = resources.add(backend.transports.open(), (t) => t.close());
    const start = await startOf(d, opened.records, snapshots, remote, o.onResumeNote ?? (() => undefined));
    const store = start.logged.length === 0 ? opened.store : new ResumeStore(opened.store, start.logged, start.from);
    const local = start.host;
    let routing = singleHost(HOST_SUBJECT);
    if (o.placement === undefined) local?.serve(transport, HOST_SUBJECT);
    else {
      const subjectOf = o.placement.subjectOf;
      routing = { subjectOf: (id) => subjectOf(d.episode, id) };
      local?.serveEach(transport, routing.subjectOf);
    }
    const sequencer = new Sequencer({
      world: d.world,
      config: d.config,
      seed: d.seed,
      store,
      transport,
      routing,
      actorIds,
      ...(telemetry.enabled ? { tracer: telemetry.tracer } : {}),
      // A resumed run serves the requests already logged from the log, and only new ones live.
      ...(start.logged.length > 0 ? { llm: loggedLlm(start.logged, o.llm) } : o.llm === undefined ? {} : { llm: o.llm }),
    });
    const kept = { count: 0, bytes: 0, seconds: 0 };
    const run = async () => {
      // The header carries the episode span's traceparent, so the log's first record leads to the
      // episode's trace; a resumed run continues the trace its header names (one trace per episode),
      // a sweep's new episode the trace of its job's span.
      const continues = start.logged[0]?.meta?.traceparent ?? o.traceparent;
      const forkedFrom = d.parentTraceparent === undefined ? undefined : linkOfTraceparent(d.parentTraceparent);
      sequencer.startTrace(d.episode, { "probetown.world": d.world.name, "probetown.seed": d.seed, "probetown.condition": d.condition }, {
        ...(continues === undefined ? {} : { parent: contextOfTraceparent(continues) }),
        ...(forkedFrom === undefined ? {} : { links: [forkedFrom] }),
      });
      try {
        if (start.logged.length === 0) {
          const h = d.header(actorIds);
          await sequencer.append([{ type: h.type, from: SEQUENCER_ID, to: null, payload: h.payload, tick: h.tick, cause: null }], [sequencer.traceSpan], { probetown: PROBETOWN_VERSION });
          await store.commit();
          if (d.base !== undefined) await snapshots.put(d.base);
        }
        if (remote.length > 0) {
          const pings = await waitForActors(transport, routing, remote, o.placement?.readyTimeoutMs ?? 30_000, (actors, timeoutMs) => o.placement?.onWait?.({ episode: d.episode, actors, timeoutMs }));
          // The hosts may hold any state (built fresh from the header, or left by a run that failed):
          // each starts its actors over from where this run starts, so the log cannot depend on it.
          await restoreRemote(transport, routing, remote, start.snapshot);
          sequencer.useWaveHosts(waveHostsOf(routing, pings, local));
        } else if (o.placement !== undefined && local !== null) sequencer.useWaveHosts(waveHostsOf(routing, new Map(), local));
        const last = await runTicks(d, o, sequencer, store, snapshots, start.firstTick, actorIds.length, local, kept);
        // Remote hosts serve this episode only; tell them it is over.
        await Promise.all([...bySubject(routing, remote).keys()].map((subject) => transport.request(subject, { kind: "release" } satisfies HostRequest, { timeoutMs: 5000 }).catch(() => undefined)));
        return last;
      } finally {
        // Also when the run fails: its spans are exported under an ended episode span.
        sequencer.endTrace();
      }
    };
    const lost = hostLost(d.episode, new Map(remote.map((id) => [routing.subjectOf(id), id])));
    const stopped = (error: unknown): Error => (error instanceof Interrupted ? new Interrupted(error.episode, error.afterTick, error.lastTick, error.reason, where.dir) : lost(error));
    const stateHash = start.firstTick > d.lastTick ? lastStateHash(start.logged) : await run().catch((error: unknown) => Promise.reject(stopped(error)));
    local?.stop();
    // The trace is flushed now (not only when the run's resources are released) so the result can say whether it was delivered.
    await telemetry.flush().catch(() => undefined);
    const undelivered = telemetry.undelivered();
    return {
      ...(undelivered === null ? {} : { traceUndelivered: undelivered }),
      episode: d.episode,
      world: d.world.name,
      dir: where.dir,
      logDir: where.log,
      traceDescription: telemetry.description,
      ...(telemetry.sampling == null ? {} : { traceSampling: telemetry.sampling }),
      traceFile: traceConfig.exporter === "jsonl" ? (traceConfig.file ?? null) : null,
      firstTick: d.firstTick,
      ticks: d.lastTick - d.firstTick + 1,
      records: opened.store.head().seq - headBefore,
      logRecords: opened.store.head().seq - d.firstSeq + 1,
      seconds: (performance.now() - started) / 1000,
      stateHash,
      actors: actorIds.length,
      ...(opened.records.length > 0 ? { resumedAfterTick: start.firstTick - 1 } : {}),
      snapshots: kept,
    };
  });

/** A request to a remote actor that found no host, or got no reply in time, is that host lost; other errors pass. */
const hostLost = (episode: string, remoteBySubject: ReadonlyMap<string, string>) => (error: unknown): Error => {
  const e = error as { name?: unknown; subject?: unknown; timeoutMs?: unknown };
  const actor = typeof e.subject === "string" ? remoteBySubject.get(e.subject) : undefined;
  if (actor === undefined) return error as Error;
  // RequestTimeout belongs to the NATS transport, which this module does not load: known by name.
  if (error instanceof NoResponder) return new ActorHostLost(episode, actor, "no process serves it any more");
  if (e.name === "RequestTimeout") return new ActorHostLost(episode, actor, `no reply within ${String(e.timeoutMs)} ms`);
  return error as Error;
};

const lastStateHash = (records: readonly LogRecord[]): string =>
  (records.findLast((r) => r.type === "tick.committed")?.payload as { stateHash?: string } | undefined)?.stateHash ?? "";

/**
 * Decides where a run starts. A partial log (a worker died) restarts after its newest snapshot
 * whose tick is in the log (`resumePoint`; or from the beginning without one); the records after that point are
 * reproduced and checked rather than appended again, so the finished log equals an uninterrupted run's.
 */
async function startOf(d: Drive, records: readonly LogRecord[], snapshots: SnapshotStore, remote: readonly string[], note: (text: string) => void): Promise<Start> {
  const localDefinitions = d.definitions.filter((def) => !remote.includes(def.id));
  const fresh = (): ActorHost | null =>
    localDefinitions.length === 0 ? null : new ActorHost(d.world, localDefinitions, d.baseActors === undefined ? {} : { restore: pick(d.baseActors, localDefinitions) });
  if (records.length === 0) return { host: fresh(), firstTick: d.firstTick, logged: [], from: 0, snapshot: null };
  const logged = records[0]!;
  const h = d.header(d.definitions.map((def) => def.id).sort());
  if (logged.type !== h.type || canonicalJson(logged.payload) !== canonicalJson(h.payload)) {
    const differ = fieldDifferences(logged.payload, h.payload, "in the log");
    throw new EpisodeHeaderDiffers({ episode: d.episode, differences: differ });
  }
  const point = await resumePoint(records, snapshots, d.episode, note);
  if (point === null) return { host: fresh(), firstTick: d.firstTick, logged: records, from: 1, snapshot: null };
  const { key, snapshot, at } = point;
  // Checked here whoever hosts the actors; the remote ones are restored by their hosts (restoreRemote).
  const actors = snapshotActors(d.world, snapshot, d.config, d.seed, d.condition, snapshotNamed(snapshots, key, "remove it, and `run --resume` continues from an earlier snapshot or the episode's start (the log is not affected)"));
  const host = localDefinitions.length === 0 ? null : new ActorHost(d.world, localDefinitions, { restore: pick(actors, localDefinitions) });
  return { host, firstTick: snapshot.tick + 1, logged: records, from: at + 1, snapshot: key };
}

/**
 * The snapshot a partial log continues from, with the index of its `tick.committed` in `records`:
 * the latest one when the log holds its record (same seq, tick, head hash and state hash), else the
 * newest snapshot whose record the log holds. A log cut back (`repair` of a torn tail, a crash that
 * lost its last ticks) can end before snapshots that outlived it: the latest pointer then names a
 * state the log does not reach, which was ignored, and the run started over from the episode's start
 * (minutes for a large town). Such a snapshot is never used nor removed (it may be evidence of what
 * was lost): `note` says which one was used instead, and why. Null: start from the episode's start.
 */
async function resumePoint(records: readonly LogRecord[], snapshots: SnapshotStore, episode: string, note: (text: string) => void): Promise<{ key: string; snapshot: EpisodeSnapshot; at: number } | null> {
  const first = records[0]!.seq;
  const lastCommitted = records.findLast((r) => r.type === "tick.committed");
  /** Index of the snapshot's own `tick.committed` in the log, or -1. */
  const recordOf = (s: EpisodeSnapshot): number => {
    const at = s.seq - first;
    const r = records[at];
    return r !== undefined && s.episode === episode && r.seq === s.seq && r.type === "tick.committed" && r.tick === s.tick && r.hash === s.headHash && (r.payload as { stateHash?: unknown }).stateHash === s.stateHash ? at : -1;
  };
  // A damaged pointer (a file or KV entry that does not read as {key, tick}) is not needed to
  // resume: the log's committed ticks name the snapshots to look for. It stopped the run (exit 3);
  // it is left as it is (evidence) until the next snapshot put replaces it.
  const pointer = await snapshots.latest().then(
    (key) => ({ key, damaged: null }),
    (error: unknown) => {
      if (error instanceof SnapshotDamaged) return { key: null, damaged: error };
      throw error;
    },
  );
  const latest = pointer.key;
  // No pointer: no snapshot was kept (or the pointer was removed, which README says starts over).
  if (latest === null && pointer.damaged === null) return null;
  const snapshot = latest === null ? null : await snapshots.get(latest);
  if (snapshot !== null && recordOf(snapshot) >= 0) return { key: latest!, snapshot, at: recordOf(snapshot) };
  const where = (key: string): string => snapshotNamed(snapshots, key).where;
  const end = lastCommitted === undefined ? "the log holds no committed tick" : `its last committed tick is ${lastCommitted.tick}, seq ${lastCommitted.seq}`;
  const why =
    latest === null
      ? `the latest-snapshot pointer (${shownPath(pointer.damaged!.where)}) is damaged: ${pointer.damaged!.reason}; it is kept as it is until the next snapshot replaces it`
      : snapshot === null
        ? `the latest-snapshot pointer names ${where(latest)}, which is not stored`
        : lastCommitted === undefined || snapshot.seq > lastCommitted.seq
          ? `the latest snapshot, of tick ${snapshot.tick} (seq ${snapshot.seq}, ${where(latest)}), is past the log's end (${end}: the log was cut back after the snapshot was taken, by \`repair\` or a crash that lost its last ticks); it is kept, not used`
          : `the latest snapshot, of tick ${snapshot.tick} (${where(latest)}), does not match the log's record at seq ${snapshot.seq} (its tick, head hash or state hash differ); it is kept, not used`;
  // The newest snapshot the log holds the record of: snapshots are keyed by their tick's state hash.
  for (let at = records.length - 1; at >= 0; at--) {
    const r = records[at]!;
    if (r.type !== "tick.committed") continue;
    const key = (r.payload as { stateHash: string }).stateHash;
    if (key === latest || !(await snapshots.has(key))) continue;
    const candidate = await snapshots.get(key);
    if (candidate === null || recordOf(candidate) !== at) continue;
    note(`${why}; continuing after tick ${candidate.tick} from ${where(key)}`);
    return { key, snapshot: candidate, at };
  }
  note(`${why}; no snapshot of a tick the log holds is stored: continuing from the episode's start, checking the logged records`);
  return null;
}

const pick = (actors: Readonly<Record<string, unknown>>, definitions: readonly ActorDefinition[]) => Object.fromEntries(definitions.map((def) => [def.id, actors[def.id]]));

/** Hosts started beside the sequencer answer within a second or two: only a longer wait is told. */
const WAIT_NOTICE_MS = 5000;

/**
 * Waits until every remote actor answers on its subject; says once which ones it still waits for
 * after a few seconds (a silent 30 s looked like a hang), and names the missing ones on timeout.
 */
async function waitForActors(transport: Transport, routing: Routing, ids: readonly string[], timeoutMs: number, onWait: (missing: readonly string[], timeoutMs: number) => void): Promise<Map<string, unknown>> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const missing = new Set(ids);
  const answers = new Map<string, unknown>();
  let told = false;
  while (missing.size > 0) {
    await Promise.all(
      [...missing].map(async (id) => {
        try {
          answers.set(id, await transport.request<HostRequest, unknown>(routing.subjectOf(id), { kind: "ping" }, { timeoutMs: 2000 }));
          missing.delete(id);
        } catch {
          // not up yet
        }
      }),
    );
    if (missing.size === 0) return answers;
    if (Date.now() > deadline) {
      throw new ActorHostsAbsent({ missing: [...missing], seconds: Math.round(timeoutMs / 1000) });
    }
    if (!told && Date.now() - started >= Math.min(WAIT_NOTICE_MS, timeoutMs / 2)) {
      told = true;
      onWait([...missing].sort(), timeoutMs);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return answers;
}

/**
 * The hosts that take a round's deliveries in one request (DESIGN §7, docs/distributed.md): the
 * local one, and each remote host whose `ping` answer says it takes waves, with the actors it serves
 * (the same answer on each of their subjects). Remote actors whose host did not say so (an earlier
 * build) are asked one request per record.
 */
export function waveHostsOf(routing: Routing, pings: ReadonlyMap<string, unknown>, local: ActorHost | null): WaveHost[] {
  const hosts: WaveHost[] = [];
  if (local !== null && local.ids.length > 0) hosts.push({ subject: routing.subjectOf(local.ids[0]!), ids: local.ids });
  const groups = new Map<string, string[]>();
  for (const [id, answer] of pings) {
    const ping = answer as Partial<PingReply> | undefined;
    if (ping?.waves !== WAVE_PROTOCOL || !Array.isArray(ping.actors) || !ping.actors.includes(id)) continue;
    const key = JSON.stringify(ping.actors);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [id]);
    else group.push(id);
  }
  for (const ids of groups.values()) {
    const sorted = ids.sort();
    hosts.push({ subject: routing.subjectOf(sorted[0]!), ids: sorted });
  }
  return hosts;
}

/** Sets the remote actors to the state this run starts from: the episode's start, or a snapshot their hosts load. */
async function restoreRemote(transport: Transport, routing: Routing, ids: readonly string[], snapshot: string | null): Promise<void> {
  // A large town's snapshot is loaded from the Object Store and checked by each host: allow for it.
  await Promise.all([...bySubject(routing, ids)].map(([subject, group]) => transport.request<HostRequest, unknown>(subject, { kind: "restore", snapshot, ids: group } satisfies HostRequest, { timeoutMs: 120_000 })));
}

/**
 * The snapshot policy a run's options ask for: `--snapshot-every` when given, else the thresholds
 * of log growth and run time (defaults in snapshotPolicy.ts).
 */
export const snapshotPolicyOf = (o: Pick<CommonOptions, "snapshotEvery" | "snapshotLogBytes" | "snapshotMs">): SnapshotPolicy =>
  o.snapshotEvery !== undefined
    ? { every: o.snapshotEvery }
    : { ...(o.snapshotLogBytes === undefined ? {} : { logBytes: o.snapshotLogBytes }), ...(o.snapshotMs === undefined ? {} : { ms: o.snapshotMs }) };

/** Characters of a snapshot's serialised actors: its size near enough (the envelope is a few hundred bytes). */
const actorsBytes = (actors: Readonly<Record<string, SerializedActor>>): number => {
  let n = 0;
  for (const actor of Object.values(actors)) n += actor.json.length;
  return n;
};

async function runTicks(d: Drive, o: CommonOptions, sequencer: Sequencer, store: EventStore, snapshots: SnapshotStore, firstTick: number, actors: number, local: ActorHost | null, kept: { count: number; bytes: number; seconds: number }): Promise<string> {
  // Wall clock and log size choose the ticks that keep a snapshot: snapshots are no part of the
  // log, so the choice changes neither the log nor any state hash.
  const schedule = new SnapshotSchedule(snapshotPolicyOf(o), actors, () => store.bytesAppended?.() ?? 0, () => performance.now());
  let stateHash = "";
  const total = d.lastTick - d.firstTick + 1;
  // A snapshot is stored while the next ticks run (its actors are copied at its tick); at most one
  // is in flight, and the last is stored before the run ends.
  let storing: Promise<unknown> = Promise.resolve();
  for (let tick = firstTick; tick <= d.lastTick; tick++) {
    const result = await sequencer.runTick(tick);
    stateHash = result.stateHash;
    let stopping = false;
    if (o.stop !== undefined && tick < d.lastTick) {
      // A signal handler runs only when the event loop turns, which a run's chain of promises
      // never lets it do: without this turn a Ctrl-C was seen after the last tick, or never.
      await new Promise((resolve) => setImmediate(resolve));
      stopping = o.stop.aborted;
    }
    // A run stopped on request keeps the tick it stops after, as its last: `--resume` continues there.
    if (stopping || schedule.due(tick, d.firstTick, d.lastTick)) {
      const started = performance.now();
      await storing;
      await store.flush();
      const copied = await sequencer.snapshots();
      storing = snapshots.put({
        world: d.world.name, episode: d.episode, seed: d.seed, condition: d.condition, config: d.baseConfig,
        tick, seq: result.seq, headHash: store.head().hash, stateHash: result.stateHash, parts: result.parts, actors: copied,
      });
      storing.catch(() => undefined); // awaited (and thrown) at the next snapshot or the end
      const bytes = actorsBytes(copied);
      schedule.record(bytes, started);
      kept.count++;
      kept.bytes += bytes;
      kept.seconds += (performance.now() - started) / 1000;
    }
    if (local !== null) o.observer?.onTick?.(result, local);
    o.progress?.(tick - d.firstTick + 1, total);
    if (stopping) {
      await storing;
      throw new Interrupted(d.episode, tick, d.lastTick, String(o.stop!.reason));
    }
  }
  await storing;
  return stateHash;
}

/** Runs an episode on `backend` (default: the embedded one, an episode directory of files). */
export const runEpisode = async (o: RunOptions, backend: Backend = embeddedBackend): Promise<EpisodeResult> => {
  const world = worldNamed(o.world);
  const condition = o.condition ?? world.defaultCondition;
  if (!isSeed(o.seed)) throw new FlagValueInvalid({ flag: "--seed", expected: "seed", got: String(o.seed) });
  const baseConfig = resolveNewEpisodeConfig(world, o.config);
  const config = world.applyCondition(baseConfig, condition);
  const ticks = o.ticks ?? world.defaultTicks(config);
  if (!Number.isSafeInteger(ticks) || ticks <= 0) throw new FlagValueInvalid({ flag: "--ticks", expected: "positive-integer", got: String(ticks) });
  const episode = episodeIdOf(world.name, o.seed, condition);
  return drive(
    {
      world, episode, seed: o.seed, condition, baseConfig, config, definitions: world.actors(config, o.seed),
      firstSeq: 0, firstTick: 0, lastTick: ticks - 1,
      header: (actors) => ({ type: "episode.started", tick: 0, payload: { world: world.name, seed: o.seed, condition, config: baseConfig, actors, ticks } }),
    },
    o,
    backend,
  );
};

export interface ForkOptions extends CommonOptions {
  readonly parent: string;
  /** Fork after this tick has been committed in the parent. */
  readonly atTick: number;
  readonly condition: string;
  /** Total ticks of the child episode (default: the parent's). */
  readonly ticks?: number;
  /** Where the parent lives when not in an episode directory (e.g. JetStream); `parent` is then its episode id. */
  readonly parentWhere?: (episode: string) => Where;
}

export type ForkResult = EpisodeResult & { parent: string; atSeq: number };

/**
 * The child's total ticks (`--ticks`, or the parent's), refused when the world fixes its length or
 * the child would have no tick left after `atTick` (the CLI checks it from the log's header too,
 * before reading the whole log).
 */
export function forkTicks(header: Pick<EpisodeHeader, "world" | "ticks">, atTick: number, asked: number | undefined): number {
  if (asked !== undefined && header.world.lengthFixedBy !== undefined) throw new TicksFixed({ asked, why: header.world.lengthFixedBy(asked, header.ticks) });
  const ticks = asked ?? header.ticks;
  if (!Number.isSafeInteger(ticks) || ticks <= atTick + 1) {
    throw new ForkTicksTooFew({ atTick, ticks, asked: asked !== undefined });
  }
  return ticks;
}

/** Forks an episode on `backend` (default: the embedded one, episode directories of files). */
export const forkEpisode = async (o: ForkOptions, backend: Backend = embeddedBackend): Promise<ForkResult> => {
  const inFiles = o.parentWhere === undefined;
  const parentWhere = o.parentWhere?.(o.parent);
  const parentDir = parentWhere?.dir ?? resolveEpisodeDir(o.parent);
  const parentLayout = parentWhere ?? layoutOf(parentDir);
  const records = await backend.eventStores.read(parentLayout.log);
  const header = headerOf(records, inFiles ? relative(process.cwd(), parentLayout.log) : parentDir);
  const committed = records.find((r) => r.type === "tick.committed" && r.tick === o.atTick);
  if (committed === undefined) {
    const ticks = records.filter((r) => r.type === "tick.committed").map((r) => r.tick);
    // A fork's own log starts after its fork point: the ticks up to it are in its parent's log.
    const forked = records[0]?.type === "episode.forked" ? (records[0].payload as { parent: string; parentLog?: string; atTick: number }) : null;
    const earlier = forked !== null && o.atTick <= forked.atTick
      ? { forkedFrom: { parent: forked.parent, atTick: forked.atTick, forkThis: inFiles && forked.parentLog !== undefined ? shownPath(resolve(parentDir, forked.parentLog, "..")) : forked.parent } }
      : {};
    const committedTicks = ticks.length === 0 ? null : { first: ticks[0]!, last: ticks.at(-1)! };
    throw new ForkTickMissing({ atTick: o.atTick, committed: committedTicks, ...earlier });
  }
  const world = header.world;
  const config = world.applyCondition(header.baseConfig, o.condition);
  // Before the replay below, which for a large town takes a while.
  const ticks = forkTicks(header, o.atTick, o.ticks);
  const parentStateHash = (committed.payload as { stateHash: string }).stateHash;
  // The parent's snapshot at that tick, or a replay up to it when the run did not keep one.
  const parentSnapshots = backend.snapshotStores.at(parentLayout.snapshots);
  let base = await parentSnapshots.get(parentStateHash);
  const stored = base === null ? undefined : snapshotNamed(parentSnapshots, parentStateHash, `remove it, and the fork replays the parent to tick ${o.atTick} instead (the parent's log is not affected)`);
  if (base === null) base = await replayedSnapshot(parentDir, records, o.atTick, parentLayout.snapshots, backend);
  const episode = `${header.episode}~t${o.atTick}-${o.condition}`;
  const where = (o.where ?? filesWhere(o.dir))(episode);
  const dir = where.dir;
  // Checked and given the child's condition here, so the child starts from exactly this state.
  const host = restoreHost(world, base, config, header.seed, o.condition, stored);
  const baseActors = host.snapshots();
  host.stop();
  const result = await drive(
    {
      world, episode, seed: header.seed, condition: o.condition, baseConfig: header.baseConfig, config, definitions: world.actors(config, header.seed), base, baseActors,
      ...(committed.meta?.traceparent === undefined ? {} : { parentTraceparent: committed.meta.traceparent }),
      firstSeq: committed.seq, previousHash: committed.hash, firstTick: o.atTick + 1, lastTick: ticks - 1,
      header: (actors) => ({
        type: "episode.forked",
        tick: o.atTick,
        payload: {
          world: world.name, seed: header.seed, parent: header.episode, parentLog: inFiles ? relative(dir, parentLayout.log) : parentDir,
          atSeq: committed.seq, atTick: o.atTick, parentHash: committed.hash, parentStateHash,
          condition: o.condition, parentCondition: header.condition, config: header.baseConfig, actors, ticks,
        },
      }),
    },
    { ...o, where: () => where },
    backend,
  );
  return { ...result, parent: header.episode, atSeq: committed.seq };
};
