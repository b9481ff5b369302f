// What an episode runs on: where its log and snapshots are kept, how the sequencer reaches its
// actors, and where its spans go. The kernel's entry points (run, fork, replay, verify, diff) take a
// Backend and default to the embedded one below (files, actors in this process, OTel exporters); a
// distributed run passes infra/natsBackend.ts's (JetStream stores, the NATS transport, DESIGN §7).
// Plain async: whoever opens a resource releases it in a `finally` (see infra/resources.ts).
import type { LogRecord } from "../events/record.ts";
import type { EventStore } from "./eventStore.ts";
import { createFileEventStore, openFileEventStoreForAppend, readLog, scanLog, segmentFiles, type CreateOptions, type ScanResult } from "./fileEventStore.ts";
import { FileSnapshotStore, type SnapshotStore } from "./snapshotStore.ts";
import { createTelemetry, type Telemetry, type TelemetryConfig } from "./telemetry.ts";
import { InProcessTransport, type Transport } from "./transport.ts";

export interface EventStores {
  /** Creates an episode's log; its writer lock is held until `close`. */
  create(location: string, options: CreateOptions): Promise<EventStore>;
  /**
   * Opens an existing log to continue it (after a crash), cutting a damaged tail back to the last
   * good record and keeping what was cut; creates the log when there is none.
   */
  resume(location: string, options: CreateOptions): Promise<{ store: EventStore; records: LogRecord[] }>;
  /** Reads and checks a whole log; a torn tail is reported separately (see scanLog). */
  scan(location: string): Promise<ScanResult>;
  /** Reads and checks a whole log; any damage, a torn tail included, is an error. */
  read(location: string): Promise<LogRecord[]>;
  /**
   * Closes a store `create` or `resume` opened. `failure` is what the run using it failed with, if
   * it did: a store whose server stopped answering does not wait for it to close.
   */
  close(store: EventStore, failure?: unknown): Promise<void>;
}

export interface SnapshotStores {
  /** The snapshot store at `location` (a snapshots/ folder, or an episode id). */
  at(location: string): SnapshotStore;
}

export interface Transports {
  /** A transport for one run's sequencer and actors; the caller closes it. */
  open(): Transport;
}

export interface Tracing {
  /** One run's trace pipeline; the caller shuts it down (flushing its spans), also on failure. */
  open(config: TelemetryConfig): Telemetry;
}

export interface Backend {
  readonly eventStores: EventStores;
  readonly snapshotStores: SnapshotStores;
  readonly transports: Transports;
  readonly tracing: Tracing;
}

export const fileEventStores: EventStores = {
  create: async (location, options) => createFileEventStore(location, options),
  resume: async (location, options) => (segmentFiles(location).length === 0 ? { store: createFileEventStore(location, options), records: [] } : openFileEventStoreForAppend(location, options)),
  scan: async (location) => scanLog(location),
  read: async (location) => readLog(location),
  close: (store) => store.close(),
};

export const fileSnapshotStores: SnapshotStores = { at: (location) => new FileSnapshotStore(location) };

export const inProcessTransports: Transports = { open: () => new InProcessTransport() };

export const otelTracing: Tracing = { open: (config) => createTelemetry(config) };

/** The embedded default: file log and snapshots, actors in this process, OTel exporters. */
export const embeddedBackend: Backend = { eventStores: fileEventStores, snapshotStores: fileSnapshotStores, transports: inProcessTransports, tracing: otelTracing };
