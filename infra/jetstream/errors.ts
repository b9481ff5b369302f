// The JetStream store's errors and how it tells the server's answers apart: by the JetStream API
// error code (`err_code`, what nats.js's JetStreamApiError.code returns), never by the text of a
// message. The codes nats.js 3.4 names come from its JetStreamApiCodes; the others are nats-server's
// (server/errors.json), named here as it names them.
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";

/** JetStream API error codes the store acts on. */
export const ApiCode = {
  /** JSStreamNotFoundErr: "stream not found". */
  StreamNotFound: JetStreamApiCodes.StreamNotFound,
  /** JSStreamWrongLastSequenceErrF: "wrong last sequence: {seq}" (an expected-last-sequence header, or a KV revision, did not hold). */
  StreamWrongLastSequence: JetStreamApiCodes.StreamWrongLastSequence,
  /** JSStreamWrongLastSequenceConstantErr: the same, without the seq (newer servers). */
  StreamWrongLastSequenceUnknown: JetStreamApiCodes.StreamWrongLastSequenceUnknown,
  /** JSStreamNameExistErr: "stream name already in use" (not exported by nats.js 3.4, nor are those below). */
  StreamNameInUse: 10058,
  /** JSInsufficientResourcesErr: "insufficient resources" (the server's max_file_store / max_memory_store is reached). */
  InsufficientResources: 10023,
  /** JSStorageResourcesExceededErr: "insufficient storage resources available". */
  StorageResourcesExceeded: 10047,
  /** JSStreamStoreFailedF: "{err}", the stream's store refused the message (its text is the store's error). */
  StreamStoreFailed: 10077,
} as const;

/**
 * The store errors a JSStreamStoreFailedF (10077) carries when a stream's own limits refuse a
 * message (discard new with max_bytes or max_msgs): nats-server's ErrMaxBytes and ErrMaxMsgs. The
 * code is a template ("{err}"), so the store's error is the only thing that tells them apart from
 * its other failures; they are compared whole, as the server writes them.
 */
const STREAM_LIMIT_ERRORS: ReadonlySet<string> = new Set(["maximum bytes exceeded", "maximum messages exceeded"]);

/** A JetStream API error with one of `codes`. */
export const isApiError = (error: unknown, ...codes: number[]): boolean => error instanceof JetStreamApiError && codes.includes(error.code);

/** The JetStream API error code of an error that is one (by name: a JetStreamApiError from any copy of nats.js), else null. */
function apiCodeOf(error: unknown): number | null {
  if (!(error instanceof Error) || error.name !== "JetStreamApiError") return null;
  const code = (error as Partial<JetStreamApiError>).code;
  return typeof code === "number" ? code : null;
}

/** The server's JetStream storage, or a stream's limits, cannot take a message: retrying will not help. */
export function isStorageFull(error: unknown): boolean {
  const code = apiCodeOf(error);
  if (code === ApiCode.InsufficientResources || code === ApiCode.StorageResourcesExceeded) return true;
  return code === ApiCode.StreamStoreFailed && STREAM_LIMIT_ERRORS.has((error as Error).message);
}

/**
 * The stream seq a subject ended at when the server refused an append that expected another
 * (StreamWrongLastSequence), or null when the server did not say: it is only in the error's
 * description ("wrong last sequence: 42"), which nats.js passes on as it is.
 */
export function wrongLastSequenceAt(error: JetStreamApiError): number | null {
  if (error.code !== ApiCode.StreamWrongLastSequence) return null;
  const at = /(\d+)\s*$/.exec(error.apiError().description ?? "");
  return at === null ? null : Number(at[1]);
}

export { messageOf } from "../../events/errorMessage.ts";

// Shared with the file store (both fence a writer that may no longer hold its lock).
import { StaleWriter, type WriterFence } from "../eventStore.ts";
export { StaleWriter };

export function staleWriter(episode: string, expected: number, actual: number, detail: string, fence?: WriterFence): StaleWriter {
  return new StaleWriter({ episode, expected, actual }, detail, fence);
}
