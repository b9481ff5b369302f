// Finished episode logs kept whole in JetStream: one Object Store bucket per namespace,
//   Object Store  pt_logs_<ns>   object <name> → a finished log's text (the bytes its file would hold)
// for logs written in one go by a driver that holds the whole episode in memory (the EnvProbe
// direct driver's sweeps over NATS: services/envprobe/jetStreamLogs.ts), where a stream subject
// per episode (the event store's, infra/jetstream/) would cost a publish per record.
//
// An object exists once its meta message lands, after all its chunks: a writer killed mid-put
// leaves no object (at most chunks no meta points to), and a put of an existing name replaces it
// whole (the meta is a rollup). The bucket is created with the connection's replica count
// (infra/jetstream/replicas.ts), and an existing one asked for with another count is refused.
// The client checks each object's SHA-256 as it reads it: bytes changed in the store read as an
// error (LogObjectUnreadable), never as another log.
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Objm, type ObjectInfo, type ObjectStore } from "@nats-io/obj";
import { createHash } from "node:crypto";
import { readSubject } from "./jetstream/read.ts";
import type { Context } from "./jetstream/streams.ts";
import { ExitCode, TaggedError } from "../events/taggedError.ts";
import { messageOf } from "../events/errorMessage.ts";
import { acrossOutage, natsName, natsReplicas } from "./nats.ts";
import { ApiCode, isApiError } from "./jetstream/errors.ts";
import { checkReplicas, creating, ReplicasMismatch, replicasToCreate } from "./jetstream/replicas.ts";

/** The bucket of a namespace's log objects. */
export const logObjectsBucket = (namespace: string): string => natsName("pt_logs", namespace);

/** An object whose bytes cannot be read back as stored (its digest does not match, a chunk is gone): exit 3. */
export class LogObjectUnreadable extends TaggedError {
  readonly _tag = "LogObjectUnreadable";
  readonly exitCode = ExitCode.damaged;
  readonly bucket: string;
  readonly object: string;
  constructor(bucket: string, object: string, cause: unknown) {
    super(`object store '${bucket}', object '${object}': cannot be read back as stored (${messageOf(cause)})`, { cause });
    this.bucket = bucket;
    this.object = object;
  }
}

const decoder = new TextDecoder();

/** An object's text from its chunks, when they are its size and hash to its digest (`SHA-256=` and the base64url hash, padded). */
function checkedText(bucket: string, info: ObjectInfo, parts: readonly Uint8Array[]): [string | null, LogObjectUnreadable?] {
  const bytes = Buffer.concat(parts);
  const digest = `SHA-256=${createHash("sha256").update(bytes).digest("base64url")}`;
  const padded = digest + "=".repeat((4 - ((digest.length - 8) % 4)) % 4);
  if (bytes.length !== info.size || padded !== info.digest) return [null, new LogObjectUnreadable(bucket, info.name, new Error(`its ${bytes.length} bytes in ${parts.length} chunks do not match its size ${info.size} and digest ${info.digest}`))];
  return [decoder.decode(bytes)];
}
const encoder = new TextEncoder();

export class LogObjects {
  readonly bucket: string;
  private readonly nc: NatsConnection;
  private readonly store: ObjectStore;

  private constructor(nc: NatsConnection, bucket: string, store: ObjectStore) {
    this.nc = nc;
    this.bucket = bucket;
    this.store = store;
  }

  /** Opens the namespace's bucket, creating it (with the replica count asked for) when `create`; null when it is missing and not to be created. */
  static async open(nc: NatsConnection, namespace: string, create: boolean): Promise<LogObjects | null> {
    const bucket = logObjectsBucket(namespace);
    const objm = new Objm(nc);
    let store: ObjectStore;
    if (create) {
      const replicas = replicasToCreate(nc);
      const make = () => creating(nc, `OBJ_${bucket}`, () => objm.create(bucket, { description: "probetown finished episode logs", replicas }));
      store = await acrossOutage(nc, async () => {
        try {
          return await make();
        } catch (error) {
          // Create-or-open looks the stream up, then adds it: a concurrent creator can win in between.
          if (error instanceof ReplicasMismatch) throw error;
          return await make();
        }
      });
      if (natsReplicas(nc) !== undefined) checkReplicas(nc, `OBJ_${bucket}`, (await store.status()).replicas);
    } else {
      // Looked up by its stream, whose absence the server says by code (nats.js's open says it only in a message).
      const jsm = await jetstreamManager(nc);
      try {
        await acrossOutage(nc, () => jsm.streams.info(`OBJ_${bucket}`));
      } catch (error) {
        if (isApiError(error, ApiCode.StreamNotFound)) return null;
        throw error;
      }
      store = await objm.open(bucket, false);
    }
    return new LogObjects(nc, bucket, store);
  }

  /** Puts (or replaces) `name` with `text`, whole; retried across a server outage (a put is repeatable). */
  async put(name: string, text: string): Promise<void> {
    const bytes = encoder.encode(text);
    await acrossOutage(this.nc, () => this.store.putBlob({ name }, bytes));
  }

  /** The text of `name`, or null when there is none; bytes that do not read back as stored are a LogObjectUnreadable. */
  async get(name: string): Promise<string | null> {
    let bytes: Uint8Array | null;
    try {
      bytes = await this.store.getBlob(name);
    } catch (error) {
      if (this.nc.isClosed()) throw error;
      throw new LogObjectUnreadable(this.bucket, name, error);
    }
    return bytes === null ? null : decoder.decode(bytes);
  }

  /** The names of the objects in the bucket, sorted, those equal to `prefix` or below it (`prefix/…`) when one is given. */
  async names(prefix?: string): Promise<string[]> {
    return (await this.infos(prefix)).map((o) => o.name);
  }

  private async infos(prefix?: string): Promise<ObjectInfo[]> {
    const all = await acrossOutage(this.nc, () => this.store.list());
    const under = prefix === undefined ? all : all.filter((o) => o.name === prefix || o.name.startsWith(`${prefix.replace(/\/+$/, "")}/`));
    return under.filter((o) => !o.deleted).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Reads every object below `prefix` (all with none) in one pass over the bucket's chunks (one
   * consumer, where `get` makes one per object: 7,260 logs read in a fraction of the time), each
   * checked against its SHA-256: `onObject(name, text)` for each one as its last chunk arrives, or
   * `onObject(name, null, error)` (a LogObjectUnreadable) for one whose bytes do not read back as
   * stored or whose chunks are gone. Objects put while it reads may be missed.
   */
  async readAll(prefix: string | undefined, onObject: (name: string, text: string | null, error?: LogObjectUnreadable) => void): Promise<number> {
    const infos = await this.infos(prefix);
    const pending = new Map<string, { readonly info: ObjectInfo; readonly parts: Uint8Array[] }>();
    for (const info of infos) {
      if (info.chunks === 0) onObject(info.name, ...checkedText(this.bucket, info, []));
      else pending.set(info.nuid, { info, parts: [] });
    }
    if (pending.size === 0) return infos.length;
    const chunkPrefix = `$O.${this.bucket}.C.`;
    const ctx: Context = { nc: this.nc, namespace: "", stream: `OBJ_${this.bucket}`, js: jetstream(this.nc), jsm: null, ready: null, locks: new Map(), acks: null };
    await readSubject(ctx, `${chunkPrefix}>`, (_text, _seq, data, subject) => {
      const nuid = subject.slice(chunkPrefix.length);
      const object = pending.get(nuid);
      // Another sweep's, or a replaced object's chunks not yet purged, or a killed put's.
      if (object === undefined) return;
      object.parts.push(data);
      if (object.parts.length < object.info.chunks) return;
      pending.delete(nuid);
      onObject(object.info.name, ...checkedText(this.bucket, object.info, object.parts));
    });
    for (const { info, parts } of pending.values()) onObject(info.name, null, new LogObjectUnreadable(this.bucket, info.name, new Error(`${parts.length} of its ${info.chunks} chunks are in the bucket`)));
    return infos.length;
  }
}
