// The AURATown environment: owns the map, where everyone stands and walks, the public event feed,
// exogenous incidents, and brokers conversations. It is also the medium through which agents see
// each other: occupancy after moving (who is here), and visible state in the beliefs phase.
// Phases arrive as `tick.phase` records from the sequencer (DESIGN §3.2).
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import type { AvailabilityType } from "./events.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import type { Profile, TownConfig } from "./config.ts";
import { bondOf, conversationLines, incidentText } from "./speech.ts";
import { clockOf, contains, locationAt, locationNamed, stepToward, type Clock, type TownMap } from "./town.ts";
import type { TownEntries } from "./events.ts";

export interface EnvAgent {
  x: number;
  y: number;
  location: string | null;
  action: string;
  destination: string | null;
  availability: AvailabilityType;
  emotional_state: string;
  cooldown: number;
}

export interface EnvParams {
  readonly speed: number;
  readonly conversations: boolean;
  readonly cooldownTicks: number;
  readonly incidents: TownConfig["incidents"];
}

interface Resident {
  readonly name: string;
  readonly profileId: string;
  readonly relationships: Readonly<Record<string, string>>;
}

export interface EnvInput {
  readonly map: TownMap;
  readonly residents: readonly { readonly actorId: string; readonly profile: Profile; readonly start: { x: number; y: number } }[];
  readonly params: EnvParams;
  readonly seed: number;
}

export interface EnvContext {
  /** Configuration that never changes during an episode; not part of the tick hash. */
  readonly static: { readonly map: TownMap; readonly residents: Readonly<Record<string, Resident>>; readonly order: readonly string[] };
  params: EnvParams;
  tick: number;
  clock: Clock | null;
  agents: Record<string, EnvAgent>;
  /** The public event feed, newest last (the private-state rules read its last 8). */
  feed: string[];
  rng: { conversation: StreamState; incidents: StreamState };
}

export const ENVIRONMENT_ID = "env/auratown";

const FEED_LENGTH = 50;

export function initialEnvContext(input: EnvInput): EnvContext {
  const residents: Record<string, Resident> = {};
  const agents: Record<string, EnvAgent> = {};
  // Keyed in id order, so the table hashes without a sorted copy every tick.
  for (const r of [...input.residents].sort((a, b) => (a.actorId < b.actorId ? -1 : 1))) {
    residents[r.actorId] = { name: r.profile.name, profileId: r.profile.id, relationships: r.profile.relationships };
    agents[r.actorId] = {
      action: "sleeping",
      availability: "available",
      cooldown: 0,
      destination: null,
      emotional_state: "neutral",
      location: locationAt(input.map, r.start.x, r.start.y)?.name ?? null,
      x: r.start.x,
      y: r.start.y,
    };
  }
  return {
    static: { map: input.map, residents, order: Object.keys(residents).sort() },
    params: input.params,
    tick: -1,
    clock: null,
    agents,
    feed: [],
    rng: { conversation: deriveStream(input.seed, "world/conversation"), incidents: deriveStream(input.seed, "world/incidents") },
  };
}

function publish(ctx: EnvContext, description: string): void {
  ctx.feed.push(description);
  if (ctx.feed.length > FEED_LENGTH) ctx.feed.splice(0, ctx.feed.length - FEED_LENGTH);
}

const nameOf = (ctx: EnvContext, id: string): string => ctx.static.residents[id]?.name ?? id;

function onTickStarted(ctx: EnvContext, event: RecordIn<TownEntries, "tick.started">): Emitted[] {
  ctx.tick = event.payload.tick;
  ctx.clock = clockOf(event.payload.clock);
  for (const a of Object.values(ctx.agents)) if (a.cooldown > 0) a.cooldown--;
  // Four draws every tick, incident or not, so the stream never shifts (common random numbers).
  const draws = new Draws(ctx.rng.incidents);
  const happens = draws.chance(ctx.params.incidents.rate);
  const stressful = draws.chance(ctx.params.incidents.stressfulShare);
  const place = draws.pick(ctx.static.map.locations).name;
  const description = incidentText(draws, place, stressful);
  ctx.rng = { ...ctx.rng, incidents: draws.state };
  if (!happens) return [];
  publish(ctx, description);
  return [{ type: "world.incident", to: null, payload: { description, location: place, stressful } }];
}

function onDecided(ctx: EnvContext, event: RecordIn<TownEntries, "agent.decided">): Emitted[] {
  const a = ctx.agents[event.from];
  if (a === undefined) return [];
  a.action = event.payload.action;
  a.destination = event.payload.destination;
  publish(ctx, `${nameOf(ctx, event.from)} is now ${a.action}.`);
  return [];
}

function onPrivateState(ctx: EnvContext, event: RecordIn<TownEntries, "private_state.changed">): Emitted[] {
  const a = ctx.agents[event.from];
  if (a === undefined) return [];
  a.availability = event.payload.availability;
  a.emotional_state = event.payload.emotional_state;
  return [];
}

function onReflected(ctx: EnvContext, event: RecordIn<TownEntries, "agent.reflected">): Emitted[] {
  publish(ctx, `${nameOf(ctx, event.from)} reflected: ${event.payload.insights[0] ?? ""}`);
  return [];
}

/** Occupants per named location in map order, then everyone on the road (key null). */
function groups(ctx: EnvContext): [string | null, string[]][] {
  const byPlace = new Map<string | null, string[]>();
  for (const id of ctx.static.order) {
    const where = ctx.agents[id]!.location;
    let list = byPlace.get(where);
    if (list === undefined) byPlace.set(where, (list = []));
    list.push(id);
  }
  const out: [string | null, string[]][] = [];
  for (const l of ctx.static.map.locations) {
    const list = byPlace.get(l.name);
    if (list !== undefined) out.push([l.name, list]);
  }
  const road = byPlace.get(null);
  if (road !== undefined) out.push([null, road]);
  return out;
}

function move(ctx: EnvContext): Emitted[] {
  const arrived = new Set<string>();
  for (const id of ctx.static.order) {
    const a = ctx.agents[id]!;
    if (a.destination === null) continue;
    const target = locationNamed(ctx.static.map, a.destination);
    if (target === null || contains(target, a.x, a.y)) continue;
    const next = stepToward(a, target, ctx.params.speed);
    a.x = next.x;
    a.y = next.y;
    a.location = locationAt(ctx.static.map, a.x, a.y)?.name ?? null;
    if (contains(target, a.x, a.y)) {
      arrived.add(id);
      publish(ctx, `${nameOf(ctx, id)} arrived at ${target.name}.`);
    }
  }
  return groups(ctx).map(([location, ids]) => ({
    type: "location.occupancy",
    to: ids,
    payload: {
      location,
      occupants: ids.map((id) => {
        const a = ctx.agents[id]!;
        return { action: a.action, agent: id, arrived: arrived.has(id), name: nameOf(ctx, id), x: a.x, y: a.y };
      }),
    },
  }));
}

function converse(ctx: EnvContext): Emitted[] {
  if (!ctx.params.conversations || ctx.clock === null) return [];
  const out: Emitted[] = [];
  const draws = new Draws(ctx.rng.conversation);
  for (const [location, ids] of groups(ctx)) {
    if (location === null || ids.length < 2) continue;
    if (locationNamed(ctx.static.map, location)?.type === "home") continue;
    // Pair free agents in id order: the first free one with the next free one, and so on (the
    // release's "first eligible (i<j) pair" rule, computed in one pass).
    const free = ids.filter((id) => {
      const a = ctx.agents[id]!;
      return a.cooldown === 0 && a.availability !== "do_not_disturb";
    });
    for (let k = 0; k + 1 < free.length; k += 2) {
      const aId = free[k]!;
      const bId = free[k + 1]!;
      const ra = ctx.static.residents[aId]!;
      const rb = ctx.static.residents[bId]!;
      const a = ctx.agents[aId]!;
      const b = ctx.agents[bId]!;
      const lines = conversationLines(
        draws,
        { id: aId, name: ra.name, action: a.action, bond: bondOf(ra.relationships[rb.profileId]) },
        { id: bId, name: rb.name, action: b.action },
        ctx.clock,
      );
      a.cooldown = ctx.params.cooldownTicks;
      b.cooldown = ctx.params.cooldownTicks;
      publish(ctx, `${ra.name} and ${rb.name} had a conversation at ${location}.`);
      out.push({ type: "conversation.held", to: [aId, bId], payload: { lines, location, names: [ra.name, rb.name], participants: [aId, bId] } });
    }
  }
  ctx.rng = { ...ctx.rng, conversation: draws.state };
  return out;
}

function observe(ctx: EnvContext): Emitted[] {
  const out: Emitted[] = [];
  for (const [location, ids] of groups(ctx)) {
    if (location === null || ids.length < 2) continue;
    out.push({
      type: "location.observed",
      to: ids,
      payload: {
        location,
        occupants: ids.map((id) => ({ agent: id, availability: ctx.agents[id]!.availability, emotional_state: ctx.agents[id]!.emotional_state })), // keys sorted: canonical fast path
      },
    });
  }
  return out;
}

function onPhase(ctx: EnvContext, event: RecordIn<TownEntries, "tick.phase">): Emitted[] {
  switch (event.payload.phase) {
    case "move":
      return move(ctx);
    case "converse":
      return converse(ctx);
    case "evolve":
      return [{ type: "town.feed", to: "*", payload: { recent: ctx.feed.slice(-8) } }];
    case "observe":
      return observe(ctx);
    default:
      return [];
  }
}

const handlers: HandlerTable<EnvContext, TownEntries, "tick.started" | "tick.phase" | "agent.decided" | "private_state.changed" | "agent.reflected"> = {
  "tick.started": onTickStarted,
  "tick.phase": onPhase,
  "agent.decided": onDecided,
  "private_state.changed": onPrivateState,
  "agent.reflected": onReflected,
};

export const environmentLogic = recordActorLogic({
  context: initialEnvContext,
  handlers,
  valueOf: () => "running",
});
