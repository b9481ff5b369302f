// What keeps the dashboard inside its runs folder on disk: an episode is read only while its
// directory, its log folder and every segment resolve (symlinks followed) below the folder. A
// symlink pointing out of it makes the episode unreadable, never a way to read another file.
import { existsSync, realpathSync } from "node:fs";
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
