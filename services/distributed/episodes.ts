// What the distributed commands share: where an episode lives in JetStream, a connection that is
// always closed, the placement of remote actors, and local worker processes for a sweep.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { NatsConnection } from "@nats-io/transport-node";
import { replicasFromSettings } from "../../infra/natsSettings.ts";
import { closeNats, connectNats, DEFAULT_NAMESPACE, isJetStreamOff, isJetStreamStorageFull, isNatsTimeout, NATS_OUTAGE_ENV, NATS_REPLICAS_ENV, natsOutageSeconds, NATS_URL_ENV, NATS_URL_FROM_ENV, NatsUnavailable, NatsWriteLost, outageOf, outageWindowText, shownNatsUrl, subjects } from "../../infra/nats.ts";
import { StorageFailed } from "../../infra/eventStore.ts";
import { LocalWorkersEnded, type LocalWorkersGone, type WorkerEnd } from "./errors.ts";
import type { Placement, Where } from "../kernel/episodes.ts";

export { DEFAULT_NAMESPACE };

/** An episode's place in JetStream: the log subject and the snapshot buckets, keyed by episode id. */
export const jetStreamWhere = (namespace: string) => (episode: string): Where => ({
  log: episode,
  snapshots: episode,
  dir: `jetstream:${namespace}/${episode}`,
  trace: { exporter: "none" },
});

export const remotePlacement = (namespace: string, remote: readonly string[] | "all", onWait?: Placement["onWait"]): Placement => ({
  remote,
  subjectOf: (episode, actorId) => subjects.actor(namespace, episode, actorId),
  ...(onWait === undefined ? {} : { onWait }),
});

/**
 * Runs `fn` with a connection, closing it (after flushing) whatever happens. Losing the server and
 * getting it back are said on stderr (unless `quiet`): the client reconnects for ever, and a long
 * command (follow, a worker, a sweep) would otherwise just go silent while the server is away; so
 * is a first connect that is tried again (the server not up yet). A write the server left
 * unanswered for longer than the outage window (`NatsWriteLost`) is a `NatsUnavailable` naming the
 * URL, the window, the episode, what was being written and how to go on: `resume`, the exact
 * command that continues the episode (in backquotes, as said), when the command has one (`run` does).
 */
export async function withNats<A>(url: string, who: string | { readonly role: string; readonly quiet?: boolean | undefined; readonly resume?: string }, fn: (nc: NatsConnection) => Promise<A>): Promise<A> {
  const { role, quiet, resume } = typeof who === "string" ? { role: who, quiet: false, resume: undefined } : who;
  const onRetry = quiet === true ? undefined : (error: unknown, windowMs: number) => void process.stderr.write(`${role}: no NATS server answers at ${shownNatsUrl(url)} yet (${(error as Error)?.message ?? String(error)}); trying again for up to ${+(windowMs / 1000).toFixed(1)} s (--nats-outage)\n`);
  const nc = await connectNats(url, { name: `probetown ${role} ${process.pid}`, ...(onRetry === undefined ? {} : { onRetry }) });
  if (quiet !== true) reportConnection(nc, url, role).catch(() => undefined);
  // A failure because the server did not answer: closing does not wait for it either.
  let serverAway = false;
  try {
    return await fn(nc);
  } catch (error) {
    serverAway = error instanceof NatsWriteLost || isNatsTimeout(error);
    if (error instanceof NatsWriteLost) throw new NatsUnavailable(url, error.cause, `the server stayed away longer than ${outageWindowText(outageOf(nc))} while ${role} was writing ${error.what} of episode ${error.episode}`, afterOutage(role, error.episode, resume));
    if (isJetStreamStorageFull(error) && !(error instanceof StorageFailed)) throw new NatsUnavailable(url, error, "the server's JetStream storage is full", `free its store_dir or raise max_file_store; ${role === "run" ? `nothing logged is lost: then ${resumeText(resume)} continues the episode` : "nothing logged is lost: then run the command again"}`);
    // A server that is up but does not answer (stopped, overloaded, cut off): its trouble, not ours (exit 2, not 4).
    if (isNatsTimeout(error)) throw new NatsUnavailable(url, error, `the server stopped answering ${role}`, role === "run" ? `nothing logged is lost: once it answers, ${resumeText(resume)} continues the episode` : "nothing logged is lost: run the command again once it answers");
    throw isJetStreamOff(error) ? new NatsUnavailable(url, error, "the server has no JetStream") : error;
  } finally {
    await closeNats(nc, { serverAway });
  }
}

/** The command that continues an episode, as said: the exact one when known. */
const resumeText = (resume: string | undefined): string => resume ?? "the same command with --resume";

/** What to do once the server is back: a run continues its episode; anything else is run again. */
const afterOutage = (role: string, episode: string, resume: string | undefined): string =>
  role === "run"
    ? `nothing logged is lost: once the server is back, ${resume === undefined ? "`probetown run … --resume` (the same command with --resume)" : resumeText(resume)} continues episode ${episode}`
    : `nothing logged is lost: run the command again once the server is back`;

async function reportConnection(nc: NatsConnection, url: string, role: string): Promise<void> {
  let lostAt: number | null = null;
  for await (const status of nc.status()) {
    if (status.type === "disconnect" && lostAt === null) {
      lostAt = performance.now();
      process.stderr.write(`${role}: lost the NATS server at ${shownNatsUrl(url)}; reconnecting (nothing already logged is lost)\n`);
    } else if (status.type === "reconnect" && lostAt !== null) {
      process.stderr.write(`${role}: reconnected to ${shownNatsUrl(url)} after ${((performance.now() - lostAt) / 1000).toFixed(1)} s\n`);
      lostAt = null;
    }
  }
}

export { LocalWorkersGone } from "./errors.ts";

const CLI = fileURLToPath(new URL("../cli/main.ts", import.meta.url));


/** Writes one line on stderr: what a sweep's lines go through unless it draws them around a progress bar. */
export const stderrLine = (line: string): void => void process.stderr.write(`${line}\n`);

/**
 * Watches a sweep's local workers (`spawnWorkers`). One that exits while the sweep waits is said
 * through `say` (unless `quiet`); when none is left, `onGone` gets a `LocalWorkersGone` saying how they
 * ended: a worker that could not connect (the server hung as it started) or crashed left its sweep
 * waiting for ever, silently, for outcomes nobody was going to produce. The returned function stops
 * watching: call it before stopping the workers on purpose.
 */
export function watchWorkers(children: readonly ChildProcess[], quiet: boolean | undefined, onGone: (gone: LocalWorkersGone) => void, ackWaitMs?: number, say: (line: string) => void = stderrLine): () => void {
  const ends: WorkerEnd[] = [];
  let internal = false;
  let watching = true;
  const exited = (child: ChildProcess, i: number) => (code: number | null, signal: NodeJS.Signals | null) => {
    if (!watching) return;
    const how = code !== null ? `exit ${code}` : `killed by ${signal}`;
    ends.push(code !== null ? { code } : { signal: String(signal) });
    internal ||= code === 4;
    const left = children.length - ends.length;
    // Said, as the sweep then goes quiet until the queue hands a job the worker held to another one.
    const redelivered = ackWaitMs === undefined ? "" : `; a job it was running goes to the workers left after the queue's ack wait (${Math.round(ackWaitMs / 1000)} s) and continues from its log`;
    if (quiet !== true) say(`sweep: local worker local-${i + 1} (pid ${child.pid}) ended (${how}); ${left === 0 ? "no local worker left" : `${left} of ${children.length} left${redelivered}`}`);
    if (left === 0) {
      watching = false;
      onGone(new LocalWorkersEnded({ workers: children.length, ends: [...ends] }, internal));
    }
  };
  // "close", not "exit": once the worker's stderr is read to its end, so its last words (why it
  // failed) come before the sweep says it ended.
  children.forEach((child, i) => child.once("close", exited(child, i)));
  return () => void (watching = false);
}

/**
 * Starts `n` `probetown worker` processes on this machine; they run until killed. A worker says
 * nothing of its routine (jobs taken, done, its stop: the sweep says where it stands), only what
 * concerns a job's log — what a redelivered job's resume cut or passed over, a wait for another
 * writer's lock — and why it failed, if it does (`worker --notes-only`; `--quiet` when the sweep is
 * quiet, which keeps the resume's notes, as `run --resume -q` does). Those lines reach the user
 * through `say`, one at a time, so the sweep can draw them above its progress bar: written by the
 * workers straight to the terminal they ran into the bar's line. (They ran with `--quiet`: a sweep
 * with local workers cut damaged tails off its logs without a word.)
 */
/** The sweep's replica count (`--nats-replicas`), passed on to the workers it starts. */
function replicasEnv(): Record<string, string> {
  const replicas = replicasFromSettings();
  return replicas === undefined ? {} : { [NATS_REPLICAS_ENV]: String(replicas) };
}

export function spawnWorkers(n: number, url: string, namespace: string, options: { readonly quiet?: boolean | undefined; readonly say?: (line: string) => void; readonly trace?: { readonly args: readonly string[]; readonly env: Readonly<Record<string, string>> } } = {}): ChildProcess[] {
  const say = options.say ?? stderrLine;
  return Array.from({ length: n }, (_, i) => {
    // An IPC channel, unused but for its end: when the sweep dies however it dies (Ctrl-C, SIGKILL),
    // the channel closes and the worker stops instead of lingering on the queue.
    // The URL goes in the environment, not the command line, where `ps` would show its credentials.
    // A traced sweep's workers trace to where the sweep does (services/distributed/jobTracing.ts: workerTrace).
    const trace = options.trace ?? { args: [], env: {} };
    const child = spawn(process.execPath, [CLI, "worker", "--nats", NATS_URL_FROM_ENV, "--namespace", namespace, "--name", `local-${i + 1}`, options.quiet === true ? "--quiet" : "--notes-only", ...trace.args], { stdio: ["ignore", "ignore", "pipe", "ipc"], env: { ...process.env, ...trace.env, [NATS_URL_ENV]: url, [NATS_OUTAGE_ENV]: String(natsOutageSeconds()), ...replicasEnv() } });
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on("line", say);
    return child;
  });
}
