// The distributed layer: the same services/ code as the embedded default, on JetStream stores and
// the NATS transport (DESIGN §7). The connection belongs to the caller and outlives the layer.
import { Effect, Layer } from "effect";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetStreamEventStores, type JetStreamStoreOptions } from "./jetstream/index.ts";
import { jetStreamSnapshotStores } from "./jetStreamSnapshotStore.ts";
import { Tracing, Transports, type EmbeddedServices } from "./layers.ts";
import { NatsTransport } from "./natsTransport.ts";

export const natsTransports = (nc: NatsConnection): Layer.Layer<Transports> =>
  Layer.succeed(Transports, Transports.of({ open: () => Effect.acquireRelease(Effect.sync(() => new NatsTransport(nc)), (t) => Effect.promise(() => t.close())) }));

export interface DistributedOptions {
  /** Writer lock lifetime without renewal (ms); a killed writer's episode frees up after this. */
  readonly lockTtlMs?: number;
  /**
   * How the sequencer reaches its actors: "nats" when some are hosted by other processes
   * (`--remote`), "in-process" (default) when all of them live beside it, as in a worker.
   */
  readonly actors?: "nats" | "in-process";
  /** Told when resuming an episode waits for another writer's lock to expire. */
  readonly onLockWait?: JetStreamStoreOptions["onLockWait"];
}

export const distributedLayer = (nc: NatsConnection, namespace: string, options: DistributedOptions = {}): Layer.Layer<EmbeddedServices> =>
  Layer.mergeAll(
    jetStreamEventStores(nc, namespace, { ...(options.lockTtlMs === undefined ? {} : { lockTtlMs: options.lockTtlMs }), ...(options.onLockWait === undefined ? {} : { onLockWait: options.onLockWait }) }),
    jetStreamSnapshotStores(nc, namespace),
    options.actors === "nats" ? natsTransports(nc) : Transports.inProcess,
    Tracing.otel,
  );
