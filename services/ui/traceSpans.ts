// The span tree of one tick, from an episode's trace file (`trace.jsonl`, written by `--trace
// jsonl`): the tick's span and every span below it, nested by parent, each delivery span joined to
// its record by the `probetown.seq` attribute the kernel sets. Read again only when the file's
// size or time changed. A trace file is the exporter's, not the log: a line that does not parse is
// skipped and counted, never treated as damage.
import { readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";

export interface SpanNode {
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly durationMs: number | null;
  /** start, in ms after the tick span's start */
  readonly offsetMs: number | null;
  /** the record this span delivered, when it names one */
  readonly seq: number | null;
  readonly depth: number;
}

export interface TickSpans {
  readonly traceId: string | null;
  readonly tick: number;
  /** depth-first, children in start order */
  readonly spans: readonly SpanNode[];
  /** lines of the file that were not spans */
  readonly skipped: number;
}

interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly start: bigint | null;
  readonly durationMs: number | null;
  readonly tick: number | null;
  readonly seq: number | null;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function parseSpan(line: string): Span | null {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    if (typeof o.spanId !== "string" || typeof o.name !== "string" || typeof o.traceId !== "string") return null;
    const attributes = (typeof o.attributes === "object" && o.attributes !== null ? o.attributes : {}) as Record<string, unknown>;
    return {
      traceId: o.traceId,
      spanId: o.spanId,
      parentSpanId: typeof o.parentSpanId === "string" && o.parentSpanId !== "" ? o.parentSpanId : null,
      name: o.name,
      start: typeof o.startTimeUnixNano === "string" && /^\d+$/.test(o.startTimeUnixNano) ? BigInt(o.startTimeUnixNano) : null,
      durationMs: num(o.durationMs),
      tick: num(attributes["probetown.tick"]),
      seq: num(attributes["probetown.seq"]),
    };
  } catch {
    return null;
  }
}

const cache = new Map<string, { key: string; spans: Span[]; skipped: number }>();

/** The trace file of an episode directory, when it has one below the runs folder (a link out of it is not read). */
export function traceFileOf(root: string, dir: string): string | null {
  const file = join(dir, "trace.jsonl");
  try {
    const rel = relative(realpathSync(root), realpathSync(file));
    return statSync(file).isFile() && !rel.startsWith("..") && !isAbsolute(rel) ? file : null;
  } catch {
    return null;
  }
}

function readSpans(file: string): { spans: Span[]; skipped: number } {
  const s = statSync(file);
  const key = `${s.size}:${s.mtimeMs}`;
  const hit = cache.get(file);
  if (hit?.key === key) return hit;
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
  const spans = lines.map(parseSpan).filter((x): x is Span => x !== null);
  const read = { key, spans, skipped: lines.length - spans.length };
  cache.set(file, read);
  return read;
}

/** The spans of one tick: the span(s) of the tick with their descendants, nested; empty when the trace has none. */
export function tickSpans(file: string, tick: number): TickSpans {
  const { spans, skipped } = readSpans(file);
  const children = new Map<string, Span[]>();
  for (const s of spans) if (s.parentSpanId !== null) (children.get(s.parentSpanId) ?? children.set(s.parentSpanId, []).get(s.parentSpanId)!).push(s);
  const byStart = (a: Span, b: Span) => (a.start === null || b.start === null ? 0 : a.start < b.start ? -1 : a.start > b.start ? 1 : 0);
  const ids = new Set(spans.map((s) => s.spanId));
  // Roots: spans of this tick whose parent is not itself of this tick (the tick span, under the episode's).
  const ofTick = spans.filter((s) => s.tick === tick);
  const roots = ofTick.filter((s) => s.parentSpanId === null || !ids.has(s.parentSpanId) || spans.find((p) => p.spanId === s.parentSpanId)!.tick !== tick).sort(byStart);
  const origin = roots[0]?.start ?? null;
  const out: SpanNode[] = [];
  const visit = (s: Span, depth: number) => {
    out.push({ spanId: s.spanId, parentSpanId: s.parentSpanId, name: s.name, durationMs: s.durationMs, offsetMs: origin === null || s.start === null ? null : Number(s.start - origin) / 1e6, seq: s.seq, depth });
    for (const c of [...(children.get(s.spanId) ?? [])].sort(byStart)) visit(c, depth + 1);
  };
  for (const r of roots) visit(r, 0);
  return { traceId: roots[0]?.traceId ?? null, tick, spans: out, skipped };
}
