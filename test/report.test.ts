// Results rows, the loader's errors, and the report: its tables, its paired statistics (pairing
// on (query, seed)), its charts as well-formed SVG, and that it depends on nothing but the rows.
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { loadResults, parseResults, resultLine, ResultsInvalid, type ResultRow } from "../services/analysis/results.ts";
import { analyze, paretoFront, renderReport, ReportOptionInvalid, writeReport } from "../services/analysis/report.ts";
import { holm, oneSampleTTest } from "../services/analysis/stats.ts";
import { groupedBarChart, paretoChart } from "../services/analysis/reportCharts.ts";
import { runCli, tempDir } from "./helpers.ts";

const root = join(import.meta.dirname, "..");
const SUBS = ["availability", "mood", "appropriateness", "latent_goal", "second_order"];
const SEEDS = [42, 123, 456];

function row(over: Partial<ResultRow> = {}): ResultRow {
  return {
    v: 1, benchmark: "implicit", condition: "aura-intent", backend: "deterministic", query: 101, scene: "A_cafe_morning", subcategory: "availability",
    seed: 42, literalCoverage: 1, implicitCoverage: 0.9, probes: 1, disclosure: 1, goldToolRecall: 1, forbiddenViolations: 0, correct: null, log: "runs/x",
    ...over,
  };
}

/** A synthetic implicit-intent experiment: 10 queries (2 per subcategory, 2 scenes) × 3 seeds × 3 conditions. */
function experiment(): ResultRow[] {
  const rows: ResultRow[] = [];
  const conditions: Array<[string, number, number]> = [["aura-intent", 0.8, 1], ["literal", 0.2, 0], ["nointent", 0.6, 2]];
  for (const [condition, base, probes] of conditions) {
    for (let q = 0; q < 10; q++) {
      for (const seed of SEEDS) {
        // Query difficulty shared by every condition and seed; a little seed noise for nointent only.
        const difficulty = ((q * 3) % 10) / 50;
        const noise = condition === "nointent" ? (((q + seed) % 3) - 1) * 0.05 : 0;
        rows.push(row({
          condition, query: 101 + q, seed, scene: q < 5 ? "A_cafe_morning" : "B_library_afternoon", subcategory: SUBS[q % 5]!,
          implicitCoverage: Math.round((base + difficulty + noise) * 1000) / 1000, probes, disclosure: probes,
          goldToolRecall: condition === "literal" ? 0 : 1,
          forbiddenViolations: condition === "nointent" && q % 5 === 4 ? 1 : 0,
          log: `runs/${condition}-q${101 + q}-s${seed}`,
        }));
      }
    }
  }
  return rows;
}

const jsonl = (rows: readonly ResultRow[]) => rows.map(resultLine).join("");

describe("results rows", () => {
  it("round-trip through resultLine and the loader", () => {
    const rows = experiment();
    expect(parseResults(jsonl(rows), "r.jsonl")).toEqual(rows);
  });

  it("the loader names file, line and field for every bad line", () => {
    const good = JSON.stringify(row());
    const text = [
      good,
      "",
      "{not json",
      JSON.stringify({ ...row({ query: 102 }), seed: 1.5, implicitCoverage: 1.2, probes: "2" }),
      JSON.stringify({ ...row({ query: 103 }), log: undefined }),
      JSON.stringify(row()),
      "[1, 2]",
      JSON.stringify({ ...row({ query: 104 }), v: 2 }),
    ].join("\n");
    let error: unknown;
    try {
      parseResults(text, "results/run.jsonl");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResultsInvalid);
    const e = error as ResultsInvalid;
    expect(e.problems.map((p) => [p.line, p.field])).toEqual([
      [3, null],
      [4, "seed"],
      [4, "implicitCoverage"],
      [4, "probes"],
      [5, "log"],
      [6, null],
      [7, null],
      [8, "v"],
    ]);
    expect(e.message).toContain("results/run.jsonl:3: not valid JSON");
    expect(e.message).toContain("results/run.jsonl:4: field 'seed': Expected an integer (got 1.5)");
    expect(e.message).toContain("results/run.jsonl:4: field 'implicitCoverage': Expected a value between 0 and 1 (got 1.2)");
    expect(e.message).toContain(`results/run.jsonl:4: field 'probes': Expected number (got "2")`);
    expect(e.message).toContain("results/run.jsonl:5: field 'log': required but missing");
    expect(e.message).toMatch(/run\.jsonl:6: duplicate cell \(benchmark implicit, condition aura-intent, backend deterministic, query 101, seed 42\): first at line 1/);
    expect(e.message).toContain("results/run.jsonl:7: expected a JSON object");
    expect(e.message).toMatch(/run\.jsonl:8: field 'v': Expected 1 \(got 2\)/);
  });

  it("an empty or unreadable file is an error naming it", () => {
    expect(() => parseResults("\n\n", "empty.jsonl")).toThrow(/empty\.jsonl: no result rows/);
    expect(() => loadResults("/nonexistent/rows.jsonl")).toThrow(/\/nonexistent\/rows\.jsonl: cannot read \(ENOENT\)/);
  });

  it("resultLine refuses a row that does not match the schema", () => {
    expect(() => resultLine({ ...row(), probes: -1 })).toThrow(/field 'probes'/);
    expect(resultLine(row())).toMatch(/^\{"v":1,"benchmark":"implicit",.*\}\n$/);
  });
});

describe("report", () => {
  const rows = experiment();

  it("has per-condition, per-subcategory, per-scene and paired-comparison tables", () => {
    const { markdown } = renderReport(rows, { reference: "aura-intent" });
    expect(markdown).toMatch(/^# Experiment report\n/);
    expect(markdown).toContain("## Benchmark `implicit`");
    expect(markdown).toContain("90 cells · 10 queries · seeds 42, 123, 456 · 3 conditions · metric: implicit coverage · reference: aura-intent");
    expect(markdown).toContain("| condition | result | backend | cells | queries | implicit coverage | literal coverage | gold-tool recall | probes/query | disclosure/query | violations | cells with violations |");
    expect(markdown).toMatch(/\| aura-intent \| deterministic \| deterministic \| 30 \| 10 \| 0\.890 ± 0\.0\d\d \| 1\.000 ± 0\.000 \| 1\.000 ± 0\.000 \| 1\.00 \| 1\.00 \| 0 \| 0\/30 \|/);
    expect(markdown).toMatch(/\| nointent \| deterministic \| deterministic \| 30 \| 10 \| [\d.]+ ± [\d.]+ \| .* \| 2\.00 \| 2\.00 \| 6 \| 6\/30 \|/);
    expect(markdown).toContain("### By subcategory");
    expect(markdown).toContain("| subcategory | aura-intent | literal | nointent |");
    expect(markdown).toMatch(/\| second_order \| [\d.]+ \(1\.00\) \| [\d.]+ \(0\.00\) \| [\d.]+ \(2\.00\) ⚠ 6 \|/);
    // Subcategories keep the benchmark's order.
    expect(markdown.indexOf("| availability |")).toBeLessThan(markdown.indexOf("| second_order |"));
    expect(markdown).toContain("### By scene");
    expect(markdown).toContain("| A_cafe_morning |");
    expect(markdown).toContain("### Paired comparisons: implicit coverage, each condition − aura-intent");
    expect(markdown).toContain("| condition | pairs | queries | Δ | 95% CI (t) | t (df) | p | p Holm | p Bonferroni | p cells (naive) | Wilcoxon p | bootstrap 95% CI |");
    expect(markdown).toMatch(/\| literal \| 30 \| 10 \| -0\.600 \|/);
    expect(markdown).toContain("![implicit coverage against probes per query](pareto-implicit.svg)");
    expect(markdown).toContain("![implicit coverage by subcategory](subcategories-implicit.svg)");
    expect(markdown).toMatch(/Pareto front \(implicit coverage against probes per query\): literal \(0\.290 at 0\.00\), aura-intent \(0\.890 at 1\.00\)\./);
  });

  it("pairs on (query, seed), whatever the row order, and adjusts the family by Holm", () => {
    const analysis = analyze(rows, { reference: "aura-intent", bootstrapIterations: 1000 });
    const b = analysis.benchmarks[0]!;
    const nointent = b.comparisons.find((c) => c.arm === "nointent")!;
    // By hand: per-query mean of (nointent − aura-intent) over seeds.
    const value = (c: string, q: number, s: number) => rows.find((r) => r.condition === c && r.query === q && r.seed === s)!.implicitCoverage!;
    const perQuery = Array.from({ length: 10 }, (_, i) => SEEDS.reduce((sum, s) => sum + value("nointent", 101 + i, s) - value("aura-intent", 101 + i, s), 0) / 3);
    const expected = oneSampleTTest(perQuery);
    expect(nointent.pairs).toBe(30);
    expect(nointent.queries).toBe(10);
    expect(nointent.queryT.meanDiff).toBeCloseTo(expected.meanDiff, 12);
    expect(nointent.queryT.p).toBeCloseTo(expected.p, 12);
    expect(nointent.cellT.n).toBe(30);
    expect(b.comparisons.map((c) => c.pHolm)).toEqual(holm(b.comparisons.map((c) => c.queryT.p)));
    // A shuffled file gives the same statistics, bootstrap included.
    const shuffled = [...rows].sort((x, y) => (x.condition === y.condition ? (x.seed * 7 + Number(x.query)) % 11 - (y.seed * 7 + Number(y.query)) % 11 : 0));
    expect(analyze(shuffled, { reference: "aura-intent", bootstrapIterations: 1000 }).benchmarks[0]!.comparisons).toEqual(b.comparisons);
  });

  it("leaves out and reports cells without a partner", () => {
    const partial = rows.filter((r) => !(r.condition === "literal" && r.query === 101 && r.seed === 42));
    const b = analyze(partial, { reference: "aura-intent", bootstrapIterations: 200 }).benchmarks[0]!;
    expect(b.comparisons.find((c) => c.arm === "literal")!.pairs).toBe(29);
    expect(b.notes.join("\n")).toContain("literal vs aura-intent: 1 cell(s) without a partner on (query, seed) were left out");
  });

  it("clustered bootstrap differs from the naive cell-level view when seeds agree", () => {
    const b = analyze(rows, { reference: "aura-intent" }).benchmarks[0]!;
    const literal = b.comparisons.find((c) => c.arm === "literal")!;
    expect(literal.bootstrap.clustered).toBe(true);
    expect(literal.bootstrap.clusters).toBe(10);
    // Seeds agree for literal vs aura-intent: the naive cell-level t counts 30 values, the primary 10.
    expect(literal.cellT.df).toBe(29);
    expect(literal.queryT.df).toBe(9);
  });

  it("McNemar joins the comparison for a binary metric", () => {
    const factual = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((q) =>
      ["gaprouted", "fixed-probe"].flatMap((condition) => [1, 2].map((seed) => row({ benchmark: "factual", condition, query: q + 1, seed, scene: null, subcategory: null, implicitCoverage: null, literalCoverage: null, goldToolRecall: null, correct: condition === "fixed-probe" || q % 3 !== 0 }))),
    );
    const { analysis, markdown } = renderReport(factual, { metric: "correct" });
    const c = analysis.benchmarks[0]!.comparisons[0]!;
    expect(c.reference).toBe("gaprouted");
    expect(c.mcnemar).toMatchObject({ b: 8, c: 0, method: "exact" });
    expect(c.mcnemar!.p).toBeCloseTo(2 / 256, 12);
    expect(markdown).toContain("McNemar p (b/c)");
    expect(markdown).not.toContain("### By subcategory");
  });

  it("option errors name the flag", () => {
    expect(() => analyze(rows, { reference: "react" })).toThrow(ReportOptionInvalid);
    expect(() => analyze(rows, { reference: "react" })).toThrow(/^--reference: no condition 'react' in the rows \(known: aura-intent, literal, nointent\)$/);
    const twoBackends = [...rows, row({ condition: "literal", backend: "llm:gpt-4o-mini" })];
    expect(() => analyze(twoBackends, { reference: "literal" })).toThrow(/--reference: condition 'literal' ran on several backends; name one of 'literal \(deterministic\)', 'literal \(llm:gpt-4o-mini\)'/);
    expect(analyze(twoBackends, { reference: "literal (deterministic)", bootstrapIterations: 100 }).benchmarks[0]!.reference).toBe("literal (deterministic)");
  });

  it("charts are well-formed SVG with one point per condition, the front marked, and one bar per subcategory × condition", () => {
    const { charts, analysis } = renderReport([...rows.map((r) => (r.condition === "literal" ? { ...r, condition: "lit <&> \"q\"" } : r))], { reference: "aura-intent" });
    expect(charts.map((c) => c.file)).toEqual(["pareto-implicit.svg", "subcategories-implicit.svg"]);
    const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_" });
    for (const chart of charts) {
      expect(XMLValidator.validate(chart.svg)).toBe(true);
      const doc = parser.parse(chart.svg) as { svg: Record<string, unknown> };
      expect(doc.svg["@_xmlns"]).toBe("http://www.w3.org/2000/svg");
      expect(doc.svg["@_viewBox"]).toMatch(/^0 0 \d+ \d+$/);
      expect(chart.svg).not.toMatch(/NaN|undefined|Infinity/);
    }
    const pareto = parser.parse(charts[0]!.svg) as { svg: { g: Array<{ "@_class"?: string; path?: unknown[] | unknown }> } };
    const points = pareto.svg.g.find((g) => g["@_class"] === "points")!;
    const markers = points.path as Array<{ "@_fill": string; "@_stroke": string; "@_data-marker": string; title: string }>;
    expect(markers).toHaveLength(3);
    // Each point its own shape and colour, and a tooltip naming the condition and the axis' unit.
    expect(new Set(markers.map((m) => m["@_data-marker"])).size).toBe(3);
    expect(new Set(markers.map((m) => m["@_stroke"])).size).toBe(3);
    expect(markers[0]!.title).toMatch(/^aura-intent: implicit coverage 0\.\d{3} at 1\.00 probes\/query \(Pareto front\)$/);
    const front = analysis.benchmarks[0]!.pareto.map((p) => p.front);
    expect(front).toEqual([true, true, false]); // nointent spends more probes for a lower score
    expect(markers.map((c) => c["@_fill"] !== "#ffffff")).toEqual(front);
    expect(charts[0]!.svg).toContain(`class="pareto-front"`);
    expect(charts[0]!.svg).toContain("lit &lt;&amp;&gt; &quot;q&quot;");
    const bars = parser.parse(charts[1]!.svg) as { svg: { g: Array<{ "@_class"?: string; rect?: unknown[] }> } };
    expect(bars.svg.g.find((g) => g["@_class"] === "bars")!.rect).toHaveLength(5 * 3);
  });

  it("plots coverage against disclosure beyond the need when the rows carry it, and labels each result deterministic or LLM", () => {
    // Fixed-private's cost: the same coverage as AURA, but more private items beyond the need.
    const rows = experiment().map((r) => ({ ...r, disclosedBeyondNeed: r.condition === "aura-intent" ? 1 : 0, disclosedBeyondNeedAnswer: r.condition === "aura-intent" ? 1 : 0, disclosedBeyondNeedProbes: r.condition === "aura-intent" ? 1 : 0 }));
    const fixed = experiment().filter((r) => r.condition === "aura-intent").map((r) => ({ ...r, condition: "fixed-private", backend: "llm:gpt-4o-mini", disclosedBeyondNeed: 3, disclosedBeyondNeedAnswer: 2, disclosedBeyondNeedProbes: 3 }));
    const { charts, analysis, markdown } = renderReport([...rows, ...fixed], { reference: "aura-intent", bootstrapIterations: 100 });
    const b = analysis.benchmarks[0]!;
    expect(b.arms.map((a) => [a.arm, a.resultKind, a.disclosedBeyondNeed])).toEqual([["aura-intent", "deterministic", 1], ["literal", "deterministic", 0], ["nointent", "deterministic", 0], ["fixed-private", "LLM", 3]]);
    // On probes fixed-private ties AURA; on disclosure (answer and probe side) it is dominated by it.
    const fx = b.paretoDisclosure.find((p) => p.arm === "fixed-private")!;
    expect(fx).toMatchObject({ answer: 2, probes: 3, frontAnswer: false, frontProbes: false });
    expect(b.paretoDisclosure.find((p) => p.arm === "aura-intent")).toMatchObject({ answer: 1, probes: 1, frontAnswer: true, frontProbes: true });
    expect(charts.map((c) => c.file)).toEqual(["pareto-implicit.svg", "pareto-disclosure-implicit.svg", "pareto-reads-implicit.svg", "subcategories-implicit.svg"]);
    const svg = charts[1]!.svg;
    expect(XMLValidator.validate(svg)).toBe(true);
    expect(svg).toContain("private items stated beyond the need per query");
    expect(svg).toMatch(/fixed-private: implicit coverage 0\.\d{3} at 2\.00 private items stated beyond the need\/query</);
    expect(charts[2]!.svg).toMatch(/fixed-private: implicit coverage 0\.\d{3} at 3\.00 private items read beyond the need\/query</);
    expect(markdown).toContain("![implicit coverage against private items stated beyond the need](pareto-disclosure-implicit.svg)");
    expect(markdown).toContain("![implicit coverage against private items read beyond the need](pareto-reads-implicit.svg)");
    expect(markdown).toMatch(/\| fixed-private \| LLM \| llm:gpt-4o-mini \|/);
    expect(markdown).toContain("3.00 (2.00 / 3.00)");
    // Rows without the figure (factual, privacy, older results) get no disclosure chart.
    expect(renderReport(experiment(), { reference: "aura-intent", bootstrapIterations: 100 }).analysis.benchmarks[0]!.paretoDisclosure).toEqual([]);
  });

  it("two conditions with the same results are two visible markers, side by side, each its own shape and colour", () => {
    const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_" });
    const svg = paretoChart({ title: "t", xLabel: "probes", yLabel: "score", points: [
      { label: "literal", x: 0, y: 0.3, yLo: 0.25, yHi: 0.35, front: true },
      { label: "literal-again", x: 0, y: 0.3, yLo: 0.25, yHi: 0.35, front: true },
      { label: "intent", x: 1, y: 0.8, front: true },
    ] });
    const points = (parser.parse(svg) as { svg: { g: Array<{ "@_class"?: string; path?: unknown }> } }).svg.g.find((g) => g["@_class"] === "points")!;
    const markers = points.path as Array<Record<string, string> & { title: string }>;
    const [a, b, c] = markers.map((m) => ({ cx: Number(m["@_data-cx"]), cy: Number(m["@_data-cy"]), shape: m["@_data-marker"], colour: m["@_stroke"], title: m.title }));
    // 12-px markers: centres at least a marker apart are both visible; the third stays where it belongs.
    expect(Math.abs(a!.cx - b!.cx)).toBeGreaterThanOrEqual(12);
    expect(a!.cy).toBe(b!.cy);
    expect(a!.shape).not.toBe(b!.shape);
    expect(a!.colour).not.toBe(b!.colour);
    expect(a!.title).toContain("drawn beside a condition with the same values");
    expect(c!.title).not.toContain("drawn beside");
    expect(svg).toContain("side by side: same values");
    // Alone, the same point is drawn where it belongs.
    const alone = paretoChart({ title: "t", xLabel: "probes", yLabel: "score", points: [{ label: "literal", x: 0, y: 0.3, front: true }, { label: "intent", x: 1, y: 0.8, front: true }] });
    expect(alone).not.toContain("side by side");
  });

  it("long labels stay readable: the legend widens and crowded group labels slant", () => {
    const long = "a condition with a long name (some backend)";
    const svg = paretoChart({ title: "t", xLabel: "x", yLabel: "y", points: [{ label: long, x: 1, y: 1, front: true }] });
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    expect(width - 540).toBeGreaterThanOrEqual(36 + long.length * 6);
    const bars = groupedBarChart({ title: "t", yLabel: "y", groups: ["appropriateness_and_tone", "second_order_beliefs", "availability_of_people", "latent_goal", "mood", "x"], series: [{ label: "a", values: [1, 1, 1, 1, 1, 1] }] });
    expect(bars).toMatch(/rotate\(-30\)" text-anchor="end">appropriateness_and_tone</);
    const short = groupedBarChart({ title: "t", yLabel: "y", groups: ["a", "b"], series: [{ label: "a", values: [1, 1] }] });
    expect(short).not.toContain("rotate(-30)");
  });

  it("paretoFront: fewer probes or a higher score, never dominated", () => {
    expect(paretoFront([{ x: 0, y: 0.2 }, { x: 1, y: 0.9 }, { x: 2, y: 0.6 }, { x: 1, y: 0.9 }, { x: 3, y: 0.95 }])).toEqual([true, true, false, true, true]);
  });

  it("is a pure function of the rows: writing it twice gives the same bytes", () => {
    const dir = tempDir("report");
    const file = join(dir, "rows.jsonl");
    writeFileSync(file, jsonl(rows));
    const first = writeReport(file, join(dir, "a"), { reference: "aura-intent" });
    const second = writeReport(file, join(dir, "b"), { reference: "aura-intent" });
    for (const name of ["report.md", "report.json", "pareto-implicit.svg", "subcategories-implicit.svg"]) {
      expect(readFileSync(join(dir, "b", name), "utf8")).toBe(readFileSync(join(dir, "a", name), "utf8"));
    }
    expect(first.charts).toHaveLength(2);
    expect(second.analysis.source?.file).toBe(file);
    expect(JSON.parse(readFileSync(first.json, "utf8")).benchmarks[0].comparisons).toHaveLength(2);
  });
});

describe("probetown report (CLI)", () => {
  const cli = (args: string[]) => runCli(["report", ...args], root);
  const dir = tempDir("report-cli");
  const file = join(dir, "rows.jsonl");
  writeFileSync(file, jsonl(experiment()));

  it("--help lists the flags", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    for (const flag of ["--out <dir>", "--reference <condition>", "--metric <name>", "--bootstrap <n>", "--seed <n>"]) expect(r.out).toContain(flag);
  });

  it("writes the report and says where", async () => {
    const r = await cli([file, "--out", join(dir, "out"), "--reference", "literal", "--bootstrap", "500"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("implicit: 90 cells, 3 conditions, 2 paired comparisons against literal");
    expect(readFileSync(join(dir, "out", "report.md"), "utf8")).toContain("each condition − literal");
  });

  it("bad rows, a missing file and unknown values exit 2 naming the file, line, field or flag", async () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify(row())}\n${JSON.stringify({ ...row({ query: 2 }), implicitCoverage: "high" })}\n`);
    const r = await cli([bad, "--out", join(dir, "x")]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`bad.jsonl:2: field 'implicitCoverage': Expected number | null (got "high")`);
    const missing = await cli([join(dir, "nope.jsonl"), "--out", join(dir, "x")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/nope\.jsonl: cannot read \(ENOENT\)/);
    const ref = await cli([file, "--out", join(dir, "x"), "--reference", "react"]);
    expect(ref.code).toBe(2);
    expect(ref.err).toContain("--reference: no condition 'react'");
    const metric = await cli([file, "--out", join(dir, "x"), "--metric", "f1"]);
    expect(metric.code).toBe(2);
    expect(metric.err).toContain("--metric");
    // A known metric that no row carries (accuracy of implicit-intent rows) is refused too.
    const absent = await cli([file, "--out", join(dir, "x"), "--metric", "accuracy"]);
    expect(absent.code).toBe(2);
    expect(absent.err).toMatch(/--metric: no row has .* values \(.*; metrics present: implicit/);
  });
});
