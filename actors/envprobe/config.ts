// EnvProbe configuration: regimes (paper §5: horizons 20/30/40, mean mutation rates 0.02/0.10/0.30;
// and the release's S1–S3 presets), policies (the conditions) and the agent's miscalibration.
import { Schema } from "effect";
import { KINDS, type Kind } from "./kinds/index.ts";
import type { Cardinality, MutationTargets, Noise } from "./kinds/types.ts";
import { MAX_HORIZON } from "./limits.ts";

export interface Regime {
  readonly description: string;
  readonly horizon: number;
  readonly cardinality: Cardinality;
  readonly density: Cardinality;
  readonly noise: Noise;
  /** Per item, per step probability of an exogenous change, by world kind. */
  readonly rate: Readonly<Record<Kind, number>>;
  readonly targets: MutationTargets;
}

const same = (r: number): Record<Kind, number> => ({ objectstate: r, tooldag: r, graphnav: r });

/**
 * `low`/`medium`/`high` are the paper's regimes (μ̄ applied per item per step, probes included);
 * `S1`–`S3` are the release's presets with its real per-world rates (reference §2.2). The
 * release's `distractor` noise appends an id that names nothing; our agents ignore unknown ids,
 * so S3 runs with `partial` noise (documented in docs/envprobe.md).
 */
export const REGIMES: Readonly<Record<string, Regime>> = {
  low: { description: "paper low stress: H=20, small worlds, μ̄=0.02, clean observations", horizon: 20, cardinality: "low", density: "low", noise: "clean", rate: same(0.02), targets: "paper" },
  medium: { description: "paper medium stress: H=30, medium worlds, μ̄=0.10, partial observations", horizon: 30, cardinality: "medium", density: "medium", noise: "partial", rate: same(0.1), targets: "paper" },
  high: { description: "paper high stress: H=40, large worlds, μ̄=0.30, partial observations", horizon: 40, cardinality: "high", density: "high", noise: "partial", rate: same(0.3), targets: "paper" },
  S1: { description: "release preset S1: static (no mutation), H=20", horizon: 20, cardinality: "low", density: "low", noise: "clean", rate: same(0), targets: "release" },
  S2: { description: "release preset S2: mild (0.15/0.10/0.10), H=30", horizon: 30, cardinality: "medium", density: "medium", noise: "partial", rate: { objectstate: 0.15, tooldag: 0.1, graphnav: 0.1 }, targets: "release" },
  S3: { description: "release preset S3: volatile (0.35/0.25/0.22), H=40", horizon: 40, cardinality: "high", density: "high", noise: "partial", rate: { objectstate: 0.35, tooldag: 0.25, graphnav: 0.22 }, targets: "release" },
};

export const POLICIES = {
  "no-probe": "never probes",
  random: "probes a uniformly random field with probability B/H each step (seeded stream policy/random)",
  periodic: "probes every ⌊H/B⌋ steps, the field with the largest reported staleness",
  "self-uncertainty": "probes the least confident field when some field's reported confidence is below α=0.5",
  "envprobe-simple": "ρ = c + s + u + d; probes argmax ρ when max ρ ≥ 1.5",
  "envprobe-cd": "structural only: ρ = c + d, threshold 0.75",
  "envprobe-minus-c": "ablation: ρ = s + u + d, threshold 1.125",
  "envprobe-minus-d": "ablation: ρ = c + s + u, threshold 1.125",
  "envprobe-minus-s": "ablation: ρ = c + u + d, threshold 1.125",
  "envprobe-minus-u": "ablation: ρ = c + s + d, threshold 1.125",
  "envprobe-judge": "EnvProbe-Simple's top-3 candidates and the belief table go to a model critic (LLM role `judge`, config llm.judge) that approves one probe or overrides it (act)",
  "envprobe-judge-standin": "DETERMINISTIC STAND-IN for the Judge (no model): Simple's top-3 candidates go to a fixed critic that approves the first the plan depends on that is unverified or stale ≥ 2; not the paper's Judge",
  oracle: "probes a known mismatched field (the first in field order; privileged)",
  "oracle-tw": "probes argmax w_i·1[b_i ≠ g_i] (privileged)",
  "oracle-beliefs": "test reference: beliefs are set to the world after every step (A_H = 1 by construction), never probes",
} as const;

export type Policy = keyof typeof POLICIES;
export const POLICY_NAMES = Object.keys(POLICIES) as Policy[];
/** The paper's grid: every policy but the −c/−d ablations and the oracle-belief reference. */
export const GRID_POLICIES: readonly Policy[] = ["no-probe", "random", "periodic", "self-uncertainty", "envprobe-simple", "envprobe-cd", "envprobe-minus-s", "envprobe-minus-u", "envprobe-judge-standin", "oracle", "oracle-tw"];
/** Policies that ask a model for every decision (the LLM Judge): they run through runEpisode, with the gateway. */
export const MODEL_POLICIES: readonly Policy[] = ["envprobe-judge"];
export const PRIVILEGED: readonly Policy[] = ["oracle", "oracle-tw", "oracle-beliefs"];

/**
 * How the scripted agent reports staleness and confidence: a stated model, every parameter a
 * config key a sweep can vary (docs/envprobe.md, "Calibration model").
 *
 *   reported staleness  ŝ_i = ⌊stalenessScale · τ_i⌋          (τ_i: steps since field i was verified)
 *   reported confidence conf_i = max(floor, base(source_i) · (1 − min(1, driftScale · μ̄))^ŝ_i − decay · ŝ_i)
 *
 * μ̄ is the regime's per-step mutation rate. With the defaults (stalenessScale 1, driftScale 1,
 * decay 0, base 1 for what was observed, probed or done, 0 for an unknown value) the confidence is
 * the probability that the field has not changed since it was verified: the agent is calibrated
 * about drift. driftScale < 1 (it believes the world drifts less than it does) or stalenessScale < 1
 * (it under-reports how long a field went unchecked) make it overconfident; > 1 underconfident.
 * `priorConfidence` is the base of a guessed prior (only with initialBeliefs "guess").
 * The settings before this model (stalenessScale 0.5, driftScale 0, decay 0.01, bases 0.95 / 0.98 /
 * 0.9 / 0.75, unknown 0.2, floor 0.3) are LEGACY_CALIBRATION.
 */
export const CalibrationSchema = Schema.Struct({
  stalenessScale: Schema.Number,
  driftScale: Schema.Number,
  decay: Schema.Number,
  priorConfidence: Schema.Number,
  observedConfidence: Schema.Number,
  probedConfidence: Schema.Number,
  actionConfidence: Schema.Number,
  unknownConfidence: Schema.Number,
  floor: Schema.Number,
});
export type Calibration = typeof CalibrationSchema.Type;

export const ConfigSchema = Schema.Struct({
  world: Schema.Literals(KINDS),
  regime: Schema.String,
  /** Overrides the regime's horizon. */
  horizon: Schema.optional(Schema.Int),
  policy: Schema.String,
  calibration: CalibrationSchema,
  rhoThreshold: Schema.Number,
  stalenessDivisor: Schema.Number,
  alpha: Schema.Number,
  highConfidence: Schema.Number,
  /** false reproduces the release's defect: probe answers never reach the beliefs. */
  writeBack: Schema.Boolean,
  /**
   * The agent's belief table at step 0. "gold": b₀ = g₀, as Algorithm 1 requires (default).
   * "guess" (option, not the paper's): what an LLM might assume before looking — doors and edges
   * open, each tool needing the previous tool's output, object and key places unknown.
   */
  initialBeliefs: Schema.Literals(["gold", "guess"]),
  /** Option (not the paper's; off by default): fields verified since the agent last acted are not probe candidates. */
  skipFresh: Schema.Boolean,
  /** Option (not the paper's; off by default): the Oracle probes only mismatched fields the plan depends on (highest d, then w). */
  oracleNeedsDependency: Schema.Boolean,
  /**
   * Option (not the paper's; absent by default): the scripted agent's imperfect tracking
   * (docs/envprobe.md, "Imperfect tracking"). Each step, each field independently is not taken in
   * with probability `lapse` (`persist` if it was not taken in the step before; default 0): what the
   * step's observation and action outcome would write to it is dropped and the entry stays as it
   * was (value, last-verified step, source). Probe answers are always taken in. The draws come from
   * the agent's stream `agent/tracking/<world>` (one unit per field per step, in field order), not
   * named after the policy: every policy of a (world, seed) sees the same lapses. Absent, the logs
   * are byte-identical to those written before the option existed.
   */
  tracking: Schema.optional(Schema.Struct({ lapse: Schema.Number, persist: Schema.optional(Schema.Number) })),
  /**
   * The LLM agent (actors/envprobe/llm.ts): the model of role `belief` writes the agent's belief
   * updates through the gateway each step. Absent (or null): the scripted agent, no `llm.*` records.
   */
  llm: Schema.optional(Schema.Struct({ belief: Schema.optional(Schema.NullOr(Schema.String)), judge: Schema.optional(Schema.NullOr(Schema.String)) })),
  /**
   * "pre-b0": the config is resolved with the defaults of the code before commit 7596a13 (b₀ = g₀),
   * PRE_B0_DEFAULTS, and condition envprobe-judge is that code's fixed critic. Set when a log header
   * written by that code is read (isPreB0Config); a --config may set it to run as that code did.
   * Absent: today's defaults.
   */
  legacy: Schema.optional(Schema.Literal("pre-b0")),
});
export type EnvprobeConfig = typeof ConfigSchema.Type;

export const defaultCalibration: Calibration = {
  stalenessScale: 1,
  driftScale: 1,
  decay: 0,
  priorConfidence: 0.75,
  observedConfidence: 1,
  probedConfidence: 1,
  actionConfidence: 1,
  unknownConfidence: 0,
  floor: 0,
};

/** The constants used before the calibration model (kept to reproduce earlier runs: `--config '{"calibration": …}'`). */
export const LEGACY_CALIBRATION: Calibration = {
  stalenessScale: 0.5,
  driftScale: 0,
  decay: 0.01,
  priorConfidence: 0.75,
  observedConfidence: 0.95,
  probedConfidence: 0.98,
  actionConfidence: 0.9,
  unknownConfidence: 0.2,
  floor: 0.3,
};

/** The options that are not the paper's, each off by default (docs/envprobe.md lists them). */
export const NON_PAPER_OPTIONS = {
  initialBeliefs: { paper: "gold", what: "\"guess\": the agent starts from guessed priors (b₀ ≠ g₀), so A_H also measures schema and map discovery" },
  skipFresh: { paper: false, what: "fields verified since the agent last acted are not probe candidates" },
  oracleNeedsDependency: { paper: false, what: "the Oracle probes only mismatched fields the next plan depends on (d > 0)" },
  writeBack: { paper: true, what: "false: probe answers never reach the beliefs (the release's defect)" },
  tracking: { paper: undefined, what: "{lapse: p, persist: q}: each step each field is not taken in from the observation and action outcome with probability p (q after a lapse), so visible state goes stale until a probe or a later observation repairs it" },
} as const;

export const defaultConfig: EnvprobeConfig = {
  world: "objectstate",
  regime: "medium",
  policy: "envprobe-simple",
  calibration: defaultCalibration,
  rhoThreshold: 1.5,
  stalenessDivisor: 10,
  alpha: 0.5,
  highConfidence: 0.7,
  writeBack: true,
  initialBeliefs: "gold",
  skipFresh: false,
  oracleNeedsDependency: false,
};

/**
 * The defaults of the code before commit 7596a13 ("b0 = g0, a calibration model, the paper's Oracle
 * and Judge"): guessed priors, the constant calibration (LEGACY_CALIBRATION: its driftScale 0 is the
 * confidence formula of that code, base − decay·ŝ), fresh fields never candidates, and an Oracle that
 * probes only mismatched fields the plan depends on. Condition envprobe-judge then is that code's
 * fixed critic (today's envprobe-judge-standin, its probes logged `judge:rho=…`).
 */
export const PRE_B0_DEFAULTS: EnvprobeConfig = {
  ...defaultConfig,
  calibration: LEGACY_CALIBRATION,
  initialBeliefs: "guess",
  skipFresh: true,
  oracleNeedsDependency: true,
  legacy: "pre-b0",
};

/** The keys of a config (and of its calibration) as resolved by the code before 7596a13: every one of them is in a header it wrote. */
const PRE_B0_REQUIRED = ["world", "regime", "policy", "calibration", "rhoThreshold", "stalenessDivisor", "alpha", "highConfidence", "writeBack"] as const;
const PRE_B0_OPTIONAL = ["horizon", "llm"] as const;
const PRE_B0_CALIBRATION = ["stalenessScale", "decay", "priorConfidence", "observedConfidence", "probedConfidence", "actionConfidence", "unknownConfidence", "floor"] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Is this a config the code before 7596a13 resolved (a log header it wrote)? A header holds its
 * resolved config: every key of the schema of its time. So a config with exactly that schema's keys
 * (all the required ones, `horizon`/`llm` optional, nothing else) and a calibration of exactly its
 * eight keys (no `driftScale`) was written by that code; one resolved since has `initialBeliefs`,
 * `skipFresh`, `oracleNeedsDependency` and `calibration.driftScale`. A --config for a new episode
 * cannot be one: it never names `policy` (the condition, refused by run and sweep), so a partial
 * config always gets today's defaults.
 */
export function isPreB0Config(raw: unknown): raw is Record<string, unknown> {
  if (!isRecord(raw)) return false;
  const keys = Object.keys(raw);
  if (!PRE_B0_REQUIRED.every((k) => k in raw)) return false;
  if (!keys.every((k) => (PRE_B0_REQUIRED as readonly string[]).includes(k) || (PRE_B0_OPTIONAL as readonly string[]).includes(k))) return false;
  const cal = raw.calibration;
  if (!isRecord(cal)) return false;
  const calKeys = Object.keys(cal);
  return calKeys.length === PRE_B0_CALIBRATION.length && PRE_B0_CALIBRATION.every((k) => k in cal);
}

/** The defaults a raw config is resolved with: PRE_B0_DEFAULTS for a header written before 7596a13 or a config that asks for them (`"legacy": "pre-b0"`), else today's. */
export const defaultsFor = (raw: unknown): EnvprobeConfig => (isPreB0Config(raw) || (isRecord(raw) && raw.legacy === "pre-b0") ? PRE_B0_DEFAULTS : defaultConfig);

/** Condition envprobe-judge under the pre-b0 semantics with no Judge model: the fixed critic of that code, not a model. */
export const isPreB0Judge = (c: EnvprobeConfig, policy: string): boolean => c.legacy === "pre-b0" && policy === "envprobe-judge" && judgeModelOf(c) === null;

export const horizonOf = (c: EnvprobeConfig): number => c.horizon ?? REGIMES[c.regime]!.horizon;

export { MAX_HORIZON };
export const budgetOf = (horizon: number): number => Math.max(1, Math.floor(horizon / 4));

/** Limits on what a new episode may ask for, not applied to logs already written (they stay readable). */
export const newEpisodeProblems = (c: EnvprobeConfig): string[] =>
  c.horizon !== undefined && c.horizon > MAX_HORIZON ? [`horizon: at most ${MAX_HORIZON} ticks (the paper's horizons are 20, 30 and 40), got ${c.horizon}`] : [];

export function configProblems(c: EnvprobeConfig): string[] {
  const out: string[] = [];
  if (REGIMES[c.regime] === undefined) out.push(`regime: unknown '${c.regime}' (known: ${Object.keys(REGIMES).join(", ")})`);
  if (c.horizon !== undefined && c.horizon <= 0) out.push(`horizon: expected a positive integer, got ${c.horizon}`);
  if (!(c.policy in POLICIES)) out.push(`policy: unknown '${c.policy}' (known: ${POLICY_NAMES.join(", ")})`);
  for (const [k, v] of Object.entries(c.calibration)) if (!(v >= 0 && v <= 1) && k !== "stalenessScale" && k !== "driftScale") out.push(`calibration.${k}: expected 0..1, got ${v}`);
  for (const k of ["stalenessScale", "driftScale"] as const) if (!(c.calibration[k] >= 0 && Number.isFinite(c.calibration[k]))) out.push(`calibration.${k}: expected a number ≥ 0, got ${c.calibration[k]}`);
  if (c.tracking !== undefined) {
    for (const k of ["lapse", "persist"] as const) {
      const v = c.tracking[k];
      if (v !== undefined && !(v >= 0 && v <= 1)) out.push(`tracking.${k}: expected a probability 0..1, got ${v}`);
    }
    if (beliefModelOf(c) !== null) out.push("tracking: models the scripted agent's belief update; with llm.belief the model writes the updates (drop one of them)");
  }
  if (MODEL_POLICIES.includes(c.policy as Policy) && judgeModelOf(c) === null && !isPreB0Judge(c, c.policy)) out.push(`policy: ${c.policy} asks a model (LLM role judge) for every decision; set llm.judge (--model judge=<model>) or use envprobe-judge-standin, the deterministic stand-in`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Belief sources and reported staleness/confidence (shared by the agent and the referee's mirror).

/** `model`: the LLM agent's own update (its staleness and confidence are the model's reports). */
export const SOURCE = { prior: 0, observed: 1, probed: 2, action: 3, unknown: 4, model: 5 } as const;

export const reportedStaleness = (age: number, cal: Calibration): number => Math.floor(age * cal.stalenessScale);

/** conf = max(floor, base(source) · (1 − min(1, driftScale·μ̄))^ŝ − decay·ŝ), to two decimals; an unknown value reports its base. */
export function reportedConfidence(source: number, stale: number, cal: Calibration, drift: number): number {
  const base =
    source === SOURCE.observed ? cal.observedConfidence
    : source === SOURCE.probed ? cal.probedConfidence
    : source === SOURCE.action ? cal.actionConfidence
    : source === SOURCE.prior ? cal.priorConfidence
    : cal.unknownConfidence;
  if (source === SOURCE.unknown) return base;
  const keep = cal.driftScale === 0 ? 1 : Math.pow(1 - Math.min(1, cal.driftScale * drift), stale);
  return Math.round(Math.max(cal.floor, base * keep - cal.decay * stale) * 100) / 100;
}

/**
 * A report the LLM agent's model made for a field: (staleness, confidence, step reported). Until the
 * field is set again by anything else (a probe answer, a scripted fallback) it stands for the
 * field's report: staleness ages one per step, confidence stays what the model said.
 */
export type ModelReport = readonly [stale: number, conf: number, at: number];

export const modelStaleness = (r: ModelReport, t: number): number => r[0] + Math.max(0, t - r[2]);

/** The tracking model's parameters, or null when the option is absent (the paper's agent). */
export const trackingOf = (c: EnvprobeConfig): { lapse: number; persist: number } | null => (c.tracking === undefined ? null : { lapse: c.tracking.lapse, persist: c.tracking.persist ?? 0 });

/** The model of the LLM agent, or null for the scripted agent. */
export const beliefModelOf = (c: EnvprobeConfig): string | null => c.llm?.belief ?? null;

/** The model of the LLM Judge (role `judge`), or null. */
export const judgeModelOf = (c: EnvprobeConfig): string | null => c.llm?.judge ?? null;

/** Does an episode of this config ask a model (the belief agent, or the Judge when its policy is envprobe-judge)? */
export const asksModel = (c: EnvprobeConfig): boolean => beliefModelOf(c) !== null || (MODEL_POLICIES.includes(c.policy as Policy) && judgeModelOf(c) !== null);
