// The contract between the sequencer and the actors it drives (DESIGN §3).
// An actor is an XState v5 actor: a state machine, or record-handler transition logic
// (`recordActorLogic`). It receives logged records as events, and answers only by emitting events
// (XState `emit`), which the sequencer appends to the log before delivering them.
// Actors never see the log, the transport or the wall clock.
import { enqueueActions, type ActorLogic, type ActorSystem, type AnyActorLogic, type EventObject, type MachineContext, type Snapshot } from "xstate";
import type { Address } from "../events/record.ts";
import type { EventEntries, PayloadIn } from "../events/catalogue.ts";
import { InputRejected } from "../events/inputRejected.ts";

/** A record as an actor receives it. */
export interface Delivered<P = unknown> {
  readonly type: string;
  readonly payload: P;
  readonly from: string;
  readonly tick: number;
  readonly seq: number;
}

/** What an actor asks the sequencer to log and deliver. */
export interface Emitted<P = unknown> {
  readonly type: string;
  readonly to: Address;
  readonly payload: P;
}

/**
 * A delivered record of type `T` of the record types `E` (a world's entries with the kernel's; a
 * union of types gives a union of records), its payload typed from its schema.
 */
export type RecordIn<E extends EventEntries, T extends keyof E & string> = T extends unknown ? Delivered<PayloadIn<E, T>> & { readonly type: T } : never;

/**
 * Record handlers by type, each given the records of its own type (their payloads typed from `E`,
 * a world's entries): a handler for another type's records, or for a type `E` lacks, does not
 * compile. A handler updates the context (in place) and returns the events to emit.
 */
export type HandlerTable<Context, E extends EventEntries, T extends keyof E & string> = { readonly [K in T]: (context: Context, event: RecordIn<E, K>) => Emitted[] };

/** A handler found by `HandlerLookup`: give it only records of the type it was looked up by. */
export type RecordHandler<Context> = (context: Context, event: Delivered) => Emitted[];

/** A handler table as a lookup by record type (`lookup[record.type]`; undefined for a type it does not handle). */
export type HandlerLookup<Context> = Readonly<Partial<Record<string, RecordHandler<Context>>>>;

/**
 * A handler table as a lookup by record type, for whatever delivers records to it (handleRecords,
 * recordActorLogic, services/envprobe/direct.ts). It is the table itself, not a copy: a lookup is
 * a plain property read per record.
 */
export function handlersByType<Context, E extends EventEntries, T extends keyof E & string>(handlers: HandlerTable<Context, E, T>): HandlerLookup<Context> {
  // The one place a handler table's types are narrowed. The handler under key K takes records of
  // type K only; a lookup gives a record to the handler found under the record's own `type`, so
  // each handler only ever gets records of its type, whose payloads are that type's by the
  // catalogue (actors and tick plans emit them so; reading a log checks them against it).
  // TypeScript cannot tie a record's `type` to the key it was looked up by: hence the cast.
  return handlers as unknown as HandlerLookup<Context>;
}

type RecordEvent = Delivered & EventObject;
type EmittedEvent = Emitted & EventObject;

/**
 * The XState action a machine uses to handle delivered records by a handler table: look up the
 * record type's handler and emit what it returns (the host collects emitted events for the
 * sequencer). A record of a type the table does not name is ignored.
 */
export const handleRecords = <Context extends MachineContext, E extends EventEntries, T extends keyof E & string>(handlers: HandlerTable<Context, E, T>) => {
  const byType = handlersByType(handlers);
  return enqueueActions<Context, RecordEvent, undefined, RecordEvent, never, never, never, never, EmittedEvent>(({ context, event, enqueue }) => {
    const handler = Object.hasOwn(byType, event.type) ? byType[event.type] : undefined;
    if (handler === undefined) return;
    for (const e of handler(context, event)) enqueue.emit(e as EmittedEvent);
  });
};

/** The snapshot of a record-handler actor: its context and a state value derived from it. */
export type RecordActorSnapshot<Context> = Snapshot<undefined> & { readonly context: Context; readonly value: string };

export type RecordActorLogic<Context, Input> = ActorLogic<RecordActorSnapshot<Context>, RecordEvent, Input, ActorSystem<any>, EmittedEvent>;

/**
 * XState actor logic for an actor that is its record handlers and nothing more: each delivered
 * record goes to its type's handler, which updates the context in place and returns the events to
 * emit; the state value is a function of the context (an AURATown agent is `asleep` or `awake` by
 * its action). Such an actor is written as transition logic rather than a state machine because a
 * machine's interpreter costs ~15× more per event (measured: 1.8–2.0 µs against 0.13 µs per
 * `send` on 1,000 actors), and a 1,000-agent AURATown day delivers ~170,000 records. Snapshots
 * (`getPersistedSnapshot`) hold `{status, context, value}`; a machine's persisted snapshot with the
 * same context and value restores to the same state, so snapshots written before still load.
 */
// The logic objects recordActorLogic made: an actor host may run these itself (services/distributed/actorHost.ts).
const recordLogics = new WeakSet<object>();

/** True for logic made by `recordActorLogic`: transition logic that uses nothing of its scope but `emit`. */
export const isRecordActorLogic = (logic: unknown): boolean => typeof logic === "object" && logic !== null && recordLogics.has(logic);

export function recordActorLogic<Context, Input, E extends EventEntries, T extends keyof E & string>(o: {
  readonly context: (input: Input) => Context;
  readonly handlers: HandlerTable<Context, E, T>;
  readonly valueOf: (context: Context) => string;
}): RecordActorLogic<Context, Input> {
  const handlers = handlersByType(o.handlers);
  const snapshotOf = (context: Context): RecordActorSnapshot<Context> => ({ status: "active", output: undefined, error: undefined, context, value: o.valueOf(context) });
  const logic: RecordActorLogic<Context, Input> = {
    transition(snapshot, event, scope) {
      const handler = handlers[event.type];
      if (handler === undefined) return snapshot;
      for (const e of handler(snapshot.context, event)) scope.emit(e as EmittedEvent);
      const value = o.valueOf(snapshot.context);
      return value === snapshot.value ? snapshot : { ...snapshot, value };
    },
    getInitialSnapshot: (_scope, input) => snapshotOf(o.context(input)),
    getPersistedSnapshot: (snapshot) => snapshot,
    // The value is taken as stored: the snapshot's state hash covers it (checked before restoring).
    restoreSnapshot: (persisted) => {
      const { context, value } = persisted as unknown as { context: Context; value: string };
      return { status: "active", output: undefined, error: undefined, context, value };
    },
  };
  recordLogics.add(logic);
  return logic;
}

/**
 * A config for a new episode: resolved (defaults filled in, validated) and within the world's
 * limits on new episodes (`newEpisodeProblems`). Throws an Error naming each bad field.
 */
export function resolveNewEpisodeConfig<Config>(world: WorldDefinition<Config>, raw: unknown): Config {
  const config = world.resolveConfig(raw);
  const limits = world.newEpisodeProblems?.(config) ?? [];
  if (limits.length > 0) throw new InputRejected("config", `invalid ${world.name} config:\n  - ${limits.join("\n  - ")}`);
  return config;
}

export interface ActorDefinition {
  readonly id: string;
  readonly logic: AnyActorLogic;
  readonly input: unknown;
}

/** One step of a tick: a record the sequencer appends (from itself) and delivers. */
export interface PhaseStep {
  readonly type: string;
  readonly to: Address;
  readonly payload: unknown;
}

/** A logged record as a world's span hook sees it. */
export interface SpanSource {
  readonly type: string;
  readonly payload: unknown;
  readonly from: string;
}

/** A span a world adds for one of its records (attribute values as OpenTelemetry takes them). */
export interface ExtraSpan {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string | number | boolean | readonly string[]>>;
}

export interface ConditionInfo {
  readonly description: string;
}

/**
 * A world: how to validate its configuration, which actors make up an episode, and what the
 * sequencer does in every tick. Worlds are pure; services/ runs them.
 */
export interface WorldDefinition<Config = unknown> {
  readonly name: string;
  readonly description: string;
  /** The record types this world's episodes log beyond the kernel's (added to the catalogue when the world is registered). */
  readonly events: EventEntries;
  /** Validates a config (defaults filled in); throws an Error naming the bad field. */
  resolveConfig(raw: unknown): Config;
  readonly defaultConfig: Config;
  readonly conditions: Readonly<Record<string, ConditionInfo>>;
  /** The condition a run gets when none is named. */
  readonly defaultCondition: string;
  applyCondition(config: Config, condition: string): Config;
  defaultTicks(config: Config): number;
  /**
   * Set when the config alone fixes an episode's length (`defaultTicks`), so a run or fork given a
   * length is refused: why, and what to set instead (`n`: the length asked for; `parentTicks`: a
   * fork's parent's length, which its child keeps with its config).
   */
  readonly lengthFixedBy?: (n: number | "n", parentTicks?: number) => string;
  /**
   * The config key `applyCondition` overwrites with the condition (envprobe: `policy`), so a run's
   * --config that sets it is refused (it would be ignored): the condition is chosen by --condition.
   */
  readonly conditionConfigKey?: string;
  /**
   * Limits on what a new episode may ask for (a resolved config), beyond what makes a config valid:
   * checked when an episode starts, never when a log is read, so logs written before a limit stay
   * readable. Each entry names the field.
   */
  newEpisodeProblems?(config: Config): string[];
  actors(config: Config, seed: number): ActorDefinition[];
  /** The phase records of tick `tick`, in order; the first is the tick's `tick.started`. */
  tickPlan(config: Config, tick: number): PhaseStep[];
  /**
   * The part of an actor's context covered by the tick state hash. Worlds drop static data and
   * replace large collections by their incremental digests here.
   */
  hashView(actorId: string, context: unknown): unknown;
  /**
   * The canonical JSON of `{state: hashView(actorId, context), value}` (what an actor's part digest
   * hashes), built faster than serialising the view: the very same text, or null to have the view
   * serialised. For worlds whose actors are hashed every tick in large numbers (AURATown's agents).
   */
  partText?(actorId: string, context: unknown, value: unknown): string | null;
  /** An actor's state as people read it (for divergence diffs); its hash view when absent. */
  diffView?(actorId: string, context: unknown): unknown;
  /** Recomputes incremental digests from content (checked when a snapshot is restored). */
  checkSnapshot?(actorId: string, context: unknown): string | null;
  /**
   * Extra spans for a traced episode's records, each a child of its record's `deliver` span (DESIGN
   * §8: `probe <tool>` for each probe answer). Called once per episode with its effective config and
   * seed (so a world can name what records hold as indices); the function it returns gets each record
   * and the record that caused it (the probe's request for its answer), null when there is none.
   * Telemetry only: never affects the log.
   */
  spansOf?(config: Config, seed: number): (record: SpanSource, cause: SpanSource | null) => ExtraSpan | null;
  /** Gives a restored actor the parameters of another condition (for forks). */
  reconfigure?(actorId: string, context: unknown, config: Config, seed: number): unknown;
}
