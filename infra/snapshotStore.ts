// Snapshot store (DESIGN §6): episode snapshots stored by key (the tick's state hash). The file
// implementation writes atomically (temp file, then rename) so a crash never leaves half a snapshot.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SnapshotDamaged } from "../events/errors.ts";
import { messageOf } from "../events/errorMessage.ts";

export interface EpisodeSnapshot {
  readonly world: string;
  readonly episode: string;
  readonly seed: number;
  readonly condition: string;
  /** The world config before the condition is applied (as in the episode header). */
  readonly config: unknown;
  readonly tick: number;
  /** Seq of the `tick.committed` record this snapshot was taken at. */
  readonly seq: number;
  readonly headHash: string;
  readonly stateHash: string;
  readonly parts: Readonly<Record<string, string>>;
  readonly actors: Readonly<Record<string, unknown>>;
}

export interface SnapshotStore {
  readonly location: string;
  put(snapshot: EpisodeSnapshot): Promise<string>;
  get(key: string): Promise<EpisodeSnapshot | null>;
  has(key: string): Promise<boolean>;
  /** Key of the most recently put snapshot (highest tick) of this store's episode, or null. */
  latest(): Promise<string | null>;
}

const LATEST = "latest.json";

/**
 * An actor's persisted snapshot, serialised once by its host at the snapshot's tick (actors keep
 * mutating their context afterwards, so it must be copied then). A 1,000-agent town's actors are
 * tens of MB: copying them with stringify + parse and serialising the copy again to store it took
 * ~1 s of a 1,000-agent day; the stores write this text as is (see snapshotJson).
 */
export class SerializedActor {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
  /** Any other serialiser, and JSON round trips, see the snapshot itself. */
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}

/**
 * The JSON text of a snapshot in pieces, with already serialised actors spliced in: joined, the
 * same text as JSON.stringify of the whole.
 */
function* snapshotJsonPieces(snapshot: EpisodeSnapshot): Generator<string> {
  const { actors, ...envelope } = snapshot;
  const head = JSON.stringify(envelope);
  yield `${head.slice(0, -1)}${head === "{}" ? "" : ","}"actors":{`;
  let first = true;
  for (const [id, actor] of Object.entries(actors)) {
    const json = actor instanceof SerializedActor ? actor.json : JSON.stringify(actor);
    if (json === undefined) continue;
    yield `${first ? "" : ","}${JSON.stringify(id)}:${json}`;
    first = false;
  }
  yield "}}";
}

/** The JSON text of a snapshot, with already serialised actors spliced in (same text as JSON.stringify). */
export function snapshotJson(snapshot: EpisodeSnapshot): string {
  return [...snapshotJsonPieces(snapshot)].join("");
}

/**
 * Writes `snapshotJson(snapshot)` to a new file a few hundred KB at a time: a 1,000-agent town's
 * snapshot is ~24 MB of text, and joining it into one string (two-byte as soon as one memory
 * holds a non-Latin-1 character) and encoding that whole was ~100 MB of garbage at each snapshot.
 */
function writeSnapshotFile(path: string, snapshot: EpisodeSnapshot): void {
  const fd = openSync(path, "w");
  // writeFileSync on the descriptor writes all of each chunk (a lone writeSync may take only part
  // of it on a nearly full disk or under a file size limit, and the rest was dropped), so the
  // refusal comes as an error rather than a short, silently truncated file.
  const writeAll = (text: string): void => writeFileSync(fd, text);
  try {
    let pending = "";
    for (const piece of snapshotJsonPieces(snapshot)) {
      pending += piece;
      if (pending.length >= 256 * 1024) {
        writeAll(pending);
        pending = "";
      }
    }
    if (pending.length > 0) writeAll(pending);
  } finally {
    closeSync(fd);
  }
}

export class FileSnapshotStore implements SnapshotStore {
  readonly location: string;
  constructor(dir: string) {
    this.location = dir;
  }

  private pathOf(key: string): string {
    if (!/^[0-9a-f]{16,64}$/.test(key)) throw new Error(`snapshot key must be a hex hash, got '${key}'`);
    return join(this.location, `${key}.json`);
  }

  async put(snapshot: EpisodeSnapshot): Promise<string> {
    const key = snapshot.stateHash;
    const path = this.pathOf(key);
    if (existsSync(path)) {
      // Also on a re-put (a resumed run reaching a tick it had stored): a crash between the file
      // and `latest` must not leave `latest` behind, as the JetStream store does too.
      this.pointTo(snapshot);
      return key;
    }
    mkdirSync(this.location, { recursive: true });
    const temp = `${path}.tmp-${process.pid}`;
    try {
      writeSnapshotFile(temp, snapshot);
      renameSync(temp, path);
    } catch (error) {
      // A full disk leaves a partial temp file behind: remove it, keep the errno for the exit code.
      try {
        rmSync(temp, { force: true });
      } catch {
        // what is left is named by the error below
      }
      const e = error as NodeJS.ErrnoException;
      throw Object.assign(new Error(`${path}: could not store the snapshot of tick ${snapshot.tick} (${e.message}); the log is not affected`), { code: e.code });
    }
    this.pointTo(snapshot);
    return key;
  }

  async get(key: string): Promise<EpisodeSnapshot | null> {
    const path = this.pathOf(key);
    if (!existsSync(path)) return null;
    let snapshot: EpisodeSnapshot;
    try {
      snapshot = JSON.parse(readFileSync(path, "utf8")) as EpisodeSnapshot;
    } catch (error) {
      throw new SnapshotDamaged({ where: path, reason: `snapshot is not valid JSON (${messageOf(error)})` });
    }
    // A file is used only under its own state hash (as the JetStream store checks its objects): a
    // snapshot copied or renamed onto another key is refused, not restored as the state it names.
    if ((snapshot as { stateHash?: unknown } | null)?.stateHash !== key) {
      throw new SnapshotDamaged({ where: path, reason: `holds the snapshot of state ${String((snapshot as { stateHash?: unknown } | null)?.stateHash)}, not ${key}` });
    }
    return snapshot;
  }

  async has(key: string): Promise<boolean> {
    return existsSync(this.pathOf(key));
  }

  /** The `latest` pointer file moves forward only (a re-put of an older tick leaves it alone). */
  private pointTo(snapshot: EpisodeSnapshot): void {
    const pointer = join(this.location, LATEST);
    // An unreadable pointer is replaced: this snapshot is complete, and resuming needs a pointer.
    const current = existsSync(pointer) ? readPointer(pointer) : null;
    if (current !== null && current.tick > snapshot.tick) return;
    const temp = `${pointer}.tmp-${process.pid}`;
    writeFileSync(temp, JSON.stringify({ key: snapshot.stateHash, tick: snapshot.tick }));
    renameSync(temp, pointer);
  }

  async latest(): Promise<string | null> {
    const pointer = join(this.location, LATEST);
    if (!existsSync(pointer)) return null;
    const current = readPointer(pointer);
    if (current === null) throw new SnapshotDamaged({ where: pointer, reason: DAMAGED_POINTER });
    return current.key;
  }
}

/** The latest-snapshot pointer of a snapshots/ folder (its key and tick, without reading the snapshot), or null when there is none or it does not read. */
export const latestPointer = (dir: string): LatestPointer | null => {
  const pointer = join(dir, LATEST);
  return existsSync(pointer) ? readPointer(pointer) : null;
};

function readPointer(pointer: string): LatestPointer | null {
  try {
    return pointerOf(JSON.parse(readFileSync(pointer, "utf8")));
  } catch {
    return null;
  }
}

/** The newest snapshot a store holds: its key (the tick's state hash) and tick. */
export interface LatestPointer {
  readonly key: string;
  readonly tick: number;
}

/** A snapshot's key: its tick's state hash, in hex. */
export const SNAPSHOT_KEY = /^[0-9a-f]{16,64}$/;

/** Why a `latest` pointer (a file, a KV entry) that `pointerOf` refuses is damaged. */
export const DAMAGED_POINTER = "not a {key, tick} JSON object whose key is a state hash";

/**
 * A parsed `latest` pointer, or null when it is not a {key, tick} object whose key is a hash: a key
 * that is not one names no snapshot (read as a file path or an object name it was an internal error).
 */
export function pointerOf(value: unknown): LatestPointer | null {
  const v = value as { key?: unknown; tick?: unknown } | null;
  return typeof v?.key === "string" && SNAPSHOT_KEY.test(v.key) && typeof v.tick === "number" ? { key: v.key, tick: v.tick } : null;
}
