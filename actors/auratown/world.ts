// AURATown as a world: roster, actors, the tick's phases and the hash view of each actor.
import { configDecoder } from "../configDecoder.ts";
import { canonicalJson, hashOf } from "../../events/canonical.ts";
import type { ActorDefinition, PhaseStep, WorldDefinition } from "../actor.ts";
import { agentActorId, agentLogic, type AgentContext, type AgentInput } from "./agent.ts";
import { recomputeBeliefsDigest } from "./beliefs.ts";
import { configProblems, defaultTownConfig, rosterOf, townConditions, TownConfigSchema, type TownConfig } from "./config.ts";
import { ENVIRONMENT_ID, environmentLogic, type EnvContext, type EnvInput } from "./environment.ts";
import { recomputeMemoryDigest } from "./memory.ts";
import { centerOf, clockAt, locationNamed, ticksPerDay } from "./town.ts";
import { InputRejected } from "../../events/inputRejected.ts";
import { auratownEvents } from "./events.ts";


// Params change only on a fork and the plan once a day, but both are hashed every tick: hash each
// object once (they are replaced, never mutated, when they change).
const onceDigests = new WeakMap<object, string>();
function digestOnce(value: object): string {
  let digest = onceDigests.get(value);
  if (digest === undefined) onceDigests.set(value, (digest = hashOf(value).slice(0, 16)));
  return digest;
}

// An agent's part text (`partText`), its canonical hash view written field by field: a 1,000-agent
// town hashes every agent every tick (each agent's tick, clock and memory change every tick), and
// serialising a fresh view object each time was most of the digest's cost. The sub-objects that are
// replaced rather than mutated when they change are serialised once per object: the clock, which
// every agent shares from the same `tick.started` payload (a one-entry memo), and each agent's
// params, plan, private state and RNG state, remembered per agent context (one lookup per agent and
// tick rather than one per sub-object: a 10,000-agent town's lookups showed in its profile).
interface Remembered {
  params: object;
  paramsText: string;
  plan: object;
  planText: string;
  private: object | null;
  privateText: string;
  rng: object | null;
  rngText: string;
}
const remembered = new WeakMap<AgentContext, Remembered>();
let lastClock: object | null = null;
let lastClockText = "null";

const textOf = (value: object | null): string => (value === null ? "null" : canonicalJson(value));

function rememberedOf(c: AgentContext & { private: object | null; rng: object | null }): Remembered {
  let r = remembered.get(c);
  if (r === undefined) {
    r = { params: c.params, paramsText: q(digestOnce(c.params)), plan: c.plan, planText: q(digestOnce(c.plan)), private: c.private, privateText: textOf(c.private), rng: c.rng, rngText: textOf(c.rng) };
    remembered.set(c, r);
    return r;
  }
  if (r.params !== c.params) r.paramsText = q(digestOnce((r.params = c.params)));
  if (r.plan !== c.plan) r.planText = q(digestOnce((r.plan = c.plan)));
  if (r.private !== c.private) r.privateText = textOf((r.private = c.private));
  if (r.rng !== c.rng) r.rngText = textOf((r.rng = c.rng));
  return r;
}

const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === "string";
const isFinite = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const isObjectOrNull = (value: unknown): value is object | null => typeof value === "object";
const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;
const q = JSON.stringify;

/**
 * `canonicalJson({state: hashView(id, c), value})` for an agent, or null when a field is not of
 * its type (the view is then serialised, and fails as it would). A finite number's template text
 * is the number's JSON text.
 */
function agentPartText(c: AgentContext, value: unknown): string | null {
  const m = c.memory;
  if (
    !isStringOrNull(c.action) || !isStringOrNull(c.beliefsDigest) || !isObjectOrNull(c.clock) || !isStringOrNull(c.destination) || !isStringOrNull(c.id) ||
    !isStringOrNull(c.location) || !Array.isArray(m.items) || !isStringOrNull(m.digest) || !isFinite(m.nextId) || !isFinite(m.sinceReflection) ||
    !Array.isArray(c.nearby) || !isFinite(c.nearbyCount) || !isFinite(c.planDay) || !isObjectOrNull(c.private) || !isObjectOrNull(c.rng) || !isObject(c.params) || !isObject(c.plan) ||
    !isFinite(c.tick) || !isFinite(c.x) || !isFinite(c.y) || !isStringOrNull(value)
  ) {
    return null;
  }
  if (c.clock !== lastClock) lastClockText = textOf((lastClock = c.clock));
  const r = rememberedOf(c);
  return (
    `{"state":{"action":${q(c.action)},"beliefsDigest":${q(c.beliefsDigest)},"clock":${lastClockText},"destination":${q(c.destination)},"id":${q(c.id)},` +
    `"location":${q(c.location)},"memory":{"count":${m.items.length},"digest":${q(m.digest)},"nextId":${m.nextId},"sinceReflection":${m.sinceReflection}},` +
    `"nearby":${canonicalJson(c.nearby)},"nearbyCount":${c.nearbyCount},"params":${r.paramsText},"plan":${r.planText},"planDay":${c.planDay},` +
    `"private":${r.privateText},"rng":${r.rngText},"tick":${c.tick},"x":${c.x},"y":${c.y}},"value":${q(value)}}`
  );
}

const decodeConfig = configDecoder("auratown", TownConfigSchema);

/** The phases after `tick.started`, in order (DESIGN §3.2). Only the environment acts on them. */
export const PHASES = ["move", "converse", "evolve", "observe"] as const;

function agentInput(config: TownConfig, profile: TownConfig["agents"][number], seed: number): AgentInput {
  const home = locationNamed(config.map, profile.home)!;
  return {
    profile,
    seed,
    start: centerOf(home),
    params: { reflection: config.features.reflection, memory: config.memory, routineNoise: config.routineNoise, clock: config.clock, attention: config.perception.attention },
  };
}

const envParams = (config: TownConfig): EnvInput["params"] => ({
  speed: config.speed,
  conversations: config.features.conversations,
  cooldownTicks: config.conversation.cooldownTicks,
  incidents: config.incidents,
});

function mergeDeep(base: unknown, patch: unknown): unknown {
  if (patch === undefined) return base;
  if (base === null || typeof base !== "object" || Array.isArray(base) || patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) out[k] = mergeDeep(out[k], v);
  return out;
}

export const auratownWorld: WorldDefinition<TownConfig> = {
  name: "auratown",
  events: auratownEvents,
  description: "AURATown: 5 residents on a 60×60 map of 20 places, hidden private state, stale beliefs (paper §4, A3–A6)",
  defaultConfig: defaultTownConfig,
  conditions: townConditions,
  defaultCondition: "baseline",

  /** A partial config is merged over the defaults, then checked field by field. */
  resolveConfig(raw: unknown): TownConfig {
    const merged = mergeDeep(defaultTownConfig, raw ?? {});
    const config: TownConfig = decodeConfig(merged);
    const problems = configProblems(config);
    if (problems.length > 0) throw new InputRejected("config", `invalid auratown config:\n  - ${problems.join("\n  - ")}`);
    return config;
  },

  applyCondition(config, condition) {
    const entry = townConditions[condition];
    if (entry === undefined) {
      throw new InputRejected("condition", `unknown condition '${condition}' for auratown (known: ${Object.keys(townConditions).join(", ")})`);
    }
    return entry.apply(config);
  },

  defaultTicks: (config) => ticksPerDay(config.clock),

  actors(config, seed): ActorDefinition[] {
    const roster = rosterOf(config);
    const agents = roster.map((profile) => ({ id: agentActorId(profile.id), logic: agentLogic, input: agentInput(config, profile, seed) }));
    const envInput: EnvInput = {
      map: config.map,
      residents: agents.map((a) => ({ actorId: a.id, profile: (a.input as AgentInput).profile, start: (a.input as AgentInput).start })),
      params: envParams(config),
      seed,
    };
    return [...agents, { id: ENVIRONMENT_ID, logic: environmentLogic, input: envInput }].sort((a, b) => (a.id < b.id ? -1 : 1));
  },

  tickPlan(config, tick): PhaseStep[] {
    const clock = clockAt(tick, config.clock);
    return [
      { type: "tick.started", to: "*", payload: { clock: { day: clock.day, hour: clock.hour, minute: clock.minute }, tick } },
      ...PHASES.map((phase) => ({ type: "tick.phase", to: ENVIRONMENT_ID, payload: { phase } })),
    ];
  },

  // Keys are listed in sorted order so canonical JSON takes its no-copy path every tick.
  hashView(actorId, context) {
    if (actorId === ENVIRONMENT_ID) {
      const c = context as EnvContext;
      return { agents: c.agents, clock: c.clock, feed: c.feed, params: digestOnce(c.params), rng: c.rng, tick: c.tick };
    }
    const c = context as AgentContext;
    return {
      action: c.action,
      beliefsDigest: c.beliefsDigest,
      clock: c.clock,
      destination: c.destination,
      id: c.id,
      location: c.location,
      memory: { count: c.memory.items.length, digest: c.memory.digest, nextId: c.memory.nextId, sinceReflection: c.memory.sinceReflection },
      nearby: c.nearby,
      nearbyCount: c.nearbyCount,
      params: digestOnce(c.params),
      plan: digestOnce(c.plan),
      planDay: c.planDay,
      private: c.private,
      rng: c.rng,
      tick: c.tick,
      x: c.x,
      y: c.y,
    };
  },

  partText(actorId, context, value) {
    return actorId === ENVIRONMENT_ID ? null : agentPartText(context as AgentContext, value);
  },

  diffView(actorId, context) {
    if (actorId === ENVIRONMENT_ID) {
      const { static: _static, ...rest } = context as EnvContext;
      return rest;
    }
    const { profile: _profile, ...rest } = context as AgentContext;
    return rest;
  },

  checkSnapshot(actorId, context) {
    if (actorId === ENVIRONMENT_ID) return null;
    const ctx = context as AgentContext;
    if (recomputeBeliefsDigest(ctx.beliefs) !== ctx.beliefsDigest) return `${actorId}: beliefs do not match their digest`;
    if (recomputeMemoryDigest(ctx.memory) !== ctx.memory.digest) return `${actorId}: memory stream does not match its digest`;
    return null;
  },

  reconfigure(actorId, context, config) {
    if (actorId === ENVIRONMENT_ID) return { ...(context as EnvContext), params: envParams(config) };
    const ctx = context as AgentContext;
    return { ...ctx, params: { ...ctx.params, reflection: config.features.reflection, memory: config.memory, routineNoise: config.routineNoise } };
  },
};
