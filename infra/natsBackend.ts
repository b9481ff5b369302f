// The distributed backend: the same services/ code as the embedded default, on JetStream stores and
// the NATS transport (DESIGN §7). The connection belongs to the caller and outlives the backend.
import type { NatsConnection } from "@nats-io/transport-node";
import { inProcessTransports, otelTracing, type Backend, type Transports } from "./backend.ts";
import { jetStreamEventStores, type JetStreamStoreOptions } from "./jetstream/index.ts";
import { jetStreamSnapshotStores } from "./jetStreamSnapshotStore.ts";
import { NatsTransport } from "./natsTransport.ts";

export const natsTransports = (nc: NatsConnection): Transports => ({ open: () => new NatsTransport(nc) });

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

export const distributedBackend = (nc: NatsConnection, namespace: string, options: DistributedOptions = {}): Backend => ({
  eventStores: jetStreamEventStores(nc, namespace, { ...(options.lockTtlMs === undefined ? {} : { lockTtlMs: options.lockTtlMs }), ...(options.onLockWait === undefined ? {} : { onLockWait: options.onLockWait }) }),
  snapshotStores: jetStreamSnapshotStores(nc, namespace),
  transports: options.actors === "nats" ? natsTransports(nc) : inProcessTransports,
  tracing: otelTracing,
});
