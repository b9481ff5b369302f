// The analyser's vocabulary (data/aura/intent-lexicon.json): every term with its category and
// source. A term matches a run of tokens word by word, each word against the token as written or
// its lemma; an adverb in -ly also matches its adjective ("secretly" → "secret").
import lexiconFile from "../../../data/aura/intent-lexicon.json" with { type: "json" };
import type { Token } from "./tokens.ts";

export type Category =
  | "availability" | "emotional_state" | "unspoken_goal" | "schedule" | "appropriateness" | "appropriateness_modal"
  | "belief" | "belief_verb" | "belief_possessive" | "appearance" | "relation"
  | "fact_past" | "fact_plan" | "fact_events" | "fact_unanswerable" | "fact_time" | "fact_self" | "fact_near" | "fact_everyone" | "belief_preposition" | "group" | "pronoun" | "first_person" | "literal"
  | "place" | "role" | "role_verb" | "activity" | "title" | "time_word" | "indefinite" | "spelling" | "age_old" | "age_young" | "kin_child" | "kin_parent" | "kin_sibling" | "kin_avuncular" | "kin_nibling" | "kin_spouse" | "gender_female" | "gender_male" | "superior" | "superior_head" | "superior_owner" | "superior_verb" | "body_part";

export interface LexiconEntry {
  readonly term: string;
  readonly category: Category;
  readonly source: string;
  /** WordNet-derived: the seed term it was reached from. */
  readonly from?: string;
  /** A title: the occupation it names ("dr" → doctor); a spelling: its standard form ("whats" → what's). */
  readonly means?: string;
}

export interface LexiconFile {
  readonly sources: Readonly<Record<string, string>>;
  readonly entries: readonly LexiconEntry[];
  /** The WordNet semantic classes derived entries come from (`npm run lexicon`), each with its source. */
  readonly classes?: readonly { readonly category: string; readonly lexfile: string; readonly source: string }[];
  /** noun.person words: their synsets, and their direct hypernyms marked `^` (space-separated). */
  readonly roleSynsets?: Readonly<Record<string, string>>;
}

export const LEXICON = lexiconFile as unknown as LexiconFile;

// Each category's terms indexed by their first word, longest first ("point of view" before "view");
// built on first use, so a command that analyses no query does not pay for it.
let indexes: Map<Category, Map<string, string[][]>> | null = null;
function byCategory(): Map<Category, Map<string, string[][]>> {
  if (indexes !== null) return indexes;
  indexes = new Map();
  for (const e of LEXICON.entries) {
    if (!indexes.has(e.category)) indexes.set(e.category, new Map());
    const words = e.term.toLowerCase().split(/[ -]+/);
    const index = indexes.get(e.category)!;
    if (!index.has(words[0]!)) index.set(words[0]!, []);
    index.get(words[0]!)!.push(words);
  }
  for (const index of indexes.values()) for (const terms of index.values()) terms.sort((a, b) => b.length - a.length);
  return indexes;
}

/** Heads and their WordNet synonyms/hyponyms (place and role categories): word → heads it stands for. */
function headsOf(category: Category): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const e of LEXICON.entries) {
    if (e.category !== category) continue;
    const head = e.from ?? e.term;
    for (const w of [e.term, head]) {
      if (!out.has(w)) out.set(w, new Set());
      out.get(w)!.add(head);
    }
  }
  return out;
}
export const PLACE_HEADS = headsOf("place");
/** Words for old and young age (WordNet's "old" and "young" and their similar-to adjectives). */
export const AGE_WORDS = {
  old: LEXICON.entries.filter((e) => e.category === "age_old").map((e) => e.term),
  young: LEXICON.entries.filter((e) => e.category === "age_young").map((e) => e.term),
};
/** Kinship words by class (WordNet's hyponyms of offspring, parent and sibling; aunts, uncles, nieces, nephews): whose kin a query asks. */
export type KinClass = "kin_child" | "kin_parent" | "kin_sibling" | "kin_avuncular" | "kin_nibling" | "kin_spouse";
const KIN_WORDS: ReadonlyMap<string, KinClass> = new Map(LEXICON.entries.filter((e) => e.category.startsWith("kin_")).map((e) => [e.term, e.category as KinClass]));
export const kinClassOf = (word: string): KinClass | undefined => KIN_WORDS.get(word);
/** The gender English marks on a word (a pronoun, an honorific, a gendered person noun), if any. */
export type Gender = "female" | "male";
const GENDERED: ReadonlyMap<string, Gender> = (() => {
  const female = new Set(LEXICON.entries.filter((e) => e.category === "gender_female").map((e) => e.term));
  const male = new Set(LEXICON.entries.filter((e) => e.category === "gender_male").map((e) => e.term));
  // A word WordNet files under both ("scout") marks neither.
  return new Map([...[...female].filter((w) => !male.has(w)).map((w) => [w, "female"] as const), ...[...male].filter((w) => !female.has(w)).map((w) => [w, "male"] as const)]);
})();
export const genderOf = (word: string): Gender | undefined => GENDERED.get(word.toLowerCase());
/** Report verbs (WordNet verb.communication): a belief only with a content complement ("told X that …", not "told X to …"). */
export const REPORT_VERBS: ReadonlySet<string> = new Set(LEXICON.entries.filter((e) => e.category === "belief_verb" && e.from === "verb.communication").map((e) => e.term));
/** Roles of someone in charge (WordNet, under head sense 4) and of greater rank (under superior sense 1): whom "the boss" names. */
export const SUPERIOR_ROLES = {
  head: new Set(LEXICON.entries.filter((e) => e.category === "superior_head").map((e) => e.term)),
  rank: new Set(LEXICON.entries.filter((e) => e.category === "superior").map((e) => e.term)),
  owner: new Set(LEXICON.entries.filter((e) => e.category === "superior_owner").map((e) => e.term)),
  /** Verbs that put someone in charge of what follows ("runs the farm", "manages the shop"). */
  verbs: new Set(LEXICON.entries.filter((e) => e.category === "superior_verb").map((e) => e.term)),
};
/** Honorific titles and the occupation each names. */
export const TITLES = new Map(LEXICON.entries.filter((e) => e.category === "title" && e.means !== undefined).map((e) => [e.term, e.means!]));

/** How two role words relate in WordNet's noun.person class: the same synset, or one a direct hyponym of the other. */
export function roleRelation(a: string, b: string): "synonym" | "narrower" | "broader" | null {
  const sa = roleSynsetsOf().get(a);
  const sb = roleSynsetsOf().get(b);
  if (sa === undefined || sb === undefined) return null;
  for (const id of sa.own) if (sb.own.has(id)) return "synonym";
  for (const id of sa.up) if (sb.own.has(id)) return "narrower";
  for (const id of sb.up) if (sa.own.has(id)) return "broader";
  return null;
}
/** Whether WordNet's noun.person class holds the word (a role, occupation or relation noun). */
export const isPersonNoun = (word: string): boolean => roleSynsetsOf().has(word);
/** … and its most frequent noun sense is a person: "orderly" is, "ward" and "end" are not. */
export const isMainlyPersonNoun = (word: string): boolean => roleSynsetsOf().get(word)?.dominant === true;
/** The verbs and nouns WordNet derives a person noun from ("director": direct; "receptionist": reception): what such a person does, or where. */
export const roleDerivationsOf = (word: string): readonly string[] => roleSynsetsOf().get(word)?.derived ?? [];
interface RoleSynsets {
  own: Set<string>;
  up: Set<string>;
  dominant: boolean;
  derived: string[];
}
let roleSynsets: Map<string, RoleSynsets> | null = null;
function roleSynsetsOf(): Map<string, RoleSynsets> {
  roleSynsets ??= new Map(
    Object.entries(LEXICON.roleSynsets ?? {}).map(([word, ids]) => {
      const all = ids.split(" ");
      const synsets = all.filter((i) => /^\d/.test(i));
      return [word, { own: new Set(synsets), up: new Set(all.filter((i) => i.startsWith("^")).map((i) => i.slice(1))), dominant: all.includes("*"), derived: all.filter((i) => i.startsWith("+")).map((i) => i.slice(1)) }];
    }),
  );
  return roleSynsets;
}

/**
 * Forms a word may stand for when the tagger left it as written: an adverb in -ly its adjective
 * ("secretly" → secret), a gerund its verb ("planning" → plan, "hoping" → hope).
 */
export function stems(text: string): string[] {
  const out: string[] = [];
  if (text.endsWith("ly") && text.length > 4) out.push(text.slice(0, -2));
  if (text.endsWith("ing") && text.length > 5) {
    const stem = text.slice(0, -3);
    out.push(stem, `${stem}e`);
    if (stem.at(-1) === stem.at(-2)) out.push(stem.slice(0, -1));
  }
  return out;
}

const wordMatches = (word: string, t: Token): boolean => word === t.text || word === t.lemma || stems(t.text).includes(word);

export interface Cue {
  readonly category: Category;
  readonly term: string;
  readonly start: number;
  /** Index after the last token. */
  readonly end: number;
}

/** Every lexicon term of a category found in the tokens (longest at each position). */
export function cuesOf(tokens: readonly Token[], category: Category): Cue[] {
  const index = byCategory().get(category);
  const out: Cue[] = [];
  if (index === undefined) return out;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const candidates = [...new Set([t.text, t.lemma, ...stems(t.text)])].flatMap((w) => index.get(w) ?? []).sort((a, b) => b.length - a.length);
    for (const words of candidates) {
      if (i + words.length > tokens.length) continue;
      if (words.every((w, k) => wordMatches(w, tokens[i + k]!))) {
        out.push({ category, term: words.join(" "), start: i, end: i + words.length });
        break;
      }
    }
  }
  return out;
}

export const hasCue = (tokens: readonly Token[], category: Category): boolean => cuesOf(tokens, category).length > 0;

/** What is wrong with a lexicon: entries without a known source, WordNet entries without their synset. */
export function lexiconProblems(file: LexiconFile): string[] {
  const out: string[] = [];
  file.entries.forEach((e, i) => {
    const at = `entries[${i}] ('${String(e.term)}', ${String(e.category)})`;
    if (typeof e.term !== "string" || e.term.trim() === "") out.push(`${at}: term: expected a word or phrase`);
    if (typeof e.source !== "string" || e.source === "") out.push(`${at}: source: missing (every entry names where it comes from)`);
    else if (file.sources[e.source] === undefined) out.push(`${at}: source: '${e.source}' is not one of sources{} (${Object.keys(file.sources).join(", ")})`);
    const w = e as LexiconEntry & { synset?: unknown };
    if (e.source === "wordnet" && (typeof w.synset !== "string" || typeof e.from !== "string")) out.push(`${at}: a WordNet entry names its synset and the seed it came from`);
  });
  // Each WordNet class the derived entries come from names the definition it serves.
  (file.classes ?? []).forEach((c, i) => {
    if (file.sources[c.source] === undefined) out.push(`classes[${i}] (${c.lexfile}): source: '${c.source}' is not one of sources{}`);
  });
  return out;
}
