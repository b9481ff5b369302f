// The command line's exit codes (main.ts lists them) and the error each one is for: one table from
// an error's `_tag` to its code (events/taggedError.ts is the shape every error of ours has). Read
// on every failure, so this module loads nothing that loads NATS, Effect or the episode machinery:
// the classes are imported as types only, which the type check holds to the table (each tag listed,
// none unknown) and which vanish at run time. test/cli-startup.test.ts checks every class's own
// `exitCode` against the table; test/tagged-errors.test.ts that every error thrown in services/ has a tag here.
// A world's own errors are listed in its command-line manifest (`errors`, services/cli/worldCli.ts),
// not here (the command line knows no world by name): each carries its code, which exitCodeFor reads.
import type { InvalidPayload, LogCorrupted, SequenceConflict, SnapshotDamaged, TornTail, UnknownEventType } from "../../events/errors.ts";
import type { InputRejected } from "../../events/inputRejected.ts";
import type { CompactLogReadOnly, CompactRecordDamaged } from "../../events/compactLog.ts";
import type { InternalError } from "../../events/internalError.ts";
import { ExitCode } from "../../events/taggedError.ts";
import { isStorageError, type EpisodeExists, type StorageFailed, type WriterLocked } from "../../infra/eventStore.ts";
import type { JobRejected } from "../../infra/jobQueue.ts";
import type { NatsReadStalled, NatsWriteLost } from "../../infra/nats.ts";
import type { InvalidSubjectToken, NatsReplicasInvalid, NatsUnavailable } from "../../infra/natsSettings.ts";
import type { ReplicasMismatch } from "../../infra/jetstream/replicas.ts";
import type { RequestTimeout } from "../../infra/natsTransport.ts";
import type { ChatError } from "../../infra/openaiClient.ts";
import type { NoResponder, RemoteError } from "../../infra/transport.ts";
import type { ReportOptionInvalid } from "../analysis/report.ts";
import type { SweepStorageFailed } from "./distributed.ts";
import type { ResultsInvalid } from "../analysis/results.ts";
import type { ActorFailed } from "../distributed/actorHost.ts";
import type { LocalWorkersGone } from "../distributed/episodes.ts";
import type { ActorHostLost, Interrupted } from "../kernel/episodes.ts";
import type { Divergence, EndOfLog, StateMismatch } from "../kernel/replay.ts";
import { isPathError, type UsageError } from "../kernel/usageError.ts";
import { EXIT_ENDPOINT } from "./llmOptions.ts";

export const EXIT = { ok: 0, ...ExitCode, endpoint: EXIT_ENDPOINT } as const;

type ErrorTag =
  | LogCorrupted["_tag"] | TornTail["_tag"] | UnknownEventType["_tag"] | InvalidPayload["_tag"] | SnapshotDamaged["_tag"] | SequenceConflict["_tag"]
  | InputRejected["_tag"] | UsageError["_tag"] | InternalError["_tag"]
  | Divergence["_tag"] | EndOfLog["_tag"] | StateMismatch["_tag"] | ActorHostLost["_tag"] | Interrupted["_tag"]
  | ActorFailed["_tag"] | LocalWorkersGone["_tag"] | ReportOptionInvalid["_tag"] | ResultsInvalid["_tag"]
  | StorageFailed["_tag"] | SweepStorageFailed["_tag"] | EpisodeExists["_tag"] | WriterLocked["_tag"] | JobRejected["_tag"]
  | NatsUnavailable["_tag"] | InvalidSubjectToken["_tag"] | NatsReplicasInvalid["_tag"] | ReplicasMismatch["_tag"] | NatsWriteLost["_tag"] | NatsReadStalled["_tag"] | RequestTimeout["_tag"] | NoResponder["_tag"] | RemoteError["_tag"]
  | ChatError["_tag"] | CompactLogReadOnly["_tag"] | CompactRecordDamaged["_tag"];

/** The exit code of each error of ours, by its tag. */
export const EXIT_BY_TAG: Readonly<Record<ErrorTag, number>> = {
  Divergence: EXIT.diverged,

  UsageError: EXIT.usage,
  InputRejected: EXIT.usage,
  ReportOptionInvalid: EXIT.usage,
  ResultsInvalid: EXIT.usage,
  InvalidSubjectToken: EXIT.usage,
  NatsReplicasInvalid: EXIT.usage,
  // Trouble outside the program (a server away or refusing, another writer, a full disk): what was logged is kept.
  SequenceConflict: EXIT.usage,
  WriterLocked: EXIT.usage,
  EpisodeExists: EXIT.usage,
  // A compact log (format 2) is written whole: a run does not continue one (fork it).
  CompactLogReadOnly: EXIT.usage,
  StorageFailed: EXIT.usage,
  SweepStorageFailed: EXIT.usage,
  NatsUnavailable: EXIT.usage,
  // A stream kept on another number of servers than asked: scaled by its operator, not by probetown.
  ReplicasMismatch: EXIT.usage,
  ActorHostLost: EXIT.usage,
  LocalWorkersGone: EXIT.usage,

  LogCorrupted: EXIT.damaged,
  TornTail: EXIT.damaged,
  UnknownEventType: EXIT.damaged,
  InvalidPayload: EXIT.damaged,
  SnapshotDamaged: EXIT.damaged,
  CompactRecordDamaged: EXIT.damaged,

  InternalError: EXIT.internal,
  LocalWorkersFailed: EXIT.internal,
  ActorFailed: EXIT.internal,
  JobRejected: EXIT.internal,
  // Told apart and answered where they are raised; reaching a command's end, they escaped that.
  EndOfLog: EXIT.internal,
  StateMismatch: EXIT.internal,
  Interrupted: EXIT.internal,
  NatsWriteLost: EXIT.internal,
  NatsReadStalled: EXIT.internal,
  RequestTimeout: EXIT.internal,
  NoResponder: EXIT.internal,
  RemoteError: EXIT.internal,
  ChatError: EXIT.internal,
};

const CODE_OF_TAG: ReadonlyMap<string, number> = new Map(Object.entries(EXIT_BY_TAG));

/** The `_tag` of an error of ours (events/taggedError.ts, or Effect's tagged errors), else undefined. */
export const tagOf = (error: unknown): string | undefined => {
  const tag: unknown = typeof error === "object" && error !== null && "_tag" in error ? error._tag : undefined;
  return typeof tag === "string" ? tag : undefined;
};

/** The exit code a tagged error carries itself (one not in the table: an LLM call's failure, services/llm/errors.ts). */
const ownExitCode = (error: unknown): number | undefined => {
  const code: unknown = typeof error === "object" && error !== null && "exitCode" in error ? error.exitCode : undefined;
  return typeof code === "number" ? code : undefined;
};

/** A replay diverged from the log (services/kernel/replay.ts `Divergence`): its message, then one line per detail. */
export const isDivergence = (error: unknown): error is Error & { readonly details: readonly string[] } => tagOf(error) === "Divergence";

export function exitCodeFor(error: unknown): number {
  const tag = tagOf(error);
  // Only our errors' own codes count: a library's error may carry an `exitCode` of its own meaning.
  const code = tag === undefined ? EXIT.internal : (CODE_OF_TAG.get(tag) ?? ownExitCode(error) ?? EXIT.internal);
  // A path that is the wrong kind of thing, or a full or failing disk (Node's errno errors, or what
  // wraps one), is the user's or the machine's trouble, not the program's.
  return code === EXIT.internal && (isPathError(error) || isStorageError(error)) ? EXIT.usage : code;
}
