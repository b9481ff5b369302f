// Input the user gave that the kernel or a world cannot take: an unknown world or condition, a
// config that breaks a rule, a flag value out of form. Tagged and carrying its exit code, so the
// command line maps it by its tag (services/cli/exitCodes.ts) and never reads its message.
// Plain (no Effect), so the lowest layer and the command line's start can raise and tell it apart.
import { ExitCode, TaggedError } from "./taggedError.ts";

export type RejectedInput = "world" | "condition" | "config" | "flag";

export class InputRejected extends TaggedError {
  readonly _tag = "InputRejected";
  readonly exitCode = ExitCode.usage;
  readonly input: RejectedInput;
  constructor(input: RejectedInput, message: string) {
    super(message);
    this.input = input;
  }
}
