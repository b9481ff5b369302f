// A parallel `verify` pool task (infra/pool.ts, verifySpans.ts): replays one span of an episode's
// file log, from the episode's start or from a snapshot of the tick before the span, checking
// every record and every tick state hash the span holds. A snapshot is not covered by the hash
// chain: it is used only when its actors hash to the state hash the log committed at its tick
// (which the span before it reproduced), and the span must then reproduce the log's records.
// Anything but a span that holds is answered as a failure, never thrown: the caller then verifies
// the episode on one thread, whose report (the first failing tick) is the one given.
import { closeSync, openSync, readSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { LogRecord } from "../../events/record.ts";
import { embeddedBackend } from "../../infra/backend.ts";
import { segmentFiles } from "../../infra/fileEventStore.ts";
import { FileSnapshotStore } from "../../infra/snapshotStore.ts";
import { messageOf } from "../../events/errorMessage.ts";
import { loadWorld } from "../worlds.ts";
import { headerOf, hostForHeader, replayRecords, restoreHost, snapshotNamed } from "./replay.ts";

/** A span: the records after `start` (a `tick.committed`, or the header) through seq `toSeq`. */
export interface SpanTask {
  readonly dir: string;
  readonly snapshots: string;
  /** The log's first record (its header), as the scan read it. */
  readonly header: LogRecord;
  /** The record the span starts after: its seq and hash, and where its line begins. */
  readonly start: { readonly seq: number; readonly hash: string; readonly tick: number; readonly file: string; readonly offset: number };
  /** The snapshot of the state after `start` (its tick's state hash), or null: the episode's start (a fork's base). */
  readonly snapshot: string | null;
  readonly toSeq: number;
  /** The log's last span: it may end part-way through a tick (an interrupted run). */
  readonly last: boolean;
}

export type SpanResult =
  | { readonly ok: true; readonly ticks: number; readonly lastTick: number; readonly incompleteTick: boolean }
  | { readonly ok: false; readonly why: string };

/** The records from the line at `file`:`offset` through seq `toSeq`, across the segments after it. */
function spanRecords(file: string, offset: number, toSeq: number): LogRecord[] {
  const records: LogRecord[] = [];
  const files = segmentFiles(dirname(file));
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  const at = files.findIndex((name) => basename(name) === basename(file));
  for (let f = at; f >= 0 && f < files.length; f++) {
    const fd = openSync(files[f]!, "r");
    try {
      let position = f === at ? offset : 0;
      let carry: Buffer | null = null;
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, position);
        if (n === 0) break;
        position += n;
        const data: Buffer = carry === null ? chunk.subarray(0, n) : Buffer.concat([carry, chunk.subarray(0, n)]);
        let begin = 0;
        for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, begin)) {
          const record = JSON.parse(data.toString("utf8", begin, newline)) as LogRecord;
          records.push(record);
          if (record.seq >= toSeq) return records;
          begin = newline + 1;
        }
        carry = begin < data.length ? Buffer.from(data.subarray(begin)) : null;
      }
      // The last line of the log, without its newline (a run still writing it, or an interrupted one).
      if (carry !== null) {
        const record = JSON.parse(carry.toString("utf8")) as LogRecord;
        records.push(record);
        if (record.seq >= toSeq) return records;
      }
    } finally {
      closeSync(fd);
    }
  }
  return records;
}

/** Replays a span (`onProgress`: after each tick, ticks done in the span). The pool's task; `verify` runs the first span on its own thread with it too. */
export default async function replaySpan(task: SpanTask, onProgress?: (done: number) => void): Promise<SpanResult> {
  try {
    const records = spanRecords(task.start.file, task.start.offset, task.toSeq);
    // The scan checked these bytes: they are read here again, so what is replayed must be them.
    const first = records[0];
    if (first === undefined || first.seq !== task.start.seq || first.hash !== task.start.hash) return { ok: false, why: `the span's first record is not seq ${task.start.seq} as scanned` };
    for (let i = 1; i < records.length; i++) if (records[i]!.seq !== task.start.seq + i) return { ok: false, why: `seq ${records[i]!.seq} out of place` };
    if (records.at(-1)!.seq !== task.toSeq) return { ok: false, why: `the span ends before seq ${task.toSeq}` };
    // A thread of its own: the episode's world is registered here too (that one only: it starts sooner).
    await loadWorld(String((task.header.payload as { world?: unknown }).world));
    const header = headerOf([task.header], task.dir);
    const store = new FileSnapshotStore(task.snapshots);
    let from;
    if (task.snapshot === null) {
      if (first.seq !== task.header.seq || first.hash !== task.header.hash) return { ok: false, why: "a span without a snapshot starts at the header" };
      from = { header, host: await hostForHeader(header, store, task.dir), tick: header.firstTick - 1 };
    } else {
      // The snapshot must be the state the log committed at the span's start: its key is that
      // tick's recorded state hash (the store refuses a file under another), its tick, seq and
      // head hash are the record's, and its actors hash to it (restoreHost checks them).
      const committed = first.payload as { stateHash?: unknown };
      if (first.type !== "tick.committed" || committed.stateHash !== task.snapshot) return { ok: false, why: `seq ${first.seq} is not the tick.committed of state ${task.snapshot}` };
      const snapshot = await store.get(task.snapshot);
      if (snapshot === null) return { ok: false, why: `snapshot ${task.snapshot} is gone` };
      if (snapshot.episode !== header.episode || snapshot.tick !== first.tick || snapshot.seq !== first.seq || snapshot.headHash !== first.hash) return { ok: false, why: `snapshot ${task.snapshot} is not of the log's tick ${first.tick}` };
      from = { header, host: restoreHost(header.world, snapshot, header.config, header.seed, header.condition, snapshotNamed(store, task.snapshot)), tick: first.tick };
    }
    const result = await replayRecords(task.dir, records, { snapshots: task.snapshots, partialTick: true, from, ...(onProgress === undefined ? {} : { onProgress }) }, embeddedBackend);
    result.host.stop();
    if (result.incompleteTick && !task.last) return { ok: false, why: `the span ends part-way through tick ${result.lastTick + 1}` };
    return { ok: true, ticks: result.lastTick - from.tick, lastTick: result.lastTick, incompleteTick: result.incompleteTick };
  } catch (error) {
    // A divergence, a damaged snapshot, anything: the one-thread verify says which and where.
    return { ok: false, why: messageOf(error) };
  }
}
