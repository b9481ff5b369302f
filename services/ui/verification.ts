// Verification in the background, with `verify`'s semantics: each episode goes through the same
// worker (services/kernel/verifyTreeWorker.ts, the full verifyEpisode) on one worker thread, so a
// long replay never blocks the server's event loop. Results arrive one by one as they finish.
import { runOnPool } from "../../infra/pool.ts";
import type { TreeEntry } from "../kernel/verifyTree.ts";
import type { TreeTask } from "../kernel/verifyTreeWorker.ts";

export type VerifyState = "pending" | "ok" | "unfinished" | "not-started" | "diverged" | "damaged" | "error" | "not-replayed";

export interface VerifyStatus {
  readonly state: VerifyState;
  /** verify's own text for a failure, or its note for an unfinished or unstarted log. */
  readonly message: string | null;
  readonly records: number | null;
}

const PENDING: VerifyStatus = { state: "pending", message: null, records: null };

export function statusOfEntry(entry: TreeEntry): VerifyStatus {
  const records = entry.records;
  if (entry.exitCode === 3) return { state: "damaged", message: entry.problem, records };
  if (entry.exitCode === 1) return { state: "diverged", message: entry.problem, records };
  if (entry.exitCode === 4) return { state: "error", message: entry.problem, records };
  if (entry.notStarted !== null) return { state: "not-started", message: entry.notStarted, records };
  if (entry.unfinished !== null) return { state: "unfinished", message: entry.unfinished, records };
  return { state: "ok", message: null, records };
}

export class BackgroundVerification {
  private readonly results = new Map<string, VerifyStatus>();
  private readonly done: Promise<void>;
  /** Episodes added since the start, verified one after another once the first ones are. */
  private more: Promise<void>;

  /** `dirs` maps an episode's id to its directory; verification starts at once. */
  constructor(dirs: ReadonlyMap<string, string>, threads = 1) {
    const ids = [...dirs.keys()];
    const tasks = ids.map((id): TreeTask => ({ dir: dirs.get(id)!, snapshots: false }));
    this.done = runOnPool<TreeTask, TreeEntry>(new URL("../kernel/verifyTreeWorker.ts", import.meta.url), tasks, {
      threads,
      onResult: (entry, index) => this.results.set(ids[index]!, statusOfEntry(entry)),
    }).then(
      () => undefined,
      // A thread that dies leaves the rest as they are: shown as errors, never as verified.
      () => {
        for (const id of ids) if (!this.results.has(id)) this.results.set(id, { state: "error", message: "verification stopped: its worker thread failed", records: null });
      },
    );
    this.more = this.done;
  }

  /** Verifies one more episode (a fork made from the dashboard) after those already queued. */
  add(id: string, dir: string): void {
    this.results.delete(id);
    this.more = this.more.then(() =>
      runOnPool<TreeTask, TreeEntry>(new URL("../kernel/verifyTreeWorker.ts", import.meta.url), [{ dir, snapshots: false }], {
        threads: 1,
        onResult: (entry) => this.results.set(id, statusOfEntry(entry)),
      }).then(
        () => undefined,
        () => void this.results.set(id, { state: "error", message: "verification stopped: its worker thread failed", records: null }),
      ),
    );
  }

  status(id: string): VerifyStatus {
    return this.results.get(id) ?? PENDING;
  }

  /** Resolves when every episode has its result (tests wait on it; the server never does). */
  settled(): Promise<void> {
    return this.more;
  }
}
