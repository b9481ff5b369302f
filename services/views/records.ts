// Human views read from records alone, for the worlds that have no town to draw: a timeline of any
// episode's records (what `inspect` shows for aura-scene and EnvProbe logs), and the summary of an
// aura-scene episode (each query with its IntentFrame, probes and answer).
import type { LogRecord } from "../../events/record.ts";
import { compactJson, namesActor } from "./text.ts";
import type { AnswerGivenPayload, IntentInferredPayload, ProbeAnsweredPayload, ProbeDeniedPayload, ProbeRequestedPayload } from "../../actors/aura/events.ts";
import type { LlmFailedPayload } from "../../events/llm.ts";
import { usageFromRecords } from "../llm/usage.ts";

const recipients = (to: LogRecord["to"]): string => (to === null ? "·" : Array.isArray(to) ? to.join(",") : String(to));

export interface TimelineFilter {
  readonly from?: number;
  readonly to?: number;
  /** An actor id, or a bare name (`ben` matches `agent/ben`): records it sent or received. */
  readonly agent?: string;
}

/** A record on one line: seq, type, sender → recipients, payload (shortened). */
export const recordLine = (r: Pick<LogRecord, "seq" | "type" | "from" | "to" | "payload">): string => `  #${r.seq} ${r.type} ${r.from} → ${recipients(r.to)}  ${compactJson(r.payload, 160)}`;

/** The records a filter keeps (`inspect`'s timeline and its --json alike). */
export function pickRecords(records: readonly LogRecord[], filter: TimelineFilter = {}): LogRecord[] {
  const matches = (id: string | null | undefined) => id !== null && id !== undefined && namesActor(id, filter.agent!);
  return records.filter(
    (r) =>
      (filter.from === undefined || r.tick >= filter.from) &&
      (filter.to === undefined || r.tick <= filter.to) &&
      (filter.agent === undefined || matches(r.from) || (Array.isArray(r.to) ? r.to.some(matches) : matches(r.to as string | null))),
  );
}

/** One line per record (tick, seq, type, sender → recipients, payload), ticks headed. */
export function renderRecordTimeline(records: readonly LogRecord[], filter: TimelineFilter = {}): string {
  const picked = pickRecords(records, filter);
  const out: string[] = [];
  let tick: number | null = null;
  for (const r of picked) {
    if (r.tick !== tick) {
      tick = r.tick;
      out.push(`tick ${tick}`);
    }
    out.push(recordLine(r));
  }
  return out.length === 0 ? "(no records in that range)" : out.join("\n");
}

/** Each query of an aura-scene episode: the question, the IntentFrame, every probe and the answer. */
export function renderSceneSummary(records: readonly LogRecord[]): string {
  const out: string[] = [];
  for (const r of records) {
    switch (r.type) {
      case "user.query": {
        const q = r.payload as { queryId: string; scene: string; text: string };
        out.push(`${out.length === 0 ? "" : "\n"}query ${q.queryId} (${q.scene}): ${q.text}`);
        break;
      }
      case "intent.inferred": {
        const i = r.payload as IntentInferredPayload;
        out.push(`  IntentFrame (${i.backend}): gap ${i.frame.gap.toFixed(2)} → budget ${i.budget} · literal: ${i.frame.literal_need} · implicit: ${i.frame.implicit_need.join("; ") || "—"}`);
        break;
      }
      case "probe.requested": {
        const p = r.payload as ProbeRequestedPayload;
        out.push(`  probe ${p.call}: ${p.tool}(${Object.entries(p.args).map(([k, v]) => `${k}=${v}`).join(", ")}) → ${recipients(r.to)}`);
        break;
      }
      case "probe.answered": {
        const a = r.payload as ProbeAnsweredPayload;
        out.push(`    answered (disclosure ${a.disclosure}): ${compactJson(a.result, 120)}`);
        break;
      }
      case "probe.denied":
        out.push(`    denied: ${(r.payload as ProbeDeniedPayload).reason}`);
        break;
      case "answer.given": {
        const a = r.payload as AnswerGivenPayload;
        out.push(`  answer (${a.backend}, disclosure ${a.disclosure}): ${a.text.replace(/\s+/g, " ")}`);
        break;
      }
    }
  }
  return out.length === 0 ? "no queries in this episode" : out.join("\n");
}

/** An episode's model calls as read from its log: what `run` and `fork` print, and give in `--json` as `llm`. */
export interface LlmUsage {
  readonly calls: number;
  /** Calls that failed and fell back (to the deterministic backend, or the scripted update). */
  readonly failed: number;
  /** Answers served from a recording (a fork's `--reuse-llm`): their tokens and cost were spent by the run that recorded them. */
  readonly cached: number;
  readonly httpRequests: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** USD, for the models `prices` gave a price; 0 otherwise. */
  readonly costUsd: number;
  /** The failures by kind, each with how many and the first one's message. */
  readonly failures: readonly { readonly error: string; readonly calls: number; readonly message: string }[];
}

/**
 * The model calls of an episode's log (null when it asked none): every `llm.completed` / `llm.failed`
 * in it, so a resumed run counts the calls of the runs before it too. Tokens and cost are those of
 * the calls made for this log, not of recorded answers served to it.
 */
export function llmUsageOf(records: readonly LogRecord[]): LlmUsage | null {
  if (!records.some((r) => r.type === "llm.requested")) return null;
  const kinds = new Map<string, { calls: number; message: string }>();
  for (const r of records) {
    if (r.type !== "llm.failed") continue;
    const f = r.payload as LlmFailedPayload;
    const seen = kinds.get(f.error);
    if (seen === undefined) kinds.set(f.error, { calls: 1, message: f.message });
    else seen.calls++;
  }
  const { calls, failed, cached, httpRequests, promptTokens, completionTokens, costUsd } = usageFromRecords(records).total;
  const failures = [...kinds].map(([error, { calls, message }]) => ({ error, calls, message }));
  return { calls, failed, cached, httpRequests, promptTokens, completionTokens, costUsd, failures };
}

/**
 * One line on an episode's model calls, read from its log (null when it made none): calls,
 * failures by kind with the first message of each (a bad key or a dead endpoint shows as the
 * reason, not only as `fallback from …: http_error` on every answer), answers served from a
 * recording, HTTP requests, and the tokens and cost spent for this log (a recorded answer's were
 * spent by the run that recorded it). `run` and `fork` print it under their summary.
 */
export function renderLlmUsage(records: readonly LogRecord[]): string | null {
  const u = llmUsageOf(records);
  return u === null ? null : llmUsageLine(u);
}

/** The `llm:` line of a usage (see renderLlmUsage). */
export function llmUsageLine(u: LlmUsage): string {
  const failures = u.failures.map(({ error, calls, message }) => `${error} ×${calls}: ${message.length > 140 ? `${message.slice(0, 139)}…` : message}`);
  return [
    `llm: ${u.calls} model call${u.calls === 1 ? "" : "s"}, ${u.failed === 0 ? "none failed" : `${u.failed} failed and fell back (${failures.join("; ")})`}`,
    ...(u.cached === 0 ? [] : [`${u.cached} served from a recording`]),
    `${u.httpRequests} HTTP request${u.httpRequests === 1 ? "" : "s"}, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens${u.costUsd > 0 ? `, $${u.costUsd.toFixed(4)}` : ""}`,
  ].join(" · ");
}
