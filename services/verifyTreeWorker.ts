// A `verify <dir>` worker thread: verifies one episode directory per message and answers with its entry.
import { parentPort } from "node:worker_threads";
import { verifyEpisode } from "./verify.ts";
import type { TreeEntry } from "./verifyTree.ts";

parentPort!.on("message", (dir: string) => {
  verifyEpisode(dir).then(
    (report): void => parentPort!.postMessage({ dir, exitCode: report.exitCode, problem: report.ok ? null : report.text, unfinished: report.unfinished ?? null, notStarted: report.notStarted ?? null, records: report.records } satisfies TreeEntry),
    (error: unknown): void => parentPort!.postMessage({ dir, exitCode: 4, problem: `could not be checked: ${error instanceof Error ? error.message : String(error)}`, unfinished: null, notStarted: null, records: 0 } satisfies TreeEntry),
  );
});
