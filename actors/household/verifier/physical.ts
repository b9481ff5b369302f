// Stage 3 of the verifier (digest §8.6): breadth-first search over sequential single-agent actions
// on the relevance abstraction, with rules.ts's `applyAction` as the successor function — the same
// semantics the episode runs, mechanics included. Expansion order: agents sorted, then action
// strings sorted, so a plan is deterministic and (being breadth-first) shortest. One search can look
// for several goals at once (the functional projection and strip_K(φ)); each gets the first state
// that satisfies it.
import { applyAction, formatAction, holds, type Action, type HouseState } from "../rules.ts";
import type { Literal } from "../pddl.ts";
import type { Abstraction } from "./relevance.ts";
import { stateCodec } from "./stateKey.ts";

export interface Step {
  readonly agent: string;
  readonly action: Action;
  readonly text: string;
}

export interface PhysicalSearch {
  /** Per goal asked, the shortest plan, or null when none exists (or the cap was hit first). */
  readonly plans: readonly (readonly Step[] | null)[];
  readonly nodes: number;
  readonly capped: boolean;
}

export const NODE_CAP = 2_000_000;

export interface SearchOptions {
  /** The agents that may act (default: all); the rest are frozen. */
  readonly actors?: readonly string[];
  readonly cap?: number;
}

/** The physical state space of an abstraction: its start, and each state's successors in expansion order. */
export interface PhysicalSpace {
  readonly start: number;
  readonly decode: (key: number) => HouseState;
  /** Calls `visit` with each successor (key, the step, the state after it) until it returns true. */
  readonly expand: (key: number, visit: (next: number, step: Step, state: HouseState) => boolean) => void;
}

export function physicalSpace(abs: Abstraction, actors: readonly string[] = abs.agents): PhysicalSpace {
  const c = abs.compiled;
  const codec = stateCodec(abs);
  const sortedActors = [...actors].sort();
  const { furniture } = c.task.scene;
  const menus = new Map<string, Step[]>();
  // The actions worth trying for an agent in a room holding something (failing ones are skipped).
  const menu = (agent: string, room: string, holding: string | null): Step[] => {
    const id = `${agent}|${room}|${holding}`;
    let list = menus.get(id);
    if (list !== undefined) return list;
    const actions: Action[] = [];
    for (const r of abs.rooms) if (r !== room) actions.push({ kind: "navigate", target: r });
    for (const f of abs.articulated)
      if (furniture[f]!.room === room) {
        actions.push({ kind: "open", target: f });
        actions.push({ kind: "close", target: f });
      }
    if (holding === null) for (const o of abs.objects) actions.push({ kind: "pick", target: o });
    else for (const f of abs.furniture) if (furniture[f]!.room === room) actions.push({ kind: "place", target: holding, relation: furniture[f]!.articulated ? "within" : "on", furniture: f });
    list = actions.map((action) => ({ agent, action, text: formatAction(action) })).sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
    menus.set(id, list);
    return list;
  };
  return {
    start: codec.encode(initialAbstractState(abs)),
    decode: codec.decode,
    expand(key, visit) {
      const here = codec.decode(key);
      for (const agent of sortedActors) {
        const me = here.agents[agent]!;
        for (const step of menu(agent, me.room, me.holding)) {
          const s = codec.decode(key);
          if (!applyAction(c, s, agent, step.action).ok) continue;
          if (visit(codec.encode(s), step, s)) return;
        }
      }
    },
  };
}

export function searchPlans(abs: Abstraction, goals: readonly (readonly Literal[])[], options: SearchOptions = {}): PhysicalSearch {
  const c = abs.compiled;
  const space = physicalSpace(abs, options.actors ?? abs.agents);
  const cap = options.cap ?? NODE_CAP;
  const parent = new Map<number, number>([[space.start, -1]]);
  const via = new Map<number, Step>();
  const found: (number | null)[] = goals.map(() => null);
  const check = (key: number, s: HouseState) => {
    goals.forEach((g, i) => {
      if (found[i] === null && g.every((l) => holds(c, s, l))) found[i] = key;
    });
    return found.every((x) => x !== null);
  };
  let done = check(space.start, space.decode(space.start));
  const queue = [space.start];
  let capped = false;
  for (let head = 0; !done && head < queue.length; head++) {
    const key = queue[head]!;
    space.expand(key, (next, step, s) => {
      if (parent.has(next)) return false;
      parent.set(next, key);
      via.set(next, step);
      queue.push(next);
      if (check(next, s)) done = true;
      else if (parent.size >= cap) done = capped = true;
      return done;
    });
  }
  const planTo = (key: number | null): Step[] | null => {
    if (key === null) return null;
    const steps: Step[] = [];
    for (let k = key; parent.get(k)! !== -1; k = parent.get(k)!) steps.push(via.get(k)!);
    return steps.reverse();
  };
  return { plans: found.map(planTo), nodes: parent.size, capped };
}

/** The abstraction's start: the task's initial state over the kept ids. */
function initialAbstractState(abs: Abstraction): HouseState {
  const { scene, agents } = abs.compiled.task;
  const open: Record<string, boolean> = {};
  for (const f of abs.articulated) open[f] = scene.furniture[f]!.open === true;
  const objects: Record<string, { on: string } | { inside: string }> = {};
  for (const o of abs.objects) objects[o] = scene.objects[o]!.on !== undefined ? { on: scene.objects[o]!.on! } : { inside: scene.objects[o]!.inside! };
  return { open, objects, agents: Object.fromEntries(abs.agents.map((a) => [a, { room: agents[a]!.room, holding: null, done: false, msgsSent: 0 }])) };
}
