// The household's record types (digest §8.5): an agent's decision, each action's resolution, each
// message (queued or blocked), goal conjuncts as they latch, what each agent observes at the end of
// a turn, the episode's end with its scores, and the phase record that asks the house to resolve a turn.
import { Schema } from "effect";
import type { KernelEntries } from "../../events/catalogue.ts";

const Int = Schema.Int;
const Str = Schema.String;
const Place = Schema.Union([Schema.Struct({ on: Str }), Schema.Struct({ inside: Str })]);

/** The sequencer's phase record: the decisions of turn `turn` are in; resolve them. */
export const HouseholdResolve = Schema.Struct({ turn: Int });

/** An agent's action for a turn, in EnactToM's syntax, and why its policy chose it (for audits). */
export const HouseholdDecided = Schema.Struct({ turn: Int, agent: Str, action: Str, why: Str });

/** One action resolved against the house, in ascending agent order; `effects`: the mechanics it fired. */
export const HouseholdResolved = Schema.Struct({ turn: Int, agent: Str, action: Str, ok: Schema.Boolean, reason: Str, effects: Schema.Array(Str) });

/** A message: queued for its recipients' next turn, or blocked (graph or budget; it cost nothing). */
export const HouseholdMessage = Schema.Struct({ turn: Int, from: Str, to: Schema.Array(Str), text: Str, status: Schema.Literals(["queued", "blocked"]), reason: Str });

/** A functional goal conjunct held for the first time (it stays counted: EnactToM's latching). */
export const HouseholdLatched = Schema.Struct({ turn: Int, index: Int, conjunct: Str });

export const RoomViewSchema = Schema.Struct({ room: Str, open: Schema.Record(Str, Schema.Boolean), objects: Schema.Record(Str, Place), agents: Schema.Record(Str, Schema.NullOr(Str)) });

/** What an agent learns at the end of a turn: its own outcome, the rooms it sees, the messages sent to it this turn. */
export const HouseholdObserved = Schema.Struct({
  turn: Int,
  agent: Str,
  outcome: Schema.NullOr(Schema.Struct({ action: Str, ok: Schema.Boolean, reason: Str })),
  room: Str,
  holding: Schema.NullOr(Str),
  rooms: Schema.Array(RoomViewSchema),
  messages: Schema.Array(Schema.Struct({ from: Str, text: Str })),
  ended: Schema.Boolean,
});

/** One turn of an agent's trajectory as the house logged it: its decision (and why), the outcome, where it ended, what it held and the messages it received. */
export const TrajectoryStep = Schema.Struct({
  turn: Int,
  action: Str,
  why: Str,
  ok: Schema.Boolean,
  reason: Str,
  room: Str,
  holding: Schema.NullOr(Str),
  heard: Schema.Array(Schema.Struct({ from: Str, text: Str })),
});

/**
 * Baseline mode: the answer to `ReadAgentTrajectory[partner]` at turn `turn`, sent to the reader
 * before its observation: the partner's steps of every turn before `turn` (`upTo` = turn − 1).
 */
export const HouseholdTrajectory = Schema.Struct({ turn: Int, agent: Str, partner: Str, upTo: Int, steps: Schema.Array(TrajectoryStep) });

/** A Find tool's answer (config `findTools`), from the asking agent's own knowledge base at the turn's end: matching ids, each with what it knows of it. */
export const HouseholdFound = Schema.Struct({ turn: Int, agent: Str, tool: Str, query: Str, results: Schema.Array(Schema.Struct({ id: Str, detail: Str })) });

/**
 * The episode's end and its scores: latched success (the release's rule) and final-state success
 * (the paper's wording), percent complete of each, and each private objective's status (mixed).
 */
export const HouseholdEnded = Schema.Struct({
  turn: Int,
  reason: Schema.Literals(["success", "all_done", "turn_limit"]),
  success: Schema.Boolean,
  percentComplete: Schema.Number,
  finalSuccess: Schema.Boolean,
  finalPercentComplete: Schema.Number,
  latched: Schema.Array(Str),
  owned: Schema.Record(Str, Schema.Boolean),
  messagesSent: Int,
});

/** After the episode: the literal probes put to one agent (digest §5.3), one per K node it heads. */
export const HouseholdProbe = Schema.Struct({
  turn: Int,
  agent: Str,
  probes: Schema.Array(Schema.Struct({ probeId: Str, depth: Int, subjects: Schema.Array(Str), fact: Str })),
});

const ProbeAnswerSchema = Schema.Struct({ probeId: Str, predicate: Str, args: Schema.Array(Str), holds: Schema.NullOr(Schema.Boolean) });

/**
 * An agent's answers, in EnactToM's form ({probe_id, predicate, args, holds}; predicate "unknown",
 * holds null when it does not know). The LLM agent's (condition `llm`) also say which model was
 * asked, how many probe calls it made and which probes fell back to the knowledge base's answer and
 * why; a scripted agent's have no `llm`.
 */
export const HouseholdProbeAnswered = Schema.Struct({
  turn: Int,
  agent: Str,
  answers: Schema.Array(ProbeAnswerSchema),
  llm: Schema.optional(Schema.Struct({ model: Str, calls: Int, fallbacks: Schema.Array(Schema.Struct({ probeId: Str, reason: Str })) })),
});

/**
 * Every probe scored: leaves against the final world, parents against the child agent's answer;
 * the literal score is passed roots over roots, and `pass` says every root passed.
 */
export const HouseholdProbeScored = Schema.Struct({
  turn: Int,
  probes: Schema.Array(Schema.Struct({ probeId: Str, agent: Str, depth: Int, root: Schema.Boolean, basis: Schema.Literals(["world", "child"]), passed: Schema.Boolean })),
  roots: Int,
  passedRoots: Int,
  score: Schema.Number,
  pass: Schema.Boolean,
});

export const householdEvents = {
  "household.resolve": { version: 1, payload: HouseholdResolve },
  "household.decided": { version: 1, payload: HouseholdDecided },
  "household.resolved": { version: 1, payload: HouseholdResolved },
  "household.message": { version: 1, payload: HouseholdMessage },
  "household.latched": { version: 1, payload: HouseholdLatched },
  "household.observed": { version: 1, payload: HouseholdObserved },
  "household.ended": { version: 1, payload: HouseholdEnded },
  "household.probe": { version: 1, payload: HouseholdProbe },
  "household.probeAnswered": { version: 1, payload: HouseholdProbeAnswered },
  "household.probeScored": { version: 1, payload: HouseholdProbeScored },
  "household.trajectory": { version: 1, payload: HouseholdTrajectory },
  "household.found": { version: 1, payload: HouseholdFound },
} as const;

export type HouseholdEntries = KernelEntries & typeof householdEvents;
export type HouseholdDecidedPayload = typeof HouseholdDecided.Type;
export type HouseholdObservedPayload = typeof HouseholdObserved.Type;
export type HouseholdEndedPayload = typeof HouseholdEnded.Type;
export type HouseholdMessagePayload = typeof HouseholdMessage.Type;
export type HouseholdResolvedPayload = typeof HouseholdResolved.Type;
export type HouseholdLatchedPayload = typeof HouseholdLatched.Type;
export type HouseholdProbePayload = typeof HouseholdProbe.Type;
export type HouseholdProbeAnsweredPayload = typeof HouseholdProbeAnswered.Type;
export type HouseholdProbeScoredPayload = typeof HouseholdProbeScored.Type;
export type HouseholdTrajectoryPayload = typeof HouseholdTrajectory.Type;
export type TrajectoryStepPayload = typeof TrajectoryStep.Type;
export type HouseholdFoundPayload = typeof HouseholdFound.Type;
