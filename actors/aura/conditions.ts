// The conditions of aura-scene, by name, apart from world.ts so that the command line lists them in
// --help (eval, ask) without loading the world's actors.
import type { StrategyKind } from "./strategies.ts";

export interface SceneCondition {
  readonly description: string;
  readonly kind: StrategyKind;
  /** The Memory stage: retrieval (memory.ts) feeding the intent stage. */
  readonly memory: boolean;
  /** Answer from probe answers read for earlier queries (a named option; only aura-intent-reuse). */
  readonly reuse?: boolean;
  /** A fixed budget ceiling instead of the configured maxSteps. */
  readonly steps?: number;
}

/** The implicit-intent conditions (paper Table 2/3, reference/aura.md §7.5). */
export const SCENE_CONDITIONS: Readonly<Record<string, SceneCondition>> = {
  literal: { kind: "literal", memory: false, description: "no probes; answers the literal question from the observed scene" },
  "no-intent": { kind: "no-intent", memory: false, description: "ReAct-style, the same analyser and Explore loop without an IntentFrame: probes the literal request only (asked private fields, a plan, a belief for second-order), budget 3" },
  "plan-and-solve": { kind: "plan-and-solve", memory: false, description: "plans the literal request once from the same analysis (≤3 steps; environment registry: 3–5 tools without arguments), executes, synthesises" },
  "aura-intent": { kind: "aura-intent", memory: true, description: "IntentFrame → B(gap) ≤ maxSteps → probe only what is missing (beliefs for second-order); Memory retrieves (0.3·recency + 0.4·importance + 0.3·relevance) for the intent stage, no answer reuse" },
  "aura-intent-reuse": { kind: "aura-intent", memory: true, reuse: true, description: "named option: aura-intent that also answers from probe answers read for earlier queries of the scene moment" },
  "aura-intent-nomemory": { kind: "aura-intent", memory: false, description: "ablation: aura-intent without the Memory stage (no retrieval: the LLM intent prompt's memories are (none)); offline it probes as aura-intent" },
  "fixed-private": { kind: "fixed-private", memory: false, description: "always the subject's private state (belief for second-order; ≤3 at the focus place without a subject), using the benchmark's labels" },
  "oracle-intent": { kind: "oracle-intent", memory: false, description: "the gold tools of each query (labels), capped at 3" },
  // The environment registry (factual grounding, privacy slice; reference/aura.md §7.5).
  vanilla: { kind: "vanilla", memory: false, description: "no context, no probes" },
  "static-context": { kind: "static-context", memory: false, description: "the asker's place, time and company in view; no probes" },
  react: { kind: "react", memory: false, steps: 5, description: "text ReAct: tools matching the literal question, no arguments (≤5)" },
  reflexion: { kind: "reflexion", memory: false, steps: 5, description: "ReAct plus a reflection round that gathers more context" },
  "fixed-probe": { kind: "fixed-probe", memory: false, steps: 8, description: "all 8 environment tools, always" },
  "aura-no-probe": { kind: "aura-no-probe", memory: false, description: "AURA with probing off (IntentFrame logged, budget 0)" },
  "aura-full": { kind: "aura-full", memory: false, steps: 2, description: "the simulator's Algorithm-1 planner without an IntentFrame, B=2" },
  "aura-gap-routed": { kind: "aura-gap-routed", memory: false, description: "IntentFrame → B(gap) ≤ maxSteps → the first B recommended tools" },
};

/** Conditions that run on the implicit-intent (agent-state) registry and on the environment registry. */
export const IMPLICIT_CONDITIONS = ["literal", "no-intent", "plan-and-solve", "aura-intent", "aura-intent-reuse", "aura-intent-nomemory", "fixed-private", "oracle-intent"] as const;
export const FACTUAL_CONDITIONS = ["vanilla", "static-context", "react", "reflexion", "plan-and-solve", "fixed-probe", "aura-no-probe", "aura-full", "aura-gap-routed"] as const;
