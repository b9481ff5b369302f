// The episode sequencer (DESIGN §3): the single writer of an episode's log. Its ordering rules —
// append a round before delivering it, deliver in log order, append a delivery's replies in
// canonical recipient order, answer model requests in the same tick, end with `tick.committed` —
// live in the tick pump (tickPump.ts), which the EnvProbe direct driver runs too. The Sequencer is
// the pump's async port: the event store, the transport to the actor hosts (which may be other
// processes), the LLM responder, and telemetry (a span per tick and per delivered record).
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type Tracer } from "@opentelemetry/api";
import type { Delivered, Emitted, ExtraSpan, SpanSource, WorldDefinition } from "../../actors/actor.ts";
import { actorIndexOf, type ActorIndex, type Draft, type LogRecord, type RecordMeta } from "../../events/record.ts";
import type { LlmRequestedPayload } from "../../events/llm.ts";
import type { EventStore } from "../../infra/eventStore.ts";
import { SerializedActor } from "../../infra/snapshotStore.ts";
import type { Transport } from "../../infra/transport.ts";
import { traceparentOf } from "../../infra/telemetry.ts";
import { ActorFailed, type DeliverReply, type HostRequest, type WaveDelivery, type WaveReply } from "../distributed/actorHost.ts";
import { ActorStateMissing } from "./errors.ts";
import { noBackendAnswer, runTickAsync, SEQUENCER_ID, type LlmAnswer, type Replies, type TickPort, type TickResult } from "./tickPump.ts";

export { SEQUENCER_ID, type TickResult };

/**
 * Where each actor is served. Embedded runs put every actor behind one subject (one request per
 * record); distributed runs give each actor its own subject, and the sequencer asks the hosts of a
 * record's recipients at once, then reassembles the replies in canonical recipient order (a host
 * that takes waves gets a round's records for all its actors in one request: `useWaveHosts`).
 */
export interface Routing {
  subjectOf(actorId: string): string;
}

export const singleHost = (subject: string): Routing => ({ subjectOf: () => subject });

/** Actor ids grouped by the subject that serves them, each group in the order of `ids`. */
export function bySubject(routing: Routing, ids: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const subject = routing.subjectOf(id);
    const group = groups.get(subject);
    if (group === undefined) groups.set(subject, [id]);
    else group.push(id);
  }
  return groups;
}

const NO_REPLIES: Replies = [];

/**
 * Actors that one host process serves together (its `ping` said so, and that it takes waves), and
 * the subject their waves, digests and snapshots go to: one request for all of them.
 */
export interface WaveHost {
  readonly subject: string;
  readonly ids: readonly string[];
}

const NO_WAVE: Promise<WaveReply> = Promise.resolve({ replies: [] });

/** A round's wave: the request sent to each wave host, and where each record's deliveries went. */
interface Wave {
  readonly replies: readonly Promise<WaveReply>[];
  /** For each record of the round: per wave host it went to, the host's index and the delivery's index in its request. */
  readonly at: readonly (readonly (readonly [host: number, delivery: number])[])[];
}

/** Recipient ids a span lists; a broadcast to a larger town lists these and says it was cut. */
export const MAX_SPAN_RECIPIENT_IDS = 64;

/**
 * The attributes that join a delivery's span to its record's log line: the record's seq and hash,
 * and whom it was delivered to (its recipients in canonical order, the count always, the ids up to
 * MAX_SPAN_RECIPIENT_IDS).
 */
export function logLineAttributes(record: LogRecord, recipients: readonly string[]): Attributes {
  const cut = recipients.length > MAX_SPAN_RECIPIENT_IDS;
  return {
    "probetown.seq": record.seq,
    "probetown.hash": record.hash,
    "probetown.recipients": recipients.length,
    "probetown.recipient_ids": cut ? recipients.slice(0, MAX_SPAN_RECIPIENT_IDS) : [...recipients],
    ...(cut ? { "probetown.recipient_ids_truncated": true } : {}),
  };
}

/**
 * Answers `llm.requested` records (DESIGN §4): a live run asks the LLM gateway, a replay serves the
 * logged answer. The answer is appended as the next round, from the gateway to the requester, with
 * the request's seq as its cause, so it reaches the actor within the same tick.
 */
export interface LlmResponder {
  respond(request: LogRecord<LlmRequestedPayload>, telemetry: { readonly tracer?: Tracer; readonly parent?: Span }): Promise<LlmAnswer>;
}

/** Without a gateway every request fails at once, and the requester falls back (the log says so). */
export const noLlmGateway: LlmResponder = {
  respond: async (request) => noBackendAnswer(request.payload),
};

export interface SequencerOptions {
  readonly world: WorldDefinition;
  /** The effective config (condition applied). */
  readonly config: unknown;
  /** The episode's seed (the world's extra spans may need what it generates). */
  readonly seed: number;
  readonly store: EventStore;
  readonly transport: Transport;
  /** Where the actors are served (embedded: one host subject for all). */
  readonly routing: Routing;
  readonly actorIds: readonly string[];
  readonly tracer?: Tracer;
  /** Put wall-clock time in each record's meta (never hashed). Off for replays. */
  readonly stampTime?: boolean;
  /** Who answers `llm.requested` records (default: nobody, so every request fails with `no_backend`). */
  readonly llm?: LlmResponder;
}

export class Sequencer {
  private readonly o: SequencerOptions;
  private readonly actors: ActorIndex;
  /** Actor ids grouped by serving subject, in canonical order (for digests). */
  private hostGroups: readonly (readonly [string, readonly string[]])[];
  private readonly single: boolean;
  /** Hosts that take a round in one request (`wave`), and each actor's host among them. */
  private waveHosts: readonly WaveHost[] = [];
  private readonly waveHostOf = new Map<string, number>();
  /**
   * Per wave host, the part digests its last wave answered with, while no record has been
   * delivered to it since (the tick's digests need no request of their own).
   */
  private waveParts: (Promise<Readonly<Record<string, string>> | undefined> | undefined)[] = [];
  private episodeSpan: Span | undefined;
  /** The deliver spans of the round being delivered: those a failed tick leaves open are ended with it. */
  private roundSpans: readonly Span[] | undefined;
  /** The world's extra spans of this episode's records (traced runs of worlds that have some). */
  private readonly extraSpans: ((record: SpanSource, cause: SpanSource | null) => ExtraSpan | null) | undefined;
  recordsAppended = 0;

  constructor(options: SequencerOptions) {
    this.o = options;
    this.actors = actorIndexOf(options.actorIds);
    const groups = bySubject(options.routing, this.actors.ids);
    this.hostGroups = [...groups.entries()];
    this.single = groups.size <= 1;
    this.extraSpans = options.tracer === undefined ? undefined : options.world.spansOf?.(options.config, options.seed);
  }

  /**
   * Sends each of these hosts a round's deliveries in one request (`wave`), and asks their digests
   * and snapshots in one request each; actors of no such host (a host of an earlier build) get one
   * request per record. The hosts' actors must not overlap. Called before the first tick.
   */
  useWaveHosts(hosts: readonly WaveHost[]): void {
    if (this.single) return; // one subject already takes every record in one request
    this.waveHosts = hosts.filter((h) => h.ids.length > 0);
    this.waveHostOf.clear();
    this.waveHosts.forEach((h, i) => h.ids.forEach((id) => this.waveHostOf.set(id, i)));
    this.waveParts = this.waveHosts.map(() => undefined);
    const rest = this.actors.ids.filter((id) => !this.waveHostOf.has(id));
    this.hostGroups = [...this.waveHosts.map((h) => [h.subject, h.ids] as const), ...bySubject(this.o.routing, rest)];
  }

  /**
   * Starts the episode's span. `parent`: the trace a resumed run continues (its header's
   * `traceparent`), so an episode stays one trace; `links`: spans it comes from (a fork's parent).
   */
  startTrace(episode: string, attributes: Record<string, string | number>, options: { readonly parent?: Context; readonly links?: readonly Link[] } = {}): void {
    this.episodeSpan = this.o.tracer?.startSpan(`episode ${episode}`, { attributes: { "probetown.episode": episode, ...attributes }, ...(options.links === undefined ? {} : { links: [...options.links] }) }, options.parent);
  }

  /** The episode's span once started (its header record carries its traceparent). */
  get traceSpan(): Span | undefined {
    return this.episodeSpan;
  }

  endTrace(): void {
    this.episodeSpan?.end();
  }

  private meta(traceparent: string | undefined, ts: string | undefined): RecordMeta | undefined {
    if (ts === undefined) return traceparent === undefined ? undefined : { traceparent };
    return traceparent === undefined ? { ts } : { ts, traceparent };
  }

  /** Appends drafts; `extra` is merged into each record's meta (never hashed). */
  async append(drafts: readonly Draft[], spans?: readonly (Span | undefined)[], extra?: RecordMeta): Promise<readonly LogRecord[]> {
    return this.appendTraced(drafts, spans?.map((span) => (span === undefined ? undefined : traceparentOf(span))), extra);
  }

  /** Appends drafts, each with its span's traceparent (computed once, by the caller, for the delivery's headers too). */
  private async appendTraced(drafts: readonly Draft[], traceparents: readonly (string | undefined)[] | undefined, extra?: RecordMeta): Promise<readonly LogRecord[]> {
    // One wall-clock stamp per batch (its records are written together), and without spans or
    // extras one meta object shared by the batch's records (meta is read-only).
    const ts = this.o.stampTime === false ? undefined : new Date().toISOString();
    const shared = traceparents === undefined && extra === undefined ? this.meta(undefined, ts) : null;
    const records = await this.o.store.append(drafts, {
      expectedSeq: this.o.store.head().seq,
      meta: (_d, i) => {
        if (shared !== null) return shared;
        const meta = this.meta(traceparents?.[i], ts);
        return extra === undefined ? meta : { ...meta, ...extra };
      },
    });
    this.recordsAppended += records.length;
    return records;
  }

  /**
   * The port the tick pump drives for one tick: rounds appended to the store with a deliver span
   * per record (under the tick's span), model requests answered by the responder (a round's
   * requests concurrently), records delivered over the transport, digests asked of the hosts.
   */
  private tickPort(tickSpan: Span | undefined): TickPort {
    // A tick sampled out (its trace's sampler said no) has no deliver spans: a standard sampler
    // would sample them out too (same trace, and parent-based ones follow the tick's decision).
    const tracer = tickSpan?.isRecording() === true ? this.o.tracer : undefined;
    // The context of the tick's deliver spans, made once for all of them.
    const tickContext = tracer === undefined ? undefined : trace.setSpan(otelContext.active(), tickSpan!);
    const llm = this.o.llm ?? noLlmGateway;
    // The round being delivered, its spans and model answers; the previous round (every cause of
    // a round's records is one of its records; a phase's first round has no cause).
    let records: readonly LogRecord[] = [];
    let spans: (Span | undefined)[] | undefined;
    let traceparents: (string | undefined)[] | undefined;
    let previous: readonly LogRecord[] = [];
    let llmAnswers: Map<number, Promise<LlmAnswer>> | undefined;
    let wave: Wave | null = null;
    const settle = <T>(index: number, value: Promise<T>): Promise<T> =>
      value.then((v) => {
        spans![index]?.end();
        return v;
      });
    return {
      append: async (drafts) => {
        previous = records;
        llmAnswers = undefined;
        wave = null;
        if (tracer === undefined) records = await this.appendTraced(drafts, undefined);
        else {
          spans = drafts.map((d) => this.deliverSpan(tracer, d, tickContext!));
          this.roundSpans = spans as Span[];
          traceparents = spans.map((span) => (span === undefined ? undefined : traceparentOf(span)));
          records = await this.appendTraced(drafts, traceparents);
        }
        return records[0]!.seq;
      },
      ask: (index) => {
        // Model calls of a round run concurrently (the gateway caps them); answers join the next
        // round in log order, whichever finished first.
        const span = spans?.[index];
        const answer = llm.respond(records[index] as LogRecord<LlmRequestedPayload>, { ...(tracer === undefined ? {} : { tracer }), ...(span === undefined ? {} : { parent: span }) });
        answer.catch(() => undefined); // awaited in order, by `answer`
        (llmAnswers ??= new Map()).set(index, answer);
      },
      deliver: (index, _draft, recipients, answered) => {
        const record = records[index]!;
        const span = spans?.[index];
        if (this.extraSpans !== undefined) this.extraSpan(record, previous, span);
        // The record's seq and hash join the span to its log line (the span was started before the
        // append assigned them, so that its traceparent could go into the record's meta).
        if (span?.isRecording() === true) span.setAttributes(logLineAttributes(record, recipients));
        if (recipients.length === 0) {
          if (!answered) span?.end();
          return NO_REPLIES;
        }
        // Delivered as the store gave it back (a replay's store gives the logged record, its payload
        // read from the log).
        const delivered: Delivered = { type: record.type, payload: record.payload, from: record.from, tick: record.tick, seq: record.seq };
        const replies = wave === null ? this.deliver(delivered, recipients, traceparents?.[index], record.hash) : this.waveReplies(wave, index, delivered, recipients, traceparents?.[index], record.hash);
        return answered || span === undefined ? replies : settle(index, replies);
      },
      ...(this.waveHosts.length === 0 ? {} : { wave: (recipients: readonly (readonly string[])[], lastPhase: boolean) => void (wave = this.sendWave(records, recipients, traceparents, lastPhase)) }),
      answer: (index) => {
        const answer = llmAnswers!.get(index)!;
        return spans?.[index] === undefined ? answer : settle(index, answer);
      },
      parts: () => this.digests(),
      commit: async (draft) => {
        const [committed] = await this.append([draft], [tickSpan]);
        await this.o.store.commit();
        return committed!.seq;
      },
    };
  }

  /** The replies of each recipient, in the order of `recipients`, whichever hosts serve them. */
  private async deliver(record: Delivered, recipients: readonly string[], traceparent: string | undefined, hash: string): Promise<DeliverReply["replies"]> {
    // A traced delivery names the record's hash too, for the actor host's consumer span.
    const headers = { "pt-event": `${this.o.store.episode}:${record.seq}`, ...(traceparent === undefined ? {} : { traceparent, "pt-hash": hash }) };
    if (this.single) {
      const subject = this.o.routing.subjectOf(recipients[0]!);
      return (await this.o.transport.request<HostRequest, DeliverReply>(subject, { kind: "deliver", record, recipients }, { headers })).replies;
    }
    const answered = await Promise.all(
      [...bySubject(this.o.routing, recipients)].map(async ([subject, ids]) => {
        const reply = await this.o.transport.request<HostRequest, DeliverReply>(subject, { kind: "deliver", record, recipients: ids }, { headers });
        return ids.map((id, i) => [id, reply.replies[i] ?? []] as const);
      }),
    );
    const byId = new Map(answered.flat());
    return recipients.map((id) => byId.get(id) ?? []);
  }

  /**
   * Sends each wave host the round's records that have recipients there, in log order, in one
   * request; in the tick's last phase it asks for their digests too (the last round's answer gives
   * the tick's digests).
   */
  private sendWave(records: readonly LogRecord[], recipients: readonly (readonly string[])[], traceparents: readonly (string | undefined)[] | undefined, lastPhase: boolean): Wave {
    const deliveries: WaveDelivery[][] = this.waveHosts.map(() => []);
    const at: (readonly [number, number])[][] = [];
    const episode = this.o.store.episode;
    for (let r = 0; r < records.length; r++) {
      const here: [number, number][] = [];
      at.push(here);
      const ids = recipients[r]!;
      if (ids.length === 0) continue;
      const record = records[r]!;
      const delivered: Delivered = { type: record.type, payload: record.payload, from: record.from, tick: record.tick, seq: record.seq };
      const traceparent = traceparents?.[r];
      const traced = traceparent === undefined ? {} : { traceparent, hash: record.hash, event: `${episode}:${record.seq}` };
      // Each host's recipients of the record, in canonical order.
      for (const id of ids) {
        const h = this.waveHostOf.get(id);
        if (h === undefined) continue;
        const list = deliveries[h]!;
        const open = list[list.length - 1];
        if (open?.record === delivered) (open.recipients as string[]).push(id);
        else {
          here.push([h, list.length]);
          list.push({ record: delivered, recipients: [id], ...traced });
        }
      }
    }
    const replies = this.waveHosts.map((host, h) => {
      const list = deliveries[h]!;
      if (list.length === 0) {
        // A host this round of the last phase does not reach is asked its digests beside it (unless
        // it answered them since its last delivery): if the round is the tick's last, they are the
        // tick's, without a round trip of their own after it.
        if (lastPhase && this.waveParts[h] === undefined) {
          this.waveParts[h] = this.o.transport.request<HostRequest, Record<string, string>>(host.subject, { kind: "digest", ids: host.ids }).catch(() => undefined);
        }
        return NO_WAVE;
      }
      const reply = this.o.transport.request<HostRequest, WaveReply>(host.subject, { kind: "wave", deliveries: list, ...(lastPhase ? { digest: host.ids } : {}) });
      // Awaited by the deliveries of its records, unless one before them failed the tick.
      reply.catch(() => undefined);
      this.waveParts[h] = lastPhase ? reply.then((r) => r.parts, () => undefined) : undefined;
      return reply;
    });
    return { replies, at };
  }

  /** The replies to the round's record `index` from the wave (and from hosts that take no waves), in the order of `recipients`. */
  private async waveReplies(wave: Wave, index: number, record: Delivered, recipients: readonly string[], traceparent: string | undefined, hash: string): Promise<Replies> {
    const others = recipients.filter((id) => !this.waveHostOf.has(id));
    const fromOthers = others.length === 0 ? null : this.deliver(record, others, traceparent, hash);
    const byId = new Map<string, readonly Emitted[]>();
    for (const [h, d] of wave.at[index]!) {
      const reply = await wave.replies[h]!;
      const failed = reply.failed;
      if (failed !== undefined && failed.delivery <= d) {
        // The host stopped at an actor that failed (on this record: an earlier one would have failed
        // the tick before). Asked for the record alone, the actor fails as it would have without
        // waves, with the same error.
        await this.deliver(record, [failed.actor], traceparent, hash);
        throw new ActorFailed(failed.actor, record, "it failed in a wave and not when asked again");
      }
      const answered = reply.replies[d]!;
      // The delivery's recipients are this record's on host h, in canonical order.
      let i = 0;
      for (const id of recipients) if (this.waveHostOf.get(id) === h) byId.set(id, answered[i++] ?? []);
    }
    if (fromOthers !== null) {
      const replies = await fromOthers;
      others.forEach((id, i) => byId.set(id, replies[i] ?? []));
    }
    return recipients.map((id) => byId.get(id) ?? []);
  }

  /** Every actor's part digest, asked of each host (a wave host's last wave may have answered them). */
  async digests(): Promise<Record<string, string>> {
    const answers = await Promise.all(this.hostGroups.map(async ([subject, ids], g) => (await this.waveParts[g]) ?? this.o.transport.request<HostRequest, Record<string, string>>(subject, { kind: "digest", ids })));
    const parts: Record<string, string> = {};
    for (const id of this.actors.ids) {
      const part = answers.find((a) => a[id] !== undefined)?.[id];
      if (part === undefined) throw new ActorStateMissing({ actor: id, what: "state" });
      parts[id] = part;
    }
    return parts;
  }

  /** Every actor's persisted XState snapshot, asked of each host (for episode snapshots), serialised by its host. */
  async snapshots(): Promise<Record<string, SerializedActor>> {
    const answers = await Promise.all(this.hostGroups.map(([subject, ids]) => this.o.transport.request<HostRequest, Record<string, unknown>>(subject, { kind: "snapshot", ids })));
    const out: Record<string, SerializedActor> = {};
    for (const id of this.actors.ids) {
      const answer = answers.find((a) => a[id] !== undefined)?.[id];
      if (answer === undefined) throw new ActorStateMissing({ actor: id, what: "snapshot" });
      // A remote actor host of an earlier build answers with the snapshot object itself.
      out[id] = new SerializedActor(typeof answer === "string" ? answer : JSON.stringify(answer));
    }
    return out;
  }

  /** The world's own span for a record (e.g. `probe <tool>`), under the record's deliver span. */
  private extraSpan(record: LogRecord, previous: readonly LogRecord[], parent: Span | undefined): void {
    // A round's records have consecutive seqs.
    const cause = record.cause === null || previous.length === 0 ? null : (previous[record.cause - previous[0]!.seq] ?? null);
    // Asked of every record (the world's function may keep count), started under a recording span only.
    const extra = this.extraSpans!(record, cause?.seq === record.cause ? cause : null);
    if (extra === null || this.o.tracer === undefined || parent?.isRecording() !== true) return;
    const ctx = trace.setSpan(otelContext.active(), parent);
    // A world's attribute lists are read-only arrays; the API's type wants mutable ones it never changes.
    this.o.tracer.startSpan(extra.name, { kind: SpanKind.INTERNAL, attributes: { ...(extra.attributes as Attributes), "probetown.seq": record.seq } }, ctx).end();
  }

  private deliverSpan(tracer: Tracer, draft: Draft, tickContext: Context): Span {
    return tracer.startSpan(
      `deliver ${draft.type}`,
      { kind: SpanKind.PRODUCER, attributes: { "probetown.event.type": draft.type, "probetown.from": draft.from, "probetown.tick": draft.tick } },
      tickContext,
    );
  }

  async runTick(tick: number): Promise<TickResult> {
    const parent = this.episodeSpan === undefined ? otelContext.active() : trace.setSpan(otelContext.active(), this.episodeSpan);
    const tickSpan = this.o.tracer?.startSpan(`tick ${tick}`, { attributes: { "probetown.tick": tick } }, parent);
    let result: TickResult;
    try {
      result = await runTickAsync(this.tickPort(tickSpan), this.o.world.tickPlan(this.o.config, tick), tick, this.actors);
    } catch (error) {
      // A failed tick's span ends too (marked so), and so do its round's deliveries still open:
      // the run's flush exports them with its other spans.
      const status = { code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) };
      for (const span of this.roundSpans ?? []) if (span.isRecording()) span.setStatus(status).end();
      tickSpan?.setStatus(status);
      tickSpan?.end();
      throw error;
    } finally {
      this.roundSpans = undefined;
    }
    if (tickSpan?.isRecording() === true) tickSpan.setAttributes({ "probetown.records": result.records, "probetown.state_hash": result.stateHash });
    tickSpan?.end();
    return result;
  }
}
