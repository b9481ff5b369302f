// The EnvProbe paired report (paper Tables 1, 2, 5, 6, 7, Fig. 4/5), regenerated from episode
// logs (or a sweep's metrics file) without rerunning anything: paired bootstrap CIs on A_H
// differences (10,000 seeded resamples per comparison, pairs = (world, seed)), McNemar on task
// success, Bonferroni over the family's comparisons that ran (the paper's family has 6), the
// procedural Pareto frontier (task success
// against A_H) as SVG, the confident-wrong audit (p_cw with Wilson intervals), collapse and drift.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { Schema } from "effect";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { LogCorrupted } from "../../events/errors.ts";
import { runOnPool } from "../../infra/pool.ts";
import { UsageError } from "../kernel/replay.ts";
import { readInputFile } from "../kernel/inputFile.ts";
import { episodeDirsUnder } from "../kernel/verifyTree.ts";
import { bonferroni, mcnemar, pairedBootstrap, wilson } from "../analysis/stats.ts";
import { paretoChart } from "../analysis/reportCharts.ts";
import { KINDS, type Kind } from "../../actors/envprobe/kinds/index.ts";
import { POLICY_NAMES, REGIMES, type Policy } from "../../actors/envprobe/config.ts";
import { cellsOf, EpisodeMetricsSchema, metricsOfLog, type CellMetrics, type EpisodeMetrics } from "./metrics.ts";
import { seedsLabel, sweepKeyOf } from "./sweep.ts";
import type { LoadResult } from "./loadWorker.ts";

/**
 * Every episode's metrics under a sweep's --log directory, read from the logs on every core, or
 * from a `sweep envprobe --out` metrics file.
 */
export async function loadEpisodes(path: string, workers = availableParallelism()): Promise<EpisodeMetrics[]> {
  if (!existsSync(path)) throw new UsageError(`${path}: no such file or directory`);
  if (statSync(path).isFile()) {
    let data: { episodeMetrics?: unknown };
    try {
      data = JSON.parse(readInputFile(path, "results")) as typeof data;
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`${path}: not a sweep metrics file (not valid JSON: ${(error as Error).message.split("\n")[0]})`);
    }
    if (data === null || typeof data !== "object" || !Array.isArray(data.episodeMetrics)) throw new UsageError(`${path}: not a sweep metrics file (no episodeMetrics; write one with \`sweep envprobe … --out\`)`);
    if (data.episodeMetrics.length === 0) throw new UsageError(`${path}: episodeMetrics is empty: no episodes to report on`);
    const episodes = data.episodeMetrics.map((entry, i) => {
      try {
        return decodeMetrics(entry) as EpisodeMetrics;
      } catch (error) {
        throw new UsageError(`${path}: episodeMetrics[${i}] is not an episode's metrics: ${String((error as Error).message).replace(/\s+/g, " ")}`);
      }
    });
    refuseDuplicates(episodes, (i) => `${path} episodeMetrics[${i}]`);
    return episodes;
  }
  const dirs = episodeDirsUnder(path);
  if (dirs.length === 0) throw new UsageError(`${path}: no episode logs found (expected <world>-<regime>/<policy>/s<seed>/log)`);
  const n = Math.max(1, Math.min(workers, Math.ceil(dirs.length / 500)));
  // A log that is not an EnvProbe episode's (another world, no scored step) is bad input, not damage.
  const asInputError = (error: unknown): Error => (error instanceof LogCorrupted || !(error instanceof Error) ? (error as Error) : new UsageError(error.message));
  let episodes: EpisodeMetrics[];
  let where: string[];
  if (n === 1) {
    try {
      episodes = dirs.map((d) => metricsOfLog(d));
      where = dirs;
    } catch (error) {
      throw asInputError(error);
    }
  } else {
    const shares = Array.from({ length: n }, (_, i) => dirs.filter((_, j) => j % n === i));
    const parts = await runOnPool<string[], LoadResult>(new URL("./loadWorker.ts", import.meta.url), shares, {
      threads: n,
      onResult: (m) => {
        if (m.metrics === undefined) throw m.damaged ? new LogCorrupted({ ...m.damaged, seq: null }) : new UsageError(m.message);
      },
    });
    episodes = parts.flatMap((m) => m.metrics ?? []);
    where = shares.flat();
  }
  refuseDuplicates(episodes, (i) => where[i]!);
  return episodes;
}

const decodeMetrics = Schema.decodeUnknownSync(EpisodeMetricsSchema, { onExcessProperty: "error" });

/**
 * Each (world, regime, policy, seed) may be counted once: two copies (a backup or a second sweep
 * under the folder given, an entry repeated in a metrics file) would weigh that seed twice in a
 * cell while the pairs keep one of them. Refused, naming both.
 */
function refuseDuplicates(episodes: readonly EpisodeMetrics[], where: (i: number) => string): void {
  const seen = new Map<string, number>();
  episodes.forEach((e, i) => {
    const key = sweepKeyOf(e);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new UsageError(`two episodes of ${e.world}-${e.regime} ${e.policy} seed ${e.seed}: ${where(first)} and ${where(i)}; a report counts each (world, regime, policy, seed) once: give it one sweep's --log directory or --out file`);
    }
    seen.set(key, i);
  });
}

const REGIME_ORDER = Object.keys(REGIMES);

export type Stratum = "procedural" | "spatial" | "all";
/** The worlds of each stratum: procedural (ToolDAG) and spatial (ObjectState, GraphNav). */
export const WORLDS: Record<Stratum, readonly string[]> = { procedural: ["tooldag"], spatial: ["objectstate", "graphnav"], all: ["objectstate", "tooldag", "graphnav"] };

export interface Comparison {
  readonly label: string;
  readonly method: string;
  readonly reference: string;
  readonly stratum: Stratum;
  readonly regime: string;
  readonly n: number;
  readonly a: number;
  readonly b: number;
  /** Δ in A_H, percentage points, with the paired-bootstrap CI and p */
  readonly deltaPp: number;
  readonly ciPp: readonly [number, number];
  readonly p: number;
  readonly pBonferroni: number | null;
  readonly successA: number;
  readonly successB: number;
  readonly mcnemarP: number;
  readonly discordant: readonly [number, number];
}

/**
 * The paper's Table 1 rows, plus No-Probe vs Self-Uncertainty (spatial): the 6-comparison Bonferroni
 * family. The paper gives its size (Table 4: 6) and shows five of its members; the sixth is ours.
 */
export const FAMILY: ReadonlyArray<readonly [string, string, Stratum]> = [
  ["envprobe-simple", "periodic", "procedural"],
  ["envprobe-simple", "periodic", "all"],
  ["envprobe-simple", "periodic", "spatial"],
  ["envprobe-cd", "envprobe-simple", "procedural"],
  ["envprobe-minus-u", "envprobe-simple", "procedural"],
  ["no-probe", "self-uncertainty", "spatial"],
];

/**
 * What Table 1's Bonferroni adjustment used in one regime: m, the family's comparisons these episodes
 * allow (p is multiplied by m, not by the paper's 6, when some did not run), and the ones missing.
 */
export interface FamilyUsed {
  readonly m: number;
  readonly paperM: number;
  readonly missing: ReadonlyArray<{ readonly label: string; readonly why: string }>;
}

/** Table 2: adjacent comparisons (reported with unadjusted p). */
export const ADJACENT: ReadonlyArray<readonly [string, string, Stratum]> = [
  ["no-probe", "self-uncertainty", "spatial"],
  ["self-uncertainty", "periodic", "spatial"],
  ["envprobe-simple", "periodic", "procedural"],
  ["envprobe-simple", "envprobe-judge", "spatial"],
  ["envprobe-judge", "oracle", "spatial"],
  ["envprobe-simple", "envprobe-judge-standin", "spatial"],
  ["envprobe-judge-standin", "oracle", "spatial"],
  ["envprobe-cd", "periodic", "procedural"],
];

const compared = new WeakMap<readonly EpisodeMetrics[], Map<string, Omit<Comparison, "pBonferroni"> | null>>();

/** A paired comparison (memoised: Tables 1 and 2 share rows, and each costs 10,000 resamples). */
function compare(episodes: readonly EpisodeMetrics[], regime: string, method: string, reference: string, stratum: Stratum, options: { iterations: number; seed: number }): Omit<Comparison, "pBonferroni"> | null {
  let memo = compared.get(episodes);
  if (memo === undefined) compared.set(episodes, (memo = new Map()));
  const key = `${regime}|${method}|${reference}|${stratum}|${options.iterations}|${options.seed}`;
  if (!memo.has(key)) memo.set(key, compareOnce(episodes, regime, method, reference, stratum, options));
  return memo.get(key)!;
}

/**
 * The episodes of two policies paired on (world, seed) within a stratum, in key order; `keep`
 * narrows both sides first (a regime, a defined metric). Null when no pair exists.
 */
export function pairedEpisodes(episodes: readonly EpisodeMetrics[], method: string, reference: string, stratum: Stratum, keep: (e: EpisodeMetrics) => boolean = () => true): { a: EpisodeMetrics[]; b: EpisodeMetrics[]; keys: string[] } | null {
  const pick = (policy: string) => new Map(episodes.filter((e) => e.policy === policy && WORLDS[stratum].includes(e.world) && keep(e)).map((e) => [`${e.world}|${e.seed}`, e]));
  const A = pick(method);
  const B = pick(reference);
  const keys = [...A.keys()].filter((k) => B.has(k)).sort();
  if (keys.length === 0) return null;
  return { a: keys.map((k) => A.get(k)!), b: keys.map((k) => B.get(k)!), keys };
}

function compareOnce(episodes: readonly EpisodeMetrics[], regime: string, method: string, reference: string, stratum: Stratum, options: { iterations: number; seed: number }): Omit<Comparison, "pBonferroni"> | null {
  const pairs = pairedEpisodes(episodes, method, reference, stratum, (e) => e.regime === regime);
  if (pairs === null) return null;
  const { a, b, keys } = pairs;
  const diffs = keys.map((_, i) => a[i]!.accuracy - b[i]!.accuracy);
  const boot = pairedBootstrap(diffs, { iterations: options.iterations, seed: options.seed, name: `${regime}/${stratum}/${method}-vs-${reference}` });
  const mc = mcnemar(a.map((e) => e.success), b.map((e) => e.success));
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    label: `${labelOf(method)} vs ${labelOf(reference)} (${stratum})`, method, reference, stratum, regime, n: keys.length,
    a: mean(a.map((e) => e.accuracy)), b: mean(b.map((e) => e.accuracy)),
    deltaPp: 100 * boot.estimate, ciPp: [100 * boot.ci[0], 100 * boot.ci[1]], p: boot.p,
    successA: mean(a.map((e) => (e.success ? 1 : 0))), successB: mean(b.map((e) => (e.success ? 1 : 0))),
    mcnemarP: mc.p, discordant: [mc.b, mc.c],
  };
}

/** A policy's name in a table: the Judge's deterministic stand-in says so wherever it appears. */
export const labelOf = (policy: string): string => (policy === "envprobe-judge-standin" ? "envprobe-judge-standin (deterministic stand-in, not the LLM Judge)" : policy === "envprobe-judge" ? "envprobe-judge (LLM)" : policy);

export interface Finding {
  /** The paper's qualitative claim this row checks. */
  readonly claim: string;
  readonly regime: string;
  readonly stratum: Stratum;
  /** The numbers behind the verdict, readable. */
  readonly evidence: string;
  readonly verdict: "reproduced" | "partly" | "not reproduced" | "not run";
  /** Why the verdict is what it is, when it is not a plain "reproduced". */
  readonly why: string | null;
}

type Compare = (method: string, reference: string, stratum: Stratum) => Omit<Comparison, "pBonferroni"> | null;

const deltaText = (c: Omit<Comparison, "pBonferroni">) => `Δ ${pp(c.deltaPp)} pp [${pp(c.ciPp[0])}, ${pp(c.ciPp[1])}]`;
const above = (c: Omit<Comparison, "pBonferroni">) => c.ciPp[0] > 0;
const below = (c: Omit<Comparison, "pBonferroni">) => c.ciPp[1] < 0;

/**
 * The paper's qualitative findings (§5), each checked on the episodes of one regime with the same
 * paired bootstrap as the tables: a finding holds when its CI excludes zero in the claimed
 * direction. Nothing here is tuned to pass: a tie or a reversal is reported as such.
 */
export function paperFindings(episodes: readonly EpisodeMetrics[], regime: string, cmp: Compare): Finding[] {
  const out: Finding[] = [];
  const none = (claim: string, stratum: Stratum, missing: string): Finding => ({ claim, regime, stratum, evidence: "—", verdict: "not run", why: `needs ${missing} in this regime` });

  const structural = "Structural (c+d) probing beats Periodic on procedural A_H";
  const cd = cmp("envprobe-cd", "periodic", "procedural");
  if (cd === null) out.push(none(structural, "procedural", "envprobe-cd and periodic on tooldag"));
  else {
    out.push({
      claim: structural, regime, stratum: "procedural",
      evidence: `A_H ${f3(cd.a)} vs ${f3(cd.b)}, ${deltaText(cd)}, n ${cd.n}`,
      verdict: above(cd) ? "reproduced" : "not reproduced",
      why: above(cd) ? null : below(cd) ? "Periodic is ahead" : "no difference the CI can tell from zero",
    });
  }

  const uncertainty = "The uncertainty-only policy suffers from confidently wrong beliefs";
  for (const stratum of ["procedural", "spatial"] as const) {
    const vsSimple = cmp("self-uncertainty", "envprobe-simple", stratum);
    const vsNone = cmp("self-uncertainty", "no-probe", stratum);
    if (vsSimple === null || vsNone === null) {
      out.push(none(uncertainty, stratum, "self-uncertainty, envprobe-simple and no-probe"));
      continue;
    }
    const su = episodes.filter((e) => e.regime === regime && e.policy === "self-uncertainty" && WORLDS[stratum].includes(e.world));
    const confident = su.reduce((sum, e) => sum + e.highConfidence, 0);
    const cwSum = su.reduce((sum, e) => sum + e.confidentWrong, 0);
    const wrongSum = su.reduce((sum, e) => sum + e.wrongBeliefs, 0);
    const pcw = `Pr(wrong | conf ≥ 0.7) ${confident === 0 ? "—" : (cwSum / confident).toFixed(3)}, Pr(conf ≥ 0.7 | wrong) ${wrongSum === 0 ? "—" : (cwSum / wrongSum).toFixed(3)}`;
    const probes = su.length === 0 ? 0 : su.reduce((sum, e) => sum + e.probes, 0) / su.length;
    const behind = below(vsSimple);
    const gains = above(vsNone);
    out.push({
      claim: uncertainty, regime, stratum,
      evidence: `Self-Uncertainty A_H ${f3(vsSimple.a)}: vs Simple ${deltaText(vsSimple)}; vs No-Probe ${deltaText(vsNone)}; ${probes.toFixed(2)} probes/episode; its p̂_cw ${pcw}`,
      verdict: behind && !gains ? "reproduced" : behind ? "partly" : "not reproduced",
      why: behind && !gains ? null : behind ? "it trails Simple, but its probes do improve on No-Probe (its gaps are beliefs it reports as uncertain)" : "it is not behind Simple here",
    });
  }

  const tradeOff = "More probing trades task success for A_H";
  for (const stratum of ["procedural", "spatial"] as const) {
    const c = cmp("periodic", "no-probe", stratum);
    if (c === null) {
      out.push(none(tradeOff, stratum, "periodic and no-probe"));
      continue;
    }
    const accuracyUp = above(c);
    const successDown = c.successA < c.successB && c.mcnemarP < 0.05;
    out.push({
      claim: tradeOff, regime, stratum,
      evidence: `Periodic vs No-Probe: A_H ${f3(c.a)} vs ${f3(c.b)}, ${deltaText(c)}; task success ${(100 * c.successA).toFixed(1)}% vs ${(100 * c.successB).toFixed(1)}% (McNemar p ${pv(c.mcnemarP)})`,
      verdict: accuracyUp && successDown ? "reproduced" : accuracyUp || successDown ? "partly" : "not reproduced",
      why: accuracyUp && successDown ? null : accuracyUp ? "A_H rises but task success does not fall significantly" : successDown ? "task success falls but A_H does not rise significantly" : "neither A_H rises nor task success falls significantly",
    });
  }
  return out;
}

export interface EnvprobeReport {
  readonly regimes: readonly string[];
  readonly episodes: number;
  readonly findings: readonly Finding[];
  readonly table1: Readonly<Record<string, readonly Comparison[]>>;
  /** Per regime: the m that Table 1's Bonferroni p-values were multiplied by, and the family's comparisons missing. */
  readonly family: Readonly<Record<string, FamilyUsed>>;
  readonly table2: Readonly<Record<string, readonly Comparison[]>>;
  readonly cells: readonly CellMetrics[];
  /** p_cw both ways, pooled: Pr(wrong | conf ≥ α) (`p`) and Proposition 5.5's Pr(conf ≥ α | wrong) (`pGivenWrong`). */
  readonly confidentWrong: {
    readonly confident: number;
    readonly wrong: number;
    readonly p: number;
    readonly ci: readonly [number, number];
    readonly wrongBeliefs: number;
    readonly pGivenWrong: number;
    readonly ciGivenWrong: readonly [number, number];
  };
  readonly files: readonly string[];
  /** (world, regime, seed) groups that lack a policy others have: those seeds drop out of that policy's pairs. */
  readonly unpaired: { readonly groups: number; readonly examples: readonly string[] };
}

/** Groups of the grid (world, regime, seed) missing some policy the grid has: their pairs are dropped. */
function unpairedGroups(episodes: readonly EpisodeMetrics[]): EnvprobeReport["unpaired"] {
  const policies = new Set(episodes.map((e) => e.policy));
  const groups = new Map<string, Set<string>>();
  for (const e of episodes) {
    const key = `${e.world}-${e.regime} s${e.seed}`;
    (groups.get(key) ?? groups.set(key, new Set()).get(key)!).add(e.policy);
  }
  const short = [...groups].filter(([, has]) => has.size < policies.size);
  return { groups: short.length, examples: short.slice(0, 3).map(([key, has]) => `${key} lacks ${[...policies].filter((p) => !has.has(p)).join(", ")}`) };
}

/** Why a comparison of the family could not be made in a regime: a policy that did not run there, or no seed both ran. */
function missingWhy(episodes: readonly EpisodeMetrics[], regime: string, method: string, reference: string, stratum: Stratum): string {
  const worlds = WORLDS[stratum];
  const absent = [method, reference].filter((policy) => !episodes.some((e) => e.regime === regime && e.policy === policy && worlds.includes(e.world)));
  if (absent.length > 0) return `${absent.join(" and ")} not run on ${worlds.join(" or ")}`;
  return "no seed both ran";
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(3));
const pp = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
const pv = (p: number | null) => (p === null || !Number.isFinite(p) ? "—" : p < 0.001 ? "< 0.001" : p.toFixed(3));

/** `m`: the Bonferroni family size the rows' adjusted p-values used (Table 1), or null for unadjusted rows. */
function comparisonTable(rows: readonly Comparison[], m: number | null): string[] {
  const adjusted = m !== null;
  const out = [
    `| comparison | n | A (method) | A (ref) | Δ̂ pp | 95% CI pp | p${adjusted ? ` | p (Bonferroni, m = ${m})` : ""} | TS method | TS ref | McNemar p (b/c) |`,
    `| --- | --- | --- | --- | --- | --- | ---${adjusted ? " | ---" : ""} | --- | --- | --- |`,
  ];
  for (const c of rows) {
    out.push(`| ${c.label} | ${c.n} | ${f3(c.a)} | ${f3(c.b)} | ${pp(c.deltaPp)} | [${pp(c.ciPp[0])}, ${pp(c.ciPp[1])}] | ${pv(c.p)}${adjusted ? ` | ${pv(c.pBonferroni)}` : ""} | ${(100 * c.successA).toFixed(1)}% | ${(100 * c.successB).toFixed(1)}% | ${pv(c.mcnemarP)} (${c.discordant[0]}/${c.discordant[1]}) |`);
  }
  return out;
}

/** Non-dominated points when both coordinates are better higher. */
function front(points: ReadonlyArray<{ x: number; y: number }>): boolean[] {
  return points.map((p) => !points.some((q) => q !== p && q.x >= p.x && q.y >= p.y && (q.x > p.x || q.y > p.y)));
}

export function writeReport(input: readonly EpisodeMetrics[], outDir: string, options: { iterations?: number; seed?: number; title?: string } = {}): EnvprobeReport {
  const iterations = options.iterations ?? 10_000;
  const seed = options.seed ?? 0;
  let episodes = input;
  mkdirSync(outDir, { recursive: true });
  const regimes = [...new Set(episodes.map((e) => e.regime))].sort((a, b) => REGIME_ORDER.indexOf(a) - REGIME_ORDER.indexOf(b));
  // One canonical order whatever the source (sweep order, directory order): the same episodes
  // give the same bytes.
  const rank = (e: EpisodeMetrics) => [KINDS.indexOf(e.world as Kind), REGIME_ORDER.indexOf(e.regime), POLICY_NAMES.indexOf(e.policy as Policy), e.seed];
  episodes = [...episodes].sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
  const cells = cellsOf(episodes);
  const table1: Record<string, Comparison[]> = {};
  const family: Record<string, FamilyUsed> = {};
  const table2: Record<string, Comparison[]> = {};
  const files: string[] = [];
  const md: string[] = [`# ${options.title ?? "EnvProbe report"}`, "", `${episodes.length} episodes; regimes ${regimes.join(", ")}. Paired on (world, seed); A_H is the terminal exact per-field accuracy (paper Eq. 1). Bootstrap: ${iterations.toLocaleString("en-US")} resamples per comparison, seed ${seed}, one named RNG stream per comparison.`, ""];
  const unpaired = unpairedGroups(episodes);
  if (unpaired.groups > 0) {
    md.push(`**Incomplete grid:** ${unpaired.groups} (world, regime, seed) ${unpaired.groups === 1 ? "group lacks" : "groups lack"} some policy (${unpaired.examples.join("; ")}${unpaired.groups > 3 ? "; …" : ""}); a comparison pairs only the seeds both of its policies have (its n says how many).`, "");
  }
  const findings = regimes.flatMap((regime) => paperFindings(episodes, regime, (m, r, s) => compare(episodes, regime, m, r, s, { iterations, seed })));
  md.push(
    "## The paper's findings, checked on these episodes",
    "",
    "Each claim is checked with the paired bootstrap of the tables below: it holds when the 95% CI excludes zero in the claimed direction (task success: McNemar p < 0.05).",
    "",
    "| finding | regime | stratum | evidence | verdict |",
    "| --- | --- | --- | --- | --- |",
    ...findings.map((f) => `| ${f.claim} | ${f.regime} | ${f.stratum} | ${f.evidence} | **${f.verdict}**${f.why === null ? "" : `: ${f.why}`} |`),
    "",
  );
  for (const regime of regimes) {
    const members = FAMILY.map(([m, r, s]) => ({ method: m, reference: r, stratum: s, c: compare(episodes, regime, m, r, s, { iterations, seed }) }));
    const fam = members.map((x) => x.c).filter((c): c is Omit<Comparison, "pBonferroni"> => c !== null);
    // The adjustment is over the comparisons that ran (a partial sweep has fewer than the paper's
    // 6): the label says that m, and report.json carries it beside the p-values it produced.
    const adjusted = bonferroni(fam.map((c) => c.p));
    const used: FamilyUsed = {
      m: fam.filter((c) => !Number.isNaN(c.p)).length,
      paperM: FAMILY.length,
      missing: members.filter((x) => x.c === null).map((x) => ({ label: `${x.method} vs ${x.reference} (${x.stratum})`, why: missingWhy(episodes, regime, x.method, x.reference, x.stratum) })),
    };
    family[regime] = used;
    table1[regime] = fam.map((c, i) => ({ ...c, pBonferroni: adjusted[i]! }));
    table2[regime] = ADJACENT.map(([m, r, s]) => compare(episodes, regime, m, r, s, { iterations, seed })).filter((c): c is Omit<Comparison, "pBonferroni"> => c !== null).map((c) => ({ ...c, pBonferroni: null }));
    const seeds = [...new Set(episodes.filter((e) => e.regime === regime).map((e) => e.seed))].sort((a, b) => a - b);
    md.push(`## Regime ${regime} · seeds ${seedsLabel(seeds)}`, "");
    if (used.m === used.paperM) md.push(`### Table 1: A_H comparisons (the ${used.paperM}-comparison family)`, "", ...comparisonTable(table1[regime]!, used.m), "");
    else {
      md.push(
        `### Table 1: A_H comparisons (${used.m} of the paper's ${used.paperM}-comparison family)`,
        "",
        `The paper's Bonferroni family has ${used.paperM} comparisons (Table 4; its Table 1 shows five of them and it does not name the sixth, here no-probe vs self-uncertainty (spatial)). ${used.m === 0 ? "None of them" : `Only ${used.m}`} could be made on these episodes, so ${used.m === 0 ? "there is nothing to adjust" : `the Bonferroni p below is min(1, ${used.m}·p), not min(1, ${used.paperM}·p)`}. Missing: ${used.missing.map((x) => `${x.label} (${x.why})`).join("; ")}.`,
        "",
        ...(used.m === 0 ? [] : [...comparisonTable(table1[regime]!, used.m), ""]),
      );
    }
    md.push("### Table 2: adjacent comparisons", "", ...comparisonTable(table2[regime]!, null), "");
    md.push("### Per world and policy", "", "| world | policy | n | A_H | proc | spat | success | probes | UPR raw | UPR / B | collapsed | τ_c | drift offset (mean, median) | drift-first | action-first | Pr(wrong \\| conf ≥ 0.7) [Wilson 95%] | Pr(conf ≥ 0.7 \\| wrong) [Wilson 95%] |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const c of cells.filter((x) => x.regime === regime)) {
      md.push(`| ${c.world} | ${labelOf(c.policy)} | ${c.n} | ${f3(c.accuracy)} | ${f3(c.procedural)} | ${f3(c.spatial)} | ${(100 * c.success).toFixed(1)}% | ${c.probes.toFixed(2)} | ${c.usefulRate === null ? "—" : `${(100 * c.usefulRate).toFixed(1)}%`} | ${c.usefulPerBudget.toFixed(2)} | ${(100 * c.collapsed).toFixed(1)}% | ${c.collapseOnset === null ? "—" : c.collapseOnset.toFixed(2)} | ${c.drift.meanOffset === null ? "—" : `${c.drift.meanOffset.toFixed(2)}, ${c.drift.medianOffset!.toFixed(1)}`} (n ${c.drift.n}) | ${(100 * c.drift.driftFirst).toFixed(1)}% | ${(100 * c.drift.actionFirst).toFixed(1)}% | ${c.pcw.p === null ? "—" : `${c.pcw.p.toFixed(3)} [${c.pcw.ci![0].toFixed(3)}, ${c.pcw.ci![1].toFixed(3)}]`} | ${c.pcw.pGivenWrong === null ? "—" : `${c.pcw.pGivenWrong.toFixed(3)} [${c.pcw.ciGivenWrong![0].toFixed(3)}, ${c.pcw.ciGivenWrong![1].toFixed(3)}]`} |`);
    }
    md.push("");
    // Table 3: ablations against Simple on the procedural world (rows for the variants that ran).
    const ablations = ["envprobe-minus-c", "envprobe-minus-d", "envprobe-minus-s", "envprobe-minus-u", "envprobe-cd"]
      .map((m) => compare(episodes, regime, m, "envprobe-simple", "procedural", { iterations, seed }))
      .filter((c): c is Omit<Comparison, "pBonferroni"> => c !== null)
      .map((c) => ({ ...c, pBonferroni: null }));
    if (ablations.length > 0) md.push("### Table 3: ablations vs EnvProbe-Simple (procedural)", "", ...comparisonTable(ablations, null), "");
    // Table 5: raw useful-probe rate, Simple vs Random, paired on episodes where both probed.
    md.push("### Table 5: raw useful-probe rate, EnvProbe-Simple vs Random", "");
    const table5: string[] = [];
    for (const stratum of ["spatial", "all", "procedural"] as const) {
      const pick = (policy: string) => new Map(episodes.filter((e) => e.regime === regime && e.policy === policy && e.probes > 0 && WORLDS[stratum].includes(e.world)).map((e) => [`${e.world}|${e.seed}`, e.useful / e.probes]));
      const a = pick("envprobe-simple");
      const b = pick("random");
      const keys = [...a.keys()].filter((k) => b.has(k)).sort();
      if (keys.length === 0) continue;
      const boot = pairedBootstrap(keys.map((k) => a.get(k)! - b.get(k)!), { iterations, seed, name: `${regime}/${stratum}/upr/simple-vs-random` });
      const lcb = pairedBootstrap(keys.map((k) => a.get(k)!), { iterations, seed, name: `${regime}/${stratum}/upr/simple` }).ci[0];
      const mean = (m: Map<string, number>) => keys.reduce((sum, k) => sum + m.get(k)!, 0) / keys.length;
      table5.push(`| ${stratum} | ${keys.length} | ${f3(mean(a))} | ${f3(mean(b))} | ${pp(100 * boot.estimate)} | [${pp(100 * boot.ci[0])}, ${pp(100 * boot.ci[1])}] | ${pv(boot.p)} | ${lcb >= 0.5 ? "yes" : "no"} (${f3(lcb)}) |`);
    }
    if (table5.length > 0) md.push("| stratum | n (both probed) | Simple | Random | Δ̂ pp | 95% CI pp | p | LCB ≥ 50%? |", "| --- | --- | --- | --- | --- | --- | --- | --- |", ...table5);
    else md.push("Not run: needs episodes of both envprobe-simple and random that probed, on the same world and seed, in this regime.");
    md.push("");
    // Table 6: budget-normalised useful probes (#useful / B) per world and policy.
    const policies = [...new Set(cells.filter((x) => x.regime === regime).map((x) => x.policy))];
    const worlds = [...new Set(cells.filter((x) => x.regime === regime).map((x) => x.world))];
    md.push("### Table 6: useful probes per budget (#useful / B)", "", `| world | ${policies.map(labelOf).join(" | ")} |`, `| --- |${policies.map(() => " --- |").join("")}`);
    for (const world of worlds) md.push(`| ${world} | ${policies.map((pol) => cells.find((x) => x.regime === regime && x.world === world && x.policy === pol)?.usefulPerBudget.toFixed(2) ?? "—").join(" | ")} |`);
    md.push("");
    // Procedural Pareto frontier: task success against A_H per policy (ToolDAG).
    const proc = cells.filter((x) => x.regime === regime && x.world === "tooldag");
    if (proc.length > 0) {
      const pts = proc.map((c) => ({ x: c.accuracy, y: c.success }));
      const fr = front(pts);
      const svg = paretoChart({
        title: `ToolDAG (${regime}): task success vs A_H`,
        xLabel: "terminal world-state accuracy A_H",
        yLabel: "task success",
        points: proc.map((c, i) => {
          const ci = wilson(Math.round(c.success * c.n), c.n);
          return { label: c.policy, x: c.accuracy, y: c.success, yLo: ci.lower, yHi: ci.upper, front: fr[i]! };
        }),
      });
      const file = `pareto-procedural-${regime}.svg`;
      writeFileSync(join(outDir, file), svg);
      files.push(file);
      md.push(`### Procedural Pareto frontier`, "", `![ToolDAG ${regime}: task success vs A_H](${file})`, "", `On the front: ${proc.filter((_, i) => fr[i]).map((c) => c.policy).join(", ")}.`, "");
    }
  }
  // Confident-wrong audit: Pr(wrong | reported confidence ≥ 0.7), per belief-step, pooled.
  const confident = episodes.reduce((s, e) => s + e.highConfidence, 0);
  const wrong = episodes.reduce((s, e) => s + e.confidentWrong, 0);
  const w = wilson(wrong, confident);
  const wrongBeliefs = episodes.reduce((s, e) => s + e.wrongBeliefs, 0);
  const g = wilson(wrong, wrongBeliefs);
  md.push(
    "## Confident-wrong audit (p_cw both ways)",
    "",
    `Per belief and step, pooled over every episode, α = 0.7 (deterministic: the scripted agent's calibration model, unless an LLM agent ran):`,
    "",
    `- Pr(belief ≠ world | reported confidence ≥ α) (the paper's Table 7 "canonical" estimator): **${w.p.toFixed(3)}** [Wilson 95% ${w.lower.toFixed(3)}, ${w.upper.toFixed(3)}] (${wrong.toLocaleString("en-US")} of ${confident.toLocaleString("en-US")});`,
    `- Pr(reported confidence ≥ α | belief ≠ world) = |C_t| / |E_t| (Proposition 5.5's p_cw, which bounds Self-Uncertainty's wrong-field recall by 1 − p_cw): **${wrongBeliefs === 0 ? "—" : g.p.toFixed(3)}**${wrongBeliefs === 0 ? "" : ` [Wilson 95% ${g.lower.toFixed(3)}, ${g.upper.toFixed(3)}] (${wrong.toLocaleString("en-US")} of ${wrongBeliefs.toLocaleString("en-US")})`}.`,
    "",
    `Per world and policy in the tables above (p_cw | conf, then p_cw | wrong); the "wrong" is the true mismatch (the referee's exact comparison), not the release's oracle cascade.`,
    "",
  );
  writeFileSync(join(outDir, "report.md"), md.join("\n") + "\n");
  const report: EnvprobeReport = { regimes, episodes: episodes.length, findings, table1, family, table2, cells, confidentWrong: { confident, wrong, p: w.p, ci: [w.lower, w.upper], wrongBeliefs, pGivenWrong: g.p, ciGivenWrong: [g.lower, g.upper] }, files: ["report.md", "report.json", ...files], unpaired };
  writeFileSync(join(outDir, "report.json"), JSON.stringify(report, null, 2) + "\n");
  return report;
}
