// Literal theory-of-mind probes (digest §5.3, §8.7), asked after the episode: one per K node,
// nested ones included. A depth-1 probe asks its agent whether the fact holds; a deeper one asks it
// to predict what the next agent of the chain would report. Scoring copies EnactToM's: a leaf
// passes when the answer names the expected fact, says it holds, and it does hold in the final
// world; a parent passes when its answer equals the child agent's actual answer (not the world);
// only roots count, and an attempt's literal pass is "every root passes" (the digest's stated choice).
//
// The scripted agents answer from their knowledge state: the fact as they believe it, and for a
// chain, whether they know the partner knows it — from what that partner told them (a sender knows
// what it says), what they told the partner (the acknowledgement the verifier's epistemic search
// also assumes), or a nested statement (`(K agent φ)`) someone passed on.
import type { Kb } from "./knowledge.ts";
import { literalsIn, parseSexp, show, type Literal } from "./pddl.ts";
import type { CompiledTask, KNodeInfo } from "./task.ts";

export interface ProbeQuestion {
  readonly probeId: string;
  readonly depth: number;
  /** The chain after the asked agent: whose report it predicts (depth 2), and so on. */
  readonly subjects: readonly string[];
  readonly fact: string;
}

/** An answer as EnactToM parses it: the predicate (or "unknown"), its arguments, and whether it holds (null: unknown). */
export interface ProbeAnswer {
  readonly probeId: string;
  readonly predicate: string;
  readonly args: readonly string[];
  readonly holds: boolean | null;
}

export interface ProbeScore {
  readonly probeId: string;
  readonly agent: string;
  readonly depth: number;
  readonly root: boolean;
  /** world: a leaf checked against the final world; child: a parent checked against the child agent's answer. */
  readonly basis: "world" | "child";
  readonly passed: boolean;
}

const UNKNOWN = (probeId: string): ProbeAnswer => ({ probeId, predicate: "unknown", args: [], holds: null });

/** The child of each K node: the node of its inner K (the next agent of the chain, one level shallower, the same fact). */
export function probeChildren(nodes: readonly KNodeInfo[]): Map<string, string> {
  const children = new Map<string, string>();
  nodes.forEach((n, i) => {
    if (n.depth < 2) return;
    const child = nodes.slice(i + 1).find((m) => m.agent === n.subjects[0] && m.depth === n.depth - 1 && m.fact === n.fact);
    if (child !== undefined) children.set(n.id, child.id);
  });
  return children;
}

/** Each asked agent's questions, in probe order. */
export function probeQuestions(c: CompiledTask): Map<string, ProbeQuestion[]> {
  const byAgent = new Map<string, ProbeQuestion[]>();
  for (const n of c.kNodes) byAgent.set(n.agent, [...(byAgent.get(n.agent) ?? []), { probeId: n.id, depth: n.depth, subjects: n.subjects, fact: n.fact }]);
  return byAgent;
}

/** A probe's fact "(pred a b)" as a literal, or null when it is not a flat one. */
export const factOf = (fact: string): Literal | null => {
  try {
    const s = parseSexp(fact);
    if (typeof s === "string" || s.some((x) => typeof x !== "string")) return null;
    return { pred: s[0] as string, args: s.slice(1) as string[] };
  } catch {
    return null;
  }
};

/** `(K b (K c φ))` for the chain [b, c] and φ. */
export const nestedKey = (chain: readonly string[], fact: string): string => chain.reduceRight((inner, agent) => `(K ${agent} ${inner})`, fact);

/**
 * Whether this agent knows that chain[0] knows (that chain[1] knows …) the fact, by the verifier's
 * epistemic rules (verifier/epistemic.ts): what a partner said it knows, what this agent told it
 * (acknowledged), or a nested statement someone passed on. A goal told or heard counts as its fact,
 * as in the epistemic search (every fact inside a K must hold at the end).
 */
export function knowsNested(kb: Kb, chain: readonly string[], fact: string): boolean {
  const [first, ...rest] = chain;
  if (first === undefined) return false;
  const inner = nestedKey(rest, fact);
  // Baseline mode: a teammate's revealed secrets ("agent_k knows: …") and what its trajectory
  // (ReadAgentTrajectory) shows it knows count too.
  const said = [...(kb.heardFrom[first] ?? []), ...(kb.told[first] ?? []), ...(kb.baseline === undefined ? [] : [...revealedKnows(kb.baseline.revealed[first] ?? []), ...(kb.baseline.read[first]?.knows ?? [])])];
  return said.includes(inner) || (rest.length === 0 && said.includes(`(goal ${fact})`)) || Object.values(kb.heardFrom).some((s) => s.includes(nestedKey(chain, fact)));
}

/** The statements a teammate's secrets say it knows, a goal as its fact. */
const revealedKnows = (secrets: readonly string[]): string[] => secrets.flatMap((secret) => literalsIn(secret).map((x) => show(x))).map((st) => (st.startsWith("(goal ") ? st.slice("(goal ".length, -1) : st));

/**
 * A scripted agent's answer. Depth 1: the fact as it believes it (`believed`: true, false, or null
 * when it does not know). Deeper: that the next agent would report the fact holding, when it knows
 * that agent knows it; otherwise unknown.
 */
export function answerProbe(kb: Kb, q: ProbeQuestion, believed: (l: Literal) => boolean | null): ProbeAnswer {
  const l = factOf(q.fact);
  if (l === null) return UNKNOWN(q.probeId);
  if (q.depth === 1) {
    // What it saw may be stale: a fact it knows a partner knows (it handed the goal over, or was
    // told so) it expects to hold; so does a goal it has no belief about. The world then decides the leaf.
    const partnerKnows = Object.keys({ ...kb.heardFrom, ...kb.told, ...kb.baseline?.revealed, ...kb.baseline?.read }).some((p) => knowsNested(kb, [p], q.fact));
    const b = partnerKnows ? true : (believed(l) ?? ([...kb.goals, ...kb.own].includes(q.fact) ? true : null));
    return b === null ? UNKNOWN(q.probeId) : { probeId: q.probeId, predicate: l.pred, args: l.args, holds: b };
  }
  return knowsNested(kb, q.subjects, q.fact) ? { probeId: q.probeId, predicate: l.pred, args: l.args, holds: true } : UNKNOWN(q.probeId);
}

const sameAnswer = (a: ProbeAnswer, b: ProbeAnswer): boolean => a.predicate === b.predicate && a.holds === b.holds && a.args.length === b.args.length && a.args.every((x, i) => x === b.args[i]);

/** Scores every probe from the answers given, and `trueAtEnd` for leaves. */
export function scoreProbes(nodes: readonly KNodeInfo[], answers: ReadonlyMap<string, ProbeAnswer>, trueAtEnd: (l: Literal) => boolean): ProbeScore[] {
  const children = probeChildren(nodes);
  const childIds = new Set(children.values());
  return nodes.map((n) => {
    const answer = answers.get(n.id) ?? UNKNOWN(n.id);
    const child = children.get(n.id);
    const root = !childIds.has(n.id);
    // Two "unknown" answers do not make a pass (a departure: the digest leaves it open, and agents
    // that know nothing would otherwise pass every parent probe).
    if (child !== undefined) return { probeId: n.id, agent: n.agent, depth: n.depth, root, basis: "child", passed: answer.holds !== null && sameAnswer(answer, answers.get(child) ?? UNKNOWN(child)) };
    const l = factOf(n.fact);
    const passed = l !== null && answer.predicate === l.pred && answer.holds === true && sameAnswer(answer, { probeId: n.id, predicate: l.pred, args: l.args, holds: true }) && trueAtEnd(l);
    return { probeId: n.id, agent: n.agent, depth: n.depth, root, basis: "world", passed };
  });
}

/** The episode's literal score: passed roots over roots (1 with no probe), and whether every root passed. */
export function literalOf(scores: readonly ProbeScore[]): { readonly roots: number; readonly passedRoots: number; readonly score: number; readonly pass: boolean } {
  const roots = scores.filter((s) => s.root);
  const passedRoots = roots.filter((s) => s.passed).length;
  return { roots: roots.length, passedRoots, score: roots.length === 0 ? 1 : passedRoots / roots.length, pass: passedRoots === roots.length };
}


