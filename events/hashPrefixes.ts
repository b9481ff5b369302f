// Two hashes shown side by side (recorded and recomputed) cut to prefixes long enough to differ: a
// fixed 12 hex digits showed two differing hashes as the same when their first 12 agreed.

/** The two hashes cut to a prefix long enough to tell them apart (`least` hex digits at least), each with an ellipsis when cut. */
export function distinctPrefixes(a: string, b: string, least = 12): [string, string] {
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  const n = Math.max(least, common + 4);
  const cut = (h: string) => (h.length > n ? `${h.slice(0, n)}…` : h);
  return [cut(a), cut(b)];
}
