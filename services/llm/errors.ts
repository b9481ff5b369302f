// How a model call fails: one tagged error per way, each naming the `llm.failed` kind it is logged
// as and the exit code it stands for. `EXIT_ENDPOINT` (5) is the configuration's fault — a refused
// key, model or URL, an exhausted quota, an endpoint given up as unreachable — which the CLI reports
// from the gateway's `problems()` (services/cli/llm.ts `endpointExit`); 0 is chance (a 503, a
// timeout, an invalid reply), unless every call to a model ends so (`errors_only`, decided from all
// the run's calls by `problems()`, not by one call).
import { Data } from "effect";
import type { ChatErrorKind } from "../../infra/openaiClient.ts";
import { isConfigKind, type ConfigKind } from "./problems.ts";

/**
 * The exit code of a command that finished, but whose model calls fell back because of the
 * endpoint's configuration. services/cli/llm.ts exports the same value as its EXIT_ENDPOINT
 * (test/llm-gateway-parts.test.ts holds them equal).
 */
export const EXIT_ENDPOINT = 5;

/** The call's HTTP attempts ended on an error the retries did not get past (the adapter's kind: 429, 5xx, timeout, connection, a refusal …). */
export class CallFailed extends Data.TaggedError("CallFailed")<{ readonly kind: ChatErrorKind; readonly message: string; readonly status: number | null }> {
  get exitCode(): number {
    return isConfigKind(this.kind) ? EXIT_ENDPOINT : 0;
  }
}

/** Not asked: an earlier call's refusal (key, URL, quota; or this model) condemned the endpoint or the model for the rest of the run. */
export class RefusedBefore extends Data.TaggedError("RefusedBefore")<{ readonly kind: ConfigKind; readonly message: string }> {
  readonly exitCode = EXIT_ENDPOINT;
}

/** Not asked: `unreachableAfter` calls in a row got no answer, and the endpoint is taken as down for the rest of the run. */
export class GivenUp extends Data.TaggedError("GivenUp")<{ readonly kind: "network" | "timeout"; readonly message: string }> {
  readonly exitCode = EXIT_ENDPOINT;
}

/** The reply could not be used, nor the repair attempt's (`content`: the last reply). */
export class InvalidOutput extends Data.TaggedError("InvalidOutput")<{ readonly message: string; readonly content: string }> {
  readonly kind = "invalid_output";
  readonly exitCode = 0;
}

/** The request names an output schema the gateway has no validator for: not asked. */
export class NoValidator extends Data.TaggedError("NoValidator")<{ readonly message: string }> {
  readonly kind = "invalid_output";
  readonly exitCode = 0;
}

/** Not asked: the run had spent its `tokenBudget` (a limit asked for, not the endpoint's fault). */
export class OverBudget extends Data.TaggedError("OverBudget")<{ readonly message: string }> {
  readonly kind = "budget";
  readonly exitCode = 0;
}

/** Every way a call fails; each becomes one `llm.failed` record (`kind` its `error`). */
export type CallFailure = CallFailed | RefusedBefore | GivenUp | InvalidOutput | NoValidator | OverBudget;
