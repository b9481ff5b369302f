// The episodes list, live: the runs folder is watched (recursively: inotify on Linux) while a browser
// listens, and each burst of changes becomes one `changed` event — the episodes that appeared (a new
// episode directory, found by walking the folder again only when a change lies outside every known
// episode) and the known ones whose files changed. The browser then asks for the list again. A look
// every few seconds finds new episodes where the file system reports no change (as fileFollow.ts).
// A sweep's progress file (services/kernel/sweepProgressFile.ts) that changes is a change too: the
// list shows each worker's progress from it.
import { watch, type FSWatcher } from "node:fs";
import { SWEEP_PROGRESS_FILE } from "../kernel/sweepProgressFile.ts";

/** Changes closer together than this are one event. */
const BURST_MS = 250;
/** How often the folder is walked again when its watch reports nothing. */
const FALLBACK_LOOK_MS = 5000;

export interface CatalogueChange {
  /** Episodes that appeared since the last event. */
  readonly added: readonly string[];
  /** Known episodes whose files changed (a log appended to, a run finished). */
  readonly changed: readonly string[];
  /** Folders whose sweep progress file changed (a sweep's workers reported). */
  readonly sweeps?: readonly string[];
}

export interface CatalogueWatchHooks {
  /** Whether `id` is a known episode's. */
  isEpisode(id: string): boolean;
  /** Walks the folder for episodes not known yet, adds them and returns their ids. */
  rescan(): string[];
  /** Told once per burst that found something. */
  emit(change: CatalogueChange): void;
}

/** The known episode a changed path lies in (its id is one of the path's leading parts), if any. */
function ownerOf(path: string, isEpisode: (id: string) => boolean): string | undefined {
  const parts = path.split("/");
  for (let n = 1; n <= parts.length; n++) {
    const id = parts.slice(0, n).join("/");
    if (isEpisode(id)) return id;
  }
  return undefined;
}

/** Starts watching `root`; returns the function that stops it. */
export function watchCatalogue(root: string, hooks: CatalogueWatchHooks): () => void {
  const changed = new Set<string>();
  const sweeps = new Set<string>();
  let walk = false;
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    timer = null;
    const added = walk ? hooks.rescan() : [];
    walk = false;
    const touched = [...changed];
    changed.clear();
    const progressed = [...sweeps];
    sweeps.clear();
    if (added.length > 0 || touched.length > 0 || progressed.length > 0) hooks.emit({ added, changed: touched, ...(progressed.length > 0 ? { sweeps: progressed } : {}) });
  };
  const soon = (): void => {
    timer ??= setTimeout(flush, BURST_MS);
  };
  const onEvent = (_event: string, filename: string | Buffer | null): void => {
    const path = filename === null ? null : String(filename).split("\\").join("/");
    const owner = path === null ? undefined : ownerOf(path, hooks.isEpisode);
    if (path !== null && (path === SWEEP_PROGRESS_FILE || path.endsWith(`/${SWEEP_PROGRESS_FILE}`))) sweeps.add(path.slice(0, -SWEEP_PROGRESS_FILE.length - 1) || ".");
    else if (owner === undefined) walk = true;
    else changed.add(owner);
    soon();
  };
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(root, { recursive: true, persistent: false }, onEvent);
    watcher.on("error", () => {
      walk = true;
      soon();
    });
  } catch {
    // No recursive watch here: the fallback's looks find new episodes.
  }
  const fallback = setInterval(() => {
    walk = true;
    soon();
  }, FALLBACK_LOOK_MS);
  fallback.unref();
  // Episodes that appeared while nobody listened are found at once.
  walk = true;
  soon();
  return () => {
    watcher?.close();
    clearInterval(fallback);
    if (timer !== null) clearTimeout(timer);
  };
}
