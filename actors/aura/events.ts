// Probe events (DESIGN §1, §4; paper §3, Algorithm 1): a user query enters as `user.query`; the
// AURA controller (or a baseline on the same registries) logs its IntentFrame, each probe it asks
// of the actor that owns the state, that actor's answer or refusal, and the final answer. A
// rule judge reads these records back, so every figure in a report can be recomputed from logs.
import { Schema } from "effect";
import type { KernelEntries } from "../../events/catalogue.ts";

export const UserQuery = Schema.Struct({
  /** The benchmark's query id (as a string: ids are labels, not numbers to add). */
  queryId: Schema.String,
  scene: Schema.String,
  text: Schema.String,
});

/** The paper's IntentFrame tuple (ℓ, I, g, P, a, c, r). */
export const IntentFrame = Schema.Struct({
  literal_need: Schema.String,
  implicit_need: Schema.Array(Schema.String),
  gap: Schema.Number,
  recommended_probes: Schema.Array(Schema.String),
  should_alert: Schema.Boolean,
  confidence: Schema.Number,
  rationale: Schema.String,
});

export const IntentInferred = Schema.Struct({
  queryId: Schema.String,
  /** Which backend produced the frame (`deterministic`, or an LLM backend, or its recorded fallback). */
  backend: Schema.String,
  frame: IntentFrame,
  /** B(gap) before the configured cap, and the ceiling actually used. */
  budget: Schema.Int,
  maxSteps: Schema.Int,
  /** Probe answers read for earlier queries that meet part of the need (reused, aura-intent-reuse only). */
  fromMemory: Schema.Array(Schema.String),
  /** What the Memory stage retrieved for this query (actors/aura/memory.ts), best first; absent without one. */
  memories: Schema.optionalKey(Schema.Array(Schema.Struct({ content: Schema.String, kind: Schema.String, t: Schema.Int, importance: Schema.Number, score: Schema.Number }))),
});

export const ProbeRequested = Schema.Struct({
  queryId: Schema.String,
  /** 1-based index of this probe within the query. */
  call: Schema.Int,
  tool: Schema.String,
  /** The agent whose state is read (display name), or null for environment-wide tools. */
  target: Schema.NullOr(Schema.String),
  field: Schema.NullOr(Schema.String),
  args: Schema.Record(Schema.String, Schema.String),
  budgetBefore: Schema.Int,
});

export const ProbeAnswered = Schema.Struct({
  queryId: Schema.String,
  call: Schema.Int,
  tool: Schema.String,
  target: Schema.NullOr(Schema.String),
  ok: Schema.Boolean,
  result: Schema.Unknown,
  disclosure: Schema.Number,
  budgetAfter: Schema.Int,
});

export const ProbeDenied = Schema.Struct({
  queryId: Schema.String,
  call: Schema.Int,
  tool: Schema.String,
  target: Schema.NullOr(Schema.String),
  reason: Schema.String,
  budgetAfter: Schema.Int,
});

/** One structured claim of an answer; the rule judge compares these with the scene's truth. */
export const AnswerFact = Schema.Struct({
  /**
   * public: observed scene; state: an agent's private state; belief: believer's belief about target; plan; time;
   * event: a town event (value = its description); memory: one of the agent's memories; place: a fact about the place
   * named in `target` (field `type`, or `people`: who is there, or `others`: who is there besides `agent`).
   */
  kind: Schema.Literals(["public", "state", "belief", "plan", "time", "event", "memory", "place"]),
  agent: Schema.NullOr(Schema.String),
  target: Schema.NullOr(Schema.String),
  field: Schema.String,
  value: Schema.String,
  /** Where the value came from: `scene` (perceived), `probe:<tool>`, `memory:<tool>`. */
  source: Schema.String,
});

export const AnswerGiven = Schema.Struct({
  queryId: Schema.String,
  condition: Schema.String,
  backend: Schema.String,
  text: Schema.String,
  alert: Schema.NullOr(Schema.String),
  facts: Schema.Array(AnswerFact),
  probes: Schema.Int,
  disclosure: Schema.Number,
});

export const sceneEvents = {
  "user.query": { version: 1, payload: UserQuery },
  "intent.inferred": { version: 1, payload: IntentInferred },
  "probe.requested": { version: 1, payload: ProbeRequested },
  "probe.answered": { version: 1, payload: ProbeAnswered },
  "probe.denied": { version: 1, payload: ProbeDenied },
  "answer.given": { version: 1, payload: AnswerGiven },
} as const;

export type UserQueryPayload = typeof UserQuery.Type;
export type IntentFramePayload = typeof IntentFrame.Type;
export type IntentInferredPayload = typeof IntentInferred.Type;
export type ProbeRequestedPayload = typeof ProbeRequested.Type;
export type ProbeAnsweredPayload = typeof ProbeAnswered.Type;
export type ProbeDeniedPayload = typeof ProbeDenied.Type;
export type AnswerFactPayload = typeof AnswerFact.Type;
export type AnswerGivenPayload = typeof AnswerGiven.Type;

/** The record types aura-scene episodes log: its own and the kernel's (handler tables are typed from these). */
export type SceneEntries = KernelEntries & typeof sceneEvents;
