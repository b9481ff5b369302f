// EnvProbe's events (paper "Ask the World Before Acting", reference/envprobe.md): one decision, one
// step of the world, the mutations it drew, the agent's belief changes and the step's score.
// Payloads are compact (field indices, short strings): a full grid writes millions of them.
import { Schema } from "effect";
import type { KernelEntries } from "../../events/catalogue.ts";

const Int = Schema.Int;
const Str = Schema.String;

/** The agent's choice for step t: a task action or a probe of one belief field (policy's pick). */
export const EnvprobeDecided = Schema.Struct({
  t: Int,
  kind: Schema.Literals(["act", "probe"]),
  action: Str,
  /** The probed field's index (probes only), else -1. */
  field: Int,
  /** Why the policy chose this (e.g. "rho=1.85", "period", "random"), for audits. */
  why: Str,
});

/** One applied exogenous change: field index, old value, new value. */
export const Mutation = Schema.Tuple([Int, Str, Str]);

/** The exogenous mutations applied at the end of step t (only logged when at least one applied). */
export const EnvprobeMutated = Schema.Struct({ t: Int, changes: Schema.Array(Mutation) });

/** What the world says back after step t: action outcome or probe answer, then the observation. */
export const EnvprobeStepped = Schema.Struct({
  t: Int,
  kind: Schema.Literals(["act", "probe"]),
  action: Str,
  /** Act: the action was valid. Probe: the probe was understood. */
  valid: Schema.Boolean,
  reason: Str,
  /** Probe answers, as (field index, value) pairs written back into the belief table. */
  answer: Schema.Array(Schema.Tuple([Int, Str])),
  /** Side knowledge a probe reveals that is not a scored field (e.g. a door's required key). */
  extra: Schema.Record(Str, Str),
  /** The probe corrected a field the agent believed wrongly (paper's useful-probe rule). */
  useful: Schema.Boolean,
  /** The observation after the step (post-mutation, with noise): (field index, value) pairs it shows, plus visible ids. */
  obs: Schema.Array(Schema.Tuple([Int, Str])),
  seen: Schema.Array(Str),
  done: Schema.Boolean,
  success: Schema.Boolean,
  probesUsed: Int,
  /** Oracle-belief runs only: every field's true value after the step. */
  gold: Schema.optional(Schema.Array(Str)),
});

/**
 * The agent's belief changes after step t: (field index, value, last-verified step, source).
 * LLM agents (config `llm.belief`) also say which backend produced the step's beliefs — `llm:<model>`
 * or `scripted (fallback from llm:<model>: <error>)` — and the staleness and confidence the model
 * reported, as (field index, staleness, confidence). Scripted agents log neither (their reports
 * are a function of the table and the calibration).
 */
export const EnvprobeBelieved = Schema.Struct({
  t: Int,
  set: Schema.Array(Schema.Tuple([Int, Str, Int, Int])),
  backend: Schema.optional(Str),
  reports: Schema.optional(Schema.Array(Schema.Tuple([Int, Int, Schema.Number]))),
});

/** The referee's score of step t: beliefs against the world after the step. */
export const EnvprobeScored = Schema.Struct({
  t: Int,
  /** Indices of fields whose belief differs from the world (exact match). */
  wrong: Schema.Array(Int),
  /** Wrong fields by type: [procedural, spatial]; totals are in `n`. */
  w: Schema.Tuple([Int, Int]),
  n: Schema.Tuple([Int, Int]),
  /** Fields reported with confidence ≥ 0.7, and how many of them are wrong. */
  hc: Int,
  cw: Int,
  done: Schema.Boolean,
  success: Schema.Boolean,
});

export const envprobeEvents = {
  "envprobe.decided": { version: 1, payload: EnvprobeDecided },
  "envprobe.mutated": { version: 1, payload: EnvprobeMutated },
  "envprobe.stepped": { version: 1, payload: EnvprobeStepped },
  "envprobe.believed": { version: 1, payload: EnvprobeBelieved },
  "envprobe.scored": { version: 1, payload: EnvprobeScored },
} as const;

export type EnvprobeDecidedPayload = typeof EnvprobeDecided.Type;
export type EnvprobeSteppedPayload = typeof EnvprobeStepped.Type;
export type EnvprobeBelievedPayload = typeof EnvprobeBelieved.Type;
export type EnvprobeScoredPayload = typeof EnvprobeScored.Type;

/** The record types envprobe episodes log: its own and the kernel's (handler tables are typed from these). */
export type EnvprobeEntries = KernelEntries & typeof envprobeEvents;
