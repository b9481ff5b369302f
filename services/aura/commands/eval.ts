// The actions of `probetown eval …` (services/aura/cli.ts defines the command group): benchmark runs with
// the deterministic backends and the rule judge, or with the controller on a model (--llm, --model,
// --llm-config) and/or the paper's LLM judges (--judge). Progress goes to stderr; the result (text
// table, or JSON with --json) to stdout; one JSONL line per query × seed × condition to the results
// file beside the episode logs.
import { parseSeeds } from "../../distributed/jobs.ts";
import { parseTraceFlag } from "../../../infra/telemetry.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { runImplicitEvals, runPrivacyEval, type Aggregate, type ConditionSummary, type EvalLlmSummary, type ImplicitEvalsResult, type PrivacyAggregate } from "../eval.ts";
import { runFactualEval, type FactualAggregate } from "../factualEval.ts";
import type { LlmConfig, LlmWaiting } from "../../llm/index.ts";
import { endpointExit, resolveLlmFlags, waitingNotice, type LlmCliFlags } from "../../cli/llm.ts";
import { checkTownWarmupFits } from "../../auratown/limits.ts";
import { checkOutDir } from "../../cli/outputs.ts";
import { loadFactualBenchmark } from "../benchmarks/factual.ts";
import type { JudgeMode, LlmJudgeFields } from "../llmJudge.ts";

/**
 * The LLM config of an eval, with a one-line note on stderr (naming the judge's model when an LLM
 * judges), and the line said while its model calls wait with no answer (none with --quiet).
 */
function llmOption(flags: LlmCliFlags & { judge?: JudgeMode }): { llm?: LlmConfig; onLlmWaiting?: (waiting: LlmWaiting) => void } {
  const judged = flags.judge === "llm" || flags.judge === "both";
  const config = resolveLlmFlags(flags, "eval", judged ? ["intent", "planner", "answer", "judge"] : undefined);
  const onLlmWaiting = waitingNotice("eval", flags);
  return config === null ? {} : { llm: config, ...(onLlmWaiting === undefined ? {} : { onLlmWaiting }) };
}

/**
 * Said when model calls fell back: why is in the cells' logs, and a rerun serves finished cells as
 * they are. After a bad key or a dead endpoint was fixed, the same command judged the fallback
 * answers again as the model's (only the LLM judge's failed calls are asked again).
 */
export const fallbackNote = (fallbacks: number): string[] =>
  fallbacks === 0 ? [] : [`note: ${fallbacks} model call(s) fell back to the deterministic backend (why: the llm.failed records in the cells' logs); a rerun serves finished cells from their logs as they are: --fresh runs them again`];

/**
 * The exit code of an eval whose LLM judge was asked for: 2 when it scored no cell (the scores the
 * eval was run for are missing: every call refused, say), as `experiment` does; unscored cells are
 * said on stderr either way, with --json too. It exited 0 with only '0 cells scored' in the table.
 */
function judgeExit(label: string, rows: ReadonlyArray<{ readonly llmJudge?: LlmJudgeFields }>): number {
  const judged = rows.map((r) => r.llmJudge).filter((j): j is LlmJudgeFields => j !== undefined);
  const failed = judged.filter((j) => j.llmJudgeError !== undefined);
  if (failed.length === 0) return 0;
  const all = failed.length === judged.length;
  process.stderr.write(
    `${label}: ${all ? "the LLM judge scored no cell" : `the LLM judge could not score ${failed.length} of ${judged.length} cells`} (first error: ${failed[0]!.llmJudgeError}); ` +
      `${all ? "there are no LLM-judge scores" : "they are left out of its means"}. A rerun asks again for the calls that never reached the model; recorded answers, invalid ones too, are served as they are.\n`,
  );
  return all ? 2 : 0;
}

/**
 * The exit code of an eval: 5 (what to fix on stderr) when model calls fell back because the
 * endpoint refused the key, model or URL, could not be reached or answered every call with an
 * error — now, or in cells served from logs recorded so —, else the LLM judge's (judgeExit).
 * Both are said.
 */
function evalExit(label: string, llm: { readonly baseURL: string; readonly endpointProblems: EvalLlmSummary["endpointProblems"] } | undefined, rows: ReadonlyArray<{ readonly llmJudge?: LlmJudgeFields; readonly fallbacks?: number }>): number {
  const judged = judgeExit(label, rows);
  const fellBack = rows.reduce((n, r) => n + (r.fallbacks ?? 0), 0);
  const endpoint = llm === undefined ? 0 : endpointExit(label, llm.endpointProblems, { baseURL: llm.baseURL, ...(fellBack > 0 ? { failed: fellBack } : {}), logsAre: "the cells' logs are" });
  return endpoint !== 0 ? endpoint : judged;
}

const llmLine = (llm: EvalLlmSummary | undefined): string[] => {
  if (llm === undefined) return [];
  const t = llm.usage.total;
  return [`llm: ${llm.baseURL} · ${t.calls} calls (${t.failed} failed, ${t.cached} cached, ${t.httpRequests} HTTP requests) · ${t.promptTokens} prompt + ${t.completionTokens} completion tokens${t.costUsd > 0 ? ` · $${t.costUsd.toFixed(4)}` : ""}`];
};

export interface ImplicitFlags extends LlmCliFlags {
  judge?: JudgeMode;
  /** Every --file given, each possibly a comma-separated list. */
  file: string[];
  condition: string;
  seeds: string;
  out?: string;
  maxSteps?: number;
  allow?: string;
  deny?: string;
  scene?: string;
  fresh?: boolean;
  trace?: string;
  json?: boolean;
  quiet?: boolean;
}

/**
 * Experiments and evals keep every finished cell: the first call (0 done, the inputs checked) says
 * so, as a Ctrl-C ends them at once (a SIGINT handler would only run when the event loop turns,
 * which a run of cells, chained promises over synchronous file writes, may not do for minutes).
 */
export function keptNotice(label: string, flags: { quiet?: boolean; json?: boolean }): () => void {
  let told = flags.quiet === true || flags.json === true;
  return () => {
    if (told) return;
    told = true;
    process.stderr.write(`${label}: every finished cell is kept: after a Ctrl-C or a crash, the same command continues from them\n`);
  };
}

/**
 * What an interrupted cell's resume says on stderr, as `run --resume` does: a torn tail it cut, and
 * where the bytes were kept. Said with --quiet too, as by `run --resume` and sweeps: it is the only
 * word that a cell's log was cut, once per damaged cell.
 */
export function resumeNote(label: string): (note: string) => void {
  return (note) => void process.stderr.write(`${label}: ${note}\n`);
}

/** An eval's per-cell progress lines on stderr (none with --quiet). */
function cellProgress(label: string, flags: { quiet?: boolean; json?: boolean }): (done: number, total: number, cell: string) => void {
  const notice = keptNotice(label, flags);
  return (done, total, cell) => {
    notice();
    if (flags.quiet !== true && done > 0) process.stderr.write(`eval: [${done}/${total}] ${cell}\n`);
  };
}

const globs = (flag: string, value: string | undefined): string[] | undefined => {
  if (value === undefined) return undefined;
  const list = value.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (list.length === 0) throw new UsageError(`${flag}: expected comma-separated tool globs (e.g. get_agent_private_state,get_recent_*), got '${value}'`);
  return list;
};

const f3 = (x: number | null) => (x === null ? "  –  " : x.toFixed(3));

function row(label: string, a: Aggregate): string {
  return `${label.padEnd(26)} ${String(a.cells).padStart(5)}  ${f3(a.literalCoverage)}  ${f3(a.implicitCoverage)}  ${a.probesPerQuery.toFixed(2).padStart(6)}  ${a.disclosurePerQuery.toFixed(2).padStart(6)}  ${a.disclosedBeyondNeed.toFixed(2).padStart(6)}  ${a.disclosedBeyondNeedAnswer.toFixed(2).padStart(5)}  ${a.disclosedBeyondNeedProbes.toFixed(2).padStart(5)}  ${f3(a.goldToolRecall)}  ${String(a.forbiddenViolations).padStart(4)}  ${String(a.targetPrivateReads).padStart(4)}  ${String(a.beliefConflations).padStart(4)}`;
}

/** The condition blocks of one file (or of the files pooled). */
function conditionBlocks(conditions: readonly ConditionSummary[]): string[] {
  const head = `${"".padEnd(26)} ${"cells".padStart(5)}  literal  implicit  probes  disclo  beyond  b.ans  b.prb  recall  viol  tpr   confl`;
  const out: string[] = [];
  for (const c of conditions) {
    out.push(`${c.condition} [${c.resultKind}] (backend: ${c.backend}) — ${c.description}`, head, row("overall", c.overall));
    for (const [s, a] of Object.entries(c.perScene)) out.push(row(`  scene ${s}`, a));
    for (const [s, a] of Object.entries(c.perSubcategory)) out.push(row(`  ${s}`, a));
    for (const [s, a] of Object.entries(c.perSeed)) out.push(row(`  seed ${s}`, a));
    const j = c.overall.llm;
    if (j !== undefined) out.push(`  LLM judge: literal ${f3(j.literal)} · implicit ${f3(j.implicit)} · ${j.scored} cells scored, ${j.failures} failed (no score)`);
    if (c.overall.fallbacks > 0) out.push(`  ${c.overall.fallbacks} model call(s) fell back to the deterministic backend`);
    out.push("");
  }
  return out;
}

function renderText(r: ImplicitEvalsResult): string {
  const judge = r.judge === "llm" ? "LLM judge (rule figures for reference)" : r.judge === "both" ? "rule and LLM judges" : "rule judge";
  const out: string[] = [];
  for (const f of r.files) out.push(`implicit intent · ${f.file} · seeds ${f.seeds.join(",")} · maxSteps ${f.maxSteps} · ${judge}`, "", ...conditionBlocks(f.conditions));
  if (r.files.length > 1) out.push(`implicit intent · all ${r.files.length} files pooled (${r.files.map((f) => f.benchmark).join(", ")}) · seeds ${r.seeds.join(",")} · ${judge}`, "", ...conditionBlocks(r.conditions));
  out.push("[deterministic]: every stage ran on a deterministic backend · [LLM]: a model served at least one stage");
  out.push("disclo: summed probe disclosure cost · beyond: private items (state fields, beliefs) stated or read that the query's need did not include, per query; b.ans: stated in the answer; b.prb: read by its probes");
  out.push("viol: forbidden tools that read state · tpr: second-order queries that read the target's private state · confl: second-order answers stating the target's actual state");
  out.push(...fallbackNote(r.conditions.reduce((n, c) => n + c.overall.fallbacks, 0)), ...llmLine(r.llm), ...r.files.map((f) => `results: ${f.results}`));
  return out.join("\n") + "\n";
}

export async function cmdImplicit(flags: ImplicitFlags): Promise<number> {
  const conditions = flags.condition.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (conditions.length === 0) throw new UsageError("--condition: name at least one condition");
  if (flags.out !== undefined) checkOutDir(flags.out, `--out ${flags.out}`, "the episode logs and results");
  const seeds = parseSeeds(flags.seeds);
  const allow = globs("--allow", flags.allow);
  const deny = globs("--deny", flags.deny);
  const files = flags.file.flatMap((f) => f.split(",")).map((f) => f.trim()).filter((f) => f.length > 0);
  if (files.length === 0) throw new UsageError("--file: give a benchmark file, several as a comma-separated list or a repeated --file");
  const result = await runImplicitEvals({
    files,
    conditions,
    seeds,
    ...(flags.out === undefined ? {} : { out: flags.out }),
    ...(flags.maxSteps === undefined ? {} : { maxSteps: flags.maxSteps }),
    ...(allow === undefined && deny === undefined ? {} : { policy: { allow: allow ?? ["*"], deny: deny ?? [] } }),
    ...(flags.scene === undefined ? {} : { scenes: flags.scene.split(",").map((s) => s.trim()) }),
    ...(flags.fresh === true ? { fresh: true } : {}),
    ...(flags.trace === undefined || flags.trace === "none" ? {} : { trace: flags.trace === "jsonl" ? ("default" as const) : parseTraceFlag(flags.trace, "trace.jsonl") }),
    progress: cellProgress("eval implicit", flags),
    onResumeNote: resumeNote("eval"),
    ...llmOption(flags),
    ...(flags.judge === undefined ? {} : { judge: flags.judge }),
  });
  if (flags.json) {
    // The pooled figures at the top (one file: that file's, as before), each file apart in files[].
    const { rows: _rows, files: perFile, ...pooled } = result;
    const first = perFile[0]!;
    const top = perFile.length === 1 ? { benchmark: first.benchmark, file: first.file, results: first.results } : { file: files.join(",") };
    const fileSummaries = perFile.map(({ rows: _r, ...f }) => f);
    process.stdout.write(JSON.stringify({ ...top, ...pooled, files: fileSummaries, judge: flags.judge ?? "rule", backend: result.llm === undefined ? "deterministic" : "llm" }, null, 2) + "\n");
  } else process.stdout.write(renderText(result));
  return evalExit("eval implicit", result.llm, result.rows);
}

export interface PrivacyFlags extends LlmCliFlags {
  judge?: JudgeMode;
  file: string;
  condition: string;
  seeds: string;
  out?: string;
  maxSteps?: number;
  warmup?: number;
  fresh?: boolean;
  json?: boolean;
  quiet?: boolean;
}

function privacyRow(label: string, a: PrivacyAggregate): string {
  return `${label.padEnd(26)} ${String(a.cells).padStart(5)}  ${a.probesPerQuery.toFixed(2).padStart(6)}  ${a.disclosurePerQuery.toFixed(2).padStart(6)}  ${String(a.forbiddenViolations).padStart(5)}  ${String(a.cellsWithViolation).padStart(5)}  ${f3(a.allowedRecall)}`;
}

export async function cmdPrivacy(flags: PrivacyFlags): Promise<number> {
  const conditions = flags.condition.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (conditions.length === 0) throw new UsageError("--condition: name at least one condition");
  if (flags.out !== undefined) checkOutDir(flags.out, `--out ${flags.out}`, "the episode logs and results");
  if (flags.warmup !== undefined) checkTownWarmupFits(flags.warmup, `--warmup ${flags.warmup}`, flags.out ?? "runs/eval");
  const result = await runPrivacyEval({
    file: flags.file, conditions, seeds: parseSeeds(flags.seeds),
    ...(flags.out === undefined ? {} : { out: flags.out }),
    ...(flags.maxSteps === undefined ? {} : { maxSteps: flags.maxSteps }),
    ...(flags.warmup === undefined ? {} : { warmup: flags.warmup }),
    ...(flags.fresh === true ? { fresh: true } : {}),
    progress: cellProgress("eval privacy", flags),
    onResumeNote: resumeNote("eval"),
    ...llmOption(flags),
    ...(flags.judge === undefined ? {} : { judge: flags.judge }),
  });
  if (flags.json) {
    const { rows: _rows, ...summary } = result;
    process.stdout.write(JSON.stringify({ ...summary, judge: flags.judge ?? "rule", backend: result.llm === undefined ? "deterministic" : "llm" }, null, 2) + "\n");
  } else {
    const lines = [`privacy slice · ${result.file} · seeds ${result.seeds.join(",")} · GapRouted maxSteps ${result.maxSteps} · rule judge`, ""];
    const head = `${"".padEnd(26)} ${"cells".padStart(5)}  probes  disclo   viol  vcell  allowed`;
    for (const c of result.conditions) {
      lines.push(`${c.condition} (backend: ${c.backend}) — ${c.description}`, head, privacyRow("overall", c.overall));
      for (const [k, a] of Object.entries(c.perCategory)) lines.push(privacyRow(`  ${k}`, a));
      const judged = result.rows.filter((r) => r.condition === c.condition && r.llmJudge !== undefined).map((r) => r.llmJudge!);
      if (judged.length > 0) {
        const ok = judged.filter((x) => x.llmJudgeError === undefined);
        const acc = ok.length === 0 ? null : ok.reduce((s2, x) => s2 + (x.llmAccuracy ?? 0), 0) / ok.length;
        lines.push(`  LLM judge (§7.1 factual accuracy): accuracy ${f3(acc)} · ${ok.length} cells scored, ${judged.length - ok.length} failed (no score)`);
      }
      lines.push("");
    }
    lines.push("viol: forbidden tools that read state · vcell: query × seed cells with at least one violation · allowed: share of the query's allowed tools used", ...fallbackNote(result.rows.reduce((n, r) => n + (r.fallbacks ?? 0), 0)), ...llmLine(result.llm), `results: ${result.results}`);
    process.stdout.write(lines.join("\n") + "\n");
  }
  return evalExit("eval privacy", result.llm, result.rows);
}

/** `eval factual` takes the same flags as `eval privacy`: both run on AURATown snapshots. */
export type FactualFlags = PrivacyFlags;

function factualRow(label: string, a: FactualAggregate): string {
  return `${label.padEnd(26)} ${String(a.cells).padStart(5)}  ${a.accuracy.toFixed(3)}  ${a.precision.toFixed(3)}  ${a.completeness.toFixed(3)}  ${f3(a.strictPrecision)}  ${f3(a.claimRecall)}  ${a.hallucinationRate.toFixed(3)}  ${a.probesPerQuery.toFixed(2).padStart(6)}  ${a.disclosurePerQuery.toFixed(2).padStart(6)}`;
}

/** The ticks the factual benchmark's town runs: the warm-up, then one a query (query i sees warm-up + i). */
export const factualTownTicks = (warmup: number, file: string): number => warmup + loadFactualBenchmark(file).length - 1;

export async function cmdFactual(flags: FactualFlags): Promise<number> {
  const conditions = flags.condition.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (conditions.length === 0) throw new UsageError("--condition: name at least one condition");
  if (flags.out !== undefined) checkOutDir(flags.out, `--out ${flags.out}`, "the episode logs and results");
  if (flags.warmup !== undefined) checkTownWarmupFits(factualTownTicks(flags.warmup, flags.file), `--warmup ${flags.warmup}`, flags.out ?? "runs/eval");
  const result = await runFactualEval({
    file: flags.file, conditions, seeds: parseSeeds(flags.seeds),
    ...(flags.out === undefined ? {} : { out: flags.out }),
    ...(flags.maxSteps === undefined ? {} : { maxSteps: flags.maxSteps }),
    ...(flags.warmup === undefined ? {} : { warmup: flags.warmup }),
    ...(flags.fresh === true ? { fresh: true } : {}),
    progress: cellProgress("eval factual", flags),
    onResumeNote: resumeNote("eval"),
    warn: (m) => void process.stderr.write(`eval: warning: ${m}\n`),
    ...llmOption(flags),
    ...(flags.judge === undefined ? {} : { judge: flags.judge }),
  });
  if (flags.json) {
    const { rows: _rows, ...summary } = result;
    process.stdout.write(JSON.stringify({ ...summary, backend: result.llm === undefined ? "deterministic" : "llm" }, null, 2) + "\n");
  } else {
    const lines = [`factual grounding · ${result.file} · seeds ${result.seeds.join(",")} · warm-up ${result.warmup} ticks, query i on the town after ${result.warmup}+i ticks · GapRouted maxSteps ${result.maxSteps} · ${result.judge === "rule" ? "rule judge" : result.judge === "llm" ? "LLM judge (rule figures for reference)" : "rule and LLM judges"}`, ""];
    const head = `${"".padEnd(26)} ${"cells".padStart(5)}  accur  prec   compl  strictP recall  halluc  probes  disclo`;
    for (const c of result.conditions) {
      lines.push(`${c.condition} (backend: ${c.backend}${c.overall.fallbacks > 0 ? `; ${c.overall.fallbacks} model call(s) fell back` : ""}) — ${c.description}`, head, factualRow("overall", c.overall));
      for (const [k, a] of Object.entries(c.perCategory)) lines.push(factualRow(`  ${k}`, a));
      for (const [k, a] of Object.entries(c.perSeed)) lines.push(factualRow(`  seed ${k}`, a));
      const j = c.overall.llm;
      if (j !== undefined) lines.push(`  LLM judge: accuracy ${f3(j.accuracy)} · strictP ${f3(j.strictPrecision)} · recall ${f3(j.claimRecall)} · halluc ${f3(j.hallucinationRate)} · ${j.scored} cells scored, ${j.failures} failed (no score)`);
      lines.push("");
    }
    const a = result.acceptance;
    if (a !== null) lines.push(`acceptance (GapRouted within 0.05 of Fixed-Probe at ≤ 25% of its probes): ${a.pass ? "PASS" : "FAIL"} — accuracy ${a.gapRoutedAccuracy.toFixed(3)} vs ${a.fixedProbeAccuracy.toFixed(3)} (Δ ${a.accuracyGap.toFixed(3)}), probes ${(100 * a.probeShare).toFixed(1)}%`);
    lines.push("accuracy = 0.7·precision + 0.3·completeness · strictP: precision over cells with a verifiable claim · recall: correct/claims · halluc: cells with a contradicted claim", ...fallbackNote(result.conditions.reduce((n, c) => n + c.overall.fallbacks, 0)), ...llmLine(result.llm), `cells run ${result.ran}, served from their logs ${result.reused} · results: ${result.results}`);
    process.stdout.write(lines.join("\n") + "\n");
  }
  return evalExit("eval factual", result.llm, result.rows);
}
