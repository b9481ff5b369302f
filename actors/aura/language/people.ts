// Who a query is about: each mention of a person, by name (whole, one unique part, or a nickname
// the summary gives), by role or occupation (the town roster's occupations, the noun-phrase
// clauses a scene summary gives in parentheses, an honorific title, with WordNet synonyms and
// hyponyms of the role's head: "the novelist" is the writer), by what they visibly do or where
// ("the one reading", "the guy with the stopwatch"), or by a pronoun, which refers to the nearest
// person mentioned before it (else after it).
import { defaultProfiles } from "../../auratown/config.ts";
import { AGE_WORDS, cuesOf, type Gender, genderOf, isMainlyPersonNoun, isPersonNoun, kinClassOf, type KinClass, REPORT_VERBS, roleRelation, roleDerivationsOf, stems, SUPERIOR_ROLES, TITLES } from "./lexicon.ts";
import { knownWord, tokenize, type Token, type TokenizerName } from "./tokens.ts";

export interface Mention {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly by: "name" | "role" | "description" | "pronoun";
}

export interface PersonProfile {
  /** Role words: occupation, title and the summary's noun-phrase clauses ("cafe owner", "head of maintenance"). */
  readonly role: readonly string[];
  /** The head noun of each role ("owner" of "cafe owner", "head" of "head of maintenance"): a role reference names one. */
  readonly heads: readonly string[];
  /** What they visibly do or where: their public action and the summary's other clauses. */
  readonly about: readonly string[];
  /** Other names the summary gives them: a quoted nickname ('Joseph "Joe" Malik'). */
  readonly nicknames: readonly string[];
  /** Initials of a role of two or more words ("teaching assistant" → "ta"): an abbreviation names it. */
  readonly initials: readonly string[];
  /** Kin the summary states: "Sean's daughter" is { of: "Sean Gallagher", word: "daughter" }. */
  readonly kin?: readonly { readonly of: string; readonly word: string }[];
  /** The words of where they are ("reception" of "Reception"): a role derived from one names them ("the receptionist"). */
  readonly place?: readonly string[];
  /** The summary or their action says they are in charge of something ("runs the farm", "manages the shop"). */
  readonly inCharge?: true;
  /** The gender the summary marks on them (their role or kin word, a title, a pronoun in their own note), when it marks one. */
  readonly gender?: Gender;
}

const STOP = new Set(["the", "a", "an", "of", "in", "at", "on", "to", "and", "with", "for", "her", "his", "their", "is", "be", "by", "from", "s", "'s"]);
// A word the tagger does not know keeps its plural as its lemma ("mooncakes"): its singular is added.
const singular = (w: string): string[] => (w.length > 4 && w.endsWith("s") && !w.endsWith("ss") ? [w.slice(0, -1)] : []);
const contentWords = (tokens: readonly Token[]): string[] => tokens.filter((t) => /^[a-z]/.test(t.text) && !STOP.has(t.text)).flatMap((t) => [...new Set([t.text, t.lemma, ...stems(t.text), ...singular(t.lemma)])]);

// A quoted name: an opening quote after a space or bracket, a closing one before a space or punctuation
// (not the apostrophe of "ship's").
const QUOTED = /(?<=^|[\s(])["“'‘]([A-Za-z][\w .-]{0,28}?)["”'’](?=$|[\s),;.:!?-])/g;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const isNoun = (t: Token) => t.pos === "NOUN" || t.pos === "PROPN";
/** A noun whose lemma differs from it, unless a gerund ("checking" → check): "men", "guides". */
/** (Not a spelling the lemmatiser normalises: "organiser" → organizer.) */
const plural = (t: Token) => t.text !== t.lemma && !t.text.endsWith("ing") && (t.text.endsWith("s") || /(men|people|children|folk)$/.test(t.text));

/** Role and description words of each roster member, from the town's occupations and the summary. */
export function profilesOf(summary: string, roster: readonly string[], seen: Readonly<Record<string, { readonly action: string; readonly location: string }>>, tokenizer: TokenizerName): Record<string, PersonProfile> {
  const out: Record<string, PersonProfile> = {};
  const places = new Set(Object.values(seen).map((r) => r.location.toLowerCase()));
  // Who writes a note that speaks of "my <kin word>", "our 7-year-old": its kin words are the writer's.
  const writer = writerOf(summary, roster);
  // Where the summary writes each name: a role may be said before it, in a sentence of its own.
  const spans = new Map<string, { start: number; end: number }>();
  // What each one's own notes say and the title written before their name: their gender's evidence.
  const marks = new Map<string, string[]>();
  for (const name of roster) {
    const marked: string[] = [];
    marks.set(name, marked);
    const role: string[] = [];
    const heads: string[] = [];
    const initials: string[] = [];
    const addRole = (clause: readonly Token[]) => {
      role.push(...contentWords(clause));
      // The head is the last noun before a prepositional phrase ("lifeguard on duty", "head of maintenance").
      // … or before an infinitive ("candidate to save the garden").
      const firstAdp = clause.findIndex((t, k) => k > 0 && (t.pos === "ADP" || t.text === "to"));
      const head = (firstAdp < 0 ? clause : clause.slice(0, firstAdp)).filter(isNoun).at(-1) ?? clause.filter(isNoun).at(-1);
      if (head === undefined) return;
      heads.push(head.text, head.lemma);
      // The words of the noun phrase that ends on the head ("Mr. Mehta's teaching assistant": teaching assistant).
      let k = clause.indexOf(head);
      const run: Token[] = [];
      while (k >= 0 && /^[a-z]/.test(clause[k]!.text) && (isNoun(clause[k]!) || clause[k]!.pos === "ADJ" || clause[k]!.pos === "VERB" || clause[k]!.pos === "NUM")) run.unshift(clause[k--]!);
      if (run.length >= 2) initials.push(run.map((t) => t.text[0]).join(""));
      // A head that names no person (a group: "trainee crew") leaves the person noun before it as
      // what the role calls them: "the trainee".
      if (!isPersonNoun(head.lemma) && !isPersonNoun(head.text)) {
        for (const t of run.slice(0, -1)) if (isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text)) heads.push(t.text, t.lemma);
      }
    };
    // What they visibly do, and where: "the guy on the front desk" is whoever is at the Front Desk.
    const about: string[] = [...contentWords(tokenize(seen[name]?.action ?? "", tokenizer)), ...contentWords(tokenize(seen[name]?.location ?? "", tokenizer))];
    const nicknames: string[] = [];
    const kin: { of: string; word: string }[] = [];
    let inCharge = inChargeOf(tokenize(seen[name]?.action ?? "", tokenizer));
    // "Sean's daughter", "Lucia's 14-year-old": another person of the roster, by a name part no one
    // else has, then a kinship word (a child said by age is a child).
    // (Modifiers may stand between: "Joseph's teenage daughter", "Grace's new husband".)
    const readKin = (text: string) => {
      for (const k of text.matchAll(/\b([A-Z][\w-]*)['’]s\s+(?:(\d{1,3})-year-old|((?:[a-z-]+\s+){0,2}[a-z]+(?:-in-law)?))\b/g)) {
        const owners = roster.filter((n) => n !== name && n.split(/\s+/).includes(k[1]!));
        const words = k[3]?.split(/\s+/) ?? [];
        const at = words.findIndex((w) => kinClass(w) !== undefined);
        const word = k[2] !== undefined ? "child" : at >= 0 && words.slice(0, at).every((w) => !STOP.has(w)) ? words[at] : undefined;
        if (owners.length === 1 && word !== undefined) kin.push({ of: owners[0]!, word });
      }
      // "(Name, my <kin word>)", "our 7-year-old": kin of whoever writes the note.
      if (writer === undefined || writer === name) return;
      for (const k of text.matchAll(/\b(?:my|our)\s+(?:(\d{1,3})-year-old|((?:[a-z-]+\s+){0,2}[a-z]+(?:-in-law)?))\b/gi)) {
        const words = k[2]?.split(/\s+/) ?? [];
        const at = words.findIndex((w) => kinClass(w) !== undefined);
        const word = k[1] !== undefined ? "child" : at >= 0 && words.slice(0, at).every((w) => !STOP.has(w)) ? words[at] : undefined;
        if (word !== undefined) kin.push({ of: writer, word });
      }
    };
    const addNickname = (nick: string) => {
      nicknames.push(nick);
      // A nickname of several words is an epithet and a name ("Tall Dima"): the last word alone
      // names them too, and the epithet describes them ("the tall man" for "Tall Dima").
      const words = nick.split(/\s+/);
      if (words.length > 1) {
        nicknames.push(words.at(-1)!);
        about.push(...contentWords(tokenize(words.slice(0, -1).join(" ").toLowerCase(), tokenizer)));
      }
    };
    // Each clause that is a noun phrase names a role ("cafe owner", "the referee", "lifeguard on
    // duty"); one that starts with a verb or a preposition says what they do or where. A quoted
    // name in it is a nickname ("('Kas')", "(everyone just says 'Chief')").
    // `strict`: a note the summary does not set off as one (an appositive in prose, a bracket inside a
    // note) names a role only with a person noun ("first in the queue", "(cafe shut till lunch)" do not).
    const readNote = (note: string, strict = false): void => {
      for (const quoted of note.matchAll(QUOTED)) addNickname(quoted[1]!);
      note = note.replace(QUOTED, " ");
      // A bracket inside is a note of its own ("chief engineer (everyone just says 'Chief')").
      for (const inner of note.matchAll(/\(([^()]*)\)/g)) readNote(inner[1]!, true);
      note = note.replace(/\([^()]*\)/g, " ");
      for (const [clauseAt, part] of note.split(/[,;]/).entries()) {
        let whole = part;
        // "who volunteers as choir director", "who works as a cook": what follows "as" is the role.
        whole = /^\s*who\s+\w+\s+as\s+(.+)$/.exec(whole)?.[1] ?? whole;
        // "the engineer who drives Engine 9": a relative clause after a role describes them; the role
        // is the phrase before it.
        const relative = /^(.*?\S)\s+(?:who|whom)\s+(.+)$/.exec(whole);
        if (relative !== null && tokenize(relative[1]!, tokenizer).some((t) => isNoun(t) && (isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text)))) {
          const described = tokenize(relative[2]!, tokenizer);
          about.push(...contentWords(described));
          if (inChargeOf(described.filter((t) => t.pos !== "ADV"))) inCharge = true;
          whole = relative[1]!;
        }
        // "Hannah Brooks: scrubbed in - I'm the vet on this morning": in a note of their own, what they
        // say they are (with a determiner: "I'm on the front desk" says where) is their role.
        whole = /^\s*I\s*(?:['’]\s*m|\s+am)\s+((?:the|a|an)\s+.+)$/.exec(whole)?.[1] ?? whole;
        // "first week as the new locum vet": a role the note gives with "as" and a determiner.
        const asRole = /\bas\s+((?:the|a|an|our|their|his|her)\s+.+)$/.exec(whole)?.[1];
        if (asRole !== undefined && tokenize(asRole, tokenizer).some((t) => isNoun(t) && (isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text)))) whole = asRole;
        // "everyone calls her Chef", "a white beard the others call Old Bjorn": a name given by others.
        // … or "known to everyone as Bodge", "nicknamed Red", "who goes by Jo".
        const called = /\s*(?:\b\w+\s+)?\b(?:call(?:s|ed)?|known(?:\s+to\s+\w+)?\s+as|nicknamed|(?:who\s+)?goes\s+by)\s+(?:(?:her|him|them)\s+)?["“'‘]?([A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})/.exec(whole);
        // "so everyone calls him the probie": what others call them with "the" is a role word for them.
        const calledThe = /\bcall(?:s|ed)?\s+(?:him|her|them)\s+the\s+([a-z][\w-]*)\s*$/.exec(whole);
        if (calledThe !== null) {
          addRole(tokenize(calledThe[1]!, tokenizer).map((t) => ({ ...t, pos: "NOUN" as const })));
          whole = whole.slice(0, calledThe.index);
        }
        // … and the words that give it are no part of the role ("the co-op coordinator everyone calls Nads").
        if (called !== null) {
          addNickname(called[1]!);
          if (called.index > 0) whole = whole.slice(0, called.index);
        }
        // "kitchen porter and part-time student": each conjunct that names a person is a role of its own.
        const conjuncts = whole.split(/\s+and\s+/);
        const coordinated = conjuncts.length > 1 && conjuncts.every((c) => tokenize(c, tokenizer).some((t) => isNoun(t) && (isPersonNoun(t.lemma) || isPersonNoun(t.text))));
        for (const text of coordinated ? conjuncts : [whole]) {
        // A preposition inside a hyphenated modifier ("off-duty doctor") opens no phrase.
        const tokens = tokenize(text, tokenizer);
        let clause = tokens.map((t, x) => (t.pos === "ADP" && tokens[x + 1]?.text === "-" ? { ...t, pos: "ADJ" as const } : t)).filter((t) => t.pos !== "PUNCT");
        // "playing the lead", "acting as host": the rest of the clause is the role, when it names a
        // person ("playing cards" is an act).
        const roleVerb = cuesOf(clause, "role_verb").find((c) => c.start === 0);
        const cast = clause.slice(roleVerb?.end ?? 0);
        if (roleVerb !== undefined && (cast[0]?.pos === "DET" || cast.some((t) => isNoun(t) && (isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text))))) clause = cast;
        // "(playing the lead tonight)": a trailing time word is not part of the role.
        while (clause.length > 1 && cuesOf([clause.at(-1)!], "time_word").length > 0) clause = clause.slice(0, -1);
        const first = clause[0];
        if (first === undefined) continue;
        if (inChargeOf(clause)) inCharge = true;
        // A first word in -ing that takes an object is an activity whatever its tag ("pacing the
        // side of the pool"); one before a noun is a modifier ("wedding planner").
        // "(74, …)", "(a 17-year-old volunteer)": an age; WordNet's words for old or young age
        // (the `age_old` / `age_young` entries) then describe them ("the elderly porter").
        const age = clause.length === 1 && first.pos === "NUM" ? Number(first.text) : Number(/\b(\d{1,3})-year-old\b/.exec(text)?.[1] ?? NaN);
        if (Number.isFinite(age)) about.push(...(age >= 60 ? AGE_WORDS.old : age <= 25 ? AGE_WORDS.young : []));
        // … and one whose noun names no person is an act and its object ("reading questions into
        // the microphone", "answering phones"), not a role ("wedding planner").
        const adp = clause.findIndex((t, k) => k > 0 && t.pos === "ADP");
        const headNoun = (adp < 0 ? clause : clause.slice(0, adp)).filter(isNoun).at(-1);
        const gerund = first.text.endsWith("ing") && (clause[1] === undefined || !isNoun(clause[1]) || (headNoun !== undefined && !isMainlyPersonNoun(headNoun.lemma) && !isMainlyPersonNoun(headNoun.text)));
        const modifier = first.text.endsWith("ing") && !gerund;
        // A first word in its base form that the tagger read as a verb, before the noun that ends the
        // clause, is a modifier too ("lead singer", "stunt double").
        const baseModifier = first.pos === "VERB" && first.text === first.lemma && clause.length >= 2 && isNoun(clause.at(-1)!) && clause.slice(1).every((t) => isNoun(t) || t.pos === "ADJ");
        // An adverb and a participle before the noun modify it too ("newly qualified examiner").
        const premodified = first.pos === "ADV" && clause.length >= 2 && isNoun(clause.at(-1)!) && clause.slice(1, -1).every((t) => t.pos === "ADV" || t.pos === "ADJ" || isNoun(t) || (t.pos === "VERB" && /(ed|en)$/.test(t.text)));
        // A clause that is one abbreviation in capitals names a role whatever its tag ("DJ", "MC").
        const abbreviation = clause.length === 1 && first.upper;
        // A noun that names no person with a participle or a particle for its predicate is an
        // absolute phrase, how things stand, not a role ("phone wedged against his shoulder", "door
        // shut", "card machine DOWN").
        const absolute = clause.some((t, k) => {
          const next = clause[k + 1];
          if (!isNoun(t) || next === undefined || isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text)) return false;
          return (next.pos === "VERB" && !isPersonNoun(next.text) && !isPersonNoun(next.lemma)) || ((next.pos === "ADP" || next.pos === "ADV" || next.pos === "PART") && k + 2 === clause.length);
        });
        // A possessive determiner opens a noun phrase as "the" does ("our stage manager").
        const nominal = !absolute && (abbreviation || (first.pos === "DET" || POSSESSIVES.has(first.text) || first.pos === "ADJ" || isNoun(first) || first.pos === "NUM" || modifier || baseModifier || premodified) && !gerund && clause.some(isNoun) && !clause.some((t) => t.pos === "AUX"));
        if (abbreviation && !absolute) addRole([{ ...first, pos: "NOUN" }]);
        // (a modifier or a body part with a minor person sense names no one there: "front desk", "a
        // familiar face"; a head noun with any person sense does: "telescope operator")
        // (… and past a note's first clause, a phrase whose words name no person describes them:
        // "(adult, own skis)")
        else if (nominal && ((!strict && (clauseAt === 0 || clause.some((t) => isPersonNoun(t.lemma) || isPersonNoun(t.text)))) || clause.some((t) => (isNoun(t) || t === clause.at(-1)) && (isMainlyPersonNoun(t.lemma) || isMainlyPersonNoun(t.text))) || (headNoun !== undefined && (isPersonNoun(headNoun.lemma) || isPersonNoun(headNoun.text)) && cuesOf([headNoun], "body_part").length === 0))) addRole(clause);
        else about.push(...contentWords(clause));
        }
      }
    };
    const town = defaultProfiles.find((a) => a.name === name);
    if (town !== undefined) addRole(tokenize(town.occupation, tokenizer));
    // The name as the summary writes it: a quoted nickname may stand between its parts, a title before it.
    const parts = name.split(/\s+/).map(escape);
    // … and a nickname may follow it in an appositive: "Jean-Paul Osei, known to everyone as JP",
    // "…, called Mama Ngozi by the staff", "…, who goes by Lise", "…, Chef Rosa to everyone".
    const nick = `["“'‘]?([A-Z][\\w-]*(?:\\s+[A-Z][\\w-]*){0,2})["”'’]?`;
    const appositive = `(?:,?\\s+(?:(?:known|nicknamed|called|referred\\s+to)(?:\\s+to\\s+\\w+)?(?:\\s+as)?|(?:who\\s+)?goes\\s+by|aka)\\s+${nick}(?:\\s+(?:by|to)\\s+(?:the\\s+)?\\w+)?,?|,\\s+${nick}\\s+to\\s+(?:everyone|everybody|all|(?:the|her|his|their)\\s+\\w+),?)?`;
    const writtenAs = (words: readonly string[]) => new RegExp(`(?:\\b([A-Z][a-z]+)\\.?\\s+)?\\b${words.join(`\\s+(?:["“'‘]([^"”'’]+)["”'’]\\s+)?`)}\\b${appositive}\\s*(?:\\(([^)]*)\\))?`).exec(summary);
    // A summary may give only the first name ("Lucia's 14-year-old, Mateo,"): it names them when no
    // one else on the roster has it.
    const given = name.split(/\s+/)[0]!;
    // … or only the surname, after a title ("Dr. Mensah", "Mrs. Nowak"), when no one else has it.
    const surname = name.split(/\s+/).at(-1)!;
    // … or after a capitalised person noun that ends a role phrase ("Race Director Halvorsen",
    // "Marshal Kowalczyk"), or alone in a bracket after what they are called, with a note or none
    // ("Dr O (Oyelaran)", "Dr H (Hartmann, boss)").
    const bySurname = () => {
      const w = parts.length > 1 && roster.filter((n) => n.split(/\s+/).at(-1) === surname).length === 1 ? writtenAs([escape(surname)]) : null;
      if (w === null) return null;
      const lead = w[1]?.toLowerCase();
      if (lead !== undefined) return TITLES.has(lead) || HONORIFICS.has(lead) || isMainlyPersonNoun(lead) ? w : null;
      return CALLED.test(summary.slice(0, w.index)) && /^\s*(?:[,;][^()]*)?\)/.test(summary.slice(w.index + w[0].length)) ? w : null;
    };
    const whole = writtenAs(parts);
    const byGiven = whole === null && parts.length > 1 && roster.filter((n) => n.split(/\s+/)[0] === given).length === 1 ? writtenAs([escape(given)]) : null;
    const surnamed = whole === null ? bySurname() : null;
    // Of a given name and a surname alone, the one the summary gives first introduces them; a name
    // in a bracket stands where what they are called does ("Locum Dr Roux (Amelie, …)").
    const at = (w: RegExpExecArray) => w.index - (CALLED.exec(summary.slice(0, w.index))?.[0].length ?? 0);
    const written = whole ?? (byGiven !== null && (surnamed === null || at(byGiven) <= at(surnamed)) ? byGiven : surnamed);
    if (written !== null) {
      spans.set(name, { start: written.index, end: written.index + written[0].length });
      const [, title, ...rest] = written;
      const note = rest.at(-1);
      for (const nick of rest.slice(0, -1)) if (nick !== undefined) addNickname(nick);
      const titled = title === undefined ? undefined : TITLES.get(title.toLowerCase());
      if (titled !== undefined) addRole(tokenize(titled, tokenizer));
      // A capitalised word before the name that is no title is the lead's last word ("Producer Hannah
      // Schultz"), read with what stands before it.
      let leadEnd = title !== undefined && titled === undefined && !HONORIFICS.has(title.toLowerCase()) ? written.index + written[0].indexOf(title) + title.length : written.index;
      readNote(note ?? "");
      readKin(note ?? "");
      marked.push(...pronounsOwnedIn(note ?? "", name, roster));
      if (title !== undefined) marked.push(title);
      // The summary may say who they are in prose instead: an appositive after the name (", the
      // ship's captain ('Skip' to the crew), up on the bridge;", " - owns the farm, 'the boss' -"),
      // up to the end of its sentence or the next person, and a noun phrase just before the name
      // ("retired neighbour Bernard Okoro", "Morag's teenage daughter Elin Fraser").
      let after = summary.slice(written.index + written[0].length);
      // "Inge (Ingrid Haugen), our head lifeguard": the full name in brackets after what they are
      // called. The words before the bracket are a nickname (a title among them names the role:
      // "Coach Rafa"), what follows the bracket is read as after the name, and the lead ends before them.
      // … also with a note of its own after the name inside the bracket: "Marshy (Theo Marsh, the
      // engineer who drives Engine 9)", "The Boss (Captain Rosa Delgado, our station captain)".
      // … or only the surname in the bracket ("Nurse Bex (Thornton)"). Each title or person noun among
      // the words before the name is a role ("Locum Dr Roux": a locum, a doctor); the titles that
      // lead them are no part of the nickname ("Dr O": O). A note in the bracket is read as one set
      // inside a note, naming a role only with a person noun ("(Amelie, 1st day!!)").
      const called = CALLED.exec(summary.slice(0, written.index));
      const closing = /^\s*(?:[,;]([^()]*))?\)/.exec(after);
      if (called !== null && closing !== null && !places.has(called[1]!.toLowerCase())) {
        const words = called[1]!.split(/\s+/);
        for (const w of words.slice(0, -1).map((x) => x.toLowerCase())) {
          const calledTitle = TITLES.get(w);
          if (calledTitle !== undefined || isMainlyPersonNoun(w)) addRole(tokenize(calledTitle ?? w, tokenizer));
        }
        const titles = words.findIndex((w, k) => k === words.length - 1 || !TITLES.has(w.toLowerCase()));
        addNickname(words.slice(titles).join(" "));
        if (closing[1] !== undefined) {
          readNote(closing[1], true);
          readKin(closing[1]);
          marked.push(...pronounsOwnedIn(closing[1], name, roster));
        }
        marked.push(words[0]!);
        after = after.slice(closing[0].length);
        leadEnd = called.index;
      }
      // "Pops, which is what we all call Walter Pike": a name given before the name it stands for.
      const whatWeCall = /([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2}),?\s+(?:which|that)\s+is\s+what\s+(?:\w+\s+){1,2}calls?\s*$/.exec(summary.slice(0, written.index));
      if (whatWeCall !== null && !places.has(whatWeCall[1]!.toLowerCase())) {
        addNickname(whatWeCall[1]!);
        leadEnd = whatWeCall.index;
      }
      // "Greta Lind runs the orchard": the verb right after the name puts them in charge of its object.
      if (inChargeOf(tokenize(/^\s*([^,;.\n]*)/.exec(after)?.[1] ?? "", tokenizer))) inCharge = true;
      // … or a list's item: "- Chen Mei: presiding officer, at the ballot table" (to its line's end).
      // … or a table's row: "Name | role | what they do" (cells set off by bars or tabs).
      if (/^[ \t]*(?:,|:[ \t]*\S|[-–—]\s|\|)/.test(after) || /^ *\t/.test(after)) {
        // (A short capitalised word's period is a title's, not a sentence's end: "Mr. Mehta".)
        const sentence = after.replace(/^[ \t]*[:|]/, ",").split(/[;:\n]|(?<!\b[A-Z][a-z]{0,3})\.(?:\s|$)/)[0]!;
        // (another's name before "'s" is a relation of this person's: "Sean's daughter")
        const others = roster.filter((n) => n !== name).flatMap((n) => n.split(/\s+/)).map((w) => new RegExp(`\\b${escape(w)}\\b(?!['’]s\\b)`));
        // (a comma inside a bracket splits no segment: "lifeguard on duty (signed in, not a volunteer)")
        const bracketed = sentence.replace(/\([^()]*\)/g, (b) => b.replace(/,/g, "\u0000"));
        for (const segment of bracketed.split(/,|\s[-–—]\s|\||\t/).map((x) => x.replace(/\u0000/g, ",").replace(/^\s*[-–—]\s*/, "").trim()).filter((x) => x.length > 0)) {
          if (others.some((w) => w.test(segment))) break;
          readNote(segment, true);
          readKin(segment);
          marked.push(...pronounsOwnedIn(segment, name, roster));
        }
      }
      // … or a noun phrase set off before it by a comma at a sentence's start ("The client, Marguerite …").
      // (a line break ends a list item or a table row as a sentence's end does)
      const before = summary.slice(0, leadEnd).split(/[,;:.()\n]/);
      // … or inside a sentence, one that opens on a determiner ("…, against an International Master, Shirin Bagheri.").
      const fronted = before.length >= 2 && before.at(-1)!.trim() === "" && (/(?:^|[.:;\n]\s*)[^,;:.()\n]*,\s*$/.test(summary.slice(0, leadEnd)) || /,\s*(?:\w+\s+){0,2}(?:an?|the)\s+[^,;:.()\n]*,\s*$/i.test(summary.slice(0, leadEnd)));
      // … or a label before a colon that names a person ("Presenter: Ines Carvalho"; not "Control Room:").
      const label = /(?:^|[.;:\n]\s*)([^,;:.()\n]{2,40}):[ \t]*$/.exec(summary.slice(0, leadEnd))?.[1];
      const labelTokens = label === undefined ? [] : tokenize(label.toLowerCase(), tokenizer).filter((t) => t.pos !== "PUNCT");
      const labelHead = labelTokens.at(-1);
      // (a label of several words may end on a noun whose person sense is not its first: "Duty patrol lead")
      const personHead = labelHead !== undefined && (isMainlyPersonNoun(labelHead.lemma) || isMainlyPersonNoun(labelHead.text) || (labelTokens.length >= 2 && labelTokens.slice(0, -1).every((t) => isNoun(t) || (t.pos === "VERB" && t.text === t.lemma)) && (isPersonNoun(labelHead.lemma) || isPersonNoun(labelHead.text)) && cuesOf([labelHead], "body_part").length === 0));
      // (its last word heads it too, whatever its tag: "lead" read as a verb)
      if (labelHead !== undefined && labelTokens.length <= 3 && personHead) {
        addRole(labelTokens);
        heads.push(labelHead.text, labelHead.lemma);
      }
      // (a capital is no matter: "And the landlord, Felix Okoro, …")
      const lead = ((fronted ? before.at(-2) : before.at(-1)) ?? "").split(/\b(?:and|with|while|as|by|from|for|to)\b/i).at(-1)!;
      // (a list's "4/" or "#2" marks no word of it)
      const leadWords = tokenize(lead, tokenizer).filter((t) => t.pos !== "PUNCT" && !/^[\p{P}\p{S}]+$/u.test(t.text));
      // The noun phrase that ends the lead, from its determiner ("… the pastry display beside the
      // counter assistant, Nadia Haddad,", "Next to him the flour supplier, Tom Becker,").
      // (a base-form word the tagger reads as a verb before a noun modifies it: "the lift operator")
      const nominalIn = (words: readonly Token[]) => (t: Token, x: number) => nominalWord(t) || (t.pos === "VERB" && t.text === t.lemma && words[x + 1] !== undefined && isNoun(words[x + 1]!));
      const leadTokens = leadWords.every(nominalIn(leadWords)) ? leadWords : leadWords.slice(Math.max(0, leadWords.findLastIndex((t, x) => (t.pos === "DET" || POSSESSIVES.has(t.text)) && leadWords.slice(x + 1).every((u, y) => nominalIn(leadWords)(u, x + 1 + y)))));
      const leadHead = leadTokens.at(-1);
      // "Lucia's 14-year-old, Mateo": an age said of someone's own is their child, of that age.
      const agedOwn = /(?:['’]s|\b(?:her|his|their|our|my))\s+(\d{1,3})-year-old\s*$/.exec(lead);
      readKin(lead);
      // "her nephew Dev", "His wife Leila": kin of whoever the text named last before them; also
      // before a bracket the name stands in ("his wife (my Auntie Meena)").
      const bracketed = /([^,;:.()\n]*)\(\s*[^()]*$/.exec(summary.slice(0, leadEnd))?.[1] ?? "";
      const theirKin = (/\b(?:his|her|their)\s+([a-z]+)\s*$/i.exec(lead) ?? /\b(?:his|her|their)\s+([a-z]+)\s*$/i.exec(bracketed))?.[1]?.toLowerCase();
      const family = sameSurname(name, roster);
      if (theirKin !== undefined && kinClass(theirKin) !== undefined && /\btheir\s+\w+\s*$/i.test(lead) && family.length > 0) for (const n of family) kin.push({ of: n, word: theirKin });
      else if (theirKin !== undefined && kinClass(theirKin) !== undefined) {
        const prefix = summary.slice(0, leadEnd);
        const last = roster.filter((n) => n !== name).map((n) => [n, Math.max(...n.split(/\s+/).map((w) => prefix.search(new RegExp(`\\b${escape(w)}\\b(?![\\s\\S]*\\b${escape(w)}\\b)`))))] as const).filter(([, at]) => at >= 0).sort((a, b) => b[1] - a[1])[0];
        if (last !== undefined) kin.push({ of: last[0], word: theirKin });
      }
      if (agedOwn !== null) {
        addRole(tokenize("child", tokenizer));
        const age = Number(agedOwn[1]);
        about.push(...(age >= 60 ? AGE_WORDS.old : age <= 25 ? AGE_WORDS.young : []));
      // (… or, after a modifier, a noun with any person sense: "the lift operator")
      } else if (leadHead !== undefined && isNoun(leadHead) && (isMainlyPersonNoun(leadHead.lemma) || isMainlyPersonNoun(leadHead.text) || (leadTokens.filter((t) => t.pos !== "DET" && !POSSESSIVES.has(t.text)).length >= 2 && (isPersonNoun(leadHead.lemma) || isPersonNoun(leadHead.text)) && cuesOf([leadHead], "body_part").length === 0)) && leadTokens.every(nominalIn(leadTokens))) addRole(leadTokens);
      // Adjectives alone before the name describe them ("young Liu Yang").
      else if (leadTokens.length > 0 && leadTokens.length <= 2 && leadTokens.every((t) => t.pos === "ADJ" && /^[a-z]/.test(t.text))) about.push(...contentWords(leadTokens));
      // A capitalised phrase set off by a dash just before the name, naming no place, is what
      // they are called ("Main Dome: Big K - Kwame Mensah, …").
      const dashed = /(?:^|[:\n]|[.!?]\s|\b(?:and|while|with)\b)\s*(?:[-–—*•]\s+)?([A-Z][\w']*(?:\s+[A-Z][\w']*){0,2})\s+[-–—]\s*$/.exec(summary.slice(0, leadEnd).split(/[,;(]/).at(-1)!);
      if (dashed !== null && !places.has(dashed[1]!.toLowerCase())) addNickname(dashed[1]!);
    }
    // A clipped given name: a capitalised word of three letters or more that no English has, that
    // begins this person's given name and no other part of anyone's name, nor a place's ("Big Stu
    // here" for Stuart McAllister); an adjective before it is an epithet, as in a nickname of several
    // words ("Big Stu": big).
    const clip = parts.length > 1 ? clippedName(summary, given, roster, places, tokenizer) : undefined;
    if (clip !== undefined && !nicknames.includes(clip)) addNickname(clip);
    const place = contentWords(tokenize(seen[name]?.location ?? "", tokenizer));
    out[name] = { role, heads, about: [...new Set(about)], ...(place.length === 0 ? {} : { place: [...new Set(place)] }), nicknames, initials: [...new Set(initials)], ...(kin.length === 0 ? {} : { kin }), ...(inCharge ? { inCharge } : {}) };
  }
  rolesSaidBefore(summary, roster, spans, out, tokenizer);
  // What the writer says they are doing ("I'm stuck on Reception answering the phones while …")
  // is what they visibly do.
  if (writer !== undefined && out[writer] !== undefined) {
    const own = [...summary.matchAll(/\bI(?:['’]m|\s+am|\s+was|['’]ve\s+been)\s+([^.,;:!?\n]*?)(?=\s+(?:while|when|because|but|and|so)\b|[.,;:!?\n]|$)/g)].flatMap((m) => contentWords(tokenize(m[1]!, tokenizer)));
    Object.assign(out[writer]!, { about: [...new Set([...out[writer]!.about, ...own])] });
  }
  // A child of one of a couple is the other's too ("our 9-year-old" in the mother's note, "Tom, my husband").
  const spouses = (x: string) => roster.filter((n) => n !== x && ((out[n]?.kin ?? []).some((k) => k.of === x && kinClass(k.word) === "kin_spouse") || (out[x]?.kin ?? []).some((k) => k.of === n && kinClass(k.word) === "kin_spouse")));
  for (const [name, p] of Object.entries(out)) {
    const children = (p.kin ?? []).filter((k) => kinClass(k.word) === "kin_child");
    const more = children.flatMap((k) => spouses(k.of).filter((sp) => sp !== name && !(p.kin ?? []).some((j) => j.of === sp)).map((sp) => ({ of: sp, word: k.word })));
    if (more.length > 0) Object.assign(p, { kin: [...(p.kin ?? []), ...more] });
  }
  for (const [name, p] of Object.entries(out)) {
    // Their role and kin words ("his wife", "Grace's husband"), the title before their name, the
    // pronouns of their own note: one gender when all that marks one agrees.
    const genders = new Set([...p.heads, ...(p.kin ?? []).map((k) => k.word), ...(marks.get(name) ?? [])].map(genderOf).filter((g) => g !== undefined));
    Object.assign(p, { role: [...new Set(p.role)], heads: [...new Set(p.heads)], ...(genders.size === 1 ? { gender: [...genders][0] } : {}) });
  }
  return out;
}

/**
 * The roster member who writes the summary, when it says so: "(Rosa writing)", or a sign-off
 * ("Love, Ruth", "Cheers, Sam", "- Ruth") by a given name, full name or surname only one person has.
 */
function writerOf(summary: string, roster: readonly string[]): string | undefined {
  const named = (word: string) => {
    const who = roster.filter((n) => n === word || n.split(/\s+/).includes(word));
    return who.length === 1 ? who[0] : undefined;
  };
  // … or "It's me, Farah Haddad, on my own …"
  const writing = /\(([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+writing\)|\b([A-Z][\w-]*)\s+writing\b|\b(?:[Ii]t['’]s|[Ii]t\s+is)\s+me,?\s+([A-Z][\w-]*)|\bI['’]m\s+([A-Z][\w-]*)\s+[A-Z][\w-]*,?\s+by\s+the\s+way/.exec(summary);
  if (writing !== null) return named((writing[1] ?? writing[2] ?? writing[3] ?? writing[4])!.split(/\s+/)[0]!);
  const signOff = [...summary.matchAll(/(?:^|[.!?\n]\s*)(?:love|cheers|thanks|thank you|best|regards|best wishes|ta|xx?|yours)\s*[,!]?\s+([A-Z][\w-]*)\b/gi)].at(-1) ?? /(?:^|\n|[.!]\s)\s*[-–—]\s*([A-Z][\w-]*)\s*$/.exec(summary);
  return signOff === null || signOff === undefined ? undefined : named(signOff[1]!);
}

/**
 * The personal pronouns of a person's own note ("perched in the high chair with her whistle"), up
 * to the first name of someone else in it: after one, a pronoun may be theirs ("beside Wang Jun, his tutor").
 */
function pronounsOwnedIn(note: string, name: string, roster: readonly string[]): string[] {
  const others = roster.filter((n) => n !== name).flatMap((n) => n.split(/\s+/)).map((w) => note.search(new RegExp(`\\b${escape(w)}\\b`))).filter((at) => at >= 0);
  const upTo = others.length === 0 ? note : note.slice(0, Math.min(...others));
  // A reflexive pronoun is theirs, and a possessive after a preposition, before its noun ("with
  // her whistle", "against his shoulder"). After a verb it may be another's ("powdering his face"),
  // as may a subject or an object ("chatting to her whenever she looks up").
  const NOT_A_NOUN = /^(?:whenever|when|while|as|and|or|but|if|because|until|to|at|in|on|about|for|with|from|again|now|then)$/i;
  return [...upTo.matchAll(/\b(?:(himself|herself)|(?:with|against|on|in|at|by|from|beside|under|over|for|to|into)\s+(his|her)\s+([a-z][\w'-]*))/gi)].filter((m) => m[1] !== undefined || !NOT_A_NOUN.test(m[3]!)).map((m) => (m[1] ?? m[2]!).toLowerCase());
}

/** Up to three capitalised words before an opening bracket: what someone is called, before their name. */
const CALLED = /((?:[A-Z][\w'-]*\s+){0,2}[A-Z][\w'-]*)\s*\(\s*$/;

/** The first clipped form of a given name the summary writes, with an adjectival epithet before it. */
function clippedName(summary: string, given: string, roster: readonly string[], places: ReadonlySet<string>, tokenizer: TokenizerName): string | undefined {
  const others = roster.flatMap((n) => n.split(/\s+/).map((w, k) => ({ w: w.toLowerCase(), own: n.split(/\s+/)[0] === given && k === 0 })));
  const placeWords = new Set([...places].flatMap((p) => p.split(/\s+/)));
  for (const m of summary.matchAll(/\b(?:([A-Z][a-z]+)\s+)?([A-Z][a-z]{2,})\b/g)) {
    const clip = m[2]!.toLowerCase();
    if (!given.toLowerCase().startsWith(clip) || clip.length >= given.length || placeWords.has(clip)) continue;
    if (others.some((o) => !o.own && o.w.startsWith(clip)) || others.filter((o) => o.own).length !== 1 || knownWord(clip)) continue;
    const epithet = m[1] !== undefined && tokenize(m[1].toLowerCase(), tokenizer)[0]?.pos === "ADJ";
    return epithet ? `${m[1]} ${m[2]}` : m[2]!;
  }
  return undefined;
}

/** A word of a noun phrase before its head: a noun, an adjective, a determiner, a number, a participle. */
const nominalWord = (t: Token): boolean => isNoun(t) || t.pos === "ADJ" || t.pos === "DET" || POSSESSIVES.has(t.text) || t.pos === "NUM" || t.text === "'s" || (t.pos === "VERB" && /(ed|ing)$/.test(t.text));

/** Others of the roster who share this person's surname (a family). */
const sameSurname = (name: string, roster: readonly string[]): string[] => {
  const words = name.split(/\s+/);
  return words.length < 2 ? [] : roster.filter((n) => n !== name && n.split(/\s+/).length > 1 && n.split(/\s+/).at(-1) === words.at(-1));
};

/**
 * A role the summary gives before it names the person, as the subject of a clause: "the senior vet
 * is halfway through an operation; that is Dr Hannah Brooks", "Across the corridor the clinic's junior
 * vet is checking a rabbit. Ravi Menon qualified last year", "The practice manager has shut herself in
 * the office: Ingrid Solberg …". Read from the name's own sentence up to the name (after any other
 * name in it), else from the sentence before when that one names no one; the last such phrase whose
 * head is no one else's role. "The couple's son", "their daughter": kin of whoever shares the surname.
 */
function rolesSaidBefore(summary: string, roster: readonly string[], spans: ReadonlyMap<string, { start: number; end: number }>, out: Record<string, PersonProfile>, tokenizer: TokenizerName): void {
  // Sentences, and clauses after a semicolon or colon (a short capitalised word's period is a title's).
  const bounds = [0, ...[...summary.matchAll(/(?<!\b[A-Z][a-z]{0,3})[.!?](?:\s|$)|[;:\n]/g)].map((m) => m.index + m[0].length), summary.length];
  const named = [...spans.values()];
  const segmentOf = (at: number) => bounds.findLastIndex((b) => b <= at);
  for (const name of roster) {
    const span = spans.get(name);
    const profile = out[name];
    if (span === undefined || profile === undefined) continue;
    const k = segmentOf(span.start);
    const others = named.filter((o) => o.start < span.start && o.end > bounds[k]!);
    const own = summary.slice(Math.max(bounds[k]!, ...others.map((o) => o.end)), span.start);
    const previous = k > 0 && !named.some((o) => o.start >= bounds[k - 1]! && o.start < bounds[k]!) ? summary.slice(bounds[k - 1], bounds[k]) : "";
    const taken = new Set(roster.filter((n) => n !== name).flatMap((n) => out[n]?.heads ?? []));
    const phrase = subjectPhrase(tokenize(own, tokenizer), taken) ?? subjectPhrase(tokenize(previous, tokenizer), taken);
    if (phrase === null) continue;
    const head = phrase.at(-1)!;
    (profile.role as string[]).push(...contentWords(phrase));
    (profile.heads as string[]).push(head.text, head.lemma);
    const owner = phrase[0]!;
    const kinWord = kinClass(head.text) !== undefined ? head.text : kinClass(head.lemma) !== undefined ? head.lemma : undefined;
    const family = sameSurname(name, roster);
    const possessor = phrase.findIndex((t) => t.text === "'s");
    if (kinWord !== undefined && family.length > 0 && (owner.text === "their" || (possessor > 0 && phrase[possessor - 1]!.pos !== "PROPN"))) Object.assign(profile, { kin: [...(profile.kin ?? []), ...family.map((of) => ({ of, word: kinWord }))] });
  }
}

/** The last definite noun phrase with a person noun for its head that is a clause's subject (a verb follows it). */
function subjectPhrase(tokens: readonly Token[], taken: ReadonlySet<string>): Token[] | null {
  let found: Token[] | null = null;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.text !== "the" && !POSSESSIVES.has(tokens[i]!.text)) continue;
    let j = i + 1;
    while (j < tokens.length && (isNoun(tokens[j]!) || tokens[j]!.pos === "ADJ" || tokens[j]!.text === "'s")) j++;
    const head = tokens[j - 1];
    const next = tokens[j];
    if (j === i + 1 || head === undefined || !isNoun(head) || next === undefined || (next.pos !== "AUX" && next.pos !== "VERB")) continue;
    // (another's role word names them only with a modifier of its own: "the junior vet" beside "the senior vet")
    const modified = tokens.slice(i + 1, j - 1).some((t) => t.pos === "ADJ" || (isNoun(t) && tokens[tokens.indexOf(t) + 1]?.text !== "'s"));
    if (!(isMainlyPersonNoun(head.lemma) || isMainlyPersonNoun(head.text)) || plural(head) || (!modified && (taken.has(head.text) || taken.has(head.lemma)))) continue;
    found = tokens.slice(i, j);
  }
  return found;
}

/** A clause that opens with a verb of being in charge and its object: "runs the farm", "manages our team". */
const inChargeOf = (clause: readonly Token[]): boolean =>
  clause[0] !== undefined && SUPERIOR_ROLES.verbs.has(clause[0].lemma) && (clause[1]?.pos === "DET" || POSSESSIVES.has(clause[1]?.text ?? ""));

/**
 * How well a query word names a role word: 4 the same word, 3 a WordNet synonym ("barman" for a
 * bartender), 2 one a direct hyponym of the other ("the poet" for a writer), a compound of the
 * role's modifier and an agent noun ("shopkeeper" for a shop owner) or a clipped form ("physio",
 * "prof"); 0 otherwise.
 */
function roleScore(q: string, r: string, clipped = true): number {
  if (q === r) return 4;
  const rel = roleRelation(q, r);
  if (rel === "synonym") return 3;
  if (rel !== null) return 2;
  return compoundOf(q, r) || (clipped && q.length >= 4 && r.length > q.length && r.startsWith(q)) ? 2 : 0;
}
const sameRoleWord = (q: string, r: string): boolean => roleScore(q, r) > 0;
const AGENT_NOUNS = new Set(["keeper", "man", "woman", "person", "master", "owner", "seller", "maker", "monger", "smith", "wright"]);
const compoundOf = (q: string, r: string): boolean => r.length >= 4 && q.startsWith(r) && AGENT_NOUNS.has(q.slice(r.length));

/** The unique best-scoring person for some words, or null (no match, or a tie). */
function best(scores: ReadonlyArray<[string, number]>): string | null {
  const sorted = [...scores].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
  if (sorted.length === 0 || (sorted.length > 1 && sorted[1]![1] === sorted[0]![1])) return null;
  return sorted[0]![0];
}

const kinClass = kinClassOf;
const INVERSE_KIN: Readonly<Record<KinClass, KinClass>> = { kin_child: "kin_parent", kin_parent: "kin_child", kin_sibling: "kin_sibling", kin_avuncular: "kin_nibling", kin_nibling: "kin_avuncular", kin_spouse: "kin_spouse" };
const isNounish = (t: Token) => t.pos === "NOUN" || t.pos === "PROPN" || t.pos === "ADJ" || t.pos === "VERB";
const POSSESSIVES = new Set(["our", "your", "his", "her", "their", "my"]);
const DEFINITE = new Set(["the", "this", "that", "these", "those"]);
// Prepositions of place: the phrase after one is where, not who ("across the ward").
const LOCATIVE = new Set(["in", "at", "across", "around", "round", "through", "throughout", "inside", "outside", "within", "on", "into", "onto"]);
const NOMINATIVE = new Set(["he", "she", "they"]);
const ACCUSATIVE = new Set(["him", "them"]);
const MODALS = new Set(["will", "would", "can", "could", "may", "might", "shall", "should", "must"]);
/** Titles that name no occupation ("Mr", "Ms"): a name part after one is a name. */
const HONORIFICS = new Set(["mr", "mrs", "ms", "miss", "mx", "sir", "madam"]);

const opposite = (g: Gender): Gender => (g === "female" ? "male" : "female");

/** Mentions of roster members in order of appearance. `taken` marks tokens inside a place name. */
export function mentionsOf(tokens: readonly Token[], roster: readonly string[], profiles: Readonly<Record<string, PersonProfile>>, taken: ReadonlySet<number>): Mention[] {
  const out: Mention[] = [];
  const used = new Set<number>(taken);
  // Whether a gendered word ("she", "his", "mother") may stand for this person: unless the summary marks them otherwise.
  const agrees = (name: string, word: string): boolean => {
    const g = genderOf(word);
    return g === undefined || profiles[name]?.gender !== opposite(g);
  };
  const claim = (m: Mention) => {
    out.push(m);
    for (let i = m.start; i < m.end; i++) used.add(i);
  };
  // Whole names.
  // Hyphenated parts are matched half by half: a tagger may split "Adebayo-Grant" at the hyphen.
  const parts = roster.map((name) => ({ name, words: name.toLowerCase().split(/[\s-]+/) }));
  // A nickname of several words ('Samuel "Big Sam" Lowry') is matched like a whole name.
  const nicknamePhrases = roster.flatMap((name) => (profiles[name]?.nicknames ?? []).map((n) => ({ name, words: n.toLowerCase().split(/\s+/) })).filter((n) => n.words.length > 1));
  const spanAt = (i: number, words: readonly string[]): number | null => {
    let j = i;
    for (const [k, w] of words.entries()) {
      if (k > 0 && tokens[j]?.text === "-") j++;
      if (tokens[j]?.text !== w || (used.has(j) && !taken.has(j))) return null;
      j++;
    }
    return j;
  };
  for (let i = 0; i < tokens.length; i++) {
    for (const { name, words } of [...parts, ...nicknamePhrases]) {
      // A place named after someone ("Zhang Hao's Home") still mentions them.
      const end = spanAt(i, words);
      if (end !== null) claim({ name, start: i, end, by: "name" });
    }
  }
  // A hyphenated part as one token ("adebayo-grant"), or as its halves ("Ms Adebayo-Grant").
  for (const name of roster) {
    for (const word of name.toLowerCase().split(/\s+/).filter((w) => w.includes("-"))) {
      for (let i = 0; i < tokens.length; i++) {
        const end = tokens[i]!.text === word ? i + 1 : spanAt(i, word.split("-"));
        if (end !== null && !used.has(i)) claim({ name, start: i, end, by: "name" });
      }
    }
  }
  // One capitalised part of a name, or a nickname, that no one else has.
  const owners = new Map<string, string[]>();
  const own = (w: string, name: string) => owners.set(w, [...new Set([...(owners.get(w) ?? []), name])]);
  for (const { name, words } of parts) for (const w of words) own(w, name);
  for (const name of roster) for (const nick of profiles[name]?.nicknames ?? []) own(nick.toLowerCase(), name);
  // Initials, written in capitals: of the whole name ("JPO"), of a hyphenated given name ("JP" for Jean-Paul).
  const initials = new Map<string, string[]>();
  for (const name of roster) {
    const words = name.split(/\s+/);
    for (const form of [words.flatMap((w) => w.split("-")), words[0]!.includes("-") ? words[0]!.split("-") : []]) {
      if (form.length >= 2) initials.set(form.map((w) => w[0]!.toLowerCase()).join(""), [...new Set([...(initials.get(form.map((w) => w[0]!.toLowerCase()).join("")) ?? []), name])]);
    }
  }
  // A gendered honorific before a surname the family shares picks among them ("Mrs Moretti").
  const titleBefore = (i: number) => genderOf(tokens[i - 1]?.text === "." ? (tokens[i - 2]?.text ?? "") : (tokens[i - 1]?.text ?? ""));
  const ofGender = (who: string[] | undefined, gender: Gender | undefined) => (who === undefined || who.length < 2 || gender === undefined ? who : who.filter((n) => profiles[n]?.gender !== opposite(gender)));
  // A name part counts when written with a capital, tagged a proper noun, or after a title ("mr mehta").
  const titled = (i: number) => i > 0 && (TITLES.has(tokens[i - 1]!.text) || HONORIFICS.has(tokens[i - 1]!.text) || (tokens[i - 1]!.text === "." && i > 1 && (TITLES.has(tokens[i - 2]!.text) || HONORIFICS.has(tokens[i - 2]!.text))));
  // … or, lower-cased, where English wants a name: a bare singular in subject position ("sunny
  // seems …", "is rosa free"), or right after a verb ("ask hope").
  const bare = (i: number) => {
    const prev = tokens[i - 1];
    const next = tokens[i + 1];
    // A clause starts after punctuation, a conjunction or a complementiser ("… clocked that aroha's …").
    const clauseStart = prev === undefined || prev.pos === "PUNCT" || prev.pos === "CCONJ" || prev.pos === "SCONJ";
    // "is rosa free", "what's petra up to": after the inverted auxiliary of a question.
    const inverted = prev?.pos === "AUX" && (tokens[i - 2] === undefined || tokens[i - 2]!.pos === "PUNCT" || /^(what|how|where|why|when|who)$/.test(tokens[i - 2]!.text));
    // … or a clipped question with its verb left out ("chef busy now?").
    // … or as the object of a preposition, which wants a determiner before a common noun ("counting on rosa").
    const objectOfPreposition = prev?.pos === "ADP" && (next === undefined || !isNoun(next));
    return (clauseStart && next !== undefined && (next.pos === "VERB" || next.pos === "AUX" || next.text === "'s" || next.pos === "ADJ" || next.pos === "ADV")) || inverted || prev?.pos === "VERB" || objectOfPreposition;
  };
  // A query written all in lower case tells nothing by its capitals: a noun there that is someone's
  // name part or nickname is read as the name ("would tane dare approach cal").
  const uncased = !tokens.some((t) => t.capital);
  // A clipped given name the summary never writes ("rafa" for Rafael): the start, three letters or
  // more, of one given name and of no other name part, that is no English word.
  // (written with a capital inside a sentence it may be an English word too: "How's Win holding up")
  const clipped = (w: string, capitalised = false): string[] | undefined => {
    if (w.length < 3 || (!capitalised && knownWord(w))) return undefined;
    const whose = parts.filter(({ words }) => words.length > 1 && words[0]!.startsWith(w) && words[0] !== w);
    return whose.length === 1 && !parts.some(({ name, words }) => words.some((x, k) => x.startsWith(w) && (name !== whose[0]!.name || k > 0))) ? [whose[0]!.name] : undefined;
  };
  tokens.forEach((t, i) => {
    const who = ofGender(owners.get(t.text) ?? (t.upper ? initials.get(t.text) : undefined) ?? (/^[a-z]+$/.test(t.text) && (isNoun(t) || t.capital) ? clipped(t.text, t.capital && i > 0 && tokens[i - 1]!.pos !== "PUNCT") : undefined), titleBefore(i));
    // (a one-letter nickname only after a title: "Dr O")
    if (!used.has(i) && (t.text.length > 1 || titled(i)) && (t.capital || t.pos === "PROPN" || titled(i) || bare(i) || (uncased && isNoun(t))) && who?.length === 1 && !out.some((m) => m.name === who[0] && m.by === "name" && m.start <= i && i < m.end)) claim({ name: who[0]!, start: i, end: i + 1, by: "name" });
  });
  // A bare role noun in the same places ("janitor looks tired", "ask janitor about …").
  // A word before a possessive or contracted "'s" is a noun whatever its tag ("dj's been …").
  const nounLike = (t: Token, i: number) => isNoun(t) || tokens[i + 1]?.text === "'s" || t.upper;
  tokens.forEach((t, i) => {
    if (used.has(i) || !nounLike(t, i) || !bare(i)) return;
    const who = best(roster.map((n) => [n, (profiles[n]?.heads ?? []).some((r) => r === t.text || r === t.lemma) ? 1 : 0]));
    if (who !== null) claim({ name: who, start: i, end: i + 1, by: "role" });
  });
  // An abbreviation of someone's role, written in capitals ("the TA" for a teaching assistant).
  tokens.forEach((t, i) => {
    if (used.has(i) || !t.upper || t.text.length < 2 || t.text.length > 4 || !(isNoun(t) || t.pos === "X")) return;
    const who = best(roster.map((n) => [n, (profiles[n]?.initials ?? []).includes(t.text) ? 1 : 0]));
    if (who !== null) claim({ name: who, start: i, end: i + 1, by: "role" });
  });
  // "his mentor", "Zhang Hao's friend": a relation word after a possessor, looked up in the
  // possessor's relationships (the town's own table), when exactly one other person's entry has it
  // or a WordNet synonym or direct hyponym / hypernym of it.
  // (Read again once roles are read: "Is the son sure his father …" needs "the son" first.)
  const relations = (): void => tokens.forEach((t, i) => {
    if (used.has(i) || !isNoun(t) || cuesOf([t], "relation").length === 0) return;
    let k = i - 1;
    while (k >= 0 && tokens[k]!.pos === "ADJ") k--;
    const possessive = tokens[k];
    if (possessive === undefined) return;
    // ("his wife": the last one before it whom nothing marks as a woman; with no one before, the
    // first one after: "How is his mother doing? Luca said …")
    const owner = possessive.text === "'s" ? out.find((m) => m.end === k && m.by === "name")?.name : ["his", "her", "their"].includes(possessive.text) ? (out.filter((m) => m.end <= k && agrees(m.name, possessive.text)).at(-1) ?? out.filter((m) => m.start > i && agrees(m.name, possessive.text)).sort((a, b) => a.start - b.start)[0])?.name : undefined;
    const town = owner === undefined ? undefined : defaultProfiles.find((a) => a.name === owner);
    // Kin the summary states: "her son" for whoever is the owner's child, "her dad" for whoever the
    // owner is a child of (the inverse relation).
    const asked = kinClass(t.text) ?? kinClass(t.lemma);
    if (town === undefined && owner !== undefined && asked !== undefined) {
      // ("Luca's mother": of his parents, the one nothing marks as a man)
      const kinWho = best(roster.filter((n) => n !== owner && agrees(n, t.text) && agrees(n, t.lemma)).map((n) => {
        const theirs = (profiles[n]?.kin ?? []).some((k) => k.of === owner && kinClass(k.word) === asked);
        const ours = (profiles[owner]?.kin ?? []).some((k) => k.of === n && kinClass(k.word) === INVERSE_KIN[asked]);
        // (one the summary marks with the word's gender over one it does not mark)
        return [n, theirs || ours ? (genderOf(t.lemma) ?? genderOf(t.text)) !== undefined && profiles[n]?.gender === (genderOf(t.lemma) ?? genderOf(t.text)) ? 2 : 1 : 0];
      }));
      if (kinWho === null) return;
      const at = possessive.text === "'s" ? out.find((m) => m.end === k)!.start : k;
      if (possessive.text === "'s") out.splice(out.findIndex((m) => m.end === k), 1);
      claim({ name: kinWho, start: at, end: i + 1, by: "role" });
      return;
    }
    if (town === undefined) return;
    const who = best(roster.filter((n) => n !== owner).map((n) => {
      const said = defaultProfiles.find((a) => a.name === n);
      const words = (said === undefined ? "" : (town.relationships[said.id] ?? "")).toLowerCase().split(/[^a-z]+/);
      return [n, words.some((w) => w === t.text || w === t.lemma || roleRelation(t.lemma, w) !== null) ? 1 : 0];
    }));
    if (who === null) return;
    const start = possessive.text === "'s" ? out.find((m) => m.end === k)!.start : k;
    // The possessor was named only to say whose the other is.
    if (possessive.text === "'s") out.splice(out.findIndex((m) => m.end === k), 1);
    claim({ name: who, start, end: i + 1, by: "role" });
  });
  relations();
  // "Mr. Mehta's TA", "Lin Wei's friend": a person named only to say whose the other is.
  for (const m of [...out]) {
    const after = tokens[m.end + 1];
    // A relation noun ("friend", "assistant"), someone's role, or a short capitalised abbreviation ("TA").
    const personal = (u: Token) => cuesOf([u], "relation").length > 0 || cuesOf([u], "activity").length > 0 || roster.some((n) => (profiles[n]?.heads ?? []).includes(u.text)) || (u.capital && u.text.length <= 3);
    if (m.by === "name" && tokens[m.end]?.text === "'s" && after !== undefined && isNoun(after) && personal(after)) out.splice(out.indexOf(m), 1);
  }
  // Role and description references: a determiner or possessive, then a noun phrase.
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    // A definite determiner or a possessive: "a painting" names no one in particular.
    const opener = DEFINITE.has(t.text) || POSSESSIVES.has(t.text) || t.text === "'s";
    // Casual writing drops the determiner at the start of a clause ("tea guy closing up?").
    const clauseStart = i === 0 || tokens[i - 1]!.pos === "PUNCT" || tokens[i - 1]!.pos === "CCONJ";
    const bareStart = !opener && clauseStart && (isNoun(t) || t.pos === "ADJ");
    if ((used.has(i) && t.text !== "'s") || !(opener || bareStart)) continue;
    // "I'm the new porter", "we are the caterers": a phrase said of the speaker names no one in the scene.
    if (tokens[i - 1]?.lemma === "be" && ["i", "we"].includes(tokens[i - 2]?.text ?? "")) continue;
    const npStart = opener ? i + 1 : i;
    let j = npStart;
    const np: Token[] = [];
    // … and a word in capitals (an abbreviation: "the DJ"), or one before "'s", whatever its tag.
    const nominal = (x: number) => {
      const u = tokens[x]!;
      return u.pos === "NOUN" || u.pos === "ADJ" || u.pos === "PROPN" || u.pos === "NUM" || u.upper || tokens[x + 1]?.text === "'s" || cuesOf([u], "activity").length > 0;
    };
    // A word tagged as a verb before a noun is an attribute here ("her head waiter").
    // Not before a name: "the officer got Rasmus …" is a verb and its object.
    const attributive = (x: number) => tokens[x]!.pos === "VERB" && isNoun(tokens[x + 1] ?? tokens[x]!) && x + 1 < tokens.length && !used.has(x + 1);
    while (j < tokens.length && !used.has(j) && (nominal(j) || attributive(j)) && np.length < 4) np.push(tokens[j++]!);
    if (np.length === 0) continue;
    // The head is the last noun that names a role ("the cafe owner right now": owner); the mention
    // spans the whole phrase.
    let byRole: string | null = null;
    for (let h = np.length - 1; h >= 0 && byRole === null; h--) {
      const head = np[h]!;
      // A role noun may be tagged as an attribute before another noun ("her head waiter"), or as
      // an adjective at the end of the phrase when WordNet knows it as a person noun ("the kitchen chief").
      if (!isNoun(head) && !((head.pos === "ADJ" || head.pos === "VERB") && (h < np.length - 1 || isPersonNoun(head.text)))) continue;
      // A plural ("the two guides") names a group, not one person.
      if (isNoun(head) && plural(head)) break;
      // A compound WordNet lists as one person noun ("best man", "strong man") is the head as a whole.
      const compound = h > 0 ? `${np[h - 1]!.text} ${head.text}` : "";
      const whole = isPersonNoun(compound);
      // "the woman", "the guy": a word for anyone, said with a description, not a role; but one a
      // WordNet synonym of someone's role names them ("her girl" for Morag's daughter).
      const anyone = !whole && cuesOf([head], "activity").length > 0;
      // After "my", "his" … a body part is the owner's own ("bit my head off" is no head teacher).
      if (POSSESSIVES.has(t.text) && !whole && cuesOf([head], "body_part").length > 0) continue;
      const words = np.slice(0, whole ? h - 1 : h).flatMap((w) => [w.text, w.lemma]);
      const forms = whole ? [compound] : [head.text, head.lemma];
      byRole = best(roster.map((n) => {
        const role = profiles[n]?.role ?? [];
        // After a possessive a clipped form is more likely the thing owned ("her photo" is no photographer).
        // … or the verb the role noun comes from is what the summary says they do ("the director"
        // for "Wang Jun, who agreed to direct it"): above a synonym of a role, below the role word itself.
        // A word of where they are outranks what they do ("the receptionist" for the one at
        // Reception, not whoever is taking a parcel to reception).
        const does = new Set(profiles[n]?.about ?? []);
        const here = new Set(profiles[n]?.place ?? []);
        const derivedFrom = (words: ReadonlySet<string>) => !whole && forms.some((f) => roleDerivationsOf(f).some((v) => words.has(v)));
        // (one the summary gives no other role is likelier to be called by their post's name)
        const roled = (profiles[n]?.heads ?? []).length > 0 ? 0.1 : 0;
        const derived = derivedFrom(here) ? 3.5 - roled : derivedFrom(does) ? 3.25 - roled : 0;
        const scored = Math.max(0, derived, ...(profiles[n]?.heads ?? []).flatMap((r) => forms.map((f) => roleScore(f, r, !POSSESSIVES.has(t.text)))), ...role.map((r) => (compoundOf(head.text, r) ? 2 : 0)));
        const headScore = anyone && scored !== 3 ? 0 : scored;
        // A modifier matches a role word, or the adverb in -ly the role is written with ("the new
        // examiner" for a newly qualified one).
        return [n, headScore === 0 ? 0 : headScore + words.filter((w) => role.some((r) => sameRoleWord(w, r) || r === `${w}ly`)).length];
      }));
    }
    // "the boss", "her boss": a relation word for a superior that is no one's own role names whoever
    // holds a role in charge (else of greater rank), other than the one whose boss it is.
    // (its last noun: a predicate adjective may follow, "is the boss busy")
    const last = np.findLast(isNoun) ?? np.at(-1)!;
    const superiorWord = (w: string) => SUPERIOR_ROLES.head.has(w) || SUPERIOR_ROLES.rank.has(w);
    if (isNoun(last) && cuesOf([last], "relation").length > 0 && superiorWord(last.lemma) && !roster.some((n) => (profiles[n]?.heads ?? []).includes(last.lemma))) {
      const owner = POSSESSIVES.has(t.text) ? out.filter((m) => m.end <= i).at(-1)?.name : t.text === "'s" ? out.find((m) => m.end === i)?.name : undefined;
      const others = roster.filter((n) => n !== owner);
      const holding = (set: ReadonlySet<string>) => others.filter((n) => (profiles[n]?.heads ?? []).some((h) => set.has(h)));
      // … else whoever owns the place or is said to run it ("Oskar Nilsson: owner speaking", "Nadia runs the farm").
      const owning = () => others.filter((n) => profiles[n]?.inCharge === true || (profiles[n]?.heads ?? []).some((h) => SUPERIOR_ROLES.owner.has(h)));
      const inCharge = holding(SUPERIOR_ROLES.head);
      const ranking = inCharge.length > 0 ? inCharge : holding(SUPERIOR_ROLES.rank);
      // Of everyone in charge, the one whose role names the place they are in ("salon owner" on the
      // Salon Floor) is the boss here, over one in charge elsewhere ("bank manager" in a client's chair).
      const here = [...new Set([...inCharge, ...holding(SUPERIOR_ROLES.rank), ...owning()])].filter((n) => {
        const p = profiles[n]!;
        return p.role.some((w) => !p.heads.includes(w) && p.about.includes(w));
      });
      const ranked = here.length === 1 ? here : ranking.length > 0 ? ranking : owning();
      if (ranked.length === 1) {
        claim({ name: ranked[0]!, start: i, end: npStart + np.length, by: "role" });
        continue;
      }
    }
    if (byRole !== null) {
      // The subject of "does / would <subject> <verb> …" ends before the bare verb, whatever its tag
      // ("does the site manager trust …" with "trust" read as a noun).
      const aux = tokens[i - 1];
      const inverted = !opener ? false : aux !== undefined && aux.pos === "AUX" && (aux.lemma === "do" || MODALS.has(aux.text)) && (i < 2 || tokens[i - 2]!.pos === "PUNCT" || tokens[i - 2]!.pos === "CCONJ" || /^(what|how|why|where|when|who)$/.test(tokens[i - 2]!.text));
      const headEnd = npStart + np.findLastIndex((u) => isNoun(u) && (profiles[byRole!]?.heads ?? []).some((r) => roleScore(u.text, r) > 0 || roleScore(u.lemma, r) > 0)) + 1;
      // … and a participle after the head is the predicate ("what's the site director planning").
      const participle = headEnd > npStart && headEnd < j && tokens.slice(headEnd, j).every((u) => u.text.endsWith("ing"));
      claim({ name: byRole, start: i, end: (inverted || participle) && headEnd > npStart && headEnd < j ? headEnd : j, by: "role" });
      continue;
    }
    // "the raffle seller": an agent noun in -er names whoever does its verb ("selling").
    const agentHead = np.at(-1);
    // The phrase's last noun (a predicate adjective may follow it: "the kite judge free …").
    const personHead = np.findLast(isNoun);
    // … and a person noun that is also the verb of what someone visibly does ("the riddle judge" for whoever is judging riddles).
    const verbOf = agentHead !== undefined && isNoun(agentHead) && /er$/.test(agentHead.text) && agentHead.text.length > 4 ? [agentHead.text.slice(0, -2), agentHead.text.slice(0, -1)] : personHead !== undefined && isMainlyPersonNoun(personHead.text) && !plural(personHead) && tokens[npStart + np.indexOf(personHead) + 1]?.text !== "'s" ? [personHead.text] : [];
    if (verbOf.length > 0) {
      const said = contentWords(np.slice(0, -1));
      const who = best(roster.map((n) => {
        const known = new Set(profiles[n]?.about ?? []);
        return [n, verbOf.some((v) => known.has(v)) ? 1 + said.filter((w) => known.has(w)).length : 0];
      }));
      if (who !== null) {
        claim({ name: who, start: i, end: j, by: "description" });
        continue;
      }
    }
    // "the parking guy", "the one mending nets", "the woman at the hatch": what the phrase and
    // the words after it say, against each person's roles and what they visibly do.
    // … or any person noun that names no one's role ("the old gentleman behind the till", "my nephew
    // working the stall"): the description is what follows it and its modifiers.
    // (A word whose most frequent sense is no person — "card", "photo" — describes a thing.)
    const one = np.findLastIndex((u) => cuesOf([u], "activity").length > 0 || (isNoun(u) && isMainlyPersonNoun(u.text)));
    // "the two men in the Common Room" is a group, not one person; "my nephew's bike …" describes the bike.
    if (one < 0 || plural(np[one]!) || (cuesOf([np[one]!], "activity").length === 0 && tokens[npStart + one + 1]?.text === "'s")) continue;
    // "bit my head off": after a possessive a body part is the owner's own.
    if (POSSESSIVES.has(t.text) && cuesOf([np[one]!], "body_part").length > 0) continue;
    let k = npStart + one + 1;
    const after: Token[] = [];
    // Up to the end of the clause: a hyphen inside a word ("well-known") does not end it.
    // … and "about" opens what a talk is about, not where they are ("chat with the teenager on the
    // sofa about her hair"), unless "about to" says what they are on the point of doing.
    const ends = (t: Token, x: number) => (t.pos === "PUNCT" && t.text !== "-") || (t.text === "about" && tokens[x + 1]?.text !== "to");
    // A place's name belongs to the description ("the guy on the front desk").
    // The predicate is no part of it: an auxiliary after the phrase ("that the young one is …"),
    // or any verb when the phrase is the subject of an inverted question ("is the boss gunning for …").
    const opensQuestion = tokens[i - 1]?.pos === "AUX" && (i < 2 || tokens[i - 2]!.pos === "PUNCT" || /^(what|how|why|where|when|who)$/.test(tokens[i - 2]!.text));
    // A statement that opens a sentence keeps its predicate ("My nephew is working the stall. …":
    // what he is said to be doing is how the speaker picks him out).
    const opensStatement = i === 0 || tokens[i - 1]!.pos === "PUNCT";
    // … but a participle right after the person word, with its object, is a reduced relative that
    // describes them ("how is the woman selling tickets holding up?": the predicate is "holding up").
    const reducedRelative = (x: number) => x === npStart + one + 1 && tokens[x]!.text.endsWith("ing") && ["DET", "NOUN", "ADJ", "PRON"].includes(tokens[x + 1]?.pos ?? "");
    const predicate = (u: Token, x: number) => (u.pos === "AUX" && (MODALS.has(u.text) || (!opensStatement && u.text !== "'s"))) || (opensQuestion && u.pos === "VERB" && !reducedRelative(x));
    while (k < tokens.length && after.length < 8 && !ends(tokens[k]!, k) && !predicate(tokens[k]!, k) && (!used.has(k) || taken.has(k))) after.push(tokens[k++]!);
    // The person word itself counts when it is no word for anyone ("the lifeguard" for someone "on
    // lifeguard duty").
    // Not after a preposition of place: "across the ward" is where.
    const generic = cuesOf([np[one]!], "activity").length > 0 || LOCATIVE.has(tokens[i - 1]?.text ?? "");
    const said = contentWords([...np.slice(0, generic ? one : one + 1), ...after.filter(isNounish)]);
    // (… and what their role word is derived from: "the lady at reception" for a receptionist)
    const score = (words: readonly string[]) => best(roster.map((n) => {
      const known = new Set([...(profiles[n]?.about ?? []), ...(profiles[n]?.role ?? []), ...(profiles[n]?.heads ?? []).flatMap(roleDerivationsOf)]);
      return [n, words.filter((w) => known.has(w)).length];
    }));
    // A definite person noun that its own phrase does not pin down ("the orderly", when the scene
    // calls him a porter) is read against the rest of the query, as a word's sense is read off its
    // context: the one person whose visible doings the query's other content words describe.
    // Only the query's nouns count (not "meaning" against "meant"), and only when no one is named:
    // beside a named person, an unmatched person word may well be someone not in the scene.
    // (A place the query names counts: "is the boss holed up in the back office" for whoever is there.)
    const rest = () => contentWords(tokens.filter((u, x) => (x < i || x >= k) && (!used.has(x) || taken.has(x)) && isNoun(u)));
    const unnamed = !out.some((m) => m.by === "name");
    // … and a word for anyone that the scene itself calls one person ("(teenage solo hiker, the
    // kid)"), when what the query says of them matches no one.
    const calledSo = () => best(roster.map((n) => [n, (profiles[n]?.heads ?? []).includes(np[one]!.text) ? 1 : 0]));
    const who = score(said) ?? (unnamed && DEFINITE.has(t.text) && isMainlyPersonNoun(np[one]!.lemma) && !LOCATIVE.has(tokens[i - 1]?.text ?? "") ? score(rest()) : null) ?? (DEFINITE.has(t.text) ? calledSo() : null);
    if (who !== null) claim({ name: who, start: i, end: k, by: "description" });
  }
  out.sort((a, b) => a.start - b.start);
  relations();
  // "the student of Wang Jun": a name after "of" that follows someone else's role only says whose
  // (not after an adjective that takes "of": "how sure is the shop manager of Bartosz …").
  for (const m of [...out]) {
    if (m.by !== "name" || tokens[m.start - 1]?.text !== "of") continue;
    const role = out.find((r) => (r.by === "role" || r.by === "description") && r.end === m.start - 1 && r.name !== m.name);
    const opens = tokens.slice(0, role?.start ?? 0).findLastIndex((t) => t.pos === "PUNCT") + 1;
    if (role !== undefined && !tokens.slice(opens, role.start).some((t) => t.pos === "ADJ")) out.splice(out.indexOf(m), 1);
  }
  out.sort((a, b) => a.start - b.start);
  const mentioned = out;
  // Pronouns: the nearest person mentioned before, else after.
  const pronouns = cuesOf(tokens, "pronoun").filter((c) => !used.has(c.start));
  const resolved: Mention[] = [];
  // A pronoun in a later sentence refers to the previous sentence's subject, its first person
  // mentioned (centering: "The professor keeps watching the student. What's he after?").
  const sentenceOf = (i: number) => tokens.slice(0, i).filter((t) => t.pos === "PUNCT" && [".", "?", "!", ";"].includes(t.text)).length;
  for (const p of pronouns) {
    // ("The woman on the bench … Is she …": not a man named since)
    const out = mentioned.filter((m) => agrees(m.name, tokens[p.start]!.text));
    const earlier = out.filter((m) => m.end <= p.start);
    const last = earlier.at(-1);
    // Only a subject named by name or role, at its sentence's start or before its verb.
    const subject = (m: Mention) => (m.by === "name" || m.by === "role") && (m.start === 0 || tokens[m.start - 1]!.pos === "PUNCT" || tokens[m.end]?.pos === "AUX" || tokens[m.end]?.pos === "VERB");
    const first = last === undefined || sentenceOf(last.start) === sentenceOf(p.start) ? undefined : earlier.find((m) => sentenceOf(m.start) === sentenceOf(last.start));
    // … but a subject who reports to the speaker ("Lin Wei told me Chen Mei sounded upset. Is she …")
    // is the source, not the topic: the reported clause's subject is.
    const reported = first === undefined ? undefined : out.find((m) => m.start > first.end && m.end <= p.start && sentenceOf(m.start) === sentenceOf(first.start) && (m.by === "name" || m.by === "role"));
    const reports = first !== undefined && (REPORT_VERBS.has(tokens[first.end]?.lemma ?? "") || REPORT_VERBS.has(tokens[first.end]?.text ?? "")) && ["me", "us"].includes(tokens[first.end + 1]?.text ?? "");
    const previous = first !== undefined && subject(first) ? (reports && reported !== undefined ? reported : first) : undefined;
    const before = previous ?? last;
    const after = out.find((m) => m.start >= p.end);
    const ref = before ?? after;
    if (ref !== undefined) resolved.push({ name: ref.name, start: p.start, end: p.end, by: "pronoun" });
  }
  // "does he see him as …": a subject pronoun and an object pronoun of one clause are two people
  // (an object pronoun never refers to its own clause's subject). The subject pronoun keeps to the
  // last subject mentioned before it (parallel roles), the object pronoun to the other person.
  for (const [x, subj] of resolved.entries()) {
    const obj = resolved[x + 1];
    if (obj === undefined || obj.name !== subj.name || !NOMINATIVE.has(tokens[subj.start]!.text) || !ACCUSATIVE.has(tokens[obj.start]!.text)) continue;
    if (tokens.slice(subj.end, obj.start).some((t) => t.pos === "PUNCT" || t.pos === "CCONJ" || t.pos === "SCONJ" || t.pos === "PRON")) continue;
    const earlier = out.filter((m) => m.end <= subj.start && (m.by === "name" || m.by === "role"));
    const isSubject = (m: Mention) => tokens[m.end]?.pos === "VERB" || tokens[m.end]?.pos === "AUX" || (tokens[m.end]?.text === "'s" && tokens[m.end + 1]?.pos === "VERB");
    const subject = earlier.findLast(isSubject);
    const other = subject === undefined ? undefined : earlier.findLast((m) => m.name !== subject.name);
    if (subject === undefined || other === undefined) continue;
    resolved[x] = { ...subj, name: subject.name };
    resolved[x + 1] = { ...obj, name: other.name };
  }
  return [...out, ...resolved].sort((a, b) => a.start - b.start);
}
