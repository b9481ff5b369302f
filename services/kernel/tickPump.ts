// The tick pump (DESIGN §3): the one place the sequencer's ordering rules live. A tick appends the
// world's phase records one at a time and pumps each to quiescence — append a round, deliver its
// records in log order, append their replies in canonical recipient order (a model request's answer
// after the request's replies) as the next round — then appends `tick.committed` with the actors'
// part digests. The pump does no I/O: it asks a `TickPort` to append, deliver, answer and digest,
// and it suspends only where the port answers with a promise, so the same rules drive the async
// Sequencer (transport, store, spans) and the synchronous EnvProbe direct driver (plain handler
// calls, in-memory sealing) alike.
import type { Delivered, Emitted, PhaseStep } from "../../actors/actor.ts";
import { recipientsOf, type ActorIndex, type Draft } from "../../events/record.ts";
import { LLM_GATEWAY_ID, type LlmRequestedPayload } from "../../events/llm.ts";
import { stateHashOf } from "../distributed/actorHost.ts";

/** The sequencer's actor id: the sender of phase records and `tick.committed`. */
export const SEQUENCER_ID = "episode";

export interface TickResult {
  readonly tick: number;
  /** The seq of the tick's `tick.committed`. */
  readonly seq: number;
  readonly stateHash: string;
  readonly parts: Readonly<Record<string, string>>;
  /** Records the tick appended, `tick.committed` included. */
  readonly records: number;
}

/** Each recipient's emitted events, in the order of the recipients they were delivered to. */
export type Replies = readonly (readonly Emitted[] | undefined)[];

/** What answers a model request: `llm.completed` or `llm.failed`, sent from the gateway to the requester. */
export interface LlmAnswer {
  readonly type: "llm.completed" | "llm.failed";
  readonly payload: unknown;
}

/** The answer to a model request when no gateway is configured: the requester falls back, and the log says why. */
export const noBackendAnswer = (request: LlmRequestedPayload): LlmAnswer => ({
  type: "llm.failed",
  payload: { attempts: 0, error: "no_backend", fallback: "deterministic", message: "no LLM gateway is configured for this run", requestHash: request.requestHash },
});

/** A port's answer: at once (`TickPort<true>`, the synchronous driver), or at once or later (a promise). */
type Out<Sync extends boolean, T> = Sync extends true ? T : T | Promise<T>;

/**
 * What the pump asks of its driver. Within a round, calls come in this order: `append` the round;
 * `ask` for each model request in it; then for each record in log order, `deliver` and, for a model
 * request, `answer`. After the last phase: `parts`, then `commit`.
 */
export interface TickPort<Sync extends boolean = boolean> {
  /** Appends a round of drafts in order and says the first one's seq (a round's seqs are consecutive). */
  append(drafts: readonly Draft[]): Out<Sync, number>;
  /**
   * A model request was appended at `index` of the round: start answering it. Every request of a
   * round is asked before any of the round is delivered, so a driver may answer them concurrently.
   */
  ask(index: number, request: Delivered<LlmRequestedPayload>): void;
  /**
   * Optional: told once a round is appended, before its first `ask` and `deliver`, every record's
   * recipients (canonical order; the same arrays `deliver` then gets), so a driver may send a host
   * the whole round at once. `lastPhase`: the round belongs to the tick's last phase (the part
   * digests follow the last such round).
   */
  wave?(recipients: readonly (readonly string[])[], lastPhase: boolean): void;
  /**
   * Delivers the record at `index` of the round to its recipients (canonical order) and says what
   * each emitted, in that order. Called for every record of the round, in log order; `recipients`
   * is empty for a record delivered to nobody (a fact for observers): nothing is sent and the
   * replies are ignored. `answered`: `answer` follows for this record. `record` is built from the
   * draft; a port whose store gives records back (a replay's gives the logged ones) may deliver
   * those instead: they have the same fields.
   */
  deliver(index: number, record: Delivered, recipients: readonly string[], answered: boolean): Out<Sync, Replies>;
  /** The answer to the model request at `index` (asked before the round's deliveries). */
  answer(index: number, request: Delivered<LlmRequestedPayload>): Out<Sync, LlmAnswer>;
  /** Every actor's part digest, as the tick leaves them. */
  parts(): Out<Sync, Readonly<Record<string, string>>>;
  /** Appends `tick.committed` (and makes the tick durable) and says its seq. */
  commit(draft: Draft): Out<Sync, number>;
}

// Where a tick's pump is: the port call it made last, whose answer it goes on with.
const START = 0;
const APPENDED = 1;
const DELIVERED = 2;
const ANSWERED = 3;
const DIGESTED = 4;
const COMMITTED = 5;
type State = typeof START | typeof APPENDED | typeof DELIVERED | typeof ANSWERED | typeof DIGESTED | typeof COMMITTED;

/**
 * One tick's protocol, as a resumable loop: `run` goes on as far as the port answers at once, and
 * returns the promise of an answer that is not ready yet; the driver settles it and runs on with its
 * value. So the synchronous driver runs a tick in one `run` and the Sequencer suspends where its
 * port waits. (A generator reads shorter but cost the EnvProbe sweep ~2%: its episodes are ~0.7 ms.)
 */
export class TickPump {
  private readonly port: TickPort;
  private readonly sync: boolean;
  private readonly phases: readonly PhaseStep[];
  private readonly tick: number;
  private readonly actors: ActorIndex;
  private state: State = START;
  /** The next phase to pump. */
  private phase = 0;
  /** The round being delivered, its first seq, and the next round: the replies so far. */
  private round: Draft[] = [];
  private first = 0;
  private next: Draft[] = [];
  /** The model requests of the round. */
  private asks = 0;
  /** The record being delivered: its index in the round, recipients and delivered form. */
  private r = 0;
  private recipients: readonly string[] = [];
  /** Each record's recipients, computed when the round was appended (for a port that takes waves). */
  private waveRecipients: (readonly string[])[] | null = null;
  private record: Delivered | null = null;
  private records = 0;
  private parts: Readonly<Record<string, string>> = {};
  private stateHash = "";

  /** `sync`: the port answers at once (never a promise). */
  constructor(port: TickPort, sync: boolean, phases: readonly PhaseStep[], tick: number, actors: ActorIndex) {
    this.port = port;
    this.sync = sync;
    this.phases = phases;
    this.tick = tick;
    this.actors = actors;
  }

  /**
   * Runs the tick on. `value`: what the promise `run` returned last settled to. Says the tick's
   * result once it is committed, or the promise of a port answer to wait for.
   */
  run(value?: unknown): TickResult | Promise<unknown> {
    for (;;) {
      let answer: unknown;
      switch (this.state) {
        case START:
          answer = this.nextPhase();
          break;
        case APPENDED: {
          // A round is appended in full before any of it is delivered, and its model requests are
          // asked before its first delivery (a driver may answer them concurrently).
          this.first = value as number;
          this.records += this.round.length;
          this.next = [];
          this.asks = 0;
          if (this.port.wave !== undefined) {
            const actors = this.actors;
            this.waveRecipients = this.round.map((d) => recipientsOf(d.to, d.from, actors));
            this.port.wave(this.waveRecipients, this.phase >= this.phases.length);
          }
          for (let r = 0; r < this.round.length; r++) {
            const d = this.round[r]!;
            if (d.type !== "llm.requested") continue;
            this.port.ask(r, { type: d.type, payload: d.payload as LlmRequestedPayload, from: d.from, tick: this.tick, seq: this.first + r });
            this.asks++;
          }
          this.r = 0;
          answer = this.deliver();
          break;
        }
        case DELIVERED: {
          // Replies in canonical recipient order, whatever order they arrived in.
          const replies = value as Replies;
          const { recipients, tick } = this;
          const cause = this.first + this.r;
          for (let i = 0; i < recipients.length; i++) {
            const emitted = replies[i];
            if (emitted === undefined) continue;
            for (const e of emitted) this.next.push({ type: e.type, from: recipients[i]!, to: e.to, payload: e.payload, tick, cause });
          }
          if (this.answered()) {
            this.state = ANSWERED;
            answer = this.port.answer(this.r, this.record as Delivered<LlmRequestedPayload>);
          } else {
            answer = this.advance();
          }
          break;
        }
        case ANSWERED: {
          // The model's answer goes to the requester after the request's replies, in the same tick.
          const { type, payload } = value as LlmAnswer;
          const request = this.round[this.r]!;
          this.next.push({ type, from: LLM_GATEWAY_ID, to: request.from, payload, tick: this.tick, cause: this.first + this.r });
          answer = this.advance();
          break;
        }
        case DIGESTED:
          this.parts = value as Readonly<Record<string, string>>;
          this.stateHash = stateHashOf(this.tick, this.parts);
          this.state = COMMITTED;
          answer = this.port.commit({ type: "tick.committed", from: SEQUENCER_ID, to: null, payload: { parts: this.parts, stateHash: this.stateHash }, tick: this.tick, cause: null });
          break;
        case COMMITTED:
          return { tick: this.tick, seq: value as number, stateHash: this.stateHash, parts: this.parts, records: this.records + 1 };
      }
      if (!this.sync && answer instanceof Promise) return answer;
      value = answer;
    }
  }

  private answered(): boolean {
    return this.asks > 0 && this.round[this.r]!.type === "llm.requested";
  }

  /** Delivers the round's record `r` (every record, in log order). */
  private deliver(): unknown {
    const d = this.round[this.r]!;
    this.recipients = this.waveRecipients?.[this.r] ?? recipientsOf(d.to, d.from, this.actors);
    this.record = { type: d.type, payload: d.payload, from: d.from, tick: this.tick, seq: this.first + this.r };
    this.state = DELIVERED;
    return this.port.deliver(this.r, this.record, this.recipients, this.answered());
  }

  /** After record `r`: the round's next record, else the next round, else the next phase. */
  private advance(): unknown {
    if (++this.r < this.round.length) return this.deliver();
    this.round = this.next;
    if (this.round.length > 0) {
      this.state = APPENDED;
      return this.port.append(this.round);
    }
    return this.nextPhase();
  }

  /** The next phase's record appended, or, after the last phase, the part digests asked for. */
  private nextPhase(): unknown {
    const phase = this.phases[this.phase++];
    if (phase === undefined) {
      this.state = DIGESTED;
      return this.port.parts();
    }
    this.round = [{ type: phase.type, from: SEQUENCER_ID, to: phase.to, payload: phase.payload, tick: this.tick, cause: null }];
    this.state = APPENDED;
    return this.port.append(this.round);
  }
}

/** Runs one tick through a port that answers at once (the EnvProbe direct driver). */
export function runTickSync(port: TickPort<true>, phases: readonly PhaseStep[], tick: number, actors: ActorIndex): TickResult {
  return new TickPump(port, true, phases, tick, actors).run() as TickResult;
}

/** Runs one tick through a port that may answer later (the Sequencer): each promise is settled before the pump goes on. */
export async function runTickAsync(port: TickPort, phases: readonly PhaseStep[], tick: number, actors: ActorIndex): Promise<TickResult> {
  const pump = new TickPump(port, false, phases, tick, actors);
  let out = pump.run();
  while (out instanceof Promise) out = pump.run(await out);
  return out;
}
