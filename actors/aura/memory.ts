// The controller's Memory stage (paper §3.3, A23): a store of what the controller has perceived —
// the queries it was asked and what its probes returned — ranked for each new query by
//   score = 0.3·recency + 0.4·importance/10 + 0.3·relevance
//   recency    = exp(−0.01·max(now − t, 0)) over the controller's own clock (the 1-based index of
//                the query being answered; an item's t is the index of the query that stored it);
//                1 when now ≤ 0, as the release's TownMemory.retrieve
//   importance = 1–10 by the deterministic rule `importanceOf` below (the paper's LLM rating
//                "Rate the importance of this event 1–10" is not used: no model call here)
//   relevance  = |query words ∩ item words| / |query words|, capped at 1, over lower-cased
//                whitespace tokens (the release's TownMemory.retrieve, punctuation kept); 0.5 for
//                an empty query
// Capacity 200: beyond it the items lowest by (importance, t) are dropped first (TownMemory).
// Pure and deterministic: no clock, no randomness; ties keep insertion order.
//
// Retrieval only *informs* the intent stage (the LLM intent prompt's RECENT MEMORIES, ≤ 5, and
// `intent.inferred.memories`). Answering a later query from a probe answer read for an earlier one
// is a separate, named option (condition `aura-intent-reuse`), off by default.

export type MemoryKind = "query" | "observation";

export interface MemoryItem {
  readonly content: string;
  /** The controller clock (query index, 1-based) when the item was stored. */
  readonly t: number;
  /** 1–10. */
  readonly importance: number;
  readonly kind: MemoryKind;
}

export interface Retrieved extends MemoryItem {
  readonly score: number;
}

export const MEMORY_WEIGHTS = { recency: 0.3, importance: 0.4, relevance: 0.3 } as const;
export const RECENCY_DECAY = 0.01;
export const MEMORY_CAPACITY = 200;
/** The LLM intent prompt shows up to 5 memories (reference/aura.md §5.3). */
export const RETRIEVE_LIMIT = 5;

/**
 * The stated importance rule (deterministic; A23 allows a heuristic when no LLM rates it):
 *   a query the user asked                       3  (the user's own words: worth recalling, public)
 *   a probe that was refused or returned nothing 1
 *   a probe answer                               2 + 2·(the probe's disclosure cost), at most 10:
 *     public facts (cost 0) 2, a plan (1) 4, a belief (2) 6, private state (3) 8
 * The more private what was learnt, the more it matters not to ask for it again unawares — and the
 * more it matters that the next frame knows it was already read.
 */
export function importanceOf(item: { readonly kind: "query" } | { readonly kind: "observation"; readonly ok: boolean; readonly disclosure: number }): number {
  if (item.kind === "query") return 3;
  if (!item.ok) return 1;
  return Math.min(10, Math.max(1, 2 + 2 * Math.max(0, item.disclosure)));
}

const words = (s: string): string[] => s.toLowerCase().split(/\s+/).filter((w) => w.length > 0);

/** Keyword relevance as the release computes it. */
export function relevanceOf(query: string, content: string): number {
  const q = new Set(words(query));
  if (q.size === 0) return 0.5;
  const c = new Set(words(content));
  let hits = 0;
  for (const w of q) if (c.has(w)) hits++;
  return Math.min(1, hits / q.size);
}

export const recencyOf = (now: number, t: number): number => (now <= 0 ? 1 : Math.exp(-RECENCY_DECAY * Math.max(now - t, 0)));

/** Rounded so the logged scores are stable text. */
const round4 = (x: number): number => Math.round(x * 10000) / 10000;

export function scoreOf(item: MemoryItem, query: string, now: number): number {
  return round4(MEMORY_WEIGHTS.recency * recencyOf(now, item.t) + MEMORY_WEIGHTS.importance * (item.importance / 10) + MEMORY_WEIGHTS.relevance * relevanceOf(query, item.content));
}

/** The top `limit` items for a query at time `now`, best first (ties: the earlier-stored first). */
export function retrieve(items: readonly MemoryItem[], query: string, now: number, limit: number = RETRIEVE_LIMIT): Retrieved[] {
  return items
    .map((item, i) => ({ item, i, score: scoreOf(item, query, now) }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, Math.max(0, limit))
    .map(({ item, score }) => ({ ...item, score }));
}

/** Adds an item, dropping the lowest (importance, t) ones beyond the capacity. */
export function remember(items: readonly MemoryItem[], item: MemoryItem, capacity: number = MEMORY_CAPACITY): MemoryItem[] {
  const next = [...items, item];
  if (next.length <= capacity) return next;
  const ranked = next.map((m, i) => ({ m, i })).sort((a, b) => a.m.importance - b.m.importance || a.m.t - b.m.t || a.i - b.i);
  const drop = new Set(ranked.slice(0, next.length - capacity).map((x) => x.i));
  return next.filter((_, i) => !drop.has(i));
}

/** A probe answer as a memory's text: tool, whose, and what it said (words the relevance can match). */
export function observationText(tool: string, args: Readonly<Record<string, string>>, ok: boolean, result: unknown): string {
  const who = Object.keys(args).sort().map((k) => args[k]!).join(" ");
  if (!ok) return `${tool} ${who}: nothing`;
  const flat = (v: unknown): string => {
    if (v === null || v === undefined) return "none";
    if (Array.isArray(v)) return v.map(flat).join("; ");
    if (typeof v === "object") return Object.keys(v as object).sort().map((k) => `${k} ${flat((v as Record<string, unknown>)[k])}`).join(", ");
    return String(v);
  };
  return `${tool} ${who}: ${flat(result)}`;
}
