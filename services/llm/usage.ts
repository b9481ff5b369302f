// Token use and cost of model calls: the prices of models, the gateway's running account per
// requesting actor and per query, and the same figures recomputed from a log's records.
import type { LlmCompletedPayload, LlmFailedPayload, LlmRequestedPayload } from "../../events/llm.ts";
import type { LogRecord } from "../../events/record.ts";
import type { ModelPrice } from "./config.ts";
import type { LlmAnswer } from "./gateway.ts";

export interface UsageTotals {
  calls: number;
  failed: number;
  cached: number;
  httpRequests: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

export interface Accounting {
  readonly total: UsageTotals;
  readonly byActor: Readonly<Record<string, UsageTotals>>;
  readonly byQuery: Readonly<Record<string, UsageTotals>>;
}

export const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

const emptyTotals = (): UsageTotals => ({ calls: 0, failed: 0, cached: 0, httpRequests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });

/** Totals added up (e.g. the usage reported by every worker of a NATS sweep). */
export function sumTotals(list: readonly UsageTotals[]): UsageTotals {
  const sum = emptyTotals();
  for (const t of list) for (const k of Object.keys(sum) as (keyof UsageTotals)[]) sum[k] += t[k];
  sum.costUsd = round6(sum.costUsd);
  return sum;
}

type Tokens = { readonly promptTokens: number; readonly completionTokens: number };

/** The cost of a call's tokens at the model's price; null when the model has none. */
export const costOf = (prices: Readonly<Record<string, ModelPrice>> | undefined, model: string, usage: Tokens): number | null => {
  const price = prices?.[model];
  return price === undefined ? null : round6((usage.promptTokens * price.input + usage.completionTokens * price.output) / 1e6);
};

const sortedTotals = (m: Map<string, UsageTotals>, copy: (t: UsageTotals) => UsageTotals = (t) => t) =>
  Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, copy(v)]));

/** A gateway's running account of what its calls spent. */
export class UsageBook {
  private readonly total = emptyTotals();
  private readonly byActor = new Map<string, UsageTotals>();
  private readonly byQuery = new Map<string, UsageTotals>();
  private readonly prices: Readonly<Record<string, ModelPrice>> | undefined;
  constructor(prices: Readonly<Record<string, ModelPrice>> | undefined) {
    this.prices = prices;
  }

  /**
   * Adds one answered request. What this gateway spent: an answer served from the cache carries
   * the usage and cost of the call that recorded it, which were spent then (a fork's parent), not
   * now. A failed call can have cost too: invalid output twice is two answered requests, billed.
   */
  account(from: string, request: LlmRequestedPayload, answer: LlmAnswer, http: number): void {
    const queryId = request.queryId;
    const served = answer.type === "llm.completed" && answer.payload.cached === true;
    const usage = served ? { promptTokens: 0, completionTokens: 0 } : (answer.payload.usage ?? { promptTokens: 0, completionTokens: 0 });
    const cost = served ? 0 : answer.type === "llm.completed" ? (answer.payload.costUsd ?? 0) : (costOf(this.prices, request.model, usage) ?? 0);
    const buckets = [this.total, this.byActor.get(from) ?? this.byActor.set(from, emptyTotals()).get(from)!];
    if (queryId !== null) buckets.push(this.byQuery.get(queryId) ?? this.byQuery.set(queryId, emptyTotals()).get(queryId)!);
    for (const b of buckets) {
      b.calls++;
      if (answer.type === "llm.failed") b.failed++;
      if (answer.type === "llm.completed" && answer.payload.cached === true) b.cached++;
      b.httpRequests += http;
      b.promptTokens += usage.promptTokens;
      b.completionTokens += usage.completionTokens;
      b.costUsd = round6(b.costUsd + cost);
    }
  }

  /** A copy of the account so far, actors and queries sorted. */
  accounting(): Accounting {
    return { total: { ...this.total }, byActor: sortedTotals(this.byActor, (t) => ({ ...t })), byQuery: sortedTotals(this.byQuery, (t) => ({ ...t })) };
  }
}

/** Token use and cost of a log's model calls, per requesting actor and per query (recomputable from logs). */
export function usageFromRecords(records: readonly LogRecord[]): Accounting {
  const requests = new Map<number, LogRecord<LlmRequestedPayload>>();
  const total = emptyTotals();
  const byActor = new Map<string, UsageTotals>();
  const byQuery = new Map<string, UsageTotals>();
  for (const r of records) {
    if (r.type === "llm.requested") requests.set(r.seq, r as LogRecord<LlmRequestedPayload>);
    if (r.type !== "llm.completed" && r.type !== "llm.failed") continue;
    const request = r.cause === null ? undefined : requests.get(r.cause);
    const p = r.payload as Partial<LlmCompletedPayload & LlmFailedPayload>;
    const buckets = [total];
    if (request !== undefined) {
      buckets.push(byActor.get(request.from) ?? byActor.set(request.from, emptyTotals()).get(request.from)!);
      if (request.payload.queryId !== null) buckets.push(byQuery.get(request.payload.queryId) ?? byQuery.set(request.payload.queryId, emptyTotals()).get(request.payload.queryId)!);
    }
    // As the gateway accounts: a served recording's tokens and cost were spent by the run that recorded it.
    const served = p.cached === true;
    for (const b of buckets) {
      b.calls++;
      if (r.type === "llm.failed") b.failed++;
      if (served) b.cached++;
      b.httpRequests += p.attempts ?? 0;
      if (served) continue;
      b.promptTokens += p.usage?.promptTokens ?? 0;
      b.completionTokens += p.usage?.completionTokens ?? 0;
      b.costUsd = round6(b.costUsd + (p.costUsd ?? 0));
    }
  }
  return { total, byActor: sortedTotals(byActor), byQuery: sortedTotals(byQuery) };
}
