// Snapshot store (DESIGN §6): episode snapshots stored by key (the tick's state hash). The file
// implementation writes atomically (temp file, then rename) so a crash never leaves half a snapshot
// under its name, and compresses the file (version 2, below); it does not fsync it (a power loss
// can leave it damaged, which its load checks refuse: docs/architecture.md, "Durability").
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { brotliCompressSync, brotliDecompressSync, constants as zlib, createBrotliCompress } from "node:zlib";
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
 * A snapshot file's versions. Version 1 (written until 2026-11-29, still read) is the snapshot's
 * JSON text as is. Version 2 is the header line `probetown-snapshot 2 br` and that JSON text
 * compressed with brotli after it: a five-resident town's snapshot is about a seventh of its text
 * (75 KB → 11 KB after a day), so a short run's snapshot is no longer a third of its log's bytes.
 * The key is the state hash of the JSON text's content, whatever the version (checked on load).
 */
export const SNAPSHOT_FILE_VERSION = 2;
const HEADER_PREFIX = "probetown-snapshot ";
const SNAPSHOT_FILE_HEADER = `${HEADER_PREFIX}${SNAPSHOT_FILE_VERSION} br\n`;

/** Snapshots up to this many characters of actors are compressed and written at once, on the run's thread. */
const SMALL_SNAPSHOT = 2 ** 20;

/**
 * Brotli's quality for snapshots. Measured on AURATown's (2026-11-29, docs/benchmarks.md): at 1,
 * a five-resident snapshot is 14% of its text (75 KB → 10.6 KB after a day; gzip's fastest level
 * 18%, at the same speed) and a 1,000-agent town's 24 MB is 8% in ~0.2 s (gzip's fastest: 10% in
 * 0.3 s). Quality 4–5 saves another quarter of the bytes but took 1.6–1.8× the CPU of a ten-day run
 * with a snapshot every tick (quality 1: 1.0–1.2× the uncompressed files').
 */
export const SNAPSHOT_QUALITY = 1;

/** The JSON text's pieces in about 256 KB strings (joined whole, a 1,000-agent text was ~100 MB of garbage). */
function* snapshotJsonBatches(pieces: readonly string[]): Generator<string> {
  let pending = "";
  for (const piece of pieces) {
    pending += piece;
    if (pending.length >= 256 * 1024) {
      yield pending;
      pending = "";
    }
  }
  if (pending.length > 0) yield pending;
}

/** Characters of a snapshot's serialised actors: its size near enough, to choose how it is written. */
function actorChars(snapshot: EpisodeSnapshot): number {
  let n = 0;
  for (const actor of Object.values(snapshot.actors)) n += actor instanceof SerializedActor ? actor.json.length : 1024;
  return n;
}

/**
 * Writes a version-2 snapshot file: the header, then `snapshotJson(snapshot)` compressed. A small
 * one (up to 1 MiB of actors) is compressed in one call and written at once, within the tick
 * that took it (a stream's turns of the event loop cost more than its compression). A large one
 * is compressed a few hundred KB at a time on the thread pool while the run goes on (its actors
 * were serialised at their tick). A disk that refuses the file rejects the promise rather than
 * leaving it short.
 */
async function writeSnapshotFile(path: string, snapshot: EpisodeSnapshot): Promise<void> {
  const chars = actorChars(snapshot);
  const params = { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: SNAPSHOT_QUALITY };
  if (chars <= SMALL_SNAPSHOT) {
    const text = snapshotJson(snapshot);
    const body = brotliCompressSync(text, { params: { ...params, [zlib.BROTLI_PARAM_SIZE_HINT]: text.length } });
    // writeFileSync writes all of it (a lone writeSync may take only part on a nearly full disk).
    writeFileSync(path, Buffer.concat([Buffer.from(SNAPSHOT_FILE_HEADER), body]));
    return;
  }
  // Serialised now, before anything awaits: the run goes on changing what is not yet text.
  const pieces = [...snapshotJsonPieces(snapshot)];
  await pipeline(
    Readable.from(snapshotJsonBatches(pieces)),
    createBrotliCompress({ params }),
    async function* (body: AsyncIterable<Buffer>) {
      yield Buffer.from(SNAPSHOT_FILE_HEADER);
      yield* body;
    },
    createWriteStream(path, { flags: "w" }),
  );
}

/**
 * A snapshot file's JSON text, whichever version wrote it; SnapshotDamaged when its header names
 * a version or codec this build does not read, or its body does not decompress.
 */
export function snapshotFileText(path: string): string {
  const bytes = readFileSync(path);
  if (bytes.length < HEADER_PREFIX.length || bytes.toString("latin1", 0, HEADER_PREFIX.length) !== HEADER_PREFIX) return bytes.toString("utf8");
  const end = bytes.indexOf(0x0a);
  const [version, codec] = bytes.toString("latin1", HEADER_PREFIX.length, end < 0 ? Math.min(bytes.length, 64) : end).split(" ");
  if (end < 0 || version !== String(SNAPSHOT_FILE_VERSION) || codec !== "br") {
    throw new SnapshotDamaged({ where: path, reason: `a snapshot file of version ${String(version)} (${String(codec)}), which this probetown does not read (it reads version 1, plain JSON, and version ${SNAPSHOT_FILE_VERSION}, brotli)` });
  }
  try {
    return brotliDecompressSync(bytes.subarray(end + 1)).toString("utf8");
  } catch (error) {
    throw new SnapshotDamaged({ where: path, reason: `its compressed body does not decompress (${messageOf(error)})` });
  }
}

/** A snapshot file parsed (any version): what `get` checks before it restores anything. */
export function readSnapshotFile(path: string): unknown {
  const text = snapshotFileText(path);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new SnapshotDamaged({ where: path, reason: `snapshot is not valid JSON (${messageOf(error)})` });
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
      await writeSnapshotFile(temp, snapshot);
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
    const snapshot = readSnapshotFile(path) as EpisodeSnapshot;
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
