// An episode's records for the timeline and the detail panel: read once (checked as `inspect` reads
// them) and kept while the log's files are unchanged. A damaged log yields the records before the
// damage and the damage's message, so the dashboard shows what is intact and says where it ends.
import { statSync } from "node:fs";
import { join } from "node:path";
import { logWriter, scanLog, segmentFiles } from "../../infra/fileEventStore.ts";
import type { LogRecord } from "../../events/record.ts";

export interface LoadedLog {
  readonly records: readonly LogRecord[];
  /** Why reading stopped before the end (damage or a torn tail), or null. */
  readonly damage: string | null;
  /** seq → index in `records` (a fork's log starts at its parent's seq). */
  readonly firstSeq: number;
}

const cache = new Map<string, { key: string; log: LoadedLog }>();
/** Logs kept read: the last few opened (a large town's log is hundreds of MB of records). */
const CACHED_LOGS = 4;

/** Segment names, sizes and mtimes: a log appended to or replaced reads again. */
function fingerprint(logDir: string): string {
  return segmentFiles(logDir)
    .map((file) => {
      const s = statSync(file);
      return `${file}:${s.size}:${s.mtimeMs}`;
    })
    .join("|");
}

export function loadLog(dir: string): LoadedLog {
  const logDir = join(dir, "log");
  const key = fingerprint(logDir);
  const hit = cache.get(dir);
  if (hit !== undefined && hit.key === key) {
    cache.delete(dir);
    cache.set(dir, hit);
    return hit.log;
  }
  let intact: readonly LogRecord[] = [];
  let log: LoadedLog;
  try {
    const scan = scanLog(logDir, { onDamage: (records) => (intact = records) });
    // A log its run is still writing ends on a line not written whole yet: not damage (as readLog reads it).
    const torn = scan.torn !== null && logWriter(logDir) === null ? scan.torn.message : null;
    log = { records: scan.records, damage: torn, firstSeq: scan.records[0]?.seq ?? 0 };
  } catch (error) {
    log = { records: intact, damage: error instanceof Error ? error.message : String(error), firstSeq: intact[0]?.seq ?? 0 };
  }
  cache.delete(dir);
  cache.set(dir, { key, log });
  // A Map keeps insertion order: the first key is the least recently read.
  if (cache.size > CACHED_LOGS) cache.delete(cache.keys().next().value!);
  return log;
}

/** The actor ids a record concerns: its sender and its recipients (`"*"` and null add none). */
export function actorsOf(record: LogRecord): string[] {
  const to = record.to;
  const recipients = Array.isArray(to) ? (to as string[]) : typeof to === "string" && to !== "*" ? [to] : [];
  return [record.from, ...recipients];
}

export interface RecordQuery {
  readonly fromTick: number | null;
  readonly toTick: number | null;
  readonly types: readonly string[];
  readonly actors: readonly string[];
  readonly offset: number;
  readonly limit: number;
}

export const MAX_PAGE = 5000;

export function queryRecords(log: LoadedLog, q: RecordQuery): { total: number; records: LogRecord[] } {
  const types = new Set(q.types);
  const actors = new Set(q.actors);
  const matching = log.records.filter(
    (r) =>
      (q.fromTick === null || r.tick >= q.fromTick) &&
      (q.toTick === null || r.tick <= q.toTick) &&
      (types.size === 0 || types.has(r.type)) &&
      (actors.size === 0 || actorsOf(r).some((a) => actors.has(a))),
  );
  return { total: matching.length, records: matching.slice(q.offset, q.offset + q.limit) };
}

export function recordAt(log: LoadedLog, seq: number): LogRecord | null {
  const record = log.records[seq - log.firstSeq];
  return record !== undefined && record.seq === seq ? record : null;
}

/**
 * A model call as the detail lays it out: the request (`llm.requested`: role, model, the prompt's
 * messages, params) and its answer (`llm.completed`: the completion, usage, the model and backend
 * that answered; `llm.failed`: the error, its message and the fallback the actor took), joined by
 * the answer's cause (the sequencer records each answer caused by its request). `source` says where
 * the answer came from: `recorded` when it was served from a recording without asking the endpoint
 * (`cached`: the content-addressed cache, or a fork's parent's answer), `live` when it was asked of
 * the endpoint in this run, null while no answer is logged yet.
 */
export interface ModelCallView {
  readonly request: { readonly seq: number; readonly role: string; readonly model: string; readonly messages: readonly { readonly role: string; readonly content: string }[]; readonly params: unknown; readonly queryId: string | null } | null;
  readonly answer: {
    readonly seq: number;
    readonly type: "llm.completed" | "llm.failed";
    readonly content: string | null;
    readonly usage: { readonly promptTokens: number; readonly completionTokens: number } | null;
    readonly model: string | null;
    readonly backend: string | null;
    readonly attempts: number | null;
    readonly repaired: boolean;
    readonly error: string | null;
    readonly message: string | null;
    readonly fallback: string | null;
  } | null;
  readonly source: "recorded" | "live" | null;
}

const isAnswer = (r: LogRecord): boolean => r.type === "llm.completed" || r.type === "llm.failed";
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The model call a record belongs to (its request or its answer), or null for another record. */
export function modelCallOf(log: LoadedLog, record: LogRecord, effects: readonly LogRecord[]): ModelCallView | null {
  let requested: LogRecord | null = null;
  let answered: LogRecord | null = null;
  if (record.type === "llm.requested") {
    requested = record;
    answered = effects.find(isAnswer) ?? null;
  } else if (isAnswer(record)) {
    answered = record;
    const cause = typeof record.cause === "number" ? recordAt(log, record.cause) : null;
    requested = cause?.type === "llm.requested" ? cause : null;
  } else return null;
  const q = (requested?.payload ?? {}) as Record<string, unknown>;
  const a = (answered?.payload ?? {}) as Record<string, unknown>;
  const usage = a.usage as { promptTokens?: unknown; completionTokens?: unknown } | undefined;
  return {
    request: requested === null ? null : {
      seq: requested.seq,
      role: str(q.role) ?? "",
      model: str(q.model) ?? "",
      messages: Array.isArray(q.messages) ? (q.messages as { role?: unknown; content?: unknown }[]).map((m) => ({ role: str(m.role) ?? "", content: str(m.content) ?? "" })) : [],
      params: q.params ?? null,
      queryId: str(q.queryId),
    },
    answer: answered === null ? null : {
      seq: answered.seq,
      type: answered.type as "llm.completed" | "llm.failed",
      content: str(a.content),
      usage: usage !== undefined && typeof usage.promptTokens === "number" && typeof usage.completionTokens === "number" ? { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens } : null,
      model: str(a.model),
      backend: str(a.backend),
      attempts: typeof a.attempts === "number" ? a.attempts : null,
      repaired: a.repaired === true,
      error: str(a.error),
      message: str(a.message),
      fallback: str(a.fallback),
    },
    source: answered === null ? null : a.cached === true ? "recorded" : "live",
  };
}

/** The record, the chain of records that caused it (nearest first), the records it caused, and the model call it belongs to (or null). */
export function recordDetail(log: LoadedLog, seq: number): { record: LogRecord; causes: LogRecord[]; effects: LogRecord[]; modelCall: ModelCallView | null } | null {
  const record = recordAt(log, seq);
  if (record === null) return null;
  const causes: LogRecord[] = [];
  let cause = record.cause;
  // A fork's first causes lie in its parent's log: the chain stops where this log starts.
  while (typeof cause === "number") {
    const parent = recordAt(log, cause);
    if (parent === null) break;
    causes.push(parent);
    cause = parent.cause;
  }
  const effects = log.records.filter((r) => r.cause === seq);
  return { record, causes, effects, modelCall: modelCallOf(log, record, effects) };
}

/** Types and actors a log holds, for the filters. */
export function facets(log: LoadedLog): { types: Record<string, number>; actors: string[]; ticks: [number, number] | null } {
  const types: Record<string, number> = {};
  const actors = new Set<string>();
  for (const r of log.records) {
    types[r.type] = (types[r.type] ?? 0) + 1;
    actors.add(r.from);
  }
  const first = log.records[0];
  const last = log.records.at(-1);
  return { types, actors: [...actors].sort(), ticks: first === undefined || last === undefined ? null : [first.tick, last.tick] };
}
