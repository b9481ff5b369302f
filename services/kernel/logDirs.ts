// Finding the episode logs a run or sweep left under a folder (the model-run records read them all).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every episode log under `dir` (a folder holding `log/`, at any depth), in name order, depth-first. */
export function logDirsUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (!statSync(p).isDirectory()) continue;
    if (name === "log") out.push(p);
    else out.push(...logDirsUnder(p));
  }
  return out;
}
