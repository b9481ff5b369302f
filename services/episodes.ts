// Running and forking episodes on the embedded default: file event store, in-process transport,
// one actor host, file snapshots. (The distributed variants swap these adapters, not this code.)
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { WorldDefinition } from "../actors/actor.ts";
import { worldNamed } from "../actors/worlds.ts";
import { Effect } from "effect";
import type { LogRecord } from "../events/record.ts";
import type { EventStore, FsyncPolicy } from "../infra/eventStore.ts";
import { Embedded, EventStores, SnapshotStores, Tracing, Transports, type EmbeddedServices } from "../infra/layers.ts";
import type { EpisodeSnapshot, SnapshotStore } from "../infra/snapshotStore.ts";
import type { TelemetryConfig } from "../infra/telemetry.ts";
import { ActorHost } from "./actorHost.ts";
import { headerOf, HOST_SUBJECT, layoutOf, replayRecordsEffect, resolveEpisodeDir, restoreHost, snapshotOfReplay, UsageError } from "./replay.ts";
import { Sequencer, SEQUENCER_ID, type TickResult } from "./sequencer.ts";

export interface EpisodeObserver {
  /** Called after every committed tick with the live host (read-only use). */
  onTick?(result: TickResult, host: ActorHost): void;
  onRecord?(record: LogRecord): void;
}

export interface CommonOptions {
  /** Episode directory; default runs/<episode> (suffixed -2, -3 … if taken). */
  readonly dir?: string;
  readonly trace?: TelemetryConfig | "default";
  /** Snapshot every N ticks (0: only the last tick). Default: every tick for ≤ 64 actors, else 0. */
  readonly snapshotEvery?: number;
  readonly fsync?: FsyncPolicy;
  readonly observer?: EpisodeObserver;
  readonly progress?: (done: number, total: number) => void;
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
  readonly dir: string;
  readonly logDir: string;
  readonly traceDescription: string;
  readonly traceFile: string | null;
  readonly firstTick: number;
  readonly ticks: number;
  readonly records: number;
  readonly seconds: number;
  readonly stateHash: string;
  readonly actors: number;
}

function chooseDir(explicit: string | undefined, episode: string): string {
  if (explicit !== undefined) {
    const dir = resolve(explicit);
    if (existsSync(join(dir, "log"))) throw new UsageError(`--log ${explicit}: already holds an episode log; choose another directory or remove it`);
    return dir;
  }
  const base = resolve("runs", episode);
  if (!existsSync(base)) return base;
  for (let n = 2; ; n++) if (!existsSync(`${base}-${n}`)) return `${base}-${n}`;
}

/** This build's version, recorded in each episode header's meta (so a replay divergence can be told apart from a code change). */
export const PROBETOWN_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

export const episodeIdOf = (world: string, seed: number, condition: string): string => `${world}-s${seed}-${condition}`;

interface Drive {
  readonly world: WorldDefinition;
  readonly episode: string;
  readonly seed: number;
  readonly condition: string;
  readonly baseConfig: unknown;
  readonly config: unknown;
  readonly host: ActorHost;
  readonly dir: string;
  readonly firstSeq: number;
  readonly previousHash?: string;
  readonly firstTick: number;
  readonly lastTick: number;
  readonly header: (actorIds: readonly string[]) => { type: string; payload: unknown; tick: number };
  readonly base?: EpisodeSnapshot;
}

/** Runs an episode's ticks on whatever stores, transport and tracing the layer provides. */
const drive = (d: Drive, o: CommonOptions): Effect.Effect<EpisodeResult, Error, EmbeddedServices> =>
  Effect.gen(function* () {
    const started = performance.now();
    const layout = layoutOf(d.dir);
    const traceConfig: TelemetryConfig = o.trace === undefined || o.trace === "default" ? { exporter: "jsonl", file: layout.trace } : o.trace;
    // Acquired in this order, released in reverse when the scope closes (also on failure):
    // the trace is flushed last, after the log is closed.
    const telemetry = yield* (yield* Tracing).open(traceConfig);
    const previous = d.previousHash === undefined ? {} : { previousHash: d.previousHash };
    const store = yield* (yield* EventStores).create(layout.log, { episode: d.episode, fsync: o.fsync ?? "commit", firstSeq: d.firstSeq, ...previous });
    const snapshots = (yield* SnapshotStores).at(layout.snapshots);
    const transport = yield* (yield* Transports).open();
    d.host.serve(transport, HOST_SUBJECT);
    const sequencer = new Sequencer({
      world: d.world,
      config: d.config,
      store,
      transport,
      hostSubject: HOST_SUBJECT,
      actorIds: d.host.ids,
      ...(telemetry.enabled ? { tracer: telemetry.tracer } : {}),
    });
    const stateHash = yield* Effect.tryPromise({ try: () => runTicks(d, o, sequencer, store, snapshots), catch: (e) => e as Error });
    return {
      episode: d.episode,
      dir: d.dir,
      logDir: layout.log,
      traceDescription: telemetry.description,
      traceFile: traceConfig.exporter === "jsonl" ? (traceConfig.file ?? null) : null,
      firstTick: d.firstTick,
      ticks: d.lastTick - d.firstTick + 1,
      records: sequencer.recordsAppended,
      seconds: (performance.now() - started) / 1000,
      stateHash,
      actors: d.host.ids.length,
    };
  }).pipe(Effect.scoped);

async function runTicks(d: Drive, o: CommonOptions, sequencer: Sequencer, store: EventStore, snapshots: SnapshotStore): Promise<string> {
  const every = o.snapshotEvery ?? (d.host.ids.length <= 64 ? 1 : 0);
  let stateHash = "";
  sequencer.startTrace(d.episode, { "probetown.world": d.world.name, "probetown.seed": d.seed, "probetown.condition": d.condition });
  const h = d.header(d.host.ids);
  await sequencer.append([{ type: h.type, from: SEQUENCER_ID, to: null, payload: h.payload, tick: h.tick, cause: null }], undefined, { probetown: PROBETOWN_VERSION });
  if (d.base !== undefined) await snapshots.put(d.base);
  const total = d.lastTick - d.firstTick + 1;
  for (let tick = d.firstTick; tick <= d.lastTick; tick++) {
    const result = await sequencer.runTick(tick);
    stateHash = result.stateHash;
    if (tick === d.lastTick || (every > 0 && (tick - d.firstTick + 1) % every === 0)) {
      await snapshots.put({
        world: d.world.name, episode: d.episode, seed: d.seed, condition: d.condition, config: d.baseConfig,
        tick, seq: result.seq, headHash: store.head().hash, stateHash: result.stateHash, parts: result.parts, actors: d.host.snapshots(),
      });
    }
    o.observer?.onTick?.(result, d.host);
    o.progress?.(tick - d.firstTick + 1, total);
  }
  sequencer.endTrace();
  return stateHash;
}

/** Runs an episode on the embedded default. */
export const runEpisode = (o: RunOptions): Promise<EpisodeResult> => Effect.runPromise(runEpisodeEffect(o).pipe(Effect.provide(Embedded)));

export const runEpisodeEffect = (o: RunOptions): Effect.Effect<EpisodeResult, Error, EmbeddedServices> =>
  Effect.suspend(() => {
    const world = worldNamed(o.world);
    const condition = o.condition ?? "baseline";
    if (!Number.isSafeInteger(o.seed)) throw new UsageError(`--seed: expected an integer, got ${o.seed}`);
    const baseConfig = world.resolveConfig(o.config);
    const config = world.applyCondition(baseConfig, condition);
    const ticks = o.ticks ?? world.defaultTicks(config);
    if (!Number.isSafeInteger(ticks) || ticks <= 0) throw new UsageError(`--ticks: expected a positive integer, got ${ticks}`);
    const episode = episodeIdOf(world.name, o.seed, condition);
    const host = new ActorHost(world, world.actors(config, o.seed));
    return drive(
      {
        world, episode, seed: o.seed, condition, baseConfig, config, host,
        dir: chooseDir(o.dir, episode), firstSeq: 0, firstTick: 0, lastTick: ticks - 1,
        header: (actors) => ({ type: "episode.started", tick: 0, payload: { world: world.name, seed: o.seed, condition, config: baseConfig, actors, ticks } }),
      },
      o,
    );
  });

export interface ForkOptions extends CommonOptions {
  readonly parent: string;
  /** Fork after this tick has been committed in the parent. */
  readonly atTick: number;
  readonly condition: string;
  /** Total ticks of the child episode (default: the parent's). */
  readonly ticks?: number;
}

export type ForkResult = EpisodeResult & { parent: string; atSeq: number };

/** Forks an episode on the embedded default. */
export const forkEpisode = (o: ForkOptions): Promise<ForkResult> => Effect.runPromise(forkEpisodeEffect(o).pipe(Effect.provide(Embedded)));

export const forkEpisodeEffect = (o: ForkOptions): Effect.Effect<ForkResult, Error, EmbeddedServices> =>
  Effect.gen(function* () {
    const parentDir = resolveEpisodeDir(o.parent);
    const parentLayout = layoutOf(parentDir);
    const records = yield* (yield* EventStores).read(parentLayout.log);
    const header = headerOf(records, relative(process.cwd(), parentLayout.log));
    const committed = records.find((r) => r.type === "tick.committed" && r.tick === o.atTick);
    if (committed === undefined) {
      const ticks = records.filter((r) => r.type === "tick.committed").map((r) => r.tick);
      throw new UsageError(`--at ${o.atTick}: the parent has no committed tick ${o.atTick} (committed ticks: ${ticks.length === 0 ? "none" : `${ticks[0]}–${ticks.at(-1)}`})`);
    }
    const world = header.world;
    const config = world.applyCondition(header.baseConfig, o.condition);
    const parentStateHash = (committed.payload as { stateHash: string }).stateHash;
    // The parent's snapshot at that tick, or a replay up to it when the run did not keep one.
    const snapshotsAt = (yield* SnapshotStores).at;
    let base = yield* Effect.promise(() => snapshotsAt(parentLayout.snapshots).get(parentStateHash));
    if (base === null) {
      const replay = yield* replayRecordsEffect(parentDir, records, { toTick: o.atTick });
      base = snapshotOfReplay(replay);
      replay.host.stop();
    }
    const ticks = o.ticks ?? header.ticks;
    if (!Number.isSafeInteger(ticks) || ticks <= o.atTick + 1) throw new UsageError(`--ticks: the child must run past tick ${o.atTick}, got ${ticks}`);
    const episode = `${header.episode}~t${o.atTick}-${o.condition}`;
    const dir = chooseDir(o.dir, episode);
    const host = restoreHost(world, base, config, header.seed, o.condition);
    const result = yield* drive(
      {
        world, episode, seed: header.seed, condition: o.condition, baseConfig: header.baseConfig, config, host, dir, base,
        firstSeq: committed.seq, previousHash: committed.hash, firstTick: o.atTick + 1, lastTick: ticks - 1,
        header: (actors) => ({
          type: "episode.forked",
          tick: o.atTick,
          payload: {
            world: world.name, seed: header.seed, parent: header.episode, parentLog: relative(dir, parentLayout.log),
            atSeq: committed.seq, atTick: o.atTick, parentHash: committed.hash, parentStateHash,
            condition: o.condition, parentCondition: header.condition, config: header.baseConfig, actors, ticks,
          },
        }),
      },
      o,
    );
    return { ...result, parent: header.episode, atSeq: committed.seq };
  });
