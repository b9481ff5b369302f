// `verify --snapshots`: every snapshot file of an episode directory, read as resume and fork read
// one (valid JSON, stored under its own state hash) and rehashed from its actors' states, so a
// damaged snapshot is found before a resume or fork would refuse it.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SnapshotDamaged } from "../../events/errors.ts";
import { messageOf } from "../../events/errorMessage.ts";
import { FileSnapshotStore, SNAPSHOT_KEY } from "../../infra/snapshotStore.ts";
import { shownPath } from "../views/text.ts";
import { snapshotActors, type EpisodeHeader } from "./replay.ts";

/** A snapshot file that would be refused: its path and why. */
export interface DamagedSnapshot {
  readonly file: string;
  readonly reason: string;
}

export interface SnapshotsChecked {
  readonly checked: number;
  readonly damaged: readonly DamagedSnapshot[];
}

/**
 * Checks every `<state hash>.json` in `dir` (an episode's snapshots/ folder) against `header`'s
 * world: a snapshot of another episode is damaged here too, as resume never uses one.
 */
export async function checkSnapshotFiles(dir: string, header: EpisodeHeader): Promise<SnapshotsChecked> {
  if (!existsSync(dir)) return { checked: 0, damaged: [] };
  const keys = readdirSync(dir)
    .filter((name) => name.endsWith(".json") && SNAPSHOT_KEY.test(name.slice(0, -5)))
    .map((name) => name.slice(0, -5))
    .sort();
  const store = new FileSnapshotStore(dir);
  const damaged: DamagedSnapshot[] = [];
  for (const key of keys) {
    const file = shownPath(join(dir, `${key}.json`));
    try {
      const snapshot = await store.get(key);
      if (snapshot === null) continue; // removed while listed
      if (snapshot.episode !== header.episode) {
        damaged.push({ file, reason: `is a snapshot of episode ${String(snapshot.episode)}, not ${header.episode}` });
        continue;
      }
      // Its own condition: a check of the stored state, not of a fork into another condition.
      snapshotActors(header.world, snapshot, header.config, header.seed, snapshot.condition, { where: file });
    } catch (error) {
      // Content no actor restores from (a field of the wrong type) is damage too, not an internal error.
      damaged.push({ file, reason: error instanceof SnapshotDamaged ? error.reason : `cannot be restored (${messageOf(error)})` });
    }
  }
  return { checked: keys.length, damaged };
}
