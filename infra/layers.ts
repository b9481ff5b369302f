// Effect services for every adapter the episode code needs, and the layer that wires the embedded
// default (files, in-process transport, OTel). A distributed run provides other layers (JetStream
// stores, NATS transport) to the same services/ code.
import { Context, Effect, Layer, type Scope } from "effect";
import type { LogError } from "../events/errors.ts";
import type { LogRecord } from "../events/record.ts";
import type { EventStore } from "./eventStore.ts";
import { createFileEventStore, openFileEventStoreForAppend, readLog, scanLog, segmentFiles, type CreateOptions, type ScanResult } from "./fileEventStore.ts";
import { FileSnapshotStore, type SnapshotStore } from "./snapshotStore.ts";
import { createTelemetry, type Telemetry, type TelemetryConfig } from "./telemetry.ts";
import { InProcessTransport, type Transport } from "./transport.ts";

export class EventStores extends Context.Service<
  EventStores,
  {
    /** Creates an episode's log; the store is closed (and its writer lock released) with the scope. */
    readonly create: (location: string, options: CreateOptions) => Effect.Effect<EventStore, Error, Scope.Scope>;
    /**
     * Opens an existing log to continue it (after a crash), cutting a damaged tail back to the last
     * good record and keeping what was cut; creates the log when there is none.
     */
    readonly resume: (location: string, options: CreateOptions) => Effect.Effect<{ store: EventStore; records: LogRecord[] }, Error, Scope.Scope>;
    /** Reads and checks a whole log; a torn tail is reported separately (see scanLog). */
    readonly scan: (location: string) => Effect.Effect<ScanResult, LogError>;
    /** Reads and checks a whole log; any damage, a torn tail included, is an error. */
    readonly read: (location: string) => Effect.Effect<LogRecord[], LogError>;
  }
>()("probetown/infra/EventStores") {
  static readonly files: Layer.Layer<EventStores> = Layer.succeed(
    EventStores,
    EventStores.of({
      create: (location, options) =>
        Effect.acquireRelease(
          Effect.try({ try: () => createFileEventStore(location, options), catch: (e) => e as Error }),
          (store) => Effect.promise(() => store.close()),
        ),
      resume: (location, options) =>
        Effect.acquireRelease(
          Effect.try({
            try: () => (segmentFiles(location).length === 0 ? { store: createFileEventStore(location, options), records: [] } : openFileEventStoreForAppend(location, options)),
            catch: (e) => e as Error,
          }),
          ({ store }) => Effect.promise(() => store.close()),
        ),
      scan: (location) => Effect.try({ try: () => scanLog(location), catch: (e) => e as LogError }),
      read: (location) => Effect.try({ try: () => readLog(location), catch: (e) => e as LogError }),
    }),
  );
}

export class SnapshotStores extends Context.Service<SnapshotStores, { readonly at: (location: string) => SnapshotStore }>()("probetown/infra/SnapshotStores") {
  static readonly files: Layer.Layer<SnapshotStores> = Layer.succeed(SnapshotStores, SnapshotStores.of({ at: (location) => new FileSnapshotStore(location) }));
}

export class Transports extends Context.Service<Transports, { readonly open: () => Effect.Effect<Transport, never, Scope.Scope> }>()("probetown/infra/Transports") {
  static readonly inProcess: Layer.Layer<Transports> = Layer.succeed(
    Transports,
    Transports.of({ open: () => Effect.acquireRelease(Effect.sync(() => new InProcessTransport()), (t) => Effect.promise(() => t.close())) }),
  );
}

export class Tracing extends Context.Service<Tracing, { readonly open: (config: TelemetryConfig) => Effect.Effect<Telemetry, never, Scope.Scope> }>()("probetown/infra/Tracing") {
  /** Spans are flushed and the exporter shut down when the scope closes, even on failure. */
  static readonly otel: Layer.Layer<Tracing> = Layer.succeed(
    Tracing,
    Tracing.of({ open: (config) => Effect.acquireRelease(Effect.sync(() => createTelemetry(config)), (t) => Effect.promise(() => t.shutdown().catch(() => undefined))) }),
  );
}

/** The embedded default: file log and snapshots, actors in this process, OTel exporters. */
export const Embedded = Layer.mergeAll(EventStores.files, SnapshotStores.files, Transports.inProcess, Tracing.otel);

export type EmbeddedServices = EventStores | SnapshotStores | Transports | Tracing;
