// A household agent (one per task agent): decides one action a turn from its knowledge base and
// takes in what it observes at the turn's end. One handler per record type.
import { recordActorLogic, type Delivered, type Emitted } from "../actor.ts";
import type { HouseholdObservedPayload, HouseholdProbePayload } from "./events.ts";
import { learn, newKb, observe, type Kb, type PublicLayout } from "./knowledge.ts";
import { literalsIn, show } from "./pddl.ts";
import { believedHolds, decide, inferEffects, noteTold, type Policy } from "./policy.ts";
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
}

export interface AgentContext {
  readonly static: { readonly self: string; readonly layout: PublicLayout; readonly actions?: readonly string[] };
  policy: Policy;
  kb: Kb;
}

function onTurn(ctx: AgentContext, event: Delivered<{ tick: number }>): Emitted[] {
  if (ctx.kb.ended) return [];
  const { self, layout, actions } = ctx.static;
  const d = decide(ctx.kb, { self, layout, policy: ctx.policy, ...(actions === undefined ? {} : { actions }) });
  if (d.action.kind === "communicate") noteTold(ctx.kb, d.action.to === "all" ? layout.agents.filter((a) => a !== self) : d.action.to, d.action.text);
  return [{ type: "household.decided", to: HOUSE_ID, payload: { turn: event.payload.tick, agent: self, action: formatAction(d.action), why: d.why } }];
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

export const agentLogic = recordActorLogic<AgentContext, AgentInput, HouseholdEntries, "tick.started" | "household.observed" | "household.probe">({
  context: (input) => ({
    static: { self: input.self, layout: input.layout, ...(input.actions === undefined ? {} : { actions: input.actions }) },
    policy: input.policy,
    kb: newKb(input.self, input.room, input.secrets),
  }),
  handlers: {
    "tick.started": onTurn,
    "household.observed": onObserved,
    "household.probe": onProbe,
  },
  valueOf: (ctx) => (ctx.kb.ended ? "finished" : "acting"),
});
