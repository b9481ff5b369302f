// EnvProbe metrics, computed from an episode's log records (the same code reads a log file or the
// records a sweep is writing): terminal world-state accuracy A_H (exact per field, overall and by
// type), task success, useful-probe rate (raw and per budget), collapse onset τ_c (first step with
// A_t < 0.6), action-collapse onset and the drift-before-action offset, and the confident-wrong
// counts behind p_cw both ways — Pr(wrong | conf ≥ α) and Proposition 5.5's Pr(conf ≥ α | wrong) —
// with Wilson intervals at the cell level.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Schema } from "effect";
import { LogCorrupted } from "../../events/errors.ts";
import { InternalError } from "../../events/internalError.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { UsageError } from "../kernel/usageError.ts";
import { FIRST_SEGMENT } from "../../infra/fileEventStore.ts";
import { COMPACT_LOG, CompactRecordDamaged, decodeCompactText, isCompactHeader } from "../../events/compactLog.ts";
import type { LogRecord } from "../../events/record.ts";
import { KINDS } from "../../actors/envprobe/kinds/index.ts";
import { POLICY_NAMES, REGIMES } from "../../actors/envprobe/config.ts";
import { wilson } from "../analysis/stats.ts";

export interface EpisodeMetrics {
  readonly world: string;
  readonly regime: string;
  readonly policy: string;
  readonly seed: number;
  readonly horizon: number;
  readonly budget: number;
  readonly steps: number;
  readonly success: boolean;
  readonly accuracy: number;
  /** Terminal accuracy over procedural / spatial fields (null when the world has none). */
  readonly procedural: number | null;
  readonly spatial: number | null;
  readonly probes: number;
  readonly useful: number;
  /** First step with A_t < 0.6 (null: never). */
  readonly collapse: number | null;
  /** First act step where the validity of the last 5 actions (at least 3) falls below 0.6 (probes excluded). */
  readonly actionCollapse: number | null;
  /** Beliefs reported with confidence ≥ 0.7 (summed over steps), and how many were wrong. */
  readonly highConfidence: number;
  readonly confidentWrong: number;
  /** Wrong beliefs (summed over steps): the denominator of Pr(conf ≥ α | wrong), Proposition 5.5's p_cw. */
  readonly wrongBeliefs: number;
  readonly mutations: number;
}

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0));
const Unit = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }));
const Step = Schema.NullOr(Count);

/**
 * One episode's metrics as a `sweep envprobe --out` file holds them: report-envprobe decodes every
 * entry of a metrics file with this, so a hand-edited or truncated entry is refused naming its index
 * and field rather than averaged into the tables as NaN or "undefined".
 */
export const EpisodeMetricsSchema = Schema.Struct({
  world: Schema.Literals(KINDS),
  regime: Schema.Literals(Object.keys(REGIMES)),
  policy: Schema.Literals(POLICY_NAMES),
  seed: Schema.Int,
  horizon: Count,
  budget: Count,
  steps: Count,
  success: Schema.Boolean,
  accuracy: Unit,
  procedural: Schema.NullOr(Unit),
  spatial: Schema.NullOr(Unit),
  probes: Count,
  useful: Count,
  collapse: Step,
  actionCollapse: Step,
  highConfidence: Count,
  confidentWrong: Count,
  wrongBeliefs: Count,
  mutations: Count,
});

/** A count a log record's payload must hold (metrics add them up: a string would concatenate). */
function count(type: string, field: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new InternalError(`${type} ${field}: expected an integer ≥ 0, got ${JSON.stringify(value)}`);
  return value;
}

export const COLLAPSE = 0.6;
const WINDOW = 5;

/** An episode of another world (an AURATown day, an aura-scene cell): no EnvProbe metrics, and not damage either. */
export class NotEnvProbeEpisode extends TaggedError {
  readonly _tag = "NotEnvProbeEpisode";
  readonly exitCode = ExitCode.usage;
  readonly world: string;
  constructor(world: string) {
    super(`an episode of the world ${world}, not an EnvProbe one`);
    this.world = world;
  }
}

/** Folds one episode's records (type, payload) into its metrics. */
export class EpisodeAccumulator {
  private steps = 0;
  private success = false;
  private probes = 0;
  private useful = 0;
  private last: { w: readonly number[]; n: readonly number[] } | null = null;
  private collapse: number | null = null;
  private actionCollapse: number | null = null;
  private recent: boolean[] = [];
  private hc = 0;
  private cw = 0;
  private wrongBeliefs = 0;
  private mutations = 0;
  private header: { world: string; regime: string; policy: string; seed: number; horizon: number } | null = null;

  add(type: string, payload: unknown): void {
    switch (type) {
      case "episode.started": {
        const p = payload as { seed: number; condition: string; config: { world: string; regime: string }; ticks: number; world?: unknown };
        if (typeof p.world === "string" && p.world !== "envprobe") throw new NotEnvProbeEpisode(p.world);
        if (!Number.isSafeInteger(p.seed)) throw new InternalError(`${type} seed: expected an integer, got ${JSON.stringify(p.seed)}`);
        if (count(type, "ticks", p.ticks) === 0) throw new InternalError(`${type} ticks: expected at least 1, got 0`);
        for (const [field, value] of [["condition", p.condition], ["config.world", p.config?.world], ["config.regime", p.config?.regime]] as const) {
          if (typeof value !== "string") throw new InternalError(`${type} ${field}: expected a name, got ${JSON.stringify(value)}`);
        }
        this.header = { world: p.config.world, regime: p.config.regime, policy: p.condition, seed: p.seed, horizon: p.ticks };
        break;
      }
      case "envprobe.stepped": {
        const p = payload as { t: number; kind: string; valid: boolean; useful: boolean; success: boolean };
        count(type, "t", p.t);
        if (p.kind !== "act" && p.kind !== "probe") throw new InternalError(`${type} kind: expected "act" or "probe", got ${JSON.stringify(p.kind)}`);
        for (const field of ["valid", "useful", "success"] as const) if (typeof p[field] !== "boolean") throw new InternalError(`${type} ${field}: expected true or false, got ${JSON.stringify(p[field])}`);
        this.steps = p.t;
        this.success = p.success;
        if (p.kind === "probe") {
          this.probes++;
          if (p.useful) this.useful++;
        } else {
          this.recent.push(p.valid);
          if (this.recent.length > WINDOW) this.recent.shift();
          if (this.actionCollapse === null && this.recent.length >= 3 && this.recent.filter((v) => v).length / this.recent.length < COLLAPSE) this.actionCollapse = p.t;
        }
        break;
      }
      case "envprobe.mutated": {
        const changes = (payload as { changes?: unknown }).changes;
        if (!Array.isArray(changes)) throw new InternalError(`envprobe.mutated changes: expected a list, got ${JSON.stringify(changes)}`);
        this.mutations += changes.length;
        break;
      }
      case "envprobe.scored": {
        const p = payload as { t: number; w: readonly number[]; n: readonly number[]; hc: number; cw: number };
        // The payload is read without its schema (speed); the numbers metrics add up are checked.
        for (const field of ["t", "hc", "cw"] as const) count(type, field, p[field]);
        for (const field of ["w", "n"] as const) {
          if (!Array.isArray(p[field]) || p[field].length !== 2) throw new InternalError(`${type} ${field}: expected [procedural, spatial], got ${JSON.stringify(p[field])}`);
          p[field].forEach((x, i) => count(type, `${field}[${i}]`, x));
        }
        if (p.n[0]! + p.n[1]! === 0 || p.w[0]! > p.n[0]! || p.w[1]! > p.n[1]!) throw new InternalError(`${type}: wrong fields ${JSON.stringify(p.w)} do not fit the field counts ${JSON.stringify(p.n)}`);
        this.last = p;
        const acc = 1 - (p.w[0]! + p.w[1]!) / (p.n[0]! + p.n[1]!);
        if (this.collapse === null && acc < COLLAPSE) this.collapse = p.t;
        if (p.cw > p.hc || p.cw > p.w[0]! + p.w[1]!) throw new InternalError(`${type}: ${p.cw} confident-wrong beliefs do not fit ${p.hc} confident and ${p.w[0]! + p.w[1]!} wrong ones`);
        this.hc += p.hc;
        this.cw += p.cw;
        this.wrongBeliefs += p.w[0]! + p.w[1]!;
        break;
      }
    }
  }

  result(): EpisodeMetrics {
    if (this.header === null || this.last === null) throw new UsageError("not an envprobe episode log (no header or no scored step)");
    const { w, n } = this.last;
    const h = this.header;
    return {
      ...h,
      budget: Math.max(1, Math.floor(h.horizon / 4)),
      steps: this.steps,
      success: this.success,
      accuracy: 1 - (w[0]! + w[1]!) / (n[0]! + n[1]!),
      procedural: n[0]! > 0 ? 1 - w[0]! / n[0]! : null,
      spatial: n[1]! > 0 ? 1 - w[1]! / n[1]! : null,
      probes: this.probes,
      useful: this.useful,
      collapse: this.collapse,
      actionCollapse: this.actionCollapse,
      highConfidence: this.hc,
      confidentWrong: this.cw,
      wrongBeliefs: this.wrongBeliefs,
      mutations: this.mutations,
    };
  }
}

const TAIL = /"kind":"(act|probe)".*"success":(true|false),"t":(\d+),"useful":(true|false),"valid":(true|false)\}$/s;

/** The scalar fields metrics need from a step payload, or null if it is not in the expected shape. */
function steppedTail(payload: string): { kind: string; success: boolean; t: number; useful: boolean; valid: boolean } | null {
  const k = payload.indexOf('"kind":"');
  const s = payload.lastIndexOf('"success":');
  if (k < 0 || s < 0) return null;
  const m = TAIL.exec(payload.slice(k, k + 16) + payload.slice(s));
  return m === null ? null : { kind: m[1]!, success: m[2] === "true", t: Number(m[3]), useful: m[4] === "true", valid: m[5] === "true" };
}

const WANTED = /"type":"(episode\.started|envprobe\.(stepped|scored|mutated))"/;

/** Metrics of one episode directory, read from its log (only the lines metrics need are parsed). */
export function metricsOfLog(dir: string): EpisodeMetrics {
  const logDir = join(dir, "log");
  // A store rolls to a new segment only past SEGMENT_BYTES, so a smaller first segment is the
  // whole log (no directory listing per episode).
  const first = join(logDir, FIRST_SEGMENT);
  let files: string[] = existsSync(first) ? [first] : [];
  let texts: string[] = files.map((f) => readFileSync(f, "utf8"));
  if (texts.length === 0 || texts[0]!.length > 32 * 2 ** 20) {
    files = readdirSync(logDir).filter((f) => f.endsWith(".jsonl")).sort().map((f) => join(logDir, f));
    texts = files.map((f) => readFileSync(f, "utf8"));
  }
  return metricsOfSegments(dir, files, texts);
}

/** Metrics of one episode from its log segments' text (already read: a sweep keeping a log checks it first). */
export function metricsOfSegments(dir: string, files: readonly string[], texts: readonly string[]): EpisodeMetrics {
  const logDir = join(dir, "log");
  const acc = new EpisodeAccumulator();
  // Only payloads are read here (the chain is `verify`'s job), but a damaged or unfinished log must
  // not become a partial episode in a report: a line that is no record, a torn last line, or a log
  // that stops before the horizon's last tick is refused, naming the file and line.
  const damaged = (file: string, line: number, reason: string) =>
    new LogCorrupted({ file, line, seq: null, reason: `${reason}; \`probetown verify ${dir}\` checks the whole log` });
  if (texts.length === 1 && isCompactText(texts[0]!)) return compactMetrics(dir, files[0]!, texts[0]!, acc, damaged);
  let lastLine = "";
  texts.forEach((text, i) => {
    const file = files[i]!;
    if (text.length > 0 && !text.endsWith("\n")) throw damaged(file, text.split("\n").length, "the last record is cut short (a torn tail)");
    let line = 0;
    for (let start = 0; start < text.length; ) {
      line++;
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const at = text.lastIndexOf('"type":"', end);
      if (at < start) throw damaged(file, line, "not a log record");
      const type = WANTED.exec(text.slice(at, at + 40))?.[1];
      if (type !== undefined) {
        // Sealed records keep their body keys in order (cause, episode, from, payload, seq, …):
        // the payload is the canonical JSON between `,"payload":` and `,"seq":`. A step's payload
        // ends with its sorted scalar keys (…, success, t, useful, valid), read without parsing
        // the observation arrays before them.
        const from = text.indexOf(',"payload":', start);
        const to = text.lastIndexOf(',"seq":', at);
        const payload = from > start && to > from ? text.slice(from + 11, to) : null;
        try {
          if (payload === null) acc.add(type, (JSON.parse(text.slice(start, end)) as { payload: unknown }).payload);
          else if (type === "envprobe.stepped") acc.add(type, steppedTail(payload) ?? JSON.parse(payload));
          else acc.add(type, JSON.parse(payload));
        } catch (error) {
          // Bad input, not damage.
          if (error instanceof NotEnvProbeEpisode) throw new UsageError(`${dir}: ${error.message}: report-envprobe reads the EnvProbe episodes of a \`sweep envprobe --log\` folder (or a \`run envprobe\` episode)`);
          throw damaged(file, line, `unreadable ${type} record: ${(error as Error).message}`);
        }
      }
      if (end === text.length || end + 1 === text.length) lastLine = text.slice(start, end);
      start = end + 1;
    }
  });
  if (texts.length === 0) throw damaged(logDir, 0, "no log segments (an EnvProbe episode's log is <dir>/log/000000000000.jsonl)");
  let metrics: EpisodeMetrics;
  try {
    metrics = acc.result();
  } catch (error) {
    throw new UsageError(`${dir}: ${(error as Error).message}`);
  }
  const lastTick = /"tick":(\d+),"to":[^,]*,"type":"tick\.committed"/.exec(lastLine)?.[1];
  if (lastTick === undefined || Number(lastTick) !== metrics.horizon - 1) {
    throw damaged(files.at(-1) ?? logDir, texts.reduce((n, t) => n + t.split("\n").length - 1, 0), `the episode did not finish (its log ends ${lastTick === undefined ? "inside a tick" : `at tick ${lastTick}`}, the horizon is ${metrics.horizon} ticks): its metrics would be partial`);
  }
  return metrics;
}

/** Does this log text begin with a compact log's header (format 2, events/compactLog.ts)? */
function isCompactText(text: string): boolean {
  const end = text.indexOf("\n");
  const first = text.slice(0, end < 0 ? text.length : end);
  // Only a header whose meta begins with the format is parsed here; version-1 lines never hold it.
  if (!first.includes(`"meta":{"log":${COMPACT_LOG},`)) return false;
  try {
    return isCompactHeader(JSON.parse(first) as LogRecord);
  } catch {
    return false;
  }
}

/** Metrics of a compact log: every record decoded (the chain is not recomputed: that is `verify`'s), the same refusals as above. */
function compactMetrics(dir: string, file: string, text: string, acc: EpisodeAccumulator, damaged: (file: string, line: number, reason: string) => LogCorrupted): EpisodeMetrics {
  if (!text.endsWith("\n")) throw damaged(file, text.split("\n").length, "the last record is cut short (a torn tail)");
  let records: LogRecord[];
  try {
    records = decodeCompactText(text, false);
  } catch (error) {
    if (error instanceof CompactRecordDamaged) throw damaged(file, error.line ?? 0, error.reason);
    throw error;
  }
  for (const r of records) {
    try {
      acc.add(r.type, r.payload);
    } catch (error) {
      if (error instanceof NotEnvProbeEpisode) throw new UsageError(`${dir}: ${error.message}: report-envprobe reads the EnvProbe episodes of a \`sweep envprobe --log\` folder (or a \`run envprobe\` episode)`);
      throw damaged(file, r.seq + 1, `unreadable ${r.type} record: ${(error as Error).message}`);
    }
  }
  let metrics: EpisodeMetrics;
  try {
    metrics = acc.result();
  } catch (error) {
    throw new UsageError(`${dir}: ${(error as Error).message}`);
  }
  const last = records.at(-1)!;
  if (last.type !== "tick.committed" || last.tick !== metrics.horizon - 1) {
    throw damaged(file, records.length, `the episode did not finish (its log ends ${last.type !== "tick.committed" ? "inside a tick" : `at tick ${last.tick}`}, the horizon is ${metrics.horizon} ticks): its metrics would be partial`);
  }
  return metrics;
}

export interface CellMetrics {
  readonly world: string;
  readonly regime: string;
  readonly policy: string;
  readonly n: number;
  readonly accuracy: number;
  readonly procedural: number | null;
  readonly spatial: number | null;
  readonly success: number;
  readonly probes: number;
  /** Mean over episodes that probed of useful / probes. */
  readonly usefulRate: number | null;
  /** Mean of useful / B. */
  readonly usefulPerBudget: number;
  readonly collapsed: number;
  readonly collapseOnset: number | null;
  readonly drift: { readonly n: number; readonly meanOffset: number | null; readonly medianOffset: number | null; readonly driftFirst: number; readonly actionFirst: number };
  /**
   * p_cw both ways, per belief per step (α = the config's highConfidence, 0.7): `p`, Pr(wrong | conf ≥ α)
   * (the paper's Table 7 "canonical" estimator), and `recall`-side `pGivenWrong`, Pr(conf ≥ α | wrong) =
   * |C_t| / |E_t| pooled (Proposition 5.5's p_cw), each with a Wilson interval.
   */
  readonly pcw: {
    readonly confident: number;
    readonly wrong: number;
    readonly p: number | null;
    readonly ci: readonly [number, number] | null;
    readonly wrongBeliefs: number;
    readonly pGivenWrong: number | null;
    readonly ciGivenWrong: readonly [number, number] | null;
  };
  readonly mutations: number;
}

const avg = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length);
const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function cellOf(episodes: readonly EpisodeMetrics[]): CellMetrics {
  const e0 = episodes[0]!;
  const probed = episodes.filter((e) => e.probes > 0);
  const offsets = episodes.filter((e) => e.collapse !== null && e.actionCollapse !== null).map((e) => e.actionCollapse! - e.collapse!);
  const confident = episodes.reduce((s, e) => s + e.highConfidence, 0);
  const wrong = episodes.reduce((s, e) => s + e.confidentWrong, 0);
  const ci = confident > 0 ? wilson(wrong, confident) : null;
  const wrongBeliefs = episodes.reduce((s, e) => s + e.wrongBeliefs, 0);
  const ciW = wrongBeliefs > 0 ? wilson(wrong, wrongBeliefs) : null;
  const nn = <T>(xs: readonly (T | null)[]) => xs.filter((x): x is T => x !== null);
  return {
    world: e0.world,
    regime: e0.regime,
    policy: e0.policy,
    n: episodes.length,
    accuracy: avg(episodes.map((e) => e.accuracy))!,
    procedural: avg(nn(episodes.map((e) => e.procedural))),
    spatial: avg(nn(episodes.map((e) => e.spatial))),
    success: avg(episodes.map((e) => (e.success ? 1 : 0)))!,
    probes: avg(episodes.map((e) => e.probes))!,
    usefulRate: avg(probed.map((e) => e.useful / e.probes)),
    usefulPerBudget: avg(episodes.map((e) => e.useful / e.budget))!,
    collapsed: avg(episodes.map((e) => (e.collapse === null ? 0 : 1)))!,
    collapseOnset: avg(nn(episodes.map((e) => e.collapse))),
    drift: {
      n: offsets.length,
      meanOffset: avg(offsets),
      medianOffset: median(offsets),
      driftFirst: offsets.length === 0 ? 0 : offsets.filter((o) => o > 0).length / offsets.length,
      actionFirst: offsets.length === 0 ? 0 : offsets.filter((o) => o < 0).length / offsets.length,
    },
    pcw: {
      confident, wrong, p: confident > 0 ? wrong / confident : null, ci: ci === null ? null : [ci.lower, ci.upper],
      wrongBeliefs, pGivenWrong: wrongBeliefs > 0 ? wrong / wrongBeliefs : null, ciGivenWrong: ciW === null ? null : [ciW.lower, ciW.upper],
    },
    mutations: avg(episodes.map((e) => e.mutations))!,
  };
}

/** Groups episodes into cells (world × regime × policy), in a stable order. */
export function cellsOf(episodes: readonly EpisodeMetrics[]): CellMetrics[] {
  const groups = new Map<string, EpisodeMetrics[]>();
  for (const e of episodes) {
    const key = `${e.world}|${e.regime}|${e.policy}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push(e);
  }
  return [...groups.values()].map((g) => cellOf(g.sort((a, b) => a.seed - b.seed)));
}
