// The report view's chart data: a report's own `report.json` (what `report` or a world's paired
// report writes) turned into chart specifications the browser draws — Pareto scatters, paired
// differences with their confidence intervals, and per-subcategory bars. Nothing is computed
// again: every mean, interval and p-value is the report's, copied; only which points sit on a
// front is derived for the grid reports whose JSON does not say so (the report's own rule,
// `paretoFront`). The file's shape decides how it is read, so this module names no world.
import { cachedJsonReader, confinedFile } from "./confinement.ts";
import { readdirSync } from "node:fs";
import { METRIC_LABEL, paretoFront } from "../analysis/report.ts";
import type { Analysis } from "../analysis/report.ts";

export interface ScatterPoint {
  readonly condition: string;
  readonly x: number;
  readonly y: number;
  readonly lo: number | null;
  readonly hi: number | null;
  readonly front: boolean;
}

export interface Scatter {
  readonly id: string;
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly points: readonly ScatterPoint[];
}

export interface Difference {
  readonly label: string;
  readonly estimate: number;
  readonly lo: number;
  readonly hi: number;
  readonly n: number;
  readonly p: number | null;
  /** the p-value adjusted for the family (Holm, Bonferroni), when the report gives one */
  readonly pAdjusted: number | null;
}

export interface Differences {
  readonly id: string;
  readonly title: string;
  /** how the interval was computed, in the report's words */
  readonly method: string;
  readonly unit: string;
  readonly rows: readonly Difference[];
}

export interface Bars {
  readonly id: string;
  readonly title: string;
  readonly yLabel: string;
  readonly groups: readonly string[];
  readonly series: ReadonlyArray<{ readonly condition: string; readonly values: ReadonlyArray<number | null> }>;
}

export interface ChartSection {
  readonly title: string;
  readonly scatters: readonly Scatter[];
  readonly differences: readonly Differences[];
  readonly bars: readonly Bars[];
}

export interface ReportCharts {
  readonly file: string;
  readonly kind: "experiment" | "grid";
  readonly title: string;
  readonly sections: readonly ChartSection[];
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-");
const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const orNull = (x: unknown): number | null => (finite(x) ? x : null);

/** An experiment report (`report`'s analysis): per benchmark, its Pareto charts, comparisons and subcategories. */
function experimentCharts(file: string, a: Analysis): ReportCharts {
  const pct = `${Math.round(a.level * 100)}%`;
  const sections = a.benchmarks.filter((b) => b.metric !== null).map((b): ChartSection => {
    const metric = METRIC_LABEL[b.metric!];
    const id = slug(b.benchmark);
    const scatters: Scatter[] = [];
    if (b.pareto.length > 0) {
      scatters.push({ id: `${id}-probes`, title: `${metric} against probes per query`, xLabel: "probes per query", yLabel: metric, points: b.pareto.map((p) => ({ condition: p.arm, x: p.probesPerQuery, y: p.score, lo: orNull(p.ci[0]), hi: orNull(p.ci[1]), front: p.front })) });
    }
    if (b.paretoDisclosure.length > 0) {
      for (const side of ["answer", "probes"] as const) {
        const what = side === "answer" ? "stated" : "read";
        scatters.push({
          id: `${id}-disclosure-${side}`,
          title: `${metric} against private items ${what} beyond the need`,
          xLabel: `private items ${what} beyond the need per query`,
          yLabel: metric,
          points: b.paretoDisclosure.map((p) => ({ condition: p.arm, x: p[side], y: p.score, lo: orNull(p.ci[0]), hi: orNull(p.ci[1]), front: side === "answer" ? p.frontAnswer : p.frontProbes })),
        });
      }
    }
    const differences: Differences[] =
      b.comparisons.length === 0
        ? []
        : [
            {
              id: `${id}-paired`,
              title: `${metric}: each condition − ${b.reference}`,
              method: `paired t over per-query mean differences, ${pct} CI; p adjusted by Holm`,
              unit: "",
              rows: b.comparisons.map((c) => ({ label: c.arm, estimate: c.queryT.meanDiff, lo: c.queryT.ci[0], hi: c.queryT.ci[1], n: c.queries, p: orNull(c.queryT.p), pAdjusted: orNull(c.pHolm) })),
            },
          ];
    const sub = b.bySubcategory;
    const bars: Bars[] =
      sub === null
        ? []
        : [{ id: `${id}-subcategories`, title: `${metric} by subcategory`, yLabel: metric, groups: sub.keys, series: b.arms.map((s) => ({ condition: s.arm, values: sub.keys.map((k) => sub.cells[k]?.[s.arm]?.mean ?? null) })) }];
    return { title: `Benchmark ${b.benchmark}`, scatters, differences, bars };
  });
  return { file, kind: "experiment", title: a.title, sections };
}

interface GridCell {
  readonly world: string;
  readonly regime: string;
  readonly policy: string;
  readonly accuracy: number;
  readonly probes: number;
}

interface GridComparison {
  readonly label: string;
  readonly n: number;
  readonly deltaPp: number;
  readonly ciPp: readonly [number, number];
  readonly p: number;
  readonly pBonferroni: number | null;
}

const isGridCell = (c: unknown): c is GridCell => {
  const o = c as Record<string, unknown>;
  return typeof o === "object" && o !== null && typeof o.world === "string" && typeof o.regime === "string" && typeof o.policy === "string" && finite(o.accuracy) && finite(o.probes);
};

/**
 * A grid's cells (world × regime × policy): per regime and world, A_H against probes, one point
 * per policy. A sweep's results file holds the same cells, so its view draws these too. The front:
 * no other policy has at most as many probes and at least the accuracy (the report's rule).
 */
export function gridScatters(cells: readonly unknown[]): Array<{ regime: string; scatters: Scatter[] }> {
  const ok = cells.filter(isGridCell);
  const regimes = [...new Set(ok.map((c) => c.regime))];
  return regimes.map((regime) => {
    const worlds = [...new Set(ok.filter((c) => c.regime === regime).map((c) => c.world))];
    return {
      regime,
      scatters: worlds.map((world) => {
        const these = ok.filter((c) => c.regime === regime && c.world === world);
        const front = paretoFront(these.map((c) => ({ x: c.probes, y: c.accuracy })));
        return { id: slug(`${regime}-${world}`), title: `${world} (${regime}): A_H against probes`, xLabel: "probes per episode", yLabel: "A_H (terminal world-state accuracy)", points: these.map((c, i) => ({ condition: c.policy, x: c.probes, y: c.accuracy, lo: null, hi: null, front: front[i]! })) };
      }),
    };
  });
}

/** A grid's paired report: per regime, A_H against probes, and its Table 1 and 2 comparisons. */
function gridCharts(file: string, o: Record<string, unknown>): ReportCharts {
  const table = (name: string) => (o[name] ?? {}) as Record<string, GridComparison[]>;
  const sections = gridScatters(o.cells as unknown[]).map(({ regime, scatters }): ChartSection => {
    const differences = [
      { name: "table1", title: "Table 1: the comparison family", adjusted: "Bonferroni" },
      { name: "table2", title: "Table 2: adjacent comparisons", adjusted: null },
    ]
      .map(({ name, title, adjusted }): Differences => ({
        id: slug(`${regime}-${name}`),
        title: `${title} (Δ A_H)`,
        method: `paired bootstrap over (world, seed), 95% CI${adjusted === null ? "" : `; p adjusted by ${adjusted}`}`,
        unit: "pp",
        rows: (table(name)[regime] ?? []).map((c) => ({ label: c.label, estimate: c.deltaPp, lo: c.ciPp[0], hi: c.ciPp[1], n: c.n, p: orNull(c.p), pAdjusted: orNull(c.pBonferroni) })),
      }))
      .filter((d) => d.rows.length > 0);
    return { title: `Regime ${regime}`, scatters, differences, bars: [] };
  });
  return { file, kind: "grid", title: typeof o.title === "string" ? o.title : "Paired grid report", sections };
}

/** The charts of a report file's contents, or null when it is no report this view knows. */
export function reportCharts(file: string, body: unknown): ReportCharts | null {
  if (typeof body !== "object" || body === null) return null;
  const o = body as Record<string, unknown>;
  if (o.version === 1 && Array.isArray(o.benchmarks)) return experimentCharts(file, body as Analysis);
  if (Array.isArray(o.cells) && typeof o.table1 === "object" && o.table1 !== null && typeof o.table2 === "object") return gridCharts(file, o);
  return null;
}

const readReport = cachedJsonReader(reportCharts);


/** The reports in the runs folder: `report.json` directly in it or in a folder directly below it. */
export function reportsIn(root: string): ReportCharts[] {
  let entries: string[];
  try {
    entries = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `${e.name}/report.json`);
  } catch {
    return [];
  }
  return ["report.json", ...entries.sort()].filter((n) => confinedFile(root, n)).flatMap((n) => readReport(root, n) ?? []);
}

/** One report by its name (looked up among the folder's, never joined blindly), or null. */
export function reportNamed(root: string, name: string): ReportCharts | null {
  return reportsIn(root).find((r) => r.file === name) ?? null;
}
