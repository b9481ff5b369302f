// What each stage of the AURA controller does (paper §3, Algorithm 1), as the steps its statechart
// (machine.ts) runs as named actions and the checks it makes as named guards: a step updates the
// context in place and returns the records it emits. Sense/Scene/Memory open a query; the
// IntentInferrer gives a frame and the budget B(g) ≤ maxSteps; plan-once strategies fix their
// calls; Explore asks one probe at a time; Reason and Interact answer (reason.ts). With LLM
// backends (`llm` in the input) the intent, planner and answer stages each emit an `llm.requested`
// and continue on the logged `llm.completed` / `llm.failed`: nothing is in flight inside the actor
// (DESIGN §3). A failed or unusable answer falls back to that stage's deterministic backend, and
// the logged `backend` labels say which backend produced what.
import type { Emitted, RecordIn } from "../../actor.ts";
import type { IntentFramePayload } from "../events.ts";
import { LLM_GATEWAY_ID, type LlmRequestedPayload } from "../../../events/llm.ts";
import { canonicalJson } from "../../../events/canonical.ts";
import { deterministicInferrer, gapToBudget, analyseQuery, type IntentInferrer, type QueryAnalysis } from "../intent.ts";
import { callKey, candidates, plansOnce, usesFrame, type PlannedCall } from "../strategies.ts";
import { importanceOf, observationText, remember, retrieve } from "../memory.ts";
import { analyseFactual, factualFrame, type FactualAnalysis } from "../factual.ts";
import { ALL_TOOLS } from "../tools.ts";
import { answerRequest, intentRequest, type AnswerStyle, parseAnswer, parseIntentFrame, parsePlannerPlan, parsePlannerStep, plannerPlanRequest, plannerStepRequest } from "../llm.ts";
import { listFor, memoriesOf, nextCall, ownerOf, shuffled, view, working, type ControllerContext, type LlmWork, type ModelAnswer, type Working } from "./context.ts";
import { answerOf, reason, render } from "./reason.ts";
import type { SceneEntries } from "../events.ts";

const inferrers: Readonly<Record<string, IntentInferrer>> = { deterministic: deterministicInferrer };

type LlmRole = "intent" | "planner" | "answer";

/** The model of an LLM role (the guard that chose the LLM backend has checked there is one). */
function modelOf(ctx: ControllerContext, role: LlmRole): string {
  const model = ctx.static.llm?.[role];
  if (model == null) throw new Error(`the AURA controller has no model for its ${role} stage`);
  return model;
}

function llmOf(w: Working): LlmWork {
  if (w.llm === undefined) throw new Error("the AURA controller's query has no LLM stages");
  return w.llm;
}

/** Asks the gateway; the stage's awaitingModel state waits for the answer to this request. */
function ask(w: Working, payload: LlmRequestedPayload): Emitted[] {
  llmOf(w).awaiting = { model: payload.model, requestHash: payload.requestHash };
  return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload }];
}

/** The request a model answered (the guard `answersRequest` matched it) is no longer awaited: whose model it asked. */
function answered(work: LlmWork): string {
  if (work.awaiting === null) throw new Error("the AURA controller awaits no model answer");
  const { model } = work.awaiting;
  work.awaiting = null;
  return model;
}

/** Guard: a model's answer to the request the controller awaits (any other is ignored). */
export function answersRequest(ctx: ControllerContext, event: ModelAnswer): boolean {
  const awaiting = ctx.current?.llm?.awaiting;
  return awaiting != null && event.payload.requestHash === awaiting.requestHash;
}

/** The content of a model's answer, or null when the call failed. */
const contentOf = (event: ModelAnswer): string | null => (event.type === "llm.completed" ? event.payload.content : null);

/** Why a stage falls back: the call's error, or an answer it could not use. */
const whyFellBack = (event: ModelAnswer): string => (event.type === "llm.failed" ? event.payload.error : "unusable output");

function fellBack(work: LlmWork, role: LlmRole, model: string, why: string): string {
  const label = `deterministic (fallback from llm:${model}: ${why})`;
  work.backends[role] = label;
  return label;
}

// ---- idle → inferring: Sense, Scene and Memory --------------------------------------------------

/** A `user.query` opens a query: the perceived scene's literal parse (shared by every condition), the visiting order, Memory's retrieval. */
export function sense(ctx: ControllerContext, event: RecordIn<SceneEntries, "user.query">): Emitted[] {
  const { queryId, text } = event.payload;
  const s = ctx.static;
  const kind = s.strategy.kind;
  const analysis = analyseQuery(text, s.scene);
  const budget = kind === "literal" ? 0 : s.strategy.maxSteps;
  const scopeAgents = analysis.scope.kind === "none" ? [] : [...analysis.scope.agents];
  const order = analysis.scope.kind === "person" ? scopeAgents : shuffled(ctx, scopeAgents);
  const asker = s.askers[queryId] ?? null;
  const factual = s.registry === "environment" ? analyseFactual(text, Object.keys(s.places).sort(), s.places, Object.keys(s.scene.public).sort()) : null;
  // Memory: retrieve for this query, then store the query itself (it is not its own memory).
  const clock = ctx.queries + 1;
  const recalled = s.strategy.memory ? retrieve(ctx.recall, text, clock) : [];
  if (s.strategy.memory) ctx.recall = remember(ctx.recall, { content: text, importance: importanceOf({ kind: "query" }), kind: "query", t: clock });
  const w: Working = { queryId, asker, factual, text, analysis, frame: null, budget, order, plan: null, readings: [], tried: [], pending: null, calls: 0, disclosure: 0, clock, recalled };
  if (s.llm != null) w.llm = { awaiting: null, backends: {}, observations: [], plannerFallback: false, answerText: null };
  ctx.current = w;
  ctx.queries++;
  return [];
}

// ---- inferring: the IntentInferrer ---------------------------------------------------------------

/** Guard: the condition infers a frame, on an LLM intent backend. */
export const intentByLlm = (ctx: ControllerContext): boolean => usesFrame(ctx.static.strategy.kind) && ctx.static.llm?.intent != null;

/** The deterministic IntentInferrer: the frame and B(g), logged as `intent.inferred`, for the conditions that infer one. */
export function inferIntent(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  const s = ctx.static;
  const kind = s.strategy.kind;
  const inferrer = inferrers[s.strategy.inferrer] ?? deterministicInferrer;
  if (w.factual !== null) {
    if (usesFrame(kind)) {
      const frame = factualFrame(w.text, w.factual);
      const budget = kind === "aura-no-probe" ? 0 : gapToBudget(frame.gap, s.strategy.maxSteps);
      ctx.current = { ...w, frame, budget };
      return [{ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory: [], maxSteps: budget, queryId: w.queryId, ...memoriesOf(ctx, w) } }];
    }
    if (kind === "vanilla" || kind === "static-context") ctx.current = { ...w, budget: 0 };
    return [];
  }
  if (!usesFrame(kind)) return [];
  const { analysis, frame } = inferrer.infer(w.text, s.scene, s.tools);
  const budget = gapToBudget(frame.gap, s.strategy.maxSteps);
  const full = candidates(kind, view(ctx, { ...w, analysis }, false));
  const fromMemory = s.strategy.reuse ? full.map(callKey).filter((k) => ctx.memory[k]?.ok === true) : [];
  ctx.current = { ...w, analysis, frame, budget };
  return [{ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory, maxSteps: budget, queryId: w.queryId, ...memoriesOf(ctx, w) } }];
}

export function askIntent(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  // RECENT MEMORIES: what the Memory stage retrieved for this query (≤ 5, best first).
  return ask(w, intentRequest(modelOf(ctx, "intent"), w.text, ctx.static.scene, w.recalled.map((m) => m.content), ctx.static.tools, w.queryId));
}

/** The model's frame (routed to calls), or the deterministic one when the call failed or the frame is unusable. */
export function takeIntent(ctx: ControllerContext, event: ModelAnswer): Emitted[] {
  const w = working(ctx);
  const work = llmOf(w);
  const model = answered(work);
  const content = contentOf(event);
  const parsed = content === null ? null : parseIntentFrame(content, w.text, ctx.static.tools);
  if (parsed?.ok === true) {
    work.backends.intent = `llm:${model}`;
    return withFrame(ctx, w, { frame: parsed.frame, ...routedByFrame(ctx, w, parsed.frame) }, `llm:${model}`);
  }
  return withFrame(ctx, w, deterministicFrame(ctx, w), fellBack(work, "intent", model, whyFellBack(event)));
}

/** The deterministic IntentInferrer (the fallback of the LLM one), as the inferring stage runs it. */
function deterministicFrame(ctx: ControllerContext, w: Working): { frame: IntentFramePayload; analysis: QueryAnalysis; factual: FactualAnalysis | null } {
  if (w.factual !== null) return { frame: factualFrame(w.text, w.factual), analysis: w.analysis, factual: w.factual };
  const inferred = deterministicInferrer.infer(w.text, ctx.static.scene, ctx.static.tools);
  return { frame: inferred.frame, analysis: inferred.analysis, factual: null };
}

/**
 * Routes an LLM frame to calls (reference/aura.md §5.5, v2): the frame decides which tools and the
 * budget; arguments come from the query text (names, places) and the observed scene. A belief
 * question keeps to beliefs whatever the frame recommends (the release's policy filter).
 */
function routedByFrame(ctx: ControllerContext, w: Working, frame: IntentFramePayload): { analysis: QueryAnalysis; factual: FactualAnalysis | null } {
  const probes = new Set(frame.recommended_probes);
  if (w.factual !== null) {
    const tools = frame.recommended_probes.filter((t) => ctx.static.tools.includes(t)).map((tool) => ({ tool, location: tool === "get_location_info" ? w.factual!.place : null }));
    return { analysis: w.analysis, factual: { place: w.factual.place, tools, unanswerable: tools.length === 0 && w.factual.unanswerable } };
  }
  const a = w.analysis;
  const second = a.secondOrder ?? (probes.has("get_agent_belief_about") && a.mentioned.length >= 2 ? { believer: a.mentioned[0]!, target: a.mentioned[1]!, fields: ["availability", "emotional_state"] as const } : null);
  if (second !== null) return { analysis: { ...a, secondOrder: second, scope: { kind: "person", agents: [second.believer] }, hidden: [], asked: [], wantsPlan: false }, factual: null };
  let scope = a.scope;
  let hidden = a.hidden;
  if (probes.has("get_agent_private_state")) {
    if (scope.kind === "none") {
      const focus = ctx.static.scene.focus;
      scope = { kind: "location", location: focus, agents: Object.keys(ctx.static.scene.public).sort().filter((n) => ctx.static.scene.public[n]!.location === focus) };
    }
    if (hidden.length === 0) hidden = ["availability", "emotional_state"];
  } else hidden = [];
  return { analysis: { ...a, scope, hidden, wantsPlan: probes.has("get_agent_plan") && scope.kind === "person" }, factual: null };
}

function withFrame(ctx: ControllerContext, w: Working, inferred: { frame: IntentFramePayload; analysis: QueryAnalysis; factual: FactualAnalysis | null }, backend: string): Emitted[] {
  const s = ctx.static;
  const kind = s.strategy.kind;
  const { frame, analysis, factual } = inferred;
  const budget = factual !== null && kind === "aura-no-probe" ? 0 : gapToBudget(frame.gap, s.strategy.maxSteps);
  // A scope the frame widened (nobody named → the people at the focus place) is visited in seeded order.
  const order = canonicalJson(analysis.scope) === canonicalJson(w.analysis.scope) ? w.order : analysis.scope.kind === "none" ? [] : analysis.scope.kind === "person" ? [...analysis.scope.agents] : shuffled(ctx, analysis.scope.agents);
  const next: Working = { ...w, analysis, factual, frame, budget, order };
  const fromMemory = factual === null && s.strategy.reuse ? candidates(kind, view(ctx, next, false)).map(callKey).filter((k) => ctx.memory[k]?.ok === true) : [];
  ctx.current = next;
  return [{ type: "intent.inferred", to: null, payload: { backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory, maxSteps: budget, queryId: w.queryId, ...memoriesOf(ctx, next) } }];
}

// ---- planning: plan-once strategies fix their calls -------------------------------------------------

/** Guard: Plan-and-Solve with an LLM planner and a budget asks the model for its plan. */
export function planByLlm(ctx: ControllerContext): boolean {
  const w = working(ctx);
  return ctx.static.strategy.kind === "plan-and-solve" && ctx.static.llm?.planner != null && w.llm !== undefined && w.budget > 0;
}

/** A plan-once strategy fixes its list now; the others choose each call while probing. */
export function fixPlan(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  if (plansOnce(ctx.static.strategy.kind)) w.plan = listFor(ctx, w, false);
  return [];
}

export function askPlan(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  const s = ctx.static;
  return ask(w, plannerPlanRequest(modelOf(ctx, "planner"), w.text, s.scene, w.asker, s.tools, w.budget, w.queryId));
}

/** The model's plan, or the deterministic one when the call failed or the plan is unusable. */
export function takePlan(ctx: ControllerContext, event: ModelAnswer): Emitted[] {
  const w = working(ctx);
  const work = llmOf(w);
  const model = answered(work);
  const content = contentOf(event);
  const parsed = content === null ? null : parsePlannerPlan(content);
  if (parsed?.ok === true) {
    work.backends.planner = `llm:${model}`;
    w.plan = parsed.steps.map((st) => callFromLlm(ctx, w, st.tool, st.arguments));
  } else {
    fellBack(work, "planner", model, whyFellBack(event));
    w.plan = listFor(ctx, w, false);
  }
  return [];
}

// ---- probing: Explore, one probe at a time ---------------------------------------------------------

/** The ReAct-style strategies, whose LLM planner chooses each step. */
const STEPWISE: ReadonlySet<string> = new Set(["no-intent", "react", "reflexion", "aura-full"]);

/** Guard: the LLM planner chooses the next step (until one of its answers is unusable). */
export function stepsByLlm(ctx: ControllerContext): boolean {
  const w = working(ctx);
  return ctx.static.llm?.planner != null && w.llm !== undefined && !w.llm.plannerFallback && STEPWISE.has(ctx.static.strategy.kind);
}

/** Guard: the budget B(g) is spent. */
export function budgetSpent(ctx: ControllerContext): boolean {
  const w = working(ctx);
  return w.calls >= w.budget;
}

/** Guard: the strategy has a call left to make (Algorithm 1's step; none once the budget is spent). */
export const hasNextCall = (ctx: ControllerContext): boolean => nextCall(ctx, working(ctx)) !== null;

export function askStep(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  const s = ctx.static;
  return ask(w, plannerStepRequest(modelOf(ctx, "planner"), s.strategy.kind, w.text, s.scene, w.asker, s.tools, w.budget - w.calls, llmOf(w).observations, w.queryId));
}

/** The strategy's next call, as a `probe.requested` to whoever answers it. */
export function probeNext(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  const call = nextCall(ctx, w);
  if (call === null) throw new Error("the AURA controller has no call left to make");
  return issue(ctx, w, call);
}

function issue(ctx: ControllerContext, w: Working, call: PlannedCall): Emitted[] {
  w.pending = call;
  w.tried.push(callKey(call));
  w.calls++;
  return [{
    type: "probe.requested",
    to: ownerOf(ctx, call),
    payload: { args: call.args, budgetBefore: w.budget - w.calls + 1, call: w.calls, field: call.field, queryId: w.queryId, target: call.target, tool: call.tool },
  }];
}

/** What a planner step's answer asks for: nothing usable (fall back), stop, or a new call. */
export type PlannerMove = { readonly kind: "unusable" } | { readonly kind: "stop" } | { readonly kind: "call"; readonly call: PlannedCall };

export function plannerMove(ctx: ControllerContext, event: ModelAnswer): PlannerMove {
  const w = working(ctx);
  const content = contentOf(event);
  const parsed = content === null ? null : parsePlannerStep(content);
  if (parsed?.ok !== true) return { kind: "unusable" };
  if (parsed.step.action === "stop") return { kind: "stop" };
  const call = callFromLlm(ctx, w, parsed.step.tool, parsed.step.arguments);
  // A model repeating a call it already made has nothing more to learn: stop.
  return w.tried.includes(callKey(call)) ? { kind: "stop" } : { kind: "call", call };
}

/** The planner's step was unusable: this query explores deterministically from here on. */
export function plannerFallsBack(ctx: ControllerContext, event: ModelAnswer): Emitted[] {
  const work = llmOf(working(ctx));
  fellBack(work, "planner", answered(work), whyFellBack(event));
  work.plannerFallback = true;
  return [];
}

/** The planner stops (or repeats a call): on to the answer. */
export function plannerStops(ctx: ControllerContext): Emitted[] {
  const work = llmOf(working(ctx));
  const model = answered(work);
  if (work.backends.planner === undefined) work.backends.planner = `llm:${model}`;
  return [];
}

/** The planner's call, as a probe. */
export function plannerCalls(ctx: ControllerContext, event: ModelAnswer): Emitted[] {
  const w = working(ctx);
  const move = plannerMove(ctx, event);
  if (move.kind !== "call") throw new Error("the AURA controller's planner made no call");
  plannerStops(ctx);
  return issue(ctx, w, move.call);
}

/** Guard: the answer or refusal of the probe in flight. */
export function answersProbe(ctx: ControllerContext, event: RecordIn<SceneEntries, "probe.answered" | "probe.denied">): boolean {
  const w = ctx.current;
  return w !== null && w.pending !== null && event.payload.queryId === w.queryId;
}

/** A probe's answer: read (kept for reuse and in Memory when the strategy has them). */
export function readAnswer(ctx: ControllerContext, event: RecordIn<SceneEntries, "probe.answered">): Emitted[] {
  const w = working(ctx);
  const call = w.pending;
  if (call === null) throw new Error("the AURA controller has no probe in flight");
  const reading = { args: call.args, ok: event.payload.ok, result: event.payload.result, source: `probe:${call.tool}`, target: call.target, tool: call.tool };
  w.readings.push(reading);
  w.disclosure += event.payload.disclosure;
  if (ctx.static.strategy.reuse && reading.ok) ctx.memory[callKey(call)] = { ...reading, source: `memory:${call.tool}` };
  if (ctx.static.strategy.memory) {
    const importance = importanceOf({ kind: "observation", ok: reading.ok, disclosure: event.payload.disclosure });
    ctx.recall = remember(ctx.recall, { content: observationText(call.tool, call.args, reading.ok, reading.result), importance, kind: "observation", t: w.clock });
  }
  w.pending = null;
  w.llm?.observations.push({ args: call.args, outcome: canonicalJson(event.payload.result ?? null), tool: call.tool });
  return [];
}

/** A probe's refusal: the planner is told why. */
export function noteRefusal(ctx: ControllerContext, event: RecordIn<SceneEntries, "probe.denied">): Emitted[] {
  const w = working(ctx);
  if (w.pending === null) throw new Error("the AURA controller has no probe in flight");
  w.llm?.observations.push({ args: w.pending.args, outcome: `refused: ${event.payload.reason}`, tool: w.pending.tool });
  w.pending = null;
  return [];
}

// ---- answering: Reason and Interact ----------------------------------------------------------------

/** Guard: an LLM answer backend writes the answer's text (asked once per query). */
export function answerByLlm(ctx: ControllerContext): boolean {
  const w = working(ctx);
  return ctx.static.llm?.answer != null && w.llm !== undefined && w.llm.answerText === null && w.llm.backends.answer === undefined;
}

export function askAnswer(ctx: ControllerContext): Emitted[] {
  const w = working(ctx);
  const work = llmOf(w);
  const s = ctx.static;
  const facts = reason(ctx, w);
  const evidence = [
    ...facts.map((f) => render([f])),
    ...work.observations.map((o) => `${o.tool}(${Object.entries(o.args).map(([k, v]) => `${k}=${v}`).join(", ")}) -> ${o.outcome}`),
  ];
  const kind = s.strategy.kind;
  return ask(w, answerRequest(modelOf(ctx, "answer"), {
    style: answerStyle(kind, w.factual !== null), query: w.text, scene: kind === "vanilla" ? null : s.scene, asker: w.asker, implicitNeed: w.frame?.implicit_need ?? [],
    secondOrder: w.analysis.secondOrder !== null && w.factual === null, evidence,
  }, w.queryId));
}

/** The model's text, or the deterministic rendering when the call failed or the answer is unusable. */
export function takeAnswer(ctx: ControllerContext, event: ModelAnswer): Emitted[] {
  const work = llmOf(working(ctx));
  const model = answered(work);
  const content = contentOf(event);
  const parsed = content === null ? null : parseAnswer(content);
  if (parsed?.ok === true) {
    work.backends.answer = `llm:${model}`;
    work.answerText = parsed.text;
  } else fellBack(work, "answer", model, whyFellBack(event));
  return [];
}

/** Interact: the query's `answer.given`; the controller is idle again. */
export const giveAnswer = (ctx: ControllerContext): Emitted[] => answerOf(ctx, working(ctx));

/** The synthesis a condition ends with (llm.ts AnswerStyle): the release's prompt of that baseline. */
function answerStyle(kind: string, factual: boolean): AnswerStyle {
  if (factual) return "factual";
  if (kind === "literal") return "literal";
  if (kind === "no-intent") return "react";
  if (kind === "plan-and-solve") return "plan-and-solve";
  return "intent";
}

/** Turns a planner's tool call into a probe; names are matched to the roster, the asker is implied. */
function callFromLlm(ctx: ControllerContext, w: Working, tool: string, args: Readonly<Record<string, string>>): PlannedCall {
  const roster = Object.keys(ctx.static.scene.public);
  const name = (n: string | undefined) => (n === undefined ? undefined : (roster.find((r) => r.toLowerCase() === n.trim().toLowerCase()) ?? n));
  const a: Record<string, string> = { ...args };
  for (const k of ["agent_name", "believer", "target"]) if (a[k] !== undefined) a[k] = name(a[k])!;
  if (ctx.static.registry === "environment" && w.asker !== null) {
    a.asker = w.asker;
    if (tool === "get_agent_plan" && a.agent_name === undefined) a.agent_name = w.asker;
  }
  const agentTool = ALL_TOOLS[tool]?.owner === "agent";
  const target = agentTool ? (a.agent_name ?? a.believer ?? (ctx.static.registry === "environment" ? w.asker : null)) : null;
  const sorted = Object.fromEntries(Object.keys(a).sort().map((k) => [k, a[k]!]));
  return { args: sorted, field: a.target ?? a.location ?? null, target, tool };
}

