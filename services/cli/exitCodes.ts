// The command line's exit codes (main.ts lists them) and the error each one is for. Read on every
// failure, so this module imports nothing that loads NATS, Effect or the episode machinery: errors
// defined in modules that do are told apart by their own names, as they set them (`name`, or the
// `_tag` of an Effect tagged error in events/errors.ts), not by `instanceof` against their classes.
// test/cli-startup.test.ts checks every one of them against its class.
import { EpisodeExists, isStorageError, WriterLocked } from "../../infra/eventStore.ts";
import { InvalidSubjectToken, NatsUnavailable } from "../../infra/natsSettings.ts";
import { isPathError, UsageError } from "../kernel/usageError.ts";
import { EXIT_ENDPOINT } from "./llmOptions.ts";

export const EXIT = { ok: 0, diverged: 1, usage: 2, damaged: 3, internal: 4, endpoint: EXIT_ENDPOINT } as const;

/** The `_tag` of an Effect tagged error (events/errors.ts), else undefined. */
export const tagOf = (error: unknown): string | undefined => {
  const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined;
  return typeof tag === "string" ? tag : undefined;
};

/** The `name` an error class of ours sets in its constructor (services/kernel/replay.ts Divergence, …), else undefined. */
const nameOf = (error: unknown): string | undefined => (error instanceof Error ? error.name : undefined);

/** The errors of a damaged log or snapshot (events/errors.ts `isDamage`), by their tags. */
const DAMAGE_TAGS: ReadonlySet<string> = new Set(["LogCorrupted", "TornTail", "UnknownEventType", "InvalidPayload", "SnapshotDamaged"]);

/** A replay diverged from the log (services/kernel/replay.ts `Divergence`): its message, then one line per detail. */
export const isDivergence = (error: unknown): error is Error & { readonly details: readonly string[] } => nameOf(error) === "Divergence";

export function exitCodeFor(error: unknown): number {
  if (isDivergence(error)) return EXIT.diverged;
  // services/distributed/episodes.ts `LocalWorkersGone`.
  if (nameOf(error) === "LocalWorkersGone") return (error as { internal?: boolean }).internal === true ? EXIT.internal : EXIT.usage;
  if (DAMAGE_TAGS.has(tagOf(error) ?? "")) return EXIT.damaged;
  // A lost actor host (services/kernel/episodes.ts `ActorHostLost`) is the NATS side's trouble, not the program's: the log is kept for a resume.
  if (error instanceof UsageError || error instanceof InvalidSubjectToken || tagOf(error) === "SequenceConflict" || error instanceof WriterLocked || error instanceof EpisodeExists || error instanceof NatsUnavailable || nameOf(error) === "ActorHostLost") return EXIT.usage;
  // An unknown world or condition, a config a world refused, a flag out of form (events/inputRejected.ts).
  if (tagOf(error) === "InputRejected") return EXIT.usage;
  // A full or failing disk is the machine's trouble, not the program's; what was logged is kept.
  if (isPathError(error) || isStorageError(error)) return EXIT.usage;
  return EXIT.internal;
}
