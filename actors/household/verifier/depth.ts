// Stage 5 of the verifier (digest §8.6, §2.2, App. K): the K-depth and inflated K goals.
// - Depth is the maximum nesting over non-trivial K nodes (a depth-1 K whose agent is barred from
//   none of its fact's rooms is trivial; a nested K never is) and must equal the target.
// - A K goal is inflated when its outermost agent can observe the fact itself: then the goal asks
//   for no theory of mind the agent could not get by looking.
import { conjuncts, leavesOf, show } from "../pddl.ts";
import { canObserve, type CompiledTask } from "../task.ts";
import type { VerifierFailure } from "./findings.ts";

export type DepthCheck =
  | { readonly _tag: "DepthOk"; readonly depth: number; readonly trivial: readonly string[] }
  | (VerifierFailure & { readonly _tag: "DepthMismatch" });

export function checkDepth(c: CompiledTask, target: number): DepthCheck {
  const trivial = c.kNodes.filter((n) => n.trivial).map((n) => `(K ${n.agent} ${n.fact})`);
  return c.depth === target ? { _tag: "DepthOk", depth: c.depth, trivial } : { _tag: "DepthMismatch", computed: c.depth, target };
}

export function inflatedK(c: CompiledTask): (VerifierFailure & { readonly _tag: "InflatedK" })[] {
  return conjuncts(c.goal).flatMap((k) => (k.kind === "K" && leavesOf(k).every((l) => canObserve(c.task, c.mechanics, k.agent, l)) ? [{ _tag: "InflatedK" as const, node: show(k), agent: k.agent }] : []));
}
