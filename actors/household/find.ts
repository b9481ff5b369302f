// The paper's Find tools (digest §4.3: FindObjectTool, FindReceptacleTool, FindRoomTool[query]),
// answered as the digest's TextHouse proposes (§8.3, §8.4): from the asking agent's own knowledge
// base and the public layout, by a deterministic match of ids and kinds — not by a model, as the
// release does. A query matches an entity when it names its id or its kind (the id without its
// number: `cup_46` is a cup, `living_room_1` a living room), singular or plural; when it also names
// a room, only entities in that room are kept. Pure.
import type { Kb, PublicLayout } from "./knowledge.ts";
import type { FindTool } from "./rules.ts";

/** The kind an id names: `cup_46` → `cup`, `living_room_1` → `living_room`. */
export const kindOfId = (id: string): string => id.replace(/_\d+$/, "");

const words = (query: string): string => ` ${query.toLowerCase().replace(/[^a-z0-9_]+/g, " ").trim()} `;

/** Whether the query names this id or its kind (underscores or spaces, singular or plural). */
function names(q: string, id: string, kind = kindOfId(id)): boolean {
  const k = kind.toLowerCase();
  const forms = [id.toLowerCase(), k, k.replace(/_/g, " "), `${k}s`, `${k.replace(/_/g, " ")}s`, `${k}es`];
  return forms.some((f) => q.includes(` ${f} `));
}

export interface FindResult {
  readonly id: string;
  readonly detail: string;
}

const placeText = (p: Kb["loc"][string]): string => ("on" in p ? `on ${p.on}` : "inside" in p ? `inside ${p.inside}` : `held by ${p.heldBy}`);

/** The tool's answer: the matching ids in id order, each with what this agent knows of it. */
export function findInKb(kb: Kb, layout: PublicLayout, tool: FindTool, query: string): FindResult[] {
  const q = words(query);
  const room = layout.rooms.find((r) => names(q, r));
  const roomOfFurniture = (f: string) => layout.furniture[f]?.room;
  switch (tool) {
    case "room":
      return [...layout.rooms].sort().filter((r) => names(q, r)).map((r) => ({ id: r, detail: `furniture: ${Object.keys(layout.furniture).sort().filter((f) => roomOfFurniture(f) === r).join(", ") || "none"}` }));
    case "receptacle":
      return Object.keys(layout.furniture).sort().filter((f) => names(q, f, layout.furniture[f]!.kind) && (room === undefined || roomOfFurniture(f) === room)).map((f) => {
        const info = layout.furniture[f]!;
        const state = info.articulated ? (kb.open[f] === undefined ? ", open/closed unknown" : kb.open[f] ? ", open" : ", closed") : "";
        const holds = Object.keys(kb.loc).sort().filter((o) => { const p = kb.loc[o]!; return ("on" in p && p.on === f) || ("inside" in p && p.inside === f); });
        return { id: f, detail: `${info.kind} in ${info.room}${state}${holds.length === 0 ? "" : `; holds ${holds.join(", ")}`}` };
      });
    case "object":
      return Object.keys(kb.loc).sort().filter((o) => {
        const p = kb.loc[o]!;
        const r = "heldBy" in p ? undefined : roomOfFurniture("on" in p ? p.on : p.inside);
        return names(q, o) && (room === undefined || r === room);
      }).map((o) => {
        const p = kb.loc[o]!;
        const r = "heldBy" in p ? undefined : roomOfFurniture("on" in p ? p.on : p.inside);
        return { id: o, detail: `${placeText(p)}${r === undefined ? "" : ` in ${r}`}` };
      });
  }
}

/** The answer as the agent's observation says it. */
export const foundText = (results: readonly FindResult[]): string => (results.length === 0 ? "Found nothing you know of." : `Found: ${results.map((r) => `${r.id} (${r.detail})`).join("; ")}.`);
