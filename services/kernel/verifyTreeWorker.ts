// A `verify <dir>` pool task (infra/pool.ts): verifies one episode directory and answers with its
// entry; a log that cannot be checked is an entry too (exit code 4), never a thrown error.
import { loadWorlds } from "../worlds.ts";
import { verifyEpisode } from "./verify.ts";
import type { TreeEntry } from "./verifyTree.ts";

// A thread of its own: the build's worlds are registered here too, before any log is read.
await loadWorlds();

export default async function verifyTreeEntry(dir: string): Promise<TreeEntry> {
  try {
    const report = await verifyEpisode(dir);
    return { dir, exitCode: report.exitCode, problem: report.ok ? null : report.text, unfinished: report.unfinished ?? null, notStarted: report.notStarted ?? null, records: report.records };
  } catch (error) {
    return { dir, exitCode: 4, problem: `could not be checked: ${error instanceof Error ? error.message : String(error)}`, unfinished: null, notStarted: null, records: 0 };
  }
}
