// The EventStores service over JetStream, for the Effect layers (infra/natsLayers.ts).
import { Cause, Effect, Exit, Layer } from "effect";
import type { NatsConnection } from "@nats-io/transport-node";
import type { LogError } from "../../events/errors.ts";
import type { CreateOptions } from "../fileEventStore.ts";
import { EventStores } from "../layers.ts";
import { isNatsTimeout, NatsWriteLost } from "../nats.ts";
import type { JetStreamEventStore } from "./append.ts";
import { createJetStreamEventStore, resumeJetStreamEventStore } from "./open.ts";
import type { JetStreamCreateOptions, JetStreamStoreOptions } from "./options.ts";
import { readJetStreamLog, scanJetStreamLog } from "./read.ts";

/**
 * A run that failed because the server stopped answering (a log publish or a snapshot put it left
 * unanswered): closing its log does not wait for the server either.
 */
function serverAwayIn(exit: Exit.Exit<unknown, unknown>): boolean {
  if (!Exit.isFailure(exit)) return false;
  const error = Cause.squash(exit.cause);
  return error instanceof NatsWriteLost || isNatsTimeout(error);
}

/** The EventStores service over JetStream; `location` is the episode id. */
export function jetStreamEventStores(nc: NatsConnection, namespace: string, options: JetStreamStoreOptions = {}): Layer.Layer<EventStores> {
  const withTtl = (o: CreateOptions): JetStreamCreateOptions => ({ ...o, ...options });
  return Layer.succeed(
    EventStores,
    EventStores.of({
      create: (location, o) =>
        Effect.acquireRelease(
          Effect.tryPromise({ try: () => createJetStreamEventStore(nc, namespace, location, withTtl(o)), catch: (e) => e as Error }),
          (store, exit) => Effect.promise(() => (store as JetStreamEventStore).close({ serverAway: serverAwayIn(exit) })),
        ),
      resume: (location, o) =>
        Effect.acquireRelease(
          Effect.tryPromise({ try: () => resumeJetStreamEventStore(nc, namespace, location, withTtl(o)), catch: (e) => e as Error }),
          ({ store }, exit) => Effect.promise(() => (store as JetStreamEventStore).close({ serverAway: serverAwayIn(exit) })),
        ),
      scan: (location) => Effect.tryPromise({ try: () => scanJetStreamLog(nc, namespace, location), catch: (e) => e as LogError }),
      read: (location) => Effect.tryPromise({ try: () => readJetStreamLog(nc, namespace, location), catch: (e) => e as LogError }),
    }),
  );
}
