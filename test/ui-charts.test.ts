// The dashboard's report charts in Chromium: an experiment report (`report`'s report.json) and a
// grid's paired report (`report-envprobe`'s) under the runs folder, and a grid sweep's results file.
// Clicking a point, a condition or a comparison shows values that must equal the report file's;
// two conditions with identical results stay two visible markers (jitter). axe and a screenshot on
// each view. Waits are for what is expected to appear, never timed.
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReport, type Analysis } from "../services/analysis/report.ts";
import { resultLine, type ResultRow } from "../services/analysis/results.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { runCli, tempDir } from "./helpers.ts";
import { ARTEFACTS, checkView, findChromium, launchChromium, openPage } from "./uiBrowser.ts";

const executablePath = findChromium();
const WAIT = { timeout: 60_000 };
const SUBS = ["availability", "mood", "latent_goal"];

/** Three conditions over 9 queries × 2 seeds; `copy` has exactly the results of `literal`, so their points coincide. */
function rows(): ResultRow[] {
  const out: ResultRow[] = [];
  const conditions: Array<[string, number, number]> = [["intent", 0.8, 1], ["literal", 0.3, 0], ["copy", 0.3, 0], ["nointent", 0.6, 2]];
  for (const [condition, base, probes] of conditions) {
    for (let q = 0; q < 9; q++) {
      for (const seed of [1, 2]) {
        const v = Math.round((base + ((q * 3) % 9) / 40 + (condition === "nointent" ? ((q + seed) % 3) * 0.02 : 0)) * 1000) / 1000;
        out.push({
          v: 1, benchmark: "implicit", condition, backend: "deterministic", query: 101 + q, scene: "A", subcategory: SUBS[q % 3]!, seed,
          literalCoverage: 1, implicitCoverage: v, probes, disclosure: probes, goldToolRecall: 1, forbiddenViolations: 0, correct: null, log: `runs/${condition}-${q}-${seed}`,
          disclosedBeyondNeed: 2 * probes, disclosedBeyondNeedAnswer: probes, disclosedBeyondNeedProbes: probes,
        });
      }
    }
  }
  return out;
}

let runs: string;
let analysis: Analysis;
let grid: { table1: Record<string, Array<{ label: string; deltaPp: number; ciPp: [number, number]; n: number }>>; cells: Array<{ world: string; regime: string; policy: string; accuracy: number; probes: number }> };
let server: UiServer | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  runs = join(tempDir("ui-charts"), "runs");
  mkdirSync(runs, { recursive: true });
  const results = join(runs, "..", "results.jsonl");
  writeFileSync(results, rows().map(resultLine).join(""));
  analysis = writeReport(results, join(runs, "experiment"), { bootstrapIterations: 200 }).analysis;
  const sweep = await runCli(["sweep", "envprobe", "--seeds", "0-4", "--regimes", "low", "--out", join(runs, "grid.json"), "-q"]);
  expect(sweep.code).toBe(0);
  const report = await runCli(["report-envprobe", join(runs, "grid.json"), "--out", join(runs, "paired"), "--bootstrap", "200"]);
  expect(report.code).toBe(0);
  grid = JSON.parse(readFileSync(join(runs, "paired", "report.json"), "utf8")) as typeof grid;
  // A link out of the runs folder is never read as a report.
  mkdirSync(join(runs, "outside-link"));
  copyFileSync(join(runs, "experiment", "report.json"), join(runs, "..", "elsewhere.json"));
  symlinkSync(join(runs, "..", "elsewhere.json"), join(runs, "outside-link", "report.json"));
  server = await startUi({ runs, port: 0, host: "127.0.0.1" });
  if (executablePath !== null) browser = await launchChromium(executablePath);
  mkdirSync(ARTEFACTS, { recursive: true });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const newPage = (): Promise<Page> => openPage(browser!);

/** The selection panel's fields of a chart, as text. */
const selected = async (page: Page, chart: string): Promise<Record<string, string>> => {
  const panel = page.locator(`[data-chart="${chart}"] dl.chart-selected`);
  await panel.waitFor(WAIT);
  const keys = await panel.locator("dt").allInnerTexts();
  const values = await panel.locator("dd").allInnerTexts();
  return Object.fromEntries(keys.map((k, i) => [k, values[i]!]));
};

/** Where Chart.js drew a dataset's point on the page (the module's own instance, by its URL). */
const pointAt = (page: Page, chart: string, dataset: number) =>
  page.evaluate(
    `import("/vendor/chart.js").then(({ Chart }) => {
      const canvas = document.querySelector('[data-chart="${chart}"] canvas');
      const el = Chart.getChart(canvas).getDatasetMeta(${dataset}).data[0];
      const box = canvas.getBoundingClientRect();
      return { x: box.left + el.x, y: box.top + el.y };
    })`,
  ) as Promise<{ x: number; y: number }>;

describe("the report charts' API", () => {
  const get = async (path: string) => {
    const response = await fetch(server!.url + path);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("lists the reports found, and serves each one's charts with the report's own numbers", async () => {
    const listed = await get("/api/reports");
    expect(listed.body.reports).toEqual([
      { file: "experiment/report.json", kind: "experiment", title: "Experiment report", sections: 1 },
      { file: "paired/report.json", kind: "grid", title: "Paired grid report", sections: 1 },
    ]);
    const { body } = await get("/api/report?file=experiment%2Freport.json");
    const section = (body.sections as Array<{ differences: Array<{ rows: Array<{ label: string; estimate: number; lo: number; hi: number }> }> }>)[0]!;
    const c = analysis.benchmarks[0]!.comparisons.find((x) => x.arm === "intent" || x.arm === "nointent")!;
    expect(section.differences[0]!.rows.find((r) => r.label === c.arm)).toMatchObject({ estimate: c.queryT.meanDiff, lo: c.queryT.ci[0], hi: c.queryT.ci[1] });
  });

  it("answers 404 for a file it did not find (a path out of the folder, a link out of it) and 400 for an unknown parameter", async () => {
    for (const file of ["../results.jsonl", "outside-link/report.json", "/etc/passwd", "grid.json"]) expect((await get(`/api/report?file=${encodeURIComponent(file)}`)).status).toBe(404);
    expect((await get("/api/report?file=experiment%2Freport.json&x=1")).status).toBe(400);
    expect((await get("/api/reports?x=1")).status).toBe(400);
    expect((await get("/api/sweep-charts?file=nothing.json")).status).toBe(404);
    const sweep = await get("/api/sweep-charts?file=grid.json");
    expect((sweep.body.sections as unknown[]).length).toBe(1);
  });
});

describe("the report charts in Chromium", () => {
  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)" : "an experiment report: Pareto points, paired differences and subcategory bars match report.json",
    async () => {
      const page = await newPage();
      await page.goto(server!.url);
      await page.click('a.report-link[href="#/report?file=experiment%2Freport.json"]');
      const b = analysis.benchmarks[0]!;
      const scatter = "implicit-probes";
      await page.waitForSelector(`[data-chart="${scatter}"] canvas`, WAIT);
      expect(await page.locator(`[data-chart="${scatter}"] button.chart-condition`).allInnerTexts()).toHaveLength(4);

      // Two conditions with the same results: two markers, drawn apart, each with its exact values.
      const literal = await pointAt(page, scatter, 1);
      const copy = await pointAt(page, scatter, 2);
      expect(Math.abs(literal.x - copy.x)).toBeGreaterThan(8);
      expect(literal.y).toBeCloseTo(copy.y, 5);
      await page.mouse.click(copy.x, copy.y);
      const shown = await selected(page, scatter);
      const entry = b.pareto.find((p) => p.arm === "copy")!;
      expect(shown).toMatchObject({ condition: "copy", "probes per query": entry.probesPerQuery.toFixed(3), "implicit coverage": entry.score.toFixed(3), interval: `[${entry.ci[0].toFixed(3)}, ${entry.ci[1].toFixed(3)}]`, "Pareto front": entry.front ? "yes" : "no" });
      expect(shown.drawn).toContain("coincides");

      // A condition picked by its button (the keyboard's way), on the disclosure chart.
      await page.click('[data-chart="implicit-disclosure-answer"] button.chart-condition[data-condition="nointent"]');
      const disclosed = b.paretoDisclosure.find((p) => p.arm === "nointent")!;
      expect(await selected(page, "implicit-disclosure-answer")).toMatchObject({ condition: "nointent", "private items stated beyond the need per query": disclosed.answer.toFixed(3), "implicit coverage": disclosed.score.toFixed(3) });

      // A paired difference: the report's own Δ, interval and adjusted p.
      await page.click('[data-chart="implicit-paired"] button.chart-comparison[data-comparison="nointent"]');
      const c = b.comparisons.find((x) => x.arm === "nointent")!;
      expect(await selected(page, "implicit-paired")).toMatchObject({ comparison: "nointent", Δ: c.queryT.meanDiff.toFixed(3), interval: `[${c.queryT.ci[0].toFixed(3)}, ${c.queryT.ci[1].toFixed(3)}]`, n: String(c.queries), "p adjusted": c.pHolm.toFixed(3) });

      // A subcategory bar, clicked where Chart.js drew it.
      const bar = (await page.evaluate(`import("/vendor/chart.js").then(({ Chart }) => {
        const canvas = document.querySelector('[data-chart="implicit-subcategories"] canvas');
        const el = Chart.getChart(canvas).getDatasetMeta(0).data[1];
        const box = canvas.getBoundingClientRect();
        return { x: box.left + el.x, y: box.top + (el.y + el.base) / 2 };
      })`)) as { x: number; y: number };
      await page.mouse.click(bar.x, bar.y);
      const sub = b.bySubcategory!;
      expect(await selected(page, "implicit-subcategories")).toEqual({ condition: "intent", subcategory: sub.keys[1]!, "implicit coverage": sub.cells[sub.keys[1]!]!["intent"]!.mean!.toFixed(3) });
      await checkView(page, "report-experiment");
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "a grid's paired report and sweep: A_H against probes, and Table 1's intervals as report.json has them",
    async () => {
      const page = await newPage();
      await page.goto(server!.url);
      await page.click('a.report-link[href="#/report?file=paired%2Freport.json"]');
      const first = grid.table1.low![0]!;
      await page.waitForSelector('[data-chart="low-table1"] canvas', WAIT);
      await page.click(`[data-chart="low-table1"] button.chart-comparison[data-comparison="${first.label}"]`);
      expect(await selected(page, "low-table1")).toMatchObject({ comparison: first.label, Δ: `${first.deltaPp.toFixed(3)} pp`, interval: `[${first.ciPp[0].toFixed(3)}, ${first.ciPp[1].toFixed(3)}] pp`, n: String(first.n) });
      const cell = grid.cells.find((x) => x.regime === "low" && x.world === "tooldag")!;
      await page.click(`[data-chart="low-tooldag"] button.chart-condition[data-condition="${cell.policy}"]`);
      expect(await selected(page, "low-tooldag")).toMatchObject({ condition: cell.policy, "probes per episode": cell.probes.toFixed(3), "A_H (terminal world-state accuracy)": cell.accuracy.toFixed(3) });
      await checkView(page, "report-grid");

      // The sweep's own view draws the same cells.
      await page.goto(`${server!.url}/#/sweep?file=grid.json`);
      await page.waitForSelector('[data-chart="low-tooldag"] canvas', WAIT);
      const at = await pointAt(page, "low-tooldag", 0);
      await page.mouse.click(at.x, at.y);
      const shown = await selected(page, "low-tooldag");
      const point = grid.cells.find((x) => x.regime === "low" && x.world === "tooldag" && x.policy === shown.condition)!;
      expect(shown["A_H (terminal world-state accuracy)"]).toBe(point.accuracy.toFixed(3));
      // Policies with the same A_H and probes (here every policy scores alike on one world): each is its own marker.
      const drawn = (await page.evaluate(`import("/vendor/chart.js").then(({ Chart }) => {
        const chart = Chart.getChart(document.querySelector('[data-chart="low-tooldag"] canvas'));
        return chart.data.datasets.flatMap((d, i) => d.type === "line" ? [] : [{ key: d.data[0].trueX + "|" + d.data[0].y, x: chart.getDatasetMeta(i).data[0].x }]);
      })`)) as Array<{ key: string; x: number }>;
      const byValue = new Map<string, Array<{ key: string; x: number }>>();
      for (const d of drawn) byValue.set(d.key, [...(byValue.get(d.key) ?? []), d]);
      expect([...byValue.values()].some((g) => g.length > 1)).toBe(true);
      for (const group of byValue.values()) {
        const xs = group.map((d) => d.x).sort((a, b) => a - b);
        for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThan(5);
      }
      await checkView(page, "sweep-charts");
      await page.close();
    },
    300_000,
  );
});
