// "Fork here" from the dashboard: a request to fork an episode after one of its committed ticks
// under a condition, checked field by field (each refusal names its field), run through the
// kernel's own `forkEpisode` (on a worker thread) into a new directory below the runs folder's
// `forks/`. The only request of the dashboard that writes: it creates the child, changes no file.
import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { runOnPool } from "../../infra/pool.ts";
import { forkTicks } from "../kernel/episodes.ts";
import { headerOf, type EpisodeHeader } from "../kernel/replay.ts";
import { UsageError } from "../kernel/usageError.ts";
import type { ForkAnswer, ForkTask } from "./forkWorker.ts";
import type { LoadedLog } from "./records.ts";

export interface ForkRequest {
  readonly id: string;
  readonly atTick: number;
  readonly condition: string;
}

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const FIELDS = ["id", "atTick", "condition"];

/** The request body's shape: an object with exactly these fields, of these types. */
export function parseForkRequest(body: unknown): Checked<ForkRequest> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, message: "the body must be a JSON object {id, atTick, condition}" };
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !FIELDS.includes(k));
  if (unknown.length > 0) return { ok: false, message: `unknown parameter ${unknown.map((k) => `'${k}'`).join(", ")}; this endpoint takes id, atTick, condition` };
  const { id, atTick, condition } = fields;
  if (typeof id !== "string" || id === "") return { ok: false, message: "id: the episode to fork (its path below the runs folder) is required" };
  if (typeof atTick !== "number" || !Number.isSafeInteger(atTick) || atTick < 0) return { ok: false, message: `atTick: ${JSON.stringify(atTick ?? null)} is not a tick (an integer ≥ 0)` };
  if (typeof condition !== "string" || condition === "") return { ok: false, message: "condition: the child's condition is required" };
  return { ok: true, value: { id, atTick, condition } };
}

/** The request against the parent's log: a tick it has committed, a condition its world has, a tick left after it. */
export function checkAgainstLog(request: ForkRequest, log: LoadedLog, dir: string): Checked<EpisodeHeader> {
  if (log.damage !== null) return { ok: false, message: `id: '${request.id}' has a damaged log (${log.damage}); a damaged log is not forked` };
  let header: EpisodeHeader;
  try {
    header = headerOf(log.records, dir);
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, message: `id: ${error.message}` };
    throw error;
  }
  const committed = log.records.filter((r) => r.type === "tick.committed").map((r) => r.tick);
  if (!committed.includes(request.atTick)) {
    const held = committed.length === 0 ? "none" : `${committed[0]}–${committed.at(-1)}`;
    const earlier = header.kind === "forked" && request.atTick < header.firstTick ? `; ticks up to ${header.firstTick - 1} are in its parent's log: fork the parent there` : "";
    return { ok: false, message: `atTick: '${request.id}' has no committed tick ${request.atTick} (its committed ticks: ${held})${earlier}` };
  }
  const conditions = Object.keys(header.world.conditions);
  if (!conditions.includes(request.condition)) return { ok: false, message: `condition: ${header.world.name} has no condition '${request.condition}' (it has ${conditions.join(", ")})` };
  try {
    header.world.applyCondition(header.baseConfig, request.condition);
    forkTicks(header, request.atTick, undefined);
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, message: `atTick ${request.atTick}, condition ${request.condition}: ${error.message}` };
    throw error;
  }
  return { ok: true, value: header };
}

/** Whether `path` (or, while it does not exist, its nearest existing folder) resolves below `root`. */
function resolvesBelow(root: string, path: string): boolean {
  let existing = path;
  while (!existsSync(existing)) existing = dirname(existing);
  const rel = relative(realpathSync(root), realpathSync(existing));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The child's directory: `forks/<parent episode>~t<tick>-<condition>` below the runs folder, suffixed when taken. */
export function childDir(root: string, header: EpisodeHeader, request: ForkRequest): Checked<string> {
  const base = join(root, "forks", `${header.episode}~t${request.atTick}-${request.condition}`);
  let dir = base;
  for (let n = 2; existsSync(dir); n++) dir = `${base}-${n}`;
  // `forks/` could be a symbolic link out of the folder: the child would then be written elsewhere.
  if (!resolvesBelow(root, dir)) return { ok: false, message: "id: the runs folder's forks/ resolves outside it (a symbolic link); no fork is written there" };
  return { ok: true, value: dir };
}

/** Runs the fork on a worker thread (forkWorker.ts), the server's event loop left free meanwhile. */
export async function runFork(parentDir: string, request: ForkRequest, dir: string): Promise<ForkAnswer> {
  const [answer] = await runOnPool<ForkTask, ForkAnswer>(new URL("./forkWorker.ts", import.meta.url), [{ parentDir, atTick: request.atTick, condition: request.condition, dir }], { threads: 1 });
  return answer!;
}
