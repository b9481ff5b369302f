// A household episode's scores from its log (the `metrics` hook: a sweep's per-condition means and
// paired report): functional success (latched, the release's rule) and at the final state (the
// paper's wording), percent complete of each, turns taken and messages sent; and the literal probes'
// score (passed roots over roots) and pass (every root passed), when they were asked.
import type { HouseholdEndedPayload, HouseholdProbeAnsweredPayload, HouseholdProbeScoredPayload } from "../../actors/household/events.ts";
import type { LogRecord } from "../../events/record.ts";

export function endOf(records: readonly LogRecord[]): (LogRecord & { payload: HouseholdEndedPayload }) | null {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.type === "household.ended") return records[i] as LogRecord & { payload: HouseholdEndedPayload };
  return null;
}

export function probesOf(records: readonly LogRecord[]): HouseholdProbeScoredPayload | null {
  for (let i = records.length - 1; i >= 0; i--) if (records[i]!.type === "household.probeScored") return records[i]!.payload as HouseholdProbeScoredPayload;
  return null;
}

export interface LlmProbeCounts {
  readonly calls: number;
  readonly answers: number;
  readonly fallbacks: number;
}

/** The LLM agent's probe answers, from the `household.probeAnswered` records (their `llm` part). */
export function llmProbesOf(records: readonly LogRecord[]): LlmProbeCounts {
  const answered = records.filter((r) => r.type === "household.probeAnswered").map((r) => r.payload as HouseholdProbeAnsweredPayload);
  return {
    calls: answered.reduce((n, a) => n + (a.llm?.calls ?? 0), 0),
    answers: answered.reduce((n, a) => n + a.answers.length, 0),
    fallbacks: answered.reduce((n, a) => n + (a.llm === undefined ? a.answers.length : a.llm.fallbacks.length), 0),
  };
}

export function householdMetrics(records: readonly LogRecord[]): Readonly<Record<string, number>> {
  const end = endOf(records);
  const messages = records.filter((r) => r.type === "household.message" && (r.payload as { status: string }).status === "queued").length;
  if (end === null) {
    // A log cut before its end: nothing counts as achieved but what latched.
    const turns = records.filter((r) => r.type === "household.resolve").length;
    return { success: 0, percentComplete: 0, finalSuccess: 0, finalPercentComplete: 0, turns, messages };
  }
  const p = end.payload;
  const probes = probesOf(records);
  const literal: Record<string, number> = probes === null ? {} : { literalScore: probes.score, literalPass: probes.pass ? 1 : 0 };
  return { success: p.success ? 1 : 0, percentComplete: p.percentComplete, finalSuccess: p.finalSuccess ? 1 : 0, finalPercentComplete: p.finalPercentComplete, turns: p.turn + 1, messages, ...literal };
}
