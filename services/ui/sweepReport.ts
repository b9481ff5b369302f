// The sweep report view's data: a sweep's results file (`sweep --out`) found directly in the runs
// folder, read as two tables — one row per condition (an EnvProbe cell: world × regime × policy; a
// world's sweep: a condition's metric means) and one row per episode — served a page at a time,
// sorted on the server, so a 21,780-episode grid sends the browser only what it shows.
import { cachedJsonReader, confinedFile } from "./confinement.ts";
import { readdirSync } from "node:fs";
import type { Parsed } from "./query.ts";

export type Cell = string | number | boolean | null;
export type Row = Readonly<Record<string, Cell>>;

export interface SweepTables {
  readonly file: string;
  /** The world, when the file names it (a grid sweep's file names its kinds of world instead). */
  readonly world: string | null;
  readonly seconds: number | null;
  /** Facts about the sweep as a whole (its seeds, episodes, workers …). */
  readonly summary: Readonly<Record<string, Cell>>;
  readonly conditions: { readonly columns: readonly string[]; readonly rows: readonly Row[] };
  readonly episodes: { readonly columns: readonly string[]; readonly rows: readonly Row[] };
}

/** A nested value as one row of cells: `drift.n`, `pcw.ci` (a list shown as its text). */
function flatten(value: unknown, prefix = "", into: Record<string, Cell> = {}, depth = 0): Record<string, Cell> {
  if (value !== null && typeof value === "object" && !Array.isArray(value) && depth < 3) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix === "" ? k : `${prefix}.${k}`, into, depth + 1);
  } else if (Array.isArray(value) || (value !== null && typeof value === "object")) {
    into[prefix] = JSON.stringify(value);
  } else into[prefix] = (value ?? null) as Cell;
  return into;
}

const columnsOf = (rows: readonly Row[]): string[] => {
  const seen = new Set<string>();
  for (const row of rows.slice(0, 200)) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
};

const table = (rows: readonly Row[]) => ({ columns: columnsOf(rows), rows });

const scalars = (o: Record<string, unknown>): Record<string, Cell> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v === null || ["string", "number", "boolean"].includes(typeof v)) as [string, Cell][]);

/** The two tables of a results file, or null when it is not a sweep's. */
export function sweepTables(file: string, body: unknown): SweepTables | null {
  if (typeof body !== "object" || body === null) return null;
  const o = body as Record<string, unknown>;
  // A world's own grid sweep (EnvProbe's): cells (world kind × regime × policy) and every episode's metrics.
  if (Array.isArray(o.cells) && Array.isArray(o.episodeMetrics)) {
    return {
      file,
      world: typeof o.world === "string" ? o.world : null,
      seconds: typeof o.seconds === "number" ? o.seconds : null,
      summary: { ...scalars(o), ...Object.fromEntries(Object.entries(o).filter(([, v]) => Array.isArray(v) && v.every((x) => typeof x === "string")).map(([k, v]) => [k, (v as string[]).join(", ")])) },
      conditions: table(o.cells.map((c) => flatten(c))),
      episodes: table(o.episodeMetrics.map((e) => flatten(e))),
    };
  }
  // A world's sweep: its outcomes, and each condition's metric means when the world has metrics.
  if (typeof o.world === "string" && Array.isArray(o.outcomes)) {
    const metrics = (o.metrics as { conditions?: { condition: string; n: number; metrics: Record<string, unknown> }[] } | null)?.conditions ?? [];
    return {
      file,
      world: o.world,
      seconds: typeof o.seconds === "number" ? o.seconds : null,
      summary: scalars(o),
      conditions: table(metrics.map((c) => flatten({ condition: c.condition, n: c.n, ...c.metrics }))),
      episodes: table(o.outcomes.map((e) => flatten(e))),
    };
  }
  return null;
}

const readSweep = cachedJsonReader(sweepTables);


/** The sweep results files directly in the runs folder, by name. */
export function sweepsIn(root: string): SweepTables[] {
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => n.endsWith(".json")).sort();
  } catch {
    return [];
  }
  return names.filter((n) => confinedFile(root, n)).flatMap((n) => readSweep(root, n) ?? []);
}

/** One sweep by its file name (looked up among the folder's, never joined blindly), or null. */
export function sweepNamed(root: string, name: string): SweepTables | null {
  return sweepsIn(root).find((s) => s.file === name) ?? null;
}

export interface SweepPageQuery {
  readonly table: "conditions" | "episodes";
  readonly offset: number;
  readonly limit: number;
  readonly sort: string | null;
  readonly desc: boolean;
}

export const MAX_SWEEP_PAGE = 1000;
const KNOWN = new Set(["table", "offset", "limit", "sort", "desc"]);

export function parseSweepQuery(params: Record<string, string>): Parsed<SweepPageQuery> {
  const unknown = Object.keys(params).filter((k) => !KNOWN.has(k));
  if (unknown.length > 0) return { ok: false, message: `unknown parameter ${unknown.map((k) => `'${k}'`).join(", ")}; this endpoint takes file, ${[...KNOWN].join(", ")}` };
  const table = params.table ?? "conditions";
  if (table !== "conditions" && table !== "episodes") return { ok: false, message: `table must be conditions or episodes, got '${table}'` };
  const whole = (name: string, text: string | undefined, fallback: number, max: number): Parsed<number> =>
    text === undefined ? { ok: true, value: fallback } : /^\d+$/.test(text) && Number(text) <= max ? { ok: true, value: Number(text) } : { ok: false, message: `${name} must be a whole number from 0 to ${max}, got '${text}'` };
  const offset = whole("offset", params.offset, 0, Number.MAX_SAFE_INTEGER);
  if (!offset.ok) return offset;
  const limit = whole("limit", params.limit, 100, MAX_SWEEP_PAGE);
  if (!limit.ok) return limit;
  if (params.desc !== undefined && params.desc !== "1" && params.desc !== "0") return { ok: false, message: `desc must be 1 or 0, got '${params.desc}'` };
  return { ok: true, value: { table, offset: offset.value, limit: limit.value, sort: params.sort ?? null, desc: params.desc === "1" } };
}

/** Nulls last whichever the direction; numbers before text. */
function compareCells(x: Cell, y: Cell): number {
  if (x === y) return 0;
  if (x === null) return 1;
  if (y === null) return -1;
  if (typeof x === "number" && typeof y === "number") return x - y;
  return String(x) < String(y) ? -1 : 1;
}

export function sweepPage(tables: SweepTables, q: SweepPageQuery): Parsed<{ columns: readonly string[]; total: number; rows: readonly Row[] }> {
  const t = tables[q.table];
  if (q.sort !== null && !t.columns.includes(q.sort)) return { ok: false, message: `sort: the ${q.table} table has no column '${q.sort}'` };
  let rows = t.rows;
  if (q.sort !== null) {
    const key = q.sort;
    const sign = q.desc ? -1 : 1;
    rows = [...rows].sort((a, b) => {
      const c = compareCells(a[key] ?? null, b[key] ?? null);
      return a[key] === null || b[key] === null ? c : sign * c;
    });
  }
  return { ok: true, value: { columns: t.columns, total: t.rows.length, rows: rows.slice(q.offset, q.offset + q.limit) } };
}
