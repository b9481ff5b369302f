// Input the user gave that the kernel or a world cannot take: an unknown world or condition, a
// config that breaks a rule, a flag value out of form. Tagged and carrying its exit code, so the
// command line maps it by its tag (services/cli/exitCodes.ts) and never reads its message.
// Plain (no Effect), so the lowest layer and the command line's start can raise and tell it apart.

export type RejectedInput = "world" | "condition" | "config" | "flag";

export class InputRejected extends Error {
  readonly _tag = "InputRejected" as const;
  /** Bad usage or input (the command line's exit 2). */
  readonly exitCode = 2 as const;
  readonly input: RejectedInput;
  constructor(input: RejectedInput, message: string) {
    super(message);
    this.name = "InputRejected";
    this.input = input;
  }
}
