// Communication and agent necessity (digest §8.6 step 6), deterministic stand-ins for two of the
// judge's criteria:
// - communication: with every message budget at 0 the epistemic search must fail (the release
//   prompt's "remove all Communicate actions" self-test);
// - agents: freezing any one agent (no actions, no messages; it still observes and receives) must
//   break the physical search or the epistemic one — an agent whose part nobody misses is decoration.
import type { Literal } from "../pddl.ts";
import { searchKnowledge, type EpistemicModel } from "./epistemic.ts";
import type { VerifierFailure } from "./findings.ts";
import { searchPlans } from "./physical.ts";
import type { Abstraction } from "./relevance.ts";

export type CommunicationNecessity = { readonly _tag: "CommunicationNeeded"; readonly nodes: number } | (VerifierFailure & { readonly _tag: "SolvableWithoutMessages" });

export function communicationNecessity(model: EpistemicModel): CommunicationNecessity {
  const silent = searchKnowledge(model, { budget: 0 });
  return { _tag: silent._tag === "Reached" ? "SolvableWithoutMessages" : "CommunicationNeeded", nodes: silent.nodes };
}

export type AgentRole = "physical" | "epistemic";

export interface AgentNecessity {
  readonly agent: string;
  /** What freezing the agent breaks (empty: it is not needed). */
  readonly breaks: readonly AgentRole[];
  readonly nodes: number;
}

export function agentNecessity(abs: Abstraction, goal: readonly Literal[], model: EpistemicModel, agent: string, cap: number): AgentNecessity {
  const breaks: AgentRole[] = [];
  const physical = searchPlans(abs, [goal], { actors: abs.agents.filter((a) => a !== agent), cap });
  if (physical.plans[0] === null) breaks.push("physical");
  const epistemic = searchKnowledge(model, { frozen: [agent] });
  if (epistemic._tag === "Unreachable") breaks.push("epistemic");
  return { agent, breaks, nodes: physical.nodes + epistemic.nodes };
}
