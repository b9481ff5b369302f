// A scene agent: owns its private state (availability, emotion, unspoken goal, …), its beliefs
// about the others, its plan and its memories, and answers the probes that read them. The policy
// is checked before anything is read: a denied probe never sees the state.
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import { slugOf } from "./scene.ts";
import { ALL_TOOLS, answerProbe, policyDenies, type ProbePolicy, type ProbeReading } from "./tools.ts";
import type { SceneEntries } from "./events.ts";

export interface SceneAgentInput {
  readonly name: string;
  readonly private: Readonly<Record<string, string>>;
  readonly beliefs: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly plan: readonly string[];
  readonly memories: readonly string[];
  readonly policy: ProbePolicy;
}

export interface SceneAgentContext {
  readonly static: SceneAgentInput;
  answered: number;
  denied: number;
}

function read(ctx: SceneAgentContext, tool: string, args: Readonly<Record<string, string>>): ProbeReading {
  const s = ctx.static;
  switch (tool) {
    case "get_agent_private_state":
      return { ok: true, result: { agent: s.name, ...s.private } };
    case "get_agent_belief_about": {
      const target = args.target ?? "";
      const belief = Object.entries(s.beliefs).find(([t]) => t.toLowerCase() === target.toLowerCase());
      return belief === undefined
        ? { ok: false, result: { believer: s.name, belief: null, error: `'${s.name}' has no belief recorded about '${target}'`, target } }
        : { ok: true, result: { believer: s.name, belief: belief[1], target: belief[0] } };
    }
    case "get_agent_plan":
      return s.plan.length === 0 ? { ok: false, result: ["No plan available"] } : { ok: true, result: { agent_name: s.name, plan: s.plan } };
    case "get_recent_memories":
      return s.memories.length === 0 ? { ok: false, result: ["No memories available"] } : { ok: true, result: { memories: s.memories.slice(-10) } };
    default:
      return { ok: false, result: { error: `unknown tool '${tool}' for an agent` } };
  }
}

function onProbe(ctx: SceneAgentContext, event: RecordIn<SceneEntries, "probe.requested">): Emitted[] {
  const p = event.payload;
  const spec = ALL_TOOLS[p.tool];
  const denied = spec === undefined || spec.owner !== "agent" ? `tool '${p.tool}' is not answered by an agent` : policyDenies(ctx.static.policy, p.tool, slugOf(ctx.static.name));
  return answerProbe(ctx, event, denied, () => read(ctx, p.tool, p.args));
}

const handlers: HandlerTable<SceneAgentContext, SceneEntries, "probe.requested"> = {
  "probe.requested": onProbe,
};

// One state ("serving") and no process: the record-handler logic, not a state machine.
export const sceneAgentLogic = recordActorLogic({
  context: (input: SceneAgentInput): SceneAgentContext => ({ static: input, answered: 0, denied: 0 }),
  handlers,
  valueOf: () => "serving",
});
