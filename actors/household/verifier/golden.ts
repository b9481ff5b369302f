// The golden trajectory (digest §1.2, §8.6 step 8): the shortest functional plan in parallel turns,
// replayed under the full rules (not the abstraction) with the state hash after every turn. The
// replay is a check of its own: an action that fails, or a functional goal that does not hold at
// the end, means the abstraction lost something the full house has.
import { hashOf } from "../../../events/canonical.ts";
import { holds, initialState, parseAction, resolveTurn } from "../rules.ts";
import type { CompiledTask, HouseholdTask } from "../task.ts";
import type { VerifierFailure } from "./findings.ts";
import type { Turn } from "./schedule.ts";

export interface GoldenTrajectory {
  readonly turns: readonly { readonly actions: Turn }[];
  /** sha256 of the canonical JSON of the house after each turn. */
  readonly state_hashes: readonly string[];
  /** sha256 of the canonical JSON of the task, the golden trajectory left out. */
  readonly spec_hash: string;
  readonly trajectory_hash: string;
}

/** The task as authored: what `spec_hash` covers. */
export function specOf(task: HouseholdTask): HouseholdTask {
  const { golden_trajectory: _golden, ...spec } = task;
  return spec;
}

export function goldenTrajectory(c: CompiledTask, turns: readonly Turn[]): GoldenTrajectory | (VerifierFailure & { readonly _tag: "GoldenDiverges" }) {
  let state = initialState(c);
  const stateHashes: string[] = [];
  for (const [t, turn] of turns.entries()) {
    const decisions = turn.map(({ agent, action }) => [agent, parseAction(action)] as const);
    const next = resolveTurn(c, state, decisions);
    const failed = next.resolutions.find(([, r]) => !r.ok);
    if (failed !== undefined) return { _tag: "GoldenDiverges", turn: t, agent: failed[0], action: turn.find((x) => x.agent === failed[0])!.action, reason: failed[1].reason };
    state = next.state;
    stateHashes.push(hashOf(state));
  }
  const unmet = c.functional.find((l) => !holds(c, state, l));
  if (unmet !== undefined) return { _tag: "GoldenDiverges", turn: turns.length, agent: "", action: "", reason: `the functional goal does not hold at the end` };
  const trajectory = turns.map((actions) => ({ actions }));
  return { turns: trajectory, state_hashes: stateHashes, spec_hash: hashOf(specOf(c.task)), trajectory_hash: hashOf(trajectory) };
}
