// A household agent (one per task agent): decides one action a turn from its knowledge base and
// takes in what it observes at the turn's end. One handler per record type.
//
// The LLM agent (condition `llm`, role `agent`): each turn it asks the model for its action
// (`llm.requested`, built from its own knowledge base: actors/household/llm.ts) and decides when the
// answer comes back in the same tick. The competent scripted decision is worked out first: when the
// call failed, or the answer is not a valid action, that is the turn's action (its `why` says so,
// and the agent counts the fallback). Its prompt carries its knowledge base and its last turns
// (the transcript, bounded by the config's `history`).
//
// After the episode, the LLM agent puts its literal probes to the model (one call per depth, as the
// release does: actors/household/llm.ts `probeRequest`); a failed or invalid answer falls back to
// the knowledge base's answer for those probes, counted and logged with the answers.
import { recordActorLogic, type Delivered, type Emitted, type RecordIn } from "../actor.ts";
import { LLM_GATEWAY_ID } from "../../events/llm.ts";
import type { HouseholdObservedPayload, HouseholdProbePayload, HouseholdTrajectoryPayload } from "./events.ts";
import { findInKb, foundText } from "./find.ts";
import { learn, newKb, observe, readTrajectory, type Kb, type PublicLayout } from "./knowledge.ts";
import { literalsIn, show } from "./pddl.ts";
import { parseJsonObject } from "../aura/llm.ts";
import { actionRequest, choicesOf, parseActionAnswer, parseProbeAnswers, probeRequest, probeSpecOfRequest, resultText, sawOf, type ActionChoices, type ProbeSpec, type TurnRecord } from "./llm.ts";
import { believedHolds, decide, inferEffects, noteTold, type Decision, type Policy } from "./policy.ts";
import { answerProbe, type ProbeAnswer, type ProbeQuestion } from "./probes.ts";
import { FIND_TOOLS, formatAction, parseAction } from "./rules.ts";
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
  /**
   * The LLM agent: its model (null: none was given, so every turn is the fallback's), the turn limit
   * its prompt states and how many of its last turns the prompt carries.
   */
  readonly llm?: { readonly model: string | null; readonly maxTurns: number; readonly historyTurns: number };
  /** Baseline mode: every teammate's secrets. */
  readonly revealed?: Readonly<Record<string, readonly string[]>>;
  /** Tools beyond the task's actions: ReadAgentTrajectory (baseline mode), the Find tools (config findTools). Absent: none. */
  readonly tools?: { readonly read: boolean; readonly find: boolean };
}

/** The probe calls in flight after the episode: the questions, the knowledge base's answers (the fallback), the model's so far. */
export interface ProbingState {
  turn: number;
  questions: ProbeQuestion[];
  fallback: ProbeAnswer[];
  /** Each call in flight and the spec its request states (what its answer is checked against). */
  awaiting: { requestHash: string; spec: ProbeSpec }[];
  answers: Record<string, ProbeAnswer>;
  fellBack: { probeId: string; reason: string }[];
}

/**
 * The LLM agent's state: the call it waits for, how many it made and how many turns fell back, its
 * transcript (its last `historyTurns` turns) and, after the episode, its probe calls.
 */
export interface LlmAgentState {
  readonly model: string | null;
  readonly maxTurns: number;
  readonly historyTurns: number;
  awaiting: { requestHash: string; turn: number; fallback: Decision; choices: ActionChoices } | null;
  calls: number;
  fallbacks: number;
  /** This turn's thought (null: the model's answer was not used) until the turn's observation writes it into the history. */
  note: { thought: string | null; fallback: boolean } | null;
  history: TurnRecord[];
  probing: ProbingState | null;
  probeCalls: number;
  probeFallbacks: number;
}

/** A fresh LLM agent state (a new episode, or a fork into condition `llm`). */
export const newLlmState = (model: string | null, maxTurns: number, historyTurns: number): LlmAgentState => ({ model, maxTurns, historyTurns, awaiting: null, calls: 0, fallbacks: 0, note: null, history: [], probing: null, probeCalls: 0, probeFallbacks: 0 });

export interface AgentContext {
  readonly static: { readonly self: string; readonly layout: PublicLayout; readonly actions?: readonly string[]; readonly tools?: { readonly read: boolean; readonly find: boolean } };
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
  const { self, layout, actions, tools } = ctx.static;
  const d = decide(ctx.kb, { self, layout, policy: ctx.policy, ...(actions === undefined ? {} : { actions }), ...(tools === undefined ? {} : { tools }) });
  const llm = ctx.llm;
  if (llm === undefined) return decided(ctx, event.payload.tick, d);
  if (llm.model === null) {
    llm.fallbacks++;
    llm.note = { thought: null, fallback: true };
    return decided(ctx, event.payload.tick, { action: d.action, why: `scripted (fallback: no model for role agent; give --llm) ${d.why}` });
  }
  const choices = choicesOf(ctx.kb, layout, self, actions, tools);
  const request = actionRequest(llm.model, ctx.kb, layout, self, event.payload.tick, llm.maxTurns, choices, llm.history);
  llm.awaiting = { requestHash: request.requestHash, turn: event.payload.tick, fallback: d, choices };
  llm.calls++;
  return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload: request }];
}

/** The model's answer: its action when valid, else the competent scripted one (counted, and said in `why`). */
function onLlm(ctx: AgentContext, event: RecordIn<HouseholdEntries, "llm.completed" | "llm.failed">): Emitted[] {
  const llm = ctx.llm;
  if (llm?.probing?.awaiting.some((w) => w.requestHash === event.payload.requestHash) === true) return onProbeLlm(ctx, llm, llm.probing, event);
  const waiting = llm?.awaiting;
  if (llm === undefined || waiting == null || event.payload.requestHash !== waiting.requestHash) return [];
  llm.awaiting = null;
  const parsed = event.type === "llm.completed" ? parseActionAnswer(event.payload.content, waiting.choices) : null;
  if (parsed !== null && parsed.ok) {
    const value = event.type === "llm.completed" ? parseJsonObject(event.payload.content) : null;
    const thought = value?.ok === true && typeof value.value.thought === "string" ? value.value.thought.trim().slice(0, 300) : "";
    llm.note = { thought, fallback: false };
    return decided(ctx, waiting.turn, { action: parsed.action, why: `llm:${llm.model}` });
  }
  llm.fallbacks++;
  llm.note = { thought: null, fallback: true };
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
  if (kb.baseline !== undefined) kb.baseline.turn = p.turn;
  // A Find tool's answer (config findTools): from its own knowledge base at the turn's end, logged.
  const out: Emitted[] = [];
  let found: string | null = null;
  const tool = p.outcome?.ok === true && ctx.static.tools?.find === true ? parseAction(p.outcome.action) : null;
  if (tool !== null && !("error" in tool) && tool.kind === "find") {
    const results = findInKb(kb, ctx.static.layout, tool.tool, tool.query);
    found = foundText(results);
    out.push({ type: "household.found", to: null, payload: { turn: p.turn, agent: ctx.static.self, tool: FIND_TOOLS[tool.tool], query: tool.query, results } });
  }
  // The LLM agent's transcript: this turn's action, its result, what it saw and what it was told.
  const llm = ctx.llm;
  if (llm !== undefined && (p.outcome !== null || p.messages.length > 0)) {
    const note = llm.note ?? { thought: null, fallback: false };
    llm.note = null;
    llm.history.push({ turn: p.turn, thought: note.thought, fallback: note.fallback, action: p.outcome?.action ?? "(none)", result: p.outcome === null ? "You did not act." : (found ?? resultText(p.outcome)), saw: sawOf(p.rooms, ctx.static.self), room: p.room, heard: p.messages.map((m) => ({ from: m.from, text: m.text })) });
    if (llm.history.length > llm.historyTurns) llm.history.splice(0, llm.history.length - llm.historyTurns);
  }
  return out;
}

/** Baseline mode: a teammate's trajectory it asked for (ReadAgentTrajectory), taken into its knowledge base. */
function onTrajectory(ctx: AgentContext, event: Delivered<HouseholdTrajectoryPayload>): Emitted[] {
  const p = event.payload;
  if (p.agent === ctx.static.self) readTrajectory(ctx.kb, p.partner, p.upTo, p.steps);
  return [];
}

/**
 * The literal probes after the episode. A scripted agent answers from what it knows. The LLM agent
 * asks its model, one call per depth (the release's batching), and keeps the knowledge base's
 * answers as the fallback; with no model, every probe falls back.
 */
function onProbe(ctx: AgentContext, event: Delivered<HouseholdProbePayload>): Emitted[] {
  const self = ctx.static.self;
  const answers = event.payload.probes.map((q) => answerProbe(ctx.kb, q, (l) => believedHolds(ctx.kb, l, self)));
  const llm = ctx.llm;
  if (llm === undefined) return [{ type: "household.probeAnswered", to: HOUSE_ID, payload: { turn: event.payload.turn, agent: self, answers } }];
  const questions = event.payload.probes.map((q) => ({ ...q, subjects: [...q.subjects] }));
  const probing: ProbingState = { turn: event.payload.turn, questions, fallback: answers, awaiting: [], answers: {}, fellBack: [] };
  llm.probing = probing;
  if (llm.model === null) {
    for (const q of questions) probing.fellBack.push({ probeId: q.probeId, reason: "no model for role agent; give --llm" });
    return probesAnswered(ctx, llm, probing);
  }
  const out: Emitted[] = [];
  for (const depth of [...new Set(questions.map((q) => q.depth))].sort((a, b) => a - b)) {
    const asked = questions.filter((q) => q.depth === depth);
    const request = probeRequest(llm.model, ctx.kb, ctx.static.layout, self, event.payload.turn, llm.maxTurns, llm.history, asked);
    probing.awaiting.push({ requestHash: request.requestHash, spec: probeSpecOfRequest(request)! });
    llm.probeCalls++;
    out.push({ type: "llm.requested", to: LLM_GATEWAY_ID, payload: request });
  }
  return out.length === 0 ? probesAnswered(ctx, llm, probing) : out;
}

/** A probe call's answer: the model's answers when valid, else the knowledge base's for those probes (counted). */
function onProbeLlm(ctx: AgentContext, llm: LlmAgentState, probing: ProbingState, event: RecordIn<HouseholdEntries, "llm.completed" | "llm.failed">): Emitted[] {
  const waiting = probing.awaiting.find((w) => w.requestHash === event.payload.requestHash)!;
  probing.awaiting = probing.awaiting.filter((w) => w !== waiting);
  const parsed = event.type === "llm.completed" ? parseProbeAnswers(event.payload.content, waiting.spec) : null;
  if (parsed !== null && parsed.ok) for (const a of parsed.answers) probing.answers[a.probeId] = a;
  else {
    const reason = event.type === "llm.failed" ? `${event.payload.error}: ${event.payload.message}` : parsed !== null && !parsed.ok ? parsed.error : "unusable output";
    for (const id of waiting.spec.ids) probing.fellBack.push({ probeId: id, reason: reason.slice(0, 200) });
  }
  return probing.awaiting.length === 0 ? probesAnswered(ctx, llm, probing) : [];
}

/** Every probe call is back: the answers, the model's where it gave a valid one, the knowledge base's elsewhere. */
function probesAnswered(ctx: AgentContext, llm: LlmAgentState, probing: ProbingState): Emitted[] {
  const fellBack = new Set(probing.fellBack.map((f) => f.probeId));
  const answers = probing.questions.map((q, i) => (fellBack.has(q.probeId) ? probing.fallback[i]! : (probing.answers[q.probeId] ?? probing.fallback[i]!)));
  llm.probeFallbacks += fellBack.size;
  const payload = { turn: probing.turn, agent: ctx.static.self, answers, llm: { model: llm.model ?? "none", calls: llm.probeCalls, fallbacks: probing.fellBack.map((f) => ({ ...f })) } };
  llm.probing = null;
  return [{ type: "household.probeAnswered", to: HOUSE_ID, payload }];
}

export const agentLogic = recordActorLogic<AgentContext, AgentInput, HouseholdEntries, "tick.started" | "household.observed" | "household.probe" | "household.trajectory" | "llm.completed" | "llm.failed">({
  context: (input) => ({
    static: { self: input.self, layout: input.layout, ...(input.actions === undefined ? {} : { actions: input.actions }), ...(input.tools === undefined ? {} : { tools: input.tools }) },
    policy: input.policy,
    kb: newKb(input.self, input.room, input.secrets, input.revealed),
    ...(input.llm === undefined ? {} : { llm: newLlmState(input.llm.model, input.llm.maxTurns, input.llm.historyTurns) }),
  }),
  handlers: {
    "tick.started": onTurn,
    "llm.completed": onLlm,
    "llm.failed": onLlm,
    "household.observed": onObserved,
    "household.probe": onProbe,
    "household.trajectory": onTrajectory,
  },
  valueOf: (ctx) => (ctx.kb.ended ? "finished" : "acting"),
});
