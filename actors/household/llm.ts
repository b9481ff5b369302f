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
import { GOAL_PREDICATES, parseSexp } from "./pddl.ts";
import { factOf, type ProbeAnswer, type ProbeQuestion } from "./probes.ts";
import type { TrajectoryStepPayload } from "./events.ts";
import { kindOfId } from "./find.ts";
import { actionName, FIND_TOOLS, parseAction, READ_TRAJECTORY, type Action, type RoomView } from "./rules.ts";
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
  /** Baseline mode: the teammates whose trajectory it may read (ReadAgentTrajectory). Absent in standard mode. */
  readonly teammates?: readonly string[];
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
  const name = actionName(action);
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
    case "find":
      break;
    case "read":
      if (!(choices.teammates ?? []).includes(action.target)) return { ok: false, error: `'${action.target}' is not a teammate whose trajectory you may read (you may read: ${(choices.teammates ?? []).join(", ") || "no one"})` };
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
export function choicesOf(kb: Kb, layout: PublicLayout, self: string, actions: readonly string[] | undefined, tools?: { readonly read: boolean; readonly find: boolean }): ActionChoices {
  const objects = Object.keys(kb.loc).sort();
  const contacts = (kb.targets ?? layout.agents).filter((a) => a !== self);
  const messagesLeft = kb.msgLimit === null ? 99 : Math.max(0, kb.msgLimit - kb.sent);
  const furniture = Object.keys(layout.furniture).sort();
  const openable = furniture.filter((f) => layout.furniture[f]!.articulated);
  // The tools come after the task's actions, so a standard-mode request without them is as before.
  const toolNames = [...(tools?.find === true ? Object.values(FIND_TOOLS) : []), ...(tools?.read === true ? [READ_TRAJECTORY] : [])];
  return { actions: [...(actions ?? ACTION_NAMES), ...toolNames], ids: [...layout.rooms, ...furniture, ...objects], openable, objects, contacts, messagesLeft, ...(tools?.read === true ? { teammates: layout.agents.filter((a) => a !== self) } : {}) };
}

/** The tools' lines of the system prompt (only the tools it has: without them, the prompt is as before). */
function toolLines(actions: readonly string[]): string {
  const lines: string[] = [];
  if (actions.includes(FIND_TOOLS.object)) lines.push(`- ${FIND_TOOLS.object}[query] / ${FIND_TOOLS.receptacle}[query] / ${FIND_TOOLS.room}[query]: look up objects, furniture or rooms matching the query in what you know (costs the turn)`);
  if (actions.includes(READ_TRAJECTORY)) lines.push(`- ${READ_TRAJECTORY}[agent_j]: read a teammate's past actions, results and the messages it received (costs the turn)`);
  return lines.length === 0 ? "" : `\nTools:\n${lines.join("\n")}`;
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
  // Baseline mode: every teammate's secrets (the paper's "agent_k knows: …") and the trajectories read.
  const b = kb.baseline;
  if (b !== undefined) {
    for (const [a, secrets] of Object.entries(b.revealed).sort(([x], [y]) => x.localeCompare(y))) for (const secret of secrets) lines.push(`${a} knows: ${secret.startsWith("(") ? `${render(secret, self)} ${secret}` : secret}`);
    for (const [a, r] of Object.entries(b.read).sort(([x], [y]) => x.localeCompare(y))) lines.push(trajectoryText(a, r.upTo, r.steps));
  }
  return lines.join("\n");
}

/** How many of a teammate's last turns a read trajectory shows in the prompt. */
const TRAJECTORY_TURNS_SHOWN = 8;

/** A teammate's trajectory as the prompt shows it (its last turns read, oldest first). */
export function trajectoryText(agent: string, upTo: number, steps: readonly TrajectoryStepPayload[]): string {
  const shown = steps.slice(-TRAJECTORY_TURNS_SHOWN);
  const head = `${agent}'s trajectory (read up to turn ${upTo + 1}${shown.length < steps.length ? `; its last ${shown.length} of ${steps.length} turns` : ""}):`;
  return [head, ...shown.map((st) => `  Turn ${st.turn + 1}: ${st.action} — ${resultText(st)}; in ${st.room}${st.holding === null ? "" : `, holding ${st.holding}`}.${st.heard.map((h) => ` ${h.from} said: ${JSON.stringify(h.text)}`).join("")}`)].join("\n");
}

export { DEFAULT_HISTORY_TURNS, MAX_HISTORY_TURNS } from "./historyLimits.ts";

/**
 * One turn of an LLM agent's transcript (the paper's Thought / Action / Observation, digest §4.5):
 * what it thought (null: its answer was not used), the action taken, its result, the visual
 * summary (what it saw, where it ended) and the messages it received at the turn's end.
 */
export interface TurnRecord {
  readonly turn: number;
  readonly thought: string | null;
  /** True when the model's answer could not be used and the fallback policy chose the action. */
  readonly fallback: boolean;
  readonly action: string;
  readonly result: string;
  readonly saw: readonly string[];
  readonly room: string;
  readonly heard: readonly { readonly from: string; readonly text: string }[];
}

/** The visual summary of an observation (digest §4.5: at most 5 objects, 3 other agents, the room it ended in). */
export function sawOf(rooms: readonly RoomView[], self: string): string[] {
  const objects = rooms.flatMap((v) => Object.keys(v.objects).sort().map((o) => `${o} (${placeText(v.objects[o]!)})`)).slice(0, 5);
  const agents = rooms.flatMap((v) => Object.keys(v.agents).sort().filter((a) => a !== self).map((a) => `${a} in ${v.room}`)).slice(0, 3);
  return [...objects, ...agents];
}

/** An action's result as the paper's observation says it: "Successful execution!", the mechanic or message text, or the failure. */
export const resultText = (outcome: { readonly ok: boolean; readonly reason: string }): string => (outcome.ok ? (outcome.reason === "ok" || outcome.reason === "" ? "Successful execution!" : outcome.reason) : `Failed: ${outcome.reason}`);

/** The transcript as the prompt carries it: one block per turn, oldest first. */
export function historyText(history: readonly TurnRecord[]): string {
  return history
    .map((h) => {
      const lines = [`Turn ${h.turn + 1}:`];
      if (h.thought !== null && h.thought !== "") lines.push(`Thought: ${h.thought}`);
      lines.push(`Action: ${h.action}${h.fallback ? " (chosen for you: your answer could not be used)" : ""}`);
      lines.push(`Observation: ${h.result}${h.saw.length === 0 ? "" : ` Saw: ${h.saw.join("; ")}.`} You are in ${h.room}.`);
      for (const m of h.heard) lines.push(`${m.from} said: ${JSON.stringify(m.text)}`);
      return lines.join("\n");
    })
    .join("\n");
}

/** The [History] block (empty when there is none yet or the config asks for none). */
const historyBlock = (history: readonly TurnRecord[], turn: number): string[] =>
  history.length === 0 ? [] : ["[History]", history.length < turn ? `Your last ${history.length} turns (of ${turn}), oldest first:` : "Your turns so far, oldest first:", historyText(history)];

/**
 * The `agent` request of a turn (T 0, 256 tokens, JSON mode, output `household-action`): who it is,
 * what it knows, its last turns (the transcript, bounded), where it stands, its last action's
 * result, its budget and what it may do.
 */
export function actionRequest(model: string, kb: Kb, layout: PublicLayout, self: string, turn: number, maxTurns: number, choices: ActionChoices, history: readonly TurnRecord[] = []): LlmRequestedPayload {
  const user = [
    `You are ${self}. Turn ${turn + 1} of ${maxTurns}.`,
    "[Known Information]",
    knowledgeText(kb, layout, self),
    ...historyBlock(history, turn),
    "[Now]",
    `You are in ${kb.room}${kb.holding === null ? ", holding nothing" : `, holding ${kb.holding}`}.`,
    `Last action: ${kb.last === null ? "none" : `${kb.last.action}: ${kb.last.ok ? "Successful execution!" : `failed (${kb.last.reason})`}`}`,
    "[Important Constraints]",
    `Messages left: ${choices.messagesLeft === 99 ? "unlimited" : choices.messagesLeft}; you may message: ${choices.contacts.join(", ") || "no one"}.`,
    `Actions you may take: ${choices.actions.join(", ")}.`,
    `${ALLOWED_LINE}${JSON.stringify(choices)}`,
    "Return only the JSON object.",
  ].join("\n");
  const tools = toolLines(choices.actions);
  const system = tools === "" ? SYSTEM : SYSTEM.replace("\n\nReply with one JSON object", `${tools}\n\nReply with one JSON object`);
  return llmRequest(AGENT_ROLE, model, [{ role: "system", content: system }, { role: "user", content: user }], { json: true, maxTokens: 256, output: ACTION_OUTPUT, temperature: 0 }, null);
}

// ---- The literal probes on the model (digest §5.3, §8.7) ------------------------------------

/** The output schema name of a probe call's answers. */
export const PROBES_OUTPUT = "household-probes";

/** What a probe call's answers are checked against; the request states it on its `PROBES:` line. */
export interface ProbeSpec {
  /** The probe ids asked, in order: each answered exactly once. */
  readonly ids: readonly string[];
  /** The predicate vocabulary with each predicate's arity ("unknown" is always allowed). */
  readonly predicates: Readonly<Record<string, number>>;
  /** The entities the probes name (what a grammar lets `args` hold). */
  readonly entities: readonly string[];
}

const PROBES_LINE = "PROBES: ";
const UNKNOWN_PREDICATE = "unknown";

/** A probe's line, in the release's wording: depth 1 asks whether the fact holds; deeper, what the next agent would report. */
function probeLine(q: ProbeQuestion, self: string): string {
  const l = factOf(q.fact);
  const fact = render(q.fact, self);
  const entities = l === null ? "" : ` for ordered entities [${l.args.join(", ")}]`;
  return q.depth === 1 ? `${q.probeId}: Report whether "${fact}" holds${entities}.` : `${q.probeId}: Predict what ${q.subjects[0]} would report about "${fact}"${entities}.`;
}

const PROBE_INSTRUCTIONS = "The episode is over. Do not propose any more actions. Using only the episode context above, answer each probe below.";

/**
 * One probe call (digest §5.3: one per depth and agent, after the episode, with the agent's episode
 * context): the agent's knowledge and its last turns, as in its last action prompt, then the
 * release's probe text — the predicate vocabulary with signatures and one line per probe — and the
 * answer format. T 0, JSON mode, output `household-probes`.
 */
export function probeRequest(model: string, kb: Kb, layout: PublicLayout, self: string, turn: number, maxTurns: number, history: readonly TurnRecord[], questions: readonly ProbeQuestion[]): LlmRequestedPayload {
  const entities = [...new Set(questions.flatMap((q) => factOf(q.fact)?.args ?? []))];
  const spec: ProbeSpec = { ids: questions.map((q) => q.probeId), predicates: Object.fromEntries(Object.entries(GOAL_PREDICATES).map(([p, sig]) => [p, sig.length])), entities };
  const user = [
    `You are ${self}. The episode ended after turn ${turn + 1} of ${maxTurns}.`,
    "[Known Information]",
    knowledgeText(kb, layout, self),
    ...historyBlock(history, turn + 1),
    "[Now]",
    `You are in ${kb.room}${kb.holding === null ? ", holding nothing" : `, holding ${kb.holding}`}.`,
    "[Probes]",
    PROBE_INSTRUCTIONS,
    `Predicates: ${Object.entries(GOAL_PREDICATES).map(([p, sig]) => `${p}(${sig.join(", ")})`).join(", ")}.`,
    ...questions.map((q) => probeLine(q, self)),
    `Answer every probe with the predicate, its arguments in order, and whether it holds (true or false); if you do not know, answer predicate "${UNKNOWN_PREDICATE}", args [] and holds null.`,
    `Reply with one JSON object: {"answers": [{"probe_id": "<probe id>", "predicate": "<predicate>|${UNKNOWN_PREDICATE}", "args": [<entity ids>], "holds": true|false|null}, …]}, one answer per probe, in order.`,
    `${PROBES_LINE}${JSON.stringify(spec)}`,
    "Return only the JSON object.",
  ].join("\n");
  return llmRequest(AGENT_ROLE, model, [{ role: "system", content: SYSTEM }, { role: "user", content: user }], { json: true, maxTokens: 64 + 64 * questions.length, output: PROBES_OUTPUT, temperature: 0 }, null);
}

/** The spec a probe request states (its `PROBES:` line), or null. */
export function probeSpecOfRequest(request: Pick<LlmRequestedPayload, "messages">): ProbeSpec | null {
  for (const m of request.messages) {
    if (m.role !== "user") continue;
    const line = m.content.split("\n").find((l) => l.startsWith(PROBES_LINE));
    if (line === undefined) continue;
    try {
      const spec = JSON.parse(line.slice(PROBES_LINE.length)) as ProbeSpec;
      if (Array.isArray(spec.ids) && typeof spec.predicates === "object" && spec.predicates !== null && Array.isArray(spec.entities)) return spec;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Parses and validates a probe call's answers: one per asked probe, each `{probe_id, predicate,
 * args, holds}` (`probeId` is taken too) with a known predicate of the right arity, or "unknown".
 * An answer that says it does not know in one of the two fields is made unknown in both
 * (predicate "unknown", args [], holds null). Returns the answers in the asked order, or the problem.
 */
export function parseProbeAnswers(content: string, spec: ProbeSpec): { ok: true; answers: ProbeAnswer[] } | { ok: false; error: string } {
  const parsed = parseJsonObject(content);
  if (!parsed.ok) return parsed;
  const list = parsed.value.answers;
  if (!Array.isArray(list)) return { ok: false, error: `field 'answers' must be a list with one answer per probe (${spec.ids.join(", ")})` };
  const byId = new Map<string, ProbeAnswer>();
  for (const raw of list as unknown[]) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, error: "each answer must be an object {probe_id, predicate, args, holds}" };
    const a = raw as Record<string, unknown>;
    const id = a.probe_id ?? a.probeId;
    if (typeof id !== "string" || !spec.ids.includes(id)) return { ok: false, error: `unknown probe_id ${JSON.stringify(id)} (the probes: ${spec.ids.join(", ")})` };
    if (byId.has(id)) return { ok: false, error: `probe ${id} is answered twice` };
    const { predicate, args, holds } = a;
    if (typeof predicate !== "string" || (predicate !== UNKNOWN_PREDICATE && spec.predicates[predicate] === undefined)) return { ok: false, error: `probe ${id}: predicate must be one of ${[...Object.keys(spec.predicates), UNKNOWN_PREDICATE].join(", ")}` };
    if (holds !== true && holds !== false && holds !== null) return { ok: false, error: `probe ${id}: holds must be true, false or null` };
    if (predicate === UNKNOWN_PREDICATE || holds === null) {
      byId.set(id, { probeId: id, predicate: UNKNOWN_PREDICATE, args: [], holds: null });
      continue;
    }
    if (!Array.isArray(args) || !args.every((x) => typeof x === "string")) return { ok: false, error: `probe ${id}: args must be a list of entity ids` };
    if (args.length !== spec.predicates[predicate]) return { ok: false, error: `probe ${id}: ${predicate} takes ${spec.predicates[predicate]} argument(s), got ${args.length}` };
    byId.set(id, { probeId: id, predicate, args: args as string[], holds });
  }
  const missing = spec.ids.filter((id) => !byId.has(id));
  if (missing.length > 0) return { ok: false, error: `no answer for ${missing.join(", ")}` };
  return { ok: true, answers: spec.ids.map((id) => byId.get(id)!) };
}

/** Output schemas by name, for the gateway: null when the content is usable, else the reason. */
export const HOUSEHOLD_LLM_OUTPUTS: Readonly<Record<string, (content: string, request?: Pick<LlmRequestedPayload, "messages">) => string | null>> = {
  [ACTION_OUTPUT]: (content, request) => {
    const choices = request === undefined ? null : choicesOfRequest(request);
    if (choices === null) return "the request states no ALLOWED choices to validate against";
    const r = parseActionAnswer(content, choices);
    return r.ok ? null : r.error;
  },
  [PROBES_OUTPUT]: (content, request) => {
    const spec = request === undefined ? null : probeSpecOfRequest(request);
    if (spec === null) return "the request states no PROBES to validate against";
    const r = parseProbeAnswers(content, spec);
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
      // The tools, only when offered (baseline mode; config findTools): a grammar without them is as before.
      ...(may(READ_TRAJECTORY) ? (c.teammates ?? []).map((a) => `${READ_TRAJECTORY}[${a}]`) : []),
      ...(may(FIND_TOOLS.object) ? [...new Set(c.objects.map(kindOfId))].map((k) => `${FIND_TOOLS.object}[${k}]`) : []),
      ...(may(FIND_TOOLS.receptacle) ? [...new Set(c.ids.filter((id) => !c.objects.includes(id)).map(kindOfId))].map((k) => `${FIND_TOOLS.receptacle}[${k}]`) : []),
      ...(may(FIND_TOOLS.room) ? [...new Set(c.ids.filter((id) => !c.objects.includes(id)).map(kindOfId))].map((k) => `${FIND_TOOLS.room}[${k}]`) : []),
    ];
    const thought = { type: "string", maxLength: 200 };
    const variants: object[] = [{ type: "object", properties: { thought, action: { enum: concrete.length === 0 ? ["Wait[]"] : concrete } }, required: ["thought", "action"] }];
    if (may("Place") && c.objects.length > 0) variants.push({ type: "object", properties: { thought, action: { const: "Place" }, object: { enum: c.objects }, relation: { enum: ["on", "within"] }, furniture: { enum: c.ids } }, required: ["thought", "action", "object", "relation", "furniture"] });
    if (may("Communicate") && c.messagesLeft > 0 && c.contacts.length > 0)
      variants.push({ type: "object", properties: { thought, action: { const: "Communicate" }, text: { type: "string", maxLength: 300 }, to: { type: "array", items: { enum: [...c.contacts, "all"] }, minItems: 1, maxItems: c.contacts.length } }, required: ["thought", "action", "text", "to"] });
    return variants.length === 1 ? variants[0]! : { oneOf: variants };
  },
  // One answer per probe, in the asked order: its id, a predicate of the vocabulary or "unknown",
  // arguments among the probes' entities, and holds true, false or null.
  [PROBES_OUTPUT]: (request) => {
    const spec = probeSpecOfRequest(request) ?? { ids: [], predicates: {}, entities: [] };
    const answer = (id: string) => ({
      type: "object",
      properties: {
        probe_id: { const: id },
        predicate: { enum: [...Object.keys(spec.predicates), UNKNOWN_PREDICATE] },
        args: spec.entities.length === 0 ? { type: "array", maxItems: 0 } : { type: "array", items: { enum: spec.entities }, maxItems: Math.max(0, ...Object.values(spec.predicates)) },
        holds: { enum: [true, false, null] },
      },
      required: ["probe_id", "predicate", "args", "holds"],
    });
    return { type: "object", properties: { answers: { type: "array", prefixItems: spec.ids.map(answer), minItems: spec.ids.length, maxItems: spec.ids.length } }, required: ["answers"] };
  },
};
