// `npm run lexicon`: rewrites the WordNet-derived entries of data/aura/intent-lexicon.json from
// the entries that carry a `wordnet` spec ({pos, senses, relations}): the words of each named
// sense's synset and of the synsets its relations reach (`&` similar to, `^` also see, `~`
// hyponyms), each with the synset it came from. Hand entries are kept as they are; the derived
// ones are replaced, so the file is the same however often it runs. A spec's `exclude` names
// synset words of another sense of the seed's meaning (WordNet's `see` under realise) kept out.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WordNet, type WordNetPos } from "./wordnet.ts";

interface Entry {
  term: string;
  category: string;
  source: string;
  wordnet?: { pos: WordNetPos; senses: number[]; relations: string[]; exclude?: string[] };
  synset?: string;
  from?: string;
}

const file = join(import.meta.dirname, "..", "..", "data", "aura", "intent-lexicon.json");
const doc = JSON.parse(readFileSync(file, "utf8")) as { entries: Entry[] };
const hand = doc.entries.filter((e) => e.source !== "wordnet");
const wn = new WordNet();
const derived: Entry[] = [];
const seen = new Set(hand.map((e) => `${e.category}|${e.term}`));
for (const seed of hand) {
  if (seed.wordnet === undefined) continue;
  const { pos, senses, relations, exclude = [] } = seed.wordnet;
  const offsets = wn.senses(seed.term, pos);
  if (offsets.length === 0) throw new Error(`${file}: '${seed.term}' (${pos}) is not in WordNet`);
  for (const n of senses) {
    const offset = offsets[n - 1];
    if (offset === undefined) throw new Error(`${file}: '${seed.term}' (${pos}) has ${offsets.length} senses, not ${n}`);
    const synset = wn.synset(offset, pos);
    const reached = [synset, ...synset.pointers.filter((p) => relations.includes(p.symbol)).map((p) => wn.synset(p.offset, p.pos))];
    for (const s of reached) {
      for (const word of s.words) {
        const key = `${seed.category}|${word}`;
        if (seen.has(key) || exclude.includes(word)) continue;
        seen.add(key);
        derived.push({ term: word, category: seed.category, source: "wordnet", synset: `${s.offset}-${s.pos}`, from: seed.term });
      }
    }
  }
}
doc.entries = [...hand, ...derived];
writeFileSync(file, `${JSON.stringify(doc, null, 1)}\n`);
console.log(`${file}: ${hand.length} hand entries, ${derived.length} from WordNet`);
