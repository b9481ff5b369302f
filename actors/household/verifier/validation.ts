// Stage 1 of the verifier (digest §8.6): the loader's structural checks (ids and kinds, init-only
// predicates kept out of the goal, K agents, containers, mixed ⇒ goal_owners, an asymmetry
// mechanic, message limits ≥ 1, depth ≤ 3, a non-empty functional projection), as data.
import { compileTask, taskProblems, type CompiledTask, type HouseholdTask } from "../task.ts";
import type { FieldProblem } from "./findings.ts";

export type Validation = { readonly _tag: "Valid"; readonly compiled: CompiledTask } | { readonly _tag: "Invalid"; readonly problems: readonly FieldProblem[] };

/** Splits the loader's `<field>: <problem>` lines at the first ": ". */
const asFieldProblem = (line: string): FieldProblem => {
  const at = line.indexOf(": ");
  return at < 0 ? { field: "(task)", problem: line } : { field: line.slice(0, at), problem: line.slice(at + 2) };
};

export function validate(raw: unknown): Validation {
  const problems = taskProblems(raw);
  if (problems.length > 0) return { _tag: "Invalid", problems: problems.map(asFieldProblem) };
  return { _tag: "Valid", compiled: compileTask(raw as HouseholdTask) };
}
