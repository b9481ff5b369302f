// An agent's memory stream (paper Appendix A23; reference §2.9): observations, conversations,
// reflections and plans, with the 0.3/0.4/0.3 recency/importance/relevance retrieval and
// exp(−0.01·Δminutes) recency decay. Unlike the release, retrieval is actually used: reflection
// draws on the highest-scoring memories rather than merely the newest.
// The stream is mutated in place by its owning actor; its multiset digest is kept current so the
// tick state hash never has to re-read all items.
import { digestUpdate, EMPTY_DIGEST } from "../../events/digest.ts";

export type MemoryKind = "observation" | "conversation" | "reflection" | "plan";

export interface MemoryItem {
  readonly id: number;
  /** Sim minutes since day 1 00:00. */
  readonly t: number;
  readonly kind: MemoryKind;
  readonly content: string;
  readonly importance: number;
}

export interface MemoryStream {
  items: MemoryItem[];
  nextId: number;
  /** Items added since the last reflection; every kind counts, a reflection resets it. */
  sinceReflection: number;
  digest: string;
}

export interface RetrievalWeights {
  readonly recency: number;
  readonly importance: number;
  readonly relevance: number;
}

export const emptyMemory = (): MemoryStream => ({ items: [], nextId: 0, sinceReflection: 0, digest: EMPTY_DIGEST });

const entryOf = (m: MemoryItem): string => `${m.id}|${m.t}|${m.kind}|${m.importance}|${m.content}`;

/** Keyword importance heuristic of Appendix A23, used when no model scores importance. */
export function importanceOf(text: string): number {
  const lower = text.toLowerCase();
  if (/fight|love|death|secret|surprise|important|emergency/.test(lower)) return 7;
  if (/walk|sit|stand|routine|usual/.test(lower)) return 3;
  return 5;
}

export function remember(stream: MemoryStream, item: Omit<MemoryItem, "id">, capacity: number): MemoryItem {
  const full: MemoryItem = { id: stream.nextId, ...item };
  stream.nextId++;
  stream.items.push(full);
  stream.digest = digestUpdate(stream.digest, entryOf(full), 1);
  stream.sinceReflection = item.kind === "reflection" ? 0 : stream.sinceReflection + 1;
  if (stream.items.length > capacity) {
    // Drop the least important, then oldest, items (the release's trimming order).
    const ranked = [...stream.items].sort((a, b) => a.importance - b.importance || a.t - b.t || a.id - b.id);
    const drop = new Set(ranked.slice(0, stream.items.length - capacity).map((m) => m.id));
    for (const m of stream.items) if (drop.has(m.id)) stream.digest = digestUpdate(stream.digest, entryOf(m), -1);
    stream.items = stream.items.filter((m) => !drop.has(m.id));
  }
  return full;
}

export function recomputeMemoryDigest(stream: MemoryStream): string {
  let digest = EMPTY_DIGEST;
  for (const m of stream.items) digest = digestUpdate(digest, entryOf(m), 1);
  return digest;
}

const queryWords = (text: string): string[] => [...new Set(text.toLowerCase().split(/\s+/).filter((w) => w.length > 0))];

// Each item's content lower-cased with single spaces and padded, so a token test is one substring
// search. Items are immutable and reflection re-scores the same items often: cache per item.
const padded = new WeakMap<MemoryItem, string>();
function paddedContent(item: MemoryItem): string {
  let text = padded.get(item);
  if (text === undefined) padded.set(item, (text = ` ${item.content.toLowerCase().replace(/\s+/g, " ").trim()} `));
  return text;
}

export interface Scored {
  readonly item: MemoryItem;
  readonly score: number;
}

/** score = w_r·exp(−decay·Δt) + w_i·importance/10 + w_v·|query ∩ content| / |query|. */
export function retrieve(stream: MemoryStream, query: string, now: number, limit: number, weights: RetrievalWeights, decay: number): Scored[] {
  const q = queryWords(query);
  const scored = stream.items.map((item) => {
    const recency = Math.exp(-decay * Math.max(now - item.t, 0));
    let relevance = 0.5;
    if (q.length > 0) {
      const text = paddedContent(item);
      let overlap = 0;
      for (const w of q) if (text.includes(` ${w} `)) overlap++;
      relevance = Math.min(1, overlap / q.length);
    }
    return { item, score: weights.recency * recency + (weights.importance * item.importance) / 10 + weights.relevance * relevance };
  });
  scored.sort((a, b) => b.score - a.score || b.item.id - a.item.id);
  return scored.slice(0, limit);
}

export function recent(stream: MemoryStream, n: number): MemoryItem[] {
  return stream.items.slice(-n).reverse();
}
