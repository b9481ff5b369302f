// The EventStores of a backend over JetStream (infra/natsBackend.ts): `location` is the episode id.
import type { NatsConnection } from "@nats-io/transport-node";
import type { EventStores } from "../backend.ts";
import type { CreateOptions } from "../fileEventStore.ts";
import { isNatsTimeout, NatsWriteLost } from "../nats.ts";
import type { JetStreamEventStore } from "./append.ts";
import { createJetStreamEventStore, resumeJetStreamEventStore } from "./open.ts";
import type { JetStreamCreateOptions, JetStreamStoreOptions } from "./options.ts";
import { readJetStreamLog, scanJetStreamLog } from "./read.ts";

/**
 * A run that failed because the server stopped answering (a log publish or a snapshot put it left
 * unanswered): closing its log does not wait for the server either.
 */
const serverAway = (failure: unknown): boolean => failure instanceof NatsWriteLost || isNatsTimeout(failure);

export function jetStreamEventStores(nc: NatsConnection, namespace: string, options: JetStreamStoreOptions = {}): EventStores {
  const withTtl = (o: CreateOptions): JetStreamCreateOptions => ({ ...o, ...options });
  return {
    create: (location, o) => createJetStreamEventStore(nc, namespace, location, withTtl(o)),
    resume: (location, o) => resumeJetStreamEventStore(nc, namespace, location, withTtl(o)),
    scan: (location) => scanJetStreamLog(nc, namespace, location),
    read: (location) => readJetStreamLog(nc, namespace, location),
    close: (store, failure) => (store as JetStreamEventStore).close({ serverAway: serverAway(failure) }),
  };
}
