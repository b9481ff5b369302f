// EnvProbe model rows for docs/fidelity.md. An LLM agent's episode waits on one model call a step
// (a 270 M model on a CPU: tens of seconds each), so `npm run fidelity` does not rerun it:
// `npm run fidelity:envprobe-model-record` turns one `sweep envprobe --llm … --log <dir>` into a
// record under data/envprobe/model-runs/ (its grid from the sweep's own spec in the log folder, the
// metrics and the model calls read from the logs), and the fidelity section renders each record
// beside the scripted agent's figures for the same cell — the same worlds, regime, policies, seeds
// and config, run deterministically when the section is generated — every model figure marked [model].
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readLog } from "../../infra/fileEventStore.ts";
import { UsageError } from "../kernel/usageError.ts";
import { cellsOf, metricsOfLog, type CellMetrics, type EpisodeMetrics } from "./metrics.ts";
import { MARKER, runSweep, sweepSpecOf } from "./sweep.ts";
import { logDirsUnder } from "../kernel/logDirs.ts";

export const ENVPROBE_MODEL_RUNS = join(import.meta.dirname, "..", "..", "data", "envprobe", "model-runs");

/** One cell's figures (world × regime × policy over the record's seeds). */
export interface EnvprobeModelCell {
  readonly world: string;
  readonly regime: string;
  readonly policy: string;
  readonly n: number;
  /** Terminal exact per-field accuracy A_H, mean over episodes. */
  readonly accuracy: number;
  readonly success: number;
  readonly probes: number;
  /** Useful probes per episode (mean). */
  readonly useful: number;
  /** Beliefs reported with confidence ≥ 0.7 (summed over steps and episodes), and how many were wrong. */
  readonly highConfidence: number;
  readonly confidentWrong: number;
  /** Steps whose beliefs the model wrote, and steps that fell back to the scripted update. */
  readonly beliefSteps: { readonly model: number; readonly fallback: number };
}

/** The model calls the logs hold, per role (`belief`: the agent; `judge`: the envprobe-judge critic). */
export interface EnvprobeLlmCounts {
  readonly requested: number;
  readonly validFirst: number;
  readonly repaired: number;
  readonly failed: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly byRole: Readonly<Record<string, { readonly requested: number; readonly validFirst: number; readonly repaired: number; readonly failed: number }>>;
}

export interface EnvprobeModelRunRecord {
  readonly label: string;
  readonly model: string;
  /** Parameters, variant and quantisation. */
  readonly size: string;
  readonly measured: string;
  readonly command: string;
  readonly commit?: string;
  readonly load?: string;
  /** The sweep's grid, from the spec it left in its --log (the config without its `llm` part). */
  readonly worlds: readonly string[];
  readonly regimes: readonly string[];
  readonly policies: readonly string[];
  readonly seeds: readonly number[];
  readonly config: Readonly<Record<string, unknown>>;
  /** The roles' models (the config's `llm`). */
  readonly roles: Readonly<Record<string, unknown>>;
  readonly cells: readonly EnvprobeModelCell[];
  readonly llm: EnvprobeLlmCounts;
  readonly notes: readonly string[];
}


const cellKey = (c: { world: string; regime: string; policy: string }): string => `${c.world}|${c.regime}|${c.policy}`;

/** A record from a `sweep envprobe --llm … --log <log>` folder. */
export function envprobeModelRunRecord(log: string, meta: { label: string; model: string; size: string; measured: string; command: string; commit?: string; load?: string; notes: readonly string[] }): EnvprobeModelRunRecord {
  if (!existsSync(join(log, MARKER))) throw new UsageError(`--log: ${log} holds no ${MARKER} (the --log folder of a sweep envprobe run)`);
  const spec = JSON.parse(readFileSync(join(log, MARKER), "utf8")) as { worlds: string[]; regimes: string[]; policies: string[]; seeds: number[]; config?: Record<string, unknown> };
  const { llm: roles, ...config } = spec.config ?? {};
  const dirs = logDirsUnder(log);
  if (dirs.length === 0) throw new UsageError(`--log: ${log} holds no episode logs (expected <world>-<regime>/<policy>/s<seed>/log)`);
  const episodes: EpisodeMetrics[] = [];
  const steps = new Map<string, { model: number; fallback: number }>();
  const roleOf = new Map<string, string>();
  const byRole: Record<string, { requested: number; validFirst: number; repaired: number; failed: number }> = {};
  const role = (r: string) => (byRole[r] ??= { requested: 0, validFirst: 0, repaired: 0, failed: 0 });
  let promptTokens = 0;
  let completionTokens = 0;
  for (const dir of dirs) {
    const m = metricsOfLog(dirname(dir));
    episodes.push(m);
    const s = steps.get(cellKey(m)) ?? steps.set(cellKey(m), { model: 0, fallback: 0 }).get(cellKey(m))!;
    for (const r of readLog(dir)) {
      const p = r.payload as { role?: string; requestHash?: string; repaired?: boolean; backend?: string; usage?: { promptTokens: number; completionTokens: number } };
      if (r.type === "llm.requested") {
        roleOf.set(p.requestHash!, p.role!);
        role(p.role!).requested++;
      } else if (r.type === "llm.completed" || r.type === "llm.failed") {
        const c = role(roleOf.get(p.requestHash!) ?? "unknown");
        if (r.type === "llm.failed") c.failed++;
        else if (p.repaired === true) c.repaired++;
        else c.validFirst++;
        promptTokens += p.usage?.promptTokens ?? 0;
        completionTokens += p.usage?.completionTokens ?? 0;
      } else if (r.type === "envprobe.believed" && typeof p.backend === "string") {
        if (p.backend.startsWith("llm:")) s.model++;
        else if (p.backend.startsWith("scripted (fallback")) s.fallback++;
      }
    }
  }
  const sum = (k: "requested" | "validFirst" | "repaired" | "failed") => Object.values(byRole).reduce((a, c) => a + c[k], 0);
  return {
    ...meta,
    worlds: spec.worlds,
    regimes: spec.regimes,
    policies: spec.policies,
    seeds: spec.seeds,
    config,
    roles: (roles ?? {}) as Record<string, unknown>,
    cells: cellsOf(episodes).map((c) => modelCell(c, episodes, steps.get(cellKey(c)) ?? { model: 0, fallback: 0 })),
    llm: { requested: sum("requested"), validFirst: sum("validFirst"), repaired: sum("repaired"), failed: sum("failed"), promptTokens, completionTokens, byRole },
  };
}

function modelCell(c: CellMetrics, episodes: readonly EpisodeMetrics[], beliefSteps: { model: number; fallback: number }): EnvprobeModelCell {
  const es = episodes.filter((e) => cellKey(e) === cellKey(c));
  return {
    world: c.world,
    regime: c.regime,
    policy: c.policy,
    n: c.n,
    accuracy: c.accuracy,
    success: c.success,
    probes: c.probes,
    useful: es.reduce((s, e) => s + e.useful, 0) / Math.max(1, es.length),
    highConfidence: c.pcw.confident,
    confidentWrong: c.pcw.wrong,
    beliefSteps,
  };
}

export function readEnvprobeModelRuns(dir = ENVPROBE_MODEL_RUNS): EnvprobeModelRunRecord[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.endsWith(".json")).sort().map((n) => JSON.parse(readFileSync(join(dir, n), "utf8")) as EnvprobeModelRunRecord);
}

/** The deterministic counterpart of a model policy: the LLM Judge's is its deterministic stand-in. */
const deterministicPolicy = (policy: string): string => (policy === "envprobe-judge" ? "envprobe-judge-standin" : policy);

/** The scripted agent's figures for a record's cells: the same grid and config, no model. */
export async function deterministicCells(r: EnvprobeModelRunRecord): Promise<EnvprobeModelCell[]> {
  const policies = [...new Set(r.policies.map(deterministicPolicy))];
  const spec = sweepSpecOf({ worlds: r.worlds.join(","), regimes: r.regimes.join(","), policies: policies.join(","), seeds: r.seeds.join(","), config: r.config, workers: 1 });
  const { episodes } = await runSweep(spec);
  return cellsOf(episodes).map((c) => modelCell(c, episodes, { model: 0, fallback: 0 }));
}

const f3 = (x: number): string => x.toFixed(3);
const f2 = (x: number): string => x.toFixed(2);
const pct = (x: number): string => `${Math.round(100 * x)}%`;

/** The EnvProbe model rows, each beside the scripted agent's figures for the same cell (`deterministic(record)`). */
export async function envprobeModelRunsSection(records: readonly EnvprobeModelRunRecord[], deterministic: (r: EnvprobeModelRunRecord) => Promise<readonly EnvprobeModelCell[]> = deterministicCells): Promise<string[]> {
  if (records.length === 0) return [];
  const out = [
    "### Model runs (LLM agent) [model]",
    "",
    "Recorded, not rerun by `npm run fidelity` (a CPU model takes tens of seconds a step): each **[model]** row is an LLM-agent cell — the roles the record names (`belief`: the agent's belief updates; `judge`: the envprobe-judge critic) on the named model, the rest of the agent scripted — beside the **deterministic** scripted agent on the same worlds, regime, policies, seeds and config, run when this page is generated (for `envprobe-judge`, its deterministic stand-in). `npm run fidelity:envprobe-model-record` writes a record from a sweep's `--log` folder; metrics and call counts are read from the logs. A handful of seeds says nothing about the paper's findings: these rows show what the model does in the loop, not an effect size.",
    "",
  ];
  for (const r of records) {
    const l = r.llm;
    const cfg = Object.keys(r.config).length === 0 ? "paper defaults" : `config ${JSON.stringify(r.config)}`;
    const roles = Object.entries(r.roles).map(([k, v]) => `${k}=${String(v)}`).join(", ");
    const facts = [`model \`${r.model}\` (${r.size})`, `roles ${roles || "—"}`, `seed${r.seeds.length === 1 ? "" : "s"} ${r.seeds.join(", ")}`, cfg, r.commit === undefined ? null : `commit ${r.commit}`, `measured ${r.measured}`, r.load === undefined ? null : `load ${r.load}`].filter((x) => x !== null);
    const perRole = Object.entries(l.byRole).map(([k, c]) => `${k}: ${c.requested} requested, ${c.validFirst} valid at once, ${c.repaired} after repair, ${c.failed} failed`).join("; ");
    out.push(`**[model] ${r.label}** — ${facts.join(", ")}: \`${r.command}\`. Model calls: ${l.requested} requested, ${l.validFirst} valid at once, ${l.repaired} valid after repair, ${l.failed} failed (fell back) — ${perRole}; ${l.promptTokens.toLocaleString("en-US")} prompt + ${l.completionTokens.toLocaleString("en-US")} completion tokens.`, "");
    const det = await deterministic(r);
    out.push(
      "| world | regime | policy | n | [model] A_H | [model] success | [model] probes | [model] useful probes | [model] belief steps: model / fallback | [model] conf ≥ 0.7 wrong | deterministic A_H | deterministic success | deterministic probes | deterministic useful probes | deterministic conf ≥ 0.7 wrong |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const c of r.cells) {
      const d = det.find((x) => x.world === c.world && x.regime === c.regime && x.policy === deterministicPolicy(c.policy));
      const dCols = d === undefined ? ["—", "—", "—", "—", "—"] : [f3(d.accuracy), pct(d.success), f2(d.probes), f2(d.useful), `${d.confidentWrong} of ${d.highConfidence}`];
      out.push(`| ${c.world} | ${c.regime} | ${c.policy}${d !== undefined && d.policy !== c.policy ? ` (deterministic: ${d.policy})` : ""} | ${c.n} | ${f3(c.accuracy)} | ${pct(c.success)} | ${f2(c.probes)} | ${f2(c.useful)} | ${c.beliefSteps.model} / ${c.beliefSteps.fallback} | ${c.confidentWrong} of ${c.highConfidence} | ${dCols.join(" | ")} |`);
    }
    out.push("", ...r.notes.map((n) => `- ${n}`), "");
  }
  return out;
}
