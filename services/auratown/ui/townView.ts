// AURATown's view in `probetown ui`: the episode's own map (from its header's config) and where
// each resident is at each tick, from the `location.occupancy` records; and each resident's own
// records (plans, private states with the rule that set them, reflections, conversations, what it
// observed of others) for the panel the browser folds up to the chosen tick.
import type { LogRecord } from "../../../events/record.ts";
import type { WorldUi } from "../../kernel/worldModule.ts";
import type { Location } from "../../../actors/auratown/town.ts";

type MapPlace = Pick<Location, "name" | "type" | "x" | "y" | "width" | "height">;

interface Occupant {
  readonly agent: string;
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly action: string;
}

export interface TownFrame {
  readonly tick: number;
  readonly residents: readonly (Occupant & { readonly place: string | null })[];
}

/** One resident's records, each with its tick, in log order (the panel takes those up to its tick). */
export interface ResidentRecords {
  readonly plans: { readonly tick: number; readonly day: number; readonly plan: readonly { at: string; activity: string; location: string }[] }[];
  readonly states: { readonly tick: number; readonly availability: string; readonly emotional_state: string; readonly unspoken_goal: string | null; readonly rule: string }[];
  readonly reflections: { readonly tick: number; readonly insights: readonly string[] }[];
  readonly conversations: { readonly tick: number; readonly with: string; readonly location: string; readonly lines: readonly { speaker: string; text: string }[] }[];
  /** What it saw of others where it was (`location.observed` sent to it): its beliefs about them. */
  readonly observed: { readonly tick: number; readonly about: string; readonly availability: string; readonly emotional_state: string }[];
}

/** What happened at a place in a tick, drawn on the map: a conversation held there, or an incident. */
export interface TownEvent {
  readonly tick: number;
  readonly kind: "conversation" | "incident";
  readonly location: string;
  readonly text: string;
}

export interface TownViewData {
  readonly events: readonly TownEvent[];
  readonly width: number;
  readonly height: number;
  readonly places: readonly MapPlace[];
  readonly frames: readonly TownFrame[];
  readonly residents: Readonly<Record<string, ResidentRecords>>;
}

function residentRecords(records: readonly LogRecord[]): Record<string, ResidentRecords> {
  const out: Record<string, { plans: unknown[]; states: unknown[]; reflections: unknown[]; conversations: unknown[]; observed: unknown[] }> = {};
  const of = (agent: string) => (out[agent] ??= { plans: [], states: [], reflections: [], conversations: [], observed: [] });
  for (const r of records) {
    const p = r.payload as Record<string, unknown>;
    if (r.type === "agent.planned") of(r.from).plans.push({ tick: r.tick, day: p.day, plan: p.plan });
    else if (r.type === "private_state.changed") of(r.from).states.push({ tick: r.tick, availability: p.availability, emotional_state: p.emotional_state, unspoken_goal: p.unspoken_goal, rule: p.rule });
    else if (r.type === "agent.reflected") of(r.from).reflections.push({ tick: r.tick, insights: p.insights });
    else if (r.type === "conversation.held") {
      const [a, b] = p.participants as [string, string];
      const [nameA, nameB] = p.names as [string, string];
      of(a).conversations.push({ tick: r.tick, with: nameB, location: p.location, lines: p.lines });
      of(b).conversations.push({ tick: r.tick, with: nameA, location: p.location, lines: p.lines });
    } else if (r.type === "location.observed") {
      const seen = p.occupants as { agent: string; availability: string; emotional_state: string }[];
      const to = Array.isArray(r.to) ? (r.to as string[]) : r.to === null ? [] : [r.to as string];
      for (const observer of to) for (const o of seen) if (o.agent !== observer) of(observer).observed.push({ tick: r.tick, about: o.agent, availability: o.availability, emotional_state: o.emotional_state });
    }
  }
  return out as unknown as Record<string, ResidentRecords>;
}

export function townViewData(records: readonly LogRecord[]): TownViewData {
  const header = records[0]?.payload as { config?: { map?: { width: number; height: number; locations: MapPlace[] } } } | undefined;
  const map = header?.config?.map ?? { width: 0, height: 0, locations: [] };
  // Each tick's last word on each resident wins (an occupancy record per place it was seen in).
  const byTick = new Map<number, Map<string, Occupant & { place: string | null }>>();
  for (const r of records) {
    if (r.type !== "location.occupancy") continue;
    const payload = r.payload as { location: string | null; occupants: Occupant[] };
    const frame = byTick.get(r.tick) ?? new Map();
    byTick.set(r.tick, frame);
    for (const o of payload.occupants) frame.set(o.agent, { agent: o.agent, name: o.name, x: o.x, y: o.y, action: o.action, place: payload.location });
  }
  const frames = [...byTick.entries()].sort(([a], [b]) => a - b).map(([tick, residents]) => ({ tick, residents: [...residents.values()].sort((a, b) => (a.agent < b.agent ? -1 : 1)) }));
  const events: TownEvent[] = [];
  for (const r of records) {
    const p = r.payload as Record<string, unknown>;
    if (r.type === "conversation.held" && typeof p.location === "string") events.push({ tick: r.tick, kind: "conversation", location: p.location, text: `${(p.names as string[] | undefined)?.join(" and ") ?? "two residents"} talked` });
    else if (r.type === "world.incident" && typeof p.location === "string") events.push({ tick: r.tick, kind: "incident", location: p.location, text: `${String(p.description ?? "an incident")}${p.stressful === true ? " (stressful)" : ""}` });
  }
  return { events, width: map.width, height: map.height, places: map.locations.map(({ name, type, x, y, width, height }) => ({ name, type, x, y, width, height })), frames, residents: residentRecords(records) };
}

export const townUi: WorldUi = {
  label: "Town replay",
  data: townViewData,
  script: new URL("./townView.js", import.meta.url),
};
