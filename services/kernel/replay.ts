// Replay and verification. A replay re-runs the episode's actors through the same Sequencer code
// as a live run, but against a ReplayStore that serves the logged records instead of appending:
// every record the actors would produce is compared with the one in the log, so a divergence is
// caught at the first differing record, and every `tick.committed` state hash is recomputed.
// Nothing calls a model: whatever a model said is itself a logged record.
import { basename, dirname, join, relative, resolve } from "node:path";
import { existsSync, readdirSync, statSync } from "node:fs";
import { FIRST_SEGMENT, scanLog, segmentFiles } from "../../infra/fileEventStore.ts";
import { shownPath } from "../views/text.ts";
import type { WorldDefinition } from "../../actors/actor.ts";
import { worldNamed } from "./worlds.ts";
import { canonicalJson } from "../../events/canonical.ts";
import { GENESIS_HASH, type Draft, type LogRecord } from "../../events/record.ts";
import { LogCorrupted, SnapshotDamaged } from "../../events/errors.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { distinctPrefixes } from "../../events/hashPrefixes.ts";
import type { AppendOptions, EventStore, Head } from "../../infra/eventStore.ts";
import { embeddedBackend, type Backend } from "../../infra/backend.ts";
import { FileSnapshotStore, type EpisodeSnapshot, type SnapshotStore } from "../../infra/snapshotStore.ts";
import type { Transport } from "../../infra/transport.ts";
import { ActorHost, partDigest, stateHashOf } from "../distributed/actorHost.ts";
import { diffValues } from "./diff.ts";
import { noLlmGateway, Sequencer, singleHost, type LlmResponder } from "./sequencer.ts";
import { LLM_GATEWAY_ID } from "../../events/llm.ts";
import { EpisodeNotStarted, ForkBaseMissing, ForkConditionFixed, LogEmpty, LogStartInvalid, NotAnEpisode, TickNotCommitted } from "./errors.ts";

export { isPathError, UsageError } from "./usageError.ts";

export const HOST_SUBJECT = "pt.local.host.embedded";

/** Where an episode's pieces live inside its directory. */
export const layoutOf = (dir: string) => ({ dir, log: join(dir, "log"), snapshots: join(dir, "snapshots"), trace: join(dir, "trace.jsonl") });

/** Accepts an episode directory, its log/ directory, or a segment file inside it. */
export function resolveEpisodeDir(path: string): string {
  const abs = resolve(path);
  if (existsSync(join(abs, "log"))) return abs;
  if (abs.endsWith("/log") || abs.endsWith("\\log")) return resolve(abs, "..");
  // Only a file in a log/ folder is a segment: a trace.jsonl or a results JSONL given here was
  // taken for one, its grandparent for the episode (verify said "not started", exit 0; fork "damaged", exit 3).
  if (abs.endsWith(".jsonl") && basename(resolve(abs, "..")) === "log") return resolve(abs, "..", "..");
  if (abs.endsWith(".jsonl") && existsSync(abs)) {
    const beside = existsSync(join(abs, "..", "log")) ? dirname(path) : undefined;
    throw new NotAnEpisode({ path, reason: "not-a-log-segment", ...(beside === undefined ? {} : { beside }) });
  }
  if (!existsSync(abs)) throw new NotAnEpisode({ path, reason: "missing" });
  throw new NotAnEpisode({ path, reason: "no-log-folder" });
}

/** A replay asked for a record past the log's end (replayWith tells the divergence it stands for). */
export class EndOfLog extends TaggedError {
  readonly _tag = "EndOfLog";
  readonly exitCode = ExitCode.internal;
  readonly seq: number;
  constructor(seq: number) {
    super(`log ends after seq ${seq}`);
    this.seq = seq;
  }
}

/** A recomputed tick state hash differs from the logged one (explained by replayWith). */
export class StateMismatch extends TaggedError {
  readonly _tag = "StateMismatch";
  readonly exitCode = ExitCode.internal;
  readonly logged: LogRecord;
  readonly draft: Draft;
  constructor(logged: LogRecord, draft: Draft) {
    super(`state hash mismatch at seq ${logged.seq}`);
    this.logged = logged;
    this.draft = draft;
  }
}

/** The replayed actors produced something other than what the log holds. */
export class Divergence extends TaggedError {
  readonly _tag = "Divergence";
  readonly exitCode = ExitCode.diverged;
  readonly seq: number;
  readonly tick: number;
  readonly details: string[];
  /** What differs, in a line (the message after its seq and tick). */
  readonly summary: string;
  constructor(seq: number, tick: number, summary: string, details: string[]) {
    super(`divergence at seq ${seq} (tick ${tick}): ${summary}`);
    this.summary = summary;
    this.seq = seq;
    this.tick = tick;
    this.details = details;
  }
}

/** An EventStore that "appends" by checking each draft against the next logged record. */
export class ReplayStore implements EventStore {
  readonly episode: string;
  readonly location: string;
  private pos: number;
  private last: Head;
  private readonly records: readonly LogRecord[];

  constructor(records: readonly LogRecord[], start: number, location: string) {
    this.records = records;
    this.pos = start;
    this.location = location;
    this.episode = records[0]?.episode ?? "";
    const prev = records[start - 1];
    this.last = prev === undefined ? { seq: -1, hash: GENESIS_HASH } : { seq: prev.seq, hash: prev.hash };
  }

  get exhausted(): boolean {
    return this.pos >= this.records.length;
  }

  get remaining(): number {
    return this.records.length - this.pos;
  }

  /** Index in the records of the next one a draft is checked against (those before it are replayed). */
  get position(): number {
    return this.pos;
  }

  head(): Head {
    return this.last;
  }

  async append(drafts: readonly Draft[], _options: AppendOptions): Promise<readonly LogRecord[]> {
    const out: LogRecord[] = [];
    for (const draft of drafts) {
      const logged = this.records[this.pos];
      if (logged === undefined) throw new EndOfLog(this.last.seq);
      const same =
        logged.type === draft.type &&
        logged.from === draft.from &&
        logged.tick === draft.tick &&
        logged.cause === draft.cause &&
        canonicalJson(logged.to) === canonicalJson(draft.to) &&
        JSON.stringify(logged.payload) === canonicalJson(draft.payload);
      if (!same) {
        if (logged.type === "tick.committed" && draft.type === "tick.committed") throw new StateMismatch(logged, draft);
        const loggedView = { type: logged.type, from: logged.from, to: logged.to, tick: logged.tick, cause: logged.cause, payload: logged.payload };
        const replayedView = { type: draft.type, from: draft.from, to: draft.to, tick: draft.tick, cause: draft.cause, payload: draft.payload };
        throw new Divergence(
          logged.seq,
          logged.tick,
          `the log has '${logged.type}' from ${logged.from}, the replay produced '${draft.type}' from ${draft.from}`,
          diffValues(loggedView, replayedView).map((line) => `logged → replayed  ${line}`),
        );
      }
      out.push(logged);
      this.pos++;
      this.last = { seq: logged.seq, hash: logged.hash };
    }
    return out;
  }

  async commit(): Promise<void> {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

/**
 * Continues a partial log: drafts are first checked against the records already logged from
 * `start` on (as a replay would), and only those beyond the logged end are appended to `real`.
 */
export class ResumeStore implements EventStore {
  readonly episode: string;
  readonly location: string;
  private readonly real: EventStore;
  private readonly logged: ReplayStore;

  constructor(real: EventStore, records: readonly LogRecord[], start: number) {
    this.real = real;
    this.episode = real.episode;
    this.location = real.location;
    this.logged = new ReplayStore(records, start, real.location);
  }

  /** True while the run is still reproducing records that are already in the log. */
  get reproducing(): boolean {
    return !this.logged.exhausted;
  }

  head(): Head {
    return this.logged.exhausted ? this.real.head() : this.logged.head();
  }

  async append(drafts: readonly Draft[], options: AppendOptions): Promise<readonly LogRecord[]> {
    if (this.logged.exhausted) return this.real.append(drafts, { ...options, expectedSeq: this.real.head().seq });
    const n = Math.min(drafts.length, this.logged.remaining);
    let checked: readonly LogRecord[];
    try {
      checked = await this.logged.append(drafts.slice(0, n), options);
    } catch (error) {
      // The logged tail holds another state than this run reproduces (a tick.committed altered and
      // rehashed, say): the divergence `verify` reports (exit 1), not an internal error.
      if (error instanceof StateMismatch) throw stateMismatchDivergence(error.logged, error.draft, ["the logged tail run --resume checks, from the snapshot it continued from, holds another state here than the run reproduces; `probetown verify` on the episode says more"]);
      throw error;
    }
    if (n === drafts.length) return checked;
    const meta = options.meta;
    const appended = await this.real.append(drafts.slice(n), { expectedSeq: this.real.head().seq, ...(meta === undefined ? {} : { meta: (d: Draft, i: number) => meta(d, i + n) }) });
    return [...checked, ...appended];
  }

  commit(): Promise<void> {
    return this.real.commit();
  }

  flush(): Promise<void> {
    return this.real.flush();
  }

  /** The records reproduced are the log's already: only those appended after them grow it. */
  bytesAppended(): number {
    return this.real.bytesAppended?.() ?? 0;
  }

  close(): Promise<void> {
    return this.real.close();
  }
}

/**
 * Serves each `llm.requested` the answer logged for it (the gateway's record caused by the
 * request's seq), so a replay never calls a model; requests the log holds no answer for go to
 * `live` (a resumed run past its logged end), or fail with `no_backend` (a replay).
 */
export function loggedLlm(records: readonly LogRecord[], live?: LlmResponder): LlmResponder {
  const byCause = new Map<number, LogRecord>();
  for (const r of records) if (r.from === LLM_GATEWAY_ID && r.cause !== null && (r.type === "llm.completed" || r.type === "llm.failed")) byCause.set(r.cause, r);
  return {
    respond: async (request, telemetry) => {
      const logged = byCause.get(request.seq);
      if (logged !== undefined) return { type: logged.type as "llm.completed" | "llm.failed", payload: logged.payload };
      return (live ?? noLlmGateway).respond(request, telemetry);
    },
  };
}

export interface EpisodeHeader {
  readonly world: WorldDefinition;
  readonly kind: "started" | "forked";
  readonly episode: string;
  readonly seed: number;
  readonly condition: string;
  readonly baseConfig: unknown;
  readonly config: unknown;
  readonly ticks: number;
  readonly firstTick: number;
  readonly record: LogRecord;
  readonly payload: Record<string, unknown>;
}

/** Why a log folder without a record, and not an episode never started (`notStarted`), is damaged. */
export const NO_RECORDS = "holds no records (its segments are missing, or the run never wrote one)";

/**
 * An episode directory whose log holds no record because its episode never started, or null.
 * A run (a sweep's or an experiment's too) stopped before its first record was whole (killed, or
 * a full disk: the store cuts the part-written batch back) leaves its first segment empty, or no
 * segment when the disk refused even that; `run --resume` and the same sweep or experiment start
 * it anew. It is not damage: nothing was written to lose. A log folder whose segments are gone
 * while the episode's snapshots remain is damaged (NO_RECORDS). Answers `{ why, how }`: what the
 * folder holds, and how to run the episode.
 */
export function notStarted(dir: string): { readonly why: string; readonly how: string } | null {
  const { log, snapshots } = layoutOf(dir);
  const segments = segmentFiles(log);
  if (segments.some((file) => statSync(file).size > 0)) return null;
  if (segments.length === 0 && existsSync(snapshots) && readdirSync(snapshots).length > 0) return null;
  const why =
    segments.length === 0
      ? "its log/ folder holds no segment: its run stopped before the episode's first record (killed, or a full disk), or the segment files were removed"
      : "its log holds no record yet: its run stopped before the episode's first record (killed, or a full disk)";
  // A fork's log starts at its parent's seq; a fork is not resumed, it is made again.
  const fork = segments.length > 0 && basename(segments[0]!) !== FIRST_SEGMENT;
  const how = fork
    ? `a fork's, which is not resumed: remove ${shownPath(dir)} and fork again`
    : `the command that made it starts it from the beginning: \`probetown run … --resume --log ${shownPath(dir)}\` with that run's flags, or the same sweep or experiment again`;
  return { why, how };
}

export function headerOf(records: readonly LogRecord[], file: string): EpisodeHeader {
  const first = records[0];
  if (first === undefined) {
    // A JetStream episode id with no records is most often a typo, or another --namespace.
    // A log folder with no record is damaged (as `verify` says); an empty JetStream id is a typo.
    if (!file.startsWith("jetstream:")) throw new LogCorrupted({ file, line: 1, seq: null, reason: NO_RECORDS });
    throw new LogEmpty({ file, hint: "check-id-and-namespace" });
  }
  if (first.type !== "episode.started" && first.type !== "episode.forked") {
    throw new LogStartInvalid({ file, seq: first.seq, found: first.type });
  }
  const p = first.payload as Record<string, unknown>;
  const world = worldNamed(String(p.world));
  const baseConfig = world.resolveConfig(p.config);
  const condition = String(p.condition);
  return {
    world,
    kind: first.type === "episode.started" ? "started" : "forked",
    episode: first.episode,
    seed: Number(p.seed),
    condition,
    baseConfig,
    config: world.applyCondition(baseConfig, condition),
    ticks: Number(p.ticks),
    firstTick: first.type === "episode.started" ? 0 : Number(p.atTick) + 1,
    record: first,
    payload: p,
  };
}

/** Builds the actor host an episode starts from: fresh actors, or a fork's base snapshot. */
export async function hostForHeader(header: EpisodeHeader, snapshots: SnapshotStore, dir?: string): Promise<ActorHost> {
  const definitions = header.world.actors(header.config, header.seed);
  if (header.kind === "started") return new ActorHost(header.world, definitions);
  const key = String(header.payload.parentStateHash);
  const snapshot = (await snapshots.get(key)) ?? (dir === undefined ? null : await baseFromParent(header, dir));
  if (snapshot === null || typeof snapshot === "string") throw new ForkBaseMissing({ snapshots: shownPath(snapshots.location), key, ...(snapshot === null ? {} : { detail: snapshot }) });
  return restoreHost(header.world, snapshot, header.config, header.seed, header.condition, snapshotNamed(snapshots, key));
}

/**
 * A fork's base rebuilt from its parent's log in files (a replay to the fork point), when its
 * snapshots/ folder lost it: snapshots look like a cache, and a fork without its base could not be
 * replayed, verified, inspected or forked. Else why it cannot be: the parent's log is not there,
 * or ends before the fork point (cut back after the fork was made), or gives another state there.
 */
async function baseFromParent(header: EpisodeHeader, dir: string): Promise<EpisodeSnapshot | string> {
  const parentLog = String(header.payload.parentLog);
  const missing = `its parent's log (${parentLog}) is not there to rebuild it from`;
  if (parentLog.startsWith("jetstream:")) return missing;
  const log = resolve(dir, parentLog);
  if (segmentFiles(log).length === 0) return missing;
  const parentDir = resolve(log, "..");
  const atSeq = Number(header.payload.atSeq);
  const records = scanLog(log, { untilSeq: atSeq }).records;
  const last = records.at(-1);
  if (last === undefined || last.seq < atSeq) {
    return `its parent's log (${parentLog}) ends ${last === undefined ? "before its first record" : `at seq ${last.seq}, tick ${last.tick}`}, before the fork point (seq ${atSeq}, tick ${String(header.payload.atTick)}): it lost its last records after the fork was made (a crash, and \`repair\` cutting what it tore), so the base cannot be rebuilt from it`;
  }
  const base = await replayedSnapshot(parentDir, records, Number(header.payload.atTick), layoutOf(parentDir).snapshots);
  return base.stateHash === header.payload.parentStateHash ? base : `its parent's log (${parentLog}) replayed to the fork point gives another state (${base.stateHash.slice(0, 12)}…), so the base cannot be rebuilt from it`;
}

/**
 * The snapshot of an episode's state after `tick`, rebuilt from its nearest stored snapshot before
 * `tick` (or its start) by replaying its records (`snapshots`: its snapshot store, where a fork's
 * own base is): a fork's base its parent did not keep, for `fork` and for a fork that lost it
 * (`baseFromParent`).
 */
export const replayedSnapshot = async (dir: string, records: readonly LogRecord[], tick: number, snapshots: string, backend: Backend = embeddedBackend): Promise<EpisodeSnapshot> => {
  const replay = await replayRecords(dir, records, { toTick: tick, snapshots, fromSnapshot: true }, backend);
  try {
    return snapshotOfReplay(replay);
  } finally {
    replay.host.stop();
  }
};

/** Where a stored snapshot is, for a damaged one's message, and what to do about it. */
export interface SnapshotNamed {
  readonly where: string;
  readonly remedy?: string;
}

/**
 * A snapshot of `store` by its file (README: a damaged snapshot's file is named) and what to do
 * about it (`remedy`: removing the file); in other stores by its key, as before.
 */
export const snapshotNamed = (store: SnapshotStore, key: string, remedy?: string): SnapshotNamed =>
  store instanceof FileSnapshotStore ? { where: shownPath(join(store.location, `${key}.json`)), ...(remedy === undefined ? {} : { remedy }) } : { where: `snapshot ${key.slice(0, 12)}…` };

/**
 * Restores a snapshot, checking it against its state hash, then gives the actors the given
 * condition's parameters when it differs from the snapshot's.
 */
export function restoreHost(world: WorldDefinition, snapshot: EpisodeSnapshot, config: unknown, seed: number, condition: string, named?: SnapshotNamed): ActorHost {
  return new ActorHost(world, world.actors(config, seed), { restore: snapshotActors(world, snapshot, config, seed, condition, named) });
}

/**
 * A snapshot's persisted actors, checked (each actor's state, and the whole against its state
 * hash) and given `condition`: what a host restores, all of them or its own share (a remote host).
 */
export function snapshotActors(world: WorldDefinition, snapshot: EpisodeSnapshot, config: unknown, seed: number, condition: string, named?: SnapshotNamed): Readonly<Record<string, unknown>> {
  const damaged = (reason: string) => new SnapshotDamaged({ where: named?.where ?? `snapshot ${snapshot.stateHash.slice(0, 12)}…`, reason: named?.remedy === undefined ? reason : `${reason}; ${named.remedy}` });
  const parts: Record<string, string> = {};
  for (const [id, persisted] of Object.entries(snapshot.actors)) {
    const s = persisted as { value: unknown; context: unknown };
    const problem = world.checkSnapshot?.(id, s.context) ?? null;
    if (problem !== null) throw damaged(problem);
    parts[id] = partDigest(world, id, s);
  }
  if (stateHashOf(snapshot.tick, parts) !== snapshot.stateHash) throw damaged("does not hash to its key: it was altered");
  let actors = snapshot.actors;
  if (condition !== snapshot.condition) {
    // Restored actors keep the parameters they were created with: a world that cannot hand them
    // another condition's would run the parent's condition under the child's name.
    if (world.reconfigure === undefined) throw new ForkConditionFixed({ world: world.name, condition: snapshot.condition });
    const changed: Record<string, unknown> = {};
    for (const [id, persisted] of Object.entries(actors)) {
      const s = persisted as { context: unknown };
      changed[id] = { ...s, context: world.reconfigure(id, s.context, config, seed) };
    }
    actors = changed;
  }
  return actors;
}

export interface ReplayOptions {
  /** Stop after this tick is committed (default: the end of the log). */
  readonly toTick?: number;
  /**
   * After each committed tick: the host, and the log's records that tick replayed (so a view can be
   * drawn tick by tick, keeping nothing: `inspect` of a 1,000-agent town over days).
   */
  readonly onTick?: (tick: number, host: ActorHost, records: readonly LogRecord[]) => void;
  /** Once the log's header is read and its actors are built, before the first tick. */
  readonly onHeader?: (header: EpisodeHeader, host: ActorHost) => void;
  /** After each tick: ticks replayed so far and how many the replay will take (to --to-tick, or the episode's end). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Location in the backend's snapshot stores (default: the episode directory's snapshots/). */
  readonly snapshots?: string;
  /**
   * Starts from the newest stored snapshot of a tick up to `toTick` (or the log's last) that the log
   * holds the record of, and replays only the records after it (`fork`: a run keeps snapshots at
   * some ticks only); without one, from the episode's start. A damaged one is refused (exit 3), as
   * the snapshot of the tick itself is. The records before it are not replayed: only a replay from
   * the start checks the whole log (`verify`).
   */
  readonly fromSnapshot?: boolean;
  /**
   * Replays the records of a tick the log ends part-way through too (`verify` checks them). The
   * actors are then past the last committed tick: their state is no tick's, to show or snapshot.
   */
  readonly partialTick?: boolean;
  /**
   * Replays a span of the log from a state already restored (a parallel verify's worker, from a
   * checked snapshot): `records` then begin with that state's `tick.committed`, and `header` is
   * the episode's, read from its log.
   */
  readonly from?: { readonly header: EpisodeHeader; readonly host: ActorHost; readonly tick: number };
}

export interface ReplayResult {
  readonly header: EpisodeHeader;
  readonly records: readonly LogRecord[];
  readonly host: ActorHost;
  readonly lastTick: number;
  readonly lastSeq: number;
  readonly stateHash: string | null;
  readonly seconds: number;
  /** Set when the log stops part-way through a tick (an interrupted run). */
  readonly incompleteTick: boolean;
}

/** The episode snapshot of a replay's last committed tick (for `fork` and `replay --snapshot`). */
export function snapshotOfReplay(result: ReplayResult): EpisodeSnapshot {
  const committed = result.records.find((r) => r.type === "tick.committed" && r.tick === result.lastTick);
  if (committed === undefined) {
    const h = result.header;
    // A fork's log starts after its base: the state after its fork tick is its parent's (`replay
    // --snapshot` of a file fork serves the base snapshot kept with it, when it is there).
    const base = h.kind === "forked" && result.lastTick === h.firstTick - 1 ? { forkBaseOf: String(h.payload.parent) } : {};
    throw new TickNotCommitted({ episode: h.episode, tick: result.lastTick, ...base });
  }
  const payload = committed.payload as { stateHash: string; parts: Record<string, string> };
  const h = result.header;
  return {
    world: h.world.name, episode: h.episode, seed: h.seed, condition: h.condition, config: h.baseConfig,
    tick: result.lastTick, seq: committed.seq, headHash: committed.hash, stateHash: payload.stateHash, parts: payload.parts,
    actors: result.host.snapshots(),
  };
}

/** Reads, checks and replays an episode directory (embedded default). Rejects with log errors and Divergence. */
export const replayEpisode = async (path: string, options: ReplayOptions = {}): Promise<ReplayResult> => {
  const dir = resolveEpisodeDir(path);
  // Not damage (`verify` says the same, exit 0): there is simply nothing to replay yet.
  const unstarted = notStarted(dir);
  if (unstarted !== null) throw new EpisodeNotStarted({ dir: shownPath(dir), why: unstarted.why, how: unstarted.how });
  return replayWhere(layoutOf(dir), options);
};

/** Where a replay reads: the log and snapshot locations in the backend's stores, and a name for messages. */
export interface ReplaySource {
  readonly dir: string;
  readonly log: string;
  readonly snapshots: string;
}

/** Reads, checks and replays an episode from the backend's stores (default: files; or JetStream). */
export const replayWhere = async (source: ReplaySource, options: ReplayOptions = {}, backend: Backend = embeddedBackend): Promise<ReplayResult> => {
  const records = await backend.eventStores.read(source.log);
  return replayRecords(source.dir, records, { snapshots: source.snapshots, ...options }, backend);
};

/** Replays records already read, on the backend's snapshot store and a transport of its own (closed when it ends). */
export const replayRecords = async (dir: string, records: readonly LogRecord[], options: ReplayOptions = {}, backend: Backend = embeddedBackend): Promise<ReplayResult> => {
  const snapshots = backend.snapshotStores.at(options.snapshots ?? layoutOf(dir).snapshots);
  const transport = backend.transports.open();
  try {
    return await replayWith(dir, records, options, snapshots, transport);
  } finally {
    await transport.close();
  }
};

async function replayWith(dir: string, records: readonly LogRecord[], options: ReplayOptions, snapshots: SnapshotStore, transport: Transport): Promise<ReplayResult> {
  const started = performance.now();
  const header = options.from?.header ?? headerOf(records, records[0]?.episode ?? dir);
  // A log that ends part-way through a tick (an interrupted run) is replayed to its last committed
  // tick: replaying the rest would leave the actors in a state between two ticks, which `--state`
  // printed as the committed tick's and `--snapshot` kept under its hash (a snapshot that fails its
  // check, and as the latest one stopped `run --resume` and `fork`).
  const lastCommitted = records.findLast((r) => r.type === "tick.committed")?.tick ?? (options.from === undefined ? header.firstTick : options.from.tick + 1) - 1;
  const from = options.from === undefined && options.fromSnapshot === true ? await nearestSnapshot(header, records, Math.min(options.toTick ?? Infinity, lastCommitted), snapshots) : null;
  const host = options.from?.host ?? from?.host ?? (await hostForHeader(header, snapshots, dir));
  const store = new ReplayStore(records, from === null ? 1 : from.at + 1, dir);
  host.serve(transport, HOST_SUBJECT);
  options.onHeader?.(header, host);
  const sequencer = new Sequencer({ world: header.world, config: header.config, seed: header.seed, store, transport, routing: singleHost(HOST_SUBJECT), actorIds: host.ids, stampTime: false, llm: loggedLlm(records) });
  let tick = options.from !== undefined ? options.from.tick + 1 : from !== null ? from.tick + 1 : header.firstTick;
  let lastTick = tick - 1;
  let stateHash: string | null = options.from !== undefined ? String((records[0]!.payload as { stateHash?: unknown }).stateHash) : from !== null ? from.stateHash : header.kind === "forked" ? String(header.payload.parentStateHash) : null;
  let incompleteTick = false;
  let replayed = store.position;
  const until = options.partialTick === true ? (options.toTick ?? Infinity) : Math.min(options.toTick ?? Infinity, lastCommitted);
  while (!store.exhausted && tick <= until) {
    try {
      const result = await sequencer.runTick(tick);
      stateHash = result.stateHash;
    } catch (error) {
      if (error instanceof EndOfLog) {
        incompleteTick = true;
        break;
      }
      if (error instanceof StateMismatch) throw await stateDivergence(header, host, snapshots, error.logged, error.draft);
      throw error;
    }
    if (options.onTick !== undefined) {
      options.onTick(tick, host, records.slice(replayed, store.position));
      replayed = store.position;
    }
    options.onProgress?.(tick - header.firstTick + 1, Math.max(tick, Math.min(options.toTick ?? Infinity, header.ticks - 1)) - header.firstTick + 1);
    lastTick = tick;
    tick++;
  }
  if (!store.exhausted && (options.toTick === undefined || options.toTick > lastTick) && options.partialTick !== true) incompleteTick = true;
  return {
    header,
    records,
    host,
    lastTick,
    lastSeq: store.head().seq,
    stateHash,
    seconds: (performance.now() - started) / 1000,
    incompleteTick,
  };
}

type TickCommitted = { stateHash: string; parts: Record<string, string> };

/**
 * The newest stored snapshot of a committed tick up to `tick` that the log holds the record of
 * (same tick, seq and head hash), restored and checked: its host, the index of its record in
 * `records`, its tick and state hash; null when none is stored. A damaged one is refused, as the
 * snapshot of the tick itself is (SnapshotDamaged, exit 3, naming what removing it does), never
 * passed over in silence.
 */
export async function nearestSnapshot(header: EpisodeHeader, records: readonly LogRecord[], tick: number, snapshots: SnapshotStore): Promise<{ host: ActorHost; at: number; tick: number; stateHash: string } | null> {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    if (record.type !== "tick.committed" || record.tick > tick) continue;
    const key = (record.payload as TickCommitted).stateHash;
    if (!(await snapshots.has(key))) continue;
    const named = snapshotNamed(snapshots, key, `remove it, and the replay to tick ${tick} starts from an earlier snapshot or the episode's start (the log is not affected)`);
    const snapshot = await snapshots.get(key).catch((error: unknown) => {
      if (error instanceof SnapshotDamaged && named.remedy !== undefined) throw new SnapshotDamaged({ where: error.where, reason: `${error.reason}; ${named.remedy}` });
      throw error;
    });
    if (snapshot === null || snapshot.tick !== record.tick || snapshot.seq !== record.seq || snapshot.headHash !== record.hash) continue;
    return { host: restoreHost(header.world, snapshot, header.config, header.seed, header.condition, named), at: i, tick: record.tick, stateHash: key };
  }
  return null;
}

/** The actors whose state part differs between a logged tick.committed and the replay's. */
const differingActors = (recorded: TickCommitted, replayed: TickCommitted): string[] =>
  Object.keys({ ...recorded.parts, ...replayed.parts }).filter((id) => recorded.parts?.[id] !== replayed.parts?.[id]).sort();

/** A tick.committed whose state differs from the replay's, as a Divergence: which actors differ (`extra`: further lines). */
function stateMismatchDivergence(logged: LogRecord, draft: Draft, extra: readonly string[] = []): Divergence {
  const recorded = logged.payload as TickCommitted;
  const replayed = draft.payload as TickCommitted;
  const differing = differingActors(recorded, replayed);
  // With every part equal, the recorded hash is not the hash of its own parts: it was written so.
  const ownHash = stateHashOf(logged.tick, recorded.parts ?? {});
  const [ownShown, recordedOwn] = distinctPrefixes(ownHash, String(recorded.stateHash));
  const none = ownHash !== recorded.stateHash ? `(none: the recorded stateHash ${recordedOwn} is not the hash of the recorded parts, ${ownShown}: the record was altered and rehashed)` : "(none: the actor set differs)";
  const [a, b] = distinctPrefixes(String(recorded.stateHash), String(replayed.stateHash));
  return new Divergence(logged.seq, logged.tick, `tick ${logged.tick} state hash differs (recorded ${a}, replayed ${b})`, [`actors whose state differs: ${differing.join(", ") || none}`, ...extra]);
}

/** Explains a state hash mismatch: which actors differ and, when the run kept a snapshot of that tick, how. */
async function stateDivergence(header: EpisodeHeader, host: ActorHost, snapshots: SnapshotStore, logged: LogRecord, draft: Draft): Promise<Divergence> {
  const recorded = logged.payload as TickCommitted;
  const base = stateMismatchDivergence(logged, draft);
  const differing = differingActors(recorded, draft.payload as TickCommitted);
  const details: string[] = [...base.details];
  const snapshot = await snapshots.get(recorded.stateHash).catch(() => null);
  for (const id of differing) {
    const view = (ctx: unknown) => (header.world.diffView ?? header.world.hashView)(id, ctx);
    const now = view(host.contextOf(id));
    const before = snapshot?.actors[id] as { context: unknown } | undefined;
    if (before === undefined) {
      details.push(`${id}: no snapshot of the recorded state at tick ${logged.tick}; replayed state: ${short(canonicalJson(now), 300)}`);
    } else {
      details.push(...diffValues(view(before.context), now).map((line) => `${id}.${line}   (recorded → replayed)`));
    }
  }
  return new Divergence(base.seq, base.tick, base.summary, details);
}

const short = (text: string, n: number): string => (text.length > n ? `${text.slice(0, n - 3)}...` : text);
