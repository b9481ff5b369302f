// The LLM household agent's model side (condition `llm`, role `agent`): the request an agent sends
// each turn (`llm.requested`), the one action the model answers with, and its validation — shared
// by the gateway (HOUSEHOLD_LLM_OUTPUTS, one repair attempt on an invalid answer) and the agent
// (which parses the logged completion again, so replay needs nothing but the log). Pure.
//
// The prompt follows EnactToM's agent prompt (digest §4.5): "You are <agent>", the task, the known
// information (this agent's knowledge base only: its own secrets, what it saw, what it was told),
// the constraints (bans, message budget, contacts) and the action syntax (§4.3). The model answers
// {"thought": string, "action": "Navigate[kitchen_1]"}; a message is {"action": "Communicate",
// "text": string, "to": [agent…] | ["all"]} and a placing {"action": "Place", "object", "relation",
// "furniture"} (the paper's one-string forms, Communicate["text", agent_1], are taken too).
import { llmRequest, type LlmRequestedPayload } from "../../events/llm.ts";
import { parseJsonObject } from "../aura/llm.ts";
import { render, type Kb, type PublicLayout } from "./knowledge.ts";
import { formatAction, parseAction, type Action } from "./rules.ts";
import { ACTION_NAMES } from "./task.ts";

/** The output schema name the gateway validates `agent` answers against. */
export const ACTION_OUTPUT = "household-action";
/** The role the household's LLM agents call the model as. */
export const AGENT_ROLE = "agent";

/** What an answer is checked against: the request states it on its last lines, so the gateway can check without the world. */
export interface ActionChoices {
  /** Action names it may use. */
  readonly actions: readonly string[];
  /** Every id an action may name (rooms, furniture, objects it knows of). */
  readonly ids: readonly string[];
  /** The articulated furniture (what Open and Close take) and the objects it knows of (what Pick and Place take). */
  readonly openable: readonly string[];
  readonly objects: readonly string[];
  /** Teammates it may message (empty: none). */
  readonly contacts: readonly string[];
  /** Messages it has left. */
  readonly messagesLeft: number;
}

const ALLOWED_LINE = "ALLOWED: ";

/** Parses and validates an answer: the Action it names, or the problem (sent back for the repair attempt). */
export function parseActionAnswer(content: string, choices: ActionChoices): { ok: true; action: Action } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const raw = parsed.value.action;
  if (typeof raw !== "string" || raw.trim() === "") return { ok: false, error: `field 'action' must be one action, e.g. "Navigate[kitchen_1]"` };
  let action: Action | { error: string };
  if (raw.trim() === "Communicate") {
    const { text, to } = parsed.value;
    if (typeof text !== "string" || text.trim() === "") return { ok: false, error: `a Communicate answer needs 'text', the message` };
    if (!Array.isArray(to) || to.length === 0 || !to.every((t) => typeof t === "string")) return { ok: false, error: `a Communicate answer needs 'to', a list of teammates or ["all"]` };
    action = { kind: "communicate", text: text.trim(), to: to.length === 1 && to[0] === "all" ? "all" : (to as string[]) };
  } else if (raw.trim() === "Place") {
    const { object, relation, furniture } = parsed.value;
    if (typeof object !== "string" || typeof furniture !== "string" || (relation !== "on" && relation !== "within")) return { ok: false, error: `a Place answer needs 'object', 'relation' ("on" or "within") and 'furniture'` };
    action = { kind: "place", target: object, relation, furniture };
  } else action = parseAction(raw);
  if ("error" in action) return { ok: false, error: action.error };
  const name = formatAction(action).slice(0, formatAction(action).indexOf("["));
  if (!choices.actions.includes(name)) return { ok: false, error: `${name} is not an action you may take (you may: ${choices.actions.join(", ")})` };
  switch (action.kind) {
    case "communicate": {
      if (choices.messagesLeft <= 0) return { ok: false, error: "you have no messages left" };
      const to = action.to === "all" ? [] : action.to;
      const stranger = to.find((t) => !choices.contacts.includes(t));
      if (stranger !== undefined) return { ok: false, error: `you cannot message '${stranger}' (you may message: ${choices.contacts.join(", ") || "no one"})` };
      if (action.to === "all" && choices.contacts.length === 0) return { ok: false, error: "you may message no one" };
      break;
    }
    case "place":
      if (!choices.objects.includes(action.target)) return { ok: false, error: `'${action.target}' is not an object you know of` };
      if (!choices.ids.includes(action.furniture)) return { ok: false, error: `unknown id '${action.furniture}'` };
      break;
    case "open":
    case "close":
      if (!choices.openable.includes(action.target)) return { ok: false, error: `'${action.target}' cannot be opened or closed (articulated furniture: ${choices.openable.join(", ") || "none"})` };
      break;
    case "pick":
      if (!choices.objects.includes(action.target)) return { ok: false, error: `'${action.target}' is not an object you know of` };
      break;
    case "wait":
    case "done":
      break;
    default:
      if (!choices.ids.includes(action.target)) return { ok: false, error: `unknown id '${action.target}' (name a room, a piece of furniture or an object you know of)` };
  }
  return { ok: true, action };
}

/** The choices a request states (its `ALLOWED:` line), or null. */
export function choicesOfRequest(request: Pick<LlmRequestedPayload, "messages">): ActionChoices | null {
  for (const m of request.messages) {
    if (m.role !== "user") continue;
    const line = m.content.split("\n").find((l) => l.startsWith(ALLOWED_LINE));
    if (line === undefined) continue;
    try {
      const c = JSON.parse(line.slice(ALLOWED_LINE.length)) as ActionChoices;
      if (Array.isArray(c.actions) && Array.isArray(c.ids) && Array.isArray(c.openable) && Array.isArray(c.objects) && Array.isArray(c.contacts) && typeof c.messagesLeft === "number") return c;
    } catch {
      return null;
    }
  }
  return null;
}

/** What this agent may do now, from its own view: its allowed actions, the ids it knows, its contacts and budget. */
export function choicesOf(kb: Kb, layout: PublicLayout, self: string, actions: readonly string[] | undefined): ActionChoices {
  const objects = Object.keys(kb.loc).sort();
  const contacts = (kb.targets ?? layout.agents).filter((a) => a !== self);
  const messagesLeft = kb.msgLimit === null ? 99 : Math.max(0, kb.msgLimit - kb.sent);
  const furniture = Object.keys(layout.furniture).sort();
  const openable = furniture.filter((f) => layout.furniture[f]!.articulated);
  return { actions: [...(actions ?? ACTION_NAMES)], ids: [...layout.rooms, ...furniture, ...objects], openable, objects, contacts, messagesLeft };
}

const SYSTEM = `You are one agent of a team in a house. Each turn you take exactly one action. You see only the room you are in; teammates know things you do not, and you know things they do not. Some agents cannot enter some rooms, messages are limited, and some furniture has hidden mechanics (it may work backwards, or open something else).

Actions (one turn each):
- Navigate[room_or_furniture_or_object]: go there (not into a room you cannot enter)
- Open[furniture] / Close[furniture]: articulated furniture only
- Pick[object]: you must be in its room; you hold at most one object
- Place[object, on|within, furniture]: place the object you hold; "within" puts it inside
- Communicate: send a message to teammates you may message (it costs a message and the turn)
- Wait[]: do nothing this turn
- Done[]: stop acting for the rest of the episode

Reply with one JSON object: {"thought": string, "action": string}, e.g. {"thought": "the cup is in the kitchen", "action": "Navigate[kitchen_1]"}. For a message: {"thought": string, "action": "Communicate", "text": string, "to": [teammate ids] or ["all"]}.`;

const placeText = (p: { on: string } | { inside: string } | { heldBy: string }): string => ("on" in p ? `on ${p.on}` : "inside" in p ? `inside ${p.inside}` : `held by ${p.heldBy}`);

/** The agent's knowledge base as text: only what this agent knows. */
export function knowledgeText(kb: Kb, layout: PublicLayout, self: string): string {
  const lines: string[] = [];
  lines.push(`Rooms: ${layout.rooms.join(", ")}.`);
  lines.push(`Furniture: ${Object.entries(layout.furniture).sort(([a], [b]) => a.localeCompare(b)).map(([id, f]) => `${id} (${f.kind} in ${f.room}${f.articulated ? `, ${kb.open[id] === undefined ? "open/closed unknown" : kb.open[id] ? "open" : "closed"}` : ""})`).join(", ")}.`);
  lines.push(`Teammates: ${layout.agents.filter((a) => a !== self).join(", ")}.`);
  for (const g of kb.goals) lines.push(`Goal: ${render(g, self)} ${g}`);
  for (const g of kb.own) lines.push(`Private goal: ${render(g, self)} ${g}`);
  for (const [a, rooms] of Object.entries(kb.restricted).sort(([x], [y]) => x.localeCompare(y))) lines.push(`${a === self ? "You" : a} cannot enter ${rooms.join(", ")}.`);
  for (const r of kb.remote) lines.push(`${r.opens ? "Opening or closing" : "Opening (closing)"} ${r.trigger} ${r.opens ? "does the same to" : "closes (opens)"} ${r.target}.`);
  for (const i of kb.inverse) lines.push(`${i} works backwards: Open closes it and Close opens it.`);
  for (const m of kb.mirror) lines.push(`${m.a} and ${m.b} move ${m.same ? "together" : "oppositely"}.`);
  const objects = Object.entries(kb.loc).sort(([a], [b]) => a.localeCompare(b));
  lines.push(objects.length === 0 ? "Objects you know of: none yet." : `Objects you know of: ${objects.map(([o, p]) => `${o} ${placeText(p)}`).join("; ")}.`);
  if (kb.searched.length > 0) lines.push(`Containers you have looked inside: ${kb.searched.join(", ")}.`);
  for (const [from, said] of Object.entries(kb.heardFrom).sort(([a], [b]) => a.localeCompare(b))) lines.push(`${from} told you: ${said.map((s) => render(s, self)).join(" ")}`);
  return lines.join("\n");
}

/**
 * The `agent` request of a turn (T 0, 256 tokens, JSON mode, output `household-action`): who it is,
 * what it knows, where it stands, its last action's result, its budget and what it may do.
 */
export function actionRequest(model: string, kb: Kb, layout: PublicLayout, self: string, turn: number, maxTurns: number, choices: ActionChoices): LlmRequestedPayload {
  const user = [
    `You are ${self}. Turn ${turn + 1} of ${maxTurns}.`,
    "[Known Information]",
    knowledgeText(kb, layout, self),
    "[Now]",
    `You are in ${kb.room}${kb.holding === null ? ", holding nothing" : `, holding ${kb.holding}`}.`,
    `Last action: ${kb.last === null ? "none" : `${kb.last.action}: ${kb.last.ok ? "Successful execution!" : `failed (${kb.last.reason})`}`}`,
    "[Important Constraints]",
    `Messages left: ${choices.messagesLeft === 99 ? "unlimited" : choices.messagesLeft}; you may message: ${choices.contacts.join(", ") || "no one"}.`,
    `Actions you may take: ${choices.actions.join(", ")}.`,
    `${ALLOWED_LINE}${JSON.stringify(choices)}`,
    "Return only the JSON object.",
  ].join("\n");
  return llmRequest(AGENT_ROLE, model, [{ role: "system", content: SYSTEM }, { role: "user", content: user }], { json: true, maxTokens: 256, output: ACTION_OUTPUT, temperature: 0 }, null);
}

/** Output schemas by name, for the gateway: null when the content is usable, else the reason. */
export const HOUSEHOLD_LLM_OUTPUTS: Readonly<Record<string, (content: string, request?: Pick<LlmRequestedPayload, "messages">) => string | null>> = {
  [ACTION_OUTPUT]: (content, request) => {
    const choices = request === undefined ? null : choicesOfRequest(request);
    if (choices === null) return "the request states no ALLOWED choices to validate against";
    const r = parseActionAnswer(content, choices);
    return r.ok ? null : r.error;
  },
};

/**
 * The JSON schema of the answer, for a model whose output a grammar constrains (the local model):
 * a concrete action string over the known ids, or a message to allowed contacts.
 */
export const HOUSEHOLD_LLM_JSON_SCHEMAS: Readonly<Record<string, (request: Pick<LlmRequestedPayload, "messages">) => object>> = {
  [ACTION_OUTPUT]: (request) => {
    const c = choicesOfRequest(request) ?? { actions: ["Wait"], ids: [], openable: [], objects: [], contacts: [], messagesLeft: 0 };
    const may = (n: string) => c.actions.includes(n);
    const concrete = [
      ...(may("Navigate") ? c.ids.map((id) => `Navigate[${id}]`) : []),
      ...(may("Open") ? c.openable.map((id) => `Open[${id}]`) : []),
      ...(may("Close") ? c.openable.map((id) => `Close[${id}]`) : []),
      ...(may("Pick") ? c.objects.map((id) => `Pick[${id}]`) : []),
      ...(may("Wait") ? ["Wait[]"] : []),
      ...(may("Done") ? ["Done[]"] : []),
    ];
    const thought = { type: "string", maxLength: 200 };
    const variants: object[] = [{ type: "object", properties: { thought, action: { enum: concrete.length === 0 ? ["Wait[]"] : concrete } }, required: ["thought", "action"] }];
    if (may("Place") && c.objects.length > 0) variants.push({ type: "object", properties: { thought, action: { const: "Place" }, object: { enum: c.objects }, relation: { enum: ["on", "within"] }, furniture: { enum: c.ids } }, required: ["thought", "action", "object", "relation", "furniture"] });
    if (may("Communicate") && c.messagesLeft > 0 && c.contacts.length > 0)
      variants.push({ type: "object", properties: { thought, action: { const: "Communicate" }, text: { type: "string", maxLength: 300 }, to: { type: "array", items: { enum: [...c.contacts, "all"] }, minItems: 1, maxItems: c.contacts.length } }, required: ["thought", "action", "text", "to"] });
    return variants.length === 1 ? variants[0]! : { oneOf: variants };
  },
};
