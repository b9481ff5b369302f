// The summary `eval enacttom` prints, in the shape of the paper's Table 2: per agent, functional
// Avg ± binomial SE, Pass@k and exact Pass^k (k = 1…runs) and percent complete, overall, by scope
// (cooperative, mixed), by K-depth and by scope × K-depth, on one split.
import { FUNCTIONAL_FAILURES, LITERAL_FAILURES } from "./failures.ts";
import { groupLabel, summarisePool, type AttemptResult, type PoolRow } from "./poolEval.ts";

/** Per agent, how many attempts failed and how many of those carry each taxonomy tag (an attempt may carry several). */
export interface FailureCounts {
  readonly functionalFailed: number;
  readonly functional: Readonly<Record<string, number>>;
  readonly literalFailed: number;
  readonly literal: Readonly<Record<string, number>>;
}

export interface EnacttomSummary {
  readonly split: "standard" | "hard";
  /** The run mode: standard, or baseline (every secret revealed, every room seen, ReadAgentTrajectory). */
  readonly mode: "standard" | "baseline";
  readonly runs: number;
  readonly out: string;
  readonly episodes: number;
  readonly rows: readonly (PoolRow & { readonly label: string })[];
  readonly failures: Readonly<Record<string, FailureCounts>>;
  /** The LLM agent (when it ran): its turns and how many fell back to the competent policy; its probe calls, probe answers and how many fell back to the knowledge base. */
  readonly llm?: { readonly turns: number; readonly turnFallbacks: number; readonly probeCalls: number; readonly probeAnswers: number; readonly probeFallbacks: number };
}

function llmCounts(results: readonly AttemptResult[]): EnacttomSummary["llm"] {
  const mine = results.filter((r) => r.llmTurns !== undefined || r.llmProbes !== undefined);
  if (mine.length === 0) return undefined;
  const sum = (pick: (r: AttemptResult) => number) => mine.reduce((n, r) => n + pick(r), 0);
  return {
    turns: sum((r) => r.llmTurns?.decisions ?? 0),
    turnFallbacks: sum((r) => r.llmTurns?.fallbacks ?? 0),
    probeCalls: sum((r) => r.llmProbes?.calls ?? 0),
    probeAnswers: sum((r) => r.llmProbes?.answers ?? 0),
    probeFallbacks: sum((r) => r.llmProbes?.fallbacks ?? 0),
  };
}

function failureCounts(results: readonly AttemptResult[]): Record<string, FailureCounts> {
  const out: Record<string, FailureCounts> = {};
  for (const policy of [...new Set(results.map((r) => r.policy))]) {
    const mine = results.filter((r) => r.policy === policy);
    const count = (tags: readonly string[], pick: (r: AttemptResult) => readonly string[]) => Object.fromEntries(tags.map((t) => [t, mine.filter((r) => pick(r).includes(t)).length]));
    out[policy] = {
      functionalFailed: mine.filter((r) => !r.success).length,
      functional: count(Object.keys(FUNCTIONAL_FAILURES), (r) => r.failures?.functional ?? []),
      literalFailed: mine.filter((r) => !r.literalPass).length,
      literal: count(Object.keys(LITERAL_FAILURES), (r) => r.failures?.literal ?? []),
    };
  }
  return out;
}

export function enacttomSummary(o: { readonly split: "standard" | "hard"; readonly mode?: "standard" | "baseline"; readonly runs: number; readonly out: string; readonly results: readonly AttemptResult[] }): EnacttomSummary {
  // One split was run: its rows are the groups that name no split.
  const rows = summarisePool(o.results, o.runs)
    .filter((r) => r.group.split === undefined)
    .map((r) => ({ label: groupLabel(r.group), ...r }));
  const llm = llmCounts(o.results);
  return { split: o.split, mode: o.mode ?? "standard", runs: o.runs, out: o.out, episodes: o.results.length, rows, failures: failureCounts(o.results), ...(llm === undefined ? {} : { llm }) };
}

const pct = (x: number) => (100 * x).toFixed(1);

export function enacttomTable(s: EnacttomSummary): string {
  const k = s.runs;
  const head = ["agent", "group", "tasks", "avg ± se", ...Array.from({ length: k }, (_, i) => `pass@${i + 1}`), ...Array.from({ length: k }, (_, i) => `pass^${i + 1}`), "% complete", "literal", "lit avg ± se", `lit pass^${k}`];
  const body = s.rows.map((r) => [r.policy, r.label, String(r.tasks), `${pct(r.avg)} ± ${pct(r.se)}`, ...r.passAt.map(pct), ...r.passPower.map(pct), pct(r.percentComplete), pct(r.literal.score), `${pct(r.literal.avg)} ± ${pct(r.literal.se)}`, pct(r.literal.passPower.at(-1) ?? 0)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const table = [head, ...body].map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  return [
    `EnactToM ${s.split} split${s.mode === "baseline" ? ", baseline mode" : ""}: ${s.rows[0]?.tasks ?? 0} tasks × ${s.runs} runs per agent (percent; Pass^k exact, C(c,k)/C(n,k) per task)`,
    ...table,
    "functional: avg ± se, pass@k, pass^k, % complete; literal: the mean probe score (passed root probes / roots), then Avg ± SE and Pass^k of an attempt whose every root probe passed",
    "",
    "Failures, from the logs (attempts carrying each tag; an attempt may carry several):",
    ...Object.entries(s.failures).flatMap(([policy, f]) => {
      const tags = (counts: Readonly<Record<string, number>>) => Object.entries(counts).filter(([, n]) => n > 0).map(([t, n]) => `${t} ${n}`).join(", ") || "-";
      return [`  ${policy}: functional ${f.functionalFailed} failed (${tags(f.functional)}); literal ${f.literalFailed} failed (${tags(f.literal)})`];
    }),
    ...(s.llm === undefined ? [] : ["", `LLM agent: ${s.llm.turnFallbacks} of ${s.llm.turns} turns fell back to the competent policy; literal probes: ${s.llm.probeCalls} model calls, ${s.llm.probeFallbacks} of ${s.llm.probeAnswers} answers fell back to the knowledge base`]),
  ].join("\n");
}

// ---- Standard vs baseline (`eval enacttom --mode both`) ------------------------------------

/** One mode's figures in a comparison cell: functional Avg ± SE, Pass^k (k = runs), percent complete; literal Avg and Pass^k. */
export interface ModeFigures {
  readonly avg: number;
  readonly se: number;
  readonly passPower: number;
  readonly percentComplete: number;
  readonly literalAvg: number;
  readonly literalPassPower: number;
}

/** A comparison row: one agent and group (all, scope, K-depth, scope × K-depth), both modes and baseline − standard. */
export interface ComparisonRow {
  readonly agent: string;
  readonly label: string;
  readonly tasks: number;
  readonly standard: ModeFigures;
  readonly baseline: ModeFigures;
  /** Baseline minus standard: functional Avg, functional Pass^k, literal Avg (the information gap the paper's calibrator measures). */
  readonly gap: { readonly avg: number; readonly passPower: number; readonly literalAvg: number };
}

export interface EnacttomComparison {
  readonly split: "standard" | "hard";
  readonly runs: number;
  readonly out: string;
  readonly modes: readonly ["standard", "baseline"];
  readonly comparison: readonly ComparisonRow[];
  readonly standard: EnacttomSummary;
  readonly baseline: EnacttomSummary;
}

const figures = (r: PoolRow): ModeFigures => ({ avg: r.avg, se: r.se, passPower: r.passPower.at(-1) ?? 0, percentComplete: r.percentComplete, literalAvg: r.literal.avg, literalPassPower: r.literal.passPower.at(-1) ?? 0 });

export function enacttomComparison(standard: EnacttomSummary, baseline: EnacttomSummary): EnacttomComparison {
  const comparison: ComparisonRow[] = [];
  for (const s of standard.rows) {
    const b = baseline.rows.find((r) => r.policy === s.policy && r.label === s.label);
    if (b === undefined) continue;
    const sf = figures(s);
    const bf = figures(b);
    comparison.push({ agent: s.policy, label: s.label, tasks: s.tasks, standard: sf, baseline: bf, gap: { avg: bf.avg - sf.avg, passPower: bf.passPower - sf.passPower, literalAvg: bf.literalAvg - sf.literalAvg } });
  }
  return { split: standard.split, runs: standard.runs, out: standard.out, modes: ["standard", "baseline"], comparison, standard, baseline };
}

const signed = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : "±"}${pct(Math.abs(x))}`;

export function comparisonTable(c: EnacttomComparison): string {
  const k = c.runs;
  const head = ["agent", "group", "tasks", "std avg ± se", `std pass^${k}`, "std lit", "base avg ± se", `base pass^${k}`, "base lit", "gap avg", `gap pass^${k}`, "gap lit"];
  const body = c.comparison.map((r) => [r.agent, r.label, String(r.tasks), `${pct(r.standard.avg)} ± ${pct(r.standard.se)}`, pct(r.standard.passPower), pct(r.standard.literalAvg), `${pct(r.baseline.avg)} ± ${pct(r.baseline.se)}`, pct(r.baseline.passPower), pct(r.baseline.literalAvg), signed(r.gap.avg), signed(r.gap.passPower), signed(r.gap.literalAvg)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const table = [head, ...body].map((cells) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd());
  return [
    `EnactToM ${c.split} split, standard vs baseline mode: ${c.comparison[0]?.tasks ?? 0} tasks × ${c.runs} runs per agent and mode (percent; Pass^k exact)`,
    ...table,
    "std: standard mode (private secrets, own room seen); base: baseline mode (every secret revealed, every room seen, ReadAgentTrajectory); gap: baseline − standard; lit: literal Avg (every root probe passed)",
    "",
    enacttomTable(c.standard),
    "",
    enacttomTable(c.baseline),
  ].join("\n");
}
