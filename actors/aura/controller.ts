// The AURA controller (paper §3, Algorithm 1) as an XState actor: for each `user.query`,
// Sense → Scene (the observed public layer) → Memory (what earlier probes of this scene moment
// revealed) → IntentInferrer (a strategy: deterministic here, LLM through the gateway later) →
// gap → budget B(g) ≤ maxSteps → Explore (call a tool or stop, one probe at a time, each a
// `probe.requested` to the actor that owns the state; the budget is a ceiling, and exploration
// stops as soon as nothing the need requires is missing) → Reason → Interact (`answer.given`,
// with a heads-up when the frame says so). Baseline conditions run on the same backbone with
// their own step policy (strategies.ts). Everything it knows arrives as records; tie-breaks come
// from its own named RNG stream, so seeds change real choices (who in a group is asked first).
import { setup } from "xstate";
import { handleRecords, type Delivered, type Emitted, type RecordHandler } from "../actor.ts";
import type { AnswerFactPayload, IntentFramePayload, ProbeAnsweredPayload, ProbeDeniedPayload, UserQueryPayload } from "../../events/probes.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { deterministicInferrer, gapToBudget, analyseQuery, type IntentInferrer, type PerceivedScene, type QueryAnalysis } from "./intent.ts";
import { agentIdOf, SCENE_ENV_ID } from "./scene.ts";
import { callKey, candidates, envCandidates, plansOnce, usesFrame, type PlannedCall, type QueryLabels, type StrategyConfig } from "./strategies.ts";
import { analyseFactual, factualFrame, type FactualAnalysis } from "./factual.ts";
import { ALL_TOOLS } from "./tools.ts";

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
  /** Who asks each query (environment registry: "my location", "my plan"). */
  readonly askers: Readonly<Record<string, string>>;
  /** Known places and their types (environment registry: "is there a park"). */
  readonly places: Readonly<Record<string, string>>;
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
}

export interface ControllerContext {
  readonly static: ControllerInput;
  /** Probe answers kept for later queries (AURA's Memory stage), by call key. */
  memory: Record<string, Reading>;
  rng: StreamState;
  current: Working | null;
  queries: number;
}

const inferrers: Readonly<Record<string, IntentInferrer>> = { deterministic: deterministicInferrer };

export function initialController(input: ControllerInput): ControllerContext {
  return { static: input, memory: {}, rng: deriveStream(input.seed, `condition/${input.condition}/tiebreak`), current: null, queries: 0 };
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

const ownerOf = (call: PlannedCall): string => (ALL_TOOLS[call.tool]?.owner === "agent" && call.target !== null ? agentIdOf(call.target) : SCENE_ENV_ID);

function view(ctx: ControllerContext, w: Working, withKnown: boolean) {
  const known = new Set<string>();
  if (withKnown) {
    for (const r of w.readings) if (r.ok) known.add(callKey(r));
    if (ctx.static.strategy.memory) for (const [k, r] of Object.entries(ctx.memory)) if (r.ok) known.add(k);
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
  const w: Working = { queryId, asker, factual, text, analysis, frame, budget, order, plan: null, readings: [], tried: [], pending: null, calls: 0, disclosure: 0 };
  if (factual !== null) {
    if (usesFrame(kind)) {
      frame = factualFrame(text, factual);
      budget = kind === "aura-no-probe" ? 0 : gapToBudget(frame.gap, s.strategy.maxSteps);
      out.push({ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: gapToBudget(frame.gap, 5), frame, fromMemory: [], maxSteps: budget, queryId } });
    } else if (kind === "vanilla" || kind === "static-context") budget = 0;
  } else if (usesFrame(kind)) {
    const inferred = inferrer.infer(text, s.scene, s.tools);
    analysis = inferred.analysis;
    frame = inferred.frame;
    const base = gapToBudget(frame.gap, 5);
    budget = gapToBudget(frame.gap, s.strategy.maxSteps);
    const full = candidates(kind, view(ctx, { ...w, analysis }, false));
    const fromMemory = s.strategy.memory ? full.map(callKey).filter((k) => ctx.memory[k]?.ok === true) : [];
    out.push({ type: "intent.inferred", to: null, payload: { backend: inferrer.backend, budget: base, frame, fromMemory, maxSteps: budget, queryId } });
  }
  const working: Working = { ...w, analysis, frame, budget };
  ctx.current = working;
  if (plansOnce(kind)) (working as { plan: readonly PlannedCall[] | null }).plan = listFor(ctx, working, false);
  ctx.queries++;
  return [...out, ...step(ctx)];
}

/** Explore until a probe is in flight or the strategy stops; then Reason and Interact. */
function step(ctx: ControllerContext): Emitted[] {
  const w = ctx.current;
  if (w === null) return [];
  const call = nextCall(ctx, w);
  if (call === null) return finish(ctx, w);
  w.pending = call;
  w.tried.push(callKey(call));
  w.calls++;
  return [{
    type: "probe.requested",
    to: ownerOf(call),
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
  if (ctx.static.strategy.memory && reading.ok) ctx.memory[callKey(call)] = { ...reading, source: `memory:${call.tool}` };
  w.pending = null;
  return step(ctx);
}

function onDenied(ctx: ControllerContext, event: Delivered<ProbeDeniedPayload>): Emitted[] {
  const w = ctx.current;
  if (w === null || w.pending === null || event.payload.queryId !== w.queryId) return [];
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
    for (const [k, v] of Object.entries(belief)) out.push({ agent: String(r.believer), field: k, kind: "belief", source: reading.source, target: String(r.target), value: String(v) });
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

/** What the answer reports: literal facts, then the hidden facts the condition surfaces. */
function reason(ctx: ControllerContext, w: Working): AnswerFactPayload[] {
  const facts = literalFacts(ctx, w.analysis, w);
  const kind = ctx.static.strategy.kind;
  if (usesFrame(kind) && w.factual === null) {
    // Only what the frame asks for, for the people in its scope (no oversharing of goals).
    const needed = candidates(kind, view(ctx, w, false)).map(callKey);
    const byKey = new Map<string, Reading>();
    if (ctx.static.strategy.memory) for (const k of needed) if (ctx.memory[k] !== undefined) byKey.set(k, ctx.memory[k]!);
    for (const r of w.readings) if (r.ok) byKey.set(callKey(r), r);
    for (const k of needed) {
      const r = byKey.get(k);
      if (r !== undefined) facts.push(...factsOf(r, r.tool === "get_agent_private_state" ? w.analysis.hidden : null));
    }
  } else for (const r of w.readings) facts.push(...factsOf(r, null, ctx.static.places));
  const seen = new Set<string>();
  return facts.filter((f) => {
    const key = `${f.kind}|${f.agent}|${f.target}|${f.field}${f.kind === "event" || f.kind === "memory" ? `|${f.value}` : ""}`;
    return !seen.has(key) && (seen.add(key), true);
  });
}

function render(facts: readonly AnswerFactPayload[]): string {
  const lines: string[] = [];
  for (const f of facts) {
    if (f.kind === "public") lines.push(`${f.agent} ${f.field === "location" ? "is at" : "is"} ${f.value}.`);
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
  const facts = reason(ctx, w);
  const frame = w.frame;
  const alert = frame !== null && frame.should_alert && frame.implicit_need.length > 0 ? `[heads-up] You asked about ${frame.literal_need}; you may also want to know ${frame.implicit_need[0]}.` : null;
  const text = (alert === null ? "" : `${alert}\n\n`) + render(facts);
  ctx.current = null;
  return [{
    type: "answer.given",
    to: null,
    payload: { alert, backend: usesFrame(ctx.static.strategy.kind) ? ctx.static.strategy.inferrer : "deterministic-policy", condition: ctx.static.condition, disclosure: w.disclosure, facts, probes: w.calls, queryId: w.queryId, text },
  }];
}

const handlers: Record<string, RecordHandler<ControllerContext>> = {
  "user.query": onQuery as RecordHandler<ControllerContext>,
  "probe.answered": onAnswered as RecordHandler<ControllerContext>,
  "probe.denied": onDenied as RecordHandler<ControllerContext>,
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
      on: { "probe.answered": { actions: "handle" }, "probe.denied": { actions: "handle" } },
      always: { guard: ({ context }) => context.current === null, target: "idle" },
    },
  },
});
