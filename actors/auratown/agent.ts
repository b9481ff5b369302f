// A town agent (paper §4, Appendix A3–A4): follows its daily routine with seeded noise, perceives
// who is around, remembers, converses, evolves its hidden private state by the seven-rule table,
// keeps (stale) beliefs about others, and reflects. Decisions are deterministic rules by default.
//
// The agent learns about the world only from records: `tick.started` (time), `location.occupancy`
// (where it stands and who is there), `conversation.held`, `town.feed` (recent public events; the
// private-state phase), `location.observed` (others' visible state; the beliefs phase).
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import type { PlanItemType } from "./events.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { refreshBeliefs, emptyBeliefsDigest, type Belief } from "./beliefs.ts";
import type { Profile, TownConfig } from "./config.ts";
import { emptyMemory, importanceOf, remember, retrieve, type MemoryKind, type MemoryStream } from "./memory.ts";
import { ENVIRONMENT_ID } from "./environment.ts";
import { evaluatePrivateState, initialPrivateState, samePrivateState, type PrivateState } from "./privateState.ts";
import { reflectionInsights } from "./speech.ts";
import { clockOf, formatClock, hhmm, minutesOfDay, parseHhmm, simMinutes, type Clock, type ClockConfig } from "./town.ts";
import type { TownEntries } from "./events.ts";

export const agentActorId = (profileId: string): string => `agent/${profileId}`;

export interface AgentParams {
  readonly reflection: boolean;
  readonly memory: TownConfig["memory"];
  readonly routineNoise: TownConfig["routineNoise"];
  readonly clock: ClockConfig;
  readonly attention: number;
}

export interface AgentInput {
  readonly profile: Profile;
  readonly params: AgentParams;
  readonly seed: number;
  readonly start: { readonly x: number; readonly y: number };
}

export interface AgentContext {
  readonly id: string;
  readonly profile: Profile;
  params: AgentParams;
  tick: number;
  clock: Clock | null;
  planDay: number;
  plan: PlanItemType[];
  action: string;
  destination: string | null;
  location: string | null;
  x: number;
  y: number;
  /** Co-located others this agent noticed this tick (at most `params.attention`). */
  nearby: string[];
  /** All co-located others, noticed or not (the private-state rules count them). */
  nearbyCount: number;
  private: PrivateState;
  beliefs: Record<string, Belief>;
  beliefsDigest: string;
  memory: MemoryStream;
  rng: { routine: StreamState };
}

export function initialAgentContext(input: AgentInput): AgentContext {
  return {
    id: agentActorId(input.profile.id),
    profile: input.profile,
    params: input.params,
    tick: -1,
    clock: null,
    planDay: 0,
    plan: [],
    action: "sleeping",
    destination: null,
    location: input.profile.home,
    x: input.start.x,
    y: input.start.y,
    nearby: [],
    nearbyCount: 0,
    private: initialPrivateState,
    beliefs: {},
    beliefsDigest: emptyBeliefsDigest,
    memory: emptyMemory(),
    rng: { routine: deriveStream(input.seed, `agent/${input.profile.id}/routine`) },
  };
}

function note(ctx: AgentContext, kind: MemoryKind, content: string, importance: number): void {
  const clock = ctx.clock;
  remember(ctx.memory, { t: clock === null ? 0 : simMinutes(clock), kind, content, importance }, ctx.params.memory.capacity);
}

/**
 * Today's plan from the routine: each slot may take an alternative or start one tick late. Every
 * slot draws exactly two numbers, so the stream stays aligned whatever the routine contains.
 */
export function planDay(profile: Profile, draws: Draws, delayProbability: number, clock: ClockConfig): PlanItemType[] {
  const tickMinutes = clock.tickMinutes;
  const lastTick = clock.endHour * 60 - tickMinutes;
  const plan: PlanItemType[] = [];
  profile.routine.forEach((slot, i) => {
    const choiceDraw = draws.unit();
    const delayDraw = draws.unit();
    const options = [{ activity: slot.activity, location: slot.location }, ...(slot.alternatives ?? [])];
    const choice = options[Math.min(options.length - 1, Math.floor(choiceDraw * options.length))]!;
    let at = parseHhmm(slot.at);
    const next = profile.routine[i + 1];
    const limit = next === undefined ? lastTick + 1 : parseHhmm(next.at);
    if (delayDraw < delayProbability && at + tickMinutes < limit) at += tickMinutes;
    plan.push({ activity: choice.activity, at: hhmm({ day: 0, hour: Math.floor(at / 60), minute: at % 60 }), location: choice.location });
  });
  return plan;
}

function onTickStarted(ctx: AgentContext, event: RecordIn<TownEntries, "tick.started">): Emitted[] {
  const out: Emitted[] = [];
  const clock = clockOf(event.payload.clock);
  ctx.tick = event.payload.tick;
  ctx.clock = clock;
  if (clock.day !== ctx.planDay) {
    const draws = new Draws(ctx.rng.routine);
    ctx.plan = planDay(ctx.profile, draws, ctx.params.routineNoise.delayProbability, ctx.params.clock);
    ctx.rng = { routine: draws.state };
    ctx.planDay = clock.day;
    out.push({ type: "agent.planned", to: null, payload: { day: clock.day, plan: ctx.plan } });
    note(ctx, "plan", `Plan for day ${clock.day}: ${ctx.plan.map((p) => `${p.at} ${p.activity}`).join("; ")}`, 4);
  }
  const now = minutesOfDay(clock);
  let current: PlanItemType | undefined;
  for (const item of ctx.plan) if (parseHhmm(item.at) <= now) current = item;
  if (current !== undefined && (current.activity !== ctx.action || current.location !== ctx.destination)) {
    ctx.action = current.activity;
    ctx.destination = current.location;
    out.push({ type: "agent.decided", to: ENVIRONMENT_ID, payload: { action: ctx.action, destination: ctx.destination } });
  }
  return out;
}

/** Index of an agent in a list sorted by agent id (the environment always sends them sorted). */
function indexOf(list: readonly { agent: string }[], id: string): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = list[mid]!.agent;
    if (at === id) return mid;
    if (at < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The co-located others an agent notices: the next `attention` occupants after itself in id order,
 * wrapping around. In the paper's town (at most 4 others) that is everyone.
 */
export function attended<T extends { agent: string }>(list: readonly T[], self: number, attention: number): T[] {
  const n = list.length - 1;
  const take = Math.min(n, attention);
  const out: T[] = [];
  for (let k = 1; k <= take; k++) out.push(list[(self + k) % list.length]!);
  return out;
}

function onOccupancy(ctx: AgentContext, event: RecordIn<TownEntries, "location.occupancy">): Emitted[] {
  const { location, occupants } = event.payload;
  const self = indexOf(occupants, ctx.id);
  const me = occupants[self];
  if (me === undefined) return [];
  ctx.x = me.x;
  ctx.y = me.y;
  ctx.location = location;
  const others = location === null ? [] : attended(occupants, self, ctx.params.attention);
  ctx.nearby = others.map((o) => o.agent);
  ctx.nearbyCount = location === null ? 0 : occupants.length - 1;
  const clock = ctx.clock;
  let text = `${ctx.profile.name} is at ${location ?? "somewhere on the road"}. Time: ${clock === null ? "?" : formatClock(clock)}. Currently: ${ctx.action}.`;
  if (others.length > 0) {
    const unnamed = ctx.nearbyCount - others.length;
    text += ` Nearby: ${others.map((o) => o.name).join(", ")}${unnamed > 0 ? ` and ${unnamed} others` : ""}.`;
  }
  note(ctx, "observation", text, importanceOf(text));
  return [];
}

function onConversation(ctx: AgentContext, event: RecordIn<TownEntries, "conversation.held">): Emitted[] {
  const { participants, names, location, lines } = event.payload;
  const other = participants[0] === ctx.id ? names[1] : names[0];
  note(ctx, "conversation", `Had a conversation with ${other} at ${location}: ${lines[0]?.text ?? ""}`, 6);
  return [];
}

function onFeed(ctx: AgentContext, event: RecordIn<TownEntries, "town.feed">): Emitted[] {
  const out: Emitted[] = [];
  const clock = ctx.clock ?? { day: 1, hour: 0, minute: 0 };
  const next = evaluatePrivateState({
    action: ctx.action,
    location: ctx.location,
    nearbyCount: ctx.nearbyCount,
    hour: clock.hour,
    minute: clock.minute,
    recentEvents: event.payload.recent,
    previousEmotion: ctx.private.emotional_state,
    workplaces: ctx.profile.workplaces,
    openHours: ctx.profile.openHours,
  });
  if (!samePrivateState(next, ctx.private)) {
    ctx.private = next;
    out.push({ type: "private_state.changed", to: ENVIRONMENT_ID, payload: next });
  }
  const memory = ctx.params.memory;
  if (ctx.params.reflection && ctx.memory.sinceReflection >= memory.reflectionThreshold) {
    const top = retrieve(ctx.memory, ctx.action, simMinutes(clock), 15, memory.weights, memory.decay).map((s) => s.item);
    const insights = reflectionInsights(top);
    for (const insight of insights) note(ctx, "reflection", insight, 8);
    if (insights.length > 0) out.push({ type: "agent.reflected", to: ENVIRONMENT_ID, payload: { insights } });
  }
  return out;
}

function onObserved(ctx: AgentContext, event: RecordIn<TownEntries, "location.observed">): Emitted[] {
  if (event.payload.location !== ctx.location) return [];
  const occupants = event.payload.occupants;
  const self = indexOf(occupants, ctx.id);
  if (self === -1) return [];
  const seen = attended(occupants, self, ctx.params.attention);
  ctx.beliefsDigest = refreshBeliefs(ctx.beliefs, ctx.beliefsDigest, ctx.id, event.payload.location, seen, ctx.tick);
  return [];
}

const handlers: HandlerTable<AgentContext, TownEntries, "tick.started" | "location.occupancy" | "conversation.held" | "town.feed" | "location.observed"> = {
  "tick.started": onTickStarted,
  "location.occupancy": onOccupancy,
  "conversation.held": onConversation,
  "town.feed": onFeed,
  "location.observed": onObserved,
};

// Asked after every delivered record (the agent's state value); a town has a few dozen distinct
// actions, and lower-casing one per delivery was ~2% of a 1,000-agent day's allocations.
const sleepActions = new Map<string, boolean>();
export function isSleepAction(action: string): boolean {
  let sleeping = sleepActions.get(action);
  if (sleeping === undefined) {
    sleeping = /\bsleep/.test(action.toLowerCase());
    if (sleepActions.size < 10_000) sleepActions.set(action, sleeping);
  }
  return sleeping;
}

// The agent's logic is its record handlers (updating the context in place: copying a 1,000-entry
// belief map on every event would dominate a large town's tick); it is `asleep` while its action
// is a sleep and `awake` otherwise.
export const agentLogic = recordActorLogic({
  context: initialAgentContext,
  handlers,
  valueOf: (context) => (isSleepAction(context.action) ? "asleep" : "awake"),
});
