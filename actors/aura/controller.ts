// The AURA controller (paper §3, Algorithm 1) as an XState actor: for each `user.query`,
// Sense → Scene (the observed public layer) → Memory (retrieval of what it perceived before,
// memory.ts: 0.3·recency + 0.4·importance + 0.3·relevance) → IntentInferrer (a strategy: deterministic, or an LLM through the gateway) →
// gap → budget B(g) ≤ maxSteps → Explore (call a tool or stop, one probe at a time, each a
// `probe.requested` to the actor that owns the state; the budget is a ceiling, and exploration
// stops as soon as nothing the need requires is missing) → Reason → Interact (`answer.given`,
// with a heads-up when the frame says so). Baseline conditions run on the same backbone with
// their own step policy (strategies.ts). Everything it knows arrives as records; tie-breaks come
// from its own named RNG stream, so seeds change real choices (who in a group is asked first).
// With LLM backends (`llm` in the input), the intent, planner and answer stages each emit an
// `llm.requested` and continue on the logged `llm.completed` / `llm.failed` (see the end of file).
import { setup } from "xstate";
import { handleRecords, type Delivered, type Emitted, type RecordHandler } from "../actor.ts";
import type { AnswerFactPayload, IntentFramePayload, ProbeAnsweredPayload, ProbeDeniedPayload, UserQueryPayload } from "../../events/probes.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { deterministicInferrer, gapToBudget, analyseQuery, type IntentInferrer, type PerceivedScene, type QueryAnalysis } from "./intent.ts";
import { agentIdOf, SCENE_ENV_ID } from "./scene.ts";
import { callKey, candidates, envCandidates, plansOnce, statedFields, usesFrame, type PlannedCall, type QueryLabels, type StrategyConfig } from "./strategies.ts";
import { importanceOf, observationText, remember, retrieve, type MemoryItem, type Retrieved } from "./memory.ts";
import { analyseFactual, factualFrame, type FactualAnalysis } from "./factual.ts";
import { ALL_TOOLS } from "./tools.ts";
import { canonicalJson } from "../../events/canonical.ts";
import { LLM_GATEWAY_ID, type LlmCompletedPayload, type LlmFailedPayload } from "../../events/llm.ts";
import { answerRequest, intentRequest, type AnswerStyle, parseAnswer, parseIntentFrame, parsePlannerPlan, parsePlannerStep, plannerPlanRequest, plannerStepRequest, type Observation, type SceneLlmModels } from "./llm.ts";

export interface ControllerInput {
  readonly condition: string;
  readonly strategy: StrategyConfig;
  readonly scene: PerceivedScene;
  /** The registry offered to the controller (tool names). */
  readonly tools: readonly string[];
  /** Benchmark labels by query id, only for the conditions that use them (fixed-private, oracle-intent). */
  readonly labels: Readonly<Record<string, QueryLabels>>;
  readonly seed: number;
  /** Which registry the condition probes: the 5 agent-state probes, or the 8 environment tools. */
  readonly registry: "agent-state" | "environment";
  /** Who asks each query (environment registry: questions about the asker's own place or plan). */
  readonly askers: Readonly<Record<string, string>>;
  /** Known places and their types (environment registry: "is there a park"). */
  readonly places: Readonly<Record<string, string>>;
  /** The model of each LLM role (through the gateway), or absent/null: deterministic backends. */
  readonly llm?: SceneLlmModels | null;
}

interface Reading {
  readonly tool: string;
  readonly target: string | null;
  readonly args: Readonly<Record<string, string>>;
  readonly ok: boolean;
  readonly result: unknown;
  readonly source: string;
}

interface Working {
  readonly queryId: string;
  readonly asker: string | null;
  readonly factual: FactualAnalysis | null;
  readonly text: string;
  readonly analysis: QueryAnalysis;
  readonly frame: IntentFramePayload | null;
  readonly budget: number;
  readonly order: readonly string[];
  readonly plan: readonly PlannedCall[] | null;
  readonly readings: Reading[];
  readonly tried: string[];
  pending: PlannedCall | null;
  calls: number;
  disclosure: number;
  /** The controller clock: this query's 1-based index (the Memory stage's time). */
  readonly clock: number;
  /** What the Memory stage retrieved for this query (≤ 5, best first). */
  readonly recalled: readonly Retrieved[];
  /** The LLM stages of this query (absent on the deterministic backends). */
  llm?: LlmWork;
}

export interface ControllerContext {
  readonly static: ControllerInput;
  /** Probe answers kept for later queries (reuse, aura-intent-reuse only), by call key. */
  memory: Record<string, Reading>;
  /** The Memory stage's store (memory.ts): queries asked and probe answers read, when the strategy has one. */
  recall: MemoryItem[];
  rng: StreamState;
  current: Working | null;
  queries: number;
}

const inferrers: Readonly<Record<string, IntentInferrer>> = { deterministic: deterministicInferrer };

export function initialController(input: ControllerInput): ControllerContext {
  return { static: input, memory: {}, recall: [], rng: deriveStream(input.seed, `condition/${input.condition}/tiebreak`), current: null, queries: 0 };
}

/** Fisher–Yates with the condition's own stream: a group's visiting order differs by seed. */
function shuffled(ctx: ControllerContext, items: readonly string[]): string[] {
  const out = [...items];
  const draws = new Draws(ctx.rng);
  for (let i = out.length - 1; i > 0; i--) {
    const j = draws.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  ctx.rng = draws.state;
  return out;
}

/**
 * Who answers a call: the agent whose state it reads, else the environment. A tool outside the
 * offered registry, or an agent tool naming nobody in the scene (a planner's invention), goes to
 * the environment, which refuses it: it is logged as `probe.denied` and never executed.
 */
const ownerOf = (ctx: ControllerContext, call: PlannedCall): string =>
  ctx.static.tools.includes(call.tool) && ALL_TOOLS[call.tool]?.owner === "agent" && call.target !== null && ctx.static.scene.public[call.target] !== undefined ? agentIdOf(call.target) : SCENE_ENV_ID;

function view(ctx: ControllerContext, w: Working, withKnown: boolean) {
  const known = new Set<string>();
  if (withKnown) {
    for (const r of w.readings) if (r.ok) known.add(callKey(r));
    if (ctx.static.strategy.reuse) for (const [k, r] of Object.entries(ctx.memory)) if (r.ok) known.add(k);
  }
  return {
    text: w.text, analysis: w.analysis, labels: ctx.static.labels[w.queryId] ?? null, publicState: ctx.static.scene.public,
    focus: ctx.static.scene.focus, order: w.order, known, tried: new Set(w.tried),
  };
}

function listFor(ctx: ControllerContext, w: Working, withKnown: boolean): PlannedCall[] {
  const kind = ctx.static.strategy.kind;
  if (w.factual !== null) return envCandidates(kind, { analysis: w.factual, asker: w.asker ?? "", made: w.calls });
  return candidates(kind, view(ctx, w, withKnown));
}

/** Algorithm 1's step: the next probe, or null to stop (budget spent, or nothing left to learn). */
function nextCall(ctx: ControllerContext, w: Working): PlannedCall | null {
  if (w.calls >= w.budget) return null;
  const list = w.plan ?? listFor(ctx, w, true);
  return list.find((c) => !w.tried.includes(callKey(c))) ?? null;
}

function onQuery(ctx: ControllerContext, event: Delivered<UserQueryPayload>): Emitted[] {
  const { queryId, text } = event.payload;
  const s = ctx.static;
  const kind = s.strategy.kind;
  const inferrer = inferrers[s.strategy.inferrer] ?? deterministicInferrer;
  const out: Emitted[] = [];
  // Sense/Scene: the perceived public layer; the literal parse is shared by every condition.
  let analysis = analyseQuery(text, s.scene);
  let frame: IntentFramePayload | null = null;
  let budget = kind === "literal" ? 0 : s.strategy.maxSteps;
  const scopeAgents = analysis.scope.kind === "none" ? [] : [...analysis.scope.agents];
  const order = analysis.scope.kind === "person" ? scopeAgents : shuffled(ctx, scopeAgents);
  const asker = s.askers[queryId] ?? null;
  const factual = s.registry === "environment" ? analyseFactual(text, Object.keys(s.places).sort(), s.places, Object.keys(s.scene.public).sort()) : null;
  // Memory: retrieve for this query, then store the query itself (it is not its own memory).
  const clock = ctx.queries + 1;
  const recalled = s.strategy.memory ? retrieve(ctx.recall, text, clock) : [];
  if (s.strategy.memory) ctx.recall = remember(ctx.recall, { content: text, importance: importanceOf({ kind: "query" }), kind: "query", t: clock });
  const w: Working = { queryId, asker, factual, text, analysis, frame, budget, order, plan: null, readings: [], tried: [], pending: null, calls: 0, disclosure: 0, clock, recalled };
  if (s.llm != null) w.llm = { awaiting: null, backends: {}, observations: [], plannerFallback: false, answerText: null };
  if (usesFrame(kind) && s.llm?.intent != null) return askIntent(ctx, w, s.llm.intent);
  if (factual !== null) {
    if (usesFrame(kind)) {
      frame = factualFrame(text, factual);
      budget = kind === "aura-no-probe" ? 0 : gapToBudget(frame.gap, s.strategy.maxSteps);
      out.push({ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory: [], maxSteps: budget, queryId, ...memoriesOf(ctx, w) } });
    } else if (kind === "vanilla" || kind === "static-context") budget = 0;
  } else if (usesFrame(kind)) {
    const inferred = inferrer.infer(text, s.scene, s.tools);
    analysis = inferred.analysis;
    frame = inferred.frame;
    const base = gapToBudget(frame.gap, 5);
    budget = gapToBudget(frame.gap, s.strategy.maxSteps);
    const full = candidates(kind, view(ctx, { ...w, analysis }, false));
    const fromMemory = s.strategy.reuse ? full.map(callKey).filter((k) => ctx.memory[k]?.ok === true) : [];
    out.push({ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: base, frame, fromMemory, maxSteps: budget, queryId, ...memoriesOf(ctx, w) } });
  }
  const working: Working = { ...w, analysis, frame, budget };
  ctx.current = working;
  ctx.queries++;
  return [...out, ...afterFrame(ctx, working)];
}

/** Plan-once strategies fix their list now (an LLM planner is asked for it); then explore. */
function afterFrame(ctx: ControllerContext, w: Working): Emitted[] {
  const kind = ctx.static.strategy.kind;
  const model = ctx.static.llm?.planner;
  if (kind === "plan-and-solve" && model != null && w.llm !== undefined && w.budget > 0) return askPlan(ctx, w, model);
  if (plansOnce(kind)) (w as { plan: readonly PlannedCall[] | null }).plan = listFor(ctx, w, false);
  return step(ctx);
}

/** Explore until a probe is in flight or the strategy stops; then Reason and Interact. */
function step(ctx: ControllerContext): Emitted[] {
  const w = ctx.current;
  if (w === null) return [];
  const asked = askStep(ctx, w);
  if (asked !== null) return asked;
  const call = nextCall(ctx, w);
  if (call === null) return finish(ctx, w);
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

function onAnswered(ctx: ControllerContext, event: Delivered<ProbeAnsweredPayload>): Emitted[] {
  const w = ctx.current;
  if (w === null || w.pending === null || event.payload.queryId !== w.queryId) return [];
  const call = w.pending;
  const reading: Reading = { args: call.args, ok: event.payload.ok, result: event.payload.result, source: `probe:${call.tool}`, target: call.target, tool: call.tool };
  w.readings.push(reading);
  w.disclosure += event.payload.disclosure;
  if (ctx.static.strategy.reuse && reading.ok) ctx.memory[callKey(call)] = { ...reading, source: `memory:${call.tool}` };
  if (ctx.static.strategy.memory) {
    const importance = importanceOf({ kind: "observation", ok: reading.ok, disclosure: event.payload.disclosure });
    ctx.recall = remember(ctx.recall, { content: observationText(call.tool, call.args, reading.ok, reading.result), importance, kind: "observation", t: w.clock });
  }
  w.pending = null;
  w.llm?.observations.push({ args: call.args, outcome: canonicalJson(event.payload.result ?? null), tool: call.tool });
  return step(ctx);
}

function onDenied(ctx: ControllerContext, event: Delivered<ProbeDeniedPayload>): Emitted[] {
  const w = ctx.current;
  if (w === null || w.pending === null || event.payload.queryId !== w.queryId) return [];
  w.llm?.observations.push({ args: w.pending.args, outcome: `refused: ${event.payload.reason}`, tool: w.pending.tool });
  w.pending = null;
  return step(ctx);
}

// ---- Reason and Interact -------------------------------------------------------------------

const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  availability: ["availability"],
  emotional_state: ["emotional_state", "mood"],
  unspoken_goal: ["unspoken_goal", "secrets"],
};

function literalFacts(ctx: ControllerContext, a: QueryAnalysis, w: Working): AnswerFactPayload[] {
  const s = ctx.static.scene;
  const facts: AnswerFactPayload[] = [];
  if (w.factual !== null) {
    // The asker's own surroundings are observed (Static Context and AURA); Vanilla sees nothing.
    const kind = ctx.static.strategy.kind;
    if (kind === "vanilla" || w.asker === null) return facts;
    const row = s.public[w.asker];
    if (row !== undefined) facts.push({ agent: w.asker, field: "location", kind: "public", source: "scene", target: null, value: row.location });
    if (s.time !== null) facts.push({ agent: null, field: "time", kind: "time", source: "scene", target: null, value: s.time });
    return facts;
  }
  const pub = (name: string) => {
    const row = s.public[name];
    if (row === undefined) return;
    facts.push({ agent: name, field: "location", kind: "public", source: "scene", target: null, value: row.location });
    facts.push({ agent: name, field: "action", kind: "public", source: "scene", target: null, value: row.action });
  };
  const people = a.secondOrder !== null ? [a.secondOrder.believer, a.secondOrder.target] : a.scope.kind === "none" ? [] : a.scope.agents;
  for (const n of people) pub(n);
  if (a.scope.kind === "none" && a.location !== null) for (const [n, r] of Object.entries(s.public)) if (r.location === a.location) pub(n);
  if (a.literal.includes("time") && s.time !== null) facts.push({ agent: null, field: "time", kind: "time", source: "scene", target: null, value: s.time });
  return facts;
}

/** Who a list of `{name}` rows names, sorted, or "nobody": a place's company as one checkable claim. */
const peopleOf = (rows: unknown): string => {
  const names = (Array.isArray(rows) ? rows : []).map((r) => String((r as { name?: unknown }).name)).sort();
  return names.length === 0 ? "nobody" : names.join(", ");
};

function factsOf(reading: Reading, fields: readonly string[] | null, places: Readonly<Record<string, string>> = {}): AnswerFactPayload[] {
  if (!reading.ok) return [];
  const r = reading.result as Record<string, unknown>;
  const out: AnswerFactPayload[] = [];
  if (reading.tool === "get_agent_private_state") {
    const agent = String(r.agent ?? reading.target);
    const keys = fields === null ? Object.keys(r).filter((k) => k !== "agent") : fields.flatMap((f) => FIELD_ALIASES[f] ?? [f]).filter((k) => k in r);
    for (const k of keys) out.push({ agent, field: k, kind: "state", source: reading.source, target: null, value: String(r[k]) });
  } else if (reading.tool === "get_agent_belief_about") {
    const belief = (r.belief ?? {}) as Record<string, unknown>;
    const keys = fields === null ? null : new Set(fields.flatMap((f) => FIELD_ALIASES[f] ?? [f]));
    for (const [k, v] of Object.entries(belief)) if (keys === null || keys.has(k)) out.push({ agent: String(r.believer), field: k, kind: "belief", source: reading.source, target: String(r.target), value: String(v) });
  } else if (reading.tool === "get_agent_plan") {
    const plan = (r.plan ?? []) as unknown[];
    out.push({ agent: String(r.agent_name ?? reading.target), field: "plan", kind: "plan", source: reading.source, target: null, value: plan.map(String).join("; ") });
  } else if (reading.tool === "get_time") {
    out.push({ agent: null, field: "time", kind: "time", source: reading.source, target: null, value: String(r.time) });
  } else if (reading.tool === "get_location") {
    out.push({ agent: reading.args.asker ?? null, field: "location", kind: "public", source: reading.source, target: null, value: String(r.location) });
    // The environment registry's answers also state who is there and what kind of place it is.
    if (r.action != null && reading.args.asker !== undefined) out.push({ agent: reading.args.asker, field: "action", kind: "public", source: reading.source, target: null, value: String(r.action) });
    out.push({ agent: null, field: "people", kind: "place", source: reading.source, target: String(r.location), value: peopleOf(r.agents_here) });
    if (places[String(r.location)]) out.push({ agent: null, field: "type", kind: "place", source: reading.source, target: String(r.location), value: places[String(r.location)]! });
  } else if (reading.tool === "get_location_info") {
    for (const row of (r.agents ?? []) as Array<Record<string, unknown>>) out.push({ agent: String(row.name), field: "location", kind: "public", source: reading.source, target: null, value: String(r.location) });
    out.push({ agent: null, field: "people", kind: "place", source: reading.source, target: String(r.location), value: peopleOf(r.agents) });
    if (places[String(r.location)]) out.push({ agent: null, field: "type", kind: "place", source: reading.source, target: String(r.location), value: places[String(r.location)]! });
  } else if (reading.tool === "get_recent_events") {
    for (const e of (Array.isArray(reading.result) ? reading.result : []) as unknown[]) out.push({ agent: null, field: "event", kind: "event", source: reading.source, target: null, value: String(e) });
  } else if (reading.tool === "get_recent_memories") {
    for (const m of ((r.memories ?? []) as unknown[])) out.push({ agent: reading.target, field: "memory", kind: "memory", source: reading.source, target: null, value: String(m) });
  } else if (reading.tool === "get_nearby_agents" || reading.tool === "get_all_agents") {
    if (reading.tool === "get_nearby_agents" && reading.args.asker !== undefined && reading.args.location === undefined) out.push({ agent: reading.args.asker, field: "others", kind: "place", source: reading.source, target: null, value: peopleOf(reading.result) });
    for (const row of (Array.isArray(reading.result) ? reading.result : []) as Array<Record<string, unknown>>) {
      if (row.location !== undefined) out.push({ agent: String(row.name), field: "location", kind: "public", source: reading.source, target: null, value: String(row.location) });
      out.push({ agent: String(row.name), field: "action", kind: "public", source: reading.source, target: null, value: String(row.action) });
    }
  }
  return out;
}

/** The fields an answer states from a reading: the condition's private fields of a private-state read; every field of any other (a belief as the believer holds it). */
function fieldsFor(tool: string, stated: readonly string[] | null): readonly string[] | null {
  if (stated === null) return null;
  if (tool === "get_agent_private_state") return stated;
  // A belief is reported as the believer holds it (the paper's synthesis: "report the believer's
  // recorded belief"): every field of the record, whatever the question singled out.
  return null;
}

/** What the answer reports: literal facts, then the hidden facts the condition surfaces. */
function reason(ctx: ControllerContext, w: Working): AnswerFactPayload[] {
  const facts = literalFacts(ctx, w.analysis, w);
  const kind = ctx.static.strategy.kind;
  if (usesFrame(kind) && w.factual === null) {
    // Only what the frame asks for, for the people in its scope (no oversharing of goals).
    const needed = candidates(kind, view(ctx, w, false)).map(callKey);
    const byKey = new Map<string, Reading>();
    if (ctx.static.strategy.reuse) for (const k of needed) if (ctx.memory[k] !== undefined) byKey.set(k, ctx.memory[k]!);
    for (const r of w.readings) if (r.ok) byKey.set(callKey(r), r);
    for (const k of needed) {
      const r = byKey.get(k);
      if (r !== undefined) facts.push(...factsOf(r, fieldsFor(r.tool, w.analysis.hidden)));
    }
  } else {
    // NoIntent and Plan-and-Solve state the private fields the wording asked for; the label-driven
    // baselines state what they read (statedFields).
    const fields = w.factual === null ? statedFields(kind, w.analysis) : null;
    for (const r of w.readings) facts.push(...factsOf(r, fieldsFor(r.tool, fields), ctx.static.places));
  }
  const seen = new Set<string>();
  return facts.filter((f) => {
    const key = `${f.kind}|${f.agent}|${f.target}|${f.field}${f.kind === "event" || f.kind === "memory" ? `|${f.value}` : ""}`;
    return !seen.has(key) && (seen.add(key), true);
  });
}

function render(facts: readonly AnswerFactPayload[]): string {
  const lines: string[] = [];
  for (const f of facts) {
    // Activities come as gerunds from scenes ("serving customers") and as plan steps from AURATown ("write the next chapter").
    if (f.kind === "public") lines.push(f.field === "location" ? `${f.agent} is at ${f.value}.` : `${f.agent}'s activity: ${f.value}.`);
    else if (f.kind === "time") lines.push(`It is ${f.value}.`);
    else if (f.kind === "state") lines.push(`${f.agent}'s ${f.field.replace(/_/g, " ")}: ${f.value}.`);
    else if (f.kind === "belief") lines.push(`${f.agent} believes ${f.target}'s ${f.field.replace(/_/g, " ")} is ${f.value} (their belief, not necessarily the truth).`);
    else if (f.kind === "plan") lines.push(`${f.agent}'s plan: ${f.value}.`);
    else if (f.kind === "event") lines.push(`Recently: ${f.value}`);
    else if (f.kind === "memory") lines.push(`${f.agent} remembers: ${f.value}`);
    else if (f.kind === "place") lines.push(f.field === "type" ? `${f.target} is a ${f.value}.` : f.field === "others" ? `With ${f.agent}: ${f.value}.` : `At ${f.target}: ${f.value}.`);
  }
  return lines.length === 0 ? "I cannot tell from what I can observe." : lines.join(" ");
}

function finish(ctx: ControllerContext, w: Working): Emitted[] {
  const asked = askAnswer(ctx, w);
  if (asked !== null) return asked;
  const facts = reason(ctx, w);
  const frame = w.frame;
  const alert = frame !== null && frame.should_alert && frame.implicit_need.length > 0 ? `[heads-up] You asked about ${frame.literal_need}; you may also want to know ${frame.implicit_need[0]}.` : null;
  const text = (alert === null ? "" : `${alert}\n\n`) + (w.llm?.answerText ?? render(facts));
  ctx.current = null;
  return [{
    type: "answer.given",
    to: null,
    payload: { alert, backend: backendLabel(ctx, w), condition: ctx.static.condition, disclosure: w.disclosure, facts, probes: w.calls, queryId: w.queryId, text },
  }];
}

// ---- LLM backends (through the gateway: `llm.requested` → `llm.completed` / `llm.failed`) -------
// Each stage emits one request and waits for its answer as a record; nothing is in flight inside
// the actor (DESIGN §3). A failed or unusable answer falls back to the deterministic backend of
// that stage, and the logged `backend` labels say which backend produced what.

type LlmStage = "intent" | "plan" | "step" | "answer";

interface LlmWork {
  awaiting: { readonly stage: LlmStage; readonly requestHash: string; readonly model: string } | null;
  /** Per role: `llm:<model>`, or the deterministic fallback and why. */
  readonly backends: Record<string, string>;
  /** What each probe returned (or why it was refused), for the planner's next step. */
  readonly observations: Observation[];
  plannerFallback: boolean;
  answerText: string | null;
}

const ROLE_OF: Readonly<Record<LlmStage, string>> = { intent: "intent", plan: "planner", step: "planner", answer: "answer" };

function ask(w: Working, stage: LlmStage, payload: { readonly requestHash: string; readonly model: string }): Emitted[] {
  w.llm!.awaiting = { model: payload.model, requestHash: payload.requestHash, stage };
  return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload }];
}

const fallbackLabel = (model: string, why: string): string => `deterministic (fallback from llm:${model}: ${why})`;

/** What the Memory stage retrieved, for `intent.inferred` (absent when the strategy has no Memory stage). */
function memoriesOf(ctx: ControllerContext, w: Working): { memories?: Array<{ content: string; importance: number; kind: string; score: number; t: number }> } {
  if (!ctx.static.strategy.memory) return {};
  return { memories: w.recalled.map((m) => ({ content: m.content, importance: m.importance, kind: m.kind, score: m.score, t: m.t })) };
}

function askIntent(ctx: ControllerContext, w: Working, model: string): Emitted[] {
  ctx.current = w;
  ctx.queries++;
  // RECENT MEMORIES: what the Memory stage retrieved for this query (≤ 5, best first).
  return ask(w, "intent", intentRequest(model, w.text, ctx.static.scene, w.recalled.map((m) => m.content), ctx.static.tools, w.queryId));
}

/** The deterministic IntentInferrer (the fallback of the LLM one), as onQuery runs it. */
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
  const working: Working = { ...w, analysis, factual, frame, budget, order };
  const fromMemory = factual === null && s.strategy.reuse ? candidates(kind, view(ctx, working, false)).map(callKey).filter((k) => ctx.memory[k]?.ok === true) : [];
  ctx.current = working;
  const inferredEvent: Emitted = { type: "intent.inferred", to: null, payload: { backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory, maxSteps: budget, queryId: w.queryId, ...memoriesOf(ctx, working) } };
  return [inferredEvent, ...afterFrame(ctx, working)];
}

function askPlan(ctx: ControllerContext, w: Working, model: string): Emitted[] {
  const s = ctx.static;
  return ask(w, "plan", plannerPlanRequest(model, w.text, s.scene, w.asker, s.tools, w.budget, w.queryId));
}

/** A ReAct-style step from the LLM planner, or null when this strategy/query explores deterministically. */
function askStep(ctx: ControllerContext, w: Working): Emitted[] | null {
  const s = ctx.static;
  const model = s.llm?.planner;
  const kind = s.strategy.kind;
  if (model == null || w.llm === undefined || w.llm.plannerFallback || !(kind === "no-intent" || kind === "react" || kind === "reflexion" || kind === "aura-full")) return null;
  if (w.calls >= w.budget) return finish(ctx, w);
  return ask(w, "step", plannerStepRequest(model, kind, w.text, s.scene, w.asker, s.tools, w.budget - w.calls, w.llm.observations, w.queryId));
}

function askAnswer(ctx: ControllerContext, w: Working): Emitted[] | null {
  const s = ctx.static;
  const model = s.llm?.answer;
  if (model == null || w.llm === undefined || w.llm.answerText !== null || w.llm.backends.answer !== undefined) return null;
  const facts = reason(ctx, w);
  const evidence = [
    ...facts.map((f) => render([f])),
    ...w.llm.observations.map((o) => `${o.tool}(${Object.entries(o.args).map(([k, v]) => `${k}=${v}`).join(", ")}) -> ${o.outcome}`),
  ];
  const kind = s.strategy.kind;
  return ask(w, "answer", answerRequest(model, {
    style: answerStyle(kind, w.factual !== null), query: w.text, scene: kind === "vanilla" ? null : s.scene, asker: w.asker, implicitNeed: w.frame?.implicit_need ?? [],
    secondOrder: w.analysis.secondOrder !== null && w.factual === null, evidence,
  }, w.queryId));
}

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

function onLlm(ctx: ControllerContext, event: Delivered<LlmCompletedPayload | LlmFailedPayload>): Emitted[] {
  const w = ctx.current;
  const work = w?.llm;
  if (w === null || work === undefined || work.awaiting === null || event.payload.requestHash !== work.awaiting.requestHash) return [];
  const { stage, model } = work.awaiting;
  work.awaiting = null;
  const content = event.type === "llm.completed" ? (event.payload as LlmCompletedPayload).content : null;
  const failure = content === null ? (event.payload as LlmFailedPayload).error : null;
  const role = ROLE_OF[stage];
  const fellBack = (why: string) => {
    const label = fallbackLabel(model, why);
    work.backends[role] = label;
    return label;
  };
  switch (stage) {
    case "intent": {
      const parsed = content === null ? null : parseIntentFrame(content, w.text, ctx.static.tools);
      if (parsed?.ok === true) {
        work.backends.intent = `llm:${model}`;
        return withFrame(ctx, w, { frame: parsed.frame, ...routedByFrame(ctx, w, parsed.frame) }, `llm:${model}`);
      }
      return withFrame(ctx, w, deterministicFrame(ctx, w), fellBack(failure ?? "unusable output"));
    }
    case "plan": {
      const parsed = content === null ? null : parsePlannerPlan(content);
      if (parsed?.ok === true) {
        work.backends.planner = `llm:${model}`;
        (w as { plan: readonly PlannedCall[] | null }).plan = parsed.steps.map((st) => callFromLlm(ctx, w, st.tool, st.arguments));
      } else {
        fellBack(failure ?? "unusable output");
        (w as { plan: readonly PlannedCall[] | null }).plan = listFor(ctx, w, false);
      }
      return step(ctx);
    }
    case "step": {
      const parsed = content === null ? null : parsePlannerStep(content);
      if (parsed?.ok !== true) {
        fellBack(failure ?? "unusable output");
        work.plannerFallback = true;
        return step(ctx);
      }
      if (work.backends.planner === undefined) work.backends.planner = `llm:${model}`;
      if (parsed.step.action === "stop") return finish(ctx, w);
      const call = callFromLlm(ctx, w, parsed.step.tool, parsed.step.arguments);
      // A model repeating a call it already made has nothing more to learn: stop.
      if (w.tried.includes(callKey(call))) return finish(ctx, w);
      return issue(ctx, w, call);
    }
    case "answer": {
      const parsed = content === null ? null : parseAnswer(content);
      if (parsed?.ok === true) {
        work.backends.answer = `llm:${model}`;
        work.answerText = parsed.text;
      } else fellBack(failure ?? "unusable output");
      return finish(ctx, w);
    }
  }
}

/** The backend label of an answer: deterministic as before, else which model (or fallback) served each LLM stage. */
function backendLabel(ctx: ControllerContext, w: Working): string {
  const deterministic = usesFrame(ctx.static.strategy.kind) ? ctx.static.strategy.inferrer : "deterministic-policy";
  const used = Object.entries(w.llm?.backends ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (used.length === 0) return deterministic;
  const labels = new Set(used.map(([, l]) => l));
  if (labels.size === 1 && [...labels][0]!.startsWith("llm:")) return [...labels][0]!;
  return used.map(([role, label]) => `${role}=${label}`).join(", ");
}

const handlers: Record<string, RecordHandler<ControllerContext>> = {
  "user.query": onQuery as RecordHandler<ControllerContext>,
  "probe.answered": onAnswered as RecordHandler<ControllerContext>,
  "probe.denied": onDenied as RecordHandler<ControllerContext>,
  "llm.completed": onLlm as RecordHandler<ControllerContext>,
  "llm.failed": onLlm as RecordHandler<ControllerContext>,
};

export const controllerMachine = setup({
  types: {
    context: {} as ControllerContext,
    input: {} as ControllerInput,
    events: {} as Delivered & { type: string },
    emitted: {} as Emitted & { type: string },
  },
  actions: { handle: handleRecords(handlers) },
  guards: { exploring: ({ context }) => context.current !== null },
}).createMachine({
  id: "aura-controller",
  context: ({ input }) => initialController(input),
  initial: "idle",
  states: {
    idle: {
      on: { "user.query": { actions: "handle" } },
      always: { guard: "exploring", target: "exploring" },
    },
    exploring: {
      on: { "probe.answered": { actions: "handle" }, "probe.denied": { actions: "handle" }, "llm.completed": { actions: "handle" }, "llm.failed": { actions: "handle" } },
      always: { guard: ({ context }) => context.current === null, target: "idle" },
    },
  },
});
