// JetStream event store (DESIGN §7): one stream per namespace, one subject per episode log
// (pt.<ns>.log.<episode>), the same record lines and hash chain as the embedded file store. Its
// public API; one concern per file, as nats.js splits @nats-io/jetstream:
// - streams.ts: the namespace's log stream, subject queries, the shared per-namespace context.
// - append.ts:  the writer (commits as messages, the server-side fence on every publish).
// - acks.ts:    publishing with acks collected on one subscription.
// - lock.ts:    the writer lock in KV (ttl, renewal, takeover).
// - chain.ts:   checking records as they are read (what scanLog checks).
// - read.ts:    reading, scanning and peeking a log.
// - follow.ts:  following a log live.
// - cut.ts:     moving a damaged tail to the cut subject on resume.
// - open.ts:    creating and resuming an episode's log.
// - stores.ts:  the EventStores of the distributed backend.
// - errors.ts:  StaleWriter, and the JetStream API error codes the store acts on.
// - options.ts: what a store is told when it is opened.
// - replicas.ts: the replica count streams and buckets are made with, and the check of existing ones.
export { StaleWriter } from "./errors.ts";
export { checkReplicas, ReplicasMismatch, replicasToCreate } from "./replicas.ts";
export { MIN_LOCK_TTL_MS, setLockTtl, writerOf, type LockTtl } from "./lock.ts";
export type { JetStreamCreateOptions, JetStreamStoreOptions } from "./options.ts";
export { ensureLogStream, jetStreamEpisodes } from "./streams.ts";
export { lastJetStreamRecord, peekJetStreamLog, readJetStreamLog, scanJetStreamLog, type JetStreamReadOptions } from "./read.ts";
export { followJetStreamLog, type FollowOptions } from "./follow.ts";
export { createJetStreamEventStore, resumeJetStreamEventStore } from "./open.ts";
export { jetStreamEventStores } from "./stores.ts";
