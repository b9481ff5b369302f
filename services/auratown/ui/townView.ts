// AURATown's view in `probetown ui`: the episode's own map (from its header's config) and where
// each resident is at each tick, from the `location.occupancy` records; and one resident's records
// (plans, private states with the rule that set them, reflections, conversations, its beliefs
// about others) for the panel. The view's first answer is small (the map and the list of ticks);
// a tick's frame and a resident's panel are asked for when they are shown. What a 1,000-resident
// day's residents observed of each other, sent whole, was ~9 million entries (every occupant of a
// crowded place paired with every other, ~865 MB of JSON: past V8's longest string); per resident
// and tick it is at most the town's size, folded here from an index built once per log read.
import type { LogRecord } from "../../../events/record.ts";
import type { WorldUi, WorldUiPart } from "../../kernel/worldModule.ts";
import type { Location } from "../../../actors/auratown/town.ts";
import { attended } from "../../../actors/auratown/agent.ts";
import { defaultTownConfig } from "../../../actors/auratown/config.ts";

type MapPlace = Pick<Location, "name" | "type" | "x" | "y" | "width" | "height">;

interface Occupant {
  readonly agent: string;
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly action: string;
}

type Placed = Occupant & { readonly place: string | null };

/** What happened at a place in a tick, drawn on the map: a conversation held there, or an incident. */
export interface TownEvent {
  readonly tick: number;
  readonly kind: "conversation" | "incident";
  readonly location: string;
  readonly text: string;
}

/** One tick as the map and the table draw it (`/api/world-view?id=…&tick=n`). */
export interface TownFrame {
  readonly tick: number;
  readonly residents: readonly Placed[];
  readonly events: readonly TownEvent[];
}

/** The view's first answer: the map and the ticks that have a frame. */
export interface TownViewData {
  readonly width: number;
  readonly height: number;
  readonly places: readonly MapPlace[];
  readonly ticks: readonly number[];
  /** Residents on the map at the first tick (the view's size, before its first frame arrives). */
  readonly residents: number;
}

interface Plan { readonly tick: number; readonly day: number; readonly plan: readonly { at: string; activity: string; location: string }[] }
interface State { readonly tick: number; readonly availability: string; readonly emotional_state: string; readonly unspoken_goal: string | null; readonly rule: string }
interface Reflection { readonly tick: number; readonly insights: readonly string[] }
interface Conversation { readonly tick: number; readonly with: string; readonly location: string; readonly lines: readonly { speaker: string; text: string }[] }

/** A belief about another resident at the tick: what the resident last saw of it, and its truth then. */
export interface TownBelief {
  readonly about: string;
  readonly name: string;
  readonly availability: string;
  readonly emotional_state: string;
  /** The tick it last saw the other. */
  readonly tick: number;
  /** The other's private state at the panel's tick (its last `private_state.changed`), or null. */
  readonly truth: { readonly availability: string; readonly emotional_state: string } | null;
}

/** One resident at one tick (`/api/world-view?id=…&resident=agent&tick=n`): what its panel draws. */
export interface ResidentPanel {
  readonly agent: string;
  readonly name: string;
  readonly tick: number;
  readonly plan: Plan | null;
  readonly state: State | null;
  readonly beliefs: readonly TownBelief[];
  readonly reflections: readonly Reflection[];
  readonly conversations: readonly Conversation[];
}

interface Observed { readonly agent: string; readonly availability: string; readonly emotional_state: string }

interface ResidentIndex {
  readonly plans: Plan[];
  readonly states: State[];
  readonly reflections: Reflection[];
  readonly conversations: Conversation[];
  /** The `location.observed` records sent to it, in log order. */
  readonly observed: { readonly tick: number; readonly occupants: readonly Observed[] }[];
}

interface TownIndex {
  readonly data: TownViewData;
  readonly frames: ReadonlyMap<number, TownFrame>;
  readonly residents: ReadonlyMap<string, ResidentIndex>;
  readonly names: ReadonlyMap<string, string>;
  readonly attention: number;
}

/** Built once per log read (the server keeps a read log's records array while its files are unchanged). */
const indexes = new WeakMap<readonly LogRecord[], TownIndex>();

function indexOf(records: readonly LogRecord[]): TownIndex {
  const known = indexes.get(records);
  if (known !== undefined) return known;
  const header = records[0]?.payload as { config?: { map?: { width: number; height: number; locations: MapPlace[] }; perception?: { attention?: number } } } | undefined;
  const map = header?.config?.map ?? { width: 0, height: 0, locations: [] };
  const attention = header?.config?.perception?.attention ?? defaultTownConfig.perception.attention;
  // Each tick's last word on each resident wins (an occupancy record per place it was seen in).
  const byTick = new Map<number, Map<string, Placed>>();
  const events = new Map<number, TownEvent[]>();
  const residents = new Map<string, ResidentIndex>();
  const names = new Map<string, string>();
  const of = (agent: string): ResidentIndex => {
    let r = residents.get(agent);
    if (r === undefined) residents.set(agent, (r = { plans: [], states: [], reflections: [], conversations: [], observed: [] }));
    return r;
  };
  const event = (e: TownEvent) => (events.get(e.tick) ?? events.set(e.tick, []).get(e.tick)!).push(e);
  for (const r of records) {
    const p = r.payload as Record<string, unknown>;
    if (r.type === "location.occupancy") {
      const frame = byTick.get(r.tick) ?? byTick.set(r.tick, new Map()).get(r.tick)!;
      const location = p.location as string | null;
      for (const o of p.occupants as Occupant[]) {
        frame.set(o.agent, { agent: o.agent, name: o.name, x: o.x, y: o.y, action: o.action, place: location });
        names.set(o.agent, o.name);
      }
    } else if (r.type === "agent.planned") of(r.from).plans.push({ tick: r.tick, day: p.day as number, plan: p.plan as Plan["plan"] });
    else if (r.type === "private_state.changed") of(r.from).states.push({ tick: r.tick, availability: p.availability as string, emotional_state: p.emotional_state as string, unspoken_goal: p.unspoken_goal as string | null, rule: p.rule as string });
    else if (r.type === "agent.reflected") of(r.from).reflections.push({ tick: r.tick, insights: p.insights as string[] });
    else if (r.type === "conversation.held") {
      const [a, b] = p.participants as [string, string];
      const [nameA, nameB] = p.names as [string, string];
      const location = p.location as string;
      const lines = p.lines as Conversation["lines"];
      of(a).conversations.push({ tick: r.tick, with: nameB, location, lines });
      of(b).conversations.push({ tick: r.tick, with: nameA, location, lines });
      if (typeof p.location === "string") event({ tick: r.tick, kind: "conversation", location, text: `${nameA} and ${nameB} talked` });
    } else if (r.type === "location.observed") {
      // Kept once, as the log holds it: each observer's share is worked out when its panel asks.
      const seen = { tick: r.tick, occupants: p.occupants as Observed[] };
      const to = Array.isArray(r.to) ? (r.to as string[]) : r.to === null ? [] : [r.to as string];
      for (const observer of to) of(observer).observed.push(seen);
    } else if (r.type === "world.incident" && typeof p.location === "string") {
      event({ tick: r.tick, kind: "incident", location: p.location, text: `${String(p.description ?? "an incident")}${p.stressful === true ? " (stressful)" : ""}` });
    }
  }
  const frames = new Map<number, TownFrame>();
  for (const [tick, placed] of [...byTick].sort(([a], [b]) => a - b)) {
    frames.set(tick, { tick, residents: [...placed.values()].sort((a, b) => (a.agent < b.agent ? -1 : 1)), events: events.get(tick) ?? [] });
  }
  const ticks = [...frames.keys()];
  const data: TownViewData = {
    width: map.width,
    height: map.height,
    places: map.locations.map(({ name, type, x, y, width, height }) => ({ name, type, x, y, width, height })),
    ticks,
    residents: ticks.length === 0 ? 0 : frames.get(ticks[0]!)!.residents.length,
  };
  const index: TownIndex = { data, frames, residents, names, attention };
  indexes.set(records, index);
  return index;
}

export const townViewData = (records: readonly LogRecord[]): TownViewData => indexOf(records).data;

/** A tick's frame, or undefined when no occupancy was logged at that tick. */
export const townFrame = (records: readonly LogRecord[], tick: number): TownFrame | undefined => indexOf(records).frames.get(tick);

const upTo = <T extends { tick: number }>(list: readonly T[], tick: number): T[] => list.filter((x) => x.tick <= tick);
const lastOf = <T extends { tick: number }>(list: readonly T[], tick: number): T | null => {
  let last: T | null = null;
  for (const x of list) if (x.tick <= tick) last = x;
  return last;
};

/**
 * One resident at `tick`: its plan, private state, reflections and conversations so far, and its
 * beliefs about others: of each `location.observed` sent to it, the others it noticed (as the agent
 * does: the next `perception.attention` occupants after itself, wrapping), the last seen of each.
 */
export function residentPanel(records: readonly LogRecord[], agent: string, tick: number): ResidentPanel | undefined {
  const index = indexOf(records);
  const own = index.residents.get(agent);
  if (own === undefined && !index.names.has(agent)) return undefined;
  const r = own ?? { plans: [], states: [], reflections: [], conversations: [], observed: [] };
  const beliefs = new Map<string, { about: string; availability: string; emotional_state: string; tick: number }>();
  for (const seen of r.observed) {
    if (seen.tick > tick) break;
    const self = seen.occupants.findIndex((o) => o.agent === agent);
    if (self === -1) continue;
    for (const o of attended(seen.occupants, self, index.attention)) beliefs.set(o.agent, { about: o.agent, availability: o.availability, emotional_state: o.emotional_state, tick: seen.tick });
  }
  return {
    agent,
    name: index.names.get(agent) ?? agent,
    tick,
    plan: lastOf(r.plans, tick),
    state: lastOf(r.states, tick),
    beliefs: [...beliefs.values()].map((b) => {
      const truth = lastOf(index.residents.get(b.about)?.states ?? [], tick);
      return { ...b, name: index.names.get(b.about) ?? b.about, truth: truth === null ? null : { availability: truth.availability, emotional_state: truth.emotional_state } };
    }),
    reflections: upTo(r.reflections, tick),
    conversations: upTo(r.conversations, tick),
  };
}

const WHOLE = /^\d+$/;

/** `tick=n` (a frame), or `resident=agent&tick=n` (a panel); anything else is refused with why. */
function townPart(records: readonly LogRecord[], _episode: unknown, query: Readonly<Record<string, string>>): WorldUiPart {
  const { tick, resident, ...rest } = query;
  const extra = Object.keys(rest);
  if (extra.length > 0) return { ok: false, message: `unknown parameter ${extra.map((k) => `'${k}'`).join(", ")}; the town replay takes id, tick and resident` };
  if (tick === undefined) return { ok: false, message: "tick is required with resident (the panel is the resident at a tick)" };
  if (!WHOLE.test(tick)) return { ok: false, message: `tick must be a whole number, got '${tick}'` };
  const t = Number(tick);
  const { ticks } = indexOf(records).data;
  const range = ticks.length === 0 ? "none" : `${ticks[0]}–${ticks.at(-1)}`;
  if (resident === undefined) {
    const frame = townFrame(records, t);
    return frame === undefined ? { ok: false, message: `tick ${t} has no resident positions in this log (its ticks: ${range})` } : { ok: true, data: frame };
  }
  if (t > (ticks.at(-1) ?? -1)) return { ok: false, message: `tick ${t} is past the log's last (its ticks: ${range})` };
  const panel = residentPanel(records, resident, t);
  return panel === undefined ? { ok: false, message: `resident '${resident}' is not in this town` } : { ok: true, data: panel };
}

export const townUi: WorldUi = {
  label: "Town replay",
  data: townViewData,
  part: townPart,
  script: new URL("./townView.js", import.meta.url),
};
