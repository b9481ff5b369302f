// `probetown eval enacttom`: the scripted agents on one split of the committed household pool,
// every task × agent × run an embedded episode with its log under --out, scored from the logs as
// written and printed in the shape of the paper's Table 2 (poolEval.ts).
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { PoolIndex } from "../../../actors/household/pool.ts";
import type { HouseholdCondition } from "../../../actors/household/world.ts";
import type { HouseholdTask } from "../../../actors/household/task.ts";
import { EXIT } from "../../cli/exitCodes.ts";
import { gatewayExit, oneRoleLlm, type LlmCliFlags } from "../../cli/llm.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { readInputFile, checkParsedInput } from "../../kernel/inputFile.ts";
import { runPoolAttempts, type AttemptResult } from "../poolEval.ts";
import { comparisonTable, enacttomComparison, enacttomSummary, enacttomTable, type EnacttomComparison, type EnacttomSummary } from "../table2.ts";
import { loadTaskFile } from "../taskFile.ts";
import { POOL_DIR } from "../writePoolMain.ts";

export interface EvalEnacttomFlags extends LlmCliFlags {
  readonly split: "standard" | "hard";
  /** standard (the default), baseline, or both: each agent in both modes, and the comparison. */
  readonly mode?: "standard" | "baseline" | "both";
  readonly agents: readonly HouseholdCondition[];
  readonly runs: number;
  readonly out: string;
  readonly pool: string;
  /** Only the first n tasks of each (scope, depth) cell. */
  readonly perCell?: number;
  readonly fresh?: boolean;
  readonly json?: boolean;
  readonly quiet?: boolean;
  /** The LLM agent: the turns of transcript its prompt carries (the config's `history`). */
  readonly history?: number;
}

export function splitTasks(pool: string, split: "standard" | "hard", perCell: number | undefined): HouseholdTask[] {
  const indexFile = join(pool, "index.json");
  if (!existsSync(indexFile)) throw new UsageError(`--pool ${pool}: no index.json (write the pool with node services/household/writePoolMain.ts)`);
  let index: PoolIndex;
  try {
    index = JSON.parse(readInputFile(indexFile, "dataset")) as PoolIndex;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${indexFile}: not a pool index (${error instanceof SyntaxError ? `not valid JSON: ${error.message}` : ((error as NodeJS.ErrnoException).code ?? String(error))})`);
  }
  checkParsedInput(index, indexFile);
  if (index === null || typeof index !== "object" || !Array.isArray(index.tasks) || !index.tasks.every((id) => typeof id === "string" && /^[\w.-]+$/.test(id))) {
    throw new UsageError(`${indexFile}: not a pool index (expected {"tasks": [task id, …]}, each id a file name in the pool)`);
  }
  const tasks = index.tasks.map((id) => loadTaskFile(join(pool, `${id}.json`))).filter((t) => (t.split ?? "standard") === split);
  if (perCell === undefined) return tasks;
  const seen = new Map<string, number>();
  return tasks.filter((t) => {
    const cell = `${t.category} ${t.tom_level}`;
    seen.set(cell, (seen.get(cell) ?? 0) + 1);
    return seen.get(cell)! <= perCell;
  });
}

export async function cmdEvalEnacttom(f: EvalEnacttomFlags): Promise<number> {
  const tasks = splitTasks(f.pool, f.split, f.perCell);
  if (tasks.length === 0) throw new UsageError(`--pool ${f.pool}: no ${f.split} tasks`);
  // The LLM agent's model and gateway (role agent); without an endpoint it cannot run.
  const llm = f.agents.includes("llm") ? oneRoleLlm(undefined, f, "eval enacttom", "agent") : null;
  if (f.agents.includes("llm") && llm === null) throw new UsageError(`--agents llm: the LLM agent needs a model: give --llm <url> (an OpenAI-compatible endpoint) or --llm local`);
  // Standard-mode logs go where they always did (<out>/<agent>); baseline-mode ones under <out>/baseline/<agent>.
  const mode = f.mode ?? "standard";
  const modes: ("standard" | "baseline")[] = mode === "both" ? ["standard", "baseline"] : [mode];
  const dirOf = (m: "standard" | "baseline") => (m === "standard" ? f.out : join(f.out, "baseline"));
  const taken = modes.flatMap((m) => f.agents.filter((a) => existsSync(join(dirOf(m), a))).map((a) => (m === "standard" ? a : `baseline/${a}`)));
  if (taken.length > 0) {
    if (!f.fresh) throw new UsageError(`--out ${f.out}: it already holds logs of ${taken.join(", ")}; choose another --out, or give --fresh to replace them`);
    for (const a of taken) rmSync(join(f.out, a), { recursive: true, force: true });
  }
  const total = tasks.length * f.agents.length * f.runs * modes.length;
  const started = performance.now();
  let shown = 0;
  // A line every tenth of the way, on stderr: 450 episodes take seconds to tens of seconds.
  let before = 0;
  const onAttempt = (doneInMode: number) => {
    const done = before + doneInMode;
    if (f.quiet || (done < total && done < shown + Math.ceil(total / 10))) return;
    shown = done;
    process.stderr.write(`eval enacttom: ${done}/${total} episodes (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  };
  const summaries: EnacttomSummary[] = [];
  const results: AttemptResult[] = [];
  for (const m of modes) {
    // A snapshot every 10 turns: the logs are complete either way (evalPoolMain.ts says why).
    const mine = await runPoolAttempts({ tasks, policies: f.agents, attempts: f.runs, dir: dirOf(m), mode: m, snapshotEvery: 10, onAttempt, ...(llm === null ? {} : { llm: { model: llm.model, responder: llm.gateway.responder, ...(f.history === undefined ? {} : { history: f.history }) } }) });
    before += mine.length;
    results.push(...mine);
    summaries.push(enacttomSummary({ split: f.split, mode: m, runs: f.runs, out: dirOf(m), results: mine }));
  }
  const [first, second] = summaries as [EnacttomSummary, EnacttomSummary | undefined];
  const report = second === undefined ? first : enacttomComparison(first, second);
  if (f.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(`${second === undefined ? enacttomTable(first) : comparisonTable(report as EnacttomComparison)}\n`);
  if (!f.quiet) process.stderr.write(`eval enacttom: ${total} episodes in ${((performance.now() - started) / 1000).toFixed(1)} s; logs under ${modes.map((m) => `${dirOf(m)}/<agent>/<task>/a<run>`).join(" and ")}\n`);
  if (llm !== null) {
    const turns = results.flatMap((r) => (r.llmTurns === undefined ? [] : [r.llmTurns]));
    const decisions = turns.reduce((n, t) => n + t.decisions, 0);
    const fallbacks = turns.reduce((n, t) => n + t.fallbacks, 0);
    const probes = results.flatMap((r) => (r.llmProbes === undefined ? [] : [r.llmProbes]));
    const probeCalls = probes.reduce((n, p) => n + p.calls, 0);
    const probeAnswers = probes.reduce((n, p) => n + p.answers, 0);
    const probeFallbacks = probes.reduce((n, p) => n + p.fallbacks, 0);
    const t = llm.gateway.accounting().total;
    if (!f.quiet) process.stderr.write(`eval enacttom: llm agent (${llm.model}): ${t.calls} model calls (${probeCalls} for the literal probes), ${t.failed} failed; ${fallbacks} of ${decisions} turns fell back to the competent policy; ${probeFallbacks} of ${probeAnswers} probe answers fell back to the knowledge base\n`);
    const exit = gatewayExit("eval enacttom", llm.gateway);
    if (exit !== 0) return exit;
  }
  return EXIT.ok;
}
