// The three EnvProbe worlds (paper §4, reference/envprobe.md §2.3–2.5) as pure data and pure
// functions: generation from a seed, the belief fields, task actions, probes, observations and
// exogenous mutation. A world's state is one array of field values (plus done/success flags), so
// beliefs and the world are compared field by field (paper Eq. 1) and copied cheaply.
//
// Draws are "same distribution, different draws" as the authors' release: our RNG is xoroshiro
// (actors/rng.ts), not Python's MT19937. Every draw session consumes a fixed number of draws, so a
// stream never shifts with what a policy does (common random numbers, DESIGN §4).
import type { Draws } from "../rng.ts";

export const KINDS = ["objectstate", "tooldag", "graphnav"] as const;
export type Kind = (typeof KINDS)[number];
export type Cardinality = "low" | "medium" | "high";
export type FieldType = "procedural" | "spatial";

/** Value of a field the agent does not know. Never equal to a world value. */
export const UNKNOWN = "?";
/** Where a held object is. */
export const HELD = "inv";

export interface Field {
  readonly name: string;
  readonly type: FieldType;
  /** Task criticality weight w_i (paper §3.3); c_i = w_i / max w. */
  readonly weight: number;
  /** The probe that reads this field. */
  readonly probe: string;
}

/** What the agent is told (task text and map) and what everyone can see: no hidden state. */
export interface Layout {
  readonly kind: Kind;
  readonly fields: readonly Field[];
  readonly goal: string;
  /** objectstate: room count; graphnav: node count; tooldag: tool count. */
  readonly size: number;
  /** objectstate: keys, boxes, targets (in that order); graphnav: keys. */
  readonly objects: readonly string[];
  /** graphnav: edges as [a, b] node indices, with ids `n_a__n_b` (string-sorted ends). */
  readonly edges: readonly (readonly [number, number])[];
}

/** The world's hidden structure: which key opens which door or edge; each tool's inputs. */
export interface Hidden {
  /** objectstate: per door (index k-1 for door_k); graphnav: per edge. null: no lock. */
  readonly lockKey: readonly (string | null)[];
  /** tooldag: the variable indices each tool needs. */
  readonly deps: readonly (readonly number[])[];
}

export interface WorldSpec {
  readonly layout: Layout;
  readonly hidden: Hidden;
  readonly initial: readonly string[];
}

export interface Sizes {
  readonly cardinality: Cardinality;
  readonly density: Cardinality;
}

const CARD = { low: 0, medium: 1, high: 2 } as const;
const pick3 = <T>(c: Cardinality, xs: readonly [T, T, T]): T => xs[CARD[c]];

/** k distinct items, partial Fisher-Yates (k draws). */
export function sample<T>(draws: Draws, items: readonly T[], k: number): T[] {
  const a = [...items];
  const n = Math.min(k, a.length);
  for (let i = 0; i < n; i++) {
    const j = draws.int(i, a.length - 1);
    const tmp = a[i]!;
    a[i] = a[j]!;
    a[j] = tmp;
  }
  return a.slice(0, n);
}

const roomName = (i: number) => `room_${i}`;
const nodeName = (i: number) => `n_${i}`;
const edgeId = (a: number, b: number) => {
  const x = nodeName(a);
  const y = nodeName(b);
  return x < y ? `${x}__${y}` : `${y}__${x}`;
};
const COLOURS = ["blue", "red", "green", "yellow", "white", "black"];
const TARGETS = ["map", "lantern", "scroll"];
const GRAPH_KEYS = ["key_a", "key_b", "key_c", "key_d", "key_e"];

// ---------------------------------------------------------------------------------------------
// Generation

export function generate(kind: Kind, sizes: Sizes, draws: Draws): WorldSpec {
  switch (kind) {
    case "objectstate":
      return generateObjectState(sizes, draws);
    case "tooldag":
      return generateToolDag(sizes, draws);
    case "graphnav":
      return generateGraphNav(sizes, draws);
  }
}

function generateObjectState(sizes: Sizes, draws: Draws): WorldSpec {
  const rooms = pick3(sizes.cardinality, [5, 10, 20]);
  const keys = COLOURS.slice(0, Math.max(2, Math.floor(rooms / 3))).map((c) => `${c}_key`);
  const boxes = Array.from({ length: pick3(sizes.cardinality, [1, 2, 5]) }, (_, i) => `box_${i}`);
  const targets = TARGETS.slice(0, pick3(sizes.cardinality, [1, 2, 3]));
  const doors = rooms - 1;
  const nLocked = Math.min(pick3(sizes.density, [1, 3, 6]), doors, keys.length);
  const lockedDoors = sample(draws, Array.from({ length: doors }, (_, i) => i + 1), nLocked);
  const lockKeys = sample(draws, keys, nLocked);
  const lockKey: (string | null)[] = Array.from({ length: doors }, () => null);
  const where = new Map<string, number>();
  lockedDoors.forEach((door, i) => {
    lockKey[door - 1] = lockKeys[i]!;
    // The key of door k lies before it (rooms 0..k-1), so every seed starts solvable.
    where.set(lockKeys[i]!, draws.int(0, door - 1));
  });
  for (const k of keys) if (!where.has(k)) where.set(k, draws.int(0, rooms - 1));
  for (const o of [...boxes, ...targets]) where.set(o, draws.int(0, rooms - 1));
  const candidates = [...boxes, ...targets];
  const goal = candidates[draws.int(0, candidates.length - 1)]!;
  const objects = [...keys, ...boxes, ...targets];
  const fields: Field[] = [{ name: "agent", type: "spatial", weight: 0.5, probe: "check_current_position()" }];
  for (const o of objects) {
    const weight = o === goal ? 1 : o.endsWith("_key") ? 0.7 : 0.2;
    fields.push({ name: `loc:${o}`, type: "spatial", weight, probe: boxes.includes(o) ? `check_container_status(${o})` : `check_location(${o})` });
  }
  for (let k = 1; k <= doors; k++) fields.push({ name: `door:door_${k}`, type: "spatial", weight: 0.8, probe: `check_door_status(door_${k})` });
  fields.push({ name: "inventory", type: "procedural", weight: 0.5, probe: "check_inventory()" });
  const initial = [roomName(0), ...objects.map((o) => roomName(where.get(o)!)), ...lockKey.map((k) => (k === null ? "open" : "locked")), "-"];
  return { layout: { kind: "objectstate", fields, goal, size: rooms, objects, edges: [] }, hidden: { lockKey, deps: [] }, initial };
}

function generateToolDag(sizes: Sizes, draws: Draws): WorldSpec {
  const n = pick3(sizes.cardinality, [5, 9, 16]);
  const per = pick3(sizes.density, [1, 2, 3]);
  const deps: number[][] = [[]];
  for (let i = 1; i < n; i++) deps.push(sample(draws, Array.from({ length: i }, (_, j) => j), Math.min(i, per)).sort((a, b) => a - b));
  const fields: Field[] = [];
  for (let i = 0; i < n; i++) fields.push({ name: `var:v_${i}`, type: "procedural", weight: i === n - 1 ? 1 : 0.6, probe: `check_variable_exists(v_${i})` });
  for (let i = 0; i < n; i++) fields.push({ name: `done:t_${i}`, type: "procedural", weight: 0.4, probe: `check_tool_status(t_${i})` });
  for (let i = 0; i < n; i++) fields.push({ name: `dep:t_${i}`, type: "procedural", weight: 0.8, probe: `inspect_tool_schema(t_${i})` });
  const initial = [...Array.from({ length: 2 * n }, () => "0"), ...deps.map(depValue)];
  return { layout: { kind: "tooldag", fields, goal: `v_${n - 1}`, size: n, objects: [], edges: [] }, hidden: { lockKey: [], deps }, initial };
}

/** A tool's inputs as a field value: `v_0+v_3`, or `-` for none. */
export const depValue = (inputs: readonly number[]): string => (inputs.length === 0 ? "-" : inputs.map((i) => `v_${i}`).join("+"));
export const parseDeps = (value: string): number[] | null => (value === UNKNOWN ? null : value === "-" ? [] : value.split("+").map((v) => Number(v.slice(2))));

function generateGraphNav(sizes: Sizes, draws: Draws): WorldSpec {
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

// ---------------------------------------------------------------------------------------------
// Field index helpers (the order fixed by generation)

export const OBJ = {
  loc: (l: Layout, o: number) => 1 + o,
  door: (l: Layout, k: number) => 1 + l.objects.length + (k - 1),
  inventory: (l: Layout) => l.fields.length - 1,
};
export const DAG = {
  v: (l: Layout, i: number) => i,
  done: (l: Layout, i: number) => l.size + i,
  dep: (l: Layout, i: number) => 2 * l.size + i,
};
export const NAV = {
  edge: (_l: Layout, e: number) => 1 + e,
  key: (l: Layout, k: number) => 1 + l.edges.length + k,
  inventory: (l: Layout) => l.fields.length - 1,
};

const inventoryValue = (held: readonly string[]): string => (held.length === 0 ? "-" : [...held].sort().join(","));
export const parseInventory = (value: string): string[] => (value === "-" || value === UNKNOWN ? [] : value.split(","));

/** Adjacency for graphnav: neighbour node → edge index, per node. */
export function adjacency(layout: Layout): Map<number, number>[] {
  const adj = Array.from({ length: layout.size }, () => new Map<number, number>());
  layout.edges.forEach(([a, b], e) => {
    adj[a]!.set(b, e);
    adj[b]!.set(a, e);
  });
  return adj;
}

// ---------------------------------------------------------------------------------------------
// Actions

export interface Parsed {
  readonly verb: string;
  readonly args: readonly string[];
}

/** The release's grammar: `verb(arg, …)`, verb lower-cased, quotes stripped. */
export function parseAction(text: string): Parsed | null {
  const m = /^(\w+)\(([^)]*)\)$/.exec(text.trim());
  if (m === null) return null;
  const args = m[2]!.split(",").map((a) => a.trim().replace(/^['"]|['"]$/g, "")).filter((a) => a.length > 0);
  return { verb: m[1]!.toLowerCase(), args };
}

const indexOfName = (prefix: string, name: string | undefined, size: number): number => {
  if (name === undefined || !name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  if (!/^\d+$/.test(rest)) return -1;
  const i = Number(rest);
  return i < size ? i : -1;
};

export interface Outcome {
  readonly valid: boolean;
  readonly reason: string;
}

/** Applies a task action to `values` in place. */
export function applyAction(spec: WorldSpec, values: string[], text: string): Outcome {
  const p = parseAction(text);
  if (p === null) return { valid: false, reason: "unparseable" };
  const l = spec.layout;
  switch (l.kind) {
    case "objectstate":
      return actObjectState(spec, values, p);
    case "tooldag": {
      if (p.verb !== "call_tool") return { valid: false, reason: "unknown_action" };
      const i = indexOfName("t_", p.args[0], l.size);
      if (i < 0) return { valid: false, reason: "unknown_tool" };
      if (values[DAG.done(l, i)] === "1") return { valid: false, reason: "already_completed" };
      for (const d of spec.hidden.deps[i]!) if (values[DAG.v(l, d)] !== "1") return { valid: false, reason: "missing_inputs" };
      values[DAG.v(l, i)] = "1";
      values[DAG.done(l, i)] = "1";
      return { valid: true, reason: "ok" };
    }
    case "graphnav": {
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
  }
}

function actObjectState(spec: WorldSpec, values: string[], p: Parsed): Outcome {
  const l = spec.layout;
  const here = indexOfName("room_", values[0], l.size);
  const held = parseInventory(values[OBJ.inventory(l)]!);
  switch (p.verb) {
    case "move_to": {
      const to = indexOfName("room_", p.args[0], l.size);
      if (to < 0) return { valid: false, reason: "unknown_room" };
      if (Math.abs(to - here) !== 1) return { valid: false, reason: "no_door" };
      const door = Math.max(to, here);
      if (values[OBJ.door(l, door)] === "locked") return { valid: false, reason: "door_locked" };
      values[0] = roomName(to);
      return { valid: true, reason: "ok" };
    }
    case "pick_up": {
      const o = l.objects.indexOf(p.args[0] ?? "");
      if (o < 0) return { valid: false, reason: "unknown_object" };
      if (values[OBJ.loc(l, o)] !== values[0]) return { valid: false, reason: "not_here" };
      values[OBJ.loc(l, o)] = HELD;
      values[OBJ.inventory(l)] = inventoryValue([...held, l.objects[o]!]);
      return { valid: true, reason: "ok" };
    }
    case "unlock": {
      const k = indexOfName("door_", p.args[0], l.size);
      if (k < 1) return { valid: false, reason: "unknown_door" };
      if (k !== here && k !== here + 1) return { valid: false, reason: "not_adjacent" };
      if (values[OBJ.door(l, k)] === "open") return { valid: true, reason: "already_open" };
      if (!held.includes(spec.hidden.lockKey[k - 1] ?? "")) return { valid: false, reason: "missing_key" };
      values[OBJ.door(l, k)] = "open";
      return { valid: true, reason: "ok" };
    }
    case "open": {
      const o = l.objects.indexOf(p.args[0] ?? "");
      if (o < 0 || !l.objects[o]!.startsWith("box_")) return { valid: false, reason: "unknown_box" };
      return values[OBJ.loc(l, o)] === values[0] ? { valid: true, reason: "ok" } : { valid: false, reason: "not_here" };
    }
    case "place": {
      const o = l.objects.indexOf(p.args[0] ?? "");
      const to = indexOfName("room_", p.args[1], l.size);
      if (o < 0 || to < 0) return { valid: false, reason: "unknown_target" };
      if (values[OBJ.loc(l, o)] !== HELD) return { valid: false, reason: "not_held" };
      values[OBJ.loc(l, o)] = roomName(to);
      values[OBJ.inventory(l)] = inventoryValue(held.filter((h) => h !== l.objects[o]));
      return { valid: true, reason: "ok" };
    }
    default:
      return { valid: false, reason: "unknown_action" };
  }
}

export function isSuccess(layout: Layout, values: readonly string[]): boolean {
  switch (layout.kind) {
    case "objectstate":
      return values[OBJ.loc(layout, layout.objects.indexOf(layout.goal))] === HELD;
    case "tooldag":
      return values[DAG.v(layout, layout.size - 1)] === "1";
    case "graphnav":
      return values[0] === layout.goal;
  }
}

// ---------------------------------------------------------------------------------------------
// Probes: read-only; the answer is (field, value) pairs written back into beliefs, plus extras.

export interface Answer {
  readonly valid: boolean;
  readonly reason: string;
  readonly pairs: [number, string][];
  readonly extra: Record<string, string>;
}

export function probe(spec: WorldSpec, values: readonly string[], text: string): Answer {
  const p = parseAction(text);
  const bad = (reason: string): Answer => ({ valid: false, reason, pairs: [], extra: {} });
  if (p === null) return bad("invalid");
  const l = spec.layout;
  const ok = (pairs: [number, string][], extra: Record<string, string> = {}): Answer => ({ valid: true, reason: "ok", pairs, extra });
  const field = (name: string) => l.fields.findIndex((f) => f.name === name);
  switch (l.kind) {
    case "objectstate":
      switch (p.verb) {
        case "check_current_position":
          return ok([[0, values[0]!]]);
        case "check_location":
        case "check_container_status": {
          const o = l.objects.indexOf(p.args[0] ?? "");
          return o < 0 ? bad("unknown_object") : ok([[OBJ.loc(l, o), values[OBJ.loc(l, o)]!]]);
        }
        case "check_inventory": {
          const pairs: [number, string][] = [[OBJ.inventory(l), values[OBJ.inventory(l)]!]];
          l.objects.forEach((_, o) => values[OBJ.loc(l, o)] === HELD && pairs.push([OBJ.loc(l, o), HELD]));
          return ok(pairs);
        }
        case "check_door_status": {
          const k = indexOfName("door_", p.args[0], l.size);
          return k < 1 ? bad("unknown_door") : ok([[OBJ.door(l, k), values[OBJ.door(l, k)]!]], { required_key: spec.hidden.lockKey[k - 1] ?? "none" });
        }
        case "inspect_room": {
          const r = indexOfName("room_", p.args[0], l.size);
          if (r < 0) return bad("unknown_room");
          const pairs: [number, string][] = [];
          l.objects.forEach((_, o) => values[OBJ.loc(l, o)] === roomName(r) && pairs.push([OBJ.loc(l, o), roomName(r)]));
          return ok(pairs);
        }
        case "verify_subgoal": {
          const name = p.args[0] ?? "";
          if (name.startsWith("has_")) return ok([], { completed: String(values[field(`loc:${name.slice(4)}`)] === HELD) });
          if (name.startsWith("unlocked_")) return ok([], { completed: String(values[field(`door:${name.slice(9)}`)] === "open") });
          return bad("unknown_subgoal");
        }
        case "check_preconditions": {
          const target = p.args[0] ?? "";
          if (target.startsWith("unlock_")) {
            const k = indexOfName("door_", target.slice(7), l.size);
            if (k < 1) return bad("unknown_door");
            const need = spec.hidden.lockKey[k - 1];
            const has = need === null || need === undefined || parseInventory(values[OBJ.inventory(l)]!).includes(need);
            return ok([], { executable: String(has), missing: has ? "" : need! });
          }
          if (target.startsWith("pick_up_")) {
            const o = l.objects.indexOf(target.slice(8));
            if (o < 0) return bad("unknown_object");
            return ok([], { executable: String(values[OBJ.loc(l, o)] === values[0]), missing: values[OBJ.loc(l, o)] === values[0] ? "" : "not_here" });
          }
          return bad("unknown_precondition");
        }
        default:
          return bad("unknown_probe");
      }
    case "tooldag": {
      const t = indexOfName("t_", p.args[0], l.size);
      const v = indexOfName("v_", p.args[0], l.size);
      switch (p.verb) {
        case "inspect_tool_schema":
          return t < 0 ? bad("unknown_tool") : ok([[DAG.dep(l, t), depValue(spec.hidden.deps[t]!)]], { produces: `v_${t}` });
        case "check_required_inputs":
        case "check_tool_dependency": {
          if (t < 0) return bad("unknown_tool");
          const pairs: [number, string][] = [[DAG.dep(l, t), depValue(spec.hidden.deps[t]!)]];
          for (const d of spec.hidden.deps[t]!) pairs.push([DAG.v(l, d), values[DAG.v(l, d)]!]);
          return ok(pairs);
        }
        case "check_variable_exists":
        case "validate_tool_output":
          return v < 0 ? bad("unknown_variable") : ok([[DAG.v(l, v), values[DAG.v(l, v)]!]]);
        case "check_tool_status":
          return t < 0 ? bad("unknown_tool") : ok([[DAG.done(l, t), values[DAG.done(l, t)]!]]);
        case "validate_argument":
          return ok([], { valid: "false" });
        default:
          return bad("unknown_probe");
      }
    }
    case "graphnav": {
      const node = (s: string | undefined) => indexOfName("n_", s, l.size);
      const edgeOf = (a: number, b: number) => l.edges.findIndex(([x, y]) => (x === a && y === b) || (x === b && y === a));
      switch (p.verb) {
        case "check_current_node":
          return ok([[0, values[0]!]]);
        case "check_edge":
        case "check_required_key": {
          let e = -1;
          if (p.args.length >= 2) e = edgeOf(node(p.args[0]), node(p.args[1]));
          else if (p.args[0] !== undefined) e = l.edges.findIndex(([a, b]) => edgeId(a, b) === p.args[0]);
          if (e < 0) return ok([], { exists: "false" });
          const key = spec.hidden.lockKey[e] ?? "none";
          return p.verb === "check_edge" ? ok([[NAV.edge(l, e), values[NAV.edge(l, e)]!]], { exists: "true", required_key: key }) : ok([], { required_key: key });
        }
        case "check_node_locked": {
          const n = node(p.args[0]);
          if (n < 0) return bad("unknown_node");
          const pairs: [number, string][] = [];
          l.edges.forEach(([a, b], e) => (a === n || b === n) && pairs.push([NAV.edge(l, e), values[NAV.edge(l, e)]!]));
          return ok(pairs);
        }
        case "inspect_neighbors": {
          const n = node(p.args[0]);
          if (n < 0) return bad("unknown_node");
          return ok([], { neighbors: [...adjacency(l)[n]!.keys()].map(nodeName).sort().join(",") });
        }
        case "check_target_distance_hint":
          return ok([], { hops: String(hops(l, values, node(values[0]), l.size - 1)) });
        case "check_location": {
          const k = l.objects.indexOf(p.args[0] ?? "");
          return k < 0 ? bad("unknown_key") : ok([[NAV.key(l, k), values[NAV.key(l, k)]!]]);
        }
        case "check_inventory": {
          const pairs: [number, string][] = [[NAV.inventory(l), values[NAV.inventory(l)]!]];
          l.objects.forEach((_, k) => values[NAV.key(l, k)] === HELD && pairs.push([NAV.key(l, k), HELD]));
          return ok(pairs);
        }
        default:
          return bad("unknown_probe");
      }
    }
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

// ---------------------------------------------------------------------------------------------
// Observation (after every step). Noise draws: always one unit per step (fixed consumption).

export type Noise = "clean" | "partial";

export interface Observation {
  /** Field values the observation shows directly. */
  readonly pairs: [number, string][];
  /** Visible ids: objects in view (objectstate), available variables and completed tools (tooldag), neighbours (graphnav). */
  readonly seen: string[];
}

export function observe(spec: WorldSpec, values: readonly string[], noise: Noise, draws: Draws): Observation {
  const dropLast = draws.unit() < 0.4 && noise === "partial";
  const l = spec.layout;
  const pairs: [number, string][] = [];
  let seen: string[] = [];
  switch (l.kind) {
    case "objectstate": {
      pairs.push([0, values[0]!], [OBJ.inventory(l), values[OBJ.inventory(l)]!]);
      l.objects.forEach((o, i) => {
        if (values[OBJ.loc(l, i)] === values[0]) seen.push(o);
        else if (values[OBJ.loc(l, i)] === HELD) pairs.push([OBJ.loc(l, i), HELD]);
      });
      seen.sort();
      if (dropLast) seen.pop();
      for (const o of seen) pairs.push([OBJ.loc(l, l.objects.indexOf(o)), values[0]!]);
      break;
    }
    case "tooldag": {
      const vars: string[] = [];
      for (let i = 0; i < l.size; i++) if (values[DAG.v(l, i)] === "1") vars.push(`v_${i}`);
      vars.sort();
      if (dropLast) vars.pop();
      seen = vars;
      for (let i = 0; i < l.size; i++) if (values[DAG.done(l, i)] === "1") seen.push(`t_${i}`);
      break;
    }
    case "graphnav": {
      const here = indexOfName("n_", values[0], l.size);
      pairs.push([0, values[0]!], [NAV.inventory(l), values[NAV.inventory(l)]!]);
      l.objects.forEach((_, k) => {
        const at = values[NAV.key(l, k)];
        if (at === values[0] || at === HELD) pairs.push([NAV.key(l, k), at!]);
      });
      seen = [...adjacency(l)[here]!.keys()].map(nodeName).sort();
      if (dropLast) seen.pop();
      break;
    }
  }
  return { pairs, seen };
}

// ---------------------------------------------------------------------------------------------
// Exogenous mutation. `targets`: what may change — the paper's (object locations and lock states;
// edges and keys) or the release's (loose keys only in objectstate; variables in tooldag; keyed
// edges and loose keys in graphnav). Every item draws a unit and an index every step, applied or not.

export type MutationTargets = "paper" | "release";

export function mutate(spec: WorldSpec, values: string[], rate: number, targets: MutationTargets, draws: Draws): [number, string, string][] {
  const l = spec.layout;
  const changes: [number, string, string][] = [];
  const set = (i: number, v: string) => {
    if (values[i] === v) return;
    changes.push([i, values[i]!, v]);
    values[i] = v;
  };
  switch (l.kind) {
    case "objectstate":
      l.objects.forEach((o, i) => {
        const hit = draws.unit() < rate;
        const to = draws.int(0, l.size - 1);
        const movable = targets === "paper" || o.endsWith("_key");
        if (hit && movable && values[OBJ.loc(l, i)] !== HELD) set(OBJ.loc(l, i), roomName(to));
      });
      for (let k = 1; k < l.size; k++) {
        const hit = draws.unit() < rate;
        if (hit && targets === "paper" && spec.hidden.lockKey[k - 1] !== null) set(OBJ.door(l, k), values[OBJ.door(l, k)] === "open" ? "locked" : "open");
      }
      break;
    case "tooldag":
      for (let i = 0; i < l.size; i++) {
        const hit = draws.unit() < rate;
        if (hit && i !== l.size - 1 && values[DAG.v(l, i)] === "1") {
          set(DAG.v(l, i), "0");
          set(DAG.done(l, i), "0");
        }
      }
      break;
    case "graphnav":
      l.edges.forEach((_, e) => {
        const hit = draws.unit() < rate;
        if (hit && spec.hidden.lockKey[e] !== null) set(NAV.edge(l, e), values[NAV.edge(l, e)] === "open" ? "locked" : "open");
      });
      l.objects.forEach((_, k) => {
        const hit = draws.unit() < rate;
        const to = draws.int(0, l.size - 1);
        if (hit && values[NAV.key(l, k)] !== HELD) set(NAV.key(l, k), nodeName(to));
      });
      break;
  }
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Shortest plan on the static world (no mutation): K, or null when the seed is unsolvable.

export function shortestPlan(spec: WorldSpec): number | null {
  const l = spec.layout;
  switch (l.kind) {
    case "tooldag": {
      const need = new Set<number>();
      const visit = (i: number) => {
        if (need.has(i)) return;
        need.add(i);
        for (const d of spec.hidden.deps[i]!) visit(d);
      };
      visit(l.size - 1);
      return need.size;
    }
    case "objectstate": {
      // State: room, held-keys mask, opened-doors mask (only locked doors), goal held.
      const keys = l.objects.filter((o) => o.endsWith("_key"));
      const keyRoom = keys.map((k) => Number(spec.initial[OBJ.loc(l, l.objects.indexOf(k))]!.slice(5)));
      const goalRoom = Number(spec.initial[OBJ.loc(l, l.objects.indexOf(l.goal))]!.slice(5));
      const locked = spec.hidden.lockKey.map((k) => k !== null);
      const keyOf = spec.hidden.lockKey.map((k) => (k === null ? -1 : keys.indexOf(k)));
      const start = `0|0|0`;
      const dist = new Map<string, number>([[start, 0]]);
      const queue: [number, number, number][] = [[0, 0, 0]];
      while (queue.length > 0) {
        const [room, held, opened] = queue.shift()!;
        const d = dist.get(`${room}|${held}|${opened}`)!;
        if (room === goalRoom) return d + 1;
        const next: [number, number, number][] = [];
        for (const to of [room - 1, room + 1]) {
          if (to < 0 || to >= l.size) continue;
          const door = Math.max(to, room) - 1;
          if (!locked[door] || (opened & (1 << door)) !== 0) next.push([to, held, opened]);
          else if (keyOf[door]! >= 0 && (held & (1 << keyOf[door]!)) !== 0) next.push([room, held, opened | (1 << door)]);
        }
        keys.forEach((_, k) => keyRoom[k] === room && (held & (1 << k)) === 0 && next.push([room, held | (1 << k), opened]));
        for (const s of next) {
          const id = s.join("|");
          if (!dist.has(id)) (dist.set(id, d + 1), queue.push(s));
        }
      }
      return null;
    }
    case "graphnav": {
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
  }
}

export { roomName, nodeName, edgeId };
