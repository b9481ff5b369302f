// A hand-written scene (the implicit-intent benchmark's snapshot, paper A14) as the state that the
// environment and the agents own: the public layer (where everyone is and what they visibly do),
// each agent's private state, each agent's beliefs about the others, and optional plans.
// Also the small, world-agnostic text helpers that resolve names and places in a query.

export interface PublicRow {
  readonly location: string;
  readonly action: string;
}

export interface Scene {
  readonly name: string;
  readonly summary: string;
  readonly public_state: Readonly<Record<string, PublicRow>>;
  readonly private_state: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly beliefs_about_others: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, string>>>>>>;
  readonly plans?: Readonly<Record<string, readonly string[]>>;
}

/** `Lin Wei` → `lin-wei`: actor ids are derived from names. */
export const slugOf = (name: string): string =>
  name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

export const agentIdOf = (name: string): string => `agent/${slugOf(name)}`;
export const SCENE_ENV_ID = "env/scene";
export const CONTROLLER_ID = "probe/aura";

/**
 * Roster in sorted order. Never the file's key order: a config passes through canonical JSON
 * (sorted keys) into the log header, and a replay must see the same order as the run.
 */
export const rosterOf = (scene: Scene): string[] => Object.keys(scene.public_state).sort();

const sortKeys = <T>(value: T): T => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.keys(value as object).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])])) as T;
};

/** The scene with every object's keys sorted, as a replay reads it back from the log. */
export const canonicalScene = (scene: Scene): Scene => sortKeys(scene);

/** The most common public location (ties: first seen): where the scene "is" (the v2 focus location). */
export function focusLocationOf(scene: Scene): string {
  const counts = new Map<string, number>();
  for (const name of rosterOf(scene)) counts.set(scene.public_state[name]!.location, (counts.get(scene.public_state[name]!.location) ?? 0) + 1);
  let best = "";
  let n = -1;
  for (const [loc, c] of counts) if (c > n) [best, n] = [loc, c];
  return best;
}

/** The scene's clock as HH:MM when its summary states one ("10:15 AM", "14:30"), else null. */
export function sceneTimeOf(scene: Scene): string | null {
  const m = /\b(\d{1,2}):(\d{2})\s*([AaPp]\.?[Mm]\.?)?/.exec(scene.summary);
  if (m === null) return null;
  let h = Number(m[1]);
  const pm = m[3] !== undefined && /^p/i.test(m[3]);
  const am = m[3] !== undefined && /^a/i.test(m[3]);
  if (pm && h < 12) h += 12;
  if (am && h === 12) h = 0;
  return `${String(h).padStart(2, "0")}:${m[2]}`;
}

/** Plan of an agent: the scene's plan when given, else what is publicly scheduled (its current activity). */
export function planOf(scene: Scene, name: string): string[] {
  const given = scene.plans?.[name];
  if (given !== undefined) return [...given];
  const row = scene.public_state[name];
  // No private goal here: the released v2 tool put "private goal: …" in the plan, leaking private
  // state through a public tool (reference/aura.md §8.11); we do not reproduce that.
  return row === undefined ? [] : [`current public activity: ${row.action}`];
}

export const normalise = (text: string): string =>
  ` ${text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[^a-z0-9' ]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()} `;

/** Where each roster name is mentioned (first index), in order of mention; possessives count. */
export function mentionedNames(text: string, roster: readonly string[]): string[] {
  const t = normalise(text);
  const hits: Array<{ name: string; at: number }> = [];
  for (const name of roster) {
    const n = normalise(name).trim();
    const at = t.indexOf(` ${n}`);
    if (at >= 0 && /[ ']/.test(t[at + n.length + 1] ?? " ")) hits.push({ name, at });
  }
  return hits.sort((a, b) => a.at - b.at).map((h) => h.name);
}

const GENERIC_PLACE_WORDS = new Set(["the", "town", "home", "house", "place", "s", "of", "and", "at"]);

/**
 * The public location a query names: a full name, or a distinctive word of one ("the cafe" →
 * "Sunrise Cafe"). Unique matches only; null when the query names no known place.
 */
export function mentionedLocation(text: string, locations: readonly string[]): string | null {
  const t = normalise(text);
  const full = [...locations].sort((a, b) => b.length - a.length).find((l) => t.includes(normalise(l)));
  if (full !== undefined) return full;
  const byWord = new Map<string, Set<string>>();
  for (const l of locations) {
    for (const w of normalise(l).trim().split(" ")) {
      if (w.length <= 3 || GENERIC_PLACE_WORDS.has(w)) continue;
      if (!byWord.has(w)) byWord.set(w, new Set());
      byWord.get(w)!.add(l);
    }
  }
  for (const [w, ls] of byWord) if (ls.size === 1 && new RegExp(` ${w}s? `).test(t)) return [...ls][0]!;
  return null;
}
