// Who a query is about: each mention of a person, by name (whole or one unique part), by role or
// occupation (the town roster's occupations and the roles a scene summary gives in parentheses,
// with WordNet synonyms and hyponyms of the role's head: "the novelist" is the writer), by what
// they visibly do ("the one reading", "the person behind the counter"), or by a pronoun, which
// refers to the nearest person mentioned before it (else after it).
import { defaultProfiles } from "../../auratown/config.ts";
import { cuesOf, ROLE_HEADS } from "./lexicon.ts";
import { tokenize, type Token, type TokenizerName } from "./tokens.ts";

export interface Mention {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly by: "name" | "role" | "description" | "pronoun";
}

export interface PersonProfile {
  /** Role words: occupation and the summary's first parenthetical clause ("cafe owner"). */
  readonly role: readonly string[];
  /** The head noun of each role ("owner" of "cafe owner"): a reference must name one of these. */
  readonly heads: readonly string[];
  /** What they visibly do or where: their public action and the rest of the summary's note. */
  readonly about: readonly string[];
}

const STOP = new Set(["the", "a", "an", "of", "in", "at", "on", "to", "and", "with", "for", "her", "his", "their", "is", "be", "by", "from", "s", "'s"]);
const contentWords = (tokens: readonly Token[]): string[] => tokens.filter((t) => /^[a-z]/.test(t.text) && !STOP.has(t.text)).flatMap((t) => (t.lemma === t.text ? [t.text] : [t.text, t.lemma]));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Role and description words of each roster member, from the town's occupations and the summary. */
export function profilesOf(summary: string, roster: readonly string[], actions: Readonly<Record<string, string>>, tokenizer: TokenizerName): Record<string, PersonProfile> {
  const out: Record<string, PersonProfile> = {};
  for (const name of roster) {
    const role: string[] = [];
    const heads: string[] = [];
    const addRole = (phrase: string) => {
      const words = contentWords(tokenize(phrase, tokenizer));
      role.push(...words);
      const nouns = tokenize(phrase, tokenizer).filter((t) => t.pos === "NOUN" || t.pos === "PROPN");
      const head = nouns.at(-1) ?? tokenize(phrase, tokenizer).at(-1);
      if (head !== undefined) heads.push(head.text, head.lemma);
    };
    const about: string[] = [...contentWords(tokenize(actions[name] ?? "", tokenizer))];
    const town = defaultProfiles.find((a) => a.name === name);
    if (town !== undefined) addRole(town.occupation);
    const note = new RegExp(`${escape(name)}\\s*\\(([^)]*)\\)`).exec(summary);
    if (note !== null) {
      // The first clause is a role when it is a noun phrase ("cafe owner", "a night-shift nurse"),
      // not an activity or a position ("sipping coffee", "at a corner table").
      const [first = "", ...rest] = note[1]!.split(/[,;]/);
      const clause = tokenize(first, tokenizer);
      const isRole = clause.length > 0 && clause.every((t) => t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "ADJ" || t.pos === "DET" || t.pos === "PUNCT" || t.pos === "NUM");
      if (isRole) addRole(first);
      about.push(...contentWords(tokenize(isRole ? rest.join(" ") : note[1]!, tokenizer)));
    }
    out[name] = { role: [...new Set(role)], heads: [...new Set(heads)], about: [...new Set(about)] };
  }
  return out;
}

const headsOf = (word: string): Set<string> => new Set([word, ...(ROLE_HEADS.get(word) ?? [])]);
const sameRoleWord = (q: string, r: string): boolean => {
  if (q === r) return true;
  const hq = headsOf(q);
  for (const h of headsOf(r)) if (hq.has(h)) return true;
  // A compound naming the role's modifier ("shopkeeper" for a shop owner).
  return r.length >= 4 && q.length > r.length && q.startsWith(r);
};

/** The unique best-scoring person for some words, or null (no match, or a tie). */
function best(scores: ReadonlyArray<[string, number]>): string | null {
  const sorted = [...scores].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
  if (sorted.length === 0 || (sorted.length > 1 && sorted[1]![1] === sorted[0]![1])) return null;
  return sorted[0]![0];
}

const isNounish = (t: Token) => t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "ADJ" || t.pos === "VERB";

/** Mentions of roster members in order of appearance. `taken` marks tokens inside a place name. */
export function mentionsOf(tokens: readonly Token[], roster: readonly string[], profiles: Readonly<Record<string, PersonProfile>>, taken: ReadonlySet<number>): Mention[] {
  const out: Mention[] = [];
  const used = new Set<number>(taken);
  const claim = (m: Mention) => {
    out.push(m);
    for (let i = m.start; i < m.end; i++) used.add(i);
  };
  // Whole names.
  const parts = roster.map((name) => ({ name, words: name.toLowerCase().split(/\s+/) }));
  for (let i = 0; i < tokens.length; i++) {
    for (const { name, words } of parts) {
      // A place named after someone ("Zhang Hao's Home") still mentions them.
      if (words.every((w, k) => tokens[i + k]?.text === w && (!used.has(i + k) || taken.has(i + k)))) claim({ name, start: i, end: i + words.length, by: "name" });
    }
  }
  // One capitalised part of a name that no one else's name has.
  const owners = new Map<string, string[]>();
  for (const { name, words } of parts) for (const w of words) owners.set(w, [...(owners.get(w) ?? []), name]);
  tokens.forEach((t, i) => {
    const who = owners.get(t.text);
    if (!used.has(i) && t.capital && who?.length === 1 && !out.some((m) => m.name === who[0] && m.by === "name")) claim({ name: who[0]!, start: i, end: i + 1, by: "name" });
  });
  // Role and description references: a determiner, then the words up to the next verb or preposition.
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (used.has(i) || !(t.pos === "DET" || t.text === "our" || t.text === "your")) continue;
    let j = i + 1;
    const np: Token[] = [];
    const nominal = (u: Token) => u.pos === "NOUN" || u.pos === "ADJ" || u.pos === "PROPN" || cuesOf([u], "activity").length > 0;
    while (j < tokens.length && !used.has(j) && nominal(tokens[j]!) && np.length < 4) np.push(tokens[j++]!);
    if (np.length === 0) continue;
    // The head is the last noun that names a role ("the cafe owner right now": owner).
    let byRole: string | null = null;
    for (let h = np.length - 1; h >= 0 && byRole === null; h--) {
      const head = np[h]!;
      if (head.pos !== "NOUN" && head.pos !== "PROPN") continue;
      const words = np.slice(0, h + 1).flatMap((w) => [w.text, w.lemma]);
      byRole = best(roster.map((n) => {
        const role = profiles[n]?.role ?? [];
        const headHit = (profiles[n]?.heads ?? []).some((r) => sameRoleWord(head.text, r) || sameRoleWord(head.lemma, r)) || role.some((r) => r.length >= 4 && head.text.length > r.length && head.text.startsWith(r));
        return [n, headHit ? 1 + words.filter((w) => role.some((r) => sameRoleWord(w, r))).length : 0];
      }));
      if (byRole !== null) j = i + 1 + h + 1;
    }
    if (byRole !== null) {
      claim({ name: byRole, start: i, end: j, by: "role" });
      continue;
    }
    // "the one/person/guy … <doing something>": compare what follows with what each person visibly does.
    const one = np.findIndex((u) => cuesOf([u], "activity").length > 0);
    if (one >= 0) {
      let k = i + 2 + one;
      const after: Token[] = [];
      while (k < tokens.length && after.length < 6 && tokens[k]!.pos !== "PUNCT" && !used.has(k)) after.push(tokens[k++]!);
      const said = contentWords(after.filter(isNounish));
      const who = best(roster.map((n) => [n, said.filter((w) => (profiles[n]?.about ?? []).includes(w)).length]));
      if (who !== null) claim({ name: who, start: i, end: k, by: "description" });
    }
  }
  out.sort((a, b) => a.start - b.start);
  // Pronouns: the nearest person mentioned before, else after.
  const pronouns = cuesOf(tokens, "pronoun").filter((c) => !used.has(c.start));
  const resolved: Mention[] = [];
  for (const p of pronouns) {
    const before = out.filter((m) => m.end <= p.start).at(-1);
    const after = out.find((m) => m.start >= p.end);
    const ref = before ?? after;
    if (ref !== undefined) resolved.push({ name: ref.name, start: p.start, end: p.end, by: "pronoun" });
  }
  return [...out, ...resolved].sort((a, b) => a.start - b.start);
}
