// The EnvProbe world actor: owns the true field values, executes the agent's decision each step
// (a task action, or a probe that reads fields and costs the step), then applies exogenous
// mutation — on every step, probes included (paper semantics; the release froze the world during
// probes, reference §10.2) — and observes with noise. It is also the referee: it mirrors the
// agent's reported belief changes and scores every step (exact per-field match, paper Eq. 1),
// so every metric is in the log. Mutation and noise draw from exogenous streams named without
// the condition: all policies on one seed face the same draws (common random numbers).
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { reportedConfidence, reportedStaleness, SOURCE, type Calibration } from "./config.ts";
import { applyAction, isSuccess, mutate, observe, probe } from "./kinds/operations.ts";
import type { MutationTargets, Noise, WorldSpec } from "./kinds/types.ts";
import { AGENT_ID } from "./agent.ts";
import type { EnvprobeEntries } from "./events.ts";

export interface EnvParams {
  readonly horizon: number;
  readonly budget: number;
  readonly rate: number;
  readonly targets: MutationTargets;
  readonly noise: Noise;
  readonly calibration: Calibration;
  readonly highConfidence: number;
  /** Send each step's score (with the wrong fields) to the agent: privileged policies only. */
  readonly scoreToAgent: boolean;
  /** Send the true values after each step (the oracle-belief reference). */
  readonly goldToAgent: boolean;
  /** The agent is an LLM agent: its model's reported confidences (in `envprobe.believed`) are the ones audited. */
  readonly modelReports?: boolean;
}

export interface EnvInput {
  readonly spec: WorldSpec;
  readonly params: EnvParams;
  readonly seed: number;
  /** The agent's belief table at step 0 (its priors after the first observation). */
  readonly mirror: { readonly values: readonly string[]; readonly verified: readonly number[]; readonly source: readonly number[] };
}

export interface EnvContext {
  readonly static: { readonly spec: WorldSpec; readonly params: EnvParams; readonly types: readonly number[] };
  t: number;
  done: boolean;
  success: boolean;
  used: number;
  values: string[];
  /** `conf` (LLM agents only): per field, the confidence the model reported, or -1 (the calibrated one). */
  mirror: { conf?: number[]; values: string[]; verified: number[]; source: number[] };
  rng: { mutation: StreamState; noise: StreamState };
}

export function initialEnvContext(input: EnvInput): EnvContext {
  return {
    static: { spec: input.spec, params: input.params, types: input.spec.layout.fields.map((f) => (f.type === "procedural" ? 0 : 1)) },
    t: 0,
    done: false,
    success: false,
    used: 0,
    values: [...input.spec.initial],
    mirror: {
      ...(input.params.modelReports === true ? { conf: input.mirror.values.map(() => -1) } : {}),
      source: [...input.mirror.source], values: [...input.mirror.values], verified: [...input.mirror.verified],
    },
    rng: { mutation: deriveStream(input.seed, "world/mutation"), noise: deriveStream(input.seed, "world/noise") },
  };
}

function onDecided(ctx: EnvContext, event: RecordIn<EnvprobeEntries, "envprobe.decided">): Emitted[] {
  if (ctx.done) return [];
  const p = event.payload;
  const { spec, params } = ctx.static;
  ctx.t = p.t;
  let valid: boolean;
  let reason: string;
  let answer: [number, string][] = [];
  let extra: Record<string, string> = {};
  let useful = false;
  if (p.kind === "probe") {
    if (ctx.used >= params.budget) {
      valid = false;
      reason = "budget_exhausted";
    } else {
      ctx.used++;
      const a = probe(spec, ctx.values, p.action);
      valid = a.valid;
      reason = a.reason;
      answer = a.pairs;
      extra = a.extra;
      useful = a.pairs.some(([i, v]) => ctx.mirror.values[i] !== v);
    }
  } else {
    const o = applyAction(spec, ctx.values, p.action);
    valid = o.valid;
    reason = o.reason;
  }
  ctx.success = isSuccess(spec.layout, ctx.values);
  ctx.done = ctx.success || p.t >= params.horizon;
  const mutation = new Draws(ctx.rng.mutation);
  const changes = mutate(spec, ctx.values, params.rate, params.targets, mutation);
  const noise = new Draws(ctx.rng.noise);
  const obs = observe(spec, ctx.values, params.noise, noise);
  ctx.rng = { mutation: mutation.state, noise: noise.state };
  const out: Emitted[] = [];
  if (changes.length > 0) out.push({ type: "envprobe.mutated", to: null, payload: { changes, t: p.t } });
  const stepped: Record<string, unknown> = {
    action: p.action, answer, done: ctx.done, extra,
  };
  if (params.goldToAgent) stepped.gold = [...ctx.values];
  Object.assign(stepped, { kind: p.kind, obs: obs.pairs, probesUsed: ctx.used, reason, seen: obs.seen, success: ctx.success, t: p.t, useful, valid });
  out.push({ type: "envprobe.stepped", to: AGENT_ID, payload: stepped });
  return out;
}

function onBelieved(ctx: EnvContext, event: RecordIn<EnvprobeEntries, "envprobe.believed">): Emitted[] {
  const p = event.payload;
  const m = ctx.mirror;
  for (const [i, v, verified, source] of p.set) {
    m.values[i] = v;
    m.verified[i] = verified;
    m.source[i] = source;
    if (m.conf !== undefined && source !== SOURCE.model) m.conf[i] = -1;
  }
  if (m.conf !== undefined) for (const [i, , conf] of p.reports ?? []) m.conf[i] = conf;
  const { params, types } = ctx.static;
  const wrong: number[] = [];
  const w: [number, number] = [0, 0];
  const n: [number, number] = [0, 0];
  let hc = 0;
  let cw = 0;
  for (let i = 0; i < ctx.values.length; i++) {
    const type = types[i]!;
    n[type]!++;
    const bad = m.values[i] !== ctx.values[i];
    if (bad) (wrong.push(i), w[type]!++);
    const model = m.conf?.[i] ?? -1;
    const conf = model >= 0 ? model : reportedConfidence(m.source[i]!, reportedStaleness(p.t - m.verified[i]!, params.calibration), params.calibration, params.rate);
    if (conf >= params.highConfidence && m.source[i] !== SOURCE.unknown) {
      hc++;
      if (bad) cw++;
    }
  }
  return [{ type: "envprobe.scored", to: params.scoreToAgent ? AGENT_ID : null, payload: { cw, done: ctx.done, hc, n, success: ctx.success, t: p.t, w, wrong } }];
}

/** The world's record handlers (services/envprobe/direct.ts delivers records to them too). */
export const envHandlers: HandlerTable<EnvContext, EnvprobeEntries, "envprobe.decided" | "envprobe.believed"> = {
  "envprobe.decided": onDecided,
  "envprobe.believed": onBelieved,
};

export const envLogic = recordActorLogic({
  context: initialEnvContext,
  handlers: envHandlers,
  valueOf: () => "running",
});
