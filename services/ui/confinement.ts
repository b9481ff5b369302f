// What keeps the dashboard inside its runs folder on disk: an episode is read only while its
// directory, its log folder and every segment resolve (symlinks followed) below the folder. A
// symlink pointing out of it makes the episode unreadable, never a way to read another file.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, relative, isAbsolute } from "node:path";
import { segmentFiles } from "../../infra/fileEventStore.ts";

const below = (realRoot: string, path: string): boolean => {
  const rel = relative(realRoot, realpathSync(path));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/** Whether the episode at `dir` reads only files below `root` (its real path, symlinks resolved). */
export function confined(root: string, dir: string): boolean {
  try {
    const realRoot = realpathSync(root);
    const logDir = join(dir, "log");
    if (!existsSync(logDir)) return below(realRoot, dir);
    return below(realRoot, dir) && below(realRoot, logDir) && segmentFiles(logDir).every((file) => below(realRoot, file));
  } catch {
    // A dangling link, or a file gone between listing and resolving: nothing to read.
    return false;
  }
}

/** A regular file at `name` below `root` that resolves below it (a symbolic link out of it is not read). */
export function confinedFile(root: string, name: string): boolean {
  try {
    const path = join(root, name);
    return statSync(path).isFile() && relative(realpathSync(root), realpathSync(path)) !== "" && below(realpathSync(root), path);
  } catch {
    return false;
  }
}

/**
 * A JSON file below `root` read through `parse`, again only when its size or time changed; a file
 * that is no JSON, or that `parse` does not know, is null. One cache per parser.
 */
export function cachedJsonReader<T>(parse: (name: string, body: unknown) => T | null): (root: string, name: string) => T | null {
  const cache = new Map<string, { key: string; value: T | null }>();
  return (root, name) => {
    const path = join(root, name);
    const s = statSync(path);
    const key = `${s.size}:${s.mtimeMs}`;
    const hit = cache.get(path);
    if (hit?.key === key) return hit.value;
    let value: T | null;
    try {
      value = parse(name, JSON.parse(readFileSync(path, "utf8")));
    } catch {
      value = null;
    }
    cache.set(path, { key, value });
    return value;
  };
}
