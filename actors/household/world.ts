// `household`: EnactToM's functional theory of mind in a symbolic house (reference/enacttom.md §8).
// One tick is one turn: every agent decides (tick.started → household.decided), then the house
// resolves the turn in ascending agent order (household.resolve → resolved, messages, latches,
// observations, and at the end household.ended). After the end the remaining ticks are empty.
//
// Config: {"task": <task id | generated id | inline task>, "mode": "standard" | "baseline"}; a task
// file given as the whole config is taken as {"task": <it>}; "history": n, the turns of transcript
// the LLM agent's prompt carries (default 8). The condition is the agents' policy;
// condition `llm` has the agents act on a model (role `agent`, config {"llm": {"agent": <model>}},
// set by --llm/--model), falling back turn by turn to the competent policy.
import type { ActorDefinition, PhaseStep, WorldDefinition } from "../actor.ts";
import { InputRejected } from "../../events/inputRejected.ts";
import { agentActorId, agentLogic, HOUSE_ID, newLlmState, type AgentContext, type AgentInput } from "./agent.ts";
import { DEFAULT_HISTORY_TURNS, MAX_HISTORY_TURNS } from "./llm.ts";
import { houseLogic, type HouseContext } from "./environment.ts";
import { householdEvents } from "./events.ts";
import { DEFAULT_TASK, EXAMPLE_TASKS } from "./examples.ts";
import { generatedOptionsOf, generateTask } from "./generator.ts";
import type { PublicLayout } from "./knowledge.ts";
import type { Policy } from "./policy.ts";
import { initialState } from "./rules.ts";
import { checkTask, compileTask, DEFAULT_MAX_TURNS, type HouseholdTask } from "./task.ts";

export type HouseholdMode = "standard" | "baseline";

/** A condition: a scripted policy, or the LLM agent (its fallback: competent). */
export type HouseholdCondition = Policy | "llm";

export interface HouseholdConfig {
  readonly task: HouseholdTask;
  readonly mode: HouseholdMode;
  readonly policy: HouseholdCondition;
  /** The models of the LLM roles (`agent`), when --llm gave them. */
  readonly llm?: { readonly agent: string };
  /** How many of its last turns the LLM agent's prompt carries (default DEFAULT_HISTORY_TURNS; 0: none). Only when given: the header of other logs is as before. */
  readonly history?: number;
  /**
   * The paper's Find tools (FindObjectTool, FindReceptacleTool, FindRoomTool; digest §4.3), offered
   * to the LLM agent. Off by default: the LLM agent's prompt already carries its knowledge base,
   * and standard-mode prompts stay as before. Only when given: the header of other logs is as before.
   */
  readonly findTools?: boolean;
}

const CONDITIONS: Readonly<Record<HouseholdCondition, { description: string }>> = {
  competent: { description: "scripted agents that plan from their own knowledge and tell teammates what they need, within budgets" },
  "first-order": { description: "scripted agents that share what they know with a teammate who can act on it, but do not model what partners know about others: no relaying, no (K agent φ) reports" },
  naive: { description: "scripted agents that pursue only the goals of their own secrets and send no messages" },
  llm: { description: "model-driven agents (role agent, --llm): each turn the model picks one action from the agent's own knowledge; an invalid or failed answer falls back to the competent policy for that turn" },
};
const CONFIG_FIELDS = ["task", "mode", "policy", "llm", "history", "findTools"];

/** The scripted policy an agent runs under a condition (the LLM agent's fallback is the competent one). */
export const scriptedPolicyOf = (condition: HouseholdCondition): Policy => (condition === "llm" ? "competent" : condition);
export { DEFAULT_MAX_TURNS };

/** A task named by id: an example of data/household/, or a generated one (`gen-coop-d2-standard-s7`). */
function taskNamed(id: string): unknown {
  const example = EXAMPLE_TASKS[id];
  if (example !== undefined) return example;
  const options = generatedOptionsOf(id);
  if (options !== null) return generateTask(options);
  throw new InputRejected("config", `task: unknown task id '${id}' (examples: ${Object.keys(EXAMPLE_TASKS).join(", ")}; generated: gen-<coop|mixed>-d<1-3>-<standard|hard>-s<seed>; or give the task itself, inline or as the --config file)`);
}

export function resolveHouseholdConfig(raw: unknown): HouseholdConfig {
  const given = (raw ?? {}) as Record<string, unknown>;
  if (typeof given !== "object" || Array.isArray(given)) throw new InputRejected("config", `household config: expected an object`);
  // A task file given as the whole config.
  const fields: Record<string, unknown> = "task_id" in given ? { task: given } : given;
  const unknown = Object.keys(fields).filter((k) => !CONFIG_FIELDS.includes(k));
  if (unknown.length > 0) throw new InputRejected("config", `${unknown[0]}: unknown household config field (the config has: ${CONFIG_FIELDS.join(", ")}; or give a task file as the config)`);
  const taskField = fields.task ?? DEFAULT_TASK;
  const task = checkTask(typeof taskField === "string" ? taskNamed(taskField) : taskField, typeof taskField === "string" ? `task ${taskField}` : "task");
  const mode = fields.mode ?? "standard";
  if (mode !== "standard" && mode !== "baseline") throw new InputRejected("config", `mode: expected "standard" or "baseline", got ${JSON.stringify(mode)} (a task's hard split runs in standard mode)`);
  const policy = fields.policy ?? "competent";
  if (!(typeof policy === "string" && policy in CONDITIONS)) throw new InputRejected("config", `policy: expected one of ${Object.keys(CONDITIONS).join(", ")}`);
  const llm = fields.llm;
  if (llm !== undefined && !(typeof llm === "object" && llm !== null && typeof (llm as { agent?: unknown }).agent === "string" && Object.keys(llm).length === 1)) throw new InputRejected("config", `llm: expected {"agent": "<model>"}`);
  const history = fields.history;
  if (history !== undefined && !(typeof history === "number" && Number.isInteger(history) && history >= 0 && history <= MAX_HISTORY_TURNS)) throw new InputRejected("config", `history: expected a whole number of turns from 0 to ${MAX_HISTORY_TURNS} (the LLM agent's transcript in its prompt; default ${DEFAULT_HISTORY_TURNS}), got ${JSON.stringify(history)}`);
  const findTools = fields.findTools;
  if (findTools !== undefined && typeof findTools !== "boolean") throw new InputRejected("config", `findTools: expected true or false (offer the LLM agent the paper's Find tools), got ${JSON.stringify(findTools)}`);
  return { task, mode, policy: policy as HouseholdCondition, ...(llm === undefined ? {} : { llm: { agent: (llm as { agent: string }).agent } }), ...(history === undefined ? {} : { history }), ...(findTools === undefined ? {} : { findTools }) };
}

export function layoutOf(task: HouseholdTask): PublicLayout {
  const furniture = Object.fromEntries(Object.entries(task.scene.furniture).map(([id, f]) => [id, { room: f.room, kind: f.kind, articulated: f.articulated }]));
  return { rooms: task.scene.rooms, furniture, agents: Object.keys(task.agents) };
}

export const maxTurnsOf = (config: HouseholdConfig): number => config.task.max_turns ?? DEFAULT_MAX_TURNS;
/** The turns of transcript the LLM agent's prompt carries. */
export const historyTurnsOf = (config: HouseholdConfig): number => config.history ?? DEFAULT_HISTORY_TURNS;

export const householdWorld: WorldDefinition<HouseholdConfig> = {
  name: "household",
  events: householdEvents,
  description: "EnactToM households: functional theory of mind under room bans, message budgets and hidden mechanics (config `task`, `mode`; `llm.agent` and `history` for the LLM agent); conditions are the agents' policies",
  defaultConfig: resolveHouseholdConfig(undefined),
  conditions: CONDITIONS,
  defaultCondition: "competent",
  conditionConfigKey: "policy",
  resolveConfig: resolveHouseholdConfig,
  applyCondition(config, condition) {
    if (!(condition in CONDITIONS)) throw new InputRejected("condition", `unknown condition '${condition}' for household (known: ${Object.keys(CONDITIONS).join(", ")})`);
    return { ...config, policy: condition as HouseholdCondition };
  },
  defaultTicks: maxTurnsOf,
  lengthFixedBy: (n, parentTicks) =>
    parentTicks === undefined
      ? `a household episode runs its task's turn limit (max_turns), one tick a turn; set max_turns in the task instead (here: ${n})`
      : `a household fork runs to its parent's turn limit (${parentTicks} turns); set max_turns in the task the parent runs`,

  actors(config): ActorDefinition[] {
    const compiled = compileTask(config.task);
    const layout = layoutOf(config.task);
    const baseline = config.mode === "baseline";
    // Baseline mode (digest §4.1): every teammate's secrets to every agent (shown as "agent_k
    // knows: …"), and the ReadAgentTrajectory tool.
    const agents = compiled.agentIds.map((self) => {
      const actions = config.task.agent_actions?.[self];
      const llm = config.policy === "llm" ? { llm: { model: config.llm?.agent ?? null, maxTurns: maxTurnsOf(config), historyTurns: historyTurnsOf(config) } } : {};
      const revealed = baseline ? { revealed: Object.fromEntries(compiled.agentIds.filter((a) => a !== self).map((a) => [a, [...(config.task.agent_secrets[a] ?? [])]])) } : {};
      const tools = baseline || config.findTools === true ? { tools: { read: baseline, find: config.findTools === true } } : {};
      const input: AgentInput = { self, room: config.task.agents[self]!.room, layout, secrets: config.task.agent_secrets[self] ?? [], policy: scriptedPolicyOf(config.policy), ...(actions === undefined ? {} : { actions }), ...llm, ...revealed, ...tools };
      return { id: agentActorId(self), logic: agentLogic, input };
    });
    return [...agents, { id: HOUSE_ID, logic: houseLogic, input: { compiled, state: initialState(compiled), baseline, maxTurns: maxTurnsOf(config) } }];
  },

  tickPlan(config, tick): PhaseStep[] {
    const agents = Object.keys(config.task.agents).map(agentActorId);
    return [
      { type: "tick.started", to: agents, payload: { tick, clock: {} } },
      { type: "household.resolve", to: HOUSE_ID, payload: { turn: tick } },
    ];
  },

  // The static parts (task, layout) are the config's: only what changes is hashed.
  hashView(actorId, context) {
    if (actorId === HOUSE_ID) {
      const c = context as HouseContext;
      return { ended: c.ended, latched: c.latched, messagesSent: c.messagesSent, pending: c.pending, state: c.state, probes: c.probes, ...(c.trajectories === undefined ? {} : { trajectories: c.trajectories }) };
    }
    const c = context as AgentContext;
    return c.llm === undefined ? { kb: c.kb, policy: c.policy } : { kb: c.kb, llm: c.llm, policy: c.policy };
  },

  // A fork under the other condition: the agents switch policy from the fork on (onto or off the
  // model: the LLM agent's state is made or dropped; a fork into `llm` starts its transcript at the
  // fork); the house is unchanged.
  reconfigure(actorId, context, config) {
    if (!actorId.startsWith("agent/")) return context;
    const { llm, ...rest } = context as AgentContext;
    const policy = scriptedPolicyOf(config.policy);
    if (config.policy !== "llm") return { ...rest, policy };
    return { ...rest, policy, llm: llm ?? newLlmState(config.llm?.agent ?? null, maxTurnsOf(config), historyTurnsOf(config)) };
  },
};
