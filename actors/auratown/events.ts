// AURATown's events: what agents decide and observe, and what the environment reports.
import { Schema } from "effect";
import type { KernelEntries } from "../../events/catalogue.ts";

export const Availability = Schema.Literals(["available", "busy", "do_not_disturb"]);
export const RuleId = Schema.Literals([
  "sleep",
  "workplace_loaded",
  "deep_focus",
  "workplace_empty",
  "relaxed",
  "recent_stress",
  "default",
]);

export const PlanItem = Schema.Struct({ at: Schema.String, activity: Schema.String, location: Schema.String });

export const AgentPlanned = Schema.Struct({ day: Schema.Int, plan: Schema.Array(PlanItem) });

export const AgentDecided = Schema.Struct({ action: Schema.String, destination: Schema.NullOr(Schema.String) });

export const LocationOccupancy = Schema.Struct({
  location: Schema.NullOr(Schema.String),
  occupants: Schema.Array(
    Schema.Struct({ agent: Schema.String, name: Schema.String, x: Schema.Int, y: Schema.Int, action: Schema.String, arrived: Schema.Boolean }),
  ),
});

export const ConversationHeld = Schema.Struct({
  participants: Schema.Tuple([Schema.String, Schema.String]),
  names: Schema.Tuple([Schema.String, Schema.String]),
  location: Schema.String,
  lines: Schema.Array(Schema.Struct({ speaker: Schema.String, text: Schema.String })),
});

export const TownFeed = Schema.Struct({ recent: Schema.Array(Schema.String) });

export const PrivateStateChanged = Schema.Struct({
  availability: Availability,
  emotional_state: Schema.String,
  unspoken_goal: Schema.NullOr(Schema.String),
  rule: RuleId,
});

export const LocationObserved = Schema.Struct({
  location: Schema.String,
  occupants: Schema.Array(
    Schema.Struct({ agent: Schema.String, availability: Availability, emotional_state: Schema.String }),
  ),
});

export const AgentReflected = Schema.Struct({ insights: Schema.Array(Schema.String) });

export const WorldIncident = Schema.Struct({
  location: Schema.String,
  description: Schema.String,
  stressful: Schema.Boolean,
});

export const auratownEvents = {
  "agent.planned": { version: 1, payload: AgentPlanned },
  "agent.decided": { version: 1, payload: AgentDecided },
  "location.occupancy": { version: 1, payload: LocationOccupancy },
  "conversation.held": { version: 1, payload: ConversationHeld },
  "town.feed": { version: 1, payload: TownFeed },
  "private_state.changed": { version: 1, payload: PrivateStateChanged },
  "location.observed": { version: 1, payload: LocationObserved },
  "agent.reflected": { version: 1, payload: AgentReflected },
  "world.incident": { version: 1, payload: WorldIncident },
} as const;

export type AgentDecidedPayload = typeof AgentDecided.Type;
export type LocationOccupancyPayload = typeof LocationOccupancy.Type;
export type ConversationHeldPayload = typeof ConversationHeld.Type;
export type PrivateStateChangedPayload = typeof PrivateStateChanged.Type;
export type LocationObservedPayload = typeof LocationObserved.Type;
export type RuleIdType = typeof RuleId.Type;
export type AvailabilityType = typeof Availability.Type;
export type PlanItemType = typeof PlanItem.Type;

/** The record types auratown episodes log: its own and the kernel's (handler tables are typed from these). */
export type TownEntries = KernelEntries & typeof auratownEvents;
