// The Transport over NATS core (DESIGN §7): JSON bodies, `traceparent` and the event id in NATS
// headers, one request per delivered record (or per round of a tick: a `wave`). A served subject
// handles its requests one at a time in arrival order (an actor's state must change in log order);
// a handler's error travels back in the `pt-error` reply header and rejects the request with a
// RemoteError. The connection belongs to the caller: close() only stops what this transport started.
import { headers as natsHeaders, NoRespondersError, RequestError, TimeoutError, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { randomUUID } from "node:crypto";
import { ExitCode, TaggedError } from "../events/taggedError.ts";
import { outageOf } from "./nats.ts";
import { isPromiseLike, NoResponder, RemoteError, type Handler, type Headers, type RequestOptions, type Transport } from "./transport.ts";

export { RemoteError } from "./transport.ts";

/** Reply header carrying a handler's error as JSON `{name, message}` (the body is then empty). */
export const ERROR_HEADER = "pt-error";
/**
 * Request header of a liveness check: the serving process answers it at once from its subscription,
 * ahead of its queue, so a requester waiting on a slow reply learns whether anyone still serves the
 * subject (a killed actor host leaves no subscriber: NATS answers "no responders").
 */
export const LIVENESS_HEADER = "pt-alive";
const MAX_ERROR_MESSAGE = 16_384;
/**
 * Request header: the id of one request, the same on each copy of it sent again across a NATS
 * outage. A served subject answers a copy from the answer it gave (its handler runs once per id):
 * a delivery is not idempotent, and the copy may follow one that reached the handler and whose
 * reply the outage lost.
 */
export const REQUEST_ID_HEADER = "pt-rid";
/** Answers a served subject keeps for copies of their requests (served one at a time, in order: a copy comes soon after its first; few, as a snapshot reply may be large). */
const ANSWERS_KEPT = 8;
/**
 * After the server is back, how long a request that finds no one serving its subject is tried
 * again beyond the outage window: the serving process reconnects too (its dial of a server that was
 * away waits up to 5 s, infra/nats.ts) and serves again only then.
 */
const BACK_GRACE_MS = 6000;

/** A request that nats.js failed because the connection dropped (or was not up): a RequestError or ConnectionError, as the cause of ours. */
const isConnectionLost = (error: unknown): boolean => {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error && (cause.name === "RequestError" || cause.name === "ConnectionError") && !isNoResponders(cause);
};

/** The server went away and came back while a request waited: the request, or its reply, may be lost with it. */
class Reconnected extends Error {}

export class RequestTimeout extends TaggedError {
  readonly _tag = "RequestTimeout";
  readonly exitCode = ExitCode.internal;
  readonly subject: string;
  readonly timeoutMs: number;
  constructor(subject: string, timeoutMs: number) {
    // An actor's subject (pt.<ns>.actor.<episode>.<actor>): its host died or hangs.
    const actor = /^pt\.[^.]+\.actor\.[^.]+\.(.+)$/.exec(subject)?.[1];
    super(`no reply on '${subject}' within ${timeoutMs} ms${actor === undefined ? "" : ` (the actor host serving ${actor} stopped or hangs; the log so far is kept, and \`run --resume\` with every actor in one process continues it)`}`);
    this.subject = subject;
    this.timeoutMs = timeoutMs;
  }
}

export interface NatsTransportOptions {
  /** Reply timeout when a request names none (ms). Default 30000. */
  readonly defaultTimeoutMs?: number;
  /**
   * While a reply is awaited, check this often (ms) that the subject is still served. Default 1000.
   * The request fails with NoResponder once nobody has served it for `lostAfterMs` (default 3000:
   * a server restart drops every subscription until its clients reconnect, which takes a second or two).
   */
  readonly livenessEveryMs?: number;
  readonly lostAfterMs?: number;
  /** Where an exception thrown by a subscribe() handler goes. Default: stderr. */
  readonly onSubscriberError?: (error: unknown, subject: string) => void;
}

const NO_HEADERS: Headers = Object.freeze({});

/** NATS answered that nobody serves the subject (nats.js says so in two ways). */
const isNoResponders = (error: unknown): boolean => (error instanceof RequestError && error.isNoResponders()) || error instanceof NoRespondersError;

function toNatsHeaders(record: Headers | undefined): MsgHdrs | undefined {
  if (record === undefined) return undefined;
  let h: MsgHdrs | undefined;
  for (const key in record) {
    h ??= natsHeaders();
    h.set(key, record[key]!);
  }
  return h;
}

function fromNatsHeaders(h: MsgHdrs | undefined): Headers {
  if (h === undefined) return NO_HEADERS;
  const out: Record<string, string> = {};
  // The request id is the transport's own (a copy's answer), not the caller's.
  for (const [key, values] of h) if (key !== REQUEST_ID_HEADER) out[key] = values[0] ?? "";
  return out;
}

/** Empty body ↔ undefined (JSON.stringify(undefined) is no text at all). */
const encode = (value: unknown): string => JSON.stringify(value) ?? "";
const decode = (m: Msg): unknown => (m.data.length === 0 ? undefined : m.json());

function errorHeaders(error: unknown): MsgHdrs {
  const e = error instanceof Error ? error : new Error(String(error));
  const h = natsHeaders();
  // JSON escapes CR/LF, which header values cannot hold.
  h.set(ERROR_HEADER, JSON.stringify({ name: e.name, message: e.message.length > MAX_ERROR_MESSAGE ? `${e.message.slice(0, MAX_ERROR_MESSAGE)}…` : e.message }));
  return h;
}

function remoteError(subject: string, header: string): RemoteError {
  try {
    const { name, message } = JSON.parse(header) as { name?: unknown; message?: unknown };
    return new RemoteError(subject, typeof name === "string" ? name : "Error", typeof message === "string" ? message : header);
  } catch {
    return new RemoteError(subject, "Error", header);
  }
}

function unsubscribe(sub: Subscription): void {
  try {
    if (!sub.isClosed()) sub.unsubscribe();
  } catch {
    // the connection is closed: so is the subscription
  }
}

/** One served subject: its subscription and the requests waiting for the one being handled. */
interface Served {
  readonly sub: Subscription;
  readonly queue: Msg[];
  busy: boolean;
  /** Resolved when the queue runs empty (set while busy and someone waits). */
  idle: (() => void) | null;
  /** The last answers given, by request id (REQUEST_ID_HEADER): a copy of a request gets the same. */
  readonly answers: Map<string, { readonly body: string | undefined; readonly headers: MsgHdrs | undefined }>;
}

export class NatsTransport implements Transport {
  private readonly nc: NatsConnection;
  private readonly defaultTimeoutMs: number;
  private readonly onSubscriberError: (error: unknown, subject: string) => void;
  private readonly livenessEveryMs: number;
  private readonly lostAfterMs: number;
  private readonly served = new Map<string, Served>();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /** This transport's requests: `<id>.<n>` (REQUEST_ID_HEADER). */
  private readonly id = randomUUID();
  private sent = 0;
  /** The connection's server: since when it has been away (null: connected), when it last went away, and who waits for it back. */
  private readonly link: { downSince: number | null; lastDown: number | null; lastBack: number | null; backs: number; waiting: Set<() => void>; gone: Set<() => void> } = { downSince: null, lastDown: null, lastBack: null, backs: 0, waiting: new Set(), gone: new Set() };

  constructor(nc: NatsConnection, options: NatsTransportOptions = {}) {
    this.nc = nc;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 30_000;
    this.livenessEveryMs = options.livenessEveryMs ?? 1000;
    this.lostAfterMs = options.lostAfterMs ?? 3000;
    this.onSubscriberError = options.onSubscriberError ?? ((error, subject) => process.stderr.write(`probetown: subscriber on '${subject}' failed: ${(error as Error)?.stack ?? String(error)}\n`));
    this.statuses = nc.status();
    void this.watchLink();
  }

  /** The connection's status events, watched while this transport is open (close() stops them: a worker opens one transport per episode on one connection). */
  private readonly statuses: AsyncIterable<{ readonly type: string }>;

  /** Follows the connection's disconnects and reconnects (the status stream ends when it closes). */
  private async watchLink(): Promise<void> {
    try {
      for await (const status of this.statuses) {
        if (status.type === "disconnect") this.markDown();
        else if (status.type === "reconnect") {
          this.link.downSince = null;
          this.link.lastBack = performance.now();
          this.link.backs++;
          for (const back of [...this.link.waiting]) back();
        }
      }
    } catch {
      // closed
    }
  }

  /** The server went away (a disconnect, or a request the client failed for it, which may come first). */
  private markDown(): void {
    if (this.link.downSince !== null || this.nc.isClosed()) return;
    const since = (this.link.downSince = performance.now());
    this.link.lastDown = since;
    // Away for the whole window: what waits for a reply gives up (a reply may not come before its own timeout).
    const timer = setTimeout(() => {
      if (this.link.downSince === since) for (const gone of [...this.link.gone]) gone();
    }, outageOf(this.nc));
    timer.unref();
  }

  /** Resolves once the server is back (a reconnect), or with false at `deadline` (performance.now()). */
  private backBy(deadline: number): Promise<boolean> {
    if (this.link.downSince === null) return Promise.resolve(true);
    return new Promise((resolve) => {
      const back = () => {
        clearTimeout(timer);
        this.link.waiting.delete(back);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.link.waiting.delete(back);
        resolve(false);
      }, Math.max(0, deadline - performance.now()));
      this.link.waiting.add(back);
    });
  }

  /**
   * A request rides out a NATS outage as a log publish does (infra/jetstream/append.ts): sent while
   * the server is away, or unanswered because it went away (the request or its reply lost with it),
   * it is sent again once the server is back, as long as the server was away for at most the
   * connection's outage window (`--nats-outage`); one that then finds nobody serving its subject
   * is tried again while the serving process reconnects too (BACK_GRACE_MS). Each copy carries the
   * same request id, and the serving side answers a copy from the answer it gave: the handler runs
   * once. Without an outage, a request fails as it always did (a host gone: NoResponder; silent:
   * RequestTimeout). Past the window, the last attempt's error.
   */
  async request<Req, Res>(subject: string, message: Req, options?: RequestOptions): Promise<Res> {
    if (this.closed) throw new Error(`transport closed: cannot request on '${subject}'`);
    const timeout = options?.timeoutMs ?? this.defaultTimeoutMs;
    const h = toNatsHeaders({ ...options?.headers, [REQUEST_ID_HEADER]: `${this.id}.${++this.sent}` })!;
    const body = encode(message);
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      try {
        return await this.attempt<Res>(subject, body, h, timeout);
      } catch (error) {
        if (await this.rideOut(error, attempt)) continue;
        // The server away past the window: no reply came (a reply to a host that is gone or hung, as before).
        throw error instanceof Reconnected || isConnectionLost(error) ? new RequestTimeout(subject, Math.round(performance.now() - started)) : error;
      }
    }
  }

  /** Whether to send a failed request again (having waited for the server when it is away): only across an outage within the window. */
  private async rideOut(error: unknown, attempt: number): Promise<boolean> {
    if (this.nc.isClosed() || this.closed || error instanceof RemoteError) return false;
    // nats.js fails the requests under way when the connection drops, before it says so.
    if (isConnectionLost(error)) this.markDown();
    const lastDown = this.link.lastDown;
    if (lastDown === null) return false;
    const windowEnd = lastDown + outageOf(this.nc);
    if (this.link.downSince !== null) return this.backBy(windowEnd);
    // Back within the window (or just as it ended): send it again.
    if (error instanceof Reconnected) return (this.link.lastBack ?? 0) <= windowEnd + 1000;
    if (performance.now() >= windowEnd + BACK_GRACE_MS) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 100 * 2 ** Math.min(attempt, 4))));
    return true;
  }

  /** One copy of a request: its reply, or its error (Reconnected: the server went away and came back meanwhile). */
  private async attempt<Res>(subject: string, body: string, h: MsgHdrs, timeout: number): Promise<Res> {
    // The server has been away for the whole window already: no reply is coming.
    if (this.link.downSince !== null && performance.now() - this.link.downSince >= outageOf(this.nc)) throw new RequestTimeout(subject, Math.round(performance.now() - this.link.downSince));
    let reply: Msg;
    const watch = this.watchResponders(subject);
    const backs = this.link.backs;
    let onBack: (() => void) | null = null;
    let onGone: (() => void) | null = null;
    const started = performance.now();
    const reconnected = new Promise<never>((_resolve, reject) => {
      onBack = () => {
        if (this.link.backs !== backs) reject(new Reconnected());
      };
      onGone = () => reject(new RequestTimeout(subject, Math.round(performance.now() - started)));
      this.link.waiting.add(onBack);
      this.link.gone.add(onGone);
    });
    reconnected.catch(() => undefined);
    const sent = this.nc.request(subject, body, { timeout, headers: h });
    sent.catch(() => undefined); // an abandoned copy's end
    try {
      reply = await Promise.race([sent, watch.lost, reconnected]);
    } catch (error) {
      if (error instanceof Reconnected || error instanceof RequestTimeout) throw error;
      if (isNoResponders(error)) throw new NoResponder(subject);
      if (error instanceof NoResponder) throw error;
      if (error instanceof TimeoutError) throw new RequestTimeout(subject, timeout);
      throw new Error(`request on '${subject}' failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    } finally {
      watch.stop();
      if (onBack !== null) this.link.waiting.delete(onBack);
      if (onGone !== null) this.link.gone.delete(onGone);
    }
    if (reply.headers !== undefined) {
      const failed = reply.headers.get(ERROR_HEADER);
      if (failed !== "") throw remoteError(subject, failed);
    }
    return decode(reply) as Res;
  }

  /**
   * Rejects `lost` with NoResponder once the subject has had no subscriber for `lostAfterMs`, checked
   * every `livenessEveryMs` while a reply is awaited (a fast reply never checks). A check that times
   * out says nothing: the server is away, or the serving process is busy; the request's own timeout
   * decides then.
   */
  private watchResponders(subject: string): { readonly lost: Promise<never>; stop(): void } {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let unservedSince: number | null = null;
    let reject: (error: unknown) => void = () => {};
    const lost = new Promise<never>((_resolve, rejectLost) => (reject = rejectLost));
    lost.catch(() => undefined); // raced, or never settled
    const check = (): void => {
      if (stopped || this.nc.isClosed()) return;
      this.nc
        .request(subject, "", { timeout: this.livenessEveryMs, headers: toNatsHeaders({ [LIVENESS_HEADER]: "1" })! })
        .then(
          () => (unservedSince = null),
          (error: unknown) => {
            if (!isNoResponders(error)) return;
            const now = performance.now();
            unservedSince ??= now;
            if (now - unservedSince >= this.lostAfterMs) reject(new NoResponder(subject));
          },
        )
        .finally(() => {
          if (!stopped) timer = setTimeout(check, this.livenessEveryMs);
        });
    };
    timer = setTimeout(check, this.livenessEveryMs);
    return {
      lost,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  serve<Req, Res>(subject: string, handler: Handler<Req, Res>): () => void {
    if (this.closed) throw new Error(`transport closed: cannot serve '${subject}'`);
    if (this.served.has(subject)) throw new Error(`subject '${subject}' is already served in this process`);
    const served: Served = {
      sub: this.nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error !== null) return; // the subscription is closing (e.g. a permissions error); nothing to answer
          if (msg.headers?.get(LIVENESS_HEADER) === "1") {
            respondAlive(msg);
            return;
          }
          if (served.busy) served.queue.push(msg);
          else run(msg);
        },
      }),
      queue: [],
      busy: false,
      idle: null,
      answers: new Map(),
    };
    this.served.set(subject, served);

    /** Keeps the answer to a request with an id, for a copy of it sent again across an outage. */
    const keep = (msg: Msg, answer: { readonly body: string | undefined; readonly headers: MsgHdrs | undefined }): void => {
      const id = msg.headers?.get(REQUEST_ID_HEADER) ?? "";
      if (id === "") return;
      served.answers.set(id, answer);
      if (served.answers.size > ANSWERS_KEPT) served.answers.delete(served.answers.keys().next().value!);
    };
    // Neither throws: on a closed connection the requester times out.
    const fail = (msg: Msg, error: unknown): void => {
      const headers = errorHeaders(error);
      keep(msg, { body: undefined, headers });
      if (msg.reply === undefined) return;
      try {
        msg.respond(undefined, { headers });
      } catch {
        // closed
      }
    };
    const respondAlive = (msg: Msg): void => {
      try {
        msg.respond();
      } catch {
        // closed
      }
    };
    const respond = (msg: Msg, value: unknown): void => {
      if (msg.reply === undefined) return;
      let body: string;
      try {
        body = encode(value);
      } catch (error) {
        fail(msg, error);
        return;
      }
      keep(msg, { body, headers: undefined });
      try {
        msg.respond(body);
      } catch (error) {
        if (!this.nc.isClosed()) fail(msg, new Error(`cannot send a reply of ${Buffer.byteLength(body)} bytes (${(error as Error).message}; the server's max_payload is ${this.nc.info?.max_payload ?? "unknown"} bytes)`));
      }
    };
    const finish = (): void => {
      served.busy = false;
      const idle = served.idle;
      served.idle = null;
      idle?.();
    };
    // Synchronous handlers (the actor host's) are answered inline; an asynchronous one holds the
    // queue until it settles, so requests are handled strictly in arrival order.
    const run = (first: Msg): void => {
      served.busy = true;
      for (let msg: Msg | undefined = first; msg !== undefined; msg = served.queue.shift()) {
        // A copy of a request already answered (its reply lost in an outage): the same answer, not the handler again.
        const given = served.answers.get(msg.headers?.get(REQUEST_ID_HEADER) ?? "");
        if (given !== undefined) {
          try {
            if (msg.reply !== undefined) msg.respond(given.body, given.headers === undefined ? undefined : { headers: given.headers });
          } catch {
            // closed
          }
          continue;
        }
        let result: unknown;
        try {
          result = handler(decode(msg) as Req, fromNatsHeaders(msg.headers));
        } catch (error) {
          fail(msg, error);
          continue;
        }
        if (isPromiseLike(result)) {
          const current = msg;
          void Promise.resolve(result)
            .then((value) => respond(current, value), (error: unknown) => fail(current, error))
            .then(() => {
              const next = served.queue.shift();
              if (next === undefined) finish();
              else run(next);
            });
          return;
        }
        respond(msg, result);
      }
      finish();
    };

    return () => {
      if (this.served.get(subject) !== served) return;
      this.served.delete(subject);
      unsubscribe(served.sub);
    };
  }

  publish<M>(subject: string, message: M): void {
    if (this.closed) throw new Error(`transport closed: cannot publish on '${subject}'`);
    this.nc.publish(subject, encode(message));
  }

  subscribe<M>(subject: string, handler: (message: M) => void): () => void {
    if (this.closed) throw new Error(`transport closed: cannot subscribe to '${subject}'`);
    const sub = this.nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error !== null) return;
        try {
          handler(decode(msg) as M);
        } catch (e) {
          this.onSubscriberError(e, subject);
        }
      },
    });
    this.subscriptions.add(sub);
    return () => {
      if (this.subscriptions.delete(sub)) unsubscribe(sub);
    };
  }

  /** Resolves once the server has seen everything sent so far (serve/stop/subscribe included). */
  async flush(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.flush();
  }

  /**
   * Drains what this transport subscribed (messages already received are still handled and
   * answered) and waits for the served queues to run empty. The connection stays open.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    (this.statuses as { stop?: () => void }).stop?.();
    const served = [...this.served.values()];
    const subs = [...this.subscriptions];
    this.served.clear();
    this.subscriptions.clear();
    const open = !this.nc.isClosed() && !this.nc.isDraining();
    await Promise.all(
      [...served.map((s) => s.sub), ...subs].map(async (sub) => {
        if (sub.isClosed()) return;
        if (open) await sub.drain().catch(() => unsubscribe(sub));
        else unsubscribe(sub);
      }),
    );
    await Promise.all(served.map((s) => (s.busy ? new Promise<void>((resolve) => (s.idle = resolve)) : undefined)));
  }
}
