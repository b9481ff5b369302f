// The joint physical × epistemic search (digest §8.6 step 4), kept for tiny instances as a
// regression check of the decomposition the verifier relies on: a state is a physical state and a
// knowledge state together; an agent learns a K goal's leaf only while the leaf holds (and it is
// barred from none of its rooms), and either kind of move may come next. Knowledge never gates a
// physical action and knowledge is never lost, so this search succeeds exactly when the physical
// search (strip_K) and the epistemic search both do — which the property test checks.
import { holds } from "../rules.ts";
import type { Literal } from "../pddl.ts";
import { afterMove, knowledgeSpace, type EpistemicModel } from "./epistemic.ts";
import { physicalSpace } from "./physical.ts";
import type { Abstraction } from "./relevance.ts";

export type JointSearch = { readonly _tag: "Solvable" | "Unsolvable"; readonly nodes: number } | { readonly _tag: "TooLarge"; readonly nodes: number };

export function searchJoint(abs: Abstraction, goal: readonly Literal[], model: EpistemicModel, cap = 500_000): JointSearch {
  const c = abs.compiled;
  const physical = physicalSpace(abs);
  const knowledge = knowledgeSpace(model);
  const needed = new Set(model.needs.map((n) => n.fact));
  const leaves = model.facts.map((f, i) => ({ ...f, i })).filter((f) => !needed.has(f.i));
  const observe = (known: boolean[], s: ReturnType<typeof physical.decode>) => {
    for (const f of leaves) if (f.literals.every((l) => holds(c, s, l))) for (const a of f.knowers) known[knowledge.factBit(f.i, a)] = true;
  };
  const known0 = new Array<boolean>(knowledge.bits).fill(false);
  for (const n of model.needs) for (const a of model.facts[n.fact]!.knowers) known0[knowledge.factBit(n.fact, a)] = true;
  const s0 = physical.decode(physical.start);
  observe(known0, s0);
  const done = (s: ReturnType<typeof physical.decode>, known: readonly boolean[]) => goal.every((l) => holds(c, s, l)) && knowledge.goalMet(known);
  if (done(s0, known0)) return { _tag: "Solvable", nodes: 1 };
  const seen = new Set<string>();
  const queue: [number, number][] = [[physical.start, knowledge.encode(known0, knowledge.budgets)]];
  seen.add(`${queue[0]![0]}:${queue[0]![1]}`);
  for (let head = 0; head < queue.length; head++) {
    const [pk, kk] = queue[head]!;
    const [k, budget] = knowledge.decode(kk);
    const s = physical.decode(pk);
    let solved = false;
    const push = (nextP: number, state: typeof s, known: boolean[], spent: readonly number[]) => {
      const key = `${nextP}:${knowledge.encode(known, spent)}`;
      if (seen.has(key)) return false;
      seen.add(key);
      queue.push([nextP, knowledge.encode(known, spent)]);
      solved = done(state, known);
      return solved;
    };
    physical.expand(pk, (next, _step, state) => {
      const known = [...k];
      observe(known, state);
      return push(next, state, known, budget);
    });
    if (solved) return { _tag: "Solvable", nodes: seen.size };
    for (const mv of knowledge.moves) {
      const moved = afterMove(mv, k, budget);
      if (moved !== null && push(pk, s, ...moved)) return { _tag: "Solvable", nodes: seen.size };
    }
    if (seen.size > cap) return { _tag: "TooLarge", nodes: seen.size };
  }
  return { _tag: "Unsolvable", nodes: seen.size };
}
