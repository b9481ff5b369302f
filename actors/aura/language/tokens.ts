// Tokens with lemma and part of speech, from one of two well-kept English NLP libraries behind one
// interface, so the query analyser can be measured with either (docs/aura.md: wink-nlp was chosen
// on the development split; compromise stays selectable). Both are pure, synchronous and
// deterministic: the same text gives the same tokens on every run and replay.
import { createRequire } from "node:module";
import { LEXICON } from "./lexicon.ts";
import type nlpType from "compromise";
import type winkNLPType from "wink-nlp";
import type modelType from "wink-eng-lite-web-model";

// Loaded on first use: compromise alone takes ~0.35 s to import, which every command would pay.
const load = createRequire(import.meta.url);

/** Universal part-of-speech tags (the subset the analyser reads). */
export type Pos = "NOUN" | "PROPN" | "PRON" | "VERB" | "AUX" | "ADJ" | "ADV" | "ADP" | "DET" | "PART" | "NUM" | "CCONJ" | "SCONJ" | "PUNCT" | "X";

export interface Token {
  /** The word as written, lower-cased, apostrophes straightened ("'s", "n't" are tokens of their own). */
  readonly text: string;
  /** Dictionary form, lower-cased ("realises" → "realize"/"realise", "feeling" → "feel"). */
  readonly lemma: string;
  readonly pos: Pos;
  /** Whether the word was capitalised as written (names). */
  readonly capital: boolean;
  /** Whether it was written in capitals, two letters or more (initials, abbreviations: "JP", "TA"). */
  readonly upper: boolean;
}

export type TokenizerName = "wink" | "compromise";

const straighten = (s: string) => s.replace(/[’‘]/g, "'");

let wink: ReturnType<typeof winkNLPType> | null = null;
let nlp: typeof nlpType | null = null;

// The model's own vocabulary ends where the ids of words it has not seen begin: the first word read
// after loading that no English has ("qxzjv") gets the first such id.
let vocabulary = 0;
function loadWink(): ReturnType<typeof winkNLPType> {
  if (wink === null) {
    wink = (load("wink-nlp") as typeof winkNLPType)(load("wink-eng-lite-web-model") as typeof modelType);
    vocabulary = (wink.readDoc("qxzjvqxzjv").tokens().out(wink.its.uniqueId) as unknown as number[])[0]!;
  }
  return wink;
}

/** Whether the tagger's English vocabulary has a word, lower-cased ("stu", "kowalczyk": not). */
export function knownWord(word: string): boolean {
  const w = loadWink();
  const ids = w.readDoc(word.toLowerCase()).tokens().out(w.its.uniqueId) as unknown as number[];
  return ids.length === 1 && ids[0]! < vocabulary;
}

function winkTokens(text: string): Token[] {
  const wink = loadWink();
  const doc = wink.readDoc(straighten(text));
  const its = wink.its;
  const values = doc.tokens().out(its.value) as string[];
  // its.lemma is typed as needing the addons cache, which out() supplies at run time.
  const lemmas = doc.tokens().out(its.lemma as unknown as typeof its.value) as string[];
  const tags = doc.tokens().out(its.pos) as string[];
  return values.flatMap((v, i): Token[] => {
    // The model leaves "I'm" whole (a proper noun): split a clitic it did not, as English writes it,
    // into the pronoun and its auxiliary.
    const clitic = /^([A-Za-z]+)'(m|re|ve|ll|d)$/.exec(v);
    if (clitic !== null && CLITICS[clitic[2]!.toLowerCase()] !== undefined) {
      const [, word, c] = clitic;
      return [
        { text: word!.toLowerCase(), lemma: word!.toLowerCase(), pos: "PRON", capital: /^[A-Z]/.test(word!), upper: false },
        { text: `'${c!.toLowerCase()}`, lemma: CLITICS[c!.toLowerCase()]!, pos: "AUX", capital: false, upper: false },
      ];
    }
    return [{ text: v.toLowerCase(), lemma: (lemmas[i] ?? v).toLowerCase(), pos: (tags[i] ?? "X") as Pos, capital: /^[A-Z]/.test(v), upper: /^[A-Z]{2,}$/.test(v) }];
  });
}
const CLITICS: Readonly<Record<string, string>> = { m: "be", re: "be", ve: "have", ll: "will", d: "would" };

const COMPROMISE_POS: ReadonlyArray<[string, Pos]> = [
  ["Pronoun", "PRON"], ["ProperNoun", "PROPN"], ["Person", "PROPN"], ["Auxiliary", "AUX"], ["Copula", "AUX"], ["Modal", "AUX"],
  ["Verb", "VERB"], ["Adjective", "ADJ"], ["Adverb", "ADV"], ["Preposition", "ADP"], ["Determiner", "DET"], ["Conjunction", "CCONJ"],
  ["Value", "NUM"], ["Noun", "NOUN"], ["QuestionWord", "PRON"],
];

function compromiseTokens(text: string): Token[] {
  nlp ??= (load("compromise") as { default?: typeof nlpType } & typeof nlpType).default ?? (load("compromise") as typeof nlpType);
  const doc = nlp(straighten(text));
  doc.compute("root");
  const out: Token[] = [];
  for (const sentence of doc.json() as Array<{ terms: Array<{ text: string; normal?: string; root?: string; tags: string[]; implicit?: string }> }>) {
    for (const t of sentence.terms) {
      // compromise splits a contraction into terms that carry the implied word ("where's" → where, is).
      const words = t.text.length === 0 ? [t.implicit ?? ""] : [t.text.replace(/[^A-Za-z0-9']+$/g, "").replace(/^[^A-Za-z0-9']+/g, "")];
      for (const w of words) {
        if (w.length === 0) continue;
        const pos = COMPROMISE_POS.find(([tag]) => t.tags.includes(tag))?.[1] ?? "X";
        const lower = w.toLowerCase();
        // "where's" is where + is (compromise gives the implicit "is"); "Lin Wei's" is a possessive.
        const possessive = lower.endsWith("'s") && t.implicit === undefined;
        const base = possessive ? lower.slice(0, -2) : lower;
        const word = t.implicit !== undefined ? base.replace(/'s$/, "") : base;
        out.push({ text: word, lemma: t.implicit !== undefined ? word : (t.root ?? t.normal ?? base).replace(/'s$/, "").toLowerCase(), pos, capital: /^[A-Z]/.test(w), upper: /^[A-Z]{2,}$/.test(w) });
        if (possessive) out.push({ text: "'s", lemma: "'s", pos: "PART", capital: false, upper: false });
      }
    }
  }
  return out;
}

// Informal spellings ("whats", "hes", "rn", "b4") and the standard form each stands for (the
// lexicon's `spelling` entries), read before tagging so the tagger sees ordinary English.
let spellings: Map<string, string> | null = null;
export function standardSpelling(text: string): string {
  spellings ??= new Map(LEXICON.entries.filter((e) => e.category === "spelling" && e.means !== undefined).map((e) => [e.term, e.means!]));
  const table = spellings;
  return text.replace(/[A-Za-z0-9]+(?:'[A-Za-z]+)?/g, (word) => {
    const means = table.get(word.toLowerCase());
    if (means === undefined) return word;
    return /^[A-Z]/.test(word) ? means[0]!.toUpperCase() + means.slice(1) : means;
  });
}

export function tokenize(text: string, tokenizer: TokenizerName = "wink"): Token[] {
  const standard = standardSpelling(straighten(text));
  return tokenizer === "wink" ? winkTokens(standard) : compromiseTokens(standard);
}
