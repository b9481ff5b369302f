// `verify`: the hash chain and catalogue check (file, line, seq of the first damage), the link of
// a fork to its parent, then a full replay that recomputes every record and tick state hash.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { InvalidPayload, LogCorrupted, TornTail, UnknownEventType } from "../../events/errors.ts";
import { embeddedBackend, type Backend } from "../../infra/backend.ts";
import { FIRST_SEGMENT, logWriter, scanLog, strayLogFiles } from "../../infra/fileEventStore.ts";
import { PROBETOWN_VERSION, type Where } from "./episodes.ts";
import { Divergence, headerOf, layoutOf, NO_RECORDS, notStarted, replayRecords, resolveEpisodeDir, type EpisodeHeader } from "./replay.ts";
import { chainOfFile, chainOfRecords, type ChainChecked } from "./verifyChain.ts";
import { replayInSpans } from "./verifySpans.ts";
import { NoRecordsUnderId } from "./errors.ts";
import { checkSnapshotFiles } from "./verifySnapshots.ts";
import { shownPath } from "../views/text.ts";
import { latestPointer } from "../../infra/snapshotStore.ts";
import type { LogRecord } from "../../events/record.ts";

export interface VerifyReport {
  readonly ok: boolean;
  readonly exitCode: 0 | 1 | 3;
  readonly episode: string | null;
  readonly records: number;
  readonly ticks: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly problem: { readonly kind: "damaged" | "diverged"; readonly seq: number | null; readonly message: string; readonly details: readonly string[] } | null;
  readonly notes: readonly string[];
  /** Set when a log that holds stops before its planned last tick (an interrupted run): why, as in `notes`. */
  readonly unfinished?: string;
  /** Set when the log holds no record because its episode never started (`notStarted`): why; `notes` say how to start it. */
  readonly notStarted?: string;
  readonly text: string;
}

export interface VerifyOptions {
  /** After each replayed tick: ticks done and the episode's total (a large town takes minutes). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Also check every stored snapshot (`verify --snapshots`): each damaged one is reported, exit 3. */
  readonly snapshots?: boolean;
  /**
   * Checks the log's integrity only (`verify --chain-only`): hash chain, record envelopes,
   * catalogue, header and tick sequence, reading a file log record by record; no actor replayed.
   */
  readonly chainOnly?: boolean;
  /**
   * Threads replaying an episode directory's log in spans between its snapshots, this one
   * included (default: every core, when one is idle; else one); 1 replays it on this thread. A
   * small log, or one without snapshots inside it, is replayed on this thread.
   */
  readonly threads?: number;
  /** How a log is cut into spans (defaults in verifySpans.ts; tests and the bench set them). */
  readonly spans?: { readonly from?: number; readonly headStart?: number };
}

/**
 * Verifies an episode on `backend` (default: the embedded one, where `path` is an episode
 * directory); `where` locates the episode in the backend's stores when they are not files (JetStream).
 */
export const verifyEpisode = async (path: string, options: VerifyOptions = {}, backend: Backend = embeddedBackend, where?: Where): Promise<VerifyReport> => {
  const started = performance.now();
  const dir = where?.dir ?? resolveEpisodeDir(path);
  // A log that holds, checked in spans on worker threads; anything else (damage, a divergence, a
  // snapshot that does not hold) is verified again on this thread, whose report is the one given.
  if (where === undefined && options.chainOnly !== true && backend === embeddedBackend) {
    const inSpans = await verifyInSpans(dir, options, started);
    if (inSpans !== null) return inSpans;
  }
  return verifyOnce(dir, options, backend, where, started);
};

/**
 * Verifies an episode directory's log in spans on worker threads (verifySpans.ts): the report of a
 * log that holds, or null (not worth it, or something does not hold) for the one-thread verify.
 */
async function verifyInSpans(dir: string, options: VerifyOptions, started: number): Promise<VerifyReport | null> {
  const layout = layoutOf(dir);
  const replayed = await replayInSpans(dir, layout, {
    ...(options.threads === undefined ? {} : { threads: options.threads }),
    ...options.spans,
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  });
  if (replayed === null) return null;
  const v = new Verification(started);
  const before = await beforeReplay(v, dir, layout, replayed, embeddedBackend, undefined);
  if ("report" in before) return null;
  const report = await finish(v, dir, layout, options, before.header, before.writer, replayed.count, replayed, undefined, "replay");
  return report.ok ? report : null;
}

/** The checks every verify makes of a log, in order, and how it reports them. */
class Verification {
  readonly notes: string[] = [];
  readonly started: number;
  constructor(started: number) {
    this.started = started;
  }

  elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  fail(kind: "damaged" | "diverged", seq: number | null, message: string, details: string[], episode: string | null, records: number): VerifyReport {
    const notes = this.notes;
    return {
      ok: false,
      exitCode: kind === "damaged" ? 3 : 1,
      episode,
      records,
      ticks: 0,
      seconds: this.elapsed(),
      eventsPerSecond: 0,
      problem: { kind, seq, message, details },
      notes,
      text: [`FAILED: ${message}`, ...details.map((d) => `  ${d}`), ...notes.map((n) => `note: ${n}`)].join("\n"),
    };
  }

  /** The report of a scan that stopped at damage (the errors a log's scan throws), or null for another error. */
  scanFailure(error: unknown): VerifyReport | null {
    if (error instanceof LogCorrupted) {
      // In JetStream, a resume is what cuts a damaged tail (`repair` is for files).
      // Only a message that is not records: a complete record off the log is refused by resume too.
      const remedy = error.file.startsWith("jetstream:") && error.completeRecord !== true ? "; `probetown run … --resume --nats …` (the episode's own command) cuts the damaged messages off, keeping them on its cut subject, and continues" : "";
      return this.fail("damaged", error.seq, error.message, error.line === 1 && error.startMissing === true ? [] : [`records before this one are intact${remedy}`], null, 0);
    }
    if (error instanceof UnknownEventType || error instanceof InvalidPayload) return this.fail("damaged", error.seq, error.message, [], null, 0);
    return null;
  }
}

/** What a scan of the whole log found: its record count, first record and a torn tail. */
interface Scanned {
  readonly count: number;
  readonly first: LogRecord | null;
  readonly torn: TornTail | null;
}

/** How far the log's actors were replayed (or, with --chain-only, its ticks were checked). */
interface Reached {
  readonly lastTick: number;
  readonly incompleteTick: boolean;
}

/**
 * The checks before a replay, once the log is scanned: notes on a writer and stray files, a torn
 * tail, a log without records, its header, and a fork's link to its parent. A report when they
 * end the verify, else the header.
 */
async function beforeReplay(v: Verification, dir: string, layout: { readonly log: string; readonly snapshots: string }, scan: Scanned, backend: Backend, where: Where | undefined): Promise<{ readonly report: VerifyReport } | { readonly header: EpisodeHeader; readonly writer: number | null }> {
  const { notes } = v;
  const stores = backend.eventStores;
  // A log its run is still writing (its lock names a live process) may be read mid-record or
  // mid-tick: that is neither damage nor an interrupted run to resume.
  const writer = where === undefined ? logWriter(layout.log) : null;
  if (writer !== null) notes.push(`process ${writer} is writing this log (its run is going on): verified as far as it had written`);
  const stray = where === undefined ? strayLogFiles(layout.log) : [];
  if (stray.length > 0) notes.push(`${shownPath(layout.log)} also holds ${stray.join(", ")}, which ${stray.length === 1 ? "is" : "are"} not read: a segment is named by its first record's seq in 12 digits (${FIRST_SEGMENT}), so a segment renamed by hand is left out of the log`);
  if (scan.torn !== null && writer === null) {
    const torn: TornTail = scan.torn;
    return { report: v.fail("damaged", torn.afterSeq, torn.message, [`${scan.count} records before it are intact; \`probetown repair ${shownPath(dir)}\` cuts the torn bytes off (keeping them in a .torn file)`], scan.first?.episode ?? null, scan.count) };
  }
  // A log folder without records lost its segments (or its run wrote nothing): nothing holds.
  if (scan.count === 0) {
    // In JetStream an id without records is most often a typo, or another --namespace.
    if (where !== undefined) throw new NoRecordsUnderId({ dir });
    // An episode whose run stopped before its first record is not damaged, as a run stopped
    // mid-tick is not: it verifies (exit 0), saying it was not started and how to start it.
    const unstarted = notStarted(dir);
    if (unstarted === null) return { report: v.fail("damaged", null, `${shownPath(layout.log)}: ${NO_RECORDS}`, [], null, 0) };
    notes.push(unstarted.how);
    const report: VerifyReport = {
      ok: true,
      exitCode: 0,
      episode: null,
      records: 0,
      ticks: 0,
      seconds: v.elapsed(),
      eventsPerSecond: 0,
      problem: null,
      notes,
      notStarted: unstarted.why,
      text: [`NOT STARTED: ${shownPath(dir)}: ${unstarted.why}; nothing to verify`, ...notes.map((n) => `note: ${n}`)].join("\n"),
    };
    return { report };
  }
  const header = headerOf([scan.first!], shownPath(layout.log));
  if (header.kind === "forked") {
    // A parent in files is named relative to the child's directory; one in JetStream as
    // `jetstream:<namespace>/<episode>`, readable here when the child is in the same namespace.
    const named = String(header.payload.parentLog);
    const sameStream = where !== undefined && named.startsWith("jetstream:") && named.slice(0, named.lastIndexOf("/")) === dir.slice(0, dir.lastIndexOf("/"));
    const parentLog = sameStream ? String(header.payload.parent) : resolve(dir, named);
    if (sameStream || existsSync(parentLog)) {
      // A parent in files is read up to the fork point only: damage after it (a parent altered or
      // torn later) failed this fork's verify with the parent's error, no report, exit 3.
      let parent: readonly LogRecord[];
      try {
        parent = sameStream ? (await stores.scan(parentLog)).records : scanLog(parentLog, { untilSeq: Number(header.payload.atSeq) }).records;
      } catch (error) {
        if (!(error instanceof LogCorrupted || error instanceof UnknownEventType || error instanceof InvalidPayload)) throw error;
        return { report: v.fail("damaged", header.record.seq, `the fork's parent log is damaged before the fork point (seq ${String(header.payload.atSeq)}), so the fork's link to it cannot be checked: ${error.message}`, [], header.episode, scan.count) };
      }
      const at = parent.find((r) => r.seq === Number(header.payload.atSeq));
      const end = parent.at(-1);
      if (at === undefined && (end === undefined || end.seq < Number(header.payload.atSeq))) {
        // Shorter than the fork point (cut back after the fork was made): nothing there to compare, as with no parent.
        notes.push(`the parent log ${sameStream ? named : shownPath(parentLog)} ends ${end === undefined ? "before its first record" : `at seq ${end.seq}`}, before the fork point (seq ${String(header.payload.atSeq)}): it lost its last records after the fork was made (a crash, and \`repair\` cutting what it tore); checked the fork against its stored base snapshot only`);
      } else if (at === undefined || at.hash !== header.payload.parentHash) {
        return { report: v.fail("diverged", header.record.seq, `fork header does not match its parent: record seq ${String(header.payload.atSeq)} of ${sameStream ? named : shownPath(parentLog)} ${at === undefined ? "is missing" : "has a different hash"}`, [], header.episode, scan.count) };
      }
    } else notes.push(`parent log ${String(header.payload.parentLog)} not found; checked the fork against its stored base snapshot only`);
  }
  return { header, writer };
}

/** Verifies on this thread: the scan (record by record with --chain-only), then the replay (none with --chain-only). */
async function verifyOnce(dir: string, options: VerifyOptions, backend: Backend, where: Where | undefined, started: number): Promise<VerifyReport> {
  const layout = where === undefined ? layoutOf(dir) : { log: where.log, snapshots: where.snapshots };
  const v = new Verification(started);
  const stores = backend.eventStores;
  if (options.chainOnly === true) {
    let checked: ChainChecked;
    try {
      checked = where === undefined ? chainOfFile(layout.log) : chainOfRecords(await stores.scan(layout.log));
    } catch (error) {
      const report = v.scanFailure(error);
      if (report !== null) return report;
      throw error;
    }
    const before = await beforeReplay(v, dir, layout, checked, backend, where);
    if ("report" in before) return before.report;
    const { header } = before;
    if (checked.problem !== null) return v.fail("diverged", checked.problem.seq, checked.problem.message, [], header.episode, checked.count);
    const reached = { lastTick: checked.ticks.lastTick ?? header.firstTick - 1, incompleteTick: checked.ticks.tail > 0 };
    return finish(v, dir, layout, options, header, before.writer, checked.count, reached, where, "chain");
  }
  const scanned = await settled(stores.scan(layout.log));
  if (!scanned.ok) {
    const report = v.scanFailure(scanned.error);
    if (report !== null) return report;
    throw scanned.error;
  }
  const scan = scanned.value;
  const before = await beforeReplay(v, dir, layout, { count: scan.records.length, first: scan.records[0] ?? null, torn: scan.torn }, backend, where);
  if ("report" in before) return before.report;
  const { header } = before;
  const { notes } = v;
  const fail = v.fail.bind(v);
  const replayed = await settled(replayRecords(dir, scan.records, { snapshots: layout.snapshots, partialTick: true, ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }) }, backend));
  if (!replayed.ok) {
    const error = replayed.error;
    if (error instanceof Divergence) {
      const recordedBy = header.record.meta?.probetown;
      if (recordedBy !== PROBETOWN_VERSION) {
        notes.push(`the log was recorded by probetown ${typeof recordedBy === "string" ? recordedBy : "(unknown version)"}, this is ${PROBETOWN_VERSION}: a change in the code can explain the divergence`);
      }
      return fail("diverged", error.seq, error.message, error.details, header.episode, scan.records.length);
    }
    throw error;
  }
  const result = replayed.value;
  result.host.stop();
  return finish(v, dir, layout, options, header, before.writer, scan.records.length, result, where, "replay");
}

/** The checks after the replay (a latest snapshot past the log's end, --snapshots, an unfinished log) and the report. */
async function finish(v: Verification, dir: string, layout: { readonly log: string; readonly snapshots: string }, options: VerifyOptions, header: EpisodeHeader, writer: number | null, records: number, result: Reached, where: Where | undefined, how: "replay" | "chain"): Promise<VerifyReport> {
  const { notes } = v;
  const fail = v.fail.bind(v);
  // Snapshots taken after ticks the log no longer holds (it was cut back: `repair`, a crash that
  // lost its last ticks) are kept as evidence of what was lost, and never used: said here.
  const pointer = where === undefined ? latestPointer(layout.snapshots) : null;
  if (pointer !== null && pointer.tick > result.lastTick && writer === null) {
    notes.push(`the latest snapshot (${shownPath(join(layout.snapshots, `${pointer.key}.json`))}) is of tick ${pointer.tick}, past the log's last committed tick ${result.lastTick}: the log was cut back after it was taken (by \`repair\`, or a crash that lost its last ticks); it is kept, not used (\`run --resume\` continues from the newest snapshot of a tick the log holds)`);
  }
  if (options.snapshots === true) {
    if (where !== undefined) notes.push("--snapshots checks the snapshot files of an episode directory; the snapshots of a log in JetStream are checked when resume or fork reads them");
    else {
      const checked = await checkSnapshotFiles(layout.snapshots, header);
      if (checked.damaged.length > 0) {
        return fail("damaged", null, `${checked.damaged.length} of ${checked.checked} snapshots in ${shownPath(layout.snapshots)} are damaged (the log holds: resume and fork refuse a damaged snapshot; remove it and they use an earlier one or replay)`, checked.damaged.map((d) => `${d.file}: ${d.reason}`), header.episode, records);
      }
      notes.push(`${checked.checked} snapshot${checked.checked === 1 ? "" : "s"} checked: each hashes to its key`);
    }
  }
  const ticks = result.lastTick - header.firstTick + 1;
  const planned = header.ticks - header.firstTick;
  let unfinished: string | undefined;
  if (result.incompleteTick) unfinished = `the log ends part-way through tick ${result.lastTick + 1} (${writer === null ? "an interrupted run" : "being written"}); everything before it verified`;
  else if (ticks < planned) unfinished = `${ticks} of ${planned} planned ticks are in the log`;
  if (unfinished !== undefined) {
    notes.push(unfinished);
    // As for an episode not started: what continues it (a log in JetStream: its run with --nats and --resume).
    if (where === undefined && writer === null) notes.push(header.kind === "forked" ? `a fork is not resumed: remove ${shownPath(dir)} and fork again for all of it` : `\`probetown run … --log ${shownPath(dir)} --resume\`, with the flags that started it, continues it`);
  }
  const seconds = v.elapsed();
  const eventsPerSecond = records / seconds;
  const checked = how === "replay" ? `${ticks} tick state hashes recomputed and equal` : `${ticks} ticks in sequence, each state hash the hash of its parts; actors not replayed (--chain-only)`;
  const report: VerifyReport = {
    ok: true,
    exitCode: 0,
    episode: header.episode,
    records,
    ticks,
    seconds,
    eventsPerSecond,
    problem: null,
    notes,
    ...(unfinished === undefined ? {} : { unfinished }),
    text: [
      `OK: ${header.episode}: ${records} records, hash chain intact, ${checked} (${seconds.toFixed(3)} s, ${Math.round(eventsPerSecond).toLocaleString("en-US")} events/s)`,
      ...notes.map((n) => `note: ${n}`),
    ].join("\n"),
  };
  return report;
}

/** A promise's outcome as a value, so a caller can branch on the error it knows and rethrow the rest. */
async function settled<A>(promise: Promise<A>): Promise<{ readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}
