// Output paths given by flags (or spec fields), checked before any work: a file where a directory
// is wanted surfaced as Node's own ENOTDIR/EEXIST after the work (`mkdir '/tmp/x/implicit…'`),
// naming neither the flag nor what was expected.
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../kernel/replay.ts";

/** `--out <file>` for a JSON document: not a directory, and its directory exists. */
export function checkOutFile(out: string | undefined): void {
  if (out === undefined) return;
  if (existsSync(out) && statSync(out).isDirectory()) throw new UsageError(`--out ${out}: is a directory; expected a file for the outcomes JSON`);
  if (!existsSync(dirname(resolve(out)))) throw new UsageError(`--out ${out}: its directory does not exist`);
}

/**
 * A directory that a command creates if missing (`--out <dir>`, `--log <dir>`, a spec's `out`):
 * neither it nor a folder above it may be a file. `named` is the flag or field as the user gave it,
 * `what` what the directory is for.
 */
export function checkOutDir(dir: string, named: string, what: string): void {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (existsSync(at)) {
      if (statSync(at).isDirectory()) return;
      const where = at === resolve(dir) ? "is a file" : `${at} is a file, not a folder`;
      throw new UsageError(`${named}: ${where}; expected a directory for ${what} (created if missing)`);
    }
    if (dirname(at) === at) return;
  }
}
