// Probe registries (reference/aura.md §4) and the allow/deny policy (§4.4).
// A probe is a request to the actor that owns the state: environment tools are answered by the
// environment, agent-state probes by the agent whose state is read (for beliefs: the believer).
// Disclosure costs of the 8 environment tools are the paper's (Table 8, TOOL_DISCLOSURE); the
// agent-state probes have none in the release, so we price them by what they reveal: private
// state 3 (availability, emotion and goal of a person), beliefs 2, plans 1, public lists 0–1.

import type { Delivered, Emitted } from "../actor.ts";
import type { ProbeRequestedPayload } from "./events.ts";

export type ToolOwner = "environment" | "agent";

export interface ToolSpec {
  readonly name: string;
  readonly owner: ToolOwner;
  /** Paper name (Table 8) or the agent-state registry's description. */
  readonly description: string;
  readonly args: readonly string[];
  readonly disclosure: number;
}

/** The paper's 8 environment tools (SHARED_TOOLS): factual grounding and the privacy slice. */
export const ENVIRONMENT_TOOLS: Readonly<Record<string, ToolSpec>> = {
  get_time: { name: "get_time", owner: "environment", description: "world.time: current time", args: [], disclosure: 0 },
  get_location: { name: "get_location", owner: "environment", description: "world.location: where the asker is and who is there", args: [], disclosure: 0 },
  get_nearby_agents: { name: "get_nearby_agents", owner: "environment", description: "world.nearby_agents: others at a location (default: the asker's)", args: ["location"], disclosure: 0 },
  get_all_agents: { name: "get_all_agents", owner: "environment", description: "world.agents_summary: every agent's location and action", args: [], disclosure: 1 },
  get_recent_memories: { name: "get_recent_memories", owner: "agent", description: "memory.recent: the asker's recent memories", args: [], disclosure: 2 },
  get_recent_events: { name: "get_recent_events", owner: "environment", description: "world.events_recent: the town's recent events", args: [], disclosure: 1 },
  get_agent_plan: { name: "get_agent_plan", owner: "agent", description: "agent.plan: an agent's plan (default: the asker's)", args: ["agent_name"], disclosure: 1 },
  get_location_info: { name: "get_location_info", owner: "environment", description: "world.location_info: who is at a named place", args: ["location"], disclosure: 0 },
};

/** The 5 agent-state probes of the implicit-intent benchmark (§4.3). */
export const AGENT_STATE_TOOLS: Readonly<Record<string, ToolSpec>> = {
  get_all_agents: ENVIRONMENT_TOOLS.get_all_agents!,
  get_nearby_agents: ENVIRONMENT_TOOLS.get_nearby_agents!,
  get_agent_plan: ENVIRONMENT_TOOLS.get_agent_plan!,
  get_agent_private_state: { name: "get_agent_private_state", owner: "agent", description: "agent.private_state: availability, emotional state and unspoken goal", args: ["agent_name"], disclosure: 3 },
  get_agent_belief_about: { name: "get_agent_belief_about", owner: "agent", description: "agent.belief_about: what a believer believes about a target's availability and emotion", args: ["believer", "target"], disclosure: 2 },
};

export const ALL_TOOLS: Readonly<Record<string, ToolSpec>> = { ...ENVIRONMENT_TOOLS, ...AGENT_STATE_TOOLS };

export const disclosureOf = (tool: string): number => ALL_TOOLS[tool]?.disclosure ?? 0;

/** Allow/deny globs (fnmatch-like, case-insensitive). Deny wins; an empty allow list allows all. */
export interface ProbePolicy {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

export const OPEN_POLICY: ProbePolicy = { allow: ["*"], deny: [] };

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (const ch of glob.toLowerCase()) {
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else re += ch.replace(/[.+^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

const compiled = new Map<string, RegExp>();
const matches = (glob: string, subject: string): boolean => {
  let re = compiled.get(glob);
  if (re === undefined) compiled.set(glob, (re = globToRegExp(glob)));
  return re.test(subject.toLowerCase());
};

/**
 * Whether a probe may read state. Patterns match the tool name (`get_agent_private_state`) or the
 * tool with its target (`get_agent_private_state:lin-wei`), so a policy can protect one person.
 * Returns null when allowed, else the reason (logged in `probe.denied`).
 */
export function policyDenies(policy: ProbePolicy, tool: string, targetSlug: string | null): string | null {
  const subjects = targetSlug === null ? [tool] : [tool, `${tool}:${targetSlug}`];
  for (const d of policy.deny) if (subjects.some((s) => matches(d, s))) return `denied by policy pattern '${d}'`;
  if (policy.allow.length === 0) return null;
  if (policy.allow.some((a) => subjects.some((s) => matches(a, s)))) return null;
  return "not in the policy's allow list";
}

/** What an actor's tool read returns: `ok` false when the state holds nothing to report. */
export interface ProbeReading {
  readonly ok: boolean;
  readonly result: unknown;
}

/**
 * The reply to a probe, shared by the scene's actors: refused with its reason (nothing is read),
 * else the reading with the tool's disclosure cost. Both spend one of the controller's probes and
 * are counted in the answering actor's hashed state.
 */
export function answerProbe(ctx: { answered: number; denied: number }, event: Delivered<ProbeRequestedPayload>, denied: string | null, read: () => ProbeReading): Emitted[] {
  const p = event.payload;
  const base = { call: p.call, queryId: p.queryId, target: p.target, tool: p.tool, budgetAfter: p.budgetBefore - 1 };
  if (denied !== null) {
    ctx.denied++;
    return [{ type: "probe.denied", to: event.from, payload: { ...base, reason: denied } }];
  }
  const { ok, result } = read();
  ctx.answered++;
  return [{ type: "probe.answered", to: event.from, payload: { ...base, disclosure: ok ? disclosureOf(p.tool) : 0, ok, result } }];
}
