// `run`'s and `fork`'s summary of an EnvProbe episode, from its log: outcome, A_H and probes; a
// fork's covers its whole trajectory, its parent's steps included.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { LogRecord } from "../../events/record.ts";
import { scanLog } from "../../infra/fileEventStore.ts";
import type { ParentLogs } from "../kernel/worldModule.ts";
import { EpisodeAccumulator } from "./metrics.ts";
/** An episode's records with its ancestors' before each fork point, and who chose its steps. */
interface Lineage {
  readonly records: readonly LogRecord[];
  /** The policies of the episode's ancestors (the root first), one an ancestor; empty for a run. */
  readonly before: readonly string[];
  /** The fork this episode starts with (null for a run): its records after `atSeq` are its own. */
  readonly fork: { readonly atSeq: number; readonly atTick: number; readonly condition: string } | null;
}


const parentFiles: ParentLogs = (parentLog, childDir) => {
  const log = resolve(childDir, parentLog);
  if (!existsSync(log)) return null;
  // The parent's own parentLog is relative to its episode directory, the one holding its log/.
  return { dir: dirname(log), records: scanLog(log, { validate: false }).records };
};

/**
 * A fork's whole trajectory for its metrics: its parent's (whole, for a fork of a fork) records up
 * to the fork point (the header relabelled with the fork's condition) and then the fork's own.
 * Null when a parent log is gone. A run's log is returned as it is.
 */
function lineageOf(dir: string, records: readonly LogRecord[], parents: ParentLogs): Lineage | null {
  const head = records[0];
  if (head?.type !== "episode.forked") return { records, before: [], fork: null };
  const fork = head.payload as { parentLog: string; atSeq: number; atTick: number; condition: string; parentCondition: string };
  const parentLog = parents(fork.parentLog, dir);
  if (parentLog === null) return null;
  const parent = lineageOf(parentLog.dir, parentLog.records, parents);
  if (parent === null) return null;
  const prefix = parent.records.filter((r) => r.seq <= fork.atSeq);
  const relabelled = prefix.map((r) => (r.type === "episode.started" ? { ...r, payload: { ...(r.payload as object), condition: fork.condition } } : r));
  const before = parent.before.at(-1) === fork.parentCondition ? parent.before : [...parent.before, fork.parentCondition];
  return { records: [...relabelled, ...records.slice(1)], before, fork: { atSeq: fork.atSeq, atTick: fork.atTick, condition: fork.condition } };
}

/**
 * `run`'s and `fork`'s summary of an envprobe log (null for other worlds). A fork's metrics cover
 * the whole trajectory, its parent's steps included, so the summary says which probes (and which
 * outcome) came before the fork, from the parent's policy, and which the child's policy spent.
 */
export function envprobeLogSummary(dir: string, records: readonly LogRecord[], parents: ParentLogs = parentFiles): string | null {
  const lineage = lineageOf(dir, records, parents);
  if (lineage === null) return "(the parent log of this fork is not where its header says: no EnvProbe summary)";
  return envprobeSummary(lineage.records, lineage.fork === null ? undefined : { atSeq: lineage.fork.atSeq, atTick: lineage.fork.atTick, before: lineage.before });
}

/** A run's summary for an envprobe log (null for other worlds): outcome, A_H, probes; for a fork, split at the fork point. */
export function envprobeSummary(
  records: ReadonlyArray<{ readonly type: string; readonly payload: unknown; readonly seq?: number }>,
  fork?: { readonly atSeq: number; readonly atTick: number; readonly before: readonly string[] },
): string | null {
  if (!records.some((r) => r.type === "envprobe.scored")) return null;
  const acc = new EpisodeAccumulator();
  for (const r of records) acc.add(r.type, r.payload);
  const m = acc.result();
  const pct = (x: number | null) => (x === null ? "—" : `${(100 * x).toFixed(1)}%`);
  const backends = new Map<string, number>();
  for (const r of records) {
    const b = r.type === "envprobe.believed" ? (r.payload as { backend?: string }).backend : undefined;
    if (b !== undefined) backends.set(b, (backends.get(b) ?? 0) + 1);
  }
  const outcome = m.success ? `task solved at step ${m.steps}` : `task not solved in ${m.steps} steps`;
  let solvedBefore = "";
  let probes = `probes ${m.probes} of ${m.budget}, ${m.useful} useful`;
  let policy = `policy ${m.policy}`;
  if (fork !== undefined) {
    const parents = fork.before.length === 1 ? `parent's policy ${fork.before[0]}` : `parent's policies ${fork.before.join(", then ")}`;
    const stepped = records.filter((r) => r.type === "envprobe.stepped" && (r.seq ?? 0) <= fork.atSeq).map((r) => r.payload as { kind: string; useful: boolean; success: boolean });
    const probed = stepped.filter((p) => p.kind === "probe");
    const usefulBefore = probed.filter((p) => p.useful).length;
    policy = `policy ${m.policy} after the fork at tick ${fork.atTick} (${fork.before.join(", then ")} before)`;
    if (stepped.some((p) => p.success)) solvedBefore = `, before the fork, by the ${parents}: the episode was over when ${m.policy} took over`;
    probes = `probes ${m.probes} of ${m.budget}: ${probed.length} before the fork (${parents}), ${m.probes - probed.length} by ${m.policy}; ${m.useful} useful (${usefulBefore} before the fork, ${m.useful - usefulBefore} by ${m.policy})`;
  }
  return [
    ...(backends.size === 0 ? [] : [`beliefs: ${[...backends].sort(([a], [b]) => (a < b ? -1 : 1)).map(([b, n]) => `${b} on ${n} step${n === 1 ? "" : "s"}`).join("; ")}`]),
    `${m.world} · regime ${m.regime} · ${policy}: ${outcome} (H = ${m.horizon})${solvedBefore}`,
    `A_H ${m.accuracy.toFixed(3)} (procedural ${m.procedural === null ? "—" : m.procedural.toFixed(3)}, spatial ${m.spatial === null ? "—" : m.spatial.toFixed(3)}) · ${probes} · ${m.mutations} exogenous changes`,
    `collapse onset τ_c ${m.collapse ?? "never"} · confident-wrong ${m.confidentWrong} of ${m.highConfidence} high-confidence belief-steps (${pct(m.highConfidence === 0 ? null : m.confidentWrong / m.highConfidence)}) and of ${m.wrongBeliefs} wrong ones (${pct(m.wrongBeliefs === 0 ? null : m.confidentWrong / m.wrongBeliefs)})`,
  ].join("\n");
}
