// An agent's memory stream (paper Appendix A23; reference §2.9): observations, conversations,
// reflections and plans, with the 0.3/0.4/0.3 recency/importance/relevance retrieval and
// exp(−0.01·Δminutes) recency decay. Unlike the release, retrieval is actually used: reflection
// draws on the highest-scoring memories rather than merely the newest.
// The stream is mutated in place by its owning actor; its multiset digest is kept current so the
// tick state hash never has to re-read all items.
import { DigestAccumulator, EMPTY_DIGEST } from "../../events/digest.ts";

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

// An item's digest entry is `${id}|${t}|${kind}|${importance}|${content}`, hashed field by field
// (`DigestAccumulator.addJoined`) so that a ~400-character observation is not copied into it.
const entryFields = (m: MemoryItem): string[] => [String(m.id), String(m.t), m.kind, String(m.importance), m.content];

/** Keyword importance heuristic of Appendix A23, used when no model scores importance. */
export function importanceOf(text: string): number {
  const lower = text.toLowerCase();
  if (/fight|love|death|secret|surprise|important|emergency/.test(lower)) return 7;
  if (/walk|sit|stand|routine|usual/.test(lower)) return 3;
  return 5;
}

export function remember(stream: MemoryStream, item: Omit<MemoryItem, "id">, capacity: number): MemoryItem {
  // Fields listed rather than spread: a spread after `id` took V8's slow object-building path.
  const full: MemoryItem = { id: stream.nextId, t: item.t, kind: item.kind, content: item.content, importance: item.importance };
  stream.nextId++;
  stream.items.push(full);
  const digest = new DigestAccumulator(stream.digest);
  digest.addJoined(entryFields(full));
  stream.sinceReflection = item.kind === "reflection" ? 0 : stream.sinceReflection + 1;
  if (stream.items.length > capacity) {
    // Drop the least important, then oldest, items (the release's trimming order).
    const ranked = [...stream.items].sort((a, b) => a.importance - b.importance || a.t - b.t || a.id - b.id);
    const drop = new Set(ranked.slice(0, stream.items.length - capacity).map((m) => m.id));
    for (const m of stream.items) if (drop.has(m.id)) digest.removeJoined(entryFields(m));
    const kept = stream.items.filter((m) => !drop.has(m.id));
    keepRelevance(stream.items, kept, (_, i) => !drop.has(stream.items[i]!.id));
    stream.items = kept;
  }
  stream.digest = digest.digest;
  return full;
}

export function recomputeMemoryDigest(stream: MemoryStream): string {
  const digest = new DigestAccumulator(EMPTY_DIGEST);
  for (const m of stream.items) digest.addJoined(entryFields(m));
  return digest.digest;
}

const queryWords = (text: string): string[] => [...new Set(text.toLowerCase().split(/\s+/).filter((w) => w.length > 0))];

// Relevance of each item to the last query, kept per items array (remember() only pushes to it or
// replaces it, so a cached prefix stays valid and is extended by the new items). Items are
// immutable and the query (the agent's action) changes a few times a day while reflection
// re-scores the whole stream every few ticks; a per-item cache lookup (WeakMap or property) was
// ~40% of retrieval in a 1,000-agent day. Never serialised, never hashed.
interface RelevanceCache {
  query: string;
  /** Each item's content lower-cased with single spaces and no outer spaces (see `hasToken`). */
  readonly texts: string[];
  readonly relevance: number[];
}
const relevanceCaches = new WeakMap<readonly MemoryItem[], RelevanceCache>();

/** Carries the cached entries of the items that survive a trim over to the trimmed array. */
function keepRelevance(before: readonly MemoryItem[], after: readonly MemoryItem[], keep: (item: MemoryItem, i: number) => boolean): void {
  const cache = relevanceCaches.get(before);
  if (cache === undefined) return;
  const texts: string[] = [];
  const relevance: number[] = [];
  for (let i = 0; i < cache.texts.length; i++) {
    if (!keep(before[i]!, i)) continue;
    texts.push(cache.texts[i]!);
    // A relevance entry exists for a prefix of the texts; keep only a prefix.
    if (i < cache.relevance.length && relevance.length === texts.length - 1) relevance.push(cache.relevance[i]!);
  }
  relevanceCaches.set(after, { query: cache.query, texts, relevance });
}

// Whitespace other than single inner spaces. Generated memories have none, and testing for it is
// ~4× cheaper than the replace (a 1,000-agent day normalises ~50,000 texts of ~400 characters).
const IRREGULAR_SPACE = /[^\S ]|  |^ | $/;
function normalised(content: string): string {
  const lower = content.toLowerCase();
  return IRREGULAR_SPACE.test(lower) ? lower.replace(/\s+/g, " ").trim() : lower;
}

/**
 * True when `word` (no whitespace) is one of the space-separated tokens of a normalised text: the
 * same answer as searching the padded text for the padded word, but searching for the word itself
 * lets the substring search skip ahead on its first letter instead of stopping at every space
 * (2.5× faster on a 1,000-agent day's memories, and no padded copy of each text to keep).
 */
function hasToken(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const end = at + word.length;
    if ((at === 0 || text.charCodeAt(at - 1) === 32) && (end === text.length || text.charCodeAt(end) === 32)) return true;
  }
  return false;
}

function relevanceOf(items: readonly MemoryItem[], query: string): readonly number[] {
  let cache = relevanceCaches.get(items);
  if (cache === undefined) relevanceCaches.set(items, (cache = { query, texts: [], relevance: [] }));
  if (cache.query !== query) {
    cache.query = query;
    cache.relevance.length = 0;
  }
  const { texts, relevance } = cache;
  for (let i = texts.length; i < items.length; i++) texts.push(normalised(items[i]!.content));
  if (relevance.length < items.length) {
    const words = queryWords(query);
    for (let i = relevance.length; i < items.length; i++) {
      let value = 0.5;
      if (words.length > 0) {
        let overlap = 0;
        for (const word of words) if (hasToken(texts[i]!, word)) overlap++;
        value = Math.min(1, overlap / words.length);
      }
      relevance.push(value);
    }
  }
  return relevance;
}

export interface Scored {
  readonly item: MemoryItem;
  readonly score: number;
}

/** True when `a` ranks before `b`: higher score first, then the newer item (higher id). */
const ranksBefore = (score: number, id: number, b: Scored): boolean => score > b.score || (score === b.score && id > b.item.id);

/**
 * score = w_r·exp(−decay·Δt) + w_i·importance/10 + w_v·|query ∩ content| / |query|; the best
 * `limit` items, best first. The top few are kept in a small sorted list rather than scoring
 * objects for every item and sorting them all (reflection scores ~200 items to keep 15).
 */
export function retrieve(stream: MemoryStream, query: string, now: number, limit: number, weights: RetrievalWeights, decay: number): Scored[] {
  const top: Scored[] = [];
  if (limit <= 0) return top;
  const items = stream.items;
  const relevance = relevanceOf(items, query);
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const recency = Math.exp(-decay * Math.max(now - item.t, 0));
    const score = weights.recency * recency + (weights.importance * item.importance) / 10 + weights.relevance * relevance[i]!;
    if (top.length === limit && !ranksBefore(score, item.id, top[limit - 1]!)) continue;
    let at = top.length === limit ? limit - 1 : top.length;
    while (at > 0 && ranksBefore(score, item.id, top[at - 1]!)) {
      top[at] = top[at - 1]!;
      at--;
    }
    top[at] = { item, score };
  }
  return top;
}

export function recent(stream: MemoryStream, n: number): MemoryItem[] {
  return stream.items.slice(-n).reverse();
}
