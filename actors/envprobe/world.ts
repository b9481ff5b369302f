// `envprobe`: one EnvProbe episode (paper "Ask the World Before Acting", reference/envprobe.md).
// Config picks the world kind (objectstate, tooldag, graphnav) and the regime; the condition is
// the probing policy. One tick is one step t = tick + 1 of the horizon H (probes included):
//   tick.started → agent: envprobe.decided → env: [envprobe.mutated] envprobe.stepped
//   → agent: envprobe.believed → env: envprobe.scored
// After success the remaining ticks are empty (the episode is over; nothing evolves).
import { configDecoder } from "../configDecoder.ts";
import type { ActorDefinition, PhaseStep, RecordActorLogic, WorldDefinition } from "../actor.ts";
import { deriveStream, Draws } from "../rng.ts";
import { AGENT_ID, agentLogic, ENV_ID, initialAgentContext, type AgentContext, type AgentInput } from "./agent.ts";
import { trackingOf, beliefModelOf, budgetOf, defaultsFor, isPreB0Judge, judgeModelOf, MODEL_POLICIES, ConfigSchema, configProblems, defaultConfig, horizonOf, newEpisodeProblems, POLICIES, PRIVILEGED, REGIMES, type EnvprobeConfig, type Policy } from "./config.ts";
import { envLogic, type EnvContext, type EnvInput } from "./environment.ts";
import { parseAction } from "./kinds/grammar.ts";
import { generate, observe } from "./kinds/operations.ts";
import type { WorldSpec } from "./kinds/types.ts";
import type { EnvprobeDecidedPayload, EnvprobeSteppedPayload } from "./events.ts";
import { InputRejected } from "../../events/inputRejected.ts";
import { envprobeEvents } from "./events.ts";

const decode = configDecoder("envprobe", ConfigSchema);

/** The world a seed generates (pure; the same for every policy). */
export function worldSpecOf(config: EnvprobeConfig, seed: number): WorldSpec {
  const regime = REGIMES[config.regime]!;
  return generate(config.world, { cardinality: regime.cardinality, density: regime.density }, new Draws(deriveStream(seed, "world/layout")));
}

export function inputsOf(config: EnvprobeConfig, seed: number): { agent: AgentInput; env: EnvInput } {
  const regime = REGIMES[config.regime]!;
  const spec = worldSpecOf(config, seed);
  const horizon = horizonOf(config);
  const budget = budgetOf(horizon);
  const policy = config.policy as Policy;
  const first = observe(spec, spec.initial, "clean", new Draws(deriveStream(seed, "world/first-observation")));
  const model = beliefModelOf(config);
  const judge = judgeModelOf(config);
  const tracking = trackingOf(config);
  const agent: AgentInput = {
    layout: spec.layout,
    params: {
      policy, horizon, budget, calibration: config.calibration, rhoThreshold: config.rhoThreshold, stalenessDivisor: config.stalenessDivisor, alpha: config.alpha, writeBack: config.writeBack,
      drift: regime.rate[config.world], skipFresh: config.skipFresh, oracleNeedsDependency: config.oracleNeedsDependency,
      ...(model === null ? {} : { beliefModel: model }),
      ...(tracking === null ? {} : { tracking }),
      ...(judge === null || policy !== "envprobe-judge" ? {} : { judgeModel: judge }),
      ...(isPreB0Judge(config, policy) ? { preB0Judge: true } : {}),
    },
    seed,
    first,
    ...(config.initialBeliefs === "gold" ? { initial: spec.initial } : {}),
  };
  const start = initialAgentContext(agent);
  const env: EnvInput = {
    spec,
    params: {
      horizon, budget, rate: regime.rate[config.world], targets: regime.targets, noise: regime.noise, calibration: config.calibration,
      highConfidence: config.highConfidence, scoreToAgent: policy === "oracle" || policy === "oracle-tw", goldToAgent: policy === "oracle-beliefs",
      ...(model === null ? {} : { modelReports: true }),
    },
    seed,
    mirror: { values: start.values, verified: start.verified, source: start.source },
  };
  return { agent, env };
}

export const envprobeWorld: WorldDefinition<EnvprobeConfig> = {
  name: "envprobe",
  events: envprobeEvents,
  description: "EnvProbe: budgeted probing of a belief table in ObjectState / ToolDAG / GraphNav worlds (config `world`, `regime`; `llm.belief` for the LLM agent); conditions are probing policies",
  defaultConfig,
  conditions: Object.fromEntries(Object.entries(POLICIES).map(([k, description]) => [k, { description }])),
  defaultCondition: "envprobe-simple",

  // A header written before commit 7596a13 (b₀ = g₀) is resolved with the defaults of its time, so its
  // log replays as it ran; any other config, a --config above all, with today's (config.ts defaultsFor).
  resolveConfig(raw) {
    const defaults = defaultsFor(raw);
    const merged = { ...defaults, ...((raw ?? {}) as object) } as Record<string, unknown>;
    if (raw !== null && typeof raw === "object" && "calibration" in raw) merged.calibration = { ...defaults.calibration, ...((raw as { calibration: object }).calibration ?? {}) };
    const config: EnvprobeConfig = decode(merged);
    const problems = configProblems(config);
    if (problems.length > 0) throw new InputRejected("config", `invalid envprobe config:\n  - ${problems.join("\n  - ")}`);
    return config;
  },

  applyCondition(config, condition) {
    if (!(condition in POLICIES)) throw new InputRejected("condition", `unknown condition '${condition}' for envprobe (known: ${Object.keys(POLICIES).join(", ")})`);
    if (MODEL_POLICIES.includes(condition as Policy) && judgeModelOf(config) === null && !isPreB0Judge(config, condition)) {
      throw new Error(`condition ${condition}: the Judge is a model critic (LLM role judge); set its model in the config ("llm": {"judge": "<model>"}) and give an endpoint, or run envprobe-judge-standin, the deterministic stand-in`);
    }
    return { ...config, policy: condition };
  },

  defaultTicks: (config) => horizonOf(config),
  // The metrics take the log's tick count for H, and the budget is ⌊H/4⌋: a tick count apart from H
  // ran empty ticks past the horizon or cut the episode short, and the summary misstated both.
  lengthFixedBy: (n, parentTicks) =>
    parentTicks === undefined
      ? `an envprobe episode runs its horizon H, one tick a step (budget ⌊H/4⌋), so its length is H; set the horizon in the config instead: --config '{"horizon": ${n}}' (or a file holding it)`
      : `an envprobe fork runs to its parent's horizon H = ${parentTicks} (one tick a step); a fork keeps its parent's config, so set the horizon where the parent runs (run envprobe --config '{"horizon": ${n}}') and fork that`,

  conditionConfigKey: "policy",
  newEpisodeProblems,

  actors(config, seed): ActorDefinition[] {
    const { agent, env } = inputsOf(config, seed);
    return [
      { id: AGENT_ID, logic: paramsOnRestore(agentLogic, AGENT_ID, config, seed), input: agent },
      { id: ENV_ID, logic: paramsOnRestore(envLogic, ENV_ID, config, seed), input: env },
    ];
  },

  tickPlan(_config, tick): PhaseStep[] {
    return [{ type: "tick.started", to: AGENT_ID, payload: { clock: {}, tick } }];
  },

  // Keys in sorted order (canonical JSON's no-copy path).
  hashView(actorId, context) {
    if (actorId === ENV_ID) {
      const c = context as EnvContext;
      return { done: c.done, mirror: c.mirror, rng: c.rng, success: c.success, t: c.t, used: c.used, values: c.values };
    }
    const c = context as AgentContext;
    // Reported staleness and confidence are a pure function of (t, verified, source, calibration)
    // and, for an LLM agent, of its model's standing reports (in `llm`): not hashed again.
    // Option tracking: its stream and lapse state are hashed (absent, the view is as before it existed).
    if (c.tracking !== undefined) return { done: c.done, know: c.know, lastAct: c.lastAct, lastProbe: c.lastProbe, rng: c.rng, source: c.source, t: c.t, tracking: c.tracking, used: c.used, values: c.values, verified: c.verified, wrong: c.wrong };
    if (c.llm !== undefined) return { done: c.done, know: c.know, lastAct: c.lastAct, lastProbe: c.lastProbe, llm: c.llm, rng: c.rng, source: c.source, t: c.t, used: c.used, values: c.values, verified: c.verified, wrong: c.wrong };
    return { done: c.done, know: c.know, lastAct: c.lastAct, lastProbe: c.lastProbe, rng: c.rng, source: c.source, t: c.t, used: c.used, values: c.values, verified: c.verified, wrong: c.wrong };
  },

  diffView(actorId, context) {
    const { static: _static, ...rest } = context as { static: unknown };
    return { actor: actorId, ...rest };
  },

  // DESIGN §8: a `probe <tool>` span per probe step, with what its decision named: the field the
  // policy probed (by name, from the layout the seed generates; the records hold indices), the
  // entity the probe asks about, and the fields its answer wrote back.
  spansOf(config, seed) {
    let fields: readonly string[] | undefined;
    const nameOf = (i: number): string => (fields ??= worldSpecOf(config, seed).layout.fields.map((f) => f.name))[i] ?? String(i);
    const budget = budgetOf(horizonOf(config));
    return (record, cause) => {
      if (record.type !== "envprobe.stepped") return null;
      const p = record.payload as EnvprobeSteppedPayload;
      if (p.kind !== "probe") return null;
      const decided = cause?.type === "envprobe.decided" ? (cause.payload as EnvprobeDecidedPayload) : null;
      const parsed = parseAction(p.action);
      const tool = parsed?.verb ?? p.action.split("(")[0] ?? p.action;
      // A probe refused for an exhausted budget spent none of it.
      const spent = p.reason === "budget_exhausted" ? 0 : 1;
      return {
        name: `probe ${tool}`,
        attributes: {
          "probetown.probe.tool": tool,
          "probetown.probe.target": parsed?.args.join(",") ?? "",
          "probetown.probe.action": p.action,
          ...(decided === null || decided.field < 0 ? {} : { "probetown.probe.field": nameOf(decided.field), "probetown.probe.field_index": decided.field, "probetown.probe.why": decided.why }),
          "probetown.probe.answered_fields": p.answer.map(([i]) => nameOf(i)),
          "probetown.probe.useful": p.useful,
          "probetown.probe.allowed": p.valid,
          ...(p.reason === "ok" ? {} : { "probetown.probe.reason": p.reason }),
          "probetown.probe.budget_before": budget - p.probesUsed + spent,
          "probetown.probe.budget_after": budget - p.probesUsed,
          "probetown.probe.used": p.probesUsed,
          "probetown.step": p.t,
        },
      };
    };
  },

  reconfigure(actorId, context, config, seed) {
    // A fork to another policy: the agent gets the new policy's parameters; the world is unchanged.
    if (actorId === ENV_ID) {
      const c = context as EnvContext;
      const { env } = inputsOf(config, seed);
      return { ...c, static: { ...c.static, params: env.params } };
    }
    const c = context as AgentContext;
    const { agent } = inputsOf(config, seed);
    const policy = config.policy as Policy;
    return { ...c, static: { ...c.static, params: agent.params }, rng: policy === "random" ? (c.rng ?? deriveStream(seed, "policy/random")) : c.rng };
  },
};

/**
 * An actor restored from a snapshot takes its parameters from the episode's config, as a fork into
 * another condition does (`reconfigure`), never from the snapshot: they are a function of the config
 * and seed, outside the state hash, and a snapshot written by earlier code holds that code's set (one
 * written before 7596a13 has no skipFresh, oracleNeedsDependency, drift or calibration.driftScale, so
 * a fork from it ran with those undefined). For a snapshot of today's code this changes nothing.
 */
function paramsOnRestore<Context, Input>(logic: RecordActorLogic<Context, Input>, id: string, config: EnvprobeConfig, seed: number): RecordActorLogic<Context, Input> {
  return {
    ...logic,
    restoreSnapshot: (persisted, scope) => {
      const restored = logic.restoreSnapshot!(persisted, scope);
      return { ...restored, context: envprobeWorld.reconfigure!(id, restored.context, config, seed) as Context };
    },
  };
}

export { PRIVILEGED };
