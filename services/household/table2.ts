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

export function enacttomSummary(o: { readonly split: "standard" | "hard"; readonly runs: number; readonly out: string; readonly results: readonly AttemptResult[] }): EnacttomSummary {
  // One split was run: its rows are the groups that name no split.
  const rows = summarisePool(o.results, o.runs)
    .filter((r) => r.group.split === undefined)
    .map((r) => ({ label: groupLabel(r.group), ...r }));
  const llm = llmCounts(o.results);
  return { split: o.split, runs: o.runs, out: o.out, episodes: o.results.length, rows, failures: failureCounts(o.results), ...(llm === undefined ? {} : { llm }) };
}

const pct = (x: number) => (100 * x).toFixed(1);

export function enacttomTable(s: EnacttomSummary): string {
  const k = s.runs;
  const head = ["agent", "group", "tasks", "avg ± se", ...Array.from({ length: k }, (_, i) => `pass@${i + 1}`), ...Array.from({ length: k }, (_, i) => `pass^${i + 1}`), "% complete", "literal", "lit avg ± se", `lit pass^${k}`];
  const body = s.rows.map((r) => [r.policy, r.label, String(r.tasks), `${pct(r.avg)} ± ${pct(r.se)}`, ...r.passAt.map(pct), ...r.passPower.map(pct), pct(r.percentComplete), pct(r.literal.score), `${pct(r.literal.avg)} ± ${pct(r.literal.se)}`, pct(r.literal.passPower.at(-1) ?? 0)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const table = [head, ...body].map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  return [
    `EnactToM ${s.split} split: ${s.rows[0]?.tasks ?? 0} tasks × ${s.runs} runs per agent (percent; Pass^k exact, C(c,k)/C(n,k) per task)`,
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
