// The errors of bad usage or input (exit 2), apart from services/kernel/replay.ts so that the command
// line can raise and recognise them without loading the replay machinery.
import { ExitCode, TaggedError } from "../../events/taggedError.ts";

/** Subclasses (an invalid spec or benchmark file, a flag value) name the input in their class, and share this tag and code. */
export class UsageError extends TaggedError {
  readonly _tag = "UsageError";
  readonly exitCode = ExitCode.usage;
}

/** An episode's log (or its outcome) holds another episode under the same id: choose another place. */
export class EpisodeIdTaken extends UsageError {}

/**
 * A flag value out of form, raised inside a commander argParser. Commander tells an argument
 * parser's refusal by its `code` (lib/command.js `_callParseArg`), as it tells its own
 * InvalidArgumentError, and says which option and value it was: "option '--seed <n>' argument 'x'
 * is invalid. <message>".
 */
export class FlagInvalid extends UsageError {
  readonly code = "commander.invalidArgument";
}

/** A path the user gave that is the wrong kind of thing (a file for a directory, none at all, …): Node's message names it. */
export const isPathError = (error: unknown): boolean =>
  error instanceof Error && ["EEXIST", "EISDIR", "ENOTDIR", "EACCES", "EPERM", "ENOENT"].includes((error as NodeJS.ErrnoException).code ?? "");
