// The LLM side of the AURA controller and its baselines: the prompts each role sends (as
// `llm.requested` messages), the output schemas the gateway validates against, and the lenient
// parsers the controller applies to a validated completion. Pure: no I/O, no clock.
//
// Roles:
//   intent   the IntentInferrer's LLM backend (reference/aura.md §5.3): a theory-of-mind prompt
//            with a four-tier gap rubric, probe rules, the 7-field IntentFrame schema and five
//            benchmark-disjoint few-shot examples; JSON out, probes whitelisted against the registry
//   planner  one Algorithm-1 step (call a tool or stop) for the ReAct-style baselines, or a whole
//            plan for Plan-and-Solve; tool names are the model's own — an invented one is sent as a
//            probe and refused by the answering actor, never executed
//   answer   the final synthesis (Reason/Interact) from the scene and the probe evidence
import type { IntentFramePayload } from "./events.ts";
import { llmRequest, type LlmMessagePayload, type LlmRequestedPayload } from "../../events/llm.ts";
import type { PerceivedScene } from "./intent.ts";
import { ALL_TOOLS } from "./tools.ts";

/** The model of each controller role, or null for the deterministic backend. */
export interface SceneLlmModels {
  readonly intent: string | null;
  readonly planner: string | null;
  readonly answer: string | null;
}

// ---- Output parsing (shared by the gateway's validators and the controller) ------------------

/** Strips ``` fences and a leading "json", then parses; the value must be a JSON object. */
export function parseJsonObject(content: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let text = content.trim();
  const fence = /^```[a-zA-Z]*\s*([\s\S]*?)\s*```$/.exec(text);
  if (fence !== null) text = fence[1]!.trim();
  if (/^json\s*\{/i.test(text)) text = text.slice(4).trim();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `not valid JSON (${String((error as Error).message).slice(0, 120)})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, error: "expected a JSON object" };
  return { ok: true, value: value as Record<string, unknown> };
}

const clamp01 = (x: unknown): number => {
  const n = typeof x === "number" ? x : typeof x === "string" ? Number(x) : NaN;
  return Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
};

/**
 * The release's `_parse_intent_json`, stricter on what makes a frame unusable: the object must
 * carry a numeric `gap`. Everything else is coerced (empty literal need → the query, a string
 * implicit need → a list, probes whitelisted against the registry, rationale ≤ 400 characters).
 */
export function parseIntentFrame(content: string, query: string, tools: readonly string[]): { ok: true; frame: IntentFramePayload } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const o = parsed.value;
  const gapRaw = typeof o.gap === "string" ? Number(o.gap) : o.gap;
  if (typeof gapRaw !== "number" || !Number.isFinite(gapRaw)) return { ok: false, error: "field 'gap' must be a number in [0, 1]" };
  const implicit = typeof o.implicit_need === "string" ? [o.implicit_need] : Array.isArray(o.implicit_need) ? o.implicit_need.map(String) : [];
  const probes = Array.isArray(o.recommended_probes) ? o.recommended_probes.map(String) : [];
  const literal = typeof o.literal_need === "string" && o.literal_need.trim().length > 0 ? o.literal_need : query;
  const gap = Math.round(clamp01(gapRaw) * 1000) / 1000;
  return {
    ok: true,
    frame: {
      literal_need: literal,
      implicit_need: implicit.filter((s) => s.trim().length > 0),
      gap,
      recommended_probes: [...new Set(probes.filter((p) => tools.includes(p)))],
      should_alert: o.should_alert === true || o.should_alert === "true",
      confidence: Math.round(clamp01(o.confidence) * 1000) / 1000,
      rationale: String(o.rationale ?? "").slice(0, 400),
    },
  };
}

export type PlannerStep = { readonly action: "stop"; readonly reason: string } | { readonly action: "call_tool"; readonly tool: string; readonly arguments: Readonly<Record<string, string>>; readonly reason: string };

const stringArgs = (x: unknown): Record<string, string> | null => {
  if (x === undefined || x === null) return {};
  if (typeof x !== "object" || Array.isArray(x)) return null;
  const out: Record<string, string> = {};
  for (const k of Object.keys(x as object).sort()) {
    const v = (x as Record<string, unknown>)[k];
    if (v === null || v === undefined) continue;
    out[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
};

export function parsePlannerStep(content: string): { ok: true; step: PlannerStep } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const o = parsed.value;
  const reason = String(o.reason ?? "").slice(0, 300);
  if (o.action === "stop" || o.action === "answer" || o.action === "final") return { ok: true, step: { action: "stop", reason } };
  if (o.action !== "call_tool") return { ok: false, error: "field 'action' must be \"call_tool\" or \"stop\"" };
  if (typeof o.tool !== "string" || o.tool.trim().length === 0) return { ok: false, error: "field 'tool' must name a tool when action is \"call_tool\"" };
  const args = stringArgs(o.arguments);
  if (args === null) return { ok: false, error: "field 'arguments' must be an object" };
  return { ok: true, step: { action: "call_tool", tool: o.tool.trim(), arguments: args, reason } };
}

export function parsePlannerPlan(content: string): { ok: true; steps: Array<{ tool: string; arguments: Record<string, string> }> } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const steps = parsed.value.steps ?? parsed.value.plan;
  if (!Array.isArray(steps)) return { ok: false, error: "field 'steps' must be a list of {tool, arguments}" };
  const out: Array<{ tool: string; arguments: Record<string, string> }> = [];
  for (const [i, s] of steps.entries()) {
    if (s === null || typeof s !== "object" || typeof (s as { tool?: unknown }).tool !== "string") return { ok: false, error: `steps[${i}] must be an object with a string 'tool'` };
    const args = stringArgs((s as { arguments?: unknown }).arguments);
    if (args === null) return { ok: false, error: `steps[${i}].arguments must be an object` };
    out.push({ tool: (s as { tool: string }).tool.trim(), arguments: args });
  }
  return { ok: true, steps: out };
}

export function parseAnswer(content: string): { ok: true; text: string } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const a = parsed.value.answer;
  if (typeof a !== "string" || a.trim().length === 0) return { ok: false, error: "field 'answer' must be a non-empty string" };
  return { ok: true, text: a.trim().slice(0, 4000) };
}

const problem = (r: { ok: boolean; error?: string }): string | null => (r.ok ? null : (r.error ?? "invalid"));

/** Output schemas by name, for the gateway: null when the content is usable, else the reason. */
export const AURA_LLM_OUTPUTS: Readonly<Record<string, (content: string) => string | null>> = {
  "intent-frame": (c) => problem(parseIntentFrame(c, "", [])),
  "planner-step": (c) => problem(parsePlannerStep(c)),
  "planner-plan": (c) => problem(parsePlannerPlan(c)),
  answer: (c) => problem(parseAnswer(c)),
};

// ---- Prompts -----------------------------------------------------------------------------------

const INTENT_SYSTEM = `You are the intent-inference stage of an environment-aware assistant (theory-of-mind style alignment).
Given a user's query about a social scene, infer what the user literally asks and what they implicitly need, and how much of that need is NOT answerable from the visible scene (the gap).

Gap rubric:
- below 0.20: a self-contained fact (time, a count, a place) that the visible scene answers;
- 0.20-0.40: the literal answer is enough, a little context helps;
- 0.40-0.60: the literal answer is visible in the scene, but the real need requires someone's private state ("where is X?" when the user wants to know whether X is free to talk);
- 0.60 and above: appropriateness ("should I…", "is it a good time…"), a latent goal or motive, or a relational / second-order question (what one person believes about another).

Probe rules:
- recommend only tool names from AVAILABLE_TOOLS; never invent tool names;
- prefer structured-state tools (private state, beliefs, plans) over broad surveys;
- for a question about what A thinks, believes or assumes about B, recommend get_agent_belief_about (A's belief), never B's private state.

Reply with a JSON object with exactly these keys:
{"literal_need": string, "implicit_need": [string], "gap": number in [0,1], "recommended_probes": [tool names], "should_alert": boolean, "confidence": number in [0,1], "rationale": string}`;

const FEW_SHOT = `Examples (other people and places than yours):

USER QUERY: How many people are in the bakery?
{"literal_need": "the number of people in the bakery", "implicit_need": [], "gap": 0.1, "recommended_probes": [], "should_alert": false, "confidence": 0.9, "rationale": "a count the visible scene answers"}

USER QUERY: Where is Diego right now?
{"literal_need": "Diego's location", "implicit_need": ["whether Diego can be reached now: availability and mood"], "gap": 0.5, "recommended_probes": ["get_agent_private_state"], "should_alert": true, "confidence": 0.7, "rationale": "location is visible; reachability is private"}

USER QUERY: Should I ask Priya to help me move this afternoon?
{"literal_need": "whether to ask Priya for help this afternoon", "implicit_need": ["Priya's availability, mood and what she is privately dealing with", "Priya's plans for the afternoon"], "gap": 0.75, "recommended_probes": ["get_agent_private_state", "get_agent_plan"], "should_alert": true, "confidence": 0.7, "rationale": "appropriateness needs private state and schedule"}

USER QUERY: What has Marcus been so focused on lately?
{"literal_need": "what Marcus is doing", "implicit_need": ["Marcus's unspoken goal"], "gap": 0.7, "recommended_probes": ["get_agent_private_state"], "should_alert": true, "confidence": 0.65, "rationale": "a latent goal is not visible"}

USER QUERY: Does Aiko think Tomas is upset with her?
{"literal_need": "Aiko's view of Tomas's mood", "implicit_need": ["Aiko's belief about Tomas's emotional state (not Tomas's actual state)"], "gap": 0.8, "recommended_probes": ["get_agent_belief_about"], "should_alert": false, "confidence": 0.75, "rationale": "second-order: the believer's belief is what is asked"}`;

const sceneLines = (scene: PerceivedScene): string[] => [
  `summary: ${scene.summary}`,
  `entities: ${Object.keys(scene.public).sort().slice(0, 10).join(", ")}`,
];

/** The intent request (T 0.1, 512 tokens, JSON), as the release's LLMIntentInferrer sends it. */
export function intentRequest(model: string, query: string, scene: PerceivedScene, memories: readonly string[], tools: readonly string[], queryId: string): LlmRequestedPayload {
  const user = [
    `USER QUERY: ${query}`,
    ["CURRENT SCENE:", ...sceneLines(scene)].join("\n"),
    ["RECENT MEMORIES:", ...(memories.length === 0 ? ["(none)"] : memories.slice(0, 5).map((m) => `- ${m.slice(0, 160)}`))].join("\n"),
    "USER PROFILE: {}",
    `AVAILABLE_TOOLS: ${[...tools].sort().join(", ")}`,
    "Return only the JSON object.",
  ].join("\n\n");
  const messages: LlmMessagePayload[] = [
    { role: "system", content: `${INTENT_SYSTEM}\n\n${FEW_SHOT}` },
    { role: "user", content: user },
  ];
  return llmRequest("intent", model, messages, { json: true, maxTokens: 512, output: "intent-frame", temperature: 0.1 }, queryId);
}

const toolLines = (tools: readonly string[]): string =>
  [...tools].sort().map((t) => `- ${t}(${(ALL_TOOLS[t]?.args ?? []).join(", ")}): ${ALL_TOOLS[t]?.description ?? ""}`).join("\n");

export interface Observation {
  readonly tool: string;
  readonly args: Readonly<Record<string, string>>;
  readonly outcome: string;
}

const observationLines = (observations: readonly Observation[]): string =>
  observations.length === 0 ? "(none yet)" : observations.map((o, i) => `${i + 1}. ${o.tool}(${Object.entries(o.args).map(([k, v]) => `${k}=${v}`).join(", ")}) -> ${o.outcome.slice(0, 400)}`).join("\n");

const STYLE: Readonly<Record<string, string>> = {
  "no-intent": "You are a ReAct agent: think about the user's question, call the tools that answer it, and stop when you can answer.",
  react: "You are a ReAct agent: think about the user's question, call the tools that answer it, and stop when you can answer.",
  reflexion: "You are a ReAct agent with self-reflection: call the tools that answer the question; before stopping, reflect whether the evidence is enough and gather more context if it is not.",
  "aura-full": "You are an environment probe controller: gather NOVEL context about the scene that the asker cannot see. Do not call get_time, get_location, get_nearby_agents or get_recent_memories; prefer location activities, then all agents, then recent events.",
};

/**
 * One Algorithm-1 step: call one tool, or stop, JSON. NoIntent/ReAct/Reflexion: T 0.1, 400 tokens
 * (the release's function-calling loop); aura-full, the simulator's probe planner: T 0.2, 200
 * tokens (paper A6 "Probe planning").
 */
export function plannerStepRequest(model: string, kind: string, query: string, scene: PerceivedScene, asker: string | null, tools: readonly string[], budgetLeft: number, observations: readonly Observation[], queryId: string): LlmRequestedPayload {
  const system = [
    STYLE[kind] ?? STYLE.react!,
    `Tools:\n${toolLines(tools)}`,
    'Reply with a JSON object: {"action": "call_tool" or "stop", "tool": tool name, "arguments": {argument: string value}, "reason": string}.',
  ].join("\n\n");
  const user = [
    `USER QUERY: ${query}`,
    ...(asker === null ? [] : [`ASKER: ${asker}`]),
    ["SCENE:", ...sceneLines(scene)].join("\n"),
    `TOOL CALLS LEFT: ${budgetLeft}`,
    `OBSERVATIONS:\n${observationLines(observations)}`,
  ].join("\n\n");
  const probePlanner = kind === "aura-full";
  return llmRequest("planner", model, [{ role: "system", content: system }, { role: "user", content: user }], { json: true, maxTokens: probePlanner ? 200 : 400, output: "planner-step", temperature: probePlanner ? 0.2 : 0.1 }, queryId);
}

/** Plan-and-Solve's plan, made once from the surface query and the PUBLIC_STATE (T 0.1, 400 tokens, JSON; ≤ maxSteps steps). */
export function plannerPlanRequest(model: string, query: string, scene: PerceivedScene, asker: string | null, tools: readonly string[], maxSteps: number, queryId: string): LlmRequestedPayload {
  const system = [
    `You are a Plan-and-Solve agent: first make a plan of at most ${maxSteps} tool calls that gather what the answer needs, then it is executed for you.`,
    `Tools:\n${toolLines(tools)}`,
    'Reply with a JSON object: {"steps": [{"tool": tool name, "arguments": {argument: string value}}], "reason": string}.',
  ].join("\n\n");
  const publicState = Object.keys(scene.public).sort().map((n) => `- ${n}: ${scene.public[n]!.location}, ${scene.public[n]!.action}`).join("\n");
  const user = [`USER QUERY: ${query}`, ...(asker === null ? [] : [`ASKER: ${asker}`]), ["SCENE:", ...sceneLines(scene)].join("\n"), `PUBLIC STATE:\n${publicState}`].join("\n\n");
  return llmRequest("planner", model, [{ role: "system", content: system }, { role: "user", content: user }], { json: true, maxTokens: 400, output: "planner-plan", temperature: 0.1 }, queryId);
}

/**
 * Which synthesis a condition ends with (reference/aura.md §5.5, §7.5; the release's runners):
 *   literal         `_literal_answer`: the scene only, no tools (T 0.1, 300 tokens)
 *   react           NoIntent/ReAct's closing call once its tool calls are spent: "Based on what you
 *                   have, answer now" over its observations, scene summary only (T 0.1, 400)
 *   plan-and-solve  phase 3: synthesise from the plan's observations; its prompt exposes the
 *                   PUBLIC_STATE (T 0.4, 320)
 *   intent          the v2 routed synthesis of AURA Intent, Fixed-private and Oracle-intent: scene
 *                   summary and public-state dump, "answer 1) the literal question 2) the implicit
 *                   concern", evidence lines `tool(args) -> result` (T 0.1, 400); for a second-order
 *                   question the scene is "for orientation only", no public-state dump, and a strict
 *                   "report the believer's recorded belief, not the actual state"
 *   factual         RQ2 (environment registry): grounded answer, T 0.7, 512
 */
export type AnswerStyle = "literal" | "react" | "plan-and-solve" | "intent" | "factual";

export interface AnswerContext {
  readonly style: AnswerStyle;
  readonly query: string;
  readonly scene: PerceivedScene | null;
  readonly asker: string | null;
  readonly implicitNeed: readonly string[];
  readonly secondOrder: boolean;
  readonly evidence: readonly string[];
}

const SETTINGS: Readonly<Record<AnswerStyle, { readonly temperature: number; readonly maxTokens: number }>> = {
  literal: { temperature: 0.1, maxTokens: 300 },
  react: { temperature: 0.1, maxTokens: 400 },
  "plan-and-solve": { temperature: 0.4, maxTokens: 320 },
  intent: { temperature: 0.1, maxTokens: 400 },
  factual: { temperature: 0.7, maxTokens: 512 },
};

const publicStateJson = (scene: PerceivedScene): string => JSON.stringify(Object.fromEntries(Object.keys(scene.public).sort().map((n) => [n, scene.public[n]])));

const REPLY = 'Reply with a JSON object: {"answer": string}.';

/** The synthesis call (Reason/Interact), in the condition's style. */
export function answerRequest(model: string, c: AnswerContext, queryId: string): LlmRequestedPayload {
  const evidence = `EVIDENCE:\n${c.evidence.length === 0 ? "(none)" : c.evidence.map((e) => `- ${e.slice(0, 600)}`).join("\n")}`;
  const asker = c.asker === null ? [] : [`ASKER: ${c.asker}`];
  let system: string;
  let user: string[];
  switch (c.style) {
    case "literal":
      system = [`You are a helpful assistant. The current environment is: ${c.scene?.summary ?? "(unknown)"}`, "Answer the user's question using ONLY this scene; do not invent people, places or states.", REPLY].join("\n");
      user = [`USER QUERY: ${c.query}`, ...asker];
      break;
    case "react":
      system = [`You are a ReAct agent answering a question about a scene. Scene: ${c.scene?.summary ?? "(unknown)"}`, "You have used your tool calls. Based on what you have, answer now; use only the scene and the observations.", REPLY].join("\n");
      user = [`USER QUERY: ${c.query}`, ...asker, evidence];
      break;
    case "plan-and-solve":
      system = ["You are a Plan-and-Solve agent. Your plan has been executed; synthesise the answer from the observations and the scene. Do not invent people, places or states.", REPLY].join("\n");
      user = [`USER QUERY: ${c.query}`, ...asker, ...(c.scene === null ? [] : [`SCENE: ${c.scene.summary}`, `PUBLIC_STATE: ${publicStateJson(c.scene)}`]), evidence];
      break;
    case "intent": {
      const concern = c.implicitNeed.length === 0 ? "(none inferred)" : c.implicitNeed.join("; ");
      system = c.secondOrder
        ? [
            "You answer a question about what one person believes about another.",
            "The scene is given for orientation only. Report the believer's RECORDED BELIEF from the evidence, not the other person's actual state; if the belief differs from reality, say it is their belief.",
            REPLY,
          ].join("\n")
        : ["You answer a user's question about a scene. Use only the scene and the evidence; do not invent people, places or states.", `Answer 1) the literal question, then 2) the implicit concern: ${concern}.`, REPLY].join("\n");
      user = c.secondOrder || c.scene === null
        ? [`USER QUERY: ${c.query}`, ...asker, ...(c.scene === null ? [] : [`SCENE (orientation only): ${c.scene.summary}`]), evidence]
        : [`USER QUERY: ${c.query}`, ...asker, `SCENE: ${c.scene.summary}`, `PUBLIC_STATE: ${publicStateJson(c.scene)}`, `IMPLICIT NEED: ${concern}`, evidence];
      break;
    }
    case "factual":
      system = [
        "You answer a user's question about a scene. Use only the scene and the evidence given; do not invent people, places or states.",
        "Answer the literal question first; if an implicit need is listed, address it too.",
        REPLY,
      ].join("\n");
      user = [`USER QUERY: ${c.query}`, ...asker, ...(c.scene === null ? [] : [["SCENE:", ...sceneLines(c.scene)].join("\n")]), ...(c.implicitNeed.length === 0 ? [] : [`IMPLICIT NEED: ${c.implicitNeed.join("; ")}`]), evidence];
      break;
  }
  const settings = SETTINGS[c.style];
  return llmRequest("answer", model, [{ role: "system", content: system }, { role: "user", content: user.join("\n\n") }], { json: true, maxTokens: settings.maxTokens, output: "answer", temperature: settings.temperature }, queryId);
}

// ---- JSON schemas (a local model's grammar) ------------------------------------------------------

/** Numbers the grammar lets a model write for a value in [0, 1]: short, and always in range. */
export const UNIT_STEPS: readonly number[] = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const text = (maxLength: number) => ({ type: "string", minLength: 1, maxLength });

/** The tools an intent request offers (its `AVAILABLE_TOOLS:` line). */
const offeredTools = (request: Pick<LlmRequestedPayload, "messages">): string[] => {
  for (const m of request.messages) {
    const line = m.content.split("\n").find((l) => l.startsWith("AVAILABLE_TOOLS: "));
    if (line !== undefined) return line.slice("AVAILABLE_TOOLS: ".length).split(",").map((t) => t.trim()).filter((t) => t.length > 0);
  }
  return [];
};

/** The tools a planner request lists ("- tool(arg, …): …" under "Tools:") with their arguments. */
const listedTools = (request: Pick<LlmRequestedPayload, "messages">): Array<{ tool: string; args: string[] }> => {
  const out: Array<{ tool: string; args: string[] }> = [];
  for (const m of request.messages) {
    for (const line of m.content.split("\n")) {
      const listed = /^- ([a-z_]+)\(([a-z_, ]*)\): /.exec(line);
      if (listed !== null) out.push({ tool: listed[1]!, args: listed[2]!.split(",").map((a) => a.trim()).filter((a) => a.length > 0) });
    }
  }
  return out;
};

/** The people a request's scene lists (its "entities: " line). */
const listedPeople = (request: Pick<LlmRequestedPayload, "messages">): string[] => {
  for (const m of request.messages) {
    const line = m.content.split("\n").find((l) => l.startsWith("entities: "));
    if (line !== undefined) return line.slice("entities: ".length).split(",").map((n) => n.trim()).filter((n) => n.length > 0);
  }
  return [];
};

// Arguments that name a person take one of the scene's names; others (a location) are short text.
const PERSON_ARGS = new Set(["agent_name", "believer", "target"]);

/**
 * One call of each listed tool, with exactly its arguments: the grammar then admits no tool the
 * request did not offer and no person outside the scene (a small model otherwise names the action
 * as the tool, or invents arguments). A request that lists no tools keeps the loose shape.
 */
const toolCallShapes = (request: Pick<LlmRequestedPayload, "messages">): object[] | null => {
  const tools = listedTools(request);
  if (tools.length === 0) return null;
  const people = listedPeople(request);
  const argSchema = (arg: string) => (PERSON_ARGS.has(arg) && people.length > 0 ? { enum: people } : text(40));
  return tools.map(({ tool, args }) => ({
    tool: { const: tool },
    arguments: { type: "object", properties: Object.fromEntries(args.map((a) => [a, argSchema(a)])), required: args, additionalProperties: false },
  }));
};

/**
 * The JSON schema of each output, for a model whose output a grammar constrains (the local model):
 * every reply it allows passes the output's validator above. Tight on purpose (short strings, few
 * items, numbers from UNIT_STEPS): a small model on a CPU writes a few tokens a second.
 */
export const AURA_LLM_JSON_SCHEMAS: Readonly<Record<string, (request: Pick<LlmRequestedPayload, "messages">) => object>> = {
  "intent-frame": (request) => {
    const tools = offeredTools(request);
    return {
      type: "object",
      properties: {
        literal_need: text(80),
        implicit_need: { type: "array", items: text(80), maxItems: 2 },
        gap: { enum: UNIT_STEPS },
        recommended_probes: tools.length === 0 ? { type: "array", items: text(40), maxItems: 0 } : { type: "array", items: { enum: tools }, maxItems: 2 },
        should_alert: { type: "boolean" },
        confidence: { enum: UNIT_STEPS },
        rationale: text(80),
      },
      required: ["literal_need", "implicit_need", "gap", "recommended_probes", "should_alert", "confidence", "rationale"],
    };
  },
  "planner-step": (request) => {
    const calls = toolCallShapes(request) ?? [{ tool: text(40), arguments: { type: "object", additionalProperties: text(40) } }];
    return {
      oneOf: [
        { type: "object", properties: { action: { const: "stop" }, reason: text(120) }, required: ["action", "reason"] },
        ...calls.map((call) => ({ type: "object", properties: { action: { const: "call_tool" }, ...call, reason: text(120) }, required: ["action", "tool", "arguments", "reason"] })),
      ],
    };
  },
  "planner-plan": (request) => {
    const calls = toolCallShapes(request);
    const step = calls === null ? { type: "object", properties: { tool: text(40), arguments: { type: "object", additionalProperties: text(40) } }, required: ["tool", "arguments"] } : { oneOf: calls.map((call) => ({ type: "object", properties: call, required: ["tool", "arguments"] })) };
    return { type: "object", properties: { steps: { type: "array", maxItems: 3, items: step }, reason: text(120) }, required: ["steps", "reason"] };
  },
  answer: () => ({ type: "object", properties: { answer: text(300) }, required: ["answer"] }),
};
