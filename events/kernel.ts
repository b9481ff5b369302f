// Events every world shares: the episode's lifecycle and the sequencer's tick structure.
import { Schema } from "effect";

export const EpisodeStarted = Schema.Struct({
  world: Schema.String,
  seed: Schema.Int,
  condition: Schema.String,
  config: Schema.Unknown,
  actors: Schema.Array(Schema.String),
  ticks: Schema.Int,
});

export const EpisodeForked = Schema.Struct({
  world: Schema.String,
  seed: Schema.Int,
  parent: Schema.String,
  parentLog: Schema.String,
  atSeq: Schema.Int,
  atTick: Schema.Int,
  parentHash: Schema.String,
  parentStateHash: Schema.String,
  condition: Schema.String,
  parentCondition: Schema.String,
  config: Schema.Unknown,
  actors: Schema.Array(Schema.String),
  ticks: Schema.Int,
});

export const TickStarted = Schema.Struct({
  tick: Schema.Int,
  clock: Schema.Record(Schema.String, Schema.Number),
});

export const TickPhase = Schema.Struct({ phase: Schema.String });

export const TickCommitted = Schema.Struct({
  stateHash: Schema.String,
  parts: Schema.Record(Schema.String, Schema.String),
});

export const kernelEvents = {
  "episode.started": { version: 1, payload: EpisodeStarted },
  "episode.forked": { version: 1, payload: EpisodeForked },
  "tick.started": { version: 1, payload: TickStarted },
  "tick.phase": { version: 1, payload: TickPhase },
  "tick.committed": { version: 1, payload: TickCommitted },
} as const;
