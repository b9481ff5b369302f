// ObjectStateWorld (paper §4, reference/envprobe.md §2.3): rooms room_0 … room_(n-1) in a chain,
// door_k joining room_(k-1) and room_k, some doors locked with a key lying before them; keys,
// boxes and targets in rooms; the goal is to hold one target (or box).
import type { Draws } from "../../rng.ts";
import { answered, refused } from "./answers.ts";
import { pick3, sample } from "./generation.ts";
import { indexOfName } from "./grammar.ts";
import type { Answer, Field, Layout, MutationTargets, Observation, Outcome, Parsed, Sizes, WorldKind, WorldSpec } from "./types.ts";
import { HELD, inventoryValue, parseInventory } from "./values.ts";

export const roomName = (i: number) => `room_${i}`;
const COLOURS = ["blue", "red", "green", "yellow", "white", "black"];
const TARGETS = ["map", "lantern", "scroll"];

/** Field indices (the order fixed by generation). */
export const OBJ = {
  loc: (l: Layout, o: number) => 1 + o,
  door: (l: Layout, k: number) => 1 + l.objects.length + (k - 1),
  inventory: (l: Layout) => l.fields.length - 1,
};

function generate(sizes: Sizes, draws: Draws): WorldSpec {
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

function act(spec: WorldSpec, values: string[], p: Parsed): Outcome {
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

const isSuccess = (layout: Layout, values: readonly string[]): boolean => values[OBJ.loc(layout, layout.objects.indexOf(layout.goal))] === HELD;

function probe(spec: WorldSpec, values: readonly string[], p: Parsed): Answer {
  const l = spec.layout;
  const field = (name: string) => l.fields.findIndex((f) => f.name === name);
  switch (p.verb) {
    case "check_current_position":
      return answered([[0, values[0]!]]);
    case "check_location":
    case "check_container_status": {
      const o = l.objects.indexOf(p.args[0] ?? "");
      return o < 0 ? refused("unknown_object") : answered([[OBJ.loc(l, o), values[OBJ.loc(l, o)]!]]);
    }
    case "check_inventory": {
      const pairs: [number, string][] = [[OBJ.inventory(l), values[OBJ.inventory(l)]!]];
      l.objects.forEach((_, o) => values[OBJ.loc(l, o)] === HELD && pairs.push([OBJ.loc(l, o), HELD]));
      return answered(pairs);
    }
    case "check_door_status": {
      const k = indexOfName("door_", p.args[0], l.size);
      return k < 1 ? refused("unknown_door") : answered([[OBJ.door(l, k), values[OBJ.door(l, k)]!]], { required_key: spec.hidden.lockKey[k - 1] ?? "none" });
    }
    case "inspect_room": {
      const r = indexOfName("room_", p.args[0], l.size);
      if (r < 0) return refused("unknown_room");
      const pairs: [number, string][] = [];
      l.objects.forEach((_, o) => values[OBJ.loc(l, o)] === roomName(r) && pairs.push([OBJ.loc(l, o), roomName(r)]));
      return answered(pairs);
    }
    case "verify_subgoal": {
      const name = p.args[0] ?? "";
      if (name.startsWith("has_")) return answered([], { completed: String(values[field(`loc:${name.slice(4)}`)] === HELD) });
      if (name.startsWith("unlocked_")) return answered([], { completed: String(values[field(`door:${name.slice(9)}`)] === "open") });
      return refused("unknown_subgoal");
    }
    case "check_preconditions": {
      const target = p.args[0] ?? "";
      if (target.startsWith("unlock_")) {
        const k = indexOfName("door_", target.slice(7), l.size);
        if (k < 1) return refused("unknown_door");
        const need = spec.hidden.lockKey[k - 1];
        const has = need === null || need === undefined || parseInventory(values[OBJ.inventory(l)]!).includes(need);
        return answered([], { executable: String(has), missing: has ? "" : need! });
      }
      if (target.startsWith("pick_up_")) {
        const o = l.objects.indexOf(target.slice(8));
        if (o < 0) return refused("unknown_object");
        return answered([], { executable: String(values[OBJ.loc(l, o)] === values[0]), missing: values[OBJ.loc(l, o)] === values[0] ? "" : "not_here" });
      }
      return refused("unknown_precondition");
    }
    default:
      return refused("unknown_probe");
  }
}

/** The current room and inventory; the objects in this room (seen); held objects. */
function observe(spec: WorldSpec, values: readonly string[], dropLast: boolean): Observation {
  const l = spec.layout;
  const pairs: [number, string][] = [];
  const seen: string[] = [];
  pairs.push([0, values[0]!], [OBJ.inventory(l), values[OBJ.inventory(l)]!]);
  l.objects.forEach((o, i) => {
    if (values[OBJ.loc(l, i)] === values[0]) seen.push(o);
    else if (values[OBJ.loc(l, i)] === HELD) pairs.push([OBJ.loc(l, i), HELD]);
  });
  seen.sort();
  if (dropLast) seen.pop();
  for (const o of seen) pairs.push([OBJ.loc(l, l.objects.indexOf(o)), values[0]!]);
  return { pairs, seen };
}

/** Each object draws a unit and a room, then each door a unit: paper moves any loose object and toggles keyed doors, release only loose keys. */
function mutate(spec: WorldSpec, values: readonly string[], rate: number, targets: MutationTargets, draws: Draws, set: (field: number, value: string) => void): void {
  const l = spec.layout;
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
}

/** BFS over (room, held-keys mask, opened-doors mask (only locked doors)); the goal is picked up in its room. */
function shortestPlan(spec: WorldSpec): number | null {
  const l = spec.layout;
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

export const objectState: WorldKind<"objectstate"> = { kind: "objectstate", generate, act, isSuccess, probe, observe, mutate, shortestPlan };
