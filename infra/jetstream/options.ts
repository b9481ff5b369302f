// What a JetStream event store can be told when it is opened.
import type { CreateOptions } from "../fileEventStore.ts";

export interface JetStreamStoreOptions {
  /** Writer lock time-to-live (the lock bucket's max_age), renewed every ttl/3. Default 10 s. */
  readonly lockTtlMs?: number;
  /**
   * A commit gives up waiting for a message's ack after this long, then retries it (once the stream
   * answers again) until the outage window has passed. Default 5 s.
   */
  readonly ackTimeoutMs?: number;
  /** How long a commit retries a publish the server does not answer (ms). Default: the connection's outage window (infra/nats.ts outageOf). */
  readonly outageMs?: number;
  /**
   * Told once when a resume finds the episode's writer lock held and starts waiting (up to
   * `waitMs`) for it to expire: the holder may be a killed writer, or a live one (then it fails).
   */
  readonly onLockWait?: (notice: { readonly episode: string; readonly holder: string; readonly waitMs: number }) => void;
}

export type JetStreamCreateOptions = CreateOptions & JetStreamStoreOptions;
