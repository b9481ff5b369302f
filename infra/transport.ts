// The Transport interface (DESIGN §7): request/reply, publish and subscribe on subjects. The
// sequencer reaches actor hosts only through it, so moving an actor to another process changes
// the transport, never what the log contains. Subjects follow `pt.<ns>.…` (see docs/architecture.md).
import { ExitCode, TaggedError } from "../events/taggedError.ts";

/** Message headers: W3C `traceparent` and the event id (`<episode>:<seq>`) travel here, never in the body. */
export type Headers = Readonly<Record<string, string>>;

export type Handler<Req = unknown, Res = unknown> = (message: Req, headers: Headers) => Res | Promise<Res>;

export interface RequestOptions {
  readonly headers?: Headers;
  /** How long to wait for the reply (ms); transports choose a default. */
  readonly timeoutMs?: number;
}

export interface Transport {
  request<Req, Res>(subject: string, message: Req, options?: RequestOptions): Promise<Res>;
  /** Answers requests on a subject; returns a function that stops serving. */
  serve<Req, Res>(subject: string, handler: Handler<Req, Res>): () => void;
  publish<M>(subject: string, message: M): void;
  subscribe<M>(subject: string, handler: (message: M) => void): () => void;
  close(): Promise<void>;
}

export class NoResponder extends TaggedError {
  readonly _tag = "NoResponder";
  readonly exitCode = ExitCode.internal;
  readonly subject: string;
  constructor(subject: string) {
    super(`no actor host answers on '${subject}'`);
    this.subject = subject;
  }
}

/**
 * A served handler threw in another process. The message is the remote one prefixed by the subject;
 * `remoteName` is the remote error's name. (The in-process transport rethrows the handler's own
 * error instead: same message, and the original type and stack.)
 */
export class RemoteError extends TaggedError {
  readonly _tag = "RemoteError";
  readonly exitCode = ExitCode.internal;
  readonly subject: string;
  readonly remoteName: string;
  constructor(subject: string, remoteName: string, remoteMessage: string) {
    super(`${subject}: ${remoteMessage}`);
    this.subject = subject;
    this.remoteName = remoteName;
  }
}

const NO_HEADERS: Headers = Object.freeze({});

const ignore = (): void => {};

/** A served subject: its handler, and while an asynchronous request runs, the end of the queue. */
interface Served {
  readonly handler: Handler<any, any>;
  /** Settles (never rejects) when the last queued request has finished; null when idle. */
  tail: Promise<void> | null;
}

/**
 * Embedded default: direct calls within the process. Messages are passed by reference. Requests to
 * one subject are handled one at a time in call order, as over NATS: a synchronous handler (the
 * actor host's) is called directly; while an asynchronous one runs, later requests queue behind it.
 */
export class InProcessTransport implements Transport {
  private readonly handlers = new Map<string, Served>();
  private readonly subscribers = new Map<string, Set<(m: any) => void>>();

  async request<Req, Res>(subject: string, message: Req, options?: RequestOptions): Promise<Res> {
    const served = this.handlers.get(subject);
    if (served === undefined) throw new NoResponder(subject);
    const headers = options?.headers ?? NO_HEADERS;
    if (served.tail === null) {
      const result = served.handler(message, headers);
      if (!isPromiseLike(result)) return result as Res;
      return this.queue(served, Promise.resolve(result)) as Promise<Res>;
    }
    return this.queue(served, served.tail.then(() => served.handler(message, headers))) as Promise<Res>;
  }

  private queue(served: Served, result: Promise<unknown>): Promise<unknown> {
    const settled = result.then(ignore, ignore);
    served.tail = settled;
    void settled.then(() => {
      if (served.tail === settled) served.tail = null;
    });
    return result;
  }

  serve<Req, Res>(subject: string, handler: Handler<Req, Res>): () => void {
    if (this.handlers.has(subject)) throw new Error(`subject '${subject}' is already served in this process`);
    const served: Served = { handler, tail: null };
    this.handlers.set(subject, served);
    return () => {
      if (this.handlers.get(subject) === served) this.handlers.delete(subject);
    };
  }

  publish<M>(subject: string, message: M): void {
    for (const handler of this.subscribers.get(subject) ?? []) handler(message);
  }

  subscribe<M>(subject: string, handler: (message: M) => void): () => void {
    let set = this.subscribers.get(subject);
    if (set === undefined) this.subscribers.set(subject, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.subscribers.clear();
  }
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
