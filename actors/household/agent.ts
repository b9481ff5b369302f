// A household agent (one per task agent): decides one action a turn from its knowledge base and
// takes in what it observes at the turn's end. One handler per record type.
//
// The LLM agent (condition `llm`, role `agent`): each turn it asks the model for its action
// (`llm.requested`, built from its own knowledge base: actors/household/llm.ts) and decides when the
// answer comes back in the same tick. The competent scripted decision is worked out first: when the
// call failed, or the answer is not a valid action, that is the turn's action (its `why` says so,
// and the agent counts the fallback).
import { recordActorLogic, type Delivered, type Emitted, type RecordIn } from "../actor.ts";
import { LLM_GATEWAY_ID } from "../../events/llm.ts";
import type { HouseholdObservedPayload, HouseholdProbePayload } from "./events.ts";
import { learn, newKb, observe, type Kb, type PublicLayout } from "./knowledge.ts";
import { literalsIn, show } from "./pddl.ts";
import { actionRequest, choicesOf, parseActionAnswer, type ActionChoices } from "./llm.ts";
import { believedHolds, decide, inferEffects, noteTold, type Decision, type Policy } from "./policy.ts";
import { answerProbe } from "./probes.ts";
import { formatAction } from "./rules.ts";
import type { HouseholdEntries } from "./events.ts";

export const HOUSE_ID = "env/household";
export const agentActorId = (agent: string): string => `agent/${agent}`;

export interface AgentInput {
  readonly self: string;
  readonly room: string;
  readonly layout: PublicLayout;
  /** Its own secrets (baseline mode: everyone's). */
  readonly secrets: readonly string[];
  readonly policy: Policy;
  readonly actions?: readonly string[];
  /** The LLM agent: its model (null: none was given, so every turn is the fallback's) and the turn limit its prompt states. */
  readonly llm?: { readonly model: string | null; readonly maxTurns: number };
}

/** The LLM agent's state: the call it waits for, and how many it made and how many turns fell back. */
export interface LlmAgentState {
  readonly model: string | null;
  readonly maxTurns: number;
  awaiting: { requestHash: string; turn: number; fallback: Decision; choices: ActionChoices } | null;
  calls: number;
  fallbacks: number;
}

export interface AgentContext {
  readonly static: { readonly self: string; readonly layout: PublicLayout; readonly actions?: readonly string[] };
  policy: Policy;
  kb: Kb;
  llm?: LlmAgentState;
}

/** The turn's decision goes to the house; a message's statements count as told. */
function decided(ctx: AgentContext, turn: number, d: Decision): Emitted[] {
  const { self, layout } = ctx.static;
  if (d.action.kind === "communicate") noteTold(ctx.kb, d.action.to === "all" ? layout.agents.filter((a) => a !== self) : d.action.to, d.action.text);
  return [{ type: "household.decided", to: HOUSE_ID, payload: { turn, agent: self, action: formatAction(d.action), why: d.why } }];
}

function onTurn(ctx: AgentContext, event: Delivered<{ tick: number }>): Emitted[] {
  if (ctx.kb.ended) return [];
  const { self, layout, actions } = ctx.static;
  const d = decide(ctx.kb, { self, layout, policy: ctx.policy, ...(actions === undefined ? {} : { actions }) });
  const llm = ctx.llm;
  if (llm === undefined) return decided(ctx, event.payload.tick, d);
  if (llm.model === null) {
    llm.fallbacks++;
    return decided(ctx, event.payload.tick, { action: d.action, why: `scripted (fallback: no model for role agent; give --llm) ${d.why}` });
  }
  const choices = choicesOf(ctx.kb, layout, self, actions);
  const request = actionRequest(llm.model, ctx.kb, layout, self, event.payload.tick, llm.maxTurns, choices);
  llm.awaiting = { requestHash: request.requestHash, turn: event.payload.tick, fallback: d, choices };
  llm.calls++;
  return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload: request }];
}

/** The model's answer: its action when valid, else the competent scripted one (counted, and said in `why`). */
function onLlm(ctx: AgentContext, event: RecordIn<HouseholdEntries, "llm.completed" | "llm.failed">): Emitted[] {
  const llm = ctx.llm;
  const waiting = llm?.awaiting;
  if (llm === undefined || waiting == null || event.payload.requestHash !== waiting.requestHash) return [];
  llm.awaiting = null;
  const parsed = event.type === "llm.completed" ? parseActionAnswer(event.payload.content, waiting.choices) : null;
  if (parsed !== null && parsed.ok) return decided(ctx, waiting.turn, { action: parsed.action, why: `llm:${llm.model}` });
  llm.fallbacks++;
  const reason = event.type === "llm.failed" ? `${event.payload.error}: ${event.payload.message}` : parsed !== null && !parsed.ok ? parsed.error : "unusable output";
  return decided(ctx, waiting.turn, { action: waiting.fallback.action, why: `scripted (fallback from llm:${llm.model}: ${reason.slice(0, 200)}) ${waiting.fallback.why}` });
}

function onObserved(ctx: AgentContext, event: Delivered<HouseholdObservedPayload>): Emitted[] {
  const p = event.payload;
  const kb = ctx.kb;
  kb.room = p.room;
  kb.holding = p.holding;
  kb.last = p.outcome === null ? null : { ...p.outcome };
  if (p.outcome?.ok === true && p.outcome.action.startsWith("Communicate[")) kb.sent++;
  observe(kb, p.rooms, ctx.static.layout, ctx.static.self);
  if (p.outcome?.ok === true) inferEffects(kb, p.outcome.action);
  if (p.holding !== null) kb.loc[p.holding] = { heldBy: ctx.static.self };
  // Who said what, whatever the policy: knowing is not acting (the literal probes read it).
  for (const m of p.messages) for (const s of literalsIn(m.text)) {
    const said = (kb.heardFrom[m.from] ??= []);
    if (!said.includes(show(s))) said.push(show(s));
  }
  // The naive agent acts on its own goal only: what it is told does not change its plan.
  if (ctx.policy !== "naive")
    for (const m of p.messages) {
      // What a teammate said, it knows: never told back to it.
      noteTold(kb, [m.from], m.text);
      for (const s of literalsIn(m.text)) {
        learn(kb, ctx.static.self, s);
        const key = show(s);
        if (!kb.heard.includes(key)) kb.heard.push(key);
      }
    }
  kb.ended = p.ended;
  return [];
}

/** The literal probes after the episode: answered from what this agent knows. */
function onProbe(ctx: AgentContext, event: Delivered<HouseholdProbePayload>): Emitted[] {
  const self = ctx.static.self;
  const answers = event.payload.probes.map((q) => answerProbe(ctx.kb, q, (l) => believedHolds(ctx.kb, l, self)));
  return [{ type: "household.probeAnswered", to: HOUSE_ID, payload: { turn: event.payload.turn, agent: self, answers } }];
}

export const agentLogic = recordActorLogic<AgentContext, AgentInput, HouseholdEntries, "tick.started" | "household.observed" | "household.probe" | "llm.completed" | "llm.failed">({
  context: (input) => ({
    static: { self: input.self, layout: input.layout, ...(input.actions === undefined ? {} : { actions: input.actions }) },
    policy: input.policy,
    kb: newKb(input.self, input.room, input.secrets),
    ...(input.llm === undefined ? {} : { llm: { model: input.llm.model, maxTurns: input.llm.maxTurns, awaiting: null, calls: 0, fallbacks: 0 } }),
  }),
  handlers: {
    "tick.started": onTurn,
    "llm.completed": onLlm,
    "llm.failed": onLlm,
    "household.observed": onObserved,
    "household.probe": onProbe,
  },
  valueOf: (ctx) => (ctx.kb.ended ? "finished" : "acting"),
});
