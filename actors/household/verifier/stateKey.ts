// A physical state of an abstraction packed into one integer (digest §8.6 step 3), mixed radix:
// each agent's room, each relevant object's place (a piece of furniture, or an agent's hand), each
// articulated piece's open bit. Only what the abstraction keeps is packed; messages and done flags
// play no part in the physical search.
import type { HouseState, Loc } from "../rules.ts";
import type { Abstraction } from "./relevance.ts";

export interface StateCodec {
  readonly encode: (s: HouseState) => number;
  readonly decode: (key: number) => HouseState;
  /** The number of packed states (an upper bound on the reachable ones). */
  readonly size: number;
}

export function stateCodec(abs: Abstraction): StateCodec {
  const rooms = abs.compiled.task.scene.rooms;
  const { agents, objects, articulated, furniture } = abs;
  const F = furniture.length;
  const places = F + agents.length;
  const roomIndex = new Map(rooms.map((r, i) => [r, i]));
  const placeIndex = new Map<string, number>([...furniture.map((f, i) => [f, i] as const), ...agents.map((a, i) => [a, F + i] as const)]);
  const isArticulated = furniture.map((f) => abs.compiled.task.scene.furniture[f]!.articulated);
  const size = rooms.length ** agents.length * places ** objects.length * 2 ** articulated.length;
  return {
    size,
    encode(s) {
      let key = 0;
      for (const a of agents) key = key * rooms.length + roomIndex.get(s.agents[a]!.room)!;
      for (const o of objects) {
        const loc = s.objects[o]!;
        key = key * places + placeIndex.get("on" in loc ? loc.on : "inside" in loc ? loc.inside : loc.heldBy)!;
      }
      for (const f of articulated) key = key * 2 + (s.open[f] === true ? 1 : 0);
      return key;
    },
    decode(key) {
      const open: Record<string, boolean> = {};
      for (let i = articulated.length - 1; i >= 0; i--) {
        open[articulated[i]!] = key % 2 === 1;
        key = Math.floor(key / 2);
      }
      const locs: Record<string, Loc> = {};
      const holding: Record<string, string | null> = {};
      for (const a of agents) holding[a] = null;
      for (let i = objects.length - 1; i >= 0; i--) {
        const p = key % places;
        key = Math.floor(key / places);
        if (p >= F) {
          locs[objects[i]!] = { heldBy: agents[p - F]! };
          holding[agents[p - F]!] = objects[i]!;
        } else locs[objects[i]!] = isArticulated[p] ? { inside: furniture[p]! } : { on: furniture[p]! };
      }
      const agentStates: HouseState["agents"] = {};
      for (let i = agents.length - 1; i >= 0; i--) {
        agentStates[agents[i]!] = { room: rooms[key % rooms.length]!, holding: holding[agents[i]!]!, done: false, msgsSent: 0 };
        key = Math.floor(key / rooms.length);
      }
      return { open, objects: locs, agents: agentStates };
    },
  };
}
