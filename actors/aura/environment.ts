// The scene's environment: owns the public layer (who is where doing what), the clock and the
// public event feed, and answers the environment probes. The policy is checked here, before any
// state is read, so a denied probe never touches the scene.
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import { focusLocationOf, sceneTimeOf, type PublicRow, type Scene } from "./scene.ts";
import { ALL_TOOLS, answerProbe, policyDenies, type ProbePolicy, type ProbeReading } from "./tools.ts";
import type { SceneEntries } from "./events.ts";

export interface SceneEnvInput {
  readonly scene: Scene;
  readonly policy: ProbePolicy;
  /** Who is asking (a resident, for the factual tools' "my location"), or null for an outside user. */
  readonly asker: string | null;
  readonly events: readonly string[];
  /** Every place in the town (a town snapshot), else only the places people are at. */
  readonly places?: readonly string[] | null;
  /** The registry offered to the controller: other tools are refused (an LLM planner may invent some). */
  readonly tools?: readonly string[] | null;
}

export interface SceneEnvContext {
  readonly static: { readonly summary: string; readonly time: string | null; readonly focus: string; readonly asker: string | null; readonly locations: readonly string[] };
  readonly public: Readonly<Record<string, PublicRow>>;
  readonly events: readonly string[];
  readonly policy: ProbePolicy;
  readonly tools: readonly string[] | null;
  /** How many probes this actor answered and refused: part of its hashed state. */
  answered: number;
  denied: number;
}

export function initialSceneEnv(input: SceneEnvInput): SceneEnvContext {
  const locations = input.places ?? [...new Set(Object.values(input.scene.public_state).map((r) => r.location))].sort();
  return {
    static: { summary: input.scene.summary, time: sceneTimeOf(input.scene), focus: focusLocationOf(input.scene), asker: input.asker, locations },
    public: input.scene.public_state,
    events: input.events,
    policy: input.policy,
    tools: input.tools ?? null,
    answered: 0,
    denied: 0,
  };
}

const at = (ctx: SceneEnvContext, location: string) =>
  Object.entries(ctx.public)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .filter(([, r]) => r.location.toLowerCase() === location.toLowerCase())
    .map(([name, r]) => ({ action: r.action, name }));

/** Reads the public layer for one environment tool; only called after the policy allowed it. */
function read(ctx: SceneEnvContext, tool: string, args: Readonly<Record<string, string>>): ProbeReading {
  const asker = args.asker ?? ctx.static.asker;
  const here = asker === null ? ctx.static.focus : (ctx.public[asker]?.location ?? ctx.static.focus);
  switch (tool) {
    case "get_time":
      return ctx.static.time === null ? { ok: false, result: { error: "the scene states no time" } } : { ok: true, result: { hour: Number(ctx.static.time.slice(0, 2)), time: ctx.static.time } };
    case "get_location": {
      const action = asker === null ? null : (ctx.public[asker]?.action ?? null);
      return { ok: true, result: { action, agents_here: at(ctx, here), location: here } };
    }
    case "get_nearby_agents": {
      const location = args.location ?? here;
      return { ok: true, result: at(ctx, location).filter((a) => a.name !== asker).map((a) => ({ ...a, location })) };
    }
    case "get_all_agents":
      return { ok: true, result: Object.entries(ctx.public).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, r]) => ({ action: r.action, location: r.location, name })) };
    case "get_recent_events":
      return { ok: true, result: ctx.events.slice(-10) };
    case "get_location_info": {
      const location = args.location ?? here;
      const agents = at(ctx, location);
      return { ok: true, result: { agents, count: agents.length, known: ctx.static.locations.includes(location), location } };
    }
    default:
      return { ok: false, result: { error: `unknown tool '${tool}' for the environment` } };
  }
}

function onProbe(ctx: SceneEnvContext, event: RecordIn<SceneEntries, "probe.requested">): Emitted[] {
  const p = event.payload;
  // An unknown tool, a known one outside the offered registry, or an agent's tool naming nobody in
  // the scene (the controller sends agent tools to their agent) is refused before anything is read.
  const spec = ALL_TOOLS[p.tool];
  const denied =
    spec === undefined ? `unknown tool '${p.tool}'` :
    ctx.tools !== null && !ctx.tools.includes(p.tool) ? `tool '${p.tool}' is not in this registry` :
    spec.owner === "agent" ? `no agent '${p.target ?? ""}' in the scene answers '${p.tool}'` :
    policyDenies(ctx.policy, p.tool, null);
  return answerProbe(ctx, event, denied, () => read(ctx, p.tool, p.args));
}

const handlers: HandlerTable<SceneEnvContext, SceneEntries, "probe.requested"> = {
  "probe.requested": onProbe,
};

// One state ("serving") and no process: the record-handler logic, not a state machine.
export const sceneEnvLogic = recordActorLogic({
  context: (input: SceneEnvInput): SceneEnvContext => initialSceneEnv(input),
  handlers,
  valueOf: () => "serving",
});
