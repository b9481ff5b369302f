// The release's action grammar, shared by task actions and probes of every world kind.
import type { Parsed } from "./types.ts";

/** The release's grammar: `verb(arg, …)`, verb lower-cased, quotes stripped. */
export function parseAction(text: string): Parsed | null {
  const m = /^(\w+)\(([^)]*)\)$/.exec(text.trim());
  if (m === null) return null;
  const args = m[2]!.split(",").map((a) => a.trim().replace(/^['"]|['"]$/g, "")).filter((a) => a.length > 0);
  return { verb: m[1]!.toLowerCase(), args };
}

/** The index in a numbered name (`room_3` → 3 for prefix `room_`), or -1 if not one below `size`. */
export const indexOfName = (prefix: string, name: string | undefined, size: number): number => {
  if (name === undefined || !name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  if (!/^\d+$/.test(rest)) return -1;
  const i = Number(rest);
  return i < size ? i : -1;
};
