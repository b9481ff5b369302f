// Reason and Interact (paper §3): the facts an answer states (what the scene shows, then what the
// probes read, as the condition surfaces them), their text, and the `answer.given` that ends a query.
import type { Emitted } from "../../actor.ts";
import type { AnswerFactPayload } from "../events.ts";
import type { QueryAnalysis } from "../intent.ts";
import { callKey, candidates, statedFields, usesFrame } from "../strategies.ts";
import { view, type ControllerContext, type Reading, type Working } from "./context.ts";

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
export function reason(ctx: ControllerContext, w: Working): AnswerFactPayload[] {
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

export function render(facts: readonly AnswerFactPayload[]): string {
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


/** Interact: the query's `answer.given` (with a heads-up when the frame says so); the query is done. */
export function answerOf(ctx: ControllerContext, w: Working): Emitted[] {
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

/** The backend label of an answer: deterministic as before, else which model (or fallback) served each LLM stage. */
function backendLabel(ctx: ControllerContext, w: Working): string {
  const deterministic = usesFrame(ctx.static.strategy.kind) ? ctx.static.strategy.inferrer : "deterministic-policy";
  const used = Object.entries(w.llm?.backends ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (used.length === 0) return deterministic;
  const labels = new Set(used.map(([, l]) => l));
  if (labels.size === 1 && [...labels][0]!.startsWith("llm:")) return [...labels][0]!;
  return used.map(([role, label]) => `${role}=${label}`).join(", ");
}
