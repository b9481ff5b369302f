// Hosts a set of an episode's actors (all of them embedded; some of them in a distributed run) and
// answers the sequencer's requests: deliver a record, report state digests, hand over snapshots.
import { createActor, type AnyActorLogic } from "xstate";
import { isRecordActorLogic, type ActorDefinition, type Delivered, type Emitted, type WorldDefinition } from "../../actors/actor.ts";
import { canonicalJson, sha256Hex } from "../../events/canonical.ts";
import { ActorNotHosted, HostSnapshotUnavailable } from "./errors.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import type { Transport } from "../../infra/transport.ts";
import { contextOfTraceparent } from "../../infra/telemetry.ts";
import { SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";

export type HostRequest =
  | { readonly kind: "deliver"; readonly record: Delivered; readonly recipients: readonly string[] }
  | { readonly kind: "digest"; readonly ids?: readonly string[] }
  /** Each actor's persisted snapshot as JSON text (serialised once, at the tick it is taken). */
  | { readonly kind: "snapshot"; readonly ids?: readonly string[] }
  | { readonly kind: "ping" }
  /**
   * Start the actors over from the state a run continues from: as the episode begins (`snapshot`
   * null) or as in that episode snapshot (its key). A resumed run's remote hosts may hold any state
   * (fresh, or where a failed run left them); the sequencer sets it before the first tick.
   */
  | { readonly kind: "restore"; readonly snapshot: string | null; readonly ids?: readonly string[] }
  /** The episode is over: a host serving only this episode may stop. */
  | { readonly kind: "release" }
  /**
   * A delivery wave (protocol WAVE_PROTOCOL): a round's records for this host's actors, delivered in
   * the order given (log order), answered in one reply; `digest`: the part digests of these actors
   * as the wave leaves them, in the same reply. Sent only to a host whose `ping` answer says
   * `waves`: a host of an earlier build answers nothing to it, and gets one `deliver` per record.
   */
  | { readonly kind: "wave"; readonly deliveries: readonly WaveDelivery[]; readonly digest?: readonly string[] };

export interface DeliverReply {
  readonly replies: readonly (readonly Emitted[])[];
}

/**
 * The version of the `wave` request a host answers, said in its `ping` and `release` answers
 * (`{ actors, waves }`); a host of an earlier build says no `waves`.
 */
export const WAVE_PROTOCOL = 1;

/** What a host says to `ping` (and `release`): the actors it serves, and whether it takes waves. */
export interface PingReply {
  readonly actors: readonly string[];
  readonly waves?: number;
}

/**
 * One record of a wave and its recipients on the host (canonical order); a traced run adds what a
 * `deliver` request carries in its headers: the deliver span's `traceparent`, the record's hash and
 * event id (`<episode>:<seq>`).
 */
export interface WaveDelivery {
  readonly record: Delivered;
  readonly recipients: readonly string[];
  readonly traceparent?: string;
  readonly hash?: string;
  readonly event?: string;
}

/**
 * The answer to a wave: each delivery's replies (each recipient's, in its order), up to the one
 * where an actor failed (`failed`: that delivery and actor: a `deliver` of that record to that
 * actor gives its error, as it would have without waves); the asked part digests when none failed.
 */
export interface WaveReply {
  readonly replies: readonly (readonly (readonly Emitted[])[])[];
  readonly failed?: { readonly delivery: number; readonly actor: string };
  readonly parts?: Readonly<Record<string, string>>;
}

/** An actor's machine threw handling a record: the world's fault, not the input's. */
export class ActorFailed extends TaggedError {
  readonly _tag = "ActorFailed";
  readonly exitCode = ExitCode.internal;
  constructor(actorId: string, record: Delivered, cause: unknown) {
    super(`actor ${actorId} failed handling '${record.type}' (seq ${record.seq}, tick ${record.tick}): ${(cause as Error)?.message ?? String(cause)}`);
  }
}

const NO_REPLY: readonly Emitted[] = Object.freeze([]);

/** An actor's snapshot as the host reads it. */
interface HostedSnapshot {
  readonly status: string;
  readonly error?: unknown;
  readonly context: unknown;
  readonly value: unknown;
}

/** What the host uses of a hosted actor: an XState actor, or a record-handler actor it runs itself. */
interface HostedActor {
  send(record: Delivered): void;
  getSnapshot(): HostedSnapshot;
  getPersistedSnapshot(): unknown;
  stop(): void;
}

/**
 * A record-handler actor (recordActorLogic) that the host runs itself: its logic's transition is
 * called with each delivered record exactly as XState's interpreter calls it (the same snapshot,
 * event and emitted events, in the same order; a handler's exception leaves the snapshot in the
 * error state), without the mailbox, system relay, inspection and listener copies the interpreter
 * spends on every event — a 1,000-agent AURATown day delivers ~170,000 records, most of them
 * broadcasts that every resident gets. Each actor keeps its own snapshot under its own id, and its
 * snapshots persist and restore through the same logic functions as an XState actor's.
 */
class RecordActor implements HostedActor {
  private snapshot: HostedSnapshot;
  private readonly scope: { readonly emit: (event: Emitted) => void };
  private readonly logic: AnyActorLogic;

  constructor(logic: AnyActorLogic, input: unknown, persisted: unknown, emit: (event: Emitted) => void) {
    this.logic = logic;
    this.scope = { emit };
    try {
      this.snapshot = persisted === undefined ? logic.getInitialSnapshot(this.scope as never, input) : logic.restoreSnapshot!(persisted as never, this.scope as never);
    } catch (error) {
      this.snapshot = { status: "error", error, context: undefined, value: undefined };
    }
  }

  send(record: Delivered): void {
    if (this.snapshot.status !== "active") return;
    try {
      this.snapshot = this.logic.transition(this.snapshot as never, record as never, this.scope as never);
    } catch (error) {
      this.snapshot = { ...this.snapshot, status: "error", error };
    }
  }

  getSnapshot(): HostedSnapshot {
    return this.snapshot;
  }

  getPersistedSnapshot(): unknown {
    return this.logic.getPersistedSnapshot(this.snapshot as never);
  }

  stop(): void {
    if (this.snapshot.status === "active") this.snapshot = { ...this.snapshot, status: "stopped" };
  }
}

interface Hosted {
  readonly ref: HostedActor;
  readonly outbox: Emitted[];
  failure: unknown;
  /**
   * The part digest last computed and the snapshot it was computed from; null once a record has
   * been delivered since. An actor's state changes only by handling a record, but record-handler
   * actors (recordActorLogic) update their context in place and keep their snapshot object, so an
   * unchanged snapshot object alone does not prove an unchanged state: both must hold.
   */
  digest: string | null;
  digestOf: unknown;
}

export interface HostOptions {
  /** Persisted XState snapshots to restore, by actor id (from an episode snapshot). */
  readonly restore?: Readonly<Record<string, unknown>>;
  /** Host only these actors (default: all of the world's actors). */
  readonly only?: readonly string[];
}

export interface ServeOptions {
  readonly tracer?: Tracer;
  readonly onRelease?: () => void;
  readonly onRequest?: (request: HostRequest) => void;
  readonly load?: (snapshot: string) => Promise<Readonly<Record<string, unknown>>>;
}

export class ActorHost {
  private readonly hosted = new Map<string, Hosted>();
  private readonly definitions = new Map<string, ActorDefinition>();
  private readonly world: WorldDefinition;
  /** The world of the episode it hosts. */
  get worldName(): string {
    return this.world.name;
  }
  readonly ids: readonly string[];

  constructor(world: WorldDefinition, definitions: readonly ActorDefinition[], options: HostOptions = {}) {
    this.world = world;
    const chosen = definitions.filter((d) => options.only === undefined || options.only.includes(d.id));
    for (const def of chosen) {
      this.definitions.set(def.id, def);
      this.start(def, options.restore);
    }
    this.ids = [...this.hosted.keys()].sort();
  }

  private start(def: ActorDefinition, restore: Readonly<Record<string, unknown>> | undefined): void {
    const outbox: Emitted[] = [];
    const snapshot = restore?.[def.id];
    if (restore !== undefined && snapshot === undefined) throw new ActorNotHosted({ actor: def.id, reason: "not-in-snapshot" });
    if (isRecordActorLogic(def.logic)) {
      const ref = new RecordActor(def.logic, def.input, snapshot, (event) => outbox.push(event));
      this.hosted.set(def.id, { ref, outbox, failure: undefined, digest: null, digestOf: undefined });
      return;
    }
    const ref = createActor(def.logic, snapshot === undefined ? { input: def.input } : { input: def.input, snapshot: snapshot as never });
    const entry: Hosted = { ref: ref as HostedActor, outbox, failure: undefined, digest: null, digestOf: undefined };
    ref.on("*", (event: Emitted) => outbox.push(event));
    ref.subscribe({ error: (err: unknown) => (entry.failure = err) });
    ref.start();
    this.hosted.set(def.id, entry);
  }

  /** Starts these actors over: fresh from their definitions, or from persisted snapshots (by actor id). */
  restart(ids: readonly string[], restore?: Readonly<Record<string, unknown>>): void {
    for (const id of ids) {
      const def = this.definitions.get(id);
      if (def === undefined) throw new ActorNotHosted({ actor: id, reason: "not-hosted" });
      this.entry(id).ref.stop();
      this.start(def, restore);
    }
  }

  deliver(record: Delivered, recipients: readonly string[]): (readonly Emitted[])[] {
    const replies: (readonly Emitted[])[] = [];
    for (const id of recipients) {
      const entry = this.hosted.get(id);
      if (entry === undefined) throw new ActorNotHosted({ actor: id, reason: "not-hosted" });
      // An actor that failed takes no more records: asked again (after a wave that stopped at it),
      // it fails the same way.
      if (entry.failure !== undefined) throw new ActorFailed(id, record, entry.failure);
      entry.outbox.length = 0;
      entry.digest = null;
      entry.ref.send(record);
      if (entry.failure !== undefined || entry.ref.getSnapshot().status === "error") {
        throw new ActorFailed(id, record, entry.failure ?? entry.ref.getSnapshot().error);
      }
      // Most deliveries emit nothing: share one empty reply instead of a new array each time.
      replies.push(entry.outbox.length === 0 ? NO_REPLY : entry.outbox.splice(0));
    }
    return replies;
  }

  /**
   * Delivers a wave's records in order (each to its recipients here) and says every reply; stops at
   * the first actor that fails, saying which. `span`, when given, wraps each actor's delivery (a
   * traced host's consumer span).
   */
  wave(request: { readonly deliveries: readonly WaveDelivery[]; readonly digest?: readonly string[] }, span?: (delivery: WaveDelivery, actor: string, deliver: () => readonly Emitted[]) => readonly Emitted[]): WaveReply {
    const replies: (readonly Emitted[])[][] = [];
    const { deliveries } = request;
    for (let d = 0; d < deliveries.length; d++) {
      const delivery = deliveries[d]!;
      const out: (readonly Emitted[])[] = [];
      for (const id of delivery.recipients) {
        try {
          const deliver = () => this.deliver(delivery.record, [id])[0]!;
          out.push(span === undefined ? deliver() : span(delivery, id, deliver));
        } catch {
          return { replies, failed: { delivery: d, actor: id } };
        }
      }
      replies.push(out);
    }
    return request.digest === undefined ? { replies } : { replies, parts: this.digests(request.digest) };
  }

  private entry(id: string): Hosted {
    const entry = this.hosted.get(id);
    if (entry === undefined) throw new ActorNotHosted({ actor: id, reason: "not-hosted" });
    return entry;
  }

  /**
   * 64-bit digest of each actor's hashed state (its world's hash view plus its state value). An
   * actor that has been delivered nothing since its last digest, and whose snapshot is the same
   * object, keeps that digest: only actors whose state may have changed are hashed again.
   */
  digests(ids: readonly string[] = this.ids): Record<string, string> {
    const parts: Record<string, string> = {};
    for (const id of ids) {
      const entry = this.entry(id);
      const snapshot = entry.ref.getSnapshot();
      if (entry.digest === null || entry.digestOf !== snapshot) {
        entry.digest = partDigest(this.world, id, snapshot);
        entry.digestOf = snapshot;
      }
      parts[id] = entry.digest;
    }
    return parts;
  }

  /** Deep copies of the actors' persisted snapshots, safe to store. */
  snapshots(ids: readonly string[] = this.ids): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const id of ids) out[id] = JSON.parse(JSON.stringify(this.entry(id).ref.getPersistedSnapshot()));
    return out;
  }

  /** The actors' persisted snapshots as JSON text: a copy taken now, serialised once (for storing). */
  snapshotTexts(ids: readonly string[] = this.ids): Record<string, string> {
    const out: Record<string, string> = {};
    for (const id of ids) out[id] = JSON.stringify(this.entry(id).ref.getPersistedSnapshot());
    return out;
  }

  contextOf(id: string): unknown {
    return this.hosted.get(id)?.ref.getSnapshot().context;
  }

  handle(request: HostRequest): DeliverReply | WaveReply | Record<string, string> | PingReply {
    switch (request.kind) {
      case "deliver":
        return { replies: this.deliver(request.record, request.recipients) };
      case "wave":
        return this.wave(request);
      case "digest":
        return this.digests(request.ids);
      case "snapshot":
        return this.snapshotTexts(request.ids);
      case "restore":
        // A snapshot is loaded by whoever serves this host (serveEach's `load`): the host has no store.
        if (request.snapshot !== null) throw new HostSnapshotUnavailable({ key: request.snapshot, reason: "no-store" });
        this.restart(request.ids ?? this.ids);
        return { actors: request.ids ?? this.ids };
      case "ping":
      case "release":
        return { actors: this.ids, waves: WAVE_PROTOCOL };
    }
  }

  /** Serves all hosted actors on one subject (the embedded layout). */
  serve(transport: Transport, subject: string): () => void {
    return transport.serve<HostRequest, unknown>(subject, (request) => this.handle(request));
  }

  /**
   * Serves each hosted actor on its own subject (the distributed layout; any of them takes a wave
   * for all of them), each delivery inside a consumer span that continues the sequencer's trace
   * from the `traceparent` header (a wave's delivery: from its own). `load` gives
   * a snapshot's persisted actors (checked) for `restore` requests naming one; `onRequest` is told
   * of every request (an actor host notices a sequencer that has gone quiet).
   */
  serveEach(transport: Transport, subjectOf: (actorId: string) => string, options: ServeOptions = {}): () => void {
    const tracer = options.tracer;
    const stops = this.ids.map((id) =>
      transport.serve<HostRequest, unknown>(subjectOf(id), (request, headers) => {
        options.onRequest?.(request);
        if (request.kind === "release") queueMicrotask(() => options.onRelease?.());
        if (request.kind === "restore") {
          const ids = request.ids ?? [id];
          const load = options.load;
          if (request.snapshot === null || load === undefined) return this.handle({ ...request, ids });
          return load(request.snapshot).then((actors) => {
            this.restart(ids, actors);
            return { actors: ids };
          });
        }
        if (tracer === undefined) return this.handle(request);
        // A wave's deliveries each get the consumer span a `deliver` request of theirs would get.
        if (request.kind === "wave") return this.wave(request, (delivery, actor, deliver) => consumed(tracer, actor, delivery.record, delivery.traceparent, delivery.event, delivery.hash, deliver));
        if (request.kind !== "deliver") return this.handle(request);
        return consumed(tracer, id, request.record, headers.traceparent, headers["pt-event"], headers["pt-hash"], () => this.handle(request));
      }),
    );
    return () => stops.forEach((stop) => stop());
  }

  stop(): void {
    for (const entry of this.hosted.values()) entry.ref.stop();
  }
}

/** Runs `deliver` inside a consumer span that continues the sequencer's deliver span (`traceparent`). */
function consumed<T>(tracer: Tracer, actor: string, record: Delivered, traceparent: string | undefined, event: string | undefined, hash: string | undefined, deliver: () => T): T {
  const span = tracer.startSpan(
    `deliver ${record.type}`,
    { kind: SpanKind.CONSUMER, attributes: { "probetown.actor": actor, "probetown.event.type": record.type, "probetown.seq": record.seq, "probetown.tick": record.tick, ...(event === undefined ? {} : { "probetown.event.id": event }), ...(hash === undefined ? {} : { "probetown.hash": hash }) } },
    contextOfTraceparent(traceparent),
  );
  try {
    return deliver();
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

export function partDigest(world: WorldDefinition, id: string, snapshot: { value: unknown; context: unknown }): string {
  const text = world.partText?.(id, snapshot.context, snapshot.value) ?? canonicalJson({ state: world.hashView(id, snapshot.context), value: snapshot.value });
  return sha256Hex(text).slice(0, 16);
}

/** The tick state hash: sha256 over the canonical tick number and every actor's part digest. */
export function stateHashOf(tick: number, parts: Readonly<Record<string, string>>): string {
  // Keys in sorted order, so canonical JSON takes its no-copy path (the same text: it sorts them anyway).
  return sha256Hex(canonicalJson({ parts, tick }));
}
