// What the task verifier (digest §8.6) can find wrong with a task, one tagged variant per reason,
// each carrying the fields a reader (or a generator deciding to retry) needs. No strings to parse:
// a caller switches on `_tag`.

/** A field the loader rejected, as `<field>: <problem>` split in two. */
export interface FieldProblem {
  readonly field: string;
  readonly problem: string;
}

export type VerifierFailure =
  | { readonly _tag: "Invalid"; readonly problems: readonly FieldProblem[] }
  /** The physical search ran out of states: no sequence of actions reaches the goal. */
  | { readonly _tag: "PhysicallyUnsolvable"; readonly goal: "strip_k" | "functional"; readonly nodes: number }
  /** More than the node cap of physical states: the task is too large to prove. */
  | { readonly _tag: "TooLarge"; readonly nodes: number; readonly cap: number }
  /** No message plan within the budgets and the communication graph makes the K goals (and the needed information) known. */
  | { readonly _tag: "EpistemicallyUnsolvable"; readonly nodes: number }
  | { readonly _tag: "DepthMismatch"; readonly computed: number; readonly target: number }
  /** The outermost agent of a K goal can observe its fact directly (App. K): the K adds no theory of mind. */
  | { readonly _tag: "InflatedK"; readonly node: string; readonly agent: string }
  /** With every message budget at 0 the K goals (and the needed information) are still reached. */
  | { readonly _tag: "SolvableWithoutMessages"; readonly nodes: number }
  /** Frozen (no actions, no messages), the agent is missed by neither search and holds no needed information. */
  | { readonly _tag: "AgentNotNeeded"; readonly agent: string }
  /** No functional literal needs an id that only agents who cannot achieve it hold. */
  | { readonly _tag: "NoInformationDependence" }
  /** Every information-dependent literal's decisive id can be guessed: fewer than 3 look-alikes, or the public text names it. */
  | { readonly _tag: "Guessable"; readonly literal: string; readonly decisive: string; readonly candidates: readonly string[]; readonly leakedInText: boolean }
  /** A mixed task's private objective that no sequence of actions reaches (it would be no dilemma). */
  | { readonly _tag: "PrivateObjectiveUnreachable"; readonly agent: string; readonly nodes: number }
  /** With the subgoal-tension check: a private objective that neither conflicts with the shared goal nor competes for its objects and furniture. */
  | { readonly _tag: "NoSubgoalTension"; readonly agent: string; readonly objective: string; readonly jointPlanLength: number | null }
  /** The turn limit is below the turn estimate's minimum. */
  | { readonly _tag: "TurnLimitTooSmall"; readonly maxTurns: number; readonly tMin: number }
  /** The golden trajectory, replayed under the full rules, does not reach the functional goal (the abstraction lost something). */
  | { readonly _tag: "GoldenDiverges"; readonly turn: number; readonly agent: string; readonly action: string; readonly reason: string };

export type FailureTag = VerifierFailure["_tag"];
