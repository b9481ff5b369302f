// AURATown's view in `probetown ui`: the episode's own map (from its header's config) and where
// each resident is at each tick, from the `location.occupancy` records.
import type { LogRecord } from "../../../events/record.ts";
import type { WorldUi } from "../../kernel/worldModule.ts";
import type { Location } from "../../../actors/auratown/town.ts";

type MapPlace = Pick<Location, "name" | "type" | "x" | "y" | "width" | "height">;

interface Occupant {
  readonly agent: string;
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly action: string;
}

export interface TownFrame {
  readonly tick: number;
  readonly residents: readonly (Occupant & { readonly place: string | null })[];
}

export interface TownViewData {
  readonly width: number;
  readonly height: number;
  readonly places: readonly MapPlace[];
  readonly frames: readonly TownFrame[];
}

export function townViewData(records: readonly LogRecord[]): TownViewData {
  const header = records[0]?.payload as { config?: { map?: { width: number; height: number; locations: MapPlace[] } } } | undefined;
  const map = header?.config?.map ?? { width: 0, height: 0, locations: [] };
  // Each tick's last word on each resident wins (an occupancy record per place it was seen in).
  const byTick = new Map<number, Map<string, Occupant & { place: string | null }>>();
  for (const r of records) {
    if (r.type !== "location.occupancy") continue;
    const payload = r.payload as { location: string | null; occupants: Occupant[] };
    const frame = byTick.get(r.tick) ?? new Map();
    byTick.set(r.tick, frame);
    for (const o of payload.occupants) frame.set(o.agent, { agent: o.agent, name: o.name, x: o.x, y: o.y, action: o.action, place: payload.location });
  }
  const frames = [...byTick.entries()].sort(([a], [b]) => a - b).map(([tick, residents]) => ({ tick, residents: [...residents.values()].sort((a, b) => (a.agent < b.agent ? -1 : 1)) }));
  return { width: map.width, height: map.height, places: map.locations.map(({ name, type, x, y, width, height }) => ({ name, type, x, y, width, height })), frames };
}

export const townUi: WorldUi = {
  label: "Town replay",
  data: townViewData,
  script: new URL("./townView.js", import.meta.url),
};
