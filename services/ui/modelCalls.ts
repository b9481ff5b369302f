// The model calls of a file log for the episodes list (models asked, tokens spent, calls), counted
// as services/llm/usage.ts counts them. The log's bytes are searched for the `"type":"llm.` of a
// model-call record, and only those lines are parsed; what was read is remembered per segment (its
// size and time), so the next listing reads only what was appended since — each byte of a log is
// read once while the server runs, however often the list is asked for. A segment that changed
// otherwise than by growing (rewritten, removed) is read again from the start.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { segmentFiles } from "../../infra/fileEventStore.ts";
import type { LlmCompletedPayload, LlmFailedPayload, LlmRequestedPayload } from "../../events/llm.ts";

export interface ModelCalls {
  /** The models the log's requests asked for, sorted. */
  readonly models: readonly string[];
  /** Answered calls (completed or failed). */
  readonly calls: number;
  /** Prompt plus completion tokens this log spent (a recorded answer served again spent none: usage.ts). */
  readonly tokens: number;
}

/** Model calls counted so far (a log read a piece at a time adds to one). */
export interface Tally {
  models: Set<string>;
  calls: number;
  tokens: number;
}

export const emptyTally = (): Tally => ({ models: new Set(), calls: 0, tokens: 0 });
export const modelCallsOfTally = ({ models, calls, tokens }: Tally): ModelCalls => ({ models: [...models].sort(), calls, tokens });

/**
 * Counts the model-call records among the lines of `text` (one or more whole records, as a
 * JetStream message holds them): only lines holding a model-call record's type are parsed.
 */
export function countModelCallText(text: string, tally: Tally): void {
  for (let hit = text.indexOf(MARK_TEXT); hit >= 0; ) {
    const start = text.lastIndexOf("\n", hit) + 1;
    const end = text.indexOf("\n", hit);
    const stop = end < 0 ? text.length : end;
    countLine(text.slice(start, stop), tally);
    hit = text.indexOf(MARK_TEXT, stop);
  }
}

interface SegmentRead {
  /** Bytes read: up to the end of the last whole line seen. */
  offset: number;
  size: number;
  mtimeMs: number;
}

interface Index {
  segments: Map<string, SegmentRead>;
  tally: Tally;
}

const MARK_TEXT = '"type":"llm.';
const MARK = Buffer.from(MARK_TEXT);
const CHUNK = 4 * 2 ** 20;
const NEWLINE = 0x0a;

const indexes = new Map<string, Index>();

function countLine(line: string, tally: Tally): void {
  let record: { type?: unknown; payload?: unknown };
  try {
    record = JSON.parse(line) as typeof record;
  } catch {
    return; // A damaged line: verify says so in its own column.
  }
  if (record.type === "llm.requested") {
    const model = (record.payload as Partial<LlmRequestedPayload>)?.model;
    if (typeof model === "string") tally.models.add(model);
  } else if (record.type === "llm.completed" || record.type === "llm.failed") {
    const p = record.payload as Partial<LlmCompletedPayload & LlmFailedPayload>;
    tally.calls++;
    if (p.cached !== true) tally.tokens += (p.usage?.promptTokens ?? 0) + (p.usage?.completionTokens ?? 0);
  }
}

/** Reads `file` from `from` to its last whole line, counting the model-call lines; returns where it stopped. */
function readSegment(file: string, from: number, size: number, tally: Tally): number {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(Math.min(CHUNK, Math.max(1, size - from)));
    let offset = from;
    while (offset < size) {
      const got = readSync(fd, buffer, 0, Math.min(buffer.length, size - offset), offset);
      if (got === 0) break;
      const end = buffer.lastIndexOf(NEWLINE, got - 1);
      if (end < 0) {
        // One line longer than the buffer (a 1,000-agent header): read it whole, once.
        const lineEnd = wholeLineEnd(fd, offset, size);
        if (lineEnd < 0) break;
        const line = Buffer.alloc(lineEnd - offset);
        readSync(fd, line, 0, line.length, offset);
        if (line.includes(MARK)) countLine(line.toString("utf8"), tally);
        offset = lineEnd + 1;
        continue;
      }
      for (let hit = buffer.indexOf(MARK); hit >= 0 && hit < end; ) {
        const start = buffer.lastIndexOf(NEWLINE, hit) + 1;
        const stop = buffer.indexOf(NEWLINE, hit);
        countLine(buffer.toString("utf8", start, stop), tally);
        hit = buffer.indexOf(MARK, stop);
      }
      offset += end + 1;
    }
    return offset;
  } finally {
    closeSync(fd);
  }
}

/** The offset of the newline that ends the line starting at `from`, or -1 when the file has none yet. */
function wholeLineEnd(fd: number, from: number, size: number): number {
  const buffer = Buffer.alloc(CHUNK);
  for (let at = from; at < size; at += CHUNK) {
    const got = readSync(fd, buffer, 0, Math.min(CHUNK, size - at), at);
    const i = buffer.subarray(0, got).indexOf(NEWLINE);
    if (i >= 0) return at + i;
  }
  return -1;
}

/** The model calls of the episode in `dir`, reading only what its log gained since the last ask. */
export function modelCallsOf(dir: string): ModelCalls {
  const files = segmentFiles(join(dir, "log"));
  let index = indexes.get(dir);
  const stats = files.map((file) => ({ file, stat: statSync(file, { throwIfNoEntry: false }) }));
  const grewOnly =
    index !== undefined &&
    [...index.segments.keys()].every((file) => {
      const now = stats.find((s) => s.file === file)?.stat;
      const seen = index!.segments.get(file)!;
      return now !== undefined && (now.size > seen.size || (now.size === seen.size && now.mtimeMs === seen.mtimeMs));
    });
  if (index === undefined || !grewOnly) {
    index = { segments: new Map(), tally: emptyTally() };
    indexes.set(dir, index);
  }
  for (const { file, stat } of stats) {
    if (stat === undefined) continue;
    const seen = index.segments.get(file);
    if (seen !== undefined && seen.size === stat.size) continue;
    const offset = readSegment(file, seen?.offset ?? 0, stat.size, index.tally);
    index.segments.set(file, { offset, size: stat.size, mtimeMs: stat.mtimeMs });
  }
  return modelCallsOfTally(index.tally);
}
