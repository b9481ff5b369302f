// The Transport interface (DESIGN §7): request/reply, publish and subscribe on subjects. The
// sequencer reaches actor hosts only through it, so moving an actor to another process changes
// the transport, never what the log contains. Subjects follow `pt.<ns>.…` (see docs/architecture.md).
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

export class NoResponder extends Error {
  constructor(subject: string) {
    super(`no actor host answers on '${subject}'`);
    this.name = "NoResponder";
  }
}

const NO_HEADERS: Headers = Object.freeze({});

/** Embedded default: direct calls within the process. Messages are passed by reference. */
export class InProcessTransport implements Transport {
  private readonly handlers = new Map<string, Handler<any, any>>();
  private readonly subscribers = new Map<string, Set<(m: any) => void>>();

  async request<Req, Res>(subject: string, message: Req, options?: RequestOptions): Promise<Res> {
    const handler = this.handlers.get(subject);
    if (handler === undefined) throw new NoResponder(subject);
    return (await handler(message, options?.headers ?? NO_HEADERS)) as Res;
  }

  serve<Req, Res>(subject: string, handler: Handler<Req, Res>): () => void {
    if (this.handlers.has(subject)) throw new Error(`subject '${subject}' is already served in this process`);
    this.handlers.set(subject, handler);
    return () => this.handlers.delete(subject);
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
