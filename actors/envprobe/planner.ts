// The scripted agent's planner: the next task action from a table of field values (its beliefs, or
// the world's for the oracle-belief reference), plus which fields that action depends on directly
// (d = 1: they decide whether it is valid) and which the rest of the plan depends on (d = 0.5).
// These give EnvProbe's d_i from the task structure (paper §3.3), not from self-reports.
import { adjacency, NAV, nodeName } from "./kinds/graphnav.ts";
import { OBJ, roomName } from "./kinds/objectstate.ts";
import { DAG, parseDeps } from "./kinds/tooldag.ts";
import type { Layout } from "./kinds/types.ts";
import { HELD, parseInventory, UNKNOWN } from "./kinds/values.ts";

/** What the agent has learned that is not a scored field. */
export interface Knowledge {
  /** Per door (objectstate) or edge (graphnav): its key, "none", or "?" (not known). */
  lockKey: string[];
  /** Per door/edge: the inventory with which an unlock or a move last failed ("" never). */
  failedWith: string[];
  /** Per room/node: the last step the agent stood there (-1 never). */
  lastSeen: number[];
}

export interface Plan {
  readonly action: string;
  readonly direct: readonly number[];
  readonly transitive: readonly number[];
}

export function plan(layout: Layout, values: readonly string[], know: Knowledge): Plan {
  switch (layout.kind) {
    case "objectstate":
      return planObjectState(layout, values, know);
    case "tooldag":
      return planToolDag(layout, values);
    case "graphnav":
      return planGraphNav(layout, values, know);
  }
}

const idx = (prefix: string, v: string | undefined): number => (v !== undefined && v.startsWith(prefix) ? Number(v.slice(prefix.length)) : -1);

function planObjectState(l: Layout, values: readonly string[], know: Knowledge): Plan {
  const cur = Math.max(0, idx("room_", values[0]));
  const held = parseInventory(values[OBJ.inventory(l)]!);
  const heldKeys = held.filter((h) => h.endsWith("_key"));
  const goal = l.objects.indexOf(l.goal);
  const goalField = OBJ.loc(l, goal);
  const here = roomName(cur);
  // Keys lying here are picked up (every key may open something).
  for (let o = 0; o < l.objects.length; o++) {
    if (l.objects[o]!.endsWith("_key") && values[OBJ.loc(l, o)] === here) return { action: `pick_up(${l.objects[o]})`, direct: [OBJ.loc(l, o), 0], transitive: [goalField] };
  }
  if (values[goalField] === here) return { action: `pick_up(${l.goal})`, direct: [goalField, 0], transitive: [] };
  /** One step from cur toward room `to`: a move, an unlock, or null when a locked door blocks without a usable key. */
  const toward = (to: number, extra: number[]): Plan | null => {
    if (to === cur) return null;
    const next = to > cur ? cur + 1 : cur - 1;
    const door = Math.max(cur, next);
    const doorField = OBJ.door(l, door);
    const rest: number[] = [...extra];
    for (let r = next; r !== to; r += to > cur ? 1 : -1) rest.push(OBJ.door(l, Math.max(r, r + (to > cur ? 1 : -1))));
    if (values[doorField] !== "locked") return { action: `move_to(${roomName(next)})`, direct: [doorField, 0], transitive: rest };
    const key = know.lockKey[door - 1]!;
    const inv = values[OBJ.inventory(l)]!;
    const usable = key === "?" ? heldKeys.length > 0 && know.failedWith[door - 1] !== inv : key !== "none" && held.includes(key);
    if (usable || key === "none") return { action: `unlock(door_${door})`, direct: [doorField, OBJ.inventory(l)], transitive: rest };
    return null;
  };
  const goalAt = idx("room_", values[goalField]);
  if (goalAt >= 0) {
    const step = toward(goalAt, [goalField]);
    if (step !== null) return step;
    // Blocked: fetch a key that may open the blocking door (known key first, else any known loose key).
    const door = Math.max(cur, goalAt > cur ? cur + 1 : cur - 1);
    const wanted = know.lockKey[door - 1]!;
    const candidates = l.objects.map((o, i) => ({ o, i })).filter(({ o, i }) => o.endsWith("_key") && (wanted === "?" || o === wanted) && idx("room_", values[OBJ.loc(l, i)]) >= 0);
    candidates.sort((a, b) => Math.abs(idx("room_", values[OBJ.loc(l, a.i)]) - cur) - Math.abs(idx("room_", values[OBJ.loc(l, b.i)]) - cur));
    for (const { i } of candidates) {
      const s = toward(idx("room_", values[OBJ.loc(l, i)]), [OBJ.loc(l, i), OBJ.door(l, door), goalField]);
      if (s !== null) return s;
    }
  }
  // Explore: the nearest room never seen (else seen longest ago) that can be reached.
  const order = Array.from({ length: l.size }, (_, r) => r).filter((r) => r !== cur);
  order.sort((a, b) => (know.lastSeen[a]! - know.lastSeen[b]!) || (Math.abs(a - cur) - Math.abs(b - cur)) || (b - a));
  for (const r of order) {
    const s = toward(r, [goalField]);
    if (s !== null) return s;
  }
  const fallback = cur + 1 < l.size ? cur + 1 : cur - 1;
  return { action: `move_to(${roomName(fallback)})`, direct: [OBJ.door(l, Math.max(cur, fallback)), 0], transitive: [goalField] };
}

function planToolDag(l: Layout, values: readonly string[]): Plan {
  const n = l.size;
  const depsOf = (i: number): number[] => parseDeps(values[DAG.dep(l, i)]!) ?? (i === 0 ? [] : [i - 1]);
  const have = (v: number) => values[DAG.v(l, v)] === "1";
  // Backward chaining from the target under the believed schemas: a missing variable needs its
  // tool, whose missing inputs need theirs (inputs have lower indices, so this terminates).
  const need = new Set<number>();
  const visit = (i: number) => {
    if (need.has(i) || have(i)) return;
    need.add(i);
    for (const d of depsOf(i)) if (d < i) visit(d);
  };
  visit(n - 1);
  const order = [...need].sort((a, b) => a - b);
  const transitive: number[] = [];
  for (const i of order) transitive.push(DAG.dep(l, i), DAG.v(l, i));
  for (const i of order) {
    const deps = depsOf(i);
    if (deps.every(have)) return { action: `call_tool(t_${i})`, direct: [DAG.dep(l, i), DAG.done(l, i), ...deps.map((d) => DAG.v(l, d))], transitive };
  }
  const t = order[0] ?? n - 1;
  return { action: `call_tool(t_${t})`, direct: [DAG.dep(l, t), DAG.done(l, t), ...depsOf(t).map((d) => DAG.v(l, d))], transitive };
}

function planGraphNav(l: Layout, values: readonly string[], know: Knowledge): Plan {
  const cur = Math.max(0, idx("n_", values[0]));
  const target = l.size - 1;
  const held = parseInventory(values[NAV.inventory(l)]!);
  const inv = values[NAV.inventory(l)]!;
  const adj = adjacency(l);
  for (let k = 0; k < l.objects.length; k++) {
    if (values[NAV.key(l, k)] === nodeName(cur)) return { action: `collect_key(${l.objects[k]})`, direct: [NAV.key(l, k), 0], transitive: [] };
  }
  const passable = (e: number): boolean => {
    if (values[NAV.edge(l, e)] !== "locked") return true;
    const key = know.lockKey[e]!;
    if (key === "?") return held.length > 0 && know.failedWith[e] !== inv;
    return key === "none" || held.includes(key);
  };
  /** BFS from cur over passable edges; the first move toward `to` and the edges of the path. */
  const route = (to: number): { next: number; edges: number[] } | null => {
    if (to === cur) return null;
    const prev = new Map<number, [number, number]>([[cur, [-1, -1]]]);
    const queue = [cur];
    while (queue.length > 0) {
      const x = queue.shift()!;
      if (x === to) break;
      for (const [y, e] of adj[x]!) if (!prev.has(y) && passable(e)) (prev.set(y, [x, e]), queue.push(y));
    }
    if (!prev.has(to)) return null;
    const edges: number[] = [];
    let x = to;
    let next = to;
    while (x !== cur) {
      const [p, e] = prev.get(x)!;
      edges.unshift(e);
      next = x;
      x = p;
    }
    return { next, edges };
  };
  const move = (r: { next: number; edges: number[] }, extra: number[]): Plan => ({
    action: `move_to(${nodeName(r.next)})`,
    direct: [NAV.edge(l, r.edges[0]!), 0],
    transitive: [...r.edges.slice(1).map((e) => NAV.edge(l, e)), ...extra],
  });
  const toTarget = route(target);
  if (toTarget !== null) return move(toTarget, []);
  // Blocked: go for the nearest key whose place is believed known.
  let best: { r: { next: number; edges: number[] }; k: number } | null = null;
  for (let k = 0; k < l.objects.length; k++) {
    const at = idx("n_", values[NAV.key(l, k)]);
    if (at < 0) continue;
    const r = route(at);
    if (r !== null && (best === null || r.edges.length < best.r.edges.length)) best = { r, k };
  }
  if (best !== null) return move(best.r, [NAV.key(l, best.k)]);
  // Explore: the reachable neighbour seen longest ago.
  let pickN = -1;
  let pickE = -1;
  for (const [y, e] of [...adj[cur]!].sort((a, b) => a[0] - b[0])) {
    if (!passable(e)) continue;
    if (pickN < 0 || know.lastSeen[y]! < know.lastSeen[pickN]!) (pickN = y, pickE = e);
  }
  if (pickN < 0) {
    const [y, e] = [...adj[cur]!].sort((a, b) => b[0] - a[0])[0]!;
    pickN = y;
    pickE = e;
  }
  return { action: `move_to(${nodeName(pickN)})`, direct: [NAV.edge(l, pickE), 0], transitive: [] };
}

export const unknownValue = UNKNOWN;
export const heldValue = HELD;
