// Something the code relies on did not hold (a bug, or a part of the program that broke its
// promise): exit 4, with the stack under PROBETOWN_DEBUG. Not for bad input (UsageError,
// InputRejected) nor a damaged log (events/errors.ts).
import { ExitCode, TaggedError } from "./taggedError.ts";

export class InternalError extends TaggedError {
  readonly _tag = "InternalError";
  readonly exitCode = ExitCode.internal;
}
