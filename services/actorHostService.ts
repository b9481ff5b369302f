// `probetown actor-host`: hosts some actors of one episode in this process, reached over NATS by
// the episode's sequencer in another. It learns the episode (world, seed, condition, config) from
// the header record in the JetStream log, so every process builds its actors from the same source,
// and it stops when the sequencer releases it (after the episode's last snapshot) or on a signal.
import type { NatsConnection } from "@nats-io/transport-node";
import type { Tracer } from "@opentelemetry/api";
import type { LogRecord } from "../events/record.ts";
import { followJetStreamLog } from "../infra/jetStreamEventStore.ts";
import { subjects } from "../infra/nats.ts";
import type { Transport } from "../infra/transport.ts";
import { ActorHost } from "./actorHost.ts";
import { headerOf, UsageError } from "./replay.ts";

export interface ActorHostServiceOptions {
  readonly nc: NatsConnection;
  readonly transport: Transport;
  readonly namespace: string;
  readonly episode: string;
  /** Actor ids to host; "all" hosts every actor of the episode. */
  readonly actors: readonly string[] | "all";
  readonly tracer?: Tracer;
  /** Told when the actors are being served, and when each tick commits. */
  readonly onReady?: (actors: readonly string[], header: LogRecord) => void;
  readonly onTick?: (tick: number) => void;
  readonly signal?: AbortSignal;
}

export interface ActorHostServiceResult {
  readonly episode: string;
  readonly actors: readonly string[];
  readonly ticks: number;
}

export async function hostEpisodeActors(o: ActorHostServiceOptions): Promise<ActorHostServiceResult> {
  let host: ActorHost | null = null;
  let stop: (() => void) | null = null;
  let released: () => void = () => {};
  const done = new Promise<void>((resolve) => (released = resolve));
  o.signal?.addEventListener("abort", () => released(), { once: true });
  let ticks = 0;
  try {
    // The header tells what to build; then the log shows progress until the sequencer releases us.
    for await (const record of untilAborted(followJetStreamLog(o.nc, o.namespace, o.episode, 0, { validate: false }), o.signal, done)) {
      if (host === null) {
        const header = headerOf([record], `jetstream ${o.namespace}/${o.episode}`);
        if (header.kind === "forked") throw new UsageError(`episode ${o.episode} is a fork; forks run with all their actors in one process`);
        const definitions = header.world.actors(header.config, header.seed);
        const known = definitions.map((d) => d.id);
        const wanted = o.actors === "all" ? known : o.actors;
        const unknown = wanted.filter((id) => !known.includes(id));
        if (unknown.length > 0) throw new UsageError(`--actors: episode ${o.episode} has no actor ${unknown.join(", ")} (actors: ${known.join(", ")})`);
        host = new ActorHost(header.world, definitions, { only: wanted });
        stop = host.serveEach(o.transport, (id) => subjects.actor(o.namespace, o.episode, id), { ...(o.tracer === undefined ? {} : { tracer: o.tracer }), onRelease: released });
        o.onReady?.(host.ids, record);
        continue;
      }
      if (record.type === "tick.committed") {
        ticks++;
        o.onTick?.(record.tick);
      }
    }
  } finally {
    stop?.();
    host?.stop();
  }
  if (host === null) throw new Error(`episode ${o.episode}: stopped before its log began`);
  return { episode: o.episode, actors: host.ids, ticks };
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
