// GraphNavWorld (paper §4, reference/envprobe.md §2.5): nodes n_0 … n_(n-1) joined by a path
// plus random chords, some edges locked with a key lying on a node; the goal is the last node.
import type { Draws } from "../../rng.ts";
import { answered, refused } from "./answers.ts";
import { pick3, sample } from "./generation.ts";
import { indexOfName } from "./grammar.ts";
import type { Answer, Field, Layout, MutationTargets, Observation, Outcome, Parsed, Sizes, WorldKind, WorldSpec } from "./types.ts";
import { HELD, inventoryValue, parseInventory } from "./values.ts";

export const nodeName = (i: number) => `n_${i}`;
export const edgeId = (a: number, b: number) => {
  const x = nodeName(a);
  const y = nodeName(b);
  return x < y ? `${x}__${y}` : `${y}__${x}`;
};
const GRAPH_KEYS = ["key_a", "key_b", "key_c", "key_d", "key_e"];

/** Field indices (the order fixed by generation). */
export const NAV = {
  edge: (_l: Layout, e: number) => 1 + e,
  key: (l: Layout, k: number) => 1 + l.edges.length + k,
  inventory: (l: Layout) => l.fields.length - 1,
};

/** Adjacency: neighbour node → edge index, per node. */
export function adjacency(layout: Layout): Map<number, number>[] {
  const adj = Array.from({ length: layout.size }, () => new Map<number, number>());
  layout.edges.forEach(([a, b], e) => {
    adj[a]!.set(b, e);
    adj[b]!.set(a, e);
  });
  return adj;
}

function generate(sizes: Sizes, draws: Draws): WorldSpec {
  const n = pick3(sizes.cardinality, [6, 12, 20]);
  const keys = GRAPH_KEYS.slice(0, Math.max(2, Math.floor(n / 4)));
  const edges: [number, number][] = [];
  const seen = new Set<string>();
  const add = (a: number, b: number) => {
    const id = edgeId(a, b);
    if (a === b || seen.has(id)) return;
    seen.add(id);
    edges.push(a < b ? [a, b] : [b, a]);
  };
  for (let i = 0; i + 1 < n; i++) add(i, i + 1);
  const rounds = pick3(sizes.density, [Math.floor(n / 4), Math.floor(n / 2), n]);
  for (let r = 0; r < rounds; r++) {
    const [a, b] = sample(draws, Array.from({ length: n }, (_, i) => i), 2);
    add(a!, b!);
  }
  const k = Math.min(pick3(sizes.density, [1, 3, 6]), edges.length, keys.length);
  const lockedEdges = sample(draws, Array.from({ length: edges.length }, (_, i) => i), k);
  const lockKeys = sample(draws, keys, k);
  const lockKey: (string | null)[] = edges.map(() => null);
  lockedEdges.forEach((e, i) => (lockKey[e] = lockKeys[i]!));
  const keyAt = keys.map(() => draws.int(0, n - 1));
  const fields: Field[] = [{ name: "agent", type: "spatial", weight: 0.5, probe: "check_current_node()" }];
  for (const [a, b] of edges) fields.push({ name: `edge:${edgeId(a, b)}`, type: "spatial", weight: 0.8, probe: `check_edge(${nodeName(a)},${nodeName(b)})` });
  for (const key of keys) fields.push({ name: `key:${key}`, type: "spatial", weight: 0.7, probe: `check_location(${key})` });
  fields.push({ name: "inventory", type: "procedural", weight: 0.5, probe: "check_inventory()" });
  const initial = [nodeName(0), ...lockKey.map((key) => (key === null ? "open" : "locked")), ...keyAt.map(nodeName), "-"];
  return { layout: { kind: "graphnav", fields, goal: nodeName(n - 1), size: n, objects: keys, edges }, hidden: { lockKey, deps: [] }, initial };
}

function act(spec: WorldSpec, values: string[], p: Parsed): Outcome {
  const l = spec.layout;
  const here = indexOfName("n_", values[0], l.size);
  if (p.verb === "move_to") {
    const to = indexOfName("n_", p.args[0], l.size);
    if (to < 0) return { valid: false, reason: "unknown_node" };
    const e = l.edges.findIndex(([a, b]) => (a === here && b === to) || (a === to && b === here));
    if (e < 0) return { valid: false, reason: "no_edge" };
    if (values[NAV.edge(l, e)] === "locked" && !parseInventory(values[NAV.inventory(l)]!).includes(spec.hidden.lockKey[e] ?? "")) return { valid: false, reason: "edge_locked" };
    values[0] = nodeName(to);
    return { valid: true, reason: "ok" };
  }
  if (p.verb === "collect_key") {
    const k = l.objects.indexOf(p.args[0] ?? "");
    if (k < 0) return { valid: false, reason: "unknown_key" };
    if (values[NAV.key(l, k)] !== values[0]) return { valid: false, reason: "not_here" };
    values[NAV.key(l, k)] = HELD;
    values[NAV.inventory(l)] = inventoryValue([...parseInventory(values[NAV.inventory(l)]!), l.objects[k]!]);
    return { valid: true, reason: "ok" };
  }
  return { valid: false, reason: p.verb === "activate_switch" ? "no_switch" : "unknown_action" };
}

const isSuccess = (layout: Layout, values: readonly string[]): boolean => values[0] === layout.goal;

function probe(spec: WorldSpec, values: readonly string[], p: Parsed): Answer {
  const l = spec.layout;
  const node = (s: string | undefined) => indexOfName("n_", s, l.size);
  const edgeOf = (a: number, b: number) => l.edges.findIndex(([x, y]) => (x === a && y === b) || (x === b && y === a));
  switch (p.verb) {
    case "check_current_node":
      return answered([[0, values[0]!]]);
    case "check_edge":
    case "check_required_key": {
      let e = -1;
      if (p.args.length >= 2) e = edgeOf(node(p.args[0]), node(p.args[1]));
      else if (p.args[0] !== undefined) e = l.edges.findIndex(([a, b]) => edgeId(a, b) === p.args[0]);
      if (e < 0) return answered([], { exists: "false" });
      const key = spec.hidden.lockKey[e] ?? "none";
      return p.verb === "check_edge" ? answered([[NAV.edge(l, e), values[NAV.edge(l, e)]!]], { exists: "true", required_key: key }) : answered([], { required_key: key });
    }
    case "check_node_locked": {
      const n = node(p.args[0]);
      if (n < 0) return refused("unknown_node");
      const pairs: [number, string][] = [];
      l.edges.forEach(([a, b], e) => (a === n || b === n) && pairs.push([NAV.edge(l, e), values[NAV.edge(l, e)]!]));
      return answered(pairs);
    }
    case "inspect_neighbors": {
      const n = node(p.args[0]);
      if (n < 0) return refused("unknown_node");
      return answered([], { neighbors: [...adjacency(l)[n]!.keys()].map(nodeName).sort().join(",") });
    }
    case "check_target_distance_hint":
      return answered([], { hops: String(hops(l, values, node(values[0]), l.size - 1)) });
    case "check_location": {
      const k = l.objects.indexOf(p.args[0] ?? "");
      return k < 0 ? refused("unknown_key") : answered([[NAV.key(l, k), values[NAV.key(l, k)]!]]);
    }
    case "check_inventory": {
      const pairs: [number, string][] = [[NAV.inventory(l), values[NAV.inventory(l)]!]];
      l.objects.forEach((_, k) => values[NAV.key(l, k)] === HELD && pairs.push([NAV.key(l, k), HELD]));
      return answered(pairs);
    }
    default:
      return refused("unknown_probe");
  }
}

/** BFS hops over open edges (the release's hint ignores the inventory); -1 if unreachable. */
function hops(l: Layout, values: readonly string[], from: number, to: number): number {
  const adj = adjacency(l);
  const dist = new Map<number, number>([[from, 0]]);
  const queue = [from];
  while (queue.length > 0) {
    const x = queue.shift()!;
    if (x === to) return dist.get(x)!;
    for (const [y, e] of adj[x]!) if (!dist.has(y) && values[NAV.edge(l, e)] === "open") (dist.set(y, dist.get(x)! + 1), queue.push(y));
  }
  return -1;
}

/** The current node and inventory, keys here or held; the neighbours (seen, sorted; partial noise hides the last). */
function observe(spec: WorldSpec, values: readonly string[], dropLast: boolean): Observation {
  const l = spec.layout;
  const pairs: [number, string][] = [];
  const here = indexOfName("n_", values[0], l.size);
  pairs.push([0, values[0]!], [NAV.inventory(l), values[NAV.inventory(l)]!]);
  l.objects.forEach((_, k) => {
    const at = values[NAV.key(l, k)];
    if (at === values[0] || at === HELD) pairs.push([NAV.key(l, k), at!]);
  });
  const seen = [...adjacency(l)[here]!.keys()].map(nodeName).sort();
  if (dropLast) seen.pop();
  return { pairs, seen };
}

/** Each edge draws a unit (a hit toggles a keyed edge), then each key a unit and a node (a hit moves a loose key), under either targets. */
function mutate(spec: WorldSpec, values: readonly string[], rate: number, _targets: MutationTargets, draws: Draws, set: (field: number, value: string) => void): void {
  const l = spec.layout;
  l.edges.forEach((_, e) => {
    const hit = draws.unit() < rate;
    if (hit && spec.hidden.lockKey[e] !== null) set(NAV.edge(l, e), values[NAV.edge(l, e)] === "open" ? "locked" : "open");
  });
  l.objects.forEach((_, k) => {
    const hit = draws.unit() < rate;
    const to = draws.int(0, l.size - 1);
    if (hit && values[NAV.key(l, k)] !== HELD) set(NAV.key(l, k), nodeName(to));
  });
}

/** BFS over (node, held-keys mask) from n_0 to the last node. */
function shortestPlan(spec: WorldSpec): number | null {
  const l = spec.layout;
  const adj = adjacency(l);
  const keyNode = l.objects.map((_, k) => Number(spec.initial[NAV.key(l, k)]!.slice(2)));
  const dist = new Map<string, number>([["0|0", 0]]);
  const queue: [number, number][] = [[0, 0]];
  while (queue.length > 0) {
    const [node, held] = queue.shift()!;
    const d = dist.get(`${node}|${held}`)!;
    if (node === l.size - 1) return d;
    const next: [number, number][] = [];
    for (const [to, e] of adj[node]!) {
      const key = spec.hidden.lockKey[e];
      if (key === null || key === undefined || (held & (1 << l.objects.indexOf(key))) !== 0) next.push([to, held]);
    }
    keyNode.forEach((at, k) => at === node && (held & (1 << k)) === 0 && next.push([node, held | (1 << k)]));
    for (const s of next) {
      const id = s.join("|");
      if (!dist.has(id)) (dist.set(id, d + 1), queue.push(s));
    }
  }
  return null;
}

export const graphNav: WorldKind<"graphnav"> = { kind: "graphnav", generate, act, isSuccess, probe, observe, mutate, shortestPlan };
