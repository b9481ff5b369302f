// The AURA part of docs/fidelity.md: the paper's Tables 2, 3, 4 and 12 (data/aura/paper-tables.json)
// beside the same measurements made here, row by row, each marked reproduced, not reproduced or
// not comparable, with the evidence and what produced it (deterministic backends and the rule
// judge offline; the paper's figures are gpt-4o-mini with an LLM judge).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { aggregate, runImplicitEvals, runPrivacyEval, type ConditionSummary, type ImplicitEvalResult, type ResultRow } from "./eval.ts";
import { clusteredBootstrapMean, mean, pairedTTest } from "../analysis/stats.ts";
import { InternalError } from "../../events/internalError.ts";
import { modelRunsSection, readModelRuns } from "./modelRuns.ts";

const DATA = join(import.meta.dirname, "..", "..", "data", "aura");
const SEEDS = [42, 123, 456];
const IMPLICIT = ["literal", "no-intent", "plan-and-solve", "aura-intent", "aura-intent-reuse", "fixed-private", "oracle-intent"];
const PRIVACY = ["fixed-probe", "react", "plan-and-solve", "aura-gap-routed", "static-context", "vanilla"];
/** The splits: scene A (the paper's v1, N = 25), our development and test scenes (data/aura/implicit/). */
const ALL_SPLITS = [
  { name: "scene A", file: join(DATA, "implicit_intent_scene_a.json") },
  { name: "dev (E, F)", file: join(DATA, "implicit", "dev.json") },
  { name: "dev2 (I, J, K)", file: join(DATA, "implicit", "dev2.json") },
  { name: "dev3 (L, M, N)", file: join(DATA, "implicit", "dev3.json") },
  { name: "dev4 (O, P, Q)", file: join(DATA, "implicit", "dev4.json") },
  { name: "dev5 (R, S, T)", file: join(DATA, "implicit", "dev5.json") },
  { name: "dev6 (U, V, W)", file: join(DATA, "implicit", "dev6.json") },
  { name: "dev7 (X, Y, Z)", file: join(DATA, "implicit", "dev7.json") },
  { name: "dev8 (AA, AB, AC)", file: join(DATA, "implicit", "dev8.json") },
  { name: "dev9 (AD, AE, AF)", file: join(DATA, "implicit", "dev9.json") },
  { name: "dev10 (BA, BB, BC)", file: join(DATA, "implicit", "dev10.json") },
  { name: "dev11 (CA, CB, CC)", file: join(DATA, "implicit", "dev11.json") },
  { name: "dev12 (DA, DB, DC)", file: join(DATA, "implicit", "dev12.json") },
  { name: "dev13 (EA, EB, EC)", file: join(DATA, "implicit", "dev13.json") },
  { name: "dev14 (FA, FB, FC)", file: join(DATA, "implicit", "dev14.json") },
  { name: "dev15 (KA, KB, KC)", file: join(DATA, "implicit", "dev15.json") },
  { name: "dev16 (MA, MB, MC)", file: join(DATA, "implicit", "dev16.json") },
  { name: "dev17 (PA, PB, PC)", file: join(DATA, "implicit", "dev17.json") },
  { name: "dev18 (RA, RB, RC)", file: join(DATA, "implicit", "dev18.json") },
  { name: "dev19 (SA, SB, SC)", file: join(DATA, "implicit", "dev19.json") },
  { name: "dev20 (TA, TB, TC)", file: join(DATA, "implicit", "dev20.json") },
  { name: "dev21 (UA, UB, UC)", file: join(DATA, "implicit", "dev21.json") },
  { name: "dev22 (VA, VB, VC)", file: join(DATA, "implicit", "dev22.json") },
  { name: "dev23 (WA, WB, WC)", file: join(DATA, "implicit", "dev23.json") },
  { name: "dev24 (XA, XB, XC)", file: join(DATA, "implicit", "dev24.json") },
  { name: "dev25 (YA, YB, YC)", file: join(DATA, "implicit", "dev25.json") },
  { name: "dev26 (ZA, ZB, ZC)", file: join(DATA, "implicit", "dev26.json") },
  { name: "dev27 (QA, QB, QC)", file: join(DATA, "implicit", "dev27.json") },
  { name: "dev28 (NA, NB, NC)", file: join(DATA, "implicit", "dev28.json") },
  { name: "dev29 (OA, OB, OC)", file: join(DATA, "implicit", "dev29.json") },
  { name: "dev30 (GA, GB, GC)", file: join(DATA, "implicit", "dev30.json") },
  { name: "dev31 (HA, HB, HC)", file: join(DATA, "implicit", "dev31.json") },
  { name: "dev32 (IA, IB, IC)", file: join(DATA, "implicit", "dev32.json") },
  { name: "dev33 (JA, JB, JC)", file: join(DATA, "implicit", "dev33.json") },
  { name: "dev34 (LA, LB, LC)", file: join(DATA, "implicit", "dev34.json") },
  { name: "dev35 (AG, AH, AI)", file: join(DATA, "implicit", "dev35.json") },
  { name: "dev36 (AJ, AK, AL)", file: join(DATA, "implicit", "dev36.json") },
  { name: "dev37 (AM, AN, AO)", file: join(DATA, "implicit", "dev37.json") },
  { name: "dev38 (AP, AQ, AR)", file: join(DATA, "implicit", "dev38.json") },
  { name: "dev39 (AS, AT, AU)", file: join(DATA, "implicit", "dev39.json") },
  { name: "dev40 (AV, AW, AX)", file: join(DATA, "implicit", "dev40.json") },
  { name: "dev41 (AY, AZ, BD)", file: join(DATA, "implicit", "dev41.json") },
  { name: "dev42 (BE, BF, BG)", file: join(DATA, "implicit", "dev42.json") },
  { name: "dev43 (BH, BI, BJ)", file: join(DATA, "implicit", "dev43.json") },
  { name: "dev44 (BK, BL, BM)", file: join(DATA, "implicit", "dev44.json") },
  { name: "dev45 (BN, BO, BP)", file: join(DATA, "implicit", "dev45.json") },
  { name: "dev46 (BQ, BR, BS)", file: join(DATA, "implicit", "dev46.json") },
  { name: "dev47 (BT, BU, BV)", file: join(DATA, "implicit", "dev47.json") },
  { name: "test (G, H)", file: join(DATA, "implicit", "test.json") },
].filter((s) => existsSync(s.file));

interface PaperTables {
  readonly table2: { title: string; source: string; rows: Array<{ condition: string; label: string; literal: number; implicit: number; probes: number }> };
  readonly table3: { title: string; source: string; rows: Array<{ condition: string; label: string; overall: number; A: number }>; delta: { overall: number; A: number; pOverall: string; pA: string } };
  readonly table4: { title: string; source: string; rows: Array<{ subcategory: string; gap: number; probes: number; score: number }> };
  readonly table12: { title: string; source: string; rows: Array<{ condition: string; label: string; fa: number; violationPct: number; probes: number }> };
}

const f3 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(3));
const f2 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(2));
const pText = (p: number): string => (p < 0.001 ? p.toExponential(1) : p.toFixed(3));

const cond = (r: { conditions: readonly ConditionSummary[] }, name: string): ConditionSummary => {
  const c = r.conditions.find((x) => x.condition === name);
  if (c === undefined) throw new InternalError(`fidelity: no results for condition ${name}`);
  return c;
};

/** Per-query implicit coverage of a condition, averaged over seeds (the paper's query-level unit). */
function perQuery(rows: readonly ResultRow[], condition: string): Map<string, number> {
  const by = new Map<string, number[]>();
  for (const r of rows) if (r.condition === condition && r.implicitCoverage !== null) by.set(`${r.benchmark}/${r.queryId}`, [...(by.get(`${r.benchmark}/${r.queryId}`) ?? []), r.implicitCoverage]);
  return new Map([...by].map(([k, v]) => [k, mean(v)]));
}

/** The paper's primary test: paired t over per-query means, and a bootstrap clustered on the query. */
function contrast(rows: readonly ResultRow[], a: string, b: string): { n: number; delta: number; p: number; ci: readonly [number, number] } {
  const qa = perQuery(rows, a);
  const qb = perQuery(rows, b);
  const keys = [...qa.keys()].filter((k) => qb.has(k)).sort();
  const t = pairedTTest(keys.map((k) => qa.get(k)!), keys.map((k) => qb.get(k)!));
  const cells = rows.filter((r) => r.condition === a && r.implicitCoverage !== null).map((r) => {
    const other = rows.find((o) => o.condition === b && o.benchmark === r.benchmark && o.queryId === r.queryId && o.seed === r.seed);
    return { cluster: `${r.benchmark}/${r.queryId}`, value: r.implicitCoverage! - (other?.implicitCoverage ?? 0) };
  });
  const boot = clusteredBootstrapMean(cells, { name: `fidelity/${a}-vs-${b}` });
  return { n: keys.length, delta: t.meanDiff, p: t.p, ci: boot.ci };
}

const verdict = (ok: boolean): string => (ok ? "reproduced" : "**not reproduced**");

/** `splits`: the names of the splits to run (every one when absent; scene A is always run). */
export async function auraFidelitySection(opts: { out: string; onProgress?: (msg: string) => void; splits?: readonly string[] }): Promise<string> {
  const say = opts.onProgress ?? (() => {});
  const splits = ALL_SPLITS.filter((s) => opts.splits === undefined || s.name === "scene A" || opts.splits.includes(s.name));
  const paper = JSON.parse(readFileSync(join(DATA, "paper-tables.json"), "utf8")) as PaperTables;
  say("AURA: implicit intent on scene A, dev and test splits");
  const evals = await runImplicitEvals({ files: splits.map((s) => s.file), conditions: IMPLICIT, seeds: SEEDS, out: join(opts.out, "implicit"), fresh: true });
  const bySplit = new Map<string, ImplicitEvalResult>(splits.map((s, i) => [s.name, evals.files[i]!]));
  const sceneA = bySplit.get("scene A")!;
  say("AURA: privacy slice");
  const privacy = await runPrivacyEval({ file: join(DATA, "privacy_queries.json"), conditions: PRIVACY, seeds: SEEDS, out: join(opts.out, "privacy"), fresh: true });

  const out: string[] = [];
  out.push("## AURA (implicit intent and the privacy slice)", "");
  out.push("Ours: **deterministic** — the deterministic IntentFrame backend and the deterministic baselines, judged by the offline rule judge on each answer's structured facts (`eval implicit`, seeds 42, 123, 456, maxSteps 3). The paper's: **LLM** — gpt-4o-mini at T 0.1, judged by gpt-4o-mini. Absolute levels are therefore not comparable (a rule judge scores a stated field 1 or 0; the LLM judge gives partial credit and reads prose); what can reproduce is each finding's direction and significance. `eval implicit --llm … --judge llm` runs the model version of every row.", "");

  // Table 2.
  out.push(`### ${paper.table2.title}`, "", `Source: ${paper.table2.source}. Ours: scene A, the same 25 queries, 75 cells per condition.`, "");
  out.push("| condition | paper lit. | paper implicit | paper probes | ours lit. | ours implicit | ours probes | ours disclosed beyond need | status |", "|---|---|---|---|---|---|---|---|---|");
  for (const row of paper.table2.rows) {
    const c = cond(sceneA, row.condition).overall;
    out.push(`| ${row.label} | ${f3(row.literal)} | ${f3(row.implicit)} | ${f2(row.probes)} | ${f3(c.literalCoverage)} | ${f3(c.implicitCoverage)} | ${f2(c.probesPerQuery)} | ${f2(c.disclosedBeyondNeed)} | not comparable (level: deterministic vs LLM) |`);
  }
  const reuse = cond(sceneA, "aura-intent-reuse").overall;
  out.push(`| AURA Intent + answer reuse (\`aura-intent-reuse\`, a named option, not the paper's) | — | — | — | ${f3(reuse.literalCoverage)} | ${f3(reuse.implicitCoverage)} | ${f2(reuse.probesPerQuery)} | ${f2(reuse.disclosedBeyondNeed)} | not in the paper |`);
  out.push("");
  // Model rows of any split (scene A, a dev or the test split), beside the deterministic figures of
  // the same split and, when a record ran only some of its scenes or queries, of those.
  out.push(...modelRunsSection(readModelRuns(), (file, condition, scenes, queries) => {
    const split = splits.find((s) => s.file === join(DATA, "..", "..", file) || s.file.endsWith(`/${file}`));
    const result = split === undefined ? undefined : bySplit.get(split.name);
    if (result === undefined || result.conditions.every((x) => x.condition !== condition)) return null;
    const rows = result.rows.filter((r) => r.condition === condition && (scenes === undefined || scenes.includes(r.scene)) && (queries === undefined || queries.includes(String(r.queryId))));
    if (rows.length === 0) return null;
    const c = aggregate(rows);
    return { implicit: c.implicitCoverage, literal: c.literalCoverage, probes: c.probesPerQuery };
  }));
  const findings: string[] = [];
  const checks: string[] = [];
  const find = (claim: string, ok: boolean, evidence: string) => findings.push(`| ${claim} | ${verdict(ok)} | ${evidence} |`);
  const check = (claim: string, ok: boolean, evidence: string) => checks.push(`| ${claim} | ${ok ? "met" : "**not met**"} | ${evidence} |`);
  const imp = (split: string, c: string) => cond(bySplit.get(split)!, c).overall.implicitCoverage ?? 0;
  // aura-intent-reuse (a named option, off by default) is reported, not judged against the paper.
  for (const split of splits.map((s) => s.name)) {
    const rows = bySplit.get(split)!.rows;
    const k = contrast(rows, "aura-intent", "no-intent");
    find(`AURA Intent > NoIntent on implicit coverage — ${split}`, k.delta > 0 && k.p < 0.05, `Δ ${k.delta >= 0 ? "+" : ""}${k.delta.toFixed(3)} (query-level paired t, n = ${k.n}, p = ${pText(k.p)}; 95% CI clustered on query [${k.ci[0].toFixed(3)}, ${k.ci[1].toFixed(3)}]); paper +0.163 (Table 2)`);
    const fp = imp(split, "fixed-private");
    const au = imp(split, "aura-intent");
    check(`AURA Intent within 0.02 of Fixed-private, or above — ${split}`, au >= fp - 0.02, `AURA ${f3(au)}, Fixed-private ${f3(fp)} (paper: 0.803 vs 0.851, 0.048 below)`);
    const pns = imp(split, "plan-and-solve");
    const ni = imp(split, "no-intent");
    find(`Plan-and-Solve ≤ NoIntent on implicit coverage — ${split}`, pns <= ni, `Plan-and-Solve ${f3(pns)}, NoIntent ${f3(ni)} (paper 0.520 < 0.640)`);
  }
  for (const split of splits.map((s) => s.name)) {
    const a = cond(bySplit.get(split)!, "aura-intent").overall;
    const f = cond(bySplit.get(split)!, "fixed-private").overall;
    check(`AURA Intent states fewer private fields beyond the need than Fixed-private — ${split}`, a.disclosedBeyondNeedAnswer < f.disclosedBeyondNeedAnswer, `per query, stated in the answer: AURA ${f2(a.disclosedBeyondNeedAnswer)}, Fixed-private ${f2(f.disclosedBeyondNeedAnswer)}; read by the probes: AURA ${f2(a.disclosedBeyondNeedProbes)}, Fixed-private ${f2(f.disclosedBeyondNeedProbes)} (a private-state probe returns every field); the paper does not measure it`);
    check(`AURA Intent makes no more probes than Fixed-private — ${split}`, a.probesPerQuery <= f.probesPerQuery, `AURA ${f2(a.probesPerQuery)}, Fixed-private ${f2(f.probesPerQuery)} probes per query (paper 1.48 vs 1.40); AURA's literal coverage ${f3(a.literalCoverage)} vs ${f3(f.literalCoverage)}`);
    check(`AURA Intent makes no forbidden-tool call — ${split}`, a.forbiddenViolations === 0, `${a.forbiddenViolations} forbidden-tool reads (${a.cellsWithViolation} cells)`);
  }
  out.push("The paper's findings (deterministic here):", "", "| finding | status | evidence |", "|---|---|---|", ...findings, "");
  out.push("This project's own targets for the offline backend (issue 21: coverage within 0.02 of Fixed-private or above, with fewer probes, less disclosure and no forbidden-tool call, on scenes it was not developed on), not findings of the paper:", "", "| target | status | evidence |", "|---|---|---|", ...checks, "");
  out.push("A development split's rows above are measured after the rounds made on it, so they are no test of generalisation. Each split written blind was measured once before any round; those first measures are in `data/aura/implicit/README.md` and `docs/intent-analyser.md` (of forty-one, dev7–dev47, the 0.85 floor held on twenty-six, the 0.02 margin on thirteen, dev17, dev22, dev28, dev31, dev34, dev38, dev39, dev40, dev42, dev43, dev44, dev46 and dev47; on dev17 alone with fewer probes and less disclosure as well). The test split is only measured, never tuned on: it is the clean figure.", "");

  // Table 3.
  out.push(`### ${paper.table3.title}`, "", `Source: ${paper.table3.source}. Columns B–D are the authors' held-out scenes, which this project does not have: **not comparable**. Our own dev and test scenes stand beside scene A instead (the test split is only measured, never tuned on).`, "");
  const others = splits.map((x) => x.name).filter((n) => n !== "scene A");
  out.push(`| condition | paper overall | paper A | ours A | ${others.map((n) => `ours ${n}`).join(" | ")} |`, `|---|---|---|---|${others.map(() => "---|").join("")}`);
  for (const row of paper.table3.rows) out.push(`| ${row.label} | ${f3(row.overall)} | ${f3(row.A)} | ${f3(imp("scene A", row.condition))} | ${others.map((n) => f3(imp(n, row.condition))).join(" | ")} |`);
  const all = evals.rows;
  const kAll = contrast(all, "aura-intent", "no-intent");
  const d = (n: string) => (imp(n, "aura-intent") - imp(n, "no-intent")).toFixed(3);
  out.push(`| Δ (Intent − NoIntent) | +${paper.table3.delta.overall.toFixed(3)} (p ${paper.table3.delta.pOverall}) | +${paper.table3.delta.A.toFixed(3)} (p ${paper.table3.delta.pA}) | ${d("scene A")} | ${others.map(d).join(" | ")} |`);
  out.push("", `All ${splits.length} splits pooled: Δ ${kAll.delta.toFixed(3)}, query-level paired t p = ${pText(kAll.p)} (n = ${kAll.n} queries) — the direction and significance of the paper's overall finding: ${verdict(kAll.delta > 0 && kAll.p < 0.05)}.`, "");

  // Table 4.
  out.push(`### ${paper.table4.title}`, "", `Source: ${paper.table4.source}. Ours: aura-intent on scene A, 15 cells per row.`, "");
  out.push("| subcategory | paper gap | paper probes | paper score | ours gap | ours probes | ours implicit |", "|---|---|---|---|---|---|---|");
  const aura = cond(sceneA, "aura-intent");
  const gapOf = (sub: string) => {
    const g = sceneA.rows.filter((r) => r.condition === "aura-intent" && r.subcategory === sub && r.gap !== null).map((r) => r.gap!);
    return g.length === 0 ? null : mean(g);
  };
  for (const row of paper.table4.rows) {
    const a = aura.perSubcategory[row.subcategory];
    out.push(`| ${row.subcategory} | ${f2(row.gap)} | ${f2(row.probes)} | ${f2(row.score)} | ${f2(gapOf(row.subcategory))} | ${f2(a?.probesPerQuery)} | ${f3(a?.implicitCoverage)} |`);
  }
  const subs = paper.table4.rows.map((r) => r.subcategory);
  const gaps = subs.map((s) => gapOf(s) ?? 0);
  const topGap = subs[gaps.indexOf(Math.max(...gaps))];
  const so = aura.perSubcategory.second_order?.probesPerQuery ?? NaN;
  out.push("", "| finding | status | evidence |", "|---|---|---|");
  out.push(`| second_order has the highest gap yet about one probe (the belief call answers it) | ${verdict(topGap === "second_order" && Math.abs(so - 1) < 0.01)} | highest gap: ${topGap}; second_order probes ${f2(so)} |`);
  const probes = subs.map((s) => aura.perSubcategory[s]?.probesPerQuery ?? 0);
  out.push(`| the probe count varies by subcategory under one budget ceiling | ${verdict(Math.max(...probes) - Math.min(...probes) >= 0.3)} | ${subs.map((s, i) => `${s} ${f2(probes[i])}`).join(", ")} (paper 0.80–2.20) |`);
  out.push("");

  // Table 12.
  out.push(`### ${paper.table12.title}`, "", `Source: ${paper.table12.source}. Ours: \`eval privacy\` on the same 30 queries, each answered on an AURATown snapshot (deterministic). FA needs the LLM factual judge (\`--judge llm\`), so that column is **not comparable** here; violations and probes are.`, "");
  out.push("| condition | paper FA | paper viol. % | paper probes | ours viol. % | ours probes | status |", "|---|---|---|---|---|---|---|");
  for (const row of paper.table12.rows) {
    const c = privacy.conditions.find((x) => x.condition === row.condition)?.overall;
    const viol = c === undefined || c.cells === 0 ? NaN : (100 * c.cellsWithViolation) / c.cells;
    const same = Math.abs(viol - row.violationPct) <= 10 || (row.violationPct === 0 && viol === 0);
    out.push(`| ${row.label} | ${f3(row.fa)} | ${row.violationPct.toFixed(1)} | ${f2(row.probes)} | ${Number.isNaN(viol) ? "—" : viol.toFixed(1)} | ${f2(c?.probesPerQuery)} | ${same ? "violations reproduced" : "**violations not reproduced**"} |`);
  }
  const gr = privacy.conditions.find((c) => c.condition === "aura-gap-routed")?.overall;
  out.push("", `AURA GapRouted holds the low-violation, low-probe corner (paper: 0.0 % at 0.73 probes): ${verdict(gr !== undefined && gr.cellsWithViolation === 0 && gr.probesPerQuery < 2)} (ours ${gr === undefined ? "—" : `${gr.cellsWithViolation} violating cells at ${f2(gr.probesPerQuery)} probes`}).`, "");
  return out.join("\n");
}
