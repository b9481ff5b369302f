// `probetown actor-host`: hosts some actors of one episode in this process, reached over NATS by
// the episode's sequencer in another. It learns the episode (world, seed, condition, config) from
// the header record in the JetStream log, so every process builds its actors from the same source.
// It serves one episode and stops when that episode is over, whoever ends it: when its sequencer
// releases it (after the episode's last snapshot); when the log's last tick is committed (another
// sequencer, e.g. a local `run --resume`, finished it; or the episode was finished before it came);
// when its sequencer has asked nothing for `idleMs` (it died); or on a signal.
import type { NatsConnection } from "@nats-io/transport-node";
import type { Tracer } from "@opentelemetry/api";
import type { LogRecord } from "../../events/record.ts";
import { followJetStreamLog, lastJetStreamRecord } from "../../infra/jetstream/index.ts";
import { JetStreamSnapshotStore } from "../../infra/jetStreamSnapshotStore.ts";
import { subjects } from "../../infra/nats.ts";
import type { Transport } from "../../infra/transport.ts";
import { ActorHost } from "./actorHost.ts";
import { headerOf, snapshotActors, type EpisodeHeader } from "../kernel/replay.ts";
import { ForkNotHostable, HostActorsUnknown, HostSnapshotUnavailable, LogNeverBegan } from "./errors.ts";

/** Default `idleMs`: a live sequencer asks every actor for its digest each tick, so minutes of silence mean it has gone. */
export const DEFAULT_IDLE_MS = 5 * 60_000;
/**
 * After the last tick is committed, a host its sequencer asked lately still answers that
 * sequencer's last snapshot request and waits for its release, for at most this long of silence.
 */
const FINISH_GRACE_MS = 30_000;

export interface ActorHostServiceOptions {
  readonly nc: NatsConnection;
  readonly transport: Transport;
  readonly namespace: string;
  readonly episode: string;
  /** Actor ids to host; "all" hosts every actor of the episode. */
  readonly actors: readonly string[] | "all";
  readonly tracer?: Tracer;
  /** Stop when no request has come for this long while serving (default 5 minutes). */
  readonly idleMs?: number;
  /** Told when the actors are being served, and when each tick commits. */
  readonly onReady?: (actors: readonly string[], header: LogRecord) => void;
  readonly onTick?: (tick: number) => void;
  readonly signal?: AbortSignal;
}

/**
 * Why a host stopped: its sequencer released it; the log's last tick was committed (`finished`);
 * the episode was finished before the host came (`already-finished`: it served nothing); no
 * request came for `idleMs` (`idle`); or a signal.
 */
export type HostEnd = "released" | "finished" | "already-finished" | "idle" | "signal";

export interface ActorHostServiceResult {
  readonly episode: string;
  readonly actors: readonly string[];
  readonly end: HostEnd;
  /** Whether the episode's log had begun (its header read) when the host stopped. */
  readonly began: boolean;
  /** Ticks committed in the episode's log when the host stopped, of `totalTicks`. */
  readonly ticks: number;
  readonly totalTicks: number;
  /** Requests the host answered (0: no sequencer asked for these actors). */
  readonly requests: number;
  readonly idleMs: number;
}

export async function hostEpisodeActors(o: ActorHostServiceOptions): Promise<ActorHostServiceResult> {
  const idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
  let host: ActorHost | null = null;
  let header: EpisodeHeader | null = null;
  let stop: (() => void) | null = null;
  let end: HostEnd | null = null;
  let stopped: () => void = () => {};
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const finish = (why: HostEnd): void => {
    end ??= why;
    stopped();
  };
  o.signal?.addEventListener("abort", () => finish("signal"), { once: true });
  let ticks = 0;
  let requests = 0;
  let lastRequestAt = performance.now();
  // Set once the last tick is committed while the host's own sequencer may still need it.
  let lastCommitted = false;
  const quietFor = () => performance.now() - lastRequestAt;
  const watch = setInterval(() => {
    if (host === null) return; // waiting for the episode to begin: nobody can ask yet
    if (lastCommitted && quietFor() > Math.min(FINISH_GRACE_MS, idleMs)) finish("finished");
    else if (quietFor() > idleMs) finish("idle");
  }, Math.max(10, Math.min(1000, Math.floor(idleMs / 4))));
  const result = (why: HostEnd, ids: readonly string[]): ActorHostServiceResult => ({ episode: o.episode, actors: ids, end: why, began: header !== null, ticks, totalTicks: header === null ? 0 : header.ticks - header.firstTick, requests, idleMs });
  try {
    // The header tells what to build; then the log shows progress until the episode is over.
    for await (const record of untilAborted(followJetStreamLog(o.nc, o.namespace, o.episode, 0, { validate: false }), o.signal, done)) {
      if (header === null) {
        const h = (header = headerOf([record], `jetstream ${o.namespace}/${o.episode}`));
        if (h.kind === "forked") throw new ForkNotHostable({ episode: o.episode });
        const definitions = h.world.actors(h.config, h.seed);
        const known = definitions.map((d) => d.id);
        const wanted = o.actors === "all" ? known : o.actors;
        const unknown = wanted.filter((id) => !known.includes(id));
        if (unknown.length > 0) throw new HostActorsUnknown({ episode: o.episode, unknown, actors: known });
        // A finished episode has nothing to serve: say so rather than wait for a sequencer that will not come.
        if (await isFinished(o.nc, o.namespace, o.episode, h.ticks - 1)) {
          ticks = h.ticks - h.firstTick;
          return result("already-finished", [...wanted].sort());
        }
        const snapshots = new JetStreamSnapshotStore(o.nc, o.namespace, o.episode);
        let loading: { readonly key: string; readonly actors: Promise<Readonly<Record<string, unknown>>> } | null = null;
        // A resumed run's sequencer sends each actor's subject the same snapshot key: load it once.
        const load = (key: string): Promise<Readonly<Record<string, unknown>>> => {
          if (loading?.key !== key) loading = { key, actors: loadSnapshot(snapshots, o.episode, key, h) };
          return loading.actors;
        };
        host = new ActorHost(h.world, definitions, { only: wanted });
        lastRequestAt = performance.now();
        stop = host.serveEach(o.transport, (id) => subjects.actor(o.namespace, o.episode, id), {
          ...(o.tracer === undefined ? {} : { tracer: o.tracer }),
          onRelease: () => finish("released"),
          onRequest: () => {
            requests++;
            lastRequestAt = performance.now();
          },
          load,
        });
        o.onReady?.(host.ids, record);
        continue;
      }
      if (record.type === "tick.committed") {
        ticks++;
        o.onTick?.(record.tick);
        if (record.tick === header.ticks - 1) {
          // Committed by a sequencer that no longer asks (another one finished the episode): done.
          // Otherwise its sequencer still takes the last snapshot and then releases the host.
          if (requests === 0 || quietFor() > Math.min(FINISH_GRACE_MS, idleMs)) finish("finished");
          else lastCommitted = true;
        }
      }
    }
  } catch (error) {
    // A signal while the follow was still being set up is a stop, not a failure.
    if (end !== "signal") throw error;
  } finally {
    clearInterval(watch);
    stop?.();
    host?.stop();
  }
  if (host === null) {
    if (end === "signal") return result("signal", o.actors === "all" ? [] : o.actors);
    throw new LogNeverBegan({ episode: o.episode });
  }
  return result(end ?? "finished", (host as ActorHost).ids);
}

/** Whether the episode's log ends with its last tick's commit (one look at its last record, not a read of the log). */
async function isFinished(nc: NatsConnection, namespace: string, episode: string, lastTick: number): Promise<boolean> {
  try {
    const last = await lastJetStreamRecord(nc, namespace, episode);
    return last?.type === "tick.committed" && last.tick === lastTick;
  } catch {
    return false; // cannot tell: serve, and the follow tells when the episode ends
  }
}

/** A snapshot of this episode from its store, checked: what a resumed run's hosts restore. */
async function loadSnapshot(store: JetStreamSnapshotStore, episode: string, key: string, header: EpisodeHeader): Promise<Readonly<Record<string, unknown>>> {
  const snapshot = await store.get(key);
  if (snapshot === null) throw new HostSnapshotUnavailable({ key, reason: "missing", episode });
  if (snapshot.episode !== episode) throw new HostSnapshotUnavailable({ key, reason: "other-episode", episode, owner: snapshot.episode });
  return snapshotActors(header.world, snapshot, header.config, header.seed, header.condition);
}

/** Stops iterating when `signal` aborts or `done` settles, even while waiting for the next record. */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined, done: Promise<void>): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  const aborted = new Promise<IteratorResult<T>>((resolve) => {
    if (signal?.aborted) resolve({ done: true, value: undefined });
    void done.then(() => resolve({ done: true, value: undefined }));
  });
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    // Not awaited: a generator blocked waiting for a message only returns once one arrives.
    void iterator.return?.();
  }
}
