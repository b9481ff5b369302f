// `npm run lexicon`: rewrites the WordNet-derived part of data/aura/intent-lexicon.json.
// - From each hand entry with a `wordnet` spec ({pos, senses, relations, exclude}): the words of
//   each named sense's synset and of the synsets its relations reach (`&` similar to, `^` also
//   see, `~` hyponyms, `~*` hyponyms transitively), each with the synset it came from; `exclude` keeps out words of another
//   sense of the seed's meaning (WordNet's `see` under realise).
// - From each of `classes` (a WordNet lexicographer file): for a word category, every word whose
//   most frequent sense lies in the class (`dominant`) and, for verbs, takes a that-clause where
//   `frames` asks ("Somebody ----s that CLAUSE": a belief report), minus words another category already
//   holds (`excludeCategories`: "plan" is a goal word, not a belief verb); for roles
//   (`synsets`), `roleSynsets`: each noun.person word with its synsets and their direct
//   hypernyms, so "novelist" meets "writer" and "barman" meets "bartender", `*` where the
//   word's most frequent noun sense is a person, and `+word` for each verb or noun WordNet derives it
//   from or gives ("director" +direct, "receptionist" +reception).
// Hand entries are kept as they are; the derived part is replaced, so the file is the same however
// often it runs.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LEXFILES, membersOf, WordNet, type WordNetPos } from "./wordnet.ts";
import { UsageError } from "../../kernel/usageError.ts";

interface Entry {
  term: string;
  category: string;
  source: string;
  /** `dominant`: keep only words whose most frequent sense is the synset reached. */
  wordnet?: { pos: WordNetPos; senses: number[]; relations: string[]; exclude?: string[]; dominant?: boolean };
  synset?: string;
  from?: string;
}

interface WordClass {
  category: string;
  lexfile: string;
  pos: WordNetPos;
  dominant?: boolean;
  /** Verb frames a member's synset must allow (26: "Somebody ----s that CLAUSE"). */
  frames?: number[];
  synsets?: boolean;
  excludeCategories?: string[];
  /** Words kept out whose dominant sense is an everyday activity ("read"). */
  exclude?: string[];
  source: string;
}

const file = join(import.meta.dirname, "..", "..", "..", "data", "aura", "intent-lexicon.json");
const doc = JSON.parse(readFileSync(file, "utf8")) as { entries: Entry[]; classes?: WordClass[]; roleSynsets?: Record<string, string> };
const hand = doc.entries.filter((e) => e.source !== "wordnet");
const wn = new WordNet();
const derived: Entry[] = [];
const seen = new Set(hand.map((e) => `${e.category}|${e.term}`));
for (const seed of hand) {
  if (seed.wordnet === undefined) continue;
  const { pos, senses, relations, exclude = [], dominant = false } = seed.wordnet;
  const offsets = wn.senses(seed.term, pos);
  if (offsets.length === 0) throw new UsageError(`${file}: '${seed.term}' (${pos}) is not in WordNet`);
  for (const n of senses) {
    const offset = offsets[n - 1];
    if (offset === undefined) throw new UsageError(`${file}: '${seed.term}' (${pos}) has ${offsets.length} senses, not ${n}`);
    const synset = wn.synset(offset, pos);
    const reached = [synset, ...synset.pointers.filter((p) => relations.includes(p.symbol)).map((p) => wn.synset(p.offset, p.pos))];
    // "~*": every hyponym, transitively (each synset once).
    if (relations.includes("~*")) {
      const seen = new Set(reached.map((r) => r.offset));
      for (let k = 0; k < reached.length; k++) {
        for (const p of reached[k]!.pointers) {
          if (p.symbol !== "~" || seen.has(p.offset)) continue;
          seen.add(p.offset);
          reached.push(wn.synset(p.offset, p.pos));
        }
      }
    }
    for (const s of reached) {
      for (const word of s.words) {
        const key = `${seed.category}|${word}`;
        if (seen.has(key) || exclude.includes(word) || (dominant && wn.senses(word, pos)[0] !== s.offset)) continue;
        seen.add(key);
        derived.push({ term: word, category: seed.category, source: "wordnet", synset: `${s.offset}-${s.pos}`, from: seed.term });
      }
    }
  }
}
const held = (categories: readonly string[]) => new Set([...hand, ...derived].filter((e) => categories.includes(e.category)).map((e) => e.term));
let roleSynsets: Record<string, string> | undefined;
for (const c of doc.classes ?? []) {
  const members = membersOf(wn, c.lexfile, c.pos);
  if (c.synsets === true) {
    const map = new Map<string, Set<string>>();
    for (const m of members) {
      // Named individuals (instances: "Einstein") are people, not roles.
      if (m.synset.pointers.some((p) => p.symbol === "@i")) continue;
      const ids = map.get(m.word) ?? new Set<string>();
      ids.add(m.synset.offset);
      for (const p of m.synset.pointers) if (p.symbol === "@") ids.add(`^${p.offset}`);
      // "*": the word's most frequent noun sense is a person ("orderly"; not "ward" or "end").
      if (m.sense === 1) ids.add("*");
      // "+word": a verb or a noun the word is derived from or gives (WordNet's `+` pointer from this
      // very word: "director" +direct, "operator" +operate, "receptionist" +reception), so "the
      // director" meets whoever is directing and "the receptionist" whoever is on reception. (A
      // derived person noun is a role of its own: "patron" +patronage, not +patroness.)
      const at = m.synset.words.indexOf(m.word) + 1;
      for (const p of m.synset.pointers) {
        if (p.symbol !== "+" || (p.pos !== "v" && p.pos !== "n") || (p.source !== 0 && p.source !== at)) continue;
        const target = wn.synset(p.offset, p.pos);
        if (p.pos === "n" && target.lexfile === LEXFILES["noun.person"]) continue;
        const word = target.words[p.target - 1];
        if (word !== undefined && !word.includes(" ")) ids.add(`+${word}`);
      }
      map.set(m.word, ids);
    }
    roleSynsets = Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([w, ids]) => [w, [...ids].sort().join(" ")]));
    continue;
  }
  const taken = held(c.excludeCategories ?? []);
  for (const m of members) {
    if (c.dominant === true && m.sense !== 1) continue;
    if (c.frames !== undefined && !c.frames.some((n) => m.synset.frames.has(n))) continue;
    // Gerunds and two-letter words ("seeing", "IT") are not the nouns a perspective names.
    if (c.pos === "n" && (m.word.length < 3 || m.word.endsWith("ing"))) continue;
    const key = `${c.category}|${m.word}`;
    if (seen.has(key) || taken.has(m.word) || (c.exclude ?? []).includes(m.word)) continue;
    seen.add(key);
    derived.push({ term: m.word, category: c.category, source: "wordnet", synset: `${m.synset.offset}-${c.pos}`, from: c.lexfile });
  }
}
doc.entries = [...hand, ...derived];
if (roleSynsets !== undefined) doc.roleSynsets = roleSynsets;
// One line per entry and per role word: the file stays diffable without a line per array element.
const { roleSynsets: _old, ...rest } = doc;
const body = JSON.stringify({ ...rest, entries: [] }, null, 1).replace(/"entries": \[\]/, `"entries": [\n${doc.entries.map((e) => `  ${JSON.stringify(e)}`).join(",\n")}\n ]`);
const roles = roleSynsets === undefined ? "" : `,\n "roleSynsets": {\n${Object.entries(roleSynsets).map(([w, ids]) => `  ${JSON.stringify(w)}: ${JSON.stringify(ids)}`).join(",\n")}\n }`;
writeFileSync(file, `${body.replace(/\n}$/, `${roles}\n}`)}\n`);
console.log(`${file}: ${hand.length} hand entries, ${derived.length} from WordNet${roleSynsets === undefined ? "" : `, ${Object.keys(roleSynsets).length} role words`}`);
