// NATS connection and subject naming shared by the distributed adapters (DESIGN §7).
// Subjects: pt.<ns>.actor.<episode>.<actorId> (actor hosts), pt.<ns>.log.<episode> (event log),
// pt.<ns>.cut.<episode> (records cut from a damaged log tail, kept), pt.<ns>.jobs.<jobId> (work
// queue) and pt.<ns>.results.<jobId>. The episode sits in the actor subject because many episodes
// of one sweep run at once on the same server.
import { AsyncLocalStorage } from "node:async_hooks";
import { subscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { AuthorizationError, connect, type NatsConnection } from "@nats-io/transport-node";
import { InvalidSubjectToken, natsOutageSeconds, NatsUnavailable, outageWindowText, replicasFromSettings, splitNatsUrl } from "./natsSettings.ts";
import { JetStreamApiCodes, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { isApiError, isStorageFull } from "./jetstream/errors.ts";
import { ExitCode, TaggedError } from "../events/taggedError.ts";

export { DEFAULT_NAMESPACE, InvalidSubjectToken, MAX_REPLICAS, natsFlagHint, NATS_OUTAGE_ENV, natsOutageSeconds, NATS_REPLICAS_ENV, NATS_URL_ENV, NATS_URL_FROM_ENV, NatsReplicasInvalid, NatsUnavailable, outageWindowText, parseReplicas, shownNatsUrl, splitNatsUrl } from "./natsSettings.ts";

/** Tokens must not contain what NATS treats as separators or wildcards. */
export function subjectToken(value: string, what: string): string {
  if (value.length === 0 || /[\s.*>]/.test(value)) throw new InvalidSubjectToken(`${what} '${value}' cannot be used in a NATS subject (no spaces, '.', '*' or '>')`);
  return value;
}

export const subjects = {
  actor: (ns: string, episode: string, actorId: string) => `pt.${subjectToken(ns, "namespace")}.actor.${subjectToken(episode, "episode id")}.${subjectToken(actorId, "actor id")}`,
  log: (ns: string, episode: string) => `pt.${subjectToken(ns, "namespace")}.log.${subjectToken(episode, "episode id")}`,
  cut: (ns: string, episode: string) => `pt.${subjectToken(ns, "namespace")}.cut.${subjectToken(episode, "episode id")}`,
  job: (ns: string, jobId: string) => `pt.${subjectToken(ns, "namespace")}.jobs.${subjectToken(jobId, "job id")}`,
  result: (ns: string, jobId: string) => `pt.${subjectToken(ns, "namespace")}.results.${subjectToken(jobId, "job id")}`,
};

/** Stream, bucket and consumer names: [A-Za-z0-9_-] only. */
export function natsName(prefix: string, ns: string): string {
  return `${prefix}_${ns.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/** KV keys and object names allow [-/_=.a-zA-Z0-9]; anything else is escaped as =XX (reversible). */
export function kvKey(value: string): string {
  return value.replace(/[^-/_.a-zA-Z0-9]/g, (c) => [...Buffer.from(c, "utf8")].map((b) => `=${b.toString(16).padStart(2, "0")}`).join(""));
}

/**
 * A write that the server did not answer while it stayed away longer than its writer waits (the
 * stores retry across a restart, not for ever). It names the episode and what was being written;
 * `withNats` adds the URL and how to go on (a `NatsUnavailable`).
 */
export class NatsWriteLost extends TaggedError {
  readonly _tag = "NatsWriteLost";
  /** `withNats` (services/distributed/episodes.ts) says it as a NatsUnavailable (exit 2): reaching a command, it escaped that. */
  readonly exitCode = ExitCode.internal;
  readonly episode: string;
  readonly what: string;
  constructor(episode: string, what: string, cause: unknown) {
    super(`episode ${episode}: ${what} did not reach JetStream (${(cause as Error)?.message ?? String(cause)}); reopen the episode (resume) once the server is back`, { cause });
    this.episode = episode;
    this.what = what;
  }
}

/** A read of a log that got no message for a while: the server stopped answering (hung, cut off). */
export class NatsReadStalled extends TaggedError {
  readonly _tag = "NatsReadStalled";
  readonly exitCode = ExitCode.internal;
  constructor(message: string) {
    super(message);
  }
}

/** A request the server left unanswered (nats.js's TimeoutError), or a read it stopped feeding: not a fault of ours (exit 2). */
export const isNatsTimeout = (error: unknown): boolean => error instanceof NatsReadStalled || (error instanceof Error && error.name === "TimeoutError");

/**
 * A request the server left unanswered or could not take because the connection was down (a
 * timeout, a request lost with the connection, no responder yet while JetStream starts): what a
 * server that went away causes, and what `acrossOutage` retries. An answer that refuses is not one.
 */
export const isNatsOutage = (error: unknown): boolean =>
  error instanceof NatsReadStalled || (error instanceof Error && ["TimeoutError", "RequestError", "NoResponders", "ConnectionError"].includes(error.name));

/**
 * `request` (an idempotent request, or requests: opening a stream or bucket, asking what a subject
 * holds) retried while the server does not answer, for as long as the connection's outage window
 * from the first try; then its last error is thrown. A closed connection is not waited for.
 */
export async function acrossOutage<T>(nc: NatsConnection, request: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + outageOf(nc);
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      const left = deadline - performance.now();
      if (!isNatsOutage(error) || nc.isClosed() || left <= 0) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 100 * 2 ** attempt, left)));
    }
  }
}

/**
 * Waits until JetStream answers `probe` (by default an account info request), or `deadline`
 * (performance.now()) has passed: true when it answered. It asks at least once, also past the
 * deadline: a write that waited out the window gets one more try when the server is back by then
 * (one that came back at the window's end found its first retry still waiting on the stream).
 * Each request waits a second at most (while the client is disconnected they are held and sent
 * on reconnect), so the wait ends near the deadline.
 */
export async function jetStreamAnswers(nc: NatsConnection, deadline: number, probe: (jsm: JetStreamManager) => Promise<unknown> = (jsm) => jsm.getAccountInfo()): Promise<boolean> {
  for (;;) {
    try {
      const left = deadline - performance.now();
      await probe(await jetstreamManager(nc, { timeout: left >= 200 ? Math.min(1000, left) : 1000, checkAPI: false }));
      return true;
    } catch {
      if (nc.isClosed() || performance.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(100, deadline - performance.now()))));
    }
  }
}

/** Node's errno codes of a host name that does not resolve. */
const UNRESOLVED_HOST: ReadonlySet<string> = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"]);

/** A connect that failed on a host name that does not resolve: Node's errno `code`, on the error or a cause that nats.js wrapped. */
function isUnresolvedHost(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code: unknown = "code" in e ? e.code : undefined;
    if (typeof code === "string" && UNRESOLVED_HOST.has(code)) return true;
  }
  return false;
}

/**
 * The server answered but has JetStream off: nats.js's JetStreamNotEnabled (by name, from any copy of
 * nats.js), or the API error code it is made from, here or as the cause of an error that wraps it.
 */
export function isJetStreamOff(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === "JetStreamNotEnabled" || isApiError(e, JetStreamApiCodes.JetStreamNotEnabledForAccount)) return true;
  }
  return false;
}

/**
 * The server's JetStream storage, or a stream's limits, cannot take a message: retrying will not help.
 * Told by the JetStream API error code (infra/jetstream/errors.ts).
 */
export const isJetStreamStorageFull = isStorageFull;

export interface ConnectOptions {
  /** Connection name shown by the server (process role). */
  readonly name?: string;
  /**
   * The outage window (ms): how long what is done over this connection waits for a server that went
   * away or hangs (a publish, a snapshot put, a read: see outageOf). Default: natsOutageSeconds().
   */
  readonly outageMs?: number;
  /** Give up on the first connect after this long (ms; default: the outage window). Later disconnects retry forever. */
  readonly timeoutMs?: number;
  /** Told once when the first connect failed and is tried again (until `timeoutMs` has passed). */
  readonly onRetry?: (error: unknown, timeoutMs: number) => void;
  /**
   * Replicas of the streams and buckets created over this connection (and the count an existing
   * one must have). Default: `--nats-replicas`, else PROBETOWN_NATS_REPLICAS, else none asked (see natsReplicas).
   */
  readonly replicas?: number;
}

const replicasAsked = new WeakMap<NatsConnection, number>();

/**
 * The replica count asked for the streams and buckets made over `nc` (its connect's `replicas`,
 * else `--nats-replicas`, else PROBETOWN_NATS_REPLICAS), or undefined when none was: then they are created with one and
 * existing ones are taken as they are (infra/jetstream/replicas.ts).
 */
export function natsReplicas(nc: NatsConnection): number | undefined {
  return replicasAsked.get(nc) ?? replicasFromSettings();
}

/** Each connection's outage window (ms), as connectNats was given it. */
const outages = new WeakMap<NatsConnection, number>();

/** How long what is done over `nc` waits for its server to come back (ms): the outage window it was connected with. */
export function outageOf(nc: NatsConnection): number {
  return outages.get(nc) ?? natsOutageSeconds() * 1000;
}

/** One dial of the first connect waits this long at most for the server's INFO (nats.js's `timeout`; reconnects' dials too). */
const DIAL_MS = 5000;
/** ... and at least this long, near the end of the window (a busy server is slow to answer, not gone). */
const MIN_DIAL_MS = 2000;
/** Between two dials of the first connect. */
const REDIAL_MS = 250;

/**
 * `nats://user:pass@host:port` or `nats://token@host:port` as nats.js wants it: the server without
 * credentials, and the credentials apart (it ignores them in the URL). A name without a password is
 * a token, as in the NATS CLI and the Go client: sent as a user, a token server refused it.
 */
function serverAndCredentials(url: string): { readonly server: string; readonly user?: string; readonly pass?: string; readonly token?: string } {
  const { scheme, credentials, rest } = splitNatsUrl(url);
  if (credentials === null) return { server: url };
  const [user, ...pass] = credentials.split(":");
  if (pass.length === 0) return { server: `${scheme}${rest}`, token: decoded(user ?? "") };
  return { server: `${scheme}${rest}`, user: decoded(user ?? ""), pass: decoded(pass.join(":")) };
}

/** A URL's percent-escapes decoded; a `%` that starts none (a password typed as it is, `50%off`) is itself. */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The sockets each connection's client made, its reconnects' too. nats.js closes only a socket whose
 * server has answered: a dial still waiting for a hung server (stopped, SIGSTOP: the kernel accepts
 * the TCP connection, or leaves the SYN pending, and nothing answers) is left open when the
 * connection is closed, and keeps the process alive after the command has ended — for ever while
 * the server stays hung. The sockets are known by the async context of the connect that made them
 * (a reconnect runs in it too), so a process's other connections and sockets are not touched.
 */
const dialing = new AsyncLocalStorage<Set<Socket>>();
const madeBy = new WeakMap<NatsConnection, { readonly sockets: Set<Socket>; readonly port: number }>();
subscribe("net.client.socket", (message) => {
  const sockets = dialing.getStore();
  if (sockets === undefined) return;
  const { socket } = message as { socket: Socket };
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
});

/** Destroys what is left of the sockets to the server: still dialling, or open to its port. */
function destroySockets(sockets: Set<Socket>, port: number): void {
  for (const socket of sockets) if (socket.connecting || socket.remotePort === port) socket.destroy();
}

/**
 * After `nc` is closed: ends the sockets its client left open (a reconnect still dialling a hung
 * server), which would keep the process from exiting.
 */
export function discardNatsSockets(nc: NatsConnection): void {
  const made = madeBy.get(nc);
  if (made !== undefined) destroySockets(made.sockets, made.port);
}

/** How long closing a connection waits at most for its client's last messages to reach the server. */
const DRAIN_MS = 5000;
/** Closing gives up on the drain when the server has sent nothing for this long: it is hung or gone. */
const DRAIN_SILENT_MS = 1000;

/**
 * Closes a connection: first drains it (what its client still holds goes out, and the server has
 * it: a job's ack, a host's last reply, messages nobody awaits), then ends the sockets its client
 * left open. A drain waits for the server's answer, so it is not waited for when `serverAway` (the
 * command failed because the server did not answer) or once the server has sent nothing for
 * DRAIN_SILENT_MS (a live server answers a drain in a round trip): a hung server kept every
 * command DRAIN_MS longer before it could say why it failed and exit. Everything a command reported
 * as done was acknowledged already; what a drain given up on loses is only unawaited messages,
 * which the protocols tolerate (an ack lost is a redelivery that finds the job's outcome).
 */
export async function closeNats(nc: NatsConnection, options: { readonly serverAway?: boolean } = {}): Promise<void> {
  if (options.serverAway !== true && !nc.isClosed()) {
    const drained = nc.drain().then(() => true, () => false);
    const started = performance.now();
    let heard = nc.stats().inMsgs;
    let heardAt = started;
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([drained, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 100)))]);
      clearTimeout(timer);
      if (done || nc.isClosed()) break;
      const now = performance.now();
      const inMsgs = nc.stats().inMsgs;
      if (inMsgs !== heard) [heard, heardAt] = [inMsgs, now];
      if (now - started >= DRAIN_MS || now - heardAt >= DRAIN_SILENT_MS) break;
    }
  }
  await nc.close().catch(() => undefined);
  discardNatsSockets(nc);
}

/**
 * Connects with reconnects that never give up: a restarted server must not end a sweep. The first
 * connect is tried again until `timeoutMs` (default: the outage window) has passed — a server that
 * is restarting, or not up yet, when the command starts — then fails with an error that names the
 * URL and the window. Refused credentials and a host name that does not resolve fail at once.
 */
export async function connectNats(url: string, options: ConnectOptions = {}): Promise<NatsConnection> {
  const { server, ...credentials } = serverAndCredentials(url);
  const port = Number(/:(\d+)\/?$/.exec(splitNatsUrl(server).rest)?.[1] ?? 4222);
  const outageMs = options.outageMs ?? natsOutageSeconds() * 1000;
  const windowMs = options.timeoutMs ?? outageMs;
  const deadline = performance.now() + windowMs;
  let told = false;
  for (;;) {
    const sockets = new Set<Socket>();
    const remaining = deadline - performance.now();
    try {
      const nc = await dialing.run(sockets, () =>
        connect({
          servers: server,
          ...credentials,
          name: options.name ?? `probetown-${process.pid}`,
          timeout: Math.max(Math.min(DIAL_MS, MIN_DIAL_MS, windowMs), Math.min(DIAL_MS, remaining)),
          maxReconnectAttempts: -1,
          reconnectTimeWait: 250,
          pingInterval: 5000,
          // An Error (with a stack) per request costs more than the request itself on the hot path.
          noAsyncTraces: true,
        }),
      );
      madeBy.set(nc, { sockets, port });
      outages.set(nc, outageMs);
      if (options.replicas !== undefined) replicasAsked.set(nc, options.replicas);
      return nc;
    } catch (error) {
      // nats.js leaves the socket of a first connect open when it times out waiting for the server's
      // INFO (a port that accepts TCP but does not speak NATS, a hung server).
      destroySockets(sockets, port);
      if (error instanceof AuthorizationError) throw new NatsUnavailable(url, error, "the server refused the credentials", "check the user and password (nats://user:pass@host) or the token (nats://token@host) in the URL");
      // A host name that does not resolve: no server to start, a URL to correct.
      if (isUnresolvedHost(error)) throw new NatsUnavailable(url, error, "cannot resolve the server's host name", "check the host in the URL (e.g. nats://127.0.0.1:4222)");
      const left = deadline - performance.now();
      if (left <= 0) throw new NatsUnavailable(url, error, `cannot connect to a NATS server within ${outageWindowText(windowMs)}`);
      if (!told) options.onRetry?.(error, windowMs);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, Math.min(REDIAL_MS, left)));
    }
  }
}
