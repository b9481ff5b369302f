// Stage 4 of the verifier (digest §8.6, §2.3 semantics): breadth-first search over who knows what.
// A state is one bit per (fact, agent) and one per nested K node, plus each agent's remaining
// message budget. Facts are the K goals' leaves, which an agent knows for free once it is barred
// from none of their rooms (EnactToM's static observe rule), and the information a physical goal
// needs (the decisive id of an information-dependent literal), which only its holders start with.
// Moves, in sorted order:
// - inform s→r of a fact s knows, along an allowed edge, spending one of s's messages; it also sets
//   K(s, K(r, fact)) when the goal has that node (the sender's acknowledgement);
// - nested inform for K(outer, K(inner, ψ)): only `inner` may send it, once it knows ψ.
// The goal: every K node's knowledge, and each needed piece of information known by some agent
// who can act on it. Knowledge never gates a physical action here, so a task is solvable exactly
// when the physical search and this one both succeed (joint.ts cross-checks that on tiny tasks).
import { show, type Formula, type Literal } from "../pddl.ts";
import { canObserve, type CompiledTask } from "../task.ts";

export interface Fact {
  readonly key: string;
  readonly literals: readonly Literal[];
  /** Agents that know it from the start (secrets) or by observing it. */
  readonly knowers: readonly string[];
}

export interface KNode {
  readonly index: number;
  readonly agent: string;
  readonly text: string;
  /** The fact it is about (a leaf K), or the K node inside it. */
  readonly fact: number | null;
  readonly inner: number | null;
}

/** A piece of information a physical goal needs: held by `holders`, useful to any of `achievers`. */
export interface NeededInformation {
  readonly literal: Literal;
  readonly holders: readonly string[];
  readonly achievers: readonly string[];
}

export interface EpistemicModel {
  readonly agents: readonly string[];
  readonly facts: readonly Fact[];
  readonly nodes: readonly KNode[];
  readonly needs: readonly { readonly fact: number; readonly achievers: readonly string[] }[];
  readonly budgets: Readonly<Record<string, number>>;
  readonly edges: Readonly<Record<string, readonly string[]>>;
}

export type Message =
  | { readonly kind: "inform"; readonly from: string; readonly to: string; readonly fact: string }
  | { readonly kind: "nested"; readonly from: string; readonly to: string; readonly node: string };

export type EpistemicSearch = { readonly _tag: "Reached"; readonly messages: readonly Message[]; readonly nodes: number } | { readonly _tag: "Unreachable"; readonly nodes: number };

export function epistemicModel(c: CompiledTask, needs: readonly NeededInformation[]): EpistemicModel {
  const agents = [...c.agentIds];
  const facts: Fact[] = [];
  const nodes: KNode[] = [];
  const factOf = (f: Formula): number => {
    const key = show(f);
    const at = facts.findIndex((x) => x.key === key);
    if (at >= 0) return at;
    const literals = f.kind === "lit" ? [f.lit] : f.kind === "and" ? f.parts.flatMap((p) => (p.kind === "lit" ? [p.lit] : [])) : [];
    facts.push({ key, literals, knowers: agents.filter((a) => literals.every((l) => canObserve(c.task, c.mechanics, a, l))) });
    return facts.length - 1;
  };
  const nodeOf = (f: Formula & { kind: "K" }): number => {
    const inner = f.inner.kind === "K" ? nodeOf(f.inner) : null;
    const index = nodes.length;
    nodes.push({ index, agent: f.agent, text: show(f), fact: inner === null ? factOf(f.inner) : null, inner });
    return index;
  };
  const walk = (f: Formula): void => {
    if (f.kind === "and") f.parts.forEach(walk);
    else if (f.kind === "K") nodeOf(f);
  };
  walk(c.goal);
  const needFacts = needs.map((n) => {
    facts.push({ key: `(needed ${show(n.literal)})`, literals: [n.literal], knowers: [...n.holders] });
    return { fact: facts.length - 1, achievers: n.achievers };
  });
  const unlimited = facts.length * agents.length + nodes.length;
  const edges: Record<string, string[]> = {};
  const budgets: Record<string, number> = {};
  for (const a of agents) {
    const allowed = c.mechanics.allowedTargets[a];
    const actions = c.mechanics.actions[a];
    edges[a] = actions !== undefined && !actions.includes("Communicate") ? [] : agents.filter((r) => r !== a && (allowed === undefined || allowed.includes(r)));
    budgets[a] = Math.min(c.mechanics.msgLimit[a] ?? unlimited, unlimited);
  }
  return { agents, facts, nodes, needs: needFacts, budgets, edges };
}

export interface EpistemicOptions {
  /** Agents that send nothing (they still observe and receive). */
  readonly frozen?: readonly string[];
  /** Every budget replaced by this (0: no messages at all). */
  readonly budget?: number;
}

/** The knowledge state space of a model: its bits, the moves in expansion order, and the goal. */
export interface KnowledgeSpace {
  readonly bits: number;
  readonly factBit: (fact: number, agent: string) => number;
  readonly budgets: readonly number[];
  readonly moves: readonly { readonly message: Message; readonly sender: number; readonly needs: number; readonly sets: readonly number[] }[];
  readonly goalMet: (known: readonly boolean[]) => boolean;
  readonly encode: (known: readonly boolean[], budgets: readonly number[]) => number;
  readonly decode: (key: number) => [boolean[], number[]];
}

type Move = KnowledgeSpace["moves"][number];

/** A message move from (known, budgets): the knowledge and budgets after it, or null when it cannot be sent or tells nothing new. */
export function afterMove(mv: Move, known: readonly boolean[], budgets: readonly number[]): [boolean[], number[]] | null {
  if (!known[mv.needs] || budgets[mv.sender]! === 0 || mv.sets.every((b) => known[b])) return null;
  const after = [...known];
  for (const b of mv.sets) after[b] = true;
  const spent = [...budgets];
  spent[mv.sender]!--;
  return [after, spent];
}

export function knowledgeSpace(model: EpistemicModel, options: EpistemicOptions = {}): KnowledgeSpace {
  const { agents, facts, nodes } = model;
  const A = agents.length;
  const ai = new Map(agents.map((a, i) => [a, i]));
  const factBit = (f: number, a: string) => f * A + ai.get(a)!;
  const nodeBit = (n: number) => facts.length * A + n;
  const bits = facts.length * A + nodes.length;
  const budgets = agents.map((a) => options.budget ?? model.budgets[a]!);
  const radix = budgets.map((b) => b + 1);
  // The bit that says node n holds: its agent knows the fact, or (nested) the node's own bit.
  const predBit = (n: KNode) => (n.fact !== null ? factBit(n.fact, n.agent) : nodeBit(n.index));
  const frozen = new Set(options.frozen ?? []);
  type Move = { label: string; message: Message; sender: number; needs: number; sets: number[] };
  const moves: Move[] = [];
  facts.forEach((fact, f) => {
    for (const s of agents)
      for (const r of model.edges[s]!) {
        // The acknowledgement: having told r, s knows that r knows.
        const acks = nodes.filter((n) => n.agent === s && n.inner !== null && nodes[n.inner]!.agent === r && nodes[n.inner]!.fact === f).map((n) => nodeBit(n.index));
        moves.push({ label: `inform ${s} ${r} ${fact.key}`, message: { kind: "inform", from: s, to: r, fact: fact.key }, sender: ai.get(s)!, needs: factBit(f, s), sets: [factBit(f, r), ...acks] });
      }
  });
  for (const n of nodes) {
    if (n.inner === null) continue;
    const m = nodes[n.inner]!;
    if (!model.edges[m.agent]!.includes(n.agent)) continue;
    moves.push({ label: `nested ${m.agent} ${n.agent} ${n.text}`, message: { kind: "nested", from: m.agent, to: n.agent, node: n.text }, sender: ai.get(m.agent)!, needs: predBit(m), sets: [nodeBit(n.index)] });
  }
  return {
    bits,
    factBit,
    budgets,
    moves: moves.filter((mv) => !frozen.has(agents[mv.sender]!)).sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)),
    goalMet: (k) => nodes.every((n) => k[predBit(n)]) && model.needs.every((nd) => nd.achievers.some((a) => k[factBit(nd.fact, a)])),
    // Key: the budgets in mixed radix, then the bits below them.
    encode(k, budget) {
      let key = 0;
      for (let i = 0; i < A; i++) key = key * radix[i]! + budget[i]!;
      for (let i = 0; i < bits; i++) key = key * 2 + (k[i] ? 1 : 0);
      return key;
    },
    decode(key) {
      const k = new Array<boolean>(bits);
      for (let i = bits - 1; i >= 0; i--) {
        k[i] = key % 2 === 1;
        key = Math.floor(key / 2);
      }
      const budget = new Array<number>(A);
      for (let i = A - 1; i >= 0; i--) {
        budget[i] = key % radix[i]!;
        key = Math.floor(key / radix[i]!);
      }
      return [k, budget];
    },
  };
}

export function searchKnowledge(model: EpistemicModel, options: EpistemicOptions = {}): EpistemicSearch {
  const space = knowledgeSpace(model, options);
  const known = new Array<boolean>(space.bits).fill(false);
  model.facts.forEach((fact, f) => fact.knowers.forEach((a) => (known[space.factBit(f, a)] = true)));
  if (space.goalMet(known)) return { _tag: "Reached", messages: [], nodes: 1 };
  const start = space.encode(known, space.budgets);
  const parent = new Map<number, number>([[start, -1]]);
  const via = new Map<number, Message>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const key = queue[head]!;
    const [k, budget] = space.decode(key);
    for (const mv of space.moves) {
      const moved = afterMove(mv, k, budget);
      if (moved === null) continue;
      const [after, spent] = moved;
      const next = space.encode(after, spent);
      if (parent.has(next)) continue;
      parent.set(next, key);
      via.set(next, mv.message);
      queue.push(next);
      if (space.goalMet(after)) {
        const messages: Message[] = [];
        for (let x = next; parent.get(x)! !== -1; x = parent.get(x)!) messages.push(via.get(x)!);
        return { _tag: "Reached", messages: messages.reverse(), nodes: parent.size };
      }
    }
  }
  return { _tag: "Unreachable", nodes: parent.size };
}
