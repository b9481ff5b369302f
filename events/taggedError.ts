// The one shape of every error probetown raises: a `_tag` that says which error it is, and the exit
// code a command ends with on it. The command line maps tags to codes in one table
// (services/cli/exitCodes.ts) and never reads a message; test/tagged-errors.test.ts keeps every
// class thrown in services/ on this shape. Only the LLM gateway's call failures, which live inside
// its Effect retries, are Effect's Data.TaggedError (services/llm/errors.ts), with the same two
// members. Plain, with no Effect import, so the lowest layer and the command line's start can
// raise these and tell them apart.

/** The exit codes an error ends a command with (0 is success; 5, services/cli/llmOptions.ts EXIT_ENDPOINT, is a finished run's). */
export const ExitCode = {
  /** A replay produced something other than the log holds. */
  diverged: 1,
  /** Bad usage or input, or trouble outside the program (a server away, a full disk): the same command can succeed once it is fixed. */
  usage: 2,
  /** A damaged log or snapshot: reading it again gives the same error. */
  damaged: 3,
  /** A fault of the program itself. */
  internal: 4,
} as const;

export abstract class TaggedError extends Error {
  abstract readonly _tag: string;
  abstract readonly exitCode: number;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    // Stack traces and `String(error)` name the class (subclasses of UsageError share its tag).
    this.name = new.target.name;
  }
}
