// `probetown sweep envprobe`: every (world, regime, policy, seed) cell of a grid, run embedded on
// all cores (worker threads pulling chunks of jobs: infra/pool.ts, sweepWorker.ts), each episode through the direct driver
// (services/envprobe/direct.ts: the sequencer's exact log, verifiable). Prints per-cell metrics and
// the wall time. The spec is checked before anything runs.
//
// An LLM agent's grid (config `llm.belief`) runs differently: every episode through runEpisode in
// this process, a few at a time, with one LLM gateway answering every episode's model calls. The
// direct driver has no gateway, and giving each worker thread its own would multiply the
// gateway's concurrency cap and split its token accounting; an LLM episode waits on H model calls
// (seconds each), so runEpisode's ~7 ms of fixed cost does not matter there, and its sequencer is
// the one that answers (and replay serves) `llm.requested`.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beliefModelOf, GRID_POLICIES, judgeModelOf, MODEL_POLICIES, POLICY_NAMES, REGIMES, type EnvprobeConfig, type Policy } from "../../actors/envprobe/config.ts";
import { KINDS, type Kind } from "../../actors/envprobe/kinds/index.ts";
import { envprobeWorld } from "../../actors/envprobe/world.ts";
import { resolveNewEpisodeConfig } from "../../actors/actor.ts";
import { canonicalJson } from "../../events/canonical.ts";
import { runOnPool } from "../../infra/pool.ts";
import { parseSeeds } from "../distributed/jobs.ts";
import { UsageError } from "../kernel/replay.ts";
import type { LlmResponder } from "../kernel/sequencer.ts";
import { cellsOf, metricsOfLog, type CellMetrics, type EpisodeMetrics } from "./metrics.ts";
import type { SweepChunk, SweepChunkResult } from "./sweepWorker.ts";
import { InternalError } from "../../events/internalError.ts";
import { SweepProgressWriter } from "../kernel/sweepProgressFile.ts";
import { LOG_FORMATS, type LogFormat } from "./direct.ts";

export interface EnvprobeJob {
  readonly world: Kind;
  readonly regime: string;
  readonly policy: Policy;
  readonly seed: number;
}

export interface SweepSpec {
  readonly worlds: readonly Kind[];
  readonly regimes: readonly string[];
  readonly policies: readonly Policy[];
  readonly seeds: readonly number[];
  /**
   * The paper's held-out seeds (§4.1): the low- and high-stress regimes run on these instead of
   * `seeds`, a disjoint range, while medium keeps `seeds`. Pairs stay within a regime, so the
   * report needs nothing else.
   */
  readonly heldOut?: readonly number[];
  /** Where the episode logs go (one directory per episode); none: logs are not kept. */
  readonly log?: string;
  /** Worker threads (default: every core); for an LLM agent, episodes in flight (default 4). */
  readonly workers?: number;
  /** Config overrides for every episode (e.g. horizon, calibration, writeBack). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** The logs' format (default 2, compact; 1: a sealed record a line). Not a difference between two runs of a sweep: either format's finished log is kept. */
  readonly logFormat?: LogFormat;
  /** `jetstream` (`--log-store jetstream`, over NATS only): each log goes to the namespace's log-object bucket instead of `log`. */
  readonly logStore?: "jetstream";
}

export interface SweepResult {
  readonly episodes: readonly EpisodeMetrics[];
  readonly cells: readonly CellMetrics[];
  readonly seconds: number;
  readonly workers: number;
  readonly log: string | null;
  /**
   * Episodes whose log a run of this sweep into the same --log had finished: kept, their metrics read
   * from the log, not run again (services/envprobe/keep.ts). `episodes` holds them too.
   */
  readonly kept: number;
}

function list<T extends string>(flag: string, text: string | undefined, known: readonly T[], all: readonly T[]): T[] {
  if (text === undefined || text.trim() === "all") return [...all];
  const items = text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  // An empty value (often an unset shell variable) is not "the default": that is omitting the flag.
  if (items.length === 0) throw new UsageError(`${flag}: empty list; name some (known: ${known.join(", ")}), say 'all', or omit ${flag} for the default`);
  const unknown = items.filter((s) => !known.includes(s as T));
  if (unknown.length > 0) throw new UsageError(`${flag}: unknown ${unknown.map((u) => `'${u}'`).join(", ")} (known: ${known.join(", ")})`);
  return [...new Set(items)] as T[];
}

/** `--log-format`: 1 or 2, and only where logs are kept. */
function logFormatFlag(n: number, log: string | undefined, logStore: string | undefined): LogFormat {
  if (!LOG_FORMATS.includes(n as LogFormat)) throw new UsageError(`--log-format: ${n} is not a log format (1: a sealed JSON record a line; 2: compact, the default)`);
  if (log === undefined && logStore !== "jetstream") throw new UsageError("--log-format: the format of the logs --log keeps; without --log no log is written");
  return n as LogFormat;
}

/** The regimes that run on the held-out seeds when a sweep has them (the paper's low and high stress, and the release's S1/S3). */
export const HELD_OUT_REGIMES: readonly string[] = ["low", "high", "S1", "S3"];

/** The seeds a regime of this sweep runs on. */
export const seedsOf = (spec: SweepSpec, regime: string): readonly number[] =>
  spec.heldOut !== undefined && HELD_OUT_REGIMES.includes(regime) ? spec.heldOut : spec.seeds;

/** Episodes in the sweep: worlds × policies × each regime's seeds. */
export const episodeCount = (spec: SweepSpec): number =>
  spec.worlds.length * spec.policies.length * spec.regimes.reduce((n, regime) => n + seedsOf(spec, regime).length, 0);

/** `0-219` for a contiguous range, else the first and last with the count. */
export const seedsLabel = (seeds: readonly number[]): string =>
  seeds.length === 1 ? `${seeds[0]}` : seeds.at(-1)! - seeds[0]! === seeds.length - 1 ? `${seeds[0]}-${seeds.at(-1)}` : `${seeds.length} seeds from ${seeds[0]} to ${seeds.at(-1)}`;

/** Checks a sweep's flags; every problem is a UsageError naming the flag. */
export function sweepSpecOf(
  flags: { worlds?: string; regimes?: string; policies?: string; seeds: string; heldOut?: string; log?: string; workers?: number; horizon?: number; config?: unknown; logFormat?: number; logStore?: "jetstream" },
  acceptLog?: (spec: SweepSpec) => boolean,
): SweepSpec {
  const worlds = list("--worlds", flags.worlds, KINDS, KINDS);
  const regimeNames = Object.keys(REGIMES);
  const regimes = list("--regimes", flags.regimes, regimeNames, ["low", "medium", "high"]);
  const policies = list("--policies", flags.policies, POLICY_NAMES, GRID_POLICIES);
  const seeds = parseSeeds(flags.seeds);
  if (seeds.length === 0) throw new UsageError("--seeds: no seeds");
  let heldOut: number[] | undefined;
  if (flags.heldOut !== undefined) {
    try {
      heldOut = parseSeeds(flags.heldOut).sort((a, b) => a - b);
    } catch (error) {
      throw new UsageError((error as Error).message.replace(/^--seeds/, "--held-out"));
    }
    if (heldOut.length === 0) throw new UsageError("--held-out: no seeds");
    const shared = heldOut.filter((seed) => seeds.includes(seed));
    if (shared.length > 0) throw new UsageError(`--held-out: ${shared.length} seed(s) also in --seeds (${shared.slice(0, 5).join(", ")}${shared.length > 5 ? ", …" : ""}); held-out seeds must be disjoint from them`);
    if (!regimes.some((r) => HELD_OUT_REGIMES.includes(r))) throw new UsageError(`--held-out: applies to the ${HELD_OUT_REGIMES.join("/")} regimes, and --regimes has none of them`);
  }
  if (flags.horizon !== undefined && (!Number.isSafeInteger(flags.horizon) || flags.horizon <= 0)) throw new UsageError(`--horizon: expected a positive integer, got ${flags.horizon}`);
  if (flags.workers !== undefined && (!Number.isSafeInteger(flags.workers) || flags.workers < 0)) throw new UsageError(`--workers: expected an integer ≥ 0, got ${flags.workers}`);
  const config: Record<string, unknown> = { ...((flags.config ?? {}) as Record<string, unknown>), ...(flags.horizon === undefined ? {} : { horizon: flags.horizon }) };
  // Each episode's world, regime and policy come from these flags and overwrite the config's: set
  // in --config they would be ignored in every episode (and logged in each header all the same).
  for (const [key, flag] of [["world", "--worlds"], ["regime", "--regimes"], ["policy", "--policies"]] as const) {
    if (key in config) throw new UsageError(`--config: "${key}" is chosen by ${flag} in a sweep (the config's ${JSON.stringify(config[key])} would be overridden in every episode); use ${flag} ${typeof config[key] === "string" ? config[key] : "<list>"} instead`);
  }
  if (policies.some((p) => MODEL_POLICIES.includes(p)) && judgeModelOf(config as EnvprobeConfig) === null) {
    throw new UsageError(`--policies: envprobe-judge is a model critic (LLM role judge) and needs its model: --config '{"llm": {"judge": "<model>"}}' with an endpoint; or run envprobe-judge-standin, the deterministic stand-in`);
  }
  // The config overrides are checked here for every world and regime, not in the workers.
  for (const world of worlds) {
    for (const regime of regimes) {
      try {
        resolveNewEpisodeConfig(envprobeWorld, { ...config, world, regime });
      } catch (error) {
        throw new UsageError(`--config: ${(error as Error).message}`);
      }
    }
  }
  const spec: SweepSpec = { worlds, regimes, policies, seeds, ...(heldOut === undefined ? {} : { heldOut }), ...(flags.log === undefined ? {} : { log: resolve(flags.log) }), ...(flags.workers ? { workers: flags.workers } : {}), config, ...(flags.logFormat === undefined ? {} : { logFormat: logFormatFlag(flags.logFormat, flags.log, flags.logStore) }), ...(flags.logStore === undefined ? {} : { logStore: flags.logStore }) };
  // A non-empty --log is refused, except where `acceptLog` recognises it (the same sweep run again
  // into its own --log: it keeps the finished episodes and runs the rest).
  if (flags.log !== undefined && existsSync(flags.log) && readdirSync(flags.log).length > 0 && !(acceptLog?.(spec) ?? false)) {
    const differences = sweepLogDifferences(spec);
    if (differences !== null && differences.length > 0) {
      throw new UsageError(
        `--log ${flags.log}: holds another sweep's logs (its spec is in ${MARKER}), which differs from this one in ${differences.join("; ")}; ` +
          "only the same sweep may run again into it (to finish it: the flags it was run with); choose another --log for this one",
      );
    }
    throw new UsageError(`--log ${flags.log}: not empty${existsSync(join(flags.log, MARKER)) ? ` (its ${MARKER} is not a sweep's spec)` : ""}; choose another directory or remove it`);
  }
  return spec;
}

/** What a sweep's --log directory holds besides the logs: the spec, so the same sweep run again into it is recognised. */
export const MARKER = ".envprobe-sweep.json";
const markerOf = (spec: SweepSpec): string => canonicalJson({ worlds: spec.worlds, regimes: spec.regimes, policies: spec.policies, seeds: spec.seeds, ...(spec.heldOut === undefined ? {} : { heldOut: spec.heldOut }), config: spec.config ?? {} }) + "\n";

/** Does `spec.log` hold this very sweep's logs (a rerun or resubmission), so its non-empty --log is fine? */
export function isSameSweepLog(spec: SweepSpec): boolean {
  return sweepLogDifferences(spec)?.length === 0;
}

/**
 * How the sweep whose spec is in `spec.log`'s MARKER differs from `spec`, each difference naming its
 * flag and both values (empty: the same grid, whatever the order of its lists); null when there is
 * no readable spec there. The order of --worlds, --regimes, --policies and --seeds only orders the
 * output, not the episodes: it is no difference.
 */
export function sweepLogDifferences(spec: SweepSpec): string[] | null {
  if (spec.log === undefined) return null;
  const there = readMarker(spec.log);
  if (there === null) return null;
  const out: string[] = [];
  const asSet = (xs: readonly unknown[]) => canonicalJson([...xs].map(String).sort());
  const seedList = (xs: readonly unknown[] | undefined) => (xs === undefined || xs.length === 0 ? "none" : seedsLabel([...(xs as number[])].sort((a, b) => a - b)));
  for (const [key, flag] of [["worlds", "--worlds"], ["regimes", "--regimes"], ["policies", "--policies"]] as const) {
    if (asSet(spec[key]) !== asSet(there[key]!)) out.push(`${flag} (${spec[key].join(",")} here, ${there[key]!.join(",")} there)`);
  }
  for (const [key, flag] of [["seeds", "--seeds"], ["heldOut", "--held-out"]] as const) {
    const here = seedList(spec[key]);
    const then = seedList(there[key]);
    if (asSet(spec[key] ?? []) !== asSet(there[key] ?? [])) out.push(`${flag} (${here} here, ${then} there)`);
  }
  const config = (spec.config ?? {}) as Record<string, unknown>;
  const thenConfig = (there.config !== null && typeof there.config === "object" ? there.config : {}) as Record<string, unknown>;
  const shown = (v: unknown) => (v === undefined ? "unset" : canonicalJson(v));
  for (const key of [...new Set([...Object.keys(config), ...Object.keys(thenConfig)])].sort()) {
    if (shown(config[key]) !== shown(thenConfig[key])) out.push(`${key === "horizon" ? "--horizon/--config" : key === "llm" ? "--model belief/--config" : "--config"} "${key}" (${shown(config[key])} here, ${shown(thenConfig[key])} there)`);
  }
  return out;
}

/**
 * The episodes a sweep's --log directory should hold, by its spec in MARKER that are not among
 * `present` (keys `world-regime/policy/sSEED`, as the directories are named): an interrupted sweep's
 * report covers fewer episodes than its sweep asked for. Null when the directory has no readable spec.
 */
export function missingFromSweepLog(log: string, present: ReadonlySet<string>): { readonly expected: number; readonly missing: readonly string[] } | null {
  const spec = readMarker(log);
  if (spec === null) return null;
  const expected = jobsOf(spec).map(sweepKeyOf);
  return { expected: expected.length, missing: expected.filter((key) => !present.has(key)) };
}

/** An episode's place in a sweep's --log, as its directory is named. */
export const sweepKeyOf = (j: { readonly world: string; readonly regime: string; readonly policy: string; readonly seed: number }): string => `${j.world}-${j.regime}/${j.policy}/s${j.seed}`;

/** The spec a sweep left in its --log (MARKER), or null when there is none that reads as one. */
function readMarker(log: string): SweepSpec | null {
  try {
    const spec = JSON.parse(readFileSync(join(log, MARKER), "utf8")) as SweepSpec | null;
    return spec !== null && typeof spec === "object" && [spec.worlds, spec.regimes, spec.policies, spec.seeds].every(Array.isArray) ? spec : null;
  } catch {
    return null;
  }
}

/** Leaves the spec in --log before any episode is written, so an interrupted sweep can be run again into it. */
export function markSweepLog(spec: SweepSpec): void {
  if (spec.log === undefined) return;
  mkdirSync(spec.log, { recursive: true });
  writeFileSync(join(spec.log, MARKER), markerOf(spec));
}

export function jobsOf(spec: SweepSpec): EnvprobeJob[] {
  const jobs: EnvprobeJob[] = [];
  // Seed-major order (by position in each regime's seed list) keeps a chunk's episodes spread over
  // every cell (even load per worker).
  const longest = Math.max(...spec.regimes.map((regime) => seedsOf(spec, regime).length));
  for (let i = 0; i < longest; i++) {
    for (const world of spec.worlds) {
      for (const regime of spec.regimes) {
        const seed = seedsOf(spec, regime)[i];
        if (seed !== undefined) for (const policy of spec.policies) jobs.push({ world, regime, policy, seed });
      }
    }
  }
  return jobs;
}

export const episodeDirOf = (log: string, j: EnvprobeJob): string => `${log}/${sweepKeyOf(j)}`;
export const episodeNameOf = (j: EnvprobeJob): string => `envprobe-${j.world}-${j.regime}-s${j.seed}-${j.policy}`;

const CHUNK = 64;

/** The LLM agent's model of a sweep (config `llm.belief`), or null for the scripted agent. */
export const sweepBeliefModel = (spec: SweepSpec): string | null => beliefModelOf(spec.config as EnvprobeConfig);

/**
 * Runs the grid on worker threads (one chunk, on this thread); resolves with every episode's metrics and the cells. An LLM
 * agent's grid runs through runEpisode instead, with `llm` answering its model calls (without one
 * every call fails with `no_backend` and each step falls back to the scripted update, logged).
 */
export async function runSweep(spec: SweepSpec, progress?: (done: number, total: number, kept: number) => void, llm?: LlmResponder): Promise<SweepResult> {
  markSweepLog(spec);
  if (sweepBeliefModel(spec) !== null || spec.policies.some((p) => MODEL_POLICIES.includes(p))) return runSweepThroughEpisodes(spec, progress, llm);
  const jobs = jobsOf(spec);
  // Per worker thread, for the dashboard: in --log, outside every episode log.
  const perWorker = new SweepProgressWriter(spec.log ?? null, jobs.length);
  const started = performance.now();
  const chunks: SweepChunk[] = [];
  for (let at = 0; at < jobs.length; at += CHUNK) chunks.push({ jobs: jobs.slice(at, at + CHUNK), log: spec.log ?? null, config: spec.config ?? {}, ...(spec.logFormat === undefined ? {} : { logFormat: spec.logFormat }) });
  const workers = Math.max(1, Math.min(spec.workers ?? availableParallelism(), chunks.length));
  let done = 0;
  let kept = 0;
  const onResult = (r: SweepChunkResult): void => {
    if (r.error !== undefined) throw new InternalError(r.error);
    done += r.done.length;
    kept += r.kept;
    perWorker.add(`thread ${r.thread}`, r.done.length, r.kept);
    progress?.(done, jobs.length, kept);
  };
  // One chunk (at most CHUNK episodes, well under a second's work on a quiet machine) runs on this
  // thread: a worker thread would load its modules first, 1–2 s (4 s at load 8) for one thread
  // anyway. The option grids of `fidelity` at a few seeds spent 3–4 s each on that.
  const results = await (chunks.length === 1
    ? import("./sweepWorker.ts").then(({ default: runChunk }) => {
        const r = runChunk(chunks[0]!);
        onResult(r);
        return [r];
      })
    : runOnPool<SweepChunk, SweepChunkResult>(new URL("./sweepWorker.ts", import.meta.url), chunks, { threads: workers, onResult })
  ).finally(() => perWorker.finish());
  const episodes = results.flatMap((r) => (r.error === undefined ? r.done : []));
  const seconds = (performance.now() - started) / 1000;
  inGridOrder(spec, episodes);
  return { episodes, cells: cellsOf(episodes), seconds, workers, log: spec.log ?? null, kept };
}

/** Sorts a grid's episode metrics in place (world, regime, policy as in the spec, then seed): the
 * order of the cells and of `--out`'s episodeMetrics, whichever way the episodes ran. */
export function inGridOrder(spec: SweepSpec, episodes: EpisodeMetrics[]): EpisodeMetrics[] {
  const order = (e: EpisodeMetrics) => `${KINDS.indexOf(e.world as Kind)}|${spec.regimes.indexOf(e.regime)}|${String(spec.policies.indexOf(e.policy as Policy)).padStart(3, "0")}`;
  return episodes.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : a.seed - b.seed));
}

/** An LLM agent's grid: each episode through runEpisode (the sequencer answers its model calls), `workers` at once. */
async function runSweepThroughEpisodes(spec: SweepSpec, progress?: (done: number, total: number, kept: number) => void, llm?: LlmResponder): Promise<SweepResult> {
  const jobs = jobsOf(spec);
  const started = performance.now();
  const lanes = Math.max(1, Math.min(spec.workers ?? 4, jobs.length));
  const perWorker = new SweepProgressWriter(spec.log ?? null, jobs.length);
  // Run again into its own --log, an interrupted grid resumes: logged answers are served from the
  // logs and only the rest are asked for.
  const { episodes, kept } = await runEpisodesThroughSequencer(jobs, { config: spec.config ?? {}, log: spec.log ?? null, lanes, resume: spec.log !== undefined, ...(llm === undefined ? {} : { llm }) }, (done, kept, lane, keptNow) => {
    perWorker.add(`lane ${lane}`, 1, keptNow ? 1 : 0);
    progress?.(done, jobs.length, kept);
  }).finally(() => perWorker.finish());
  const seconds = (performance.now() - started) / 1000;
  inGridOrder(spec, episodes);
  return { episodes, cells: cellsOf(episodes), seconds, workers: lanes, log: spec.log ?? null, kept };
}

/**
 * Runs EnvProbe episodes through runEpisode, `lanes` at once, and returns each one's metrics (read
 * back from its log, in completion order). Logs go below `log`, or to a temporary folder removed
 * afterwards. Used for LLM agents: by the in-process grid and by workers running a NATS chunk.
 * With `resume` an episode whose log is already there (a redelivered job) continues it: its logged
 * model answers are served from the log, and a finished one (its log checked by replaying it, no
 * record appended) is counted as `kept`.
 */
export async function runEpisodesThroughSequencer(
  jobs: readonly EnvprobeJob[],
  o: { readonly config: Readonly<Record<string, unknown>>; readonly log: string | null; readonly lanes: number; readonly llm?: LlmResponder; readonly resume?: boolean },
  progress?: (done: number, kept: number, lane: number, keptNow: boolean) => void,
): Promise<{ episodes: EpisodeMetrics[]; kept: number }> {
  // Loaded here, not at the top: the sweep's worker threads import this file and need none of it.
  const { runEpisode } = await import("../kernel/episodes.ts");
  const root = o.log ?? mkdtempSync(join(tmpdir(), "probetown-envprobe-llm-"));
  const episodes: EpisodeMetrics[] = [];
  let kept = 0;
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(o.lanes, jobs.length)) }, async (_, lane) => {
        while (next < jobs.length) {
          const j = jobs[next++]!;
          const dir = episodeDirOf(root, j);
          const run = await runEpisode({
            world: "envprobe", seed: j.seed, condition: j.policy, config: { ...o.config, world: j.world, regime: j.regime },
            dir, trace: { exporter: "none" }, snapshotEvery: 0, fsync: "never", ...(o.llm === undefined ? {} : { llm: o.llm }), ...(o.resume === true ? { resume: true } : {}),
          });
          if (run.records === 0) kept++;
          episodes.push(metricsOfLog(dir));
          progress?.(episodes.length, kept, lane + 1, run.records === 0);
        }
      }),
    );
  } finally {
    if (o.log === null) rmSync(root, { recursive: true, force: true });
  }
  return { episodes, kept };
}

const pct = (x: number | null) => (x === null ? "  —  " : `${(100 * x).toFixed(1).padStart(5)}`);
const num = (x: number | null, d = 2) => (x === null ? "—" : x.toFixed(d));

/** A readable table of cells. */
export function renderCells(cells: readonly CellMetrics[]): string {
  const head = "world        regime  policy             n     A_H   proc   spat  succ%  probes  UPR%  UPR/B  coll%   τ_c  p_cw|conf [95% CI]  p_cw|wrong";
  const rows = cells.map((c) =>
    [
      c.world.padEnd(12), c.regime.padEnd(7), c.policy.padEnd(18), String(c.n).padStart(4),
      num(c.accuracy, 3).padStart(6), num(c.procedural, 3).padStart(6), num(c.spatial, 3).padStart(6), pct(c.success).padStart(6),
      num(c.probes, 1).padStart(7), pct(c.usefulRate), num(c.usefulPerBudget).padStart(6), pct(c.collapsed).padStart(6), num(c.collapseOnset, 1).padStart(5),
      c.pcw.p === null ? "—" : `${c.pcw.p.toFixed(3)} [${c.pcw.ci![0].toFixed(3)}, ${c.pcw.ci![1].toFixed(3)}]`,
      c.pcw.pGivenWrong === null ? "—" : c.pcw.pGivenWrong.toFixed(3),
    ].join(" "),
  );
  return [head, ...rows].join("\n");
}
