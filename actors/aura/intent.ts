// The IntentFrame's deterministic backend and the gap→budget map (paper §3.2–3.3, A1).
//
// The released heuristic (15 marker words, gap = 0.2·hits) gives gap 0 to most availability and
// latent-goal queries. This backend reads the query's structure instead, with an NLP library's
// lemmas and parts of speech (language/tokens.ts) and one sourced vocabulary
// (data/aura/intent-lexicon.json: the paper's and the release's marker words, category
// definitions, WordNet synonyms):
//   1. who the query is about (language/people.ts): people by name, role or occupation, what they
//      visibly do, or a pronoun; a place's occupants (a place by name or a WordNet synonym of its
//      head noun); or everyone (a group quantifier);
//   2. whether it asks about someone's mind: a person before a belief verb or epistemic adjective
//      ("X reckons", "X is under the impression", "is X aware"), a person's perspective noun ("in
//      X's eyes"), or a person after "according to" / "as far as"; then the need is that believer's
//      belief about the other person, never the other's private state. A belief cue beside two
//      people with no clear structure fails safe the same way, and so do two people with no cue
//      at all when the second stands where a mind's or a report's content does ("A in the loop
//      about B …", "the word from A on B's …", "A finds B moody"; `unclearPair`);
//   3. which hidden fields the need touches (the paper's gap rubric): asking about a person in a
//      social scene is asking whether they can be approached (availability, emotional state);
//      appropriateness (a first-person modal, "is it <suitable> to") and goal words also need what
//      they privately pursue (unspoken goal); schedule words need the plan;
//   4. the literal request: public facts asked (place, activity, presence, time, plan, count) and
//      the private fields the wording itself names (`asked`), which is all NoIntent fetches.
import type { IntentFramePayload } from "./events.ts";
import { cuesOf, hasCue, isMainlyPersonNoun, isPersonNoun, PLACE_HEADS, REPORT_VERBS, type Cue } from "./language/lexicon.ts";
import { mentionsOf, profilesOf, type Mention, type PersonProfile } from "./language/people.ts";
import { knownWord, tokenize, type Token, type TokenizerName } from "./language/tokens.ts";
import { mentionedLocation, type PublicRow } from "./scene.ts";

export type HiddenField = "availability" | "emotional_state" | "unspoken_goal";

export type Scope =
  | { readonly kind: "none" }
  | { readonly kind: "person"; readonly agents: readonly string[] }
  | { readonly kind: "location"; readonly location: string; readonly agents: readonly string[] }
  | { readonly kind: "all"; readonly agents: readonly string[] };

export interface QueryAnalysis {
  readonly mentioned: readonly string[];
  readonly location: string | null;
  readonly scope: Scope;
  readonly secondOrder: { readonly believer: string; readonly target: string; readonly fields: readonly HiddenField[] } | null;
  readonly hidden: readonly HiddenField[];
  /** Private fields the wording itself asks about ("is X busy?" asks availability): the literal request's hidden part. */
  readonly asked: readonly HiddenField[];
  readonly wantsPlan: boolean;
  readonly literal: readonly ("location" | "action" | "presence" | "time" | "plan" | "count")[];
  readonly appropriateness: boolean;
  readonly literalOnly: boolean;
}

/** What the controller perceives of the scene (Sense → Scene): the public layer only. */
export interface PerceivedScene {
  readonly summary: string;
  readonly time: string | null;
  readonly focus: string;
  readonly public: Readonly<Record<string, PublicRow>>;
}

export interface AnalyserOptions {
  readonly tokenizer?: TokenizerName;
}

type Literal = QueryAnalysis["literal"][number];

const profileCache = new WeakMap<PerceivedScene, Map<TokenizerName, Record<string, PersonProfile>>>();
function profiles(scene: PerceivedScene, tokenizer: TokenizerName): Record<string, PersonProfile> {
  let byTokenizer = profileCache.get(scene);
  if (byTokenizer === undefined) profileCache.set(scene, (byTokenizer = new Map()));
  let p = byTokenizer.get(tokenizer);
  if (p === undefined) {
    const roster = Object.keys(scene.public).sort();
    byTokenizer.set(tokenizer, (p = profilesOf(scene.summary, roster, scene.public, tokenizer)));
  }
  return p;
}

/** The scene place a query names: by name, a distinctive word of its name, or a WordNet synonym of its head noun. */
export function placeOf(text: string, tokens: readonly Token[], locations: readonly string[], exclude: ReadonlySet<number> = new Set(), wholeOnly = false): { location: string; tokens: Set<number> } | null {
  const taken = new Set<number>();
  const words = locations.map((l) => l.toLowerCase().replace(/[’']s\b/g, "").split(/[^a-z0-9]+/).filter((w) => w.length > 0));
  // The whole name, token by token (possessives are tokens of their own).
  for (let i = 0; i < tokens.length; i++) {
    for (let k = 0; k < locations.length; k++) {
      const ws = words[k]!;
      const span: number[] = [];
      let j = i;
      for (const w of ws) {
        while (tokens[j]?.text === "'s") j++;
        if (tokens[j]?.text !== w) break;
        span.push(j++);
      }
      // A place name before a person noun modifies a role ("the shop manager"): no place mention.
      const modifier = tokens[j]?.pos === "NOUN" && isPersonNoun(tokens[j]!.text);
      if (span.length === ws.length && !modifier) {
        for (const x of span) taken.add(x);
        return { location: locations[k]!, tokens: taken };
      }
    }
  }
  if (wholeOnly) return null;
  // What people's names and roles took is not a place ("the harbour master", "Zhang Hao").
  const free = tokens.filter((_, i) => !exclude.has(i));
  const byWord = mentionedLocation(free.map((t) => t.text).join(" "), locations);
  if (byWord !== null) {
    const distinctive = new Set(words[locations.indexOf(byWord)]);
    tokens.forEach((t, i) => !exclude.has(i) && (distinctive.has(t.text) || distinctive.has(t.lemma)) && taken.add(i));
    return { location: byWord, tokens: taken };
  }
  // A synonym of a place's head ("the coffee shop" for a cafe): unique matches only.
  const headsOf = (w: string) => new Set([w, ...(PLACE_HEADS.get(w) ?? [])]);
  for (const cue of cuesOf(tokens, "place")) {
    if (exclude.has(cue.start)) continue;
    const heads = headsOf(cue.term);
    const hits = locations.filter((_, k) => words[k]!.some((w) => [...headsOf(w)].some((h) => heads.has(h))));
    if (hits.length === 1) {
      for (let i = cue.start; i < cue.end; i++) taken.add(i);
      return { location: hits[0]!, tokens: taken };
    }
  }
  return null;
}

const uniqueNames = (ms: readonly Mention[]): string[] => [...new Set(ms.map((m) => m.name))];

/** Reads the query against the perceived scene. Pure and deterministic. */
export function analyseQuery(text: string, scene: PerceivedScene, options: AnalyserOptions = {}): QueryAnalysis {
  const tokenizer = options.tokenizer ?? "wink";
  const tokens = tokenize(text, tokenizer);
  const roster = Object.keys(scene.public).sort();
  const locations = [...new Set(roster.map((n) => scene.public[n]!.location))].sort();
  // Whole place names first (so "Chen's General Store" is no mention of Chen Mei), then people, then
  // a place by one of its words or a synonym among the words people's mentions left.
  const named = placeOf(text, tokens, locations, new Set(), true);
  const mentions = mentionsOf(tokens, roster, profiles(scene, tokenizer), named?.tokens ?? new Set());
  const place = named ?? placeOf(text, tokens, locations, new Set(mentions.flatMap((m) => Array.from({ length: m.end - m.start }, (_, k) => m.start + k))));
  const mentioned = uniqueNames(mentions);
  const location = place?.location ?? null;
  const cue = (c: Parameters<typeof hasCue>[1]) => hasCue(tokens, c);
  // A belief whose believer or other person the query does not let us resolve ("does the coach
  // reckon she's upset?"): a belief question all the same, so no one's private state is read for it.
  const read = secondOrderOf(tokens, mentions);
  let second = read.second;
  let unresolved = read.unresolved;
  let about: string | null = null;
  // A resident believer's frame whose other person is named only by what they are seen handling
  // ("is A under the impression the lemonade money …" with one person "selling lemonade"): a noun
  // of the content that only one other person's public action names resolves the target.
  if (read.resident !== undefined) {
    const believer = read.resident.believer;
    const STOP = new Set(["the", "a", "an", "of", "in", "on", "at", "to", "for", "with", "and", "from", "into", "by"]);
    const words = (n: string) => new Set(scene.public[n]!.action.toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 4 && !STOP.has(w)));
    const owners = (w: string) => roster.filter((n) => n !== believer && words(n).has(w));
    const noun = tokens.slice(read.resident.at).find((t) => t.pos === "NOUN" && owners(t.text).length === 1);
    if (noun !== undefined) {
      second = { believer, target: owners(noun.text)[0]!, fields: beliefFields(tokens.slice(read.resident.at)) };
      unresolved = false;
    }
  }
  // No belief structure read, but two people where a mind's content could stand: the safe reading.
  if (second === null && !unresolved) {
    const pair = unclearPair(tokens, mentions);
    if (pair?.aboutBeliever === true) about = pair.believer.name;
    else if (pair !== null && pair.target !== null) second = { believer: pair.believer.name, target: pair.target.name, fields: beliefFields(tokens.slice(pair.at)) };
    else if (pair !== null) unresolved = true;
  }

  const firstPerson = new Set(cuesOf(tokens, "first_person").map((c) => c.start));
  // A first-person modal ("should I", "can we") or "is it <suitable> to", "a good time to".
  // … or "is it / would it be <adjective> to …", "would it be a nuisance to …": a judgement of an act.
  const judged = tokens.some((t, i) => {
    if (t.text !== "it") return false;
    let j = i + 1;
    while (tokens[j]?.pos === "AUX" || tokens[j]?.pos === "ADV") j++;
    const start = j;
    // … "wise or foolish", "polite or pushy": a choice of judgements is a judgement.
    while (tokens[j] !== undefined && (tokens[j]!.pos === "DET" || tokens[j]!.pos === "ADJ" || tokens[j]!.pos === "NOUN" || (tokens[j]!.pos === "CCONJ" && j > start)) && j - start < 5) j++;
    return j > start && tokens.slice(start, j).some((u) => u.pos === "ADJ" || u.pos === "NOUN") && tokens[j]?.text === "to";
  });
  // "Fair to ask her now?", "okay to pop over?": the same judgement with "is it" dropped, a word
  // opening a clause (no person, pronoun or verb) before "to" and a bare verb.
  const droppedCopula = tokens.some((t, i) => (i === 0 || tokens[i - 1]!.pos === "PUNCT") && ["ADJ", "PROPN", "ADV"].includes(t.pos) && !mentions.some((m) => m.start <= i && i < m.end) && tokens[i + 1]?.text === "to" && tokens[i + 2]?.pos === "VERB");
  // "Is this a sensible moment?", "is now a decent time?": a judgement of the moment itself.
  const momentJudged = tokens.some((t, i) => {
    if (!["it", "this", "that", "now"].includes(t.text) || (tokens[i + 1]?.lemma !== "be" && tokens[i - 1]?.lemma !== "be")) return false;
    let j = tokens[i + 1]?.lemma === "be" ? i + 2 : i + 1;
    if (tokens[j]?.pos === "DET") j++;
    const adjective = tokens[j]?.pos === "ADJ";
    while (tokens[j]?.pos === "ADJ" || tokens[j]?.pos === "ADV") j++;
    const noun = tokens[j];
    const timeNoun = noun !== undefined && (noun.lemma === "time" || noun.lemma === "moment" || hasCue([noun], "time_word"));
    // "is now the moment to tell her": the moment weighed for an act, with no adjective.
    const forAnAct = tokens[j + 1]?.text === "to" && tokens[j + 2]?.pos === "VERB";
    return timeNoun && (adjective || forAnAct);
  });
  // "Would X mind if I …", "would I be overstepping …": the speaker's own hypothetical act, weighed.
  const SUBJECT_FIRST_PERSON = new Set(["i", "we"]);
  const speakersAct = tokens.some((t, i) => (t.text === "if" || t.text === "would") && SUBJECT_FIRST_PERSON.has(tokens[i + 1]?.text ?? ""));
  const appropriateness = judged || droppedCopula || momentJudged || speakersAct || cue("appropriateness") || cuesOf(tokens, "appropriateness_modal").some((c) => firstPerson.has(c.end) || firstPerson.has(c.start - 1));
  // "X has got planned", "X's got lined up": have and get as the perfect's auxiliaries.
  const POSSESSION_VERBS = new Set(["have", "get"]);
  // The person's plan is asked when a schedule word is said of them ("X is heading", "X's plans"),
  // not of the user ("should I stop by X's place", "invite X").
  const predicatedOf = (c: Cue) => mentions.some((m) => m.end <= c.start && tokens.slice(m.end, c.start).length <= 3 && tokens.slice(m.end, c.start).every((t) => t.pos === "AUX" || t.pos === "ADV" || t.pos === "PART" || t.text === "'s" || POSSESSION_VERBS.has(t.lemma)));
  // … or when the query turns on when something will happen: "how long (until) …", a when-question,
  // or a temporal subordinator before an event or a clause ("before the match", "till she's finished",
  // "once it eases off"; not "after what she said", which asks the past).
  const TEMPORAL = new Set(["until", "till", "before", "after", "once"]);
  // "Is the apprentice after something?": "be after" with no other predicate is seeking, not a time.
  const seeking = (i: number) => {
    if (tokens[i]!.text !== "after") return false;
    const opens = tokens.slice(0, i).findLastIndex((u) => u.pos === "PUNCT" && [".", "?", "!", ";", ","].includes(u.text)) + 1;
    let k = opens;
    while (tokens[k]?.pos === "ADV" || tokens[k]?.pos === "CCONJ") k++;
    return tokens[k]?.lemma === "be" && k + 1 < i && tokens.slice(k + 1, i).every((u) => ["DET", "NOUN", "PROPN", "PRON", "NUM"].includes(u.pos) || u.text === "'s");
  };
  const timing = tokens.some((t, i) =>
    // "how long", "how much longer", "how soon".
    (t.text === "how" && (["long", "longer", "soon"].includes(tokens[i + 1]?.text ?? "") || (tokens[i + 1]?.text === "much" && tokens[i + 2]?.text === "longer"))) ||
    (t.text === "when" && (i === 0 || tokens[i - 1]!.pos === "PUNCT") && (tokens[i + 1]?.pos === "AUX")) ||
    (TEMPORAL.has(t.text) && tokens[i + 1] !== undefined && tokens[i + 1]!.pos !== "PUNCT" && tokens[i + 1]!.text !== "what" && tokens[i + 1]!.pos !== "ADV" && !seeking(i)));
  const wantsPlan = cuesOf(tokens, "schedule").some(predicatedOf) || timing;
  // A group word, or any plural noun for people ("the two drivers", "the nurses").
  const group = cue("group") || tokens.some((t) => t.pos === "NOUN" && t.text !== t.lemma && !t.text.endsWith("ing") && isPersonNoun(t.lemma));
  const stateCue = cue("availability") || cue("emotional_state");
  const literalOnly = mentioned.length === 0 && cue("literal") && !stateCue;

  let scope: Scope = { kind: "none" };
  const at = (loc: string) => roster.filter((n) => scene.public[n]!.location === loc);
  if (second !== null) scope = { kind: "person", agents: [second.believer] };
  else if (about !== null) scope = { kind: "person", agents: [about] };
  else if (mentioned.length > 1 && topicOf(tokens, mentions) !== null) scope = { kind: "person", agents: [topicOf(tokens, mentions)!] };
  else if (mentioned.length > 0) scope = { kind: "person", agents: mentioned };
  else if (!literalOnly && location !== null && (group || stateCue || appropriateness)) scope = { kind: "location", location, agents: at(location) };
  else if (!literalOnly && group) {
    // "who's around" asks who is here (the focus place); "is anyone stressed" asks about everyone.
    const whoHere = !stateCue && cuesOf(tokens, "group").every((c) => c.term === "who");
    scope = whoHere ? { kind: "location", location: scene.focus, agents: at(scene.focus) } : { kind: "all", agents: roster };
  }

  // "What is X <verb>ing …?" with a verb other than a generic one asks what X pursues; so does
  // "what is X after / angling for?", a question ending on a preposition that asks its object.
  const GENERIC = new Set(["do", "be", "have", "go", "feel", "look", "seem", "get"]);
  // Verbs that say nothing of an aim even with an unnamed object ("doing something", "having something").
  const BARE_ACTS = new Set(["do", "be", "have", "get", "feel", "seem", "say", "eat", "drink"]);
  const words = tokens.filter((t) => t.pos !== "PUNCT");
  const what = tokens.findIndex((t) => t.text === "what");
  const asked = what < 0 ? undefined : mentions.find((m) => m.start > what);
  const next = asked === undefined ? undefined : tokens.slice(asked.end).find((t) => t.pos !== "ADV" && t.pos !== "AUX");
  // Right after an inverted subject a word in -ing is the progressive verb whatever its tag
  // ("what's X baking so late", with "baking" read as a noun); an act other than the one X is
  // seen doing asks what X is up to ("what is X sweeping?" of someone seen sweeping asks the object).
  const ing = asked === undefined ? undefined : tokens[asked.end];
  const seenDoing = asked === undefined ? "" : (scene.public[asked.name]?.action ?? "").toLowerCase();
  const progressive = asked !== undefined && ing !== undefined && tokens[asked.start - 1]?.lemma === "be" && ing.text.endsWith("ing") && ing.text.length > 5 && !GENERIC.has(ing.lemma) && !seenDoing.split(/\W+/).includes(ing.text);
  const pursuit = asked !== undefined && (tokens.slice(asked.end).some((t) => t.pos === "VERB" && !GENERIC.has(t.lemma)) || next?.pos === "ADP" || words.at(-1)?.pos === "ADP" || progressive);
  // "Who is X on the phone to?", "who's X meeting?": a who-question about whom X is dealing with
  // in an ongoing act asks what X is up to.
  const who = tokens.findIndex((t) => t.text === "who");
  const partner = who >= 0 && tokens[who + 1]?.lemma === "be" && mentions.some((m) => m.start === who + 2 && m.by !== "pronoun") && (() => {
    const m = mentions.find((x) => x.start === who + 2)!;
    const u = tokens[m.end];
    return u !== undefined && ((u.pos === "VERB" && u.text.endsWith("ing") && !GENERIC.has(u.lemma)) || u.pos === "ADP");
  })();
  // "What's the rush with X?", "what's the story about X?": a what-question on a definite noun
  // said with a person asks what lies behind their conduct; "what's her game / angle?", a noun
  // possessed by the person and nothing more, asks the same (not her mood, her plans or a fact).
  const behindWith = what >= 0 && tokens[what + 1]?.lemma === "be" && tokens[what + 2]?.text === "the" && tokens[what + 3]?.pos === "NOUN" && ["with", "about"].includes(tokens[what + 4]?.text ?? "") && mentions.some((m) => m.start === what + 5 || (m.start === what + 6 && honorificWord(tokens[what + 5])));
  const possessedNoun = what >= 0 && tokens[what + 1]?.lemma === "be" && mentions.some((m) => m.start === what + 2 && m.by === "pronoun" && tokens[what + 2]!.pos === "PRON") && tokens[what + 3]?.pos === "NOUN" && (tokens[what + 4] === undefined || tokens[what + 4]!.pos === "PUNCT" || tokens[what + 4]!.pos === "ADV") && !["emotional_state", "availability", "schedule", "literal", "fact_time", "fact_past", "place", "time_word"].some((c) => hasCue([tokens[what + 3]!], c as Parameters<typeof hasCue>[1]));
  // "A plan of her own", "a game of their own": something of one's own is kept to oneself.
  const ownAgenda = tokens.some((t, i) => t.text === "own" && tokens[i - 2]?.text === "of" && tokens[i - 1]?.pos === "PRON" && !hasCue([tokens[i - 1]!], "first_person"));
  // "What is that for?": a what-question ending on its preposition asks the reason
  // for what was just described, whoever was named before it.
  const reason = what >= 0 && words.at(-1)?.pos === "ADP";
  // "Is she looking for somebody?", "saving up for something": an ongoing act aimed at an object the
  // speaker cannot name asks what the person is after.
  const aimedAtUnknown = cuesOf(tokens, "indefinite").some((c) => {
    let v = c.start - 1;
    if (tokens[v]?.pos === "ADP") v--;
    const verb = tokens[v];
    return verb !== undefined && verb.pos === "VERB" && verb.text.endsWith("ing") && !BARE_ACTS.has(verb.lemma);
  });
  // "Is something eating at her?", "got something up their sleeve", "has something going on": an
  // unnamed matter as the subject of a clause, or what someone has or holds, is what they keep to
  // themselves (not "something to eat": an infinitive says what it is for).
  const THINGS = new Set(["something", "anything"]);
  const hiddenMatter = tokens.some((t, i) => {
    if (!THINGS.has(t.text)) return false;
    const next = tokens[i + 1];
    if (next === undefined || next.text === "to" || next.pos === "PUNCT") return false;
    const subject = next.pos === "AUX" || (next.pos === "VERB" && next.text.endsWith("ing"));
    let v = i - 1;
    while (v >= 0 && tokens[v]!.pos === "ADV") v--;
    const held = ["have", "get", "hold", "keep"].includes(tokens[v]?.lemma ?? "");
    // … or of an inverted "be" with a particle or adjective for its predicate ("or is something up?").
    const inverted = tokens[i - 1]?.lemma === "be" && ["ADV", "ADP", "PART", "ADJ"].includes(next.pos);
    return subject || held || inverted;
  });
  // "What's going on?", "what's got into him?", "what's come over her?": a what-question whose verb
  // is a generic one with its particle asks what lies behind, not a public act.
  const behind = what >= 0 && tokens[what + 1]?.pos === "AUX" && tokens[what + 2]?.pos === "VERB" && (GENERIC.has(tokens[what + 2]!.lemma) || tokens[what + 2]!.lemma === "come") && (tokens[what + 3]?.pos === "ADP" || tokens[what + 3]?.pos === "PART");
  // "Does X expect to get …": a mental verb of X's with a to-infinitive of X's own act is X's aim.
  const intention = [...cuesOf(tokens, "belief"), ...cuesOf(tokens, "belief_verb")].some((c) => ownInfinitive(tokens, c.end) && mentions.some((m) => m.end <= c.start && tokens.slice(m.end, c.start).every((t) => t.pos === "AUX" || t.pos === "ADV" || t.pos === "PART")));
  // "Bored out of his mind", "scared out of her wits": "out of <possessive> <noun>" is an idiom of
  // degree on the feeling before it, not what the person has on their mind.
  const ofDegree = (c: Cue) => tokens[c.start - 1]?.pos === "PRON" && tokens[c.start - 2]?.text === "of" && tokens[c.start - 3]?.text === "out";
  // "What's Rukhsana so busy with?", "what is he tied up on": the matter someone is taken up with,
  // asked by a what-question, is what they are after.
  const occupiedWith = tokens[0]?.text === "what" && cuesOf(tokens, "availability").some((c) => ["with", "on"].includes(tokens[c.end]?.text ?? ""));
  const goal = cuesOf(tokens, "unspoken_goal").some((c) => !ofDegree(c)) || intention || pursuit || reason || aimedAtUnknown || hiddenMatter || behind || partner || behindWith || possessedNoun || ownAgenda || occupiedWith;
  const hidden: HiddenField[] = [];
  const askedFields: HiddenField[] = [];
  if (second === null && !unresolved && scope.kind !== "none") {
    // People are asked about because the user may want to approach them: reachability and mood.
    hidden.push("availability", "emotional_state");
    // "Can X even hear me?", "could she see us?": whether the speaker can reach X at all.
    const reachesSpeaker = [...cuesOf(tokens, "belief"), ...cuesOf(tokens, "belief_verb")].some((c) => speakerObject(tokens, c.end) && ["can", "could"].includes(tokens.slice(0, c.start).findLast((t) => t.pos === "AUX")?.text ?? ""));
    if (cue("availability") || reachesSpeaker) askedFields.push("availability");
    if (cue("emotional_state")) askedFields.push("emotional_state");
    if (goal) askedFields.push("unspoken_goal");
    // What someone is planning or pursuing is their intention: the unspoken goal. So is it when
    // the wording names none of their private fields and asks neither a public fact ("where is
    // X?", "is X at the garden?", "what is X doing?") nor how they are: the need is then
    // uncertain, and the frame keeps every field of the person rather than guess two.
    const asksPublic = location !== null || tokens.some((t) => t.text === "where" || t.text === "doing" || t.text === "how" || t.lemma === "who");
    if (appropriateness || goal || wantsPlan || (askedFields.length === 0 && !asksPublic)) hidden.push("unspoken_goal");
  }

  const literal: Literal[] = [];
  const has = (w: string) => tokens.some((t) => t.text === w || t.lemma === w);
  if (has("where") || location !== null) literal.push("location");
  if (has("doing") || scope.kind === "person") literal.push("action");
  if (scope.kind === "location" || scope.kind === "all" || has("who")) literal.push("presence");
  // The clock is part of the literal request when the query speaks of time ("now", "tonight",
  // "early", "in ten minutes", "o'clock") or asks when.
  if (hasCue(tokens, "fact_time") || has("now") || has("today") || has("tonight") || has("moment") || has("when")) literal.push("time");
  if (wantsPlan) literal.push("plan");
  if (has("many")) literal.push("count");

  return { mentioned, location, scope, secondOrder: second, hidden, asked: askedFields, wantsPlan: wantsPlan && second === null, literal: [...new Set(literal)], appropriateness, literalOnly };
}

/**
 * The one person a query about several is about, when they are not one joined subject ("A and B",
 * "A or B", "both"): the first person (or pronoun) of the question's sentence, else of the query.
 * The others are named to place or describe them ("A keeps glancing at B. What's she after?"),
 * and their private state is not the need. Null when the people are joined.
 */
function topicOf(tokens: readonly Token[], mentions: readonly Mention[]): string | null {
  const JOIN = new Set(["and", "or", "nor", ",", "&", "/", "either", "both", "-", "neither"]);
  const named = mentions.filter((m) => m.by !== "pronoun");
  for (let k = 1; k < named.length; k++) {
    const between = tokens.slice(named[k - 1]!.end, named[k]!.start);
    if (named[k]!.name !== named[k - 1]!.name && between.length > 0 && between.every((t) => JOIN.has(t.text))) return null;
  }
  if (tokens.some((t) => t.text === "both" || t.text === "either" || t.text === "neither" || t.text === "each")) return null;
  const ends = (t: Token) => t.pos === "PUNCT" && [".", "?", "!", ";"].includes(t.text);
  const q = tokens.findLastIndex((t) => t.text === "?");
  const last = q >= 0 ? q : tokens.length;
  let start = last - 1;
  while (start >= 0 && !ends(tokens[start]!)) start--;
  // A possessor names whose the thing is ("the son's request"), not whom the question is about.
  const inQuestion = mentions.filter((m) => m.start > start && m.end <= last);
  return (inQuestion.find((m) => tokens[m.end]?.text !== "'s") ?? inQuestion[0] ?? mentions[0])?.name ?? null;
}

/** A belief cue; a structure that names its believer ("it occurred to X that …") carries them. */
// `aboutSomeone`: the frame's content is someone the query does not resolve ("the front desk" as swamped).
type BeliefCue = Cue & { readonly believer?: Mention | undefined; readonly byShape?: boolean; readonly aboutSomeone?: boolean };

/** A word for a person other than the speaker, whether or not the query lets us resolve who. */
/** A lower-case noun no English dictionary of the tagger's holds: a name the scene does not give ("maggie"). */
const unknownName = (u: Token): boolean => u.pos === "NOUN" && /^[a-z]{3,}$/.test(u.text) && !knownWord(u.text);

const someoneWord = (u: Token): boolean => (hasCue([u], "pronoun") && !hasCue([u], "first_person")) || hasCue([u], "relation") || hasCue([u], "activity") || isPersonNoun(u.text) || u.text === "someone" || u.text === "somebody";

const MODALS = new Set(["will", "would", "can", "could", "may", "might", "shall", "should", "must"]);
// (a tagger may keep the period on the word: "mrs.")
const honorificWord = (t: Token | undefined) => t !== undefined && (t.text === "." || /^(mr|mrs|ms|miss|mx|dr|prof|professor)\.?$/.test(t.text));

/**
 * Whether a mention is the subject of an inverted question with do-support or a modal ("does X
 * …", "would X …"): the word after it is then a bare verb whatever the tagger calls it
 * ("does the director regard …" with "regard" tagged a noun).
 */
function invertedSubject(tokens: readonly Token[], a: Mention): boolean {
  let k = a.start - 1;
  while (k >= 0 && honorificWord(tokens[k])) k--;
  const aux = tokens[k];
  if (aux === undefined || aux.pos !== "AUX" || !(aux.lemma === "do" || MODALS.has(aux.text))) return false;
  const prev = tokens[k - 1];
  return prev === undefined || prev.pos === "PUNCT" || prev.pos === "CCONJ" || /^(what|how|why|where|when|who)$/.test(prev.text);
}

/**
 * The believer and the person their belief is about. A belief verb or adjective takes the person
 * just before it as believer ("Lin Wei reckons", "is Lin Wei aware"); a perspective noun the
 * possessor ("Lin Wei's view"); "according to" / "as far as" the person after it. The target is
 * the next other person after the cue. With a belief cue, two people and no such structure, the
 * first person mentioned is taken as the believer: the safe reading never reads the other's state.
 * A third-person belief cue whose believer or other person is not resolved is still a belief
 * question (`unresolved`): no one's private state is read for it.
 */
function secondOrderOf(tokens: readonly Token[], mentions: readonly Mention[]): { second: QueryAnalysis["secondOrder"]; unresolved: boolean; resident?: { believer: string; at: number } } {
  const none = { second: null, unresolved: false };
  const people = uniqueNames(mentions);
  // (No one resolved: the cues are still read, so a belief held by someone the query does not
  // resolve, about others it does not either, reads no one's private state: "does the caretaker
  // reckon the greenhouse crew are busy".)
  const prepositions = cuesOf(tokens, "belief_preposition");
  const possessives = cuesOf(tokens, "belief_possessive");
  // A mental verb counts where the tagger reads a verb ("clocked", not "the clock") or right after
  // a person or a word for one ("Bo figure …", "her assistant bet …", mistagged); a perspective
  // noun only with its possessor ("X's view").
  // A capital inside a sentence names someone even when the scene does not ("does Bodge reckon …"):
  // a name the analyser cannot resolve must still hold the belief, so that no one's state is read.
  const sentenceStart = (i: number) => i === 0 || [".", "?", "!"].includes(tokens[i - 1]!.text);
  const personLike = (t: Token, i: number) => hasCue([t], "pronoun") || hasCue([t], "relation") || hasCue([t], "activity") || isPersonNoun(t.text) || (t.capital && t.pos !== "PRON" && !hasCue([t], "first_person") && (t.text.length <= 3 || !sentenceStart(i) || t.pos === "PROPN"));
  // A report verb ("say", "tell", "mention") is a belief only with content after it ("told X that
  // …"), not an order or a request ("told X to …").
  // … nor what someone tells the speaker ("A told me she's fine"): that is the speaker's information.
  const toSpeaker = (c: Cue) => firstPerson(tokens[c.end]) || (tokens[c.end]?.text === "to" && firstPerson(tokens[c.end + 1]));
  // A verb with a particle that ends its clause is a phrasal verb of its own ("has she clocked off?"
  // is no "clocked that …").
  const PARTICLES = new Set(["off", "out", "in", "on", "up", "down", "away"]);
  // (A dash or a colon after the particle brings the content: "have his rival figured out - jittery".)
  const phrasal = (c: Cue) => PARTICLES.has(tokens[c.end]?.text ?? "") && (tokens[c.end + 1] === undefined || [".", "?", "!", ","].includes(tokens[c.end + 1]!.text) || tokens[c.end + 1]!.pos === "CCONJ");
  // (… not a noun after a verb's indirect object: "give Marguerite notes on …")
  const verbs = cuesOf(tokens, "belief_verb").filter((c) => !phrasal(c) && !ownInfinitive(tokens, c.end) && !speakerObject(tokens, c.end)).filter((c) => (tokens[c.start]!.pos === "VERB" || mentions.some((m) => m.end === c.start && tokens[m.start - 1]?.pos !== "VERB") || (c.start > 0 && personLike(tokens[c.start - 1]!, c.start - 1) && tokens[c.start - 2]?.pos !== "VERB")) && (!REPORT_VERBS.has(c.term) || (tokens[c.start - 1]?.text !== "to" && !toSpeaker(c) && contentAfter(tokens, mentions, c.end))));
  // "X's view", "X's gut feeling": the possessor, then up to two modifiers, then the noun.
  // "'s" after a pronoun is "is" or "has" ("he's finding"): only a name or a role possesses.
  const ownerBefore = (c: Cue) => [1, 2, 3].some((d) => tokens[c.start - d]?.text === "'s" && mentions.some((m) => m.end === c.start - d && m.by !== "pronoun") && tokens.slice(c.start - d + 1, c.start).every((u) => u.pos === "ADJ" || u.pos === "NOUN"));
  // The possessor holds the view, whatever modifiers stand between ("X's gut feeling").
  const owned: BeliefCue[] = possessives.filter(ownerBefore).map((c) => ({ ...c, believer: mentions.filter((m) => m.end < c.start && tokens[m.end]?.text === "'s").at(-1) }));
  // … or a person word the query does not resolve ("the caretaker's view of B", "the junior's read
  // on whether B …"): someone's view all the same, so the safe reading follows and B's state is not read.
  const unresolvedOwner = (i: number) => [1, 2, 3].some((d) => {
    const p = i - d;
    const owner = tokens[p - 1];
    return tokens[p]?.text === "'s" && owner !== undefined && owner.pos === "NOUN" && !firstPerson(owner) && (isPersonNoun(owner.text) || hasCue([owner], "activity") || hasCue([owner], "relation")) && !mentions.some((m) => m.start <= p - 1 && p - 1 < m.end) && tokens.slice(p + 1, i).every((u) => u.pos === "ADJ" || u.pos === "NOUN");
  });
  // (… about someone in its own sentence: "the caretaker's opinion of the new hives" is no one's view of a person)
  const personSoonAfter = (from: number) => {
    const span = tokens.slice(from, from + 7);
    const stop = span.findIndex((u) => u.pos === "PUNCT" && [".", "?", "!", ";"].includes(u.text));
    return span.slice(0, stop < 0 ? span.length : stop).some((u, d) => mentions.some((m) => m.start === from + d) || (someoneWord(u) && !firstPerson(u)));
  };
  for (const c of possessives) if (!ownerBefore(c) && unresolvedOwner(c.start) && personSoonAfter(c.end)) owned.push({ ...c, byShape: true });
  // "X's take on Y", "X's gut feeling about Y": what X holds about another person.
  tokens.forEach((t, i) => {
    // Right after a possessive "'s" the word is a noun whatever its tag ("X's take on …" with "take" read as a verb).
    const noun = t.pos === "NOUN" || (tokens[i - 1]?.text === "'s" && tokens[i - 1]?.pos === "PART");
    if (!noun || !["about", "on", "of"].includes(tokens[i + 1]?.text ?? "") || owned.some((c) => c.start === i)) return;
    const x = [1, 2, 3].map((d) => i - d).find((p) => tokens[p]?.text === "'s" && mentions.some((m) => m.end === p) && tokens.slice(p + 1, i).every((u) => u.pos === "ADJ" || u.pos === "NOUN" || u.pos === "ADV"));
    // … or a person word the query does not resolve ("X's take on whether the boss …").
    // (a person noun only in a minor sense is no one: "X's state of mind")
    const y = tokens.slice(i + 2, i + 6).some((u, d) => mentions.some((m) => m.start === i + 2 + d) || (someoneWord(u) && (!isPersonNoun(u.text) || isMainlyPersonNoun(u.lemma) || hasCue([u], "pronoun") || hasCue([u], "relation"))));
    if (x !== undefined && y && !hasCue([t], "unspoken_goal")) owned.push({ category: "belief_possessive", term: t.text, start: i, end: i + 1, believer: mentions.find((m) => m.end === x) });
    else if (x === undefined && y && !hasCue([t], "unspoken_goal") && !owned.some((c) => c.start === i) && unresolvedOwner(i)) owned.push({ category: "belief_possessive", term: t.text, start: i, end: i + 1, byShape: true });
  });
  // "clings to the belief that …", "holds the conviction that …": a cognition noun whose content is a clause.
  const held = possessives.filter((c) => tokens[c.start - 1]?.pos === "DET" && tokens[c.end]?.text === "that");
  // "In X's mind": the mind as the place a view is held (elsewhere "on X's mind" is what X pursues).
  tokens.forEach((t, i) => {
    const x = mentions.find((m) => m.end === i - 1);
    if (t.text !== "mind" || tokens[i - 1]?.text !== "'s") return;
    // The possessor's phrase, back as far as "in": a name or role ("in A's mind"), or person words the
    // query does not resolve ("in the minute-taker's mind": someone's view all the same, so the
    // safe reading follows).
    let k = (x?.start ?? i - 1) - 1;
    while (k >= 0 && i - k <= 7 && (tokens[k]!.pos === "DET" || tokens[k]!.pos === "NOUN" || tokens[k]!.pos === "ADJ" || tokens[k]!.text === "-")) k--;
    // … or the mind with a content clause after it, whatever the verb before ("has it crossed A's
    // mind how tired B is", "did it slip A's mind that …"): what A holds.
    const clause = ["that", "how", "whether", "if", "what", "who", "where", "why", "when"].includes(tokens[i + 1]?.text ?? "");
    if (tokens[k]?.text !== "in" && !(clause && x !== undefined)) return;
    owned.push(x !== undefined ? { category: "belief_possessive", term: "mind", start: i, end: i + 1 } : { category: "belief_possessive", term: "mind", start: i, end: i + 1, byShape: true });
  });
  // "How does Y come across to X", "does Y seem busy to X": X's impression of Y.
  const appearance = cuesOf(tokens, "appearance");
  // A pronoun before a noun is a determiner ("up to his elbows"), not the person spoken to.
  const personAt = (i: number) => {
    let j = i;
    while (honorificWord(tokens[j])) j++;
    return mentions.some((m) => m.start === j && !(m.by === "pronoun" && tokens[m.end]?.pos === "NOUN"));
  };
  // … in the same sentence as the appearance word ("When does he come off watch? I need to talk to him" is not).
  const sameSentence = (a: number, b: number) => !tokens.slice(a, b).some((u) => u.pos === "PUNCT" && [".", "?", "!", ";"].includes(u.text));
  const toPerson = appearance.length === 0 ? [] : tokens.flatMap((t, i) => (t.text === "to" && i > appearance[0]!.start && sameSentence(appearance[0]!.start, i) && personAt(i + 1) ? [{ category: "belief_preposition" as const, term: "to", start: i, end: i + 1 }] : []));
  // "a bad idea", "a good moment": an appropriateness phrase, not a belief.
  const judged = cuesOf(tokens, "appropriateness");
  const free = (c: Cue) => !judged.some((j) => c.start < j.end && j.start < c.end);
  // "X has a clue / the faintest notion that …": a cognition noun that X has.
  // (… or has got: "has X got any idea how Y …")
  const had = possessives.filter((c) => tokens[c.start - 1]?.pos === "DET" && (tokens[c.start - 2]?.lemma === "have" || tokens[c.start - 2]?.lemma === "get"));
  // A report in a statement beside the question ("How is Giulia doing? Luca said she seemed off
  // yesterday.") is context the speaker gives, not what they ask.
  const endOf = (i: number) => tokens.slice(i).find((t) => [".", "?", "!"].includes(t.text))?.text;
  const contextReport = (c: Cue) => REPORT_VERBS.has(tokens[c.start]!.lemma) && endOf(c.start) !== "?" && tokens.some((t) => t.text === "?");
  // A belief verb that is a noun after its determiner ("a picture of Bo") reports no one's belief.
  const beliefVerbs = cuesOf(tokens, "belief").filter((c) => !(tokens[c.start]!.pos === "NOUN" && tokens[c.start - 1]?.pos === "DET") && !phrasal(c) && !ownInfinitive(tokens, c.end) && !speakerObject(tokens, c.end));
  const cues: BeliefCue[] = [...prepositions, ...toPerson, ...owned, ...had, ...held, ...beliefVerbs, ...verbs, ...reportVerbs(tokens, mentions), ...viewQuestions(tokens, mentions), ...embeddedQuestions(tokens, mentions), ...experiencers(tokens, mentions), ...heldViews(tokens, mentions), ...smallClauses(tokens, mentions), ...construals(tokens, mentions)].filter(free).filter((c) => !contextReport(c)).sort((a, b) => a.start - b.start);
  if (cues.length === 0) return none;
  const isPreposition = new Set([...prepositions, ...toPerson].map((c) => c.start));
  const isPossessive = new Set(possessives.map((c) => c.start));
  // Between a believer and the cue: auxiliaries, adverbs, "have any" ("X has no idea"), "'s", and
  // an attitude before "to" ("X would be surprised to learn").
  const skippable = (t: Token, i = -1) =>
    t.pos === "AUX" || t.pos === "ADV" || t.pos === "PART" || t.pos === "DET" || t.pos === "ADP" || t.lemma === "have" || t.text === "'s" ||
    // "got" before the held noun's determiner ("has X got any idea …").
    (t.lemma === "get" && tokens[i + 1]?.pos === "DET") || ((t.pos === "ADJ" || (t.pos === "VERB" && t.text.endsWith("ed"))) && tokens[i + 1]?.text === "to") ||
    // a verb of being in a state before its preposition ("X clinging to the …", "X stuck on the …").
    (t.pos === "VERB" && tokens[i + 1]?.pos === "ADP") ||
    // a verb taking an infinitive ("X wants to know", "I only want to know"): the subject is before it.
    (t.pos === "VERB" && tokens[i + 1]?.text === "to") ||
    // the first half of a hyphenated verb and its hyphen ("X half-expects", "X sort-of-believes").
    (t.text === "-" && i >= 1) || (tokens[i + 1]?.text === "-" && t.pos !== "PROPN" && t.pos !== "PUNCT");
  // "I think …", "do you suppose …": the user's (or the assistant's) own belief, not a second-order one.
  const speaker = (c: Cue) => {
    // "as far as I know", "according to you": the preposition's person is the speaker.
    if (isPreposition.has(c.start)) return tokens[c.end] !== undefined && (tokens[c.end]!.text === "you" || hasCue([tokens[c.end]!], "first_person"));
    let i = c.start - 1;
    while (i >= 0 && skippable(tokens[i]!, i)) i--;
    // … or one of the speaker's own people ("my brother says …"): what they report is the speaker's information.
    const own = i >= 1 && (isPersonNoun(tokens[i]!.text) || hasCue([tokens[i]!], "relation")) && ["my", "our"].includes(tokens[i - 1]!.text);
    return i >= 0 && (tokens[i]!.text === "you" || hasCue([tokens[i]!], "first_person") || own);
  };
  const theirs = cues.filter((c) => c.believer !== undefined || !speaker(c));
  if (theirs.length === 0) return none;
  // Someone, not the speaker, holds the belief: a person resolved before the cue, or a word that
  // names a person the query does not let us resolve ("she suspects", "the TA would bet").
  let someoneBelieves = false;
  // A belief frame whose believer is resolved but whose other person is named only indirectly
  // ("is A under the impression the fund goes to …"): its content is someone else's doing, so the
  // believer's private state answers nothing; no one's is read (issue 21).
  let resident: { believer: string; at: number } | undefined;
  // … a belief or cognition frame from the lexicon; not a report, a request or a question put to A
  // ("ask A what …"), nor a participle read as a view noun after a contracted "is" ("she's sorting"), nor a frame
  // with no content after it ("what she's found?").
  // Content after a cue: more than an adverb or a time word before the clause ends ("trying to
  // decide today?" holds no view of anything).
  const contentFollows = (from: number) => {
    let k = from;
    while (tokens[k] !== undefined && (tokens[k]!.pos === "ADV" || hasCue([tokens[k]!], "time_word"))) k++;
    return tokens[k] !== undefined && tokens[k]!.pos !== "PUNCT";
  };
  const frames = new Set([...prepositions, ...owned, ...had, ...held, ...beliefVerbs, ...verbs.filter((c) => !REPORT_VERBS.has(c.term))].filter((c) => (c.category !== "belief_possessive" || !tokens[c.start]!.text.endsWith("ing")) && contentFollows(c.end)).map((c) => c.start));
  // "What is occupying X's thoughts?": X's mind as the object of a what-question's verb is what X is
  // preoccupied with (the question's "what" is the content), not X's view of anyone.
  const preoccupation = (c: BeliefCue): boolean => {
    const owner = mentions.find((m) => m.end === c.start - 1 && tokens[m.end]?.text === "'s");
    if (owner === undefined) return false;
    let v = owner.start - 1;
    while (v >= 0 && honorificWord(tokens[v])) v--;
    const clause = tokens.slice(0, Math.max(v, 0));
    const opens = clause.findLastIndex((t) => t.pos === "PUNCT" && [".", "?", "!", ";"].includes(t.text)) + 1;
    return tokens[v]?.pos === "VERB" && clause.slice(opens).some((t) => t.text === "what" || t.text === "who");
  };
  for (const c of theirs) {
    if (isPossessive.has(c.start) && preoccupation(c)) continue;
    let k = c.start - 1;
    while (k >= 0 && skippable(tokens[k]!, k)) k--;
    if (c.byShape === true || (k >= 0 && (personLike(tokens[k]!, k) || mentions.some((m) => m.end === k + 1)))) someoneBelieves = true;
    let believer: Mention | undefined = c.believer;
    if (believer !== undefined) someoneBelieves = true;
    else if (isPreposition.has(c.start)) believer = mentions.find((m) => m.start >= c.end && m.start <= c.end + 3 && tokens.slice(c.end, m.start).every(honorificWord));
    else {
      const before = mentions.filter((m) => m.end <= c.start).at(-1);
      const between = before === undefined ? [] : tokens.slice(before.end, c.start);
      if (before !== undefined && between.length <= 4 && between.every((t, k) => skippable(t, before.end + k))) believer = before;
      // A possessive view noun needs its possessor ("X's view"); "A goes on the idea that …" (a
      // cognition noun with its content clause) is held by the subject before it.
      if (isPossessive.has(c.start) && !held.includes(c) && (before === undefined || tokens[before.end]?.text !== "'s")) believer = undefined;
    }
    if (believer === undefined) continue;
    someoneBelieves = true;
    const name = believer.name;
    const target = mentions.find((m) => m.start >= c.end && m.name !== name) ?? mentions.find((m) => m.name !== name);
    if (target === undefined) {
      if (frames.has(c.start) || c.aboutSomeone === true) resident ??= { believer: name, at: c.end };
      continue;
    }
    return { second: { believer: name, target: target.name, fields: beliefFields(tokens.slice(c.end)) }, unresolved: false };
  }
  if (people.length >= 2) return { second: { believer: people[0]!, target: people[1]!, fields: beliefFields(tokens) }, unresolved: false };
  // Someone's belief about someone the query does not let us resolve: still a belief question,
  // when someone other than the speaker stands after the cue ("… reckon she's upset", "… that
  // somebody took …"); "he knows something we don't" is about no one.
  // A capital names someone; "I" does not; nor does a word of the dictionary ("maggie" is a name).
  const someoneAfter = theirs.some((c) => tokens.slice(c.end).some((t) => (hasCue([t], "pronoun") && !hasCue([t], "first_person")) || isPersonNoun(t.text) || (t.capital && !hasCue([t], "first_person")) || t.text === "someone" || t.text === "somebody" || unknownName(t)));
  return { second: null, unresolved: (someoneBelieves && someoneAfter) || resident !== undefined, ...(resident === undefined ? {} : { resident }) };
}

/**
 * "How does X see Y?", "What does X make of Y's …?", "What would X say about Y?": a how- or
 * what-question whose subject X does something to or about another person Y asks X's view of Y,
 * whatever the verb (a generic or a wanting verb excepted: "what does X want from Y" is X's aim).
 */
function viewQuestions(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  const q = tokens.findIndex((t) => t.text === "how" || t.text === "what");
  // "How does Y come across to X": appearance, read the other way round (secondOrderOf).
  if (hasCue(tokens, "appearance")) return out;
  // "What odds would X give Y …", "what mark would X put on Y", "how much credit does X give Y": a
  // fronted measure or noun phrase before the auxiliary is X's judgement of Y all the same (not a
  // time: "what time does X meet Y" asks when).
  if (q < 0) return out;
  let f = q + 1;
  while (f - q <= 3 && tokens[f] !== undefined && (tokens[f]!.pos === "NOUN" || tokens[f]!.pos === "ADJ" || (tokens[f]!.pos === "ADV" && tokens[q]!.text === "how")) && !hasCue([tokens[f]!], "time_word") && tokens[f]!.lemma !== "time") f++;
  if (q < 0 || tokens[f]?.pos !== "AUX" || tokens[f]?.lemma === "be") return out;
  // X may be a pronoun for a person named before ("Lin Wei is watching him. How does she read him?").
  const x = mentions.find((m) => m.start === f + 1);
  const verb = x === undefined ? undefined : tokens[x.end];
  // After "how does X", the next word is the verb whatever its tag ("rate" read as a noun).
  if (x === undefined || verb === undefined || (verb.pos !== "VERB" && verb.pos !== "NOUN") || ["do", "have", "get", "go", "be"].includes(verb.lemma) || hasCue([verb], "unspoken_goal")) return out;
  let j = x.end + 1;
  // … past a possessive of X's own ("give his pupil …": the pupil is the other person).
  const ownPossessive = (k: number) => tokens[k]?.pos === "PRON" && isNounAt(tokens, k + 1) && mentions.some((m) => m.start === k && m.name === x.name);
  while (tokens[j]?.pos === "ADP" || tokens[j]?.pos === "DET" || tokens[j]?.pos === "ADJ" || (tokens[j]?.pos === "PRON" && !mentions.some((m) => m.start === j)) || ownPossessive(j)) j++;
  // The other person, or a word for someone the query does not resolve ("the young man"): the safe reading either way.
  const other = mentions.some((m) => m.start === j && m.name !== x.name) || (tokens[j] !== undefined && (isPersonNoun(tokens[j]!.text) || hasCue([tokens[j]!], "activity")));
  if (other) out.push({ category: "belief", term: verb.text, start: x.end, end: x.end + 1, believer: x });
  return out;
}

const isNounAt = (tokens: readonly Token[], k: number) => tokens[k]?.pos === "NOUN" || tokens[k]?.pos === "ADJ";

/**
 * "Is X in the dark about how tired Y is?", "Does X know where Y went?": a person in subject
 * position, then an embedded question or that-clause about another person, is X's knowledge of
 * Y. A state said of X on the way ("is X upset that Y …", "is X free to hear what Y …") makes it
 * a question about X instead.
 */
function embeddedQuestions(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  for (const a of mentions) {
    if (a.by === "pronoun") continue;
    let k = a.start - 1;
    while (k >= 0 && honorificWord(tokens[k])) k--;
    const before = tokens[k];
    const subject = before !== undefined && before.pos === "AUX" && (k === 0 || tokens[k - 1]!.pos === "PUNCT");
    if (!subject) continue;
    // Up to the end of the clause: an idiom may stand between ("has X got hold of the wrong idea about what Y …").
    for (let c = a.end; c < Math.min(tokens.length, a.end + 12); c++) {
      const t = tokens[c]!;
      if (t.pos === "PUNCT" || mentions.some((m) => m.start === c)) break;
      if (!COMPLEMENTISERS.has(t.text)) continue;
      const between = tokens.slice(a.end, c);
      const said = between.filter((u) => u.pos !== "NOUN");
      if (hasCue(said, "emotional_state") || hasCue(said, "availability") || hasCue(between, "appropriateness")) break;
      const b = mentions.find((m) => m.start > c && m.start <= c + 6 && m.name !== a.name);
      // … or someone the query does not resolve ("what her boss is doing"): a belief all the same.
      // Not "if I …": a clause about the speaker's own act is a question about X's welcome.
      if (tokens[c + 1] !== undefined && hasCue([tokens[c + 1]!], "first_person")) break;
      const someone = tokens.slice(c + 1, c + 5).some((u, d) => !mentions.some((m) => m.start === c + 1 + d && m.name === a.name) && someoneWord(u));
      if (b !== undefined || someone) out.push({ category: "belief", term: t.text, start: c, end: c + 1, believer: a });
      break;
    }
  }
  return out;
}

/** A noun phrase for a person the query does not resolve, as a clause's subject ("the young porter will …"). */
function personPhraseAt(tokens: readonly Token[], start: number): boolean {
  let n = start;
  if (tokens[n]?.pos === "DET") n++;
  while (tokens[n]?.pos === "ADJ") n++;
  return n > start && tokens[n] !== undefined && (isPersonNoun(tokens[n]!.text) || hasCue([tokens[n]!], "activity")) && (tokens[n + 1]?.pos === "AUX" || tokens[n + 1]?.text === "'s");
}

/**
 * Verbs that report a person's view of another by their syntax alone, whatever the verb: "A <verb>
 * (that) B is/has/'s …", a person as subject, then a clause whose subject is another person, or
 * "A <verb> … that B is …" ("A has got it into their head that B is …"). This is the shape of a
 * belief report, so an unknown mental verb or idiom still gets the safe reading instead of a read
 * of B's private state. So does "A <verb> B (down) as …" ("sees B as", "has B down as").
 */
function reportVerbs(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  // `report`: right after a verb of saying, an inflected verb also makes B's clause ("would A say the
  // client wants …"); after "that" it does not ("upset that B left" is A's feeling, not a report).
  const clauseAt = (j: number, a: Mention, report = false) => {
    const b = mentions.find((m) => m.start === j && m.name !== a.name);
    const after = b === undefined ? undefined : tokens[b.end];
    const finite = report && after !== undefined && after.pos === "VERB" && after.text !== after.lemma && !after.text.endsWith("ing") && hasCue([tokens[j - 1]!], "belief_verb");
    return b !== undefined && after !== undefined && (after.pos === "AUX" || after.text === "'s" || finite);
  };
  for (const a of mentions) {
    if (a.by === "pronoun") continue;
    let i = a.end;
    // "have" as a main verb ("has B down as") is tagged an auxiliary.
    const main = (t: Token) => t.pos === "VERB" || (t.lemma === "have" && mentions.some((m) => m.start === i + 1)) || (i === a.end && invertedSubject(tokens, a) && (t.pos === "NOUN" || t.pos === "ADJ"));
    while (tokens[i] !== undefined && !main(tokens[i]!) && (tokens[i]!.pos === "ADV" || tokens[i]!.pos === "AUX" || tokens[i]!.pos === "PART")) i++;
    const verb = tokens[i];
    if (verb === undefined || !main(verb)) continue;
    const that = tokens.slice(i + 1, i + 8).findIndex((t) => t.text === "that");
    // "A sees B as …", "A has B down as …": A's view of what B is.
    const b = mentions.find((m) => m.start === i + 1 && m.name !== a.name);
    // "has B down as", "has B pegged / filed away as": a participle or "down" may stand before "as".
    // … "has got B marked down as", "had B written off as", "has B figured for": up to two words of a
    // participle and its particle stand between B and "as" / "for", whatever the participle.
    let as = b === undefined ? -1 : b.end;
    // (a description's span may run on over "down as …": "has the apprentice down as hungover")
    const inner = b === undefined || b.by !== "description" ? -1 : tokens.slice(b.start, b.end).findIndex((t) => t.text === "as");
    if (inner > 0) as = b!.start + inner;
    while (as >= 0 && as < b!.end + 2 && tokens[as] !== undefined && tokens[as]!.text !== "as" && tokens[as]!.text !== "for" && (tokens[as]!.pos === "VERB" || tokens[as]!.pos === "ADV" || tokens[as]!.text === "down" || ((tokens[as]!.pos === "ADP" || tokens[as]!.pos === "PART") && tokens[as - 1]!.pos === "VERB"))) as++;
    // "A takes B for someone / a fool / a kindly old soul": for a person (the noun phrase's head), not for a walk.
    let head = as + 1;
    while (tokens[head] !== undefined && head - as <= 4 && (tokens[head]!.pos === "DET" || tokens[head]!.pos === "ADJ" || tokens[head]!.pos === "ADV")) head++;
    const forWhom = as >= 0 && tokens[as]?.text === "for" && [tokens[as + 1], tokens[head], tokens[head + 1]].some((u) => u !== undefined && (u.text === "someone" || u.text === "somebody" || isPersonNoun(u.text)));
    // "A takes it for granted that the young porter is …": a that-clause whose subject is a person
    // the query does not resolve is a report all the same.
    const unresolvedClause = that >= 0 && personPhraseAt(tokens, i + 2 + that);
    // "A has B figured out", "A has got B sussed": have / get, B, then a participle: A's view of B.
    const sized = b !== undefined && (verb.lemma === "have" || verb.lemma === "get") && tokens[b.end]?.pos === "VERB" && /(ed|en)$/.test(tokens[b.end]!.text);
    if (clauseAt(i + 1, a, true) || (that >= 0 && clauseAt(i + 2 + that, a)) || (as >= 0 && tokens[as]?.text === "as") || forWhom || unresolvedClause || sized) out.push({ category: "belief", term: verb.text, start: i, end: i + 1, believer: a });
  }
  // "A has the apprentice down as …" with the other person unresolved: A's view all the same, so the
  // safe reading follows (no one's private state is read).
  tokens.forEach((verb, v) => {
    if (verb.lemma !== "have" && verb.lemma !== "get") return;
    let n = v + 1;
    if (tokens[n]?.pos !== "DET") return;
    n++;
    while (tokens[n]?.pos === "ADJ") n++;
    if (tokens[n] === undefined || !isPersonNoun(tokens[n]!.text) || mentions.some((m) => m.start <= n && n < m.end)) return;
    const as = tokens[n + 1]?.text === "down" ? n + 2 : n + 1;
    if (tokens[as]?.text !== "as") return;
    const believer = mentions.filter((m) => m.end <= v && v - m.end <= 1 && m.by !== "pronoun").at(-1);
    if (believer !== undefined) out.push({ category: "belief", term: verb.text, start: v, end: v + 1, believer });
  });
  // The same report whose reporter the query does not let us resolve ("has the night porter
  // realised that B is …"): a word for a person before the verb; the safe reading follows.
  tokens.forEach((verb, v) => {
    if (verb.pos !== "VERB" || tokens[v + 1]?.text !== "that") return;
    // The clause's subject: a person named, or a noun phrase for one ("the young conductor will …").
    if (!clauseAt(v + 2, { name: "", start: -1, end: -1, by: "role" }) && !personPhraseAt(tokens, v + 2)) return;
    let k = v - 1;
    while (k >= 0 && (tokens[k]!.pos === "AUX" || tokens[k]!.pos === "ADV" || tokens[k]!.pos === "PRON" || tokens[k]!.pos === "ADP" || (tokens[k]!.pos === "VERB" && k === v - 3))) k--;
    const subject = tokens[k];
    const reporter = mentions.some((m) => m.end === k + 1 && m.by !== "pronoun") || (subject !== undefined && (isPersonNoun(subject.text) || hasCue([subject], "activity")));
    if (subject !== undefined && reporter && !hasCue([subject], "first_person") && subject.text !== "you") out.push({ category: "belief", term: verb.text, start: v, end: v + 1 });
  });
  return out;
}

/** The preposition of an evidential frame: "going by / judging by / based on / from what A …". */
const EVIDENTIAL = new Set(["by", "on", "from", "off"]);
const COMPLEMENTISERS = new Set(["how", "whether", "what", "where", "why", "if", "that"]);
/** Prepositions that introduce what a mental state or a report is about ("in the loop about …", "the word on …"). */
const ABOUT = new Set(["about", "on", "of", "regarding", "over", "concerning"]);
const firstPerson = (t: Token | undefined) => t !== undefined && hasCue([t], "first_person");

/**
 * "X hopes to get …", "does X expect to win …": a mental verb whose complement is a to-infinitive of
 * the subject's own act (no object between the verb and "to") is what the subject means to do, a
 * goal of theirs, not a view of anyone ("does X expect Y to be free", with an object, stays a belief).
 */
const ownInfinitive = (tokens: readonly Token[], end: number): boolean => tokens[end]?.text === "to" && (tokens[end + 1]?.pos === "VERB" || tokens[end + 1]?.pos === "AUX");

/** "Can X hear me?", "does X know us?": a mental or perceptual verb whose only object is the speaker is no view of another person. */
const speakerObject = (tokens: readonly Token[], end: number): boolean => ["me", "us"].includes(tokens[end]?.text ?? "") && (tokens[end + 1] === undefined || tokens[end + 1]!.pos === "PUNCT" || tokens[end + 1]!.pos === "CCONJ");

/** A noun phrase for a person from `j` (a mention, or a determiner, adjectives and a person word): the index after it, or -1. */
function personPhraseEnd(tokens: readonly Token[], mentions: readonly Mention[], j: number): number {
  const m = mentions.find((x) => x.start === j);
  if (m !== undefined) return m.end;
  let n = j;
  if (tokens[n]?.pos === "DET" || (tokens[n] !== undefined && hasCue([tokens[n]!], "pronoun") && tokens[n]!.pos === "PRON")) n++;
  while (tokens[n]?.pos === "ADJ") n++;
  if (tokens[n] !== undefined && !firstPerson(tokens[n]) && someoneWord(tokens[n]!)) return n + 1;
  // … or a bare name the scene does not resolve: a proper noun, or a word no English dictionary of
  // the tagger's knows ("would yuki say maggie's nervous").
  const bare = tokens[n];
  return n === j && bare !== undefined && (bare.pos === "PROPN" || unknownName(bare)) ? n + 1 : -1;
}

/** A clause about someone starts at `j`: a person phrase, then a verb of being or having ("B is", "B's", "B being"). */
function clauseAbout(tokens: readonly Token[], mentions: readonly Mention[], j: number): boolean {
  let end = personPhraseEnd(tokens, mentions, j);
  // … a place phrase may follow the person ("said the student at the window is free").
  if (end > j && tokens[end]?.pos === "ADP") {
    let k = end + 1;
    if (tokens[k]?.pos === "DET") k++;
    while (tokens[k]?.pos === "ADJ") k++;
    const nouns = k;
    while (tokens[k] !== undefined && (tokens[k]!.pos === "NOUN" || tokens[k]!.pos === "PROPN") && k - nouns < 3) k++;
    if (k > nouns) end = k;
  }
  const next = tokens[end];
  return end > j && next !== undefined && (next.pos === "AUX" || next.text === "being" || next.text === "having" || (next.text === "'s" && tokens[end + 1]?.pos !== "NOUN"));
}

/**
 * Content after a report verb: an optional hearer ("told X", "mentioned to X"), then a that-clause
 * or an embedded question not about the speaker, "about …", or a clause about someone ("said B is").
 */
function contentAfter(tokens: readonly Token[], mentions: readonly Mention[], at: number): boolean {
  let j = at;
  if (tokens[j]?.text === "to") j++;
  const hearer = personPhraseEnd(tokens, mentions, j);
  if (hearer > j && !clauseAbout(tokens, mentions, j)) j = hearer;
  else if (tokens[j]?.pos === "PRON" && !COMPLEMENTISERS.has(tokens[j]!.text)) j++;
  const t = tokens[j];
  if (t === undefined || t.text === "to") return false;
  // … about someone ("told her about the delay" reports no one's state).
  // (within its sentence: "stuck in that queue for ages. Is she …" holds no content about her)
  const someoneIn = (from: number) => {
    const span = tokens.slice(from, from + 6);
    const stop = span.findIndex((u) => u.pos === "PUNCT" && [".", "?", "!", ";"].includes(u.text));
    return span.slice(0, stop < 0 ? span.length : stop).some((u, d) => mentions.some((m) => m.start === from + d) || (someoneWord(u) && !firstPerson(u)));
  };
  // "that" as a determiner ("stuck in that queue") opens no clause.
  if ((COMPLEMENTISERS.has(t.text) && !(t.text === "that" && t.pos === "DET")) || ABOUT.has(t.text)) return !firstPerson(tokens[j + 1]) && someoneIn(j + 1);
  return clauseAbout(tokens, mentions, j);
}

/**
 * The safe reading when no belief structure was read (issue 21: an ambiguous perspective never
 * reads a target's private state). Two people in one sentence, not joined as one subject ("A and
 * B"), with the second where the content of a mind or a report stands: after a complementiser or
 * "about / on / of" ("A in the loop about B …", "the word from A on B's …"), or as a small clause
 * after A's verb or adjective ("A finds B moody", "A afraid B is …"); or the first as a
 * sentence-opening perspective ("To A('s …), …"). Not when the speaker is the subject of the
 * clause that names A ("should I tell A …"): that is the speaker's own act. A person word the
 * query does not resolve in a clause after a complementiser gives a believer with no target.
 */
function unclearPair(tokens: readonly Token[], mentions: readonly Mention[]): { believer: Mention; target: Mention | null; at: number; aboutBeliever: boolean } | null {
  const ends = (t: Token) => t.pos === "PUNCT" && [".", "?", "!", ";"].includes(t.text);
  const JOIN = new Set(["and", "or", "nor", ",", "&", "/", "either", "both", "-"]);
  let s = 0;
  for (let e = 0; e <= tokens.length; e++) {
    if (e < tokens.length && !ends(tokens[e]!)) continue;
    const inside = mentions.filter((m) => m.start >= s && m.end <= e);
    const speakerActs = (a: Mention, b: number) =>
      tokens.slice(s, b).some((t, k) => {
        const f = s + k;
        // "is it rude to ask A whether B …": an infinitive with no subject of its own, in a
        // judgement of the speaker's act, is the speaker's act.
        // (… whatever the judgement's word: "would it be okay to chat to A about B's …")
        const judgement = hasCue(tokens.slice(s, f), "appropriateness") || (tokens.slice(s, f).some((u) => u.text === "it") && ["ADJ", "ADV", "NOUN", "INTJ"].includes(tokens[f - 1]?.pos ?? ""));
        const infinitive = t.text === "to" && tokens[f + 1]?.pos === "VERB" && f < a.start && judgement;
        if (!infinitive && (!firstPerson(t) || !["i", "we"].includes(t.text))) return false;
        // The speaker is the subject of A's clause: no complementiser between them.
        return f > a.start || !tokens.slice(f + 1, a.start).some((u) => COMPLEMENTISERS.has(u.text));
      });
    // "A keeps asking (me) if / how …": a question A puts wants to know; it holds no view ("ask" is
    // no belief verb in the lexicon either).
    const asks = (a: Mention, j: number) => {
      const verb = tokens.slice(a.end, j).findLast((u) => u.pos === "VERB");
      return verb !== undefined && ["ask", "inquire", "enquire", "query", "wonder"].includes(verb.lemma);
    };
    // "What is A hoping to get out of B?": a verb of A's with a to-infinitive of A's own act before
    // B makes B the object of what A means to do (A's goal), not the content of A's mind.
    const intends = (a: Mention, b: number) => tokens.slice(a.end, b).some((u, d) => u.pos === "VERB" && ownInfinitive(tokens, a.end + d + 1) && !mentions.some((m) => m.start >= a.end && m.start < a.end + d));
    // "Why has A asked where B is?": a why-question on A's own act asks A's reason, not A's view of B.
    const reasonOf = (a: Mention) => tokens[s]?.text === "why" && inside[0] === a;
    // The opening frame ends at its comma, or (a tokenizer that drops commas) where the question
    // starts: an auxiliary or a wh-word.
    const frameEnds = (x: number) => tokens[x]?.text === "," || (tokens[x - 1]?.pos !== "PUNCT" && (tokens[x]?.pos === "AUX" || /^(how|what|who|why|where|when)$/.test(tokens[x]?.text ?? "")));
    const perspective = (a: Mention) => {
      let k = a.start - 1;
      while (k >= s && (tokens[k]!.pos === "DET" || honorificWord(tokens[k]))) k--;
      // "As A sees it, …", "the way A tells it, …", "as A remembers, …": a clause of A's seeing,
      // knowing or telling opening the sentence frames what follows as A's view (not "as A left").
      const clauseOpener = k === s && tokens[k]!.text === "as" || (k === s + 1 && tokens[s]!.text === "the" && tokens[k]!.text === "way");
      if (clauseOpener) {
        let v = a.end;
        while (tokens[v]?.pos === "AUX" || tokens[v]?.pos === "ADV" || tokens[v]?.pos === "PART") v++;
        const verb = tokens[v];
        if (verb === undefined || (verb.pos !== "VERB" && !hasCue([verb], "belief_verb"))) return false;
        const object = ["it", "things", "matters", "this", "that", "them"].includes(tokens[v + 1]?.text ?? "");
        return frameEnds(object ? v + 2 : v + 1) && (object || hasCue([verb], "belief_verb"));
      }
      // "Going by what A has seen, …", "judging by / based on / from what A knows, …": an evidential
      // frame, A's seeing, knowing or telling as the ground of what follows.
      if (tokens[k]?.text === "what" && k > s && k - s <= 3 && EVIDENTIAL.has(tokens[k - 1]!.text) && tokens.slice(s, k - 1).every((u) => u.pos === "VERB" || u.pos === "PART" || u.text === "to")) {
        let v = a.end;
        while (tokens[v]?.pos === "AUX" || tokens[v]?.pos === "ADV" || tokens[v]?.text === "'s") v++;
        const verb = tokens[v];
        if (verb === undefined || (verb.pos !== "VERB" && !hasCue([verb], "belief_verb"))) return false;
        const object = ["it", "me", "us", "them", "so"].includes(tokens[v + 1]?.text ?? "");
        return frameEnds(object ? v + 2 : v + 1);
      }
      if (k !== s || (tokens[k]!.pos !== "ADP" && tokens[k]!.text !== "to") || /^(how|what|who|why|where|when)$/.test(tokens[k]!.text)) return false;
      let after = a.end;
      if (tokens[after]?.text === "'s") {
        after++;
        // … the possessed noun phrase, with its of-phrase ("to A's way of thinking").
        const from = after;
        while (after - from < 5 && (tokens[after]?.pos === "ADJ" || tokens[after]?.pos === "NOUN" || (after > from && (tokens[after]?.text === "of" || tokens[after]?.text.endsWith("ing") === true)))) after++;
      }
      return frameEnds(after);
    };
    // A state said of A before the clause ("is A upset that B …", "A too busy to see whether B …"):
    // the question is A's state, and B's is not read.
    const stateOf = (a: Mention, b: number) => {
      const said = tokens.slice(a.end, b).filter((u) => u.pos !== "NOUN");
      return hasCue(said, "emotional_state") || hasCue(said, "availability");
    };
    // Where B stands: the word before B's phrase (past "that"), and what follows it.
    const contentAt = (a: Mention, bStart: number, bEnd: number, resolved: boolean) => {
      let p = bStart - 1;
      // "that" as a complementiser, not a determiner ("that porter").
      const complementiser = (t: Token | undefined) => t !== undefined && COMPLEMENTISERS.has(t.text) && t.pos !== "DET";
      if (tokens[p]?.text === "that" && complementiser(tokens[p])) return true;
      const prev = tokens[p];
      if (prev === undefined || p < a.end) return false;
      const next = tokens[bEnd];
      const clause = next !== undefined && (next.pos === "AUX" || next.text === "being" || next.text === "having" || (next.text === "'s" && tokens[bEnd + 1]?.pos !== "NOUN"));
      if (complementiser(prev)) return clause || resolved;
      // A cognition noun's content clause ("gets the sense B is …", "has a feeling B is …").
      if (clause && hasCue([prev], "belief_possessive")) return true;
      if (!resolved) return false;
      if (ABOUT.has(prev.text)) return true;
      // A state said of B ("moody", "grumpy", tagged either way), or "as …", "to be …".
      // … or a noun closing the clause ("finds B moody today", with "moody" tagged a noun).
      const closing = (u: Token | undefined) => u === undefined || u.pos === "PUNCT" || u.pos === "ADV" || hasCue([u], "time_word") || u.text === "today" || u.text === "now";
      // A participle there is what B is seen doing ("watching B sweeping"), not a state.
      const state = next !== undefined && (hasCue([next], "emotional_state") || hasCue([next], "availability") || (!next.text.endsWith("ing") && (next.pos === "ADJ" || (next.pos === "NOUN" && closing(tokens[bEnd + 1])))));
      const small = clause || state || next?.text === "as" || (next?.text === "to" && ["be", "have"].includes(tokens[bEnd + 1]?.lemma ?? ""));
      // After an inverted subject the next word is its verb whatever its tag ("would A call B …").
      const verb = prev.pos === "VERB" || prev.pos === "ADJ" || (p === a.end && invertedSubject(tokens, a));
      return verb && small;
    };
    // "B is exhausted. Does A get that?": A's mental or report verb whose object is an anaphor for
    // what an earlier sentence said of another person.
    for (const a of inside) {
      if (a.by === "pronoun") continue;
      let v = a.end;
      while (tokens[v] !== undefined && (tokens[v]!.pos === "ADV" || tokens[v]!.pos === "AUX" || tokens[v]!.pos === "PART")) v++;
      const anaphor = tokens[v]?.pos === "VERB" && ["that", "this", "it", "so"].includes(tokens[v + 1]?.text ?? "") && (tokens[v + 2] === undefined || tokens[v + 2]!.pos === "PUNCT");
      // … the earlier person as a clause's subject ("B is …", "B's …" not a possessive).
      const subjectOf = (m: Mention) => ["AUX", "VERB"].includes(tokens[m.end]?.pos ?? "") || (tokens[m.end]?.text === "'s" && tokens[m.end + 1]?.pos !== "NOUN");
      const said = mentions.find((m) => m.end <= s && m.name !== a.name && m.by !== "pronoun" && subjectOf(m));
      if (anaphor && said !== undefined && !speakerActs(a, v)) return { believer: a, target: said, at: said.start, aboutBeliever: false };
    }
    // "If A went after B, where would she look first?": a hypothetical act of A's aimed at B, then a
    // question on what A would do: A acts on A's belief about B, not on B's state.
    const hypothetical = inside.find((a) => {
      let k = a.start - 1;
      while (k >= s && (tokens[k]!.pos === "DET" || honorificWord(tokens[k]))) k--;
      return k === s && tokens[k]!.text.toLowerCase() === "if" && a.by !== "pronoun";
    });
    if (hypothetical !== undefined) {
      const a = hypothetical;
      // The wh-word, with the noun phrase it heads ("which spot"), then a modal, then its subject.
      const MODAL = new Set(["would", "might", "could", "will", "'d"]);
      let m = -1;
      const q = tokens.findIndex((t, i) => {
        if (i <= a.end || i >= e || !/^(how|what|who|why|where|when|which)$/.test(t.text)) return false;
        let j = i + 1;
        while (j - i <= 2 && (tokens[j]?.pos === "NOUN" || tokens[j]?.pos === "ADJ" || tokens[j]?.pos === "ADV")) j++;
        if (!MODAL.has(tokens[j]?.text ?? "")) return false;
        m = j;
        return true;
      });
      const b = inside.find((x) => x.start > a.end && x.name !== a.name && x.by !== "pronoun" && x.end <= q);
      // … whose subject is A, by name or by a third-person pronoun (read as the if-clause's subject
      // continued: the fail-safe reading, since a pronoun's resolution here is only the nearest name).
      const said = q < 0 ? undefined : mentions.find((x) => x.start === m + 1);
      const pronoun = q > 0 && tokens[m + 1] !== undefined && hasCue([tokens[m + 1]!], "pronoun") && !firstPerson(tokens[m + 1]) && tokens[m + 1]!.text !== "you";
      const subject = pronoun ? a : said;
      const verbBetween = b !== undefined && tokens.slice(a.end, b.start).some((t) => t.pos === "VERB");
      if (q > 0 && b !== undefined && verbBetween && subject?.name === a.name && !speakerActs(a, b.start)) return { believer: a, target: b, at: b.start, aboutBeliever: false };
    }
    for (const a of inside) {
      const others = inside.filter((b) => b.start >= a.end && b.name !== a.name && b.by !== "pronoun");
      for (const b of others) {
        const between = tokens.slice(a.end, b.start);
        if (between.length > 0 && between.every((t) => JOIN.has(t.text))) continue;
        if (speakerActs(a, b.start) || reasonOf(a) || asks(a, b.start) || intends(a, b.start)) continue;
        let start = b.start;
        while (start > a.end && (tokens[start - 1]!.pos === "DET" || honorificWord(tokens[start - 1]))) start--;
        if (perspective(a) || contentAt(a, start, b.end, true)) return { believer: a, target: b, at: b.start, aboutBeliever: stateOf(a, start) };
      }
      if (a.by === "pronoun" || others.length > 0) continue;
      // A perspective whose other person the query does not resolve ("To A's mind, is the new lad
      // coping?"): A's view all the same, with no target, so no one's private state is read.
      if (perspective(a) && tokens.slice(a.end, e).some((u, d) => !mentions.some((m) => m.start <= a.end + d && a.end + d < m.end) && !firstPerson(u) && u.text !== "you" && someoneWord(u))) return { believer: a, target: null, at: a.end, aboutBeliever: false };
      // Someone the query does not resolve, as the subject of a clause after a complementiser.
      for (let j = a.end + 1; j < e; j++) {
        if (mentions.some((m) => m.start <= j && j < m.end) || !COMPLEMENTISERS.has(tokens[j - 1]!.text) || tokens[j - 1]!.pos === "DET") continue;
        const end = personPhraseEnd(tokens, mentions, j);
        if (end > j && !hasCue([tokens[j]!], "pronoun") && !speakerActs(a, j) && !asks(a, j) && contentAt(a, j, end, false)) return { believer: a, target: null, at: j, aboutBeliever: stateOf(a, j) };
      }
    }
    s = e + 1;
  }
  return null;
}

/** Another person within a few tokens from `from`: a mention other than `a`, or a person word not resolved to `a`. */
function otherPersonNear(tokens: readonly Token[], mentions: readonly Mention[], a: Mention, from: number, span = 6): boolean {
  for (let j = from; j < Math.min(tokens.length, from + span); j++) {
    if (tokens[j]!.pos === "PUNCT") return false;
    const m = mentions.find((x) => x.start === j);
    if (m !== undefined) {
      if (m.name !== a.name) return true;
      continue;
    }
    if (someoneWord(tokens[j]!)) return true;
  }
  return false;
}

/**
 * "Has it occurred to X that Y …", "has it dawned on X what Y …", "has the penny dropped for X
 * about what Y …": a person after an experiencer preposition (to, on, upon, for), right before a
 * that-clause or an embedded question about another person, is the one whose mind the clause is
 * in, whatever the verb or idiom. The clause before the preposition must be a finite one that the
 * speaker is not the subject of ("should I talk to X about what Y …", "is it okay to go to X …"
 * are the speaker's acts) and in which no other person is named.
 */
function experiencers(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  for (const x of mentions) {
    if (x.by === "pronoun") continue;
    let p = x.start - 1;
    while (p >= 0 && honorificWord(tokens[p])) p--;
    if (!["to", "on", "upon", "for"].includes(tokens[p]?.text ?? "")) continue;
    // The verb the preposition follows: a finite verb or participle, not an infinitive ("to talk to X").
    const verb = tokens[p - 1];
    if (verb === undefined || verb.pos !== "VERB" || tokens[p - 2]?.text === "to") continue;
    let s = p - 1;
    while (s > 0 && tokens[s - 1]!.pos !== "PUNCT") s--;
    const clause = tokens.slice(s, p);
    if (clause.some((u) => u.text === "you" || u.text === "to" || hasCue([u], "first_person")) || mentions.some((m) => m.start >= s && m.end <= p)) continue;
    let c = x.end;
    if (tokens[c]?.text === "about") c++;
    if (!COMPLEMENTISERS.has(tokens[c]?.text ?? "") || !otherPersonNear(tokens, mentions, x, c + 1)) continue;
    out.push({ category: "belief", term: tokens[c]!.text, start: c, end: c + 1, believer: x });
  }
  return out;
}

/**
 * "What picture does X have of where Y is?", "Does X have a clear idea of how Y feels?", "X has a
 * theory about Y": a representation X has (or has got, holds, forms) of another person, or of a
 * clause about one, is X's view of them, whatever the noun. The noun is X's object: after the verb
 * (with its determiner and modifiers) or fronted by "what" / "which".
 */
function heldViews(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  const HOLD = new Set(["have", "get", "hold", "form"]);
  for (const a of mentions) {
    if (a.by === "pronoun") continue;
    let i = a.end;
    while (tokens[i] !== undefined && (tokens[i]!.pos === "ADV" || tokens[i]!.pos === "PART" || (tokens[i]!.pos === "AUX" && !HOLD.has(tokens[i]!.lemma)))) i++;
    if (!HOLD.has(tokens[i]?.lemma ?? "")) continue;
    // "got" after "have" ("has X got a notion of …").
    if (tokens[i + 1]?.lemma === "get") i++;
    let j = i + 1;
    const object = j;
    while (tokens[j] !== undefined && j - object < 4 && (tokens[j]!.pos === "DET" || tokens[j]!.pos === "ADJ" || tokens[j]!.pos === "NOUN")) j++;
    const fronted = j === object && a.start >= 3 && /^(what|which)$/.test(tokens.slice(0, a.start).find((u) => u.pos !== "PUNCT")?.text ?? "") && tokens.slice(1, a.start).some((u) => u.pos === "NOUN");
    // A stretch of time one has is no representation ("having the time of her life", "has an hour of …").
    const noun = j > object && tokens[j - 1]!.pos === "NOUN" && tokens[j - 1]!.lemma !== "time" && !hasCue([tokens[j - 1]!], "time_word");
    if (!(noun || fronted) || !["of", "about"].includes(tokens[j]?.text ?? "")) continue;
    let k = j + 1;
    if (COMPLEMENTISERS.has(tokens[k]?.text ?? "")) k++;
    if (otherPersonNear(tokens, mentions, a, k, 5)) out.push({ category: "belief", term: tokens[j]!.text, start: j, end: j + 1, believer: a });
  }
  return out;
}

/**
 * "Is X counting on Y being free?", "does X see through Y being all smiles?": a person's verb
 * (with its particle) whose complement is another person with a stative gerund ("being",
 * "having"): the small clause is what X takes Y's state to be, whatever the verb.
 */
/**
 * A construal, by its shape whatever the verb: "A <verb> (particle) B('s N) as X" or "… B's N for
 * X" ("sizes B up as", "writes off B's fidgeting as boredom", "mistakes B's excitement for
 * nerves"): a person, then B or B's doing, then what A makes of it. A may be a pronoun, or a
 * person word the query does not resolve (`byShape`: someone believes all the same, so the safe
 * reading follows and B's private state is not read).
 */
function construals(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  tokens.forEach((verb, v) => {
    if (verb.pos !== "VERB" || hasCue([verb], "unspoken_goal")) return;
    let j = v + 1;
    if (tokens[j]?.pos === "ADP" || tokens[j]?.pos === "PART") j++;
    const b = mentions.find((m) => m.start === j || (m.start === j + 1 && tokens[j]?.pos === "DET"));
    if (b === undefined) {
      // "Does the nurse see the front desk as too swamped": a phrase that names no one, construed as
      // in a state only people are in (availability, mood), stands for someone the query does not
      // resolve; the belief is the subject's all the same, so the fail-safe reading follows.
      let e = j;
      if (tokens[e]?.pos !== "DET") return;
      e++;
      while (e - j <= 3 && tokens[e] !== undefined && (tokens[e]!.pos === "NOUN" || tokens[e]!.pos === "ADJ")) e++;
      if (e === j + 1 || tokens[e]?.text !== "as") return;
      let x = e + 1;
      while (tokens[x]?.pos === "ADV") x++;
      const state = tokens[x];
      if (state === undefined || !(hasCue([state], "availability") || hasCue([state], "emotional_state"))) return;
      let k = v - 1;
      while (k >= 0 && (tokens[k]!.pos === "AUX" || tokens[k]!.pos === "ADV" || tokens[k]!.pos === "PART")) k--;
      const a = mentions.find((m) => m.end === k + 1);
      if (a !== undefined) out.push({ category: "belief", term: verb.text, start: v, end: v + 1, believer: a, aboutSomeone: true });
      return;
    }
    let n = b.end;
    const possessed = tokens[n]?.text === "'s";
    if (possessed) {
      n++;
      const from = n;
      while (n - from < 3 && tokens[n] !== undefined && (tokens[n]!.pos === "NOUN" || tokens[n]!.pos === "ADJ" || (tokens[n]!.pos === "VERB" && tokens[n]!.text.endsWith("ing")))) n++;
      if (n === from) return;
    } else if ((tokens[n]?.pos === "ADP" || tokens[n]?.pos === "PART") && tokens[n]!.text !== "as") n++;
    const link = tokens[n]?.text;
    const next = tokens[n + 1];
    // "for" construes only what B does or feels ("B's excitement for nerves"), not a purpose ("B's cake for the party").
    if (!(link === "as" || (link === "for" && possessed && next !== undefined && !["DET", "PRON", "NUM"].includes(next.pos)))) return;
    // The subject before the verb: a person mentioned (a pronoun too), or a word for one.
    let k = v - 1;
    while (k >= 0 && (tokens[k]!.pos === "AUX" || tokens[k]!.pos === "ADV" || tokens[k]!.pos === "PART")) k--;
    const a = mentions.find((m) => m.end === k + 1 && m.name !== b.name);
    const subject = tokens[k];
    if (a !== undefined) out.push({ category: "belief", term: verb.text, start: v, end: v + 1, believer: a });
    else if (subject !== undefined && !firstPerson(subject) && subject.text !== "you" && (someoneWord(subject) || subject.pos === "NOUN")) out.push({ category: "belief", term: verb.text, start: v, end: v + 1, byShape: true });
  });
  // "A braces herself for B being …": a reflexive, then B as a small clause's subject: A's expectation of B.
  tokens.forEach((verb, v) => {
    const self = mentions.find((m) => m.start === v + 1 && m.by === "pronoun" && /sel(f|ves)$/.test(tokens[v + 1]!.text));
    if (verb.pos !== "VERB" || self === undefined || tokens[v + 2]?.pos !== "ADP") return;
    const b = mentions.find((m) => m.start === v + 3 && m.name !== self.name);
    const next = b === undefined ? undefined : tokens[b.end];
    if (next !== undefined && (next.text === "being" || next.text === "having" || next.pos === "AUX")) out.push({ category: "belief", term: verb.text, start: v, end: v + 1, believer: self });
  });
  // "Where would A look for B?": where A would search is where A believes B to be.
  const SEARCH = new Set(["look", "search", "hunt", "find", "go", "head", "try", "check", "expect"]);
  tokens.forEach((t, w) => {
    // At a sentence's start (after a comma it closes an if-clause, which names A itself: see unclearPair).
    if (t.text !== "where" || (w > 0 && ![".", "?", "!", ";"].includes(tokens[w - 1]!.text)) || !["would", "might", "could", "will", "'d", "should"].includes(tokens[w + 1]?.text ?? "")) return;
    const a = mentions.find((m) => m.start === w + 2);
    const verb = a === undefined ? -1 : tokens.findIndex((u, i) => i >= a.end && i <= a.end + 2 && u.pos === "VERB" && SEARCH.has(u.lemma));
    if (a !== undefined && verb >= 0) out.push({ category: "belief", term: tokens[verb]!.text, start: verb, end: verb + 1, believer: a });
  });
  return out;
}

function smallClauses(tokens: readonly Token[], mentions: readonly Mention[]): BeliefCue[] {
  const out: BeliefCue[] = [];
  for (const a of mentions) {
    if (a.by === "pronoun") continue;
    let i = a.end;
    while (tokens[i] !== undefined && (tokens[i]!.pos === "ADV" || tokens[i]!.pos === "AUX" || tokens[i]!.pos === "PART")) i++;
    const verb = tokens[i];
    if (verb === undefined || !(verb.pos === "VERB" || (i === a.end && invertedSubject(tokens, a) && verb.pos === "NOUN")) || hasCue([verb], "unspoken_goal")) continue;
    let j = i + 1;
    if (tokens[j]?.pos === "ADP" || tokens[j]?.pos === "PART") j++;
    const b = mentions.find((m) => m.start === j && m.name !== a.name && m.by !== "pronoun");
    let end = b?.end ?? -1;
    if (b === undefined) {
      // … or a noun phrase for someone the query does not resolve ("the new porter being …").
      let n = j;
      if (tokens[n]?.pos === "DET" || (tokens[n] !== undefined && hasCue([tokens[n]!], "pronoun"))) n++;
      while (tokens[n]?.pos === "ADJ") n++;
      if (n > j && tokens[n] !== undefined && someoneWord(tokens[n]!)) end = n + 1;
    }
    const gerund = tokens[end];
    if (end >= 0 && gerund !== undefined && (gerund.text === "being" || gerund.text === "having")) out.push({ category: "belief", term: verb.text, start: i, end: i + 1, believer: a });
  }
  return out;
}

/**
 * The belief fields a second-order answer reports: what a belief record holds in the paper's schema
 * (availability and emotional state: a believer's picture of whether the other can be approached),
 * and what the other is believed to be after when the complement asks about a pursuit.
 */
function beliefFields(tokens: readonly Token[]): HiddenField[] {
  const fields: HiddenField[] = ["availability", "emotional_state"];
  if (hasCue(tokens, "unspoken_goal") || hasCue(tokens, "schedule") || tokens.some((t) => t.text === "what" || t.text === "why")) fields.push("unspoken_goal");
  return fields;
}

/** gap ∈ [0,1]: how much of what the user needs is not in the literal answer (hidden state). */
export function gapOf(a: QueryAnalysis): number {
  if (a.secondOrder !== null) return 0.75;
  if (a.literalOnly || a.scope.kind === "none") return a.literal.length > 0 ? 0.1 : 0.15;
  let g = 0.3 + 0.1 * a.hidden.length;
  if (a.appropriateness) g += 0.1;
  if (a.wantsPlan) g += 0.05;
  if (a.scope.kind === "location" || a.scope.kind === "all") g += 0.15;
  return Math.min(1, Math.round(g * 100) / 100);
}

/** The paper's map: [0,.2)→0, [.2,.4)→1, [.4,.6)→2, [.6,.8)→3, [.8,1]→5, then capped at maxSteps. */
export function gapToBudget(gap: number, maxSteps: number): number {
  const g = Math.min(1, Math.max(0, Number.isFinite(gap) ? gap : 0));
  const base = g < 0.2 ? 0 : g < 0.4 ? 1 : g < 0.6 ? 2 : g < 0.8 ? 3 : 5;
  return Math.min(Math.max(0, Math.floor(maxSteps)), base);
}

const FIELD_WORDS: Record<string, string> = { availability: "availability", emotional_state: "mood", unspoken_goal: "what they are privately focused on" };

/** The IntentFrame for an analysis, with the probes that would serve it (whitelisted against `tools`). */
export function frameOf(text: string, a: QueryAnalysis, tools: readonly string[]): IntentFramePayload {
  const gap = gapOf(a);
  const probes: string[] = [];
  const implicit: string[] = [];
  if (a.secondOrder !== null) {
    const { believer, target, fields } = a.secondOrder;
    implicit.push(`${believer}'s belief about ${target}'s ${fields.map((f) => FIELD_WORDS[f]).join(" and ")} (not ${target}'s actual state)`);
    probes.push("get_agent_belief_about");
  } else if (a.hidden.length > 0) {
    const who = a.scope.kind === "person" ? a.scope.agents.join(", ") : a.scope.kind === "location" ? `the people at ${a.scope.location}` : "everyone in the scene";
    implicit.push(`whether ${who} can be approached now: ${a.hidden.map((f) => FIELD_WORDS[f]).join(", ")}`);
    probes.push("get_agent_private_state");
    if (a.wantsPlan && a.scope.kind === "person") probes.push("get_agent_plan");
  }
  const literalNeed = a.literal.length === 0 ? text : `${a.literal.join(", ")}${a.scope.kind === "person" ? ` of ${a.scope.agents.join(", ")}` : a.scope.kind === "location" ? ` at ${a.scope.location}` : ""}`;
  const parts = [
    a.scope.kind === "none" ? "no person in focus" : `topic: ${a.scope.kind}${a.scope.kind === "location" ? ` ${a.scope.location}` : ""} (${a.scope.agents.join(", ")})`,
    a.secondOrder === null ? null : `second-order: ${a.secondOrder.believer} → ${a.secondOrder.target}`,
    a.appropriateness ? "appropriateness cue" : null,
    a.wantsPlan ? "schedule cue" : null,
    a.literalOnly ? "literal-only question" : null,
  ].filter((p): p is string => p !== null);
  return {
    literal_need: literalNeed,
    implicit_need: implicit,
    gap,
    recommended_probes: probes.filter((p) => tools.includes(p)),
    should_alert: gap >= 0.4 && implicit.length > 0 && a.secondOrder === null,
    confidence: a.scope.kind === "none" ? 0.9 : a.secondOrder !== null ? 0.8 : 0.7,
    rationale: `deterministic: ${parts.join("; ")}`.slice(0, 400),
  };
}

/**
 * The inferrer as a strategy the condition chooses. The deterministic backend answers at once; the
 * LLM backend (prompt and parser in llm.ts, driven by the controller) emits `llm.requested` and
 * finishes on the logged `llm.completed`, falling back to this backend on `llm.failed` or an
 * unusable frame (and saying so in `intent.inferred.backend`).
 */
export interface IntentInferrer {
  readonly backend: string;
  infer(text: string, scene: PerceivedScene, tools: readonly string[]): { frame: IntentFramePayload; analysis: QueryAnalysis };
}

export const deterministicInferrer: IntentInferrer = {
  backend: "deterministic",
  infer(text, scene, tools) {
    const analysis = analyseQuery(text, scene);
    return { analysis, frame: frameOf(text, analysis, tools) };
  },
};
