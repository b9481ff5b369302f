// The distributed commands: `actor-host`, `worker`, `sweep` and `follow` (and the NATS branch of `run`,
// `verify`, `replay`, `inspect` and `fork`). Each connects to NATS, states what it serves or runs, and always closes the connection.
import { existsSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { registeredWorlds, worldModuleNamed, worldNamed } from "../kernel/worlds.ts";
import cliProgress from "cli-progress";
import { InProcessJobQueue } from "../../infra/inProcessJobQueue.ts";
import { JetStreamJobQueue } from "../../infra/jetStreamJobQueue.ts";
import { JobRejected, type JobOutcome, type JobQueue, type Submitted } from "../../infra/jobQueue.ts";
import { isDamage, type TornTail } from "../../events/errors.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { embeddedBackend } from "../../infra/backend.ts";
import { distributedBackend } from "../../infra/natsBackend.ts";
import { NatsTransport } from "../../infra/natsTransport.ts";
import { natsFlagHint, shownNatsUrl } from "../../infra/nats.ts";
import { JetStreamSnapshotStore } from "../../infra/jetStreamSnapshotStore.ts";
import { followJetStreamLog, jetStreamEpisodes, peekJetStreamLog, readJetStreamLog, setLockTtl, writerOf } from "../../infra/jetStreamEventStore.ts";
import { scanLog, type LogEnds } from "../../infra/fileEventStore.ts";
import type { EpisodeSnapshot } from "../../infra/snapshotStore.ts";
import { createTelemetry, parseTraceFlag, type Telemetry, type TelemetryConfig } from "../../infra/telemetry.ts";
import { jobSpans, workerTrace } from "../distributed/jobTracing.ts";
import { isStorageError, type FsyncPolicy } from "../../infra/eventStore.ts";
import { DEFAULT_IDLE_MS, hostEpisodeActors } from "../distributed/actorHostService.ts";
import { jetStreamWhere, LocalWorkersGone, spawnWorkers, stderrLine, watchWorkers, withNats } from "../distributed/episodes.ts";
import { checkWritable, explicitLogDir, filesWhere, tailCutNote } from "../kernel/episodes.ts";
import { checkOutDir, checkOutFile } from "./outputs.ts";
import { signalExitCode, signalsUntilRelease, stopAfterTickOnSignals } from "./signals.ts";
import { episodeJobHandler, jobsOf, parseSeeds, specDifferences, type EpisodeOutcome, type EpisodeSpec } from "../distributed/jobs.ts";
import { headerOf, layoutOf, replayWhere, UsageError, type ReplayOptions, type ReplayResult } from "../kernel/replay.ts";
import { recordLine } from "../views/records.ts";
import type { LogRecord } from "../../events/record.ts";
import type { ParentLogs } from "../kernel/worldModule.ts";
import { verifyEpisode, type VerifyOptions, type VerifyReport } from "../kernel/verify.ts";
import type { TreeReport } from "../kernel/verifyTree.ts";
import { logObjectNamesHeld, verifyLogObjects } from "./logObjects.ts";
import { conditionReport, renderConditionReport } from "../analysis/conditionMetrics.ts";

const say = (quiet: boolean | undefined, line: string) => void (!quiet && process.stderr.write(`${line}\n`));

/** A sweep the disk failed under (full, read-only): the machine's trouble, not the program's; the finished episodes are kept. */
export class SweepStorageFailed extends TaggedError {
  readonly _tag = "SweepStorageFailed";
  readonly exitCode = ExitCode.usage;
}

/** What a resume says while it waits for another writer's lock (silent, it looked like a hang). */
export const lockWaitNotice =
  (quiet: boolean | undefined, who = "run") =>
  ({ episode, holder, waitMs }: { episode: string; holder: string; waitMs: number }): void =>
    say(quiet, `${who}: episode ${episode} is locked by another writer (${holder}); waiting up to ${Math.ceil(waitMs / 1000)} s for its lock to expire (a killed writer's lock does; a live one's does not)`);

export function listFlag(flag: string, value: string): string[] | "all" {
  if (value.trim() === "all") return "all";
  const ids = value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (ids.length === 0) throw new UsageError(`${flag}: expected a comma-separated list of actor ids or 'all', got '${value}'`);
  return ids;
}

/** Checks a command's flags against a log's two ends, before the log is read whole and replayed. */
export type EndsCheck = (ends: LogEnds) => void;

/**
 * A JetStream log's two ends (`peekJetStreamLog`), for the checks a file log's `peekLog` serves; an
 * episode id without records is refused here, naming the namespace, the server and, when the
 * namespace holds few, the episodes it does hold (a typo, or another --namespace).
 */
export async function peekInNats(nc: NatsConnection, url: string, namespace: string, episode: string): Promise<LogEnds> {
  const ends = await peekJetStreamLog(nc, namespace, episode);
  if (ends.first !== null || ends.last !== null) return ends;
  throw new UsageError(`no episode ${episode} in namespace ${namespace} at ${shownNatsUrl(url)}: ${await heldInstead(nc, namespace, episode)}`);
}

/**
 * What a namespace holds, said when `episode` is not there: its episodes (the nearest ids first,
 * by the longest common prefix: a typo's intended id is usually among them), or none at all.
 */
async function heldInstead(nc: NatsConnection, namespace: string, episode: string): Promise<string> {
  const held = await jetStreamEpisodes(nc, namespace);
  if (held.length === 0) return "the namespace holds no episodes at all (check --namespace)";
  const common = (id: string): number => {
    let n = 0;
    while (n < id.length && id[n] === episode[n]) n++;
    return n;
  };
  const nearest = held.length <= 8 ? held : [...held].sort((a, b) => common(b) - common(a)).slice(0, 5);
  return `it holds ${held.length <= 8 ? nearest.join(", ") : `${held.length} episodes, among them ${nearest.join(", ")}`} (check the id and --namespace)`;
}

/**
 * The logs of a JetStream fork's ancestors (its parent, the parent's parent, …), read here for what
 * needs a fork's whole trajectory (an EnvProbe fork's summary), as a file fork's are read from disk.
 * A fork's header names its parent as `jetstream:<namespace>/<episode>`.
 */
export async function jetStreamParents(nc: NatsConnection, records: readonly LogRecord[]): Promise<ParentLogs> {
  const read = new Map<string, readonly LogRecord[]>();
  let head = records[0];
  while (head?.type === "episode.forked") {
    const parentLog = (head.payload as { parentLog: string }).parentLog;
    const named = /^jetstream:([^/]+)\/(.+)$/.exec(parentLog);
    if (named === null || read.has(parentLog)) break;
    const parent = await readJetStreamLog(nc, named[1]!, named[2]!);
    read.set(parentLog, parent);
    head = parent[0];
  }
  return (parentLog) => {
    const parent = read.get(parentLog);
    return parent === undefined ? null : { dir: parentLog, records: parent };
  };
}

/** How long `follow` waits for an episode's first record before it says what the namespace holds instead. */
export const FOLLOW_HINT_MS = 5000;

/** Verifies an episode whose log is in JetStream; `options.onProgress` drives a progress bar as for a file log. */
export async function verifyFromNats(episode: string, url: string, namespace: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  return withNats(url, "verify", async (nc) => {
    await peekInNats(nc, url, namespace, episode);
    return verifyEpisode(episode, options, distributedBackend(nc, namespace), jetStreamWhere(namespace)(episode));
  });
}

/**
 * `verify --nats <url> <name>`: the episode `name` (verifyFromNats), or, when the namespace has no
 * such episode, every log object below `name` (services/cli/logObjects.ts: a world's sweep keeping
 * its logs in JetStream), verified as a folder of episodes is.
 */
export async function verifyInNats(name: string, url: string, namespace: string, options: VerifyOptions & { readonly onTreeProgress?: (done: number, total: number) => void } = {}): Promise<{ readonly episode: VerifyReport } | { readonly objects: TreeReport }> {
  return withNats(url, "verify", async (nc) => {
    const ends = await peekJetStreamLog(nc, namespace, name);
    if (ends.first === null && ends.last === null) {
      const objects = await verifyLogObjects(nc, namespace, name, { ...(options.threads === undefined ? {} : { threads: options.threads }), chainOnly: options.chainOnly === true, ...(options.onTreeProgress === undefined ? {} : { onProgress: options.onTreeProgress }) });
      if (objects !== null) return { objects };
      const held = await logObjectNamesHeld(nc, namespace);
      // As before log objects were looked for, when the namespace keeps none.
      throw new UsageError(`no episode ${name} in namespace ${namespace} at ${shownNatsUrl(url)}: ${await heldInstead(nc, namespace, name)}${held === null ? "" : `; nor is it a name of its log objects, which are below ${held}`}`);
    }
    return { episode: await verifyEpisode(name, options, distributedBackend(nc, namespace), jetStreamWhere(namespace)(name)) };
  });
}

/**
 * Replays an episode whose log is in JetStream (actors in this process, no model calls), after
 * `check` has seen the log's two ends (the flags they refute fail before the replay).
 */
export async function replayFromNats(episode: string, url: string, namespace: string, options: ReplayOptions = {}, check?: EndsCheck, role = "replay"): Promise<ReplayResult> {
  return withNats(url, role, async (nc) => {
    check?.(await peekInNats(nc, url, namespace, episode));
    return replayWhere(jetStreamWhere(namespace)(episode), options, distributedBackend(nc, namespace));
  });
}

/** Keeps a replayed tick's snapshot in the episode's JetStream snapshot store; returns its key. */
export async function keepSnapshotInNats(snapshot: EpisodeSnapshot, url: string, namespace: string): Promise<string> {
  return withNats(url, "replay", (nc) => new JetStreamSnapshotStore(nc, namespace, snapshot.episode).put(snapshot));
}

/**
 * `follow`: prints an episode's JetStream log as it is written — the records already there, then
 * each new one — and stops after the episode's last tick is committed (or on Ctrl-C).
 */
export async function cmdFollow(episode: string, flags: { nats: string; namespace: string; fromSeq?: number; json?: boolean; quiet?: boolean }): Promise<number> {
  const stopped = new AbortController();
  const onSignal = () => stopped.abort();
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  try {
    return await withNats(flags.nats, { role: "follow", quiet: flags.quiet }, async (nc) => {
      say(flags.quiet, `follow: episode ${episode} in namespace ${flags.namespace} (${shownNatsUrl(flags.nats)}); waiting for records, Ctrl-C stops`);
      let lastTick: number | null = null;
      let tick: number | null = null;
      let committed: number | null = null;
      // An episode that has not started may be a typo, or in another namespace: say what is there
      // instead, once, and go on waiting (it may start yet).
      let started = false;
      const hint = setTimeout(() => {
        heldInstead(nc, flags.namespace, episode).then(
          (instead) => !started && say(flags.quiet, `follow: no record of episode ${episode} yet; ${instead}; still waiting, Ctrl-C stops`),
          () => undefined,
        );
      }, FOLLOW_HINT_MS);
      hint.unref();
      // An episode whose writer died (killed, its machine gone) gets no more records until it is
      // resumed: say so once it has been quiet a while with nobody holding its lock, and go on
      // waiting (a resume may yet continue it). Said again if it goes quiet again.
      let lastRecordAt = performance.now();
      let toldStopped = false;
      let checking = false;
      const stoppedWatch = setInterval(() => {
        if (!started || toldStopped || checking || performance.now() - lastRecordAt < FOLLOW_HINT_MS) return;
        checking = true;
        writerOf(nc, flags.namespace, episode).then(
          (writer) => {
            if (writer !== null || toldStopped || performance.now() - lastRecordAt < FOLLOW_HINT_MS) return;
            toldStopped = true;
            const at = committed === null ? "before its first tick was committed" : `after tick ${committed}${lastTick === null ? "" : ` of ticks 0–${lastTick}`}`;
            say(flags.quiet, `follow: episode ${episode} has had no new record for ${Math.round((performance.now() - lastRecordAt) / 1000)} s and nobody holds its writer lock: its writer stopped ${at} (\`probetown run … --resume\`, or its sweep's redelivered job, continues it); still waiting, Ctrl-C stops`);
          },
          () => undefined, // the server is away: looked at again at the next check
        ).finally(() => { checking = false; });
      }, FOLLOW_HINT_MS / 5);
      stoppedWatch.unref();
      try {
        // Read from the first record even with --from-seq: the header says which tick is the last.
        for await (const record of followJetStreamLog(nc, flags.namespace, episode, 0, { signal: stopped.signal })) {
          started = true;
          clearTimeout(hint);
          lastRecordAt = performance.now();
          toldStopped = false;
          if (record.type === "tick.committed") committed = record.tick;
          if (lastTick === null && (record.type === "episode.started" || record.type === "episode.forked")) lastTick = headerOf([record], jetStreamWhere(flags.namespace)(episode).dir).ticks - 1;
          const last = record.type === "tick.committed" && record.tick === lastTick;
          if (record.seq < (flags.fromSeq ?? 0)) {
            // The episode ended before --from-seq: nothing at or after it will ever come.
            if (last) throw new UsageError(`--from-seq ${flags.fromSeq}: episode ${episode} is finished and its last record is seq ${record.seq}`);
            continue;
          }
          if (flags.json) process.stdout.write(`${JSON.stringify(record)}\n`);
          else {
            if (record.tick !== tick) process.stdout.write(`tick ${(tick = record.tick)}\n`);
            process.stdout.write(`${recordLine(record)}\n`);
          }
          if (last) {
            say(flags.quiet, `follow: episode ${episode} committed its last tick (${lastTick}); done`);
            return 0;
          }
        }
        return 0; // Ctrl-C
      } finally {
        clearTimeout(hint);
        clearInterval(stoppedWatch);
      }
    });
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
  }
}

export async function cmdActorHost(episode: string, flags: { nats: string; namespace: string; actors: string; idleTimeout?: number; trace?: string; quiet?: boolean }): Promise<number> {
  const actors = listFlag("--actors", flags.actors);
  const telemetry = createTelemetry({ ...parseTraceFlag(flags.trace ?? "none", `actor-host-${process.pid}.trace.jsonl`), serviceName: "probetown-actor-host" });
  const idleMs = (flags.idleTimeout ?? DEFAULT_IDLE_MS / 1000) * 1000;
  const stopped = new AbortController();
  const onSignal = () => stopped.abort();
  process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
  try {
    return await withNats(flags.nats, { role: "actor-host", quiet: flags.quiet }, async (nc) => {
      const transport = new NatsTransport(nc);
      say(flags.quiet, `actor-host: waiting for episode ${episode} in namespace ${flags.namespace} (${shownNatsUrl(flags.nats)})${telemetry.enabled ? `; ${telemetry.description}` : ""}`);
      // As follow does: an episode that has not started may be a typo, or in another namespace (the
      // host waited silently for ever). Said once; it goes on waiting, its run may start yet.
      let ready = false;
      const hint = setTimeout(() => {
        heldInstead(nc, flags.namespace, episode).then(
          (instead) => !ready && say(flags.quiet, `actor-host: no record of episode ${episode} yet; ${instead}; still waiting for its run (\`probetown run … --remote\`), Ctrl-C stops`),
          () => undefined,
        );
      }, FOLLOW_HINT_MS);
      hint.unref();
      try {
        const r = await hostEpisodeActors({
          nc, transport, namespace: flags.namespace, episode, actors, idleMs, signal: stopped.signal,
          ...(telemetry.enabled ? { tracer: telemetry.tracer } : {}),
          onReady: (ids) => {
            ready = true;
            clearTimeout(hint);
            say(flags.quiet, `actor-host: serving ${ids.join(", ")}`);
          },
        });
        const progress = `${r.ticks} of ${r.totalTicks} ticks committed`;
        const resume = "continue it with `probetown run … --resume` (with --remote, start actor hosts for it again)";
        switch (r.end) {
          case "released":
            // No tick count: the followed log may not have shown the last commits yet.
            say(flags.quiet, `actor-host: episode ${episode} finished; its sequencer released these actors; stopping`);
            return 0;
          case "finished":
            say(flags.quiet, `actor-host: episode ${episode} finished (${progress}; its last tick was committed${r.requests === 0 ? " by a sequencer that never asked for these actors" : ""}); stopping`);
            return 0;
          case "already-finished":
            say(flags.quiet, `actor-host: episode ${episode} is already finished (${progress}); nothing to serve`);
            return 0;
          case "idle":
            say(flags.quiet, `actor-host: ${r.requests === 0 ? "no sequencer asked for these actors" : "the sequencer of episode " + episode + " has asked nothing"} for ${Math.round(r.idleMs / 1000)} s (--idle-timeout); stopping with the episode unfinished (${progress}): ${resume}`);
            return 2;
          case "signal":
            if (!r.began) say(flags.quiet, `actor-host: stopped before episode ${episode} began`);
            else if (r.requests === 0) say(flags.quiet, `actor-host: stopped while serving episode ${episode} (${progress}); no sequencer had asked for these actors`);
            else say(flags.quiet, `actor-host: stopped while serving episode ${episode}, unfinished (${progress}); its sequencer, if still running, fails naming these actors when it next asks for them: ${resume}`);
            return 0;
        }
      } finally {
        clearTimeout(hint);
        await transport.close();
      }
    });
  } finally {
    process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    await telemetry.shutdown().catch(() => undefined);
    // Said even with --quiet, as `run` does: the consumer half of the episode's trace is missing.
    const lost = telemetry.undelivered();
    if (lost !== null) process.stderr.write(`actor-host: warning: ${lost.spans} trace spans could not be delivered (${lost.error}); the episode's log is complete, its trace is not\n`);
  }
}

/**
 * `worker --ack-wait` / `--lock-ttl` given on a namespace whose queue or lock bucket exists: the ack
 * wait is updated, the lock ttl set (raised or lowered: writers renew their locks often enough for
 * any ttl the flag accepts), and either is said — they were silently ignored ("first creator
 * wins"). Left unset, the namespace keeps its own.
 */
async function applyWorkerSettings(nc: NatsConnection, flags: { namespace: string; ackWait?: number; lockTtl?: number; quiet?: boolean }): Promise<{ queue: JetStreamJobQueue; lockTtlMs?: number }> {
  const ns = flags.namespace;
  const queue = await JetStreamJobQueue.open(nc, ns, flags.ackWait === undefined ? {} : { ackWaitMs: flags.ackWait, setAckWait: true });
  const change = queue.ackWaitChange;
  if (change !== null) {
    // A shorter ack wait also applies to jobs taken under the old one: their workers heartbeat every third of it.
    const stale = change.toMs < change.fromMs && change.inFlight > 0
      ? `; ${change.inFlight} job${change.inFlight === 1 ? " is" : "s are"} taken: a worker started before this one keeps them alive only every ${Math.round(change.fromMs / 3)} ms, so restart such workers (they take the new ack wait) or their jobs are redelivered while they run`
      : "";
    say(flags.quiet, `worker: the queue's ack wait was ${change.fromMs} ms; set to ${change.toMs} ms for this namespace${stale}`);
  }
  if (flags.lockTtl === undefined) return { queue };
  const lock = await setLockTtl(nc, ns, flags.lockTtl);
  if (lock.beforeMs !== null && lock.beforeMs !== lock.ttlMs) {
    say(flags.quiet, `worker: the writer-lock ttl was ${lock.beforeMs} ms; set to ${lock.ttlMs} ms for namespace ${ns} (a killed writer's episode is taken over after up to ${Math.ceil((lock.ttlMs + 2000) / 1000)} s)`);
  }
  return { queue, lockTtlMs: lock.ttlMs };
}

/**
 * A sweep's rate for people: only the episodes run now make it, a resubmitted sweep's finished ones
 * (`served`) being their recorded outcomes, read back (10,000 episodes/s of nothing run).
 */
export function sweepRate(episodes: number, served: number, seconds: number, digits: number): string {
  const ranNow = episodes - served;
  if (served === 0) return `${(episodes / seconds).toFixed(digits)} episodes/s`;
  return ranNow === 0 ? `all ${served} already finished; none ran now` : `${served} already finished; ${ranNow} ran now: ${(ranNow / seconds).toFixed(digits)} episodes/s`;
}

export async function cmdWorker(flags: { nats: string; namespace: string; concurrency: number; name?: string; ackWait?: number; lockTtl?: number; fsync?: FsyncPolicy; trace?: string; quiet?: boolean; notesOnly?: boolean }): Promise<number> {
  const worker = `${flags.name ?? "worker"}@${hostname()}:${process.pid}`;
  // The worlds whose own sweeps queue jobs of their own, taken beside the episode jobs.
  const ownJobs = registeredWorlds().flatMap((w) => (w.jobs === undefined ? [] : [{ name: w.definition.name, jobs: w.jobs }]));
  // --trace: each episode's spans continue its job's trace (the traceparent a traced sweep's job
  // carries); a job of a world's own sweep gets a span, with one per episode under it.
  const parsedTrace = parseTraceFlag(flags.trace ?? "none", `worker-${process.pid}.trace.jsonl`);
  const traceConfig: TelemetryConfig | null = parsedTrace.exporter === "none" ? null : { ...parsedTrace, serviceName: "probetown-worker" };
  let chunkTelemetry: Telemetry | null = null;
  const chunkTracer = () => (traceConfig === null ? undefined : (chunkTelemetry ??= createTelemetry(traceConfig)).tracer);
  const traceLost = (what: string, lost: { readonly spans: number; readonly error: string }) => say(false, `${worker}: warning: ${lost.spans} trace spans of ${what} could not be delivered (${lost.error}); the log is complete, the trace is not`);
  const closeTrace = async () => {
    const telemetry = chunkTelemetry as Telemetry | null;
    if (telemetry === null) return;
    await telemetry.shutdown().catch(() => undefined);
    const lost = telemetry.undelivered();
    if (lost !== null) traceLost(`its ${ownJobs.map((w) => `${w.name} sweep`).join(" and ")} jobs`, lost);
  };
  // --notes-only (a sweep's local workers) keeps only what concerns a job's log: the resume's notes
  // and lock waits; --quiet only the resume's notes.
  const routine = flags.quiet === true || flags.notesOnly === true;
  return withNats(flags.nats, { role: "worker", quiet: routine }, async (nc) => {
    const { queue, lockTtlMs } = await applyWorkerSettings(nc, { ...flags, quiet: routine });
    // A redelivered job's resume that cuts a damaged tail, or does not continue from the latest
    // snapshot, says so, as `run --resume` does: even with --quiet, as that does, for it is the one
    // word on what was done to the job's log (its bytes kept aside, a snapshot passed over), once
    // per damaged episode.
    const onResumeNote = (episode: string, note: string) => say(false, `${worker}: ${episode}: ${note}`);
    const onRecovered = (episode: string, torn: TornTail, keptAt: string) => onResumeNote(episode, tailCutNote(torn, keptAt, "subject"));
    const handler = episodeJobHandler(distributedBackend(nc, flags.namespace, { ...(lockTtlMs === undefined ? {} : { lockTtlMs }), onLockWait: lockWaitNotice(flags.quiet, worker) }), jetStreamWhere(flags.namespace), {
      onResumeNote, onRecovered, ...(flags.fsync === undefined ? {} : { fsync: flags.fsync }),
      ...(traceConfig === null ? {} : { trace: traceConfig, onTraceUndelivered: (episode: string, lost: { readonly spans: number; readonly error: string }) => traceLost(episode, lost) }),
    });
    // What a stopped worker says it did (it stopped in silence): jobs finished, and the running ones.
    let finished = 0;
    const running = new Set<string>();
    const handle = queue.work(
      worker,
      async (job, context) => {
        running.add(job.id);
        try {
          const own = ownJobs.find((w) => w.jobs.owns(job));
          if (own !== undefined) {
            // A job of a world's own sweep (say, a chunk of seeds), run by the world.
            const started = performance.now();
            const ran = await own.jobs.run(job, context, chunkTracer(), { nc, namespace: flags.namespace });
            say(routine, `${worker}: ${job.id} done (attempt ${context.attempt}, ${ran.done}, ${((performance.now() - started) / 1000).toFixed(2)} s)`);
            finished++;
            return ran.result;
          }
          const outcome = (await handler(job, context)) as EpisodeOutcome;
          say(routine, `${worker}: ${job.id} done (attempt ${context.attempt}${outcome.resumedAfterTick === undefined ? "" : `, resumed after tick ${outcome.resumedAfterTick}`}, ${outcome.records} records, ${outcome.seconds.toFixed(2)} s)`);
          finished++;
          return outcome;
        } finally {
          running.delete(job.id);
        }
      },
      { concurrency: flags.concurrency },
    );
    // Listening before saying so: a signal sent on that line (a script's, a test's) met no listener
    // yet and killed the worker with the default action, without a word.
    const signals = signalsUntilRelease();
    try {
      say(routine, `${worker}: taking episode${ownJobs.map((w) => ` and ${w.name} sweep`).join("")} jobs from namespace ${flags.namespace} (${shownNatsUrl(flags.nats)}); Ctrl-C stops after the running jobs`);
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => {
        void signals.next().then(resolve);
        // A sweep's own worker (started with an IPC channel) stops with its sweep; the channel is
        // null, not undefined, once the sweep has already gone (a Ctrl-C during the worker's start).
        if (process.send !== undefined) {
          if (process.channel == null || !process.connected) return resolve(null);
          process.channel.unref();
          process.once("disconnect", () => resolve(null));
        }
      });
      const why = signal === null ? "its sweep ended" : `stopped by ${signal}`;
      const jobs = (n: number) => `${n} job${n === 1 ? "" : "s"}`;
      const runningAtStop = [...running];
      if (runningAtStop.length > 0) say(routine, `${worker}: ${why}; finishing ${runningAtStop.join(", ")} first (a second Ctrl-C or SIGTERM leaves ${runningAtStop.length === 1 ? "it" : "them"} to the queue)`);
      // A second signal abandons the running jobs, as a killed worker would: nothing is acknowledged, so
      // each is redelivered after the queue's ack wait and continued from its log (a finished episode is
      // found finished). Waiting for the running jobs, a hung server kept the worker retrying for ever.
      const secondSignal = signals.next();
      // A finished job's outcome is stored before the worker lets it go: a server that does not answer holds it here.
      const slow = runningAtStop.length > 0 ? undefined : setTimeout(() => say(routine, `${worker}: ${why}; still storing the outcome of a job it finished (the server at ${shownNatsUrl(flags.nats)} is not answering); a second Ctrl-C or SIGTERM leaves it to the queue`), 2000);
      const again = await Promise.race([handle.stop().then(() => null), secondSignal]);
      clearTimeout(slow);
      if (again === null) {
        await queue.close();
        const finishing = runningAtStop.length === 0 ? "no job was running" : `${runningAtStop.length === 1 ? "the running job" : "the running jobs"} ${runningAtStop.join(", ")} finished first`;
        say(routine, `${worker}: ${why} after ${jobs(finished)} finished; ${finishing}`);
        return 0;
      }
      await handle.abandon();
      const left = [...running];
      const redelivery = `redelivered after the queue's ack wait (${Math.round(queue.ackWaitMs / 1000)} s) to a worker, which continues ${left.length === 1 ? "it" : "each"} from its log`;
      const unsure = "; a finished job whose outcome the server did not store is unacknowledged: redelivered, it is found finished from its log";
      say(routine, `${worker}: ${why}, then by ${again} again: ${jobs(finished)} finished${left.length === 0 ? "" : `; left ${left.join(", ")} unfinished to the queue: ${redelivery}`}${unsure}`);
      return 0;
    } finally {
      signals.release();
    }
  }).finally(closeTrace);
}

interface SweepFlags {
  seeds: string;
  conditions?: string;
  ticks?: number;
  config?: unknown;
  snapshotEvery?: number;
  nats?: string;
  namespace: string;
  workers: number;
  json?: boolean;
  out?: string;
  quiet?: boolean;
  log?: string;
  trace?: string;
}

/** A bare `--trace jsonl` of an embedded sweep: each episode's trace beside its log (as `run`'s). */
const BESIDE_EACH_LOG = "\0beside each log";

/**
 * A sweep's `--trace`: where its job spans go (null: none) and what each episode traces to. Each
 * episode's trace starts at its job's span, which the job carries to whichever worker runs it. A
 * bare `jsonl` writes each episode's trace beside its log (no job spans: each such file holds one
 * whole trace); over NATS the logs are in JetStream, and the file must be named.
 */
function sweepTraceOf(flags: SweepFlags): { readonly spans: TelemetryConfig | null; readonly episodes?: TelemetryConfig | "default" } {
  if (flags.trace === undefined) return { spans: null };
  const config = parseTraceFlag(flags.trace, BESIDE_EACH_LOG);
  if (config.exporter === "none") return { spans: null };
  if (config.exporter === "jsonl" && config.file === BESIDE_EACH_LOG) {
    if (flags.nats !== undefined) throw new UsageError("--trace jsonl: a sweep over NATS keeps its logs in JetStream, with no directory to put traces beside; name the file: --trace jsonl:<file>");
    return { spans: null, episodes: "default" };
  }
  return { spans: config, episodes: config };
}

/**
 * A sweep's progress bar on a terminal, and the lines said while it is drawn (`say`: what an
 * episode's resume cut or passed over, a local worker's words): each goes above the bar, which is
 * drawn again below it. Written straight to stderr, such a line ran into the bar's own. Off a
 * terminal (or with --quiet or --json) there is no bar, and each line is written as it comes.
 *
 * What a resume cut off an episode's log (its bytes kept aside) or passed over (a damaged
 * latest-snapshot pointer, a snapshot past the log's end) is said even with --quiet, as `run
 * --resume -q` says it: --quiet drops the sweep's progress and status, but this is the one word on
 * what was done to the user's data, at most once per damaged episode (an embedded sweep's and a
 * local worker's alike; lock waits and the routine lines stay quiet).
 */
function sweepProgress(tty: boolean): { start: (total: number) => cliProgress.SingleBar | null; say: (line: string) => void; stop: () => void } {
  let multi: cliProgress.MultiBar | null = null;
  return {
    start: (total) => {
      if (!tty) return null;
      // A MultiBar of one bar: unlike a SingleBar, it writes lines above itself (`log`) and keeps its place.
      multi = new cliProgress.MultiBar({ format: `sweep [{bar}] {value}/{total} episodes · {failed} failed · {eta_formatted} left`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
      return multi.create(total, 0, { failed: 0 });
    },
    // The bar turns the terminal's line wrapping off while it is drawn: on for the line, which is
    // longer than the screen is wide more often than not (a torn tail's note), or its end was cut off.
    say: (line) => (multi === null ? stderrLine(line) : multi.log(`\x1b[?7h${line}\n\x1b[?7l`)),
    stop: () => {
      if (multi === null) return;
      multi.update(); // the lines logged since its last redraw
      multi.stop();
      multi = null;
    },
  };
}

/** A sweep's --out is checked before any episode runs: outcomes that cannot be written would be lost. */
export async function cmdSweep(world: string, flags: SweepFlags): Promise<number> {
  checkOutFile(flags.out);
  if (flags.log !== undefined) checkOutDir(flags.log, `--log ${flags.log}`, "the episodes");
  if (flags.log !== undefined) checkWritable(explicitLogDir(flags.log), flags.log, false);
  const jobs = jobsOf({
    world,
    seeds: parseSeeds(flags.seeds),
    conditions: (flags.conditions ?? worldNamed(world).defaultCondition).split(",").map((c) => c.trim()).filter((c) => c.length > 0),
    ...(flags.ticks === undefined ? {} : { ticks: flags.ticks }),
    ...(flags.config === undefined ? {} : { config: flags.config }),
    ...(flags.snapshotEvery === undefined ? {} : { snapshotEvery: flags.snapshotEvery }),
  });
  const trace = sweepTraceOf(flags);
  const started = performance.now();
  let gatheredSoFar = 0;
  const progress = sweepProgress(!flags.json && !flags.quiet && process.stderr.isTTY === true);
  const spans = jobSpans(trace.spans, (job) => ({ "probetown.world": world, "probetown.seed": (job.spec as { seed: number }).seed, "probetown.condition": (job.spec as { condition: string }).condition }));
  const gather = async (queue: JobQueue, announce?: (s: Submitted) => void, stopped?: () => boolean): Promise<{ submitted: Submitted; outcomes: JobOutcome[] }> => {
    const submitted = await queue.submit(spans.tag(jobs));
    spans.submitted(submitted);
    announce?.(submitted);
    const bar = progress.start(jobs.length);
    const outcomes: JobOutcome[] = [];
    try {
      for await (const outcome of queue.outcomes(jobs.map((j) => j.id))) {
        spans.settle(outcome);
        outcomes.push(outcome);
        gatheredSoFar = outcomes.length;
        bar?.update(outcomes.length, { failed: outcomes.filter((o) => !o.ok).length });
        if (bar === null && !flags.quiet && !flags.json && (outcomes.length % 20 === 0 || outcomes.length === jobs.length)) say(false, `sweep: ${outcomes.length}/${jobs.length} episodes`);
        if (stopped?.() === true) break;
      }
    } finally {
      progress.stop();
    }
    return { submitted, outcomes };
  };
  let gathered: { submitted: Submitted; outcomes: JobOutcome[] };
  // A world with metrics gets a paired report: each finished episode's scores, from its log.
  const metricsOf = worldModuleNamed(world).metrics;
  const scores = new Map<string, Readonly<Record<string, number>>>();
  const score = async (outcomes: readonly JobOutcome[], read: (o: EpisodeOutcome) => Promise<readonly LogRecord[]> | readonly LogRecord[]): Promise<void> => {
    if (metricsOf === undefined) return;
    for (const o of outcomes) if (o.ok) scores.set(o.id, metricsOf(await read(o.result as EpisodeOutcome)));
  };
  /** Episodes whose log or snapshot was found damaged (the sweep then exits 3). */
  const damaged = new Set<string>();
  if (flags.nats === undefined) {
    if (flags.workers > 1) throw new UsageError("--workers: more than one worker needs --nats (the embedded sweep runs in this process)");
    const root = flags.log;
    const where = root === undefined ? filesWhere(undefined, true) : (episode: string) => filesWhere(join(root, episode), true)(episode);
    const queue = new InProcessJobQueue();
    // A full disk fails every episode after it the same way: the sweep stops at the first one.
    let diskFailure: Error | null = null;
    // Ctrl-C stops the running episode after its tick in progress and says where the sweep stands,
    // as `run` does (it died without a word).
    const stop = stopAfterTickOnSignals("sweep");
    // An unfinished episode's resume that cuts a torn tail, or does not continue from the latest
    // snapshot, says so, as `run --resume` does: with --quiet too, as that does (what was done to
    // the episode's log is said once, where nothing else would say it; see sweepProgress).
    const onResumeNote = (episode: string, note: string) => progress.say(`sweep: ${episode}: ${note}`);
    const run = episodeJobHandler(embeddedBackend, where, {
      stop: stop.signal, onResumeNote, onRecovered: (episode, torn, keptAt) => onResumeNote(episode, tailCutNote(torn, keptAt, "file")),
      ...(trace.episodes === undefined ? {} : { trace: trace.episodes, onTraceUndelivered: (episode: string, lost: { readonly spans: number; readonly error: string }) => progress.say(`sweep: warning: ${lost.spans} trace spans of ${episode} could not be delivered (${lost.error}); its log is complete, its trace is not`) }),
    });
    const handle = queue.work("embedded", (job, context) => {
      if (diskFailure !== null) return Promise.reject(new JobRejected("not run: the sweep stopped on a disk failure"));
      if (stop.signal.aborted) return Promise.reject(new JobRejected(`not run: the sweep was stopped by ${String(stop.signal.reason)}`));
      return run(job, context).catch((error: unknown) => {
        if (isStorageError(error)) diskFailure ??= error as Error;
        // A damaged log (or snapshot) fails the same on every delivery: it was tried five times
        // and the sweep exited 4, an internal error; it exits 3, as verify does.
        if (isDamage(error)) {
          damaged.add(job.id);
          throw new JobRejected(`${error.message} (the episode's log or snapshot is damaged: \`probetown verify\` it; removed, the same sweep runs it anew)`, { cause: error });
        }
        throw error;
      });
    });
    try {
      gathered = await gather(queue, undefined, () => diskFailure !== null || stop.signal.aborted);
      await handle.stop();
      await queue.close();
    } finally {
      stop.release();
      await spans.close();
    }
    if (stop.signal.aborted) {
      const done = gathered.outcomes.filter((o) => o.ok).length;
      say(false, `sweep: stopped by ${String(stop.signal.reason)} after ${done} of ${jobs.length} episodes finished; the same sweep command${root === undefined ? "" : ` (--log ${root})`} runs the rest, continuing the one cut short from its last committed tick`);
      return signalExitCode(stop.signal.reason);
    }
    if (diskFailure !== null) {
      const done = gathered.outcomes.filter((o) => o.ok).length;
      throw new SweepStorageFailed(`sweep stopped after ${done} of ${jobs.length} episodes finished: ${(diskFailure as Error).message}; the finished episodes are kept, and the same sweep command, once there is space, runs the rest (an interrupted episode resumes)`, { cause: diskFailure });
    }
    await score(gathered.outcomes, (o) => scanLog(layoutOf(o.location).log, { validate: false }).records);
  } else {
    const url = flags.nats;
    if (flags.log !== undefined) throw new UsageError(`--log: a sweep over NATS keeps its logs in JetStream (namespace ${flags.namespace}), not in a directory`);
    gathered = await withNats(url, { role: "sweep", quiet: flags.quiet }, async (nc) => {
      const queue = await JetStreamJobQueue.open(nc, flags.namespace);
      // What the workers say of a job's log comes here, above the progress bar (none of their routine).
      const children = spawnWorkers(flags.workers, url, flags.namespace, { quiet: flags.quiet, say: progress.say, trace: workerTrace(trace.spans) });
      const hint = natsFlagHint(url);
      const startWorkers = `start workers with \`probetown worker ${hint.flag} --namespace ${flags.namespace}\`${hint.after}`;
      // Said after the submit, which knows what it queued: a finished episode is served, not queued again.
      const announce = ({ queued, pending, finished }: Submitted) => {
        const waiting = queued.length + pending.length > 0 && flags.workers === 0 ? `; ${startWorkers}` : "";
        if (finished.length === 0 && pending.length === 0) {
          if (flags.workers === 0) say(flags.quiet || flags.json, `sweep: ${jobs.length} episodes queued in namespace ${flags.namespace}; ${startWorkers}`);
          return;
        }
        const parts = [
          ...(finished.length > 0 ? [`${finished.length} already finished (served from their recorded outcomes)`] : []),
          ...(pending.length > 0 ? [`${pending.length} already queued or running`] : []),
          queued.length === 0 ? "none queued" : `${queued.length} queued`,
        ];
        say(flags.quiet || flags.json, `sweep: ${jobs.length} episodes in namespace ${flags.namespace}: ${parts.join(", ")}${waiting}`);
      };
      // Workers that all end (none could connect, or they crashed) take no more jobs: stop waiting.
      let gone: LocalWorkersGone | null = null;
      const unwatch = watchWorkers(children, flags.quiet || flags.json, (g) => {
        gone = g;
        void queue.close();
      }, queue.ackWaitMs, progress.say);
      try {
        const got = await gather(queue, announce);
        await score(got.outcomes, (o) => readJetStreamLog(nc, flags.namespace, o.episode));
        return got;
      } catch (error) {
        if (gone === null) throw error;
        const left = jobs.length - gatheredSoFar;
        throw new LocalWorkersGone(`sweep: ${(gone as LocalWorkersGone).message}; ${gatheredSoFar} of ${jobs.length} episodes finished, the other ${left} stay queued in namespace ${flags.namespace}: the same sweep command runs them (the finished ones are served from their outcomes), or ${startWorkers}`, (gone as LocalWorkersGone).internal);
      } finally {
        unwatch();
        for (const child of children) child.kill("SIGTERM");
        await queue.close();
        await spans.close();
      }
    });
  }
  const seconds = (performance.now() - started) / 1000;
  const lostSpans = await spans.close();
  if (lostSpans !== null) process.stderr.write(`sweep: warning: ${lostSpans.spans} trace spans of its jobs could not be delivered (${lostSpans.error}); the logs are complete, the traces are not\n`);
  // A finished id is never run again: an outcome recorded for other settings (an earlier sweep in
  // this namespace) is not this sweep's, and saying so beats returning it as if it were.
  const asked = new Map(jobs.map((j) => [j.id, j.spec]));
  const outcomes = gathered.outcomes.map((o): JobOutcome => {
    if (!o.ok) return o;
    const differ = specDifferences((o.result as EpisodeOutcome).spec, asked.get(o.id)!);
    return differ.length === 0 ? o : { id: o.id, ok: false, rejected: true as const, reason: "episode-id-taken" as const, worker: o.worker, attempt: o.attempt, error: `an earlier sweep already ran episode ${o.id} here with other settings (${differ.join("; ")}); its outcome is not this sweep's` };
  });
  const failed = outcomes.filter((o) => !o.ok);
  // Embedded, a finished episode is "resumed" with nothing to append: it counted as run now (all
  // finished, it said "6 ok in 0.0 s (135 episodes/s)" and alreadyFinished 0).
  const finishedBefore = (o: JobOutcome) => o.ok && (o.result as EpisodeOutcome).records === 0 && (o.result as EpisodeOutcome).resumedAfterTick !== undefined;
  const served = flags.nats === undefined ? outcomes.filter(finishedBefore).length : gathered.submitted.finished.length;
  // A world with metrics gets its paired report: each condition's means, and each against the first.
  const scored = outcomes.flatMap((o) => {
    const spec = o.ok ? (o.result as EpisodeOutcome).spec : undefined;
    const metrics = scores.get(o.id);
    return metrics === undefined || spec === undefined ? [] : [{ condition: spec.condition, seed: spec.seed, metrics }];
  });
  const conditions = [...new Set(jobs.map((j) => (j.spec as EpisodeSpec).condition))];
  const byCondition = scored.length === 0 ? null : conditionReport(scored, conditions);
  const report = {
    world, episodes: jobs.length, ok: outcomes.length - failed.length, failed: failed.length, alreadyFinished: served, seconds,
    ...(byCondition === null ? {} : { metrics: byCondition }),
    outcomes: outcomes.map((o) => ({ id: o.id, ok: o.ok, worker: o.worker, attempt: o.attempt, ...(o.ok ? (o.result as EpisodeOutcome) : { error: o.error }) })),
  };
  if (flags.out !== undefined) writeFileSync(flags.out, JSON.stringify(report, null, 2) + "\n");
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else {
    process.stdout.write(`${jobs.length} episodes: ${report.ok} ok, ${report.failed} failed in ${seconds.toFixed(1)} s (${sweepRate(jobs.length, served, seconds, 1)})\n`);
    for (const f of failed.slice(0, 20)) process.stdout.write(`  FAILED ${f.id} after ${f.attempt} attempt${f.attempt === 1 ? "" : "s"}: ${f.error ?? "(no message)"}\n`);
    if (failed.some((f) => f.reason === "episode-id-taken")) {
      process.stdout.write(`  another episode (from \`run\` or another sweep) has that id: ${flags.nats !== undefined ? "use another --namespace" : flags.log === undefined ? "pass --log <dir> to run this one elsewhere" : "choose another --log"}\n`);
    }
    if (byCondition !== null && !flags.quiet) process.stdout.write(renderConditionReport(byCondition) + "\n");
    if (flags.out !== undefined) process.stdout.write(`outcomes: ${flags.out}\n`);
  }
  // Every failure a rejected job (nothing could run it): the input is at fault, not the machinery.
  return failed.length === 0 ? 0 : failed.every((f) => f.rejected === true) ? (failed.some((f) => damaged.has(f.id)) ? 3 : 2) : 4;
}
