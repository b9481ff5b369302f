// A lock file naming the process that holds it: taken with an exclusive create, taken over when its
// holder has died (a killed run leaves it behind), refused while the holder lives. Used for a log's
// single writer and for an experiment's output directory.
import { readFileSync, rmSync, writeFileSync } from "node:fs";

export interface PidLock {
  /** Removes the lock file (when this process took it; a re-entrant take leaves it to the outer one). */
  release(): void;
}

/** The pid `path` names, alive or not, or null (no lock file, or not a pid). */
export function lockedBy(path: string): number | null {
  let owner: number;
  try {
    owner = Number(readFileSync(path, "utf8").trim());
  } catch {
    return null;
  }
  return Number.isSafeInteger(owner) && owner > 0 ? owner : null;
}

/** The pid in `path` when that process is alive, else null (no lock, or a stale one). */
export function liveHolder(path: string): number | null {
  let owner: number;
  try {
    owner = Number(readFileSync(path, "utf8").trim());
  } catch {
    return null;
  }
  if (!Number.isSafeInteger(owner) || owner <= 0) return null;
  try {
    process.kill(owner, 0);
    return owner;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? owner : null;
  }
}

/**
 * Takes the lock at `path`, or returns the pid of the live process that holds it. `reentrant`: this
 * process holding it already counts as taken (nested steps of one run), not as held by another.
 */
export function takePidLock(path: string, options: { readonly reentrant?: boolean } = {}): PidLock | { readonly heldBy: number } {
  try {
    writeFileSync(path, `${process.pid}\n`, { flag: "wx" });
  } catch {
    const holder = liveHolder(path);
    if (holder === process.pid && options.reentrant === true) return { release: () => {} };
    if (holder !== null) return { heldBy: holder };
    // The previous holder died without releasing; its lock is stale.
    writeFileSync(path, `${process.pid}\n`);
  }
  return { release: () => rmSync(path, { force: true }) };
}
