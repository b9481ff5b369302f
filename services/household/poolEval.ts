// Evaluating agents on the household task pool (issue 23; digest §5.2, §7): every task × policy ×
// attempt run as an embedded episode with its log written, then summarised the way the paper's
// Table 2 is — Avg ± binomial SE, Pass@k and the exact Pass^k (passk.ts) for k = 1…attempts —
// overall and by split, scope (cooperative/mixed), K-depth, scope × depth, split × scope and
// split × depth.
// An attempt whose episode fails to run counts as a failure (digest §8.7: missing attempts fail).
import { join } from "node:path";
import type { HouseholdCondition, HouseholdMode } from "../../actors/household/world.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";
import type { HouseholdTask } from "../../actors/household/task.ts";
import type { LogRecord } from "../../events/record.ts";
import { readLog } from "../../infra/fileEventStore.ts";
import { runEpisode } from "../kernel/episodes.ts";
import { functionalFailures, literalFailures, type FunctionalFailure, type LiteralFailure } from "./failures.ts";
import { householdMetrics, llmProbesOf, type LlmProbeCounts } from "./metrics.ts";
import { averageWithSe, meanOverTasks, passAtK, passPowerK } from "./passk.ts";

export interface AttemptResult {
  readonly taskId: string;
  readonly split: "standard" | "hard";
  readonly category: "cooperative" | "mixed";
  readonly depth: number;
  readonly policy: HouseholdCondition;
  readonly attempt: number;
  readonly success: boolean;
  readonly percentComplete: number;
  readonly finalSuccess: boolean;
  readonly turns: number;
  readonly messages: number;
  /** The literal probes: passed roots over roots, and whether every root passed (a missing score: 0). */
  readonly literalScore: number;
  readonly literalPass: boolean;
  /** The failure taxonomy's tags, as the log shows them (failures.ts). */
  readonly failures?: { readonly functional: readonly FunctionalFailure[]; readonly literal: readonly LiteralFailure[] };
  /** The LLM agent's decisions and fallbacks in this attempt. */
  readonly llmTurns?: { readonly decisions: number; readonly fallbacks: number };
  /** The LLM agent's literal probes in this attempt: its probe calls, the probes answered, and how many fell back to the knowledge base. */
  readonly llmProbes?: LlmProbeCounts;
}


/** The LLM agent's turns: how many decisions, and how many fell back to the scripted policy (their `why` says so). */
function llmTurnsOf(records: readonly LogRecord[]): { readonly decisions: number; readonly fallbacks: number } {
  const whys = records.filter((r) => r.type === "household.decided").map((r) => (r.payload as { why: string }).why);
  return { decisions: whys.length, fallbacks: whys.filter((w) => w.startsWith("scripted (fallback")).length };
}

export interface PoolRunOptions {
  readonly tasks: readonly HouseholdTask[];
  readonly policies: readonly HouseholdCondition[];
  /** The LLM agent's model (role agent) and the gateway that answers it; `history`: the turns of transcript its prompt carries (the config's `history`). */
  readonly llm?: { readonly model: string; readonly responder: LlmResponder; readonly history?: number };
  readonly attempts: number;
  /** Where the logs go: <dir>/<policy>/<task>/a<attempt>. */
  readonly dir: string;
  readonly onAttempt?: (done: number, total: number) => void;
  /** Snapshot every n ticks (default: the kernel's, by the log's growth and the run's time); the log is written in full either way. */
  readonly snapshotEvery?: number;
  /** The run mode (digest §4.1): standard (the default; the config then names none, as before) or baseline (every secret revealed, every room seen, ReadAgentTrajectory). */
  readonly mode?: HouseholdMode;
}

export async function runPoolAttempts(o: PoolRunOptions): Promise<AttemptResult[]> {
  const out: AttemptResult[] = [];
  const total = o.tasks.length * o.policies.length * o.attempts;
  for (const policy of o.policies)
    for (const task of o.tasks)
      for (let attempt = 0; attempt < o.attempts; attempt++) {
        // Attempt a runs with seed a: the scripted agents draw nothing, so attempts repeat exactly.
        const llm = policy === "llm" && o.llm !== undefined ? o.llm : undefined;
        const run = await runEpisode({ world: "household", seed: attempt, condition: policy, config: { task, ...(o.mode === "baseline" ? { mode: "baseline" } : {}), ...(llm === undefined ? {} : { llm: { agent: llm.model }, ...(llm.history === undefined ? {} : { history: llm.history }) }) }, ...(llm === undefined ? {} : { llm: llm.responder }), dir: join(o.dir, policy, task.task_id, `a${attempt}`), trace: { exporter: "none" }, fsync: "never", ...(o.snapshotEvery === undefined ? {} : { snapshotEvery: o.snapshotEvery }) });
        // Scored from the log as written, as a later reader would.
        const records = readLog(run.logDir);
        const m = householdMetrics(records);
        out.push({ taskId: task.task_id, split: task.split ?? "standard", category: task.category, depth: task.tom_level ?? 0, policy, attempt, success: m.success === 1, percentComplete: m.percentComplete!, finalSuccess: m.finalSuccess === 1, turns: m.turns!, messages: m.messages!, literalScore: m.literalScore ?? 0, literalPass: m.literalPass === 1, failures: { functional: functionalFailures(records), literal: literalFailures(records) }, ...(policy === "llm" ? { llmTurns: llmTurnsOf(records), llmProbes: llmProbesOf(records) } : {}) });
        o.onAttempt?.(out.length, total);
      }
  return out;
}

export interface PoolGroup {
  readonly split?: "standard" | "hard";
  readonly scope?: "cooperative" | "mixed";
  readonly depth?: number;
}

export interface PoolRow {
  readonly policy: HouseholdCondition;
  readonly group: PoolGroup;
  readonly tasks: number;
  readonly attempts: number;
  /** Avg ± binomial SE over all attempts. */
  readonly avg: number;
  readonly se: number;
  /** Index k − 1: Pass@k and exact Pass^k, averaged over tasks. */
  readonly passAt: readonly number[];
  readonly passPower: readonly number[];
  readonly percentComplete: number;
  /** Literal probes: the mean per-episode score, and Avg ± SE and exact Pass^k of "every root passed". */
  readonly literal: { readonly score: number; readonly avg: number; readonly se: number; readonly passPower: readonly number[] };
}

const GROUPS: readonly PoolGroup[] = [
  {},
  { split: "standard" }, { split: "hard" },
  { scope: "cooperative" }, { scope: "mixed" },
  { depth: 1 }, { depth: 2 }, { depth: 3 },
  // Scope × depth: whether a gap that grows with depth holds in each scope, not only on average.
  ...(["cooperative", "mixed"] as const).flatMap((scope) => [1, 2, 3].map((depth) => ({ scope, depth }))),
  ...(["standard", "hard"] as const).flatMap((split) => [...(["cooperative", "mixed"] as const).map((scope) => ({ split, scope })), ...[1, 2, 3].map((depth) => ({ split, depth }))]),
];

export const groupLabel = (g: PoolGroup): string => [g.split, g.scope, g.depth === undefined ? undefined : `d${g.depth}`].filter((x) => x !== undefined).join(" ") || "all";

export function summarisePool(results: readonly AttemptResult[], attempts: number): PoolRow[] {
  const policies = [...new Set(results.map((r) => r.policy))];
  const rows: PoolRow[] = [];
  for (const policy of policies)
    for (const group of GROUPS) {
      const mine = results.filter((r) => r.policy === policy && (group.split === undefined || r.split === group.split) && (group.scope === undefined || r.category === group.scope) && (group.depth === undefined || r.depth === group.depth));
      const byTask = new Map<string, AttemptResult[]>();
      for (const r of mine) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
      // Each task's outcomes over `attempts`; a missing attempt is a failure.
      const outcomes = [...byTask.values()].map((rs) => Array.from({ length: attempts }, (_, a) => rs.some((r) => r.attempt === a && r.success)));
      const literalOutcomes = [...byTask.values()].map((rs) => Array.from({ length: attempts }, (_, a) => rs.some((r) => r.attempt === a && r.literalPass)));
      if (outcomes.length === 0) continue;
      const { mean, se } = averageWithSe(outcomes);
      const ks = Array.from({ length: attempts }, (_, i) => i + 1);
      rows.push({
        policy, group, tasks: outcomes.length, attempts: outcomes.length * attempts, avg: mean, se,
        passAt: ks.map((k) => meanOverTasks(outcomes, k, passAtK)),
        passPower: ks.map((k) => meanOverTasks(outcomes, k, passPowerK)),
        percentComplete: mine.reduce((s, r) => s + r.percentComplete, 0) / mine.length,
        literal: { score: mine.reduce((s, r) => s + r.literalScore, 0) / mine.length, avg: averageWithSe(literalOutcomes).mean, se: averageWithSe(literalOutcomes).se, passPower: ks.map((k) => meanOverTasks(literalOutcomes, k, passPowerK)) },
      });
    }
  return rows;
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The summary as a table: one row per policy and group, Avg ± SE, Pass@k and Pass^k in percent. */
export function poolTable(rows: readonly PoolRow[]): string {
  const k = rows[0]?.passAt.length ?? 0;
  const head = ["policy", "group", "tasks", "avg ± se", ...Array.from({ length: k }, (_, i) => `pass@${i + 1}`), ...Array.from({ length: k }, (_, i) => `pass^${i + 1}`), "% complete"];
  const body = rows.map((r) => [r.policy, groupLabel(r.group), String(r.tasks), `${pct(r.avg)} ± ${pct(r.se)}`, ...r.passAt.map(pct), ...r.passPower.map(pct), pct(r.percentComplete)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  return [head, ...body].map((cells) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}
