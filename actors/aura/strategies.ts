// Conditions as strategies on the same registries and backbone (paper §5, reference/aura.md §7.5).
// Each strategy decides, one step at a time (Algorithm 1: call a tool or stop), which probe to
// make next given what the query has revealed so far; the controller enforces the budget ceiling.
// Every strategy reads the query through the same analyser (intent.ts `analyseQuery`); none has a
// keyword list of its own. What differs is the component the paper removes or replaces:
//   literal         no probes; answers from the observed scene only
//   no-intent       ReAct-style, the same Explore loop without an IntentFrame: step by step, it
//                   probes for the literal request only — the private fields the wording itself
//                   asks about (`asked`) for the people in scope, the plan when the wording asks
//                   for one, and a belief only when the analysis finds a second-order question (a
//                   belief question's literal request is the belief); budget 3, no memory
//   plan-and-solve  the same literal request, planned once (≤ 3 steps) before anything runs, then
//                   executed, then synthesised
//   aura-intent     IntentFrame → B(gap) ≤ maxSteps → probes only what the frame still misses,
//                   beliefs (never the target's private state) for second-order queries; its
//                   Memory stage retrieves (memory.ts) but does not reuse probe answers
//   aura-intent-reuse  aura-intent that also answers from probe answers read for earlier queries
//                   of the same scene moment (a named option, off in aura-intent)
//   fixed-private   no inferrer: the subject's private state (belief for second-order, up to 3
//                   people at the focus location when there is no subject); uses the benchmark's
//                   subject/target labels, as the released baseline does
//   oracle-intent   the gold tools of each query (labels), capped at 3
// The scene's public layer (who is where doing what) is observed by every condition, so public
// facts the wording asks for need no probe; the plan is held by its agent and does.
import type { FactualAnalysis } from "./factual.ts";
import type { QueryAnalysis } from "./intent.ts";
import type { PublicRow } from "./scene.ts";

export type StrategyKind =
  | "literal" | "no-intent" | "plan-and-solve" | "aura-intent" | "fixed-private" | "oracle-intent"
  // the environment registry (factual grounding, privacy slice)
  | "vanilla" | "static-context" | "react" | "reflexion" | "fixed-probe" | "aura-no-probe" | "aura-full" | "aura-gap-routed";

export interface StrategyConfig {
  readonly kind: StrategyKind;
  /** The budget ceiling (paper: 3 for implicit intent). */
  readonly maxSteps: number;
  /** The Memory stage (memory.ts): store and retrieve what was perceived, for the intent stage. */
  readonly memory: boolean;
  /** Answer later queries from probe answers read for earlier ones (aura-intent-reuse; off by default). */
  readonly reuse: boolean;
  /** Which inferrer backend (only `deterministic` offline). */
  readonly inferrer: string;
}

/** Benchmark labels, given only to the conditions that the released code also gives them to. */
export interface QueryLabels {
  readonly subcategory: string;
  readonly subject: string | null;
  readonly target: string | null;
  readonly gold: readonly string[];
}

export interface PlannedCall {
  readonly tool: string;
  /** Display name of the agent whose state is read (believer for beliefs), or null. */
  readonly target: string | null;
  readonly args: Readonly<Record<string, string>>;
  readonly field: string | null;
}

export const callKey = (c: { tool: string; target: string | null; args: Readonly<Record<string, string>> }): string =>
  `${c.tool}|${c.target ?? ""}|${Object.entries(c.args).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(",")}`;

export const privateCall = (name: string): PlannedCall => ({ tool: "get_agent_private_state", target: name, args: { agent_name: name }, field: null });
export const beliefCall = (believer: string, target: string): PlannedCall => ({ tool: "get_agent_belief_about", target: believer, args: { believer, target }, field: target });
export const planCall = (name: string): PlannedCall => ({ tool: "get_agent_plan", target: name, args: { agent_name: name }, field: "plan" });
export const nearbyCall = (location: string): PlannedCall => ({ tool: "get_nearby_agents", target: null, args: { location }, field: location });
export const allAgentsCall: PlannedCall = { tool: "get_all_agents", target: null, args: {}, field: null };

export interface StepView {
  readonly text: string;
  readonly analysis: QueryAnalysis;
  readonly labels: QueryLabels | null;
  readonly publicState: Readonly<Record<string, PublicRow>>;
  readonly focus: string;
  /** Scope members in this query's (seeded) visiting order. */
  readonly order: readonly string[];
  /** Keys of calls already answered in this query or (with reuse) earlier. */
  readonly known: ReadonlySet<string>;
  /** Keys already tried in this query (answered or denied). */
  readonly tried: ReadonlySet<string>;
}

/**
 * The literal request's probes (NoIntent, Plan-and-Solve): what the wording asks that the observed
 * scene does not show. A second-order question asks for the belief; otherwise the private fields
 * the wording names (`asked`) for each person in scope (in the query's seeded order), and the plan
 * of the person named when the wording asks for a plan.
 */
export function literalRequest(v: StepView): PlannedCall[] {
  const a = v.analysis;
  if (a.secondOrder !== null) return [beliefCall(a.secondOrder.believer, a.secondOrder.target)];
  const out: PlannedCall[] = [];
  if (a.asked.length > 0) for (const name of v.order) out.push(privateCall(name));
  if (a.literal.includes("plan") && a.scope.kind === "person") out.push(planCall(a.scope.agents[0]!));
  return out;
}

/** The calls a strategy would still make, in order; the controller takes the first untried one. */
export function candidates(kind: StrategyKind, v: StepView): PlannedCall[] {
  const a = v.analysis;
  switch (kind) {
    case "literal":
    default:
      return [];
    case "aura-intent": {
      if (a.secondOrder !== null) return [beliefCall(a.secondOrder.believer, a.secondOrder.target)].filter((c) => !v.known.has(callKey(c)));
      const out: PlannedCall[] = [];
      if (a.hidden.length > 0) for (const name of v.order) out.push(privateCall(name));
      if (a.wantsPlan && a.scope.kind === "person") out.push(planCall(a.scope.agents[0]!));
      return out.filter((c) => !v.known.has(callKey(c)));
    }
    case "no-intent":
      return literalRequest(v).filter((c) => !v.known.has(callKey(c)));
    case "plan-and-solve":
      return literalRequest(v).slice(0, 3);
    case "fixed-private": {
      const l = v.labels;
      if (l !== null && l.subcategory === "second_order" && l.subject !== null && l.target !== null) return [beliefCall(l.subject, l.target)];
      if (l?.subject != null) return [privateCall(l.subject)];
      const roster = Object.keys(v.publicState).sort();
      const atFocus = roster.filter((n) => v.publicState[n]!.location === v.focus);
      return (atFocus.length > 0 ? atFocus : roster).slice(0, 3).map(privateCall);
    }
    case "oracle-intent": {
      const l = v.labels;
      if (l === null) return [];
      const out: PlannedCall[] = [];
      for (const tool of l.gold) {
        if (tool === "get_agent_belief_about" && l.subject !== null && l.target !== null) out.push(beliefCall(l.subject, l.target));
        else if (tool === "get_agent_private_state") for (const n of l.subject !== null ? [l.subject] : v.order) out.push(privateCall(n));
        else if (tool === "get_agent_plan" && l.subject !== null) out.push(planCall(l.subject));
        else if (tool === "get_nearby_agents") out.push(nearbyCall(a.location ?? v.focus));
        else if (tool === "get_all_agents") out.push(allAgentsCall);
      }
      const seen = new Set<string>();
      return out.filter((c) => !seen.has(callKey(c)) && (seen.add(callKey(c)), true)).slice(0, 3);
    }
  }
}

/** Strategies that plan once and then execute (the list is fixed at the query's start). */
export const plansOnce = (kind: StrategyKind): boolean =>
  kind === "plan-and-solve" || kind === "fixed-private" || kind === "oracle-intent" || kind === "fixed-probe" || kind === "aura-gap-routed";

export const usesFrame = (kind: StrategyKind): boolean => kind === "aura-intent" || kind === "aura-gap-routed" || kind === "aura-no-probe";

/**
 * Which private fields a condition's answer states from a private-state reading: what its need
 * covers — the frame's hidden fields (AURA), the wording's asked fields (NoIntent, Plan-and-Solve)
 * — or, for the label-driven baselines, everything read (null), as their released synthesis does.
 */
export function statedFields(kind: StrategyKind, a: QueryAnalysis): readonly string[] | null {
  if (usesFrame(kind)) return a.hidden;
  if (kind === "no-intent" || kind === "plan-and-solve") return a.asked;
  return null;
}

// ---- The environment registry (8 tools) -------------------------------------------------------

/** Registry order of the 8 environment tools (the release's SHARED_TOOLS order). */
export const ENV_ORDER = ["get_time", "get_location", "get_nearby_agents", "get_all_agents", "get_recent_memories", "get_recent_events", "get_agent_plan", "get_location_info"] as const;

export interface EnvStepView {
  readonly analysis: FactualAnalysis;
  readonly asker: string;
  /** How many calls this query has made (Reflexion's second round starts after the first). */
  readonly made: number;
}

export function envCall(tool: string, asker: string, location: string | null = null): PlannedCall {
  const agentOwned = tool === "get_recent_memories" || tool === "get_agent_plan";
  const args: Record<string, string> = { asker };
  if (location !== null) args.location = location;
  if (tool === "get_agent_plan") args.agent_name = asker;
  return { tool, target: agentOwned ? asker : null, args, field: location };
}

/**
 * Deterministic shapes of the RQ2 baselines on the environment registry:
 *   vanilla, static-context, aura-no-probe  no probes (static-context and AURA see the asker's
 *                                            place, time and company in the observed scene)
 *   react            Thought/Action on the literal question: the tools whose description matches
 *                    it, without arguments; with no match it "looks around" (location, events)
 *   reflexion        react, then one reflection round that gathers more context (events, memories)
 *                    when the first round used at most one tool
 *   plan-and-solve   plans at least 3 steps (matched tools, then generic context tools in registry
 *                    order), at most 5, without arguments
 *   fixed-probe      all 8 tools (location_info at the asker's place)
 *   aura-full        the simulator's Algorithm-1 planner without an IntentFrame (B=2): novel context
 *                    first (location activities, everyone), never time/location/nearby/memory
 *   aura-gap-routed  IntentFrame → B(g) ≤ maxSteps → the first B recommended tools, with arguments
 */
export function envCandidates(kind: StrategyKind, v: EnvStepView): PlannedCall[] {
  const matched = v.analysis.tools.map((x) => envCall(x.tool, v.asker, x.location));
  const bare = v.analysis.tools.map((x) => envCall(x.tool, v.asker));
  switch (kind) {
    case "aura-gap-routed":
      return matched;
    case "react":
      return bare.length > 0 ? bare : [envCall("get_location", v.asker), envCall("get_recent_events", v.asker)];
    case "reflexion": {
      const first = bare.length > 0 ? bare : [envCall("get_location", v.asker), envCall("get_recent_events", v.asker)];
      return first.length <= 1 ? [...first, envCall("get_recent_events", v.asker), envCall("get_recent_memories", v.asker)] : first;
    }
    case "plan-and-solve": {
      const plan = [...bare];
      for (const tool of ["get_location", "get_all_agents", "get_recent_events", "get_agent_plan"]) if (plan.length < 3 && !plan.some((c) => c.tool === tool)) plan.push(envCall(tool, v.asker));
      return plan.slice(0, 5);
    }
    case "fixed-probe":
      return ENV_ORDER.map((tool) => envCall(tool, v.asker));
    case "aura-full":
      return [envCall("get_location_info", v.asker), envCall("get_all_agents", v.asker), envCall("get_recent_events", v.asker)];
    default:
      return [];
  }
}
