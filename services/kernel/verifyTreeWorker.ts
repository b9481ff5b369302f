// A `verify <dir>` pool task (infra/pool.ts): verifies one episode directory and answers with its
// entry; a log that cannot be checked is an entry too (exit code 4), never a thrown error.
import { exitCodeFor } from "../cli/exitCodes.ts";
import { loadWorlds } from "../worlds.ts";
import { verifyEpisode } from "./verify.ts";
import type { TreeEntry } from "./verifyTree.ts";

// A thread of its own: the build's worlds are registered here too, before any log is read.
await loadWorlds();

/** One episode directory to verify (`snapshots`: its snapshot files too, as `verify --snapshots`; `chainOnly`: as `verify --chain-only`). */
export interface TreeTask {
  readonly dir: string;
  readonly snapshots: boolean;
  readonly chainOnly?: boolean;
}

export default async function verifyTreeEntry({ dir, snapshots, chainOnly }: TreeTask): Promise<TreeEntry> {
  try {
    // One thread an episode: the pool already runs an episode on each core.
    const report = await verifyEpisode(dir, { snapshots, chainOnly: chainOnly === true, threads: 1 });
    return { dir, exitCode: report.exitCode, problem: report.ok ? null : report.text, unfinished: report.unfinished ?? null, notStarted: report.notStarted ?? null, records: report.records };
  } catch (error) {
    // A fork whose base snapshot and parent are both gone is the user's to fix (exit 2, as `verify` of it alone), not an internal error.
    const code = exitCodeFor(error);
    return { dir, exitCode: code === 2 || code === 3 ? code : 4, problem: `could not be checked: ${error instanceof Error ? error.message : String(error)}`, unfinished: null, notStarted: null, records: 0 };
  }
}
