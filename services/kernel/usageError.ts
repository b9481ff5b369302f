// The errors of bad usage or input (exit 2), apart from services/kernel/replay.ts so that the command
// line can raise and recognise them without loading the replay machinery.

export class UsageError extends Error {
  readonly _tag: string = "UsageError";
  /** Bad usage or input (the command line's exit 2). */
  readonly exitCode = 2 as const;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** A path the user gave that is the wrong kind of thing (a file for a directory, none at all, …): Node's message names it. */
export const isPathError = (error: unknown): boolean =>
  error instanceof Error && ["EEXIST", "EISDIR", "ENOTDIR", "EACCES", "EPERM", "ENOENT"].includes((error as NodeJS.ErrnoException).code ?? "");
