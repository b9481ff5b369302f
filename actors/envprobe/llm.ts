// The EnvProbe LLM agent's model side (role `belief`): the request the agent sends after every
// step (`llm.requested`), the JSON belief updates the model answers with, and their validation —
// shared by the gateway (ENVPROBE_LLM_OUTPUTS, with one repair attempt on an invalid answer) and
// the agent (which parses the logged completion again, so replay needs nothing but the log).
// Pure: no I/O, no clock.
//
// The model answers {"updates": [{field, value, staleness, confidence}]}. A field must be one of
// the request's FIELDS (the world's belief fields, e.g. `door:door_3`); a value must be in the
// field's domain (rooms/nodes, `inv`, `open`/`locked`, `0`/`1`, a tool schema `v_0+v_3`, an
// inventory list, or `?` for unknown) and is normalised (sorted lists); staleness is an integer
// ≥ 0 (steps since the value was last confirmed), confidence a number in [0, 1].
import { llmRequest, type LlmMessagePayload, type LlmRequestedPayload } from "../../events/llm.ts";
import { parseJsonObject } from "../aura/llm.ts";
import type { EnvprobeSteppedPayload } from "./events.ts";
import { depValue } from "./kinds/tooldag.ts";
import type { Kind, Layout } from "./kinds/types.ts";
import { HELD, UNKNOWN } from "./kinds/values.ts";

/** The output schema name the gateway validates `belief` answers against. */
export const BELIEF_OUTPUT = "envprobe-beliefs";

export interface BeliefUpdate {
  readonly field: number;
  readonly value: string;
  readonly staleness: number;
  readonly confidence: number;
}

// ---- Field domains (from the field names alone, so the gateway can check an answer) -----------

const kindOf = (names: readonly string[]): Kind =>
  names.some((n) => n.startsWith("var:")) ? "tooldag" : names.some((n) => n.startsWith("edge:") || n.startsWith("key:")) ? "graphnav" : "objectstate";

const indexAfter = (prefix: string, v: string): number => (v.startsWith(prefix) && /^\d+$/.test(v.slice(prefix.length)) ? Number(v.slice(prefix.length)) : -1);

/** Checks and normalises one value for one field; a string (the normalised value) or an error. */
type Domain = (raw: string) => { ok: true; value: string } | { ok: false; error: string };

function domainsOf(names: readonly string[]): Domain[] {
  const kind = kindOf(names);
  const place = kind === "graphnav" ? "n_" : "room_";
  const places =
    kind === "objectstate" ? names.filter((n) => n.startsWith("door:")).length + 1
    : kind === "graphnav" ? 1 + Math.max(0, ...names.filter((n) => n.startsWith("edge:")).flatMap((n) => n.slice(5).split("__").map((x) => indexAfter("n_", x))))
    : 0;
  const items = names.filter((n) => n.startsWith("loc:") || n.startsWith("key:")).map((n) => n.slice(n.indexOf(":") + 1));
  const ok = (value: string) => ({ ok: true as const, value });
  const bad = (error: string) => ({ ok: false as const, error });
  const isPlace = (v: string) => {
    const i = indexAfter(place, v);
    return i >= 0 && i < places;
  };
  const placeText = `${place}0 … ${place}${places - 1}`;
  return names.map((name): Domain => {
    const [prefix] = name.split(":");
    if (name === "agent") return (v) => (isPlace(v) || v === UNKNOWN ? ok(v) : bad(`expected ${placeText} or "?"`));
    if (prefix === "loc" || prefix === "key") return (v) => (isPlace(v) || v === HELD || v === UNKNOWN ? ok(v) : bad(`expected ${placeText}, "inv" or "?"`));
    if (prefix === "door" || prefix === "edge") return (v) => (v === "open" || v === "locked" || v === UNKNOWN ? ok(v) : bad(`expected "open", "locked" or "?"`));
    if (prefix === "var" || prefix === "done") return (v) => (v === "0" || v === "1" ? ok(v) : bad(`expected "1" or "0"`));
    if (prefix === "dep") {
      const tool = indexAfter("t_", name.slice(4));
      return (v) => {
        if (v === UNKNOWN || v === "-" || v === "") return ok(v === "" ? "-" : v);
        const parts = v.split(/[+,\s]+/).filter((x) => x.length > 0);
        const inputs = parts.map((x) => indexAfter("v_", x));
        if (inputs.some((i) => i < 0 || i >= tool) || new Set(inputs).size !== inputs.length) return bad(`expected "-" or distinct variables v_0 … v_${Math.max(0, tool - 1)} joined by "+" (a tool's inputs come before it)`);
        return ok(depValue([...inputs].sort((a, b) => a - b)));
      };
    }
    if (name === "inventory") {
      return (v) => {
        if (v === "-" || v === "" || v === UNKNOWN) return ok(v === "" ? "-" : v);
        const held = v.split(/[,\s]+/).filter((x) => x.length > 0);
        const unknown = held.filter((h) => !items.includes(h));
        if (unknown.length > 0 || new Set(held).size !== held.length) return bad(`expected "-" or distinct items of ${items.join(", ")} joined by ","`);
        return ok([...held].sort().join(","));
      };
    }
    return (v) => ok(v);
  });
}

const scalarText = (x: unknown): string | null => {
  if (typeof x === "string") return x.trim();
  if (typeof x === "number" && Number.isFinite(x)) return String(x);
  if (typeof x === "boolean") return x ? "1" : "0";
  if (Array.isArray(x) && x.every((e) => typeof e === "string")) return x.join(",");
  if (x === null) return UNKNOWN;
  return null;
};

const numberOf = (x: unknown): number | null => {
  const n = typeof x === "number" ? x : typeof x === "string" && x.trim() !== "" ? Number(x) : NaN;
  return Number.isFinite(n) ? n : null;
};

/**
 * Parses and validates a `belief` answer against the belief fields' names. Errors name the update
 * and the problem (an unknown field, a value outside the field's domain, a missing number), which
 * is what the gateway sends back for its repair attempt.
 */
export function parseBeliefUpdates(content: string, names: readonly string[]): { ok: true; updates: BeliefUpdate[] } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const list = parsed.value.updates;
  if (!Array.isArray(list)) return { ok: false, error: "field 'updates' must be a list of {field, value, staleness, confidence}" };
  if (list.length > names.length) return { ok: false, error: `'updates' has ${list.length} entries; there are only ${names.length} fields` };
  const domains = domainsOf(names);
  const out: BeliefUpdate[] = [];
  const seen = new Set<number>();
  for (const [k, u] of list.entries()) {
    const at = `updates[${k}]`;
    if (u === null || typeof u !== "object" || Array.isArray(u)) return { ok: false, error: `${at} must be an object {field, value, staleness, confidence}` };
    const o = u as Record<string, unknown>;
    if (typeof o.field !== "string") return { ok: false, error: `${at}.field must be a field name from FIELDS` };
    const field = names.indexOf(o.field.trim());
    if (field < 0) return { ok: false, error: `${at}.field: unknown field '${o.field.slice(0, 60)}' (use only the names listed in FIELDS)` };
    if (seen.has(field)) return { ok: false, error: `${at}.field: '${names[field]}' is updated twice` };
    seen.add(field);
    const raw = scalarText(o.value);
    if (raw === null) return { ok: false, error: `${at}.value (${names[field]}) must be a string` };
    const value = domains[field]!(raw);
    if (!value.ok) return { ok: false, error: `${at}.value (${names[field]}): '${raw.slice(0, 40)}' is not allowed; ${value.error}` };
    const staleness = numberOf(o.staleness);
    if (staleness === null || staleness < 0) return { ok: false, error: `${at}.staleness (${names[field]}) must be an integer ≥ 0` };
    const confidence = numberOf(o.confidence);
    if (confidence === null || confidence < 0 || confidence > 1) return { ok: false, error: `${at}.confidence (${names[field]}) must be a number in [0, 1]` };
    out.push({ field, value: value.value, staleness: Math.floor(staleness), confidence: Math.round(confidence * 100) / 100 });
  }
  return { ok: true, updates: out };
}

const FIELDS_LINE = "FIELDS: ";

/** The JSON list of names a request's user message gives on a line starting with `prefix`, or null. */
function namesOnLine(request: Pick<LlmRequestedPayload, "messages">, prefix: string): string[] | null {
  for (const m of request.messages) {
    if (m.role !== "user") continue;
    const line = m.content.split("\n").find((l) => l.startsWith(prefix));
    if (line === undefined) continue;
    try {
      const names = JSON.parse(line.slice(prefix.length)) as unknown;
      if (Array.isArray(names) && names.every((n) => typeof n === "string")) return names as string[];
    } catch {
      return null;
    }
  }
  return null;
}

/** The belief field names a `belief` request lists (its `FIELDS:` line), or null. */
export const fieldNamesOfRequest = (request: Pick<LlmRequestedPayload, "messages">): string[] | null => namesOnLine(request, FIELDS_LINE);

// ---- The Judge (role `judge`, policy envprobe-judge) ----------------------------------------------

/** The output schema name the gateway validates `judge` answers against. */
export const JUDGE_OUTPUT = "envprobe-judge";
const CANDIDATES_LINE = "CANDIDATES: ";

/**
 * Parses a Judge answer {"decision": "probe" | "act", "field": name}: a probe must name one of the
 * candidates; field is the probed field's index, or -1 to act.
 */
export function parseJudgeDecision(content: string, names: readonly string[], candidates: readonly number[]): { ok: true; field: number } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const decision = parsed.value.decision;
  if (decision === "act") return { ok: true, field: -1 };
  if (decision !== "probe") return { ok: false, error: `field 'decision' must be "probe" or "act"` };
  const field = typeof parsed.value.field === "string" ? names.indexOf(parsed.value.field.trim()) : -1;
  if (field < 0 || !candidates.includes(field)) return { ok: false, error: `field 'field' must be one of the CANDIDATES (${candidates.map((i) => names[i]).join(", ")}) when decision is "probe"` };
  return { ok: true, field };
}

/** The candidate field names a `judge` request lists (its `CANDIDATES:` line), or null. */
const candidatesOfRequest = (request: Pick<LlmRequestedPayload, "messages">): string[] | null => namesOnLine(request, CANDIDATES_LINE);

const JUDGE_SYSTEM = `You are the critic of an agent that keeps a belief table about a world that changes on its own. Each step the agent may spend one step of its limited probe budget to read one field's true value from the world (a probe), or take its next task action. A scoring rule (rho = c + s + u + d: criticality, reported staleness, 1 - confidence, dependency of the next action) proposes the top candidate fields and a decision. Decide: probe one candidate, or act. Probing repairs a belief that may be wrong but costs a step the task needs.

Reply with one JSON object: {"decision": "probe" | "act", "field": string} — field is one of CANDIDATES when decision is "probe".`;

export interface JudgeContext {
  readonly t: number;
  readonly horizon: number;
  readonly budget: number;
  readonly used: number;
  readonly action: string;
  /** Simple's own decision: the field it would probe, or -1 (act). */
  readonly proposal: number;
  readonly candidates: ReadonlyArray<{ readonly field: number; readonly c: number; readonly s: number; readonly u: number; readonly d: number; readonly rho: number }>;
}

/** The `judge` request of step t (T 0, 256 tokens, JSON mode, output `envprobe-judge`): the belief table, Simple's top candidates and its proposal. */
export function judgeRequest(model: string, l: Layout, x: JudgeContext, rows: readonly TableRow[]): LlmRequestedPayload {
  const name = (i: number) => l.fields[i]?.name ?? `#${i}`;
  const f2 = (v: number) => v.toFixed(2);
  const user = [
    `WORLD: ${l.kind}`,
    `TASK: ${taskLine(l)}`,
    `STEP: ${x.t} of ${x.horizon} · probes used ${x.used} of ${x.budget}`,
    `NEXT ACTION: ${x.action}`,
    ["BELIEFS (field: value · staleness · confidence):", ...rows.map((r, i) => `${name(i)}: ${r.value} · ${r.stale} · ${r.conf.toFixed(2)}`)].join("\n"),
    ["TOP CANDIDATES (field: rho = c + s + u + d):", ...x.candidates.map((c) => `${name(c.field)}: ${f2(c.rho)} = ${f2(c.c)} + ${f2(c.s)} + ${f2(c.u)} + ${f2(c.d)}`)].join("\n"),
    `RULE PROPOSES: ${x.proposal < 0 ? "act" : `probe ${name(x.proposal)}`} (threshold rho >= 1.5)`,
    `${CANDIDATES_LINE}${JSON.stringify(x.candidates.map((c) => name(c.field)))}`,
    "Return only the JSON object.",
  ].join("\n");
  return llmRequest("judge", model, [{ role: "system", content: JUDGE_SYSTEM }, { role: "user", content: user }], { json: true, maxTokens: 256, output: JUDGE_OUTPUT, temperature: 0 }, null);
}

/** Output schemas by name, for the gateway: null when the content is usable, else the reason. */
export const ENVPROBE_LLM_OUTPUTS: Readonly<Record<string, (content: string, request?: Pick<LlmRequestedPayload, "messages">) => string | null>> = {
  [JUDGE_OUTPUT]: (content, request) => {
    const names = request === undefined ? null : candidatesOfRequest(request);
    if (names === null) return "the request lists no CANDIDATES to validate against";
    const r = parseJudgeDecision(content, names, names.map((_, i) => i));
    return r.ok ? null : r.error;
  },
  [BELIEF_OUTPUT]: (content, request) => {
    const names = request === undefined ? null : fieldNamesOfRequest(request);
    if (names === null) return "the request lists no FIELDS to validate against";
    const r = parseBeliefUpdates(content, names);
    return r.ok ? null : r.error;
  },
};

// ---- The request ------------------------------------------------------------------------------

const SYSTEM = `You keep the belief table of an agent acting in a partially observable world that changes on its own between steps (objects and keys move, locks flip, variables disappear). The agent sees only part of the world. After every step you are told what the agent did, what the world answered and what the agent observes now, together with the current belief table. Update the beliefs.

For each field whose belief you want to change or re-assess, give:
- field: a name from FIELDS, exactly as written (never invent fields);
- value: the value you now believe (allowed values below; "?" means unknown);
- staleness: steps since this value was last confirmed by an observation, a probe answer or the agent's own action (0 = confirmed this step);
- confidence: how sure you are that the value is right now, from 0 to 1.
Fields you leave out keep their value and confidence; their staleness grows by one per step. Probe answers are already written into the table (they are the world's true values at that step).

Allowed values:
- agent: the agent's room (room_0, room_1, …) or node (n_0, n_1, …)
- loc:<object>, key:<key>: a room or node, "inv" (held by the agent) or "?"
- door:<door>, edge:<a>__<b>: "open" or "locked"
- var:<v>: "1" (available) or "0"; done:<t>: "1" (tool completed) or "0"
- dep:<t>: the tool's input variables joined by "+", e.g. "v_0+v_3", or "-" for none
- inventory: the held items joined by ",", or "-" for none

Reply with one JSON object: {"updates": [{"field": string, "value": string, "staleness": integer >= 0, "confidence": number in [0, 1]}]} — an empty list when nothing changed.`;

function taskLine(l: Layout): string {
  switch (l.kind) {
    case "objectstate":
      return `Pick up the object '${l.goal}'. Rooms room_0 … room_${l.size - 1} form a chain; door_k joins room_(k-1) and room_k. Some doors are locked and open only with their key (unlock with the key held). The agent starts in room_0.`;
    case "tooldag":
      return `Make variable ${l.goal} available. Tool t_i produces v_i and needs its input variables (its schema, hidden unless probed); a tool whose inputs are missing fails. Variables can disappear between steps.`;
    case "graphnav":
      return `Reach node ${l.goal}. Nodes n_0 … n_${l.size - 1} are joined by edges; a locked edge is passable while holding its key (collect keys on the way). The agent starts at n_0.`;
  }
}

/** What the belief table holds for one field when the request is made. */
export interface TableRow {
  readonly value: string;
  readonly stale: number;
  readonly conf: number;
}

/**
 * The `belief` request after step t (T 0, 1,024 tokens, JSON mode, output `envprobe-beliefs`): the
 * task, the step and budget, what the step did and answered, the observation, the belief table
 * (after the probe answer was written back) and the field names.
 */
export function beliefRequest(model: string, l: Layout, step: EnvprobeSteppedPayload, horizon: number, budget: number, rows: readonly TableRow[]): LlmRequestedPayload {
  const name = (i: number) => l.fields[i]?.name ?? `#${i}`;
  const outcome =
    step.kind === "probe"
      ? `probe ${step.action}: ${step.valid ? (step.answer.length === 0 ? "no answer" : step.answer.map(([i, v]) => `${name(i)} = ${v}`).join("; ") + " (written back)") : `refused (${step.reason})`}${Object.keys(step.extra).length === 0 ? "" : ` · ${Object.keys(step.extra).sort().map((k) => `${k} = ${step.extra[k]}`).join(", ")}`}`
      : `act ${step.action}: ${step.valid ? "valid" : `invalid (${step.reason})`}`;
  const observed = step.obs.map(([i, v]) => `${name(i)} = ${v}`).join("; ");
  const user = [
    `WORLD: ${l.kind}`,
    `TASK: ${taskLine(l)}`,
    `STEP: ${step.t} of ${horizon} · probes used ${step.probesUsed} of ${budget}${step.done ? (step.success ? " · task solved" : " · episode over") : ""}`,
    `LAST STEP: ${outcome}`,
    `OBSERVATION: ${observed.length === 0 ? "(nothing)" : observed}${step.seen.length === 0 ? "" : ` · visible: ${step.seen.join(", ")}`}`,
    ["BELIEFS (field: value · staleness · confidence):", ...rows.map((r, i) => `${name(i)}: ${r.value} · ${r.stale} · ${r.conf.toFixed(2)}`)].join("\n"),
    `${FIELDS_LINE}${JSON.stringify(l.fields.map((f) => f.name))}`,
    "Return only the JSON object.",
  ].join("\n");
  const messages: LlmMessagePayload[] = [
    { role: "system", content: SYSTEM },
    { role: "user", content: user },
  ];
  return llmRequest("belief", model, messages, { json: true, maxTokens: 1024, output: BELIEF_OUTPUT, temperature: 0 }, null);
}

// ---- JSON schemas (a local model's grammar) ------------------------------------------------------

const CONFIDENCES: readonly number[] = [0, 0.25, 0.5, 0.75, 1];
const STALENESS: readonly number[] = [0, 1, 2, 3, 4, 5];

/** The values a field's domain takes among a fixed list of candidates (places, held, unknown, open/locked, 0/1, none). */
function allowedValues(names: readonly string[]): string[][] {
  const candidates = ["?", "inv", "open", "locked", "1", "0", "-", ...Array.from({ length: 16 }, (_, i) => `room_${i}`), ...Array.from({ length: 16 }, (_, i) => `n_${i}`)];
  return domainsOf(names).map((domain) => candidates.filter((c) => domain(c).ok));
}

/**
 * The JSON schema of each output, for a model whose output a grammar constrains (the local model):
 * every reply it allows passes the validator (a field updated twice aside). A belief update's value
 * is one its field's domain takes (fields grouped by their allowed values); at most 2 updates.
 */
export const ENVPROBE_LLM_JSON_SCHEMAS: Readonly<Record<string, (request: Pick<LlmRequestedPayload, "messages">) => object>> = {
  [JUDGE_OUTPUT]: (request) => {
    const names = candidatesOfRequest(request) ?? [];
    return {
      oneOf: [
        { type: "object", properties: { decision: { const: "act" }, field: { type: "string", maxLength: 0 } }, required: ["decision", "field"] },
        ...(names.length === 0 ? [] : [{ type: "object", properties: { decision: { const: "probe" }, field: { enum: names } }, required: ["decision", "field"] }]),
      ],
    };
  },
  [BELIEF_OUTPUT]: (request) => {
    const names = fieldNamesOfRequest(request) ?? [];
    const allowed = allowedValues(names);
    const groups = new Map<string, string[]>();
    names.forEach((name, i) => {
      if (allowed[i]!.length === 0) return;
      const key = JSON.stringify(allowed[i]);
      groups.set(key, [...(groups.get(key) ?? []), name]);
    });
    const items = [...groups].map(([values, fields]) => ({
      type: "object",
      properties: { field: { enum: fields }, value: { enum: JSON.parse(values) as string[] }, staleness: { enum: STALENESS }, confidence: { enum: CONFIDENCES } },
      required: ["field", "value", "staleness", "confidence"],
    }));
    return { type: "object", properties: { updates: items.length === 0 ? { type: "array", items: { type: "string" }, maxItems: 0 } : { type: "array", items: items.length === 1 ? items[0]! : { oneOf: items }, maxItems: Math.min(2, names.length) } }, required: ["updates"] };
  },
};
