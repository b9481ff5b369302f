// `aura-scene`: one moment of a hand-written scene (the implicit-intent benchmark's snapshot) as an
// episode. Actors: the environment (public layer), one actor per scene agent (private state,
// beliefs, plan) and the controller `probe/aura`. Tick t puts the t-th query of the episode's
// (seeded) order to the controller as `user.query`; its probes and answers are pumped to
// quiescence inside the tick, so each query is one tick of the log and `verify` replays it.
import { Schema } from "effect";
import type { ActorDefinition, PhaseStep, WorldDefinition } from "../actor.ts";
import { configDecoder } from "../configDecoder.ts";
import { controllerMachine, type ControllerContext, type ControllerInput } from "./controller/machine.ts";
import { sceneAgentLogic, type SceneAgentContext } from "./agent.ts";
import { sceneEnvLogic, type SceneEnvContext } from "./environment.ts";
import { agentIdOf, canonicalScene, CONTROLLER_ID, focusLocationOf, planOf, rosterOf, SCENE_ENV_ID, sceneTimeOf, type Scene } from "./scene.ts";
import type { StrategyConfig, StrategyKind } from "./strategies.ts";
import { AGENT_STATE_TOOLS, ENVIRONMENT_TOOLS } from "./tools.ts";
import { FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS } from "./conditions.ts";
import { deriveStream } from "../rng.ts";
import type { ProbeAnsweredPayload, ProbeDeniedPayload, ProbeRequestedPayload } from "./events.ts";
import { InputRejected } from "../../events/inputRejected.ts";
import { sceneEvents } from "./events.ts";

const Str = Schema.String;
const StrMap = Schema.Record(Str, Str);

export const SceneSchema = Schema.Struct({
  name: Str,
  summary: Str,
  public_state: Schema.Record(Str, Schema.Struct({ location: Str, action: Str })),
  private_state: Schema.Record(Str, StrMap),
  beliefs_about_others: Schema.Record(Str, Schema.Record(Str, StrMap)),
  plans: Schema.optional(Schema.Record(Str, Schema.Array(Str))),
});

const LabelsSchema = Schema.Struct({ subcategory: Str, subject: Schema.NullOr(Str), target: Schema.NullOr(Str), gold: Schema.Array(Str) });

export const SceneConfigSchema = Schema.Struct({
  scene: SceneSchema,
  queries: Schema.Array(Schema.Struct({ id: Str, text: Str, asker: Schema.optional(Schema.NullOr(Str)) })),
  /** The 5 agent-state probes (implicit intent) or the 8 environment tools (factual, privacy). */
  registry: Schema.Literals(["agent-state", "environment"]),
  /** A town snapshot's extras: the public event feed, each agent's recent memories, the places and their types. */
  town: Schema.optional(Schema.Struct({ events: Schema.Array(Str), memories: Schema.Record(Str, Schema.Array(Str)), places: Schema.Record(Str, Str) })),
  /** Query ids in the order they are asked (the eval runner shuffles it with the seed). */
  order: Schema.Array(Str),
  labels: Schema.Record(Str, LabelsSchema),
  maxSteps: Schema.Int,
  policy: Schema.Struct({ allow: Schema.Array(Str), deny: Schema.Array(Str) }),
  /** Set by the condition. */
  strategy: Schema.Struct({ kind: Str, maxSteps: Schema.Int, memory: Schema.Boolean, reuse: Schema.optional(Schema.Boolean), inferrer: Str }),
  /**
   * LLM backends (through the gateway): the model of each controller role, null for the
   * deterministic backend. Absent: every role is deterministic (no `llm.*` records).
   */
  llm: Schema.optional(Schema.Struct({ intent: Schema.NullOr(Str), planner: Schema.NullOr(Str), answer: Schema.NullOr(Str) })),
});

export type SceneConfig = typeof SceneConfigSchema.Type;

export { FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS };

const demoScene: Scene = {
  name: "demo",
  summary: "Town Square, 09:00. Ana is painting; Ben is reading.",
  public_state: { Ana: { location: "Town Square", action: "painting" }, Ben: { location: "Town Square", action: "reading" } },
  private_state: { Ana: { availability: "available", emotional_state: "calm", unspoken_goal: "finish the mural" }, Ben: { availability: "busy", emotional_state: "tired", unspoken_goal: "avoid the meeting" } },
  beliefs_about_others: { Ana: { Ben: { availability: "available", emotional_state: "happy" } }, Ben: { Ana: { availability: "busy", emotional_state: "unknown" } } },
};

export const defaultSceneConfig: SceneConfig = {
  scene: demoScene,
  queries: [{ id: "1", text: "Is Ben around?" }],
  order: ["1"],
  labels: {},
  maxSteps: 3,
  registry: "agent-state",
  policy: { allow: ["*"], deny: [] },
  strategy: { kind: "aura-intent", maxSteps: 3, memory: true, reuse: false, inferrer: "deterministic" },
};

const decode = configDecoder("aura-scene", SceneConfigSchema);

function problems(c: SceneConfig): string[] {
  const out: string[] = [];
  const ids = new Set(c.queries.map((q) => q.id));
  const twice = c.queries.map((q) => q.id).filter((id, i, all) => all.indexOf(id) !== i);
  for (const id of new Set(twice)) out.push(`queries: the id '${id}' is used more than once (order names queries by id)`);
  if (c.order.length === 0) out.push("order: expected at least one query id (the scene asks one query per tick)");
  for (const id of c.order) if (!ids.has(id)) out.push(`order: no query with id '${id}'`);
  if (c.maxSteps < 0) out.push(`maxSteps: expected ≥ 0, got ${c.maxSteps}`);
  const roster = rosterOf(c.scene);
  for (const n of roster) if (c.scene.private_state[n] === undefined) out.push(`scene.private_state: no entry for '${n}'`);
  for (const q of c.queries) {
    if (q.asker != null && !roster.includes(q.asker)) out.push(`queries: query '${q.id}' is asked by '${q.asker}', who is not in the scene (residents: ${roster.join(", ")})`);
  }
  return out;
}

export const auraSceneWorld: WorldDefinition<SceneConfig> = {
  name: "aura-scene",
  events: sceneEvents,
  description: "AURA implicit-intent scene: one moment of a hand-written scene, one query per tick, answered by the AURA controller or a baseline (paper §5.2, A14)",
  defaultConfig: defaultSceneConfig,
  conditions: SCENE_CONDITIONS,
  defaultCondition: "aura-intent",

  resolveConfig(raw) {
    const merged = { ...defaultSceneConfig, ...((raw ?? {}) as object) };
    const config: SceneConfig = decode(merged);
    const found = problems(config);
    if (found.length > 0) throw new InputRejected("config", `invalid aura-scene config:\n  - ${found.join("\n  - ")}`);
    return config;
  },

  applyCondition(config, condition) {
    const c = SCENE_CONDITIONS[condition];
    if (c === undefined) throw new InputRejected("condition", `unknown condition '${condition}' for aura-scene (known: ${Object.keys(SCENE_CONDITIONS).join(", ")})`);
    // The factual conditions choose among the environment tools: on the agent-state registry they
    // would probe nothing and answer as if probing did not help.
    if (config.registry !== "environment" && !(IMPLICIT_CONDITIONS as readonly string[]).includes(condition)) {
      throw new InputRejected("config", `invalid aura-scene config for condition '${condition}': it probes the environment registry (registry: "environment", as \`eval factual\` and \`eval privacy\` build from an AURATown snapshot), but this config's registry is '${config.registry}'; its conditions: ${IMPLICIT_CONDITIONS.join(", ")}`);
    }
    const strategy: StrategyConfig = { kind: c.kind, maxSteps: c.steps ?? config.maxSteps, memory: c.memory, reuse: c.reuse === true, inferrer: "deterministic" };
    return { ...config, strategy };
  },

  defaultTicks: (config) => config.order.length,

  actors(config, seed): ActorDefinition[] {
    const scene = canonicalScene(config.scene as Scene);
    const controller = controllerInputOf(config, scene, seed);
    const agents = rosterOf(scene).map((name) => ({
      id: agentIdOf(name),
      logic: sceneAgentLogic,
      input: { name, private: scene.private_state[name] ?? {}, beliefs: scene.beliefs_about_others[name] ?? {}, plan: planOf(scene, name), memories: config.town?.memories[name] ?? [], policy: config.policy },
    }));
    return [
      ...agents,
      { id: SCENE_ENV_ID, logic: sceneEnvLogic, input: { scene, policy: config.policy, asker: null, events: config.town?.events ?? [], places: config.town === undefined ? null : Object.keys(config.town.places).sort(), tools: controller.tools } },
      { id: CONTROLLER_ID, logic: controllerMachine, input: controller },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
  },

  tickPlan(config, tick): PhaseStep[] {
    const id = config.order[tick];
    const q = config.queries.find((x) => x.id === id);
    if (q === undefined) return [];
    return [
      { type: "tick.started", to: CONTROLLER_ID, payload: { clock: {}, tick } },
      { type: "user.query", to: CONTROLLER_ID, payload: { queryId: q.id, scene: config.scene.name, text: q.text } },
    ];
  },

  // DESIGN §8: a `probe <tool>` span per probe answer or refusal (the record that ends the probe),
  // with what its request named: the field read and the tool's arguments (the answer repeats only
  // the target).
  spansOf: () => (record, cause) => {
    if (record.type !== "probe.answered" && record.type !== "probe.denied") return null;
    // An answer or a refusal: what they share, and what only one of them has.
    const p = record.payload as Pick<ProbeAnsweredPayload, "tool" | "target" | "budgetAfter" | "queryId" | "call"> & Partial<Pick<ProbeAnsweredPayload, "ok" | "disclosure"> & Pick<ProbeDeniedPayload, "reason">>;
    const request = cause?.type === "probe.requested" ? (cause.payload as ProbeRequestedPayload) : null;
    const allowed = record.type === "probe.answered";
    const args = Object.entries(request?.args ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    return {
      name: `probe ${p.tool}`,
      attributes: {
        "probetown.probe.tool": p.tool,
        "probetown.probe.target": p.target ?? "",
        ...(request?.field == null ? {} : { "probetown.probe.field": request.field }),
        ...Object.fromEntries(args.map(([k, v]) => [`probetown.probe.arg.${k}`, v])),
        "probetown.probe.call": p.call,
        "probetown.probe.answered_by": record.from,
        "probetown.probe.allowed": allowed,
        "probetown.probe.budget_before": request?.budgetBefore ?? p.budgetAfter + 1,
        "probetown.probe.budget_after": p.budgetAfter,
        "probetown.probe.useful": allowed && p.ok === true,
        "probetown.probe.disclosure": p.disclosure ?? 0,
        "probetown.query": p.queryId,
        ...(p.reason === undefined ? {} : { "probetown.probe.reason": p.reason }),
      },
    };
  },

  hashView(actorId, context) {
    if (actorId === CONTROLLER_ID) {
      const c = context as ControllerContext;
      return { current: c.current, memory: c.memory, recall: c.recall, queries: c.queries, rng: c.rng };
    }
    const c = context as SceneEnvContext | SceneAgentContext;
    return { answered: c.answered, denied: c.denied };
  },

  // A fork to another condition: the controller takes the new condition's strategy and its own
  // tie-break stream (fresh from the seed: no run of that condition reached the fork tick); what it
  // has learnt (probe answers in memory, queries answered) stays. The scene's actors are unchanged.
  reconfigure(actorId, context, config, seed) {
    if (actorId !== CONTROLLER_ID) return context;
    const input = controllerInputOf(config, canonicalScene(config.scene as Scene), seed);
    return { ...(context as ControllerContext), static: input, rng: deriveStream(seed, `condition/${input.condition}/tiebreak`) };
  },
};

/** The controller's input for a config: its strategy, the scene as perceived, the offered registry. */
function controllerInputOf(config: SceneConfig, scene: Scene, seed: number): ControllerInput {
  const kind = config.strategy.kind as StrategyKind;
  const labelled = kind === "fixed-private" || kind === "oracle-intent";
  return {
    condition: conditionOf(config),
    strategy: { ...config.strategy, kind, reuse: config.strategy.reuse === true },
    scene: { summary: scene.summary, time: sceneTimeOf(scene), focus: focusLocationOf(scene), public: scene.public_state },
    tools: Object.keys(config.registry === "environment" ? ENVIRONMENT_TOOLS : AGENT_STATE_TOOLS),
    labels: labelled ? config.labels : {},
    seed,
    registry: config.registry,
    askers: Object.fromEntries(config.queries.filter((q) => q.asker != null).map((q) => [q.id, q.asker!])),
    places: config.town?.places ?? Object.fromEntries(Object.values(scene.public_state).map((r) => [r.location, ""])),
    ...(config.llm === undefined ? {} : { llm: config.llm }),
  };
}

/** The condition name a config was given (strategies are named after conditions). */
function conditionOf(config: SceneConfig): string {
  const entry = Object.entries(SCENE_CONDITIONS).find(([, c]) => c.kind === config.strategy.kind && c.memory === config.strategy.memory && (c.reuse === true) === (config.strategy.reuse === true) && (c.steps ?? config.maxSteps) === config.strategy.maxSteps);
  return entry?.[0] ?? config.strategy.kind;
}
