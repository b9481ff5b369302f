// Stage 2 of the verifier (digest §8.6): the relevance abstraction. A search runs over only what a
// set of goal literals can depend on — the objects and furniture they name, the furniture those
// objects start on or in, the furniture a mechanic links to those (to a fixpoint), the rooms of all
// of it, and every agent. Every other room collapses into one `(elsewhere)` room where nothing
// relevant stands, so no plan ever goes there (the search does not offer it); agents that start in
// one start there. The result is a CompiledTask the rules (rules.ts) run on unchanged.
import type { Literal } from "../pddl.ts";
import type { CompiledTask, HouseholdTask, Mechanics } from "../task.ts";

export const ELSEWHERE = "(elsewhere)";

export interface Abstraction {
  /** The reduced task: rules.ts's `applyAction` and `holds` run on it as on the full one. */
  readonly compiled: CompiledTask;
  /** Relevant rooms (scene order), without `(elsewhere)`. */
  readonly rooms: readonly string[];
  readonly furniture: readonly string[];
  readonly articulated: readonly string[];
  readonly objects: readonly string[];
  readonly agents: readonly string[];
  /** Whether some room was collapsed into `(elsewhere)`. */
  readonly collapsed: boolean;
}

export function abstractFor(full: CompiledTask, literals: readonly Literal[]): Abstraction {
  const { scene } = full.task;
  const m = full.mechanics;
  const objects = new Set<string>();
  const furniture = new Set<string>();
  const rooms = new Set<string>();
  for (const l of literals)
    for (const id of l.args) {
      if (scene.objects[id] !== undefined) objects.add(id);
      else if (scene.furniture[id] !== undefined) furniture.add(id);
      else if (scene.rooms.includes(id)) rooms.add(id);
    }
  for (const o of objects) furniture.add((scene.objects[o]!.on ?? scene.objects[o]!.inside)!);
  // A goal in a room (is_in_room x r): any surface or container there can take x.
  for (const r of rooms) for (const [f, spec] of Object.entries(scene.furniture)) if (spec.room === r) furniture.add(f);
  // Mechanics that can move a relevant piece bring their other piece in, until nothing changes.
  for (let grew = true; grew; ) {
    grew = false;
    const link = (a: string, b: string) => {
      if (furniture.has(a) && !furniture.has(b)) {
        furniture.add(b);
        grew = true;
      }
    };
    for (const r of m.remote) link(r.target, r.trigger);
    for (const mi of m.mirror) {
      link(mi.a, mi.b);
      link(mi.b, mi.a);
    }
  }
  for (const f of furniture) rooms.add(scene.furniture[f]!.room);
  const keptRooms = scene.rooms.filter((r) => rooms.has(r));
  const collapsed = keptRooms.length < scene.rooms.length;
  const sortedFurniture = [...furniture].sort();
  const agents = Object.keys(full.task.agents);
  const mechanics: Mechanics = {
    restricted: Object.fromEntries(Object.entries(m.restricted).map(([a, rs]) => [a, rs.filter((r) => rooms.has(r))])),
    msgLimit: m.msgLimit,
    allowedTargets: m.allowedTargets,
    inverse: m.inverse.filter((f) => furniture.has(f)),
    remote: m.remote.filter((r) => furniture.has(r.trigger) && furniture.has(r.target)),
    mirror: m.mirror.filter((mi) => furniture.has(mi.a) && furniture.has(mi.b)),
    actions: m.actions,
  };
  const task: HouseholdTask = {
    ...full.task,
    scene: {
      rooms: collapsed ? [...keptRooms, ELSEWHERE] : keptRooms,
      furniture: Object.fromEntries(sortedFurniture.map((f) => [f, scene.furniture[f]!])),
      objects: Object.fromEntries([...objects].sort().map((o) => [o, scene.objects[o]!])),
    },
    agents: Object.fromEntries(agents.map((a) => [a, { room: rooms.has(full.task.agents[a]!.room) ? full.task.agents[a]!.room : ELSEWHERE }])),
  };
  return {
    compiled: { ...full, task, mechanics },
    rooms: keptRooms,
    furniture: sortedFurniture,
    articulated: sortedFurniture.filter((f) => scene.furniture[f]!.articulated),
    objects: [...objects].sort(),
    agents,
    collapsed,
  };
}
