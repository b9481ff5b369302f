// The endpoint's circuit: what the gateway has learnt about its endpoint in this run, and when it
// stops asking it.
//   - Until the endpoint has been tried once, one call at a time (the gate, an Effect `Latch`): a
//     wrong key or model is then refused once (the calls that waited fail at once), not once per
//     call in flight.
//   - A refused key, URL or quota condemns the endpoint, an unknown model that model, for the rest
//     of the run: later calls are not asked (`RefusedBefore`).
//   - After `unreachableAfter` calls in a row got no answer at all (every attempt failed to connect
//     or timed out), the endpoint is taken as down for the rest of the run (`GivenUp`). A hanging
//     server counts: waiting out every call's timeouts made a 25-query eval take hours.
//   - `problems()`: what of this made calls fall back for the configuration's sake (exit 5).
// A circuit that never closes again is not what effect's (time-based, half-opening)
// CircuitBreaker models, so this one is kept here, small.
import { Effect, Latch } from "effect";
import type { ChatError } from "../../infra/openaiClient.ts";
import { GAVE_UP, HTTP_ERROR_KINDS, isConfigKind, NOT_ASKED, type EndpointProblem } from "./problems.ts";
import { GivenUp, RefusedBefore } from "./errors.ts";

export class EndpointCircuit {
  /** host:port of the endpoint. */
  private readonly server: string;
  private readonly baseURL: string;
  private readonly unreachableAfter: number;

  private readonly gate = Latch.makeUnsafe(false);
  private openerChosen = false;

  private endpointRefusal: EndpointProblem | null = null;
  private readonly modelRefusals = new Map<string, EndpointProblem>();

  // Calls in a row that got no answer at all; at `unreachableAfter` the endpoint is taken as down.
  private unreachableStreak = 0;
  private unreachableKind: "network" | "timeout" = "network";
  // The first connection failure (what `problems()` names), and whether anything ever answered.
  private firstNoAnswer: string | null = null;
  private answered = false;
  // Per model: the first HTTP error a call ended on (5xx, 429 after the retries), and whether any call
  // got a usable answer: every call to a model failing so is a model the endpoint is not serving
  // (`errors_only`), not chance, even while another model's calls complete.
  private readonly firstHttpErrors = new Map<string, EndpointProblem>();
  private readonly completedModels = new Set<string>();

  constructor(options: { readonly server: string; readonly baseURL: string; readonly unreachableAfter: number }) {
    this.server = options.server;
    this.baseURL = options.baseURL;
    this.unreachableAfter = options.unreachableAfter;
  }

  /** Calls in a row that ended without an answer so far. */
  get unansweredInARow(): number {
    return this.unreachableStreak;
  }

  /**
   * Waits for the first call's first attempt; true for the call that makes it (it opens the gate
   * after that attempt, or when it ends without one).
   */
  readonly passGate: Effect.Effect<boolean> = Effect.suspend(() => {
    if (this.gate.isOpen()) return Effect.succeed(false);
    if (this.openerChosen) return Effect.as(this.gate.await, false);
    this.openerChosen = true;
    return Effect.succeed(true);
  });

  /**
   * Opens the gate for good. The calls that waited resume once the opener's fiber yields (the
   * latch schedules them), so they see what its attempt taught the circuit (a refusal, a streak).
   */
  readonly openGate: Effect.Effect<void> = Effect.asVoid(Effect.suspend(() => this.gate.open));

  /** Why a call to `model` is not asked (an earlier refusal, or the endpoint given up); undefined when it is. */
  notAsked(model: string): RefusedBefore | GivenUp | undefined {
    const refused = this.endpointRefusal ?? this.modelRefusals.get(model);
    if (refused !== undefined && isConfigKind(refused.kind)) return new RefusedBefore({ kind: refused.kind, message: this.refusedBefore(refused) });
    if (this.unreachableAfter > 0 && this.unreachableStreak >= this.unreachableAfter) {
      const kind = this.unreachableKind;
      return new GivenUp({ kind, message: `${GAVE_UP}${this.unreachableStreak} calls in a row got no answer (${kind === "network" ? "could not connect" : "timed out"}) from ${this.server}; not asked again in this run` });
    }
    return undefined;
  }

  /** The message of a call not asked because of an earlier refusal. */
  private refusedBefore(p: EndpointProblem): string {
    const server = this.server;
    return `${NOT_ASKED}${p.kind === "auth" ? `${server} refused an earlier call (${p.message}): check the API key` : p.kind === "quota" ? `${server} refused an earlier call for quota (${p.message}): check the account's plan and billing` : p.kind === "model_not_found" ? `${server} does not serve model '${p.model}' (${p.message})` : `${server} has no chat-completions API at ${this.baseURL} (${p.message})`}; not asked again in this run`;
  }

  /** An attempt failed for good (no retry helps): keeps the first refusal of the endpoint (a key, a URL, a quota) or of a model. */
  refused(e: ChatError, model: string): void {
    if (!isConfigKind(e.kind)) return;
    const problem: EndpointProblem = { kind: e.kind, status: e.status, message: e.message, server: this.server, model, live: true };
    if (e.kind === "model_not_found") {
      if (!this.modelRefusals.has(model)) this.modelRefusals.set(model, problem);
    } else this.endpointRefusal ??= problem;
  }

  /** A call's attempts ended on `e` (after its retries). */
  callFailed(e: ChatError, model: string): void {
    if (e.kind === "network" || e.kind === "timeout") {
      this.unreachableStreak++;
      this.unreachableKind = e.kind;
      this.firstNoAnswer ??= e.message;
    } else this.answered = true;
    if (HTTP_ERROR_KINDS.has(e.kind) && !this.firstHttpErrors.has(model)) this.firstHttpErrors.set(model, { kind: "errors_only", status: e.status, message: e.message, server: this.server, model, live: true });
  }

  /** A reply came (usable or not): the endpoint is there. */
  replied(): void {
    this.unreachableStreak = 0;
    this.answered = true;
  }

  /** A call to `model` completed (a usable reply, or a recorded one served). */
  completed(model: string): void {
    this.completedModels.add(model);
  }

  /** What made calls fall back for the configuration's sake so far; empty when nothing did. */
  problems(): EndpointProblem[] {
    const down = (this.unreachableAfter > 0 && this.unreachableStreak >= this.unreachableAfter) || (!this.answered && this.firstNoAnswer !== null);
    return [
      ...(this.endpointRefusal === null ? [] : [this.endpointRefusal]),
      ...this.modelRefusals.values(),
      ...(down ? [{ kind: "unreachable" as const, status: null, message: this.firstNoAnswer ?? "no answer", server: this.server, model: null, live: true }] : []),
      ...[...this.firstHttpErrors].filter(([model]) => !this.completedModels.has(model)).map(([, p]) => p),
    ];
  }
}
