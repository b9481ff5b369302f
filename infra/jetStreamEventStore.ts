// The JetStream event store's public API at its first path (services/cli imports it from here).
// The store itself is in infra/jetstream/, one concern per file (see infra/jetstream/index.ts).
export * from "./jetstream/index.ts";
