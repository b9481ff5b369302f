// The deterministic IntentFrame backend on a scene and wordings of its own (no benchmark query):
// people by role, synonym, description and pronoun; places by synonym; second-order structure and
// its safe reading; and the vocabulary file's rule that every entry names its source.
import { describe, expect, it } from "vitest";
import { analyseQuery, type PerceivedScene } from "../actors/aura/intent.ts";
import { LEXICON, lexiconProblems } from "../actors/aura/language/lexicon.ts";
import type { TokenizerName } from "../actors/aura/language/tokens.ts";
import { harbour, peopleIn } from "./analyserScenes.ts";

const scene = harbour;

const person = (q: string, t: TokenizerName = "wink") => peopleIn(scene, q, t);

describe("intent analyser: who a query is about", () => {
  for (const tokenizer of ["wink", "compromise"] as const) {
    it(`resolves roles, synonyms, descriptions, pronouns and first names (${tokenizer})`, () => {
      expect(person("Is the baker free for a word?", tokenizer)).toEqual(["Ingrid Berg"]);
      // A WordNet synonym of the summary's role ("schoolteacher" → teacher) and a hypernym ("writer" names the novelist).
      expect(person("Where is the writer this morning?", tokenizer)).toEqual(["Tomasz Nowak"]);
      expect(person("Is the one mending nets in a good place?", tokenizer)).toEqual(["Ana Silva"]);
      expect(person("Ana looks worn out; is she up for a chat?", tokenizer)).toEqual(["Ana Silva"]);
      expect(person("Are Ingrid and Rui both around?", tokenizer)).toEqual(["Ingrid Berg", "Rui Costa"]);
    });
  }

  it("reads a place by a synonym of its head noun, and a group at it", () => {
    const a = analyseQuery("Is anybody at the bakeshop in a bad mood?", scene);
    expect(a.scope).toEqual({ kind: "location", location: "Berg Bakery", agents: ["Ingrid Berg", "Tomasz Nowak"] });
    expect(analyseQuery("Nobody on the quay is upset, are they?", scene).scope).toMatchObject({ kind: "location", location: "Fish Quay" });
    expect(analyseQuery("Is anyone stressed today?", scene).scope).toMatchObject({ kind: "all" });
    expect(analyseQuery("What time is it?", scene).scope).toEqual({ kind: "none" });
  });
});

describe("intent analyser: what a summary says of people", () => {
  const depot: PerceivedScene = {
    summary: 'Bus depot, 05:10. Present: Józef "Joe" Malik (head of maintenance, under a bus with a torch), Dr. Aiko Mori (occupational physiotherapist, checking a driver\'s back), Lena Fischer (dispatcher on shift, at the radio desk), Omar Haddad (playing the union rep today, pinning up a notice), Kofi Mensah (night driver, asleep on a bench).',
    time: "05:10",
    focus: "Depot Floor",
    public: {
      "Józef Malik": { location: "Depot Floor", action: "repairing a bus" },
      "Aiko Mori": { location: "First Aid Room", action: "checking a driver's back" },
      "Lena Fischer": { location: "Radio Desk", action: "dispatching buses" },
      "Omar Haddad": { location: "Depot Floor", action: "pinning up a notice" },
      "Kofi Mensah": { location: "Depot Floor", action: "sleeping on a bench" },
    },
  };
  const who = (q: string) => peopleIn(depot, q);
  it("knows a quoted nickname, a title, a clause with a prepositional phrase, a clipped role and a role a verb assigns", () => {
    expect(who("Is Joe free yet?")).toEqual(["Józef Malik"]);
    expect(who("Can the doctor see me now?")).toEqual(["Aiko Mori"]);
    expect(who("Is the head of maintenance in a mood?")).toEqual(["Józef Malik"]);
    expect(who("Is the physio busy?")).toEqual(["Aiko Mori"]);
    expect(who("Is the dispatcher swamped?")).toEqual(["Lena Fischer"]);
    expect(who("Is the union rep around?")).toEqual(["Omar Haddad"]);
    expect(who("Is the maintenance guy okay?")).toEqual(["Józef Malik"]);
  });
  it("finds lower-cased names where English wants one, and a role without a determiner", () => {
    expect(who("is joe free yet")).toEqual(["Józef Malik"]);
    expect(who("mr malik free?")).toEqual(["Józef Malik"]);
    expect(who("dispatcher seems stressed, what's up")).toEqual(["Lena Fischer"]);
    // A person named to say whose the other is: not the referent.
    // (Her boss is the scene's one person in charge, the head of maintenance: test/aura-intent-people.test.ts.)
    expect(who("Is Lena's boss around?")).not.toContain("Lena Fischer");
  });

  it("reads plural people nouns as a group and 'from where X stands' as a perspective", () => {
    expect(analyseQuery("How are the men on the Depot Floor holding up?", depot).scope).toMatchObject({ kind: "location", location: "Depot Floor" });
    expect(analyseQuery("From where Kofi stands, is the dispatcher annoyed?", depot).secondOrder).toMatchObject({ believer: "Kofi Mensah", target: "Lena Fischer" });
    expect(analyseQuery("Has Lena got it into her head that Joe is avoiding her?", depot).secondOrder).toMatchObject({ believer: "Lena Fischer", target: "Józef Malik" });
  });

  it("reads a capitalised abbreviation of a two-word role, a person by where they are, and a plural role as a group", () => {
    // "occupational physiotherapist" → "OP"; written in lower case it is no abbreviation.
    expect(who("Can the OP fit me in?")).toEqual(["Aiko Mori"]);
    expect(who("is the op over?")).toEqual([]);
    // A name's initials, in capitals: "JM" for Józef Malik, but not the word "is" for Ingrid-like initials.
    expect(who("Is JM around?")).toEqual(["Józef Malik"]);
    // Only Lena is at the Radio Desk; three people share the Depot Floor, so "the guy on the depot floor" is the place's people.
    expect(who("Is the woman at the radio desk frazzled?")).toEqual(["Lena Fischer"]);
    expect(analyseQuery("Is the guy on the depot floor okay?", depot).scope).toMatchObject({ kind: "location", location: "Depot Floor" });
    expect(analyseQuery("Would Kofi be shocked to hear the woman at the radio desk is exhausted?", depot).secondOrder).toMatchObject({ believer: "Kofi Mensah", target: "Lena Fischer" });
    expect(analyseQuery("Are the two drivers on the Depot Floor coping?", depot).scope).toMatchObject({ kind: "location", location: "Depot Floor" });
    // A lower-case name after a complementiser starts a clause: the belief report resolves.
    expect(analyseQuery("has the dispatcher noticed that kofi's fast asleep", depot).secondOrder).toMatchObject({ believer: "Lena Fischer", target: "Kofi Mensah" });
  });
});

describe("intent analyser: informal writing and hyphenated names", () => {
  const studio: PerceivedScene = {
    summary: "Radio studio, 06:10. Present: Marie-Claire Dubois-Hart (presenter, on air), Sam Oyelaran, known to all as Oy (sound engineer, at the desk), Petra Lind (producer, on the phone).",
    time: "06:10",
    focus: "Studio",
    public: {
      "Marie-Claire Dubois-Hart": { location: "Studio", action: "presenting" },
      "Sam Oyelaran": { location: "Studio", action: "mixing" },
      "Petra Lind": { location: "Studio", action: "taking calls" },
    },
  };
  const who = (q: string) => peopleIn(studio, q);
  it("finds a hyphenated surname, a hyphenated given name's initials and a 'known as' nickname", () => {
    expect(who("Is Ms Dubois-Hart okay?")).toEqual(["Marie-Claire Dubois-Hart"]);
    expect(who("has MC got a sec")).toEqual(["Marie-Claire Dubois-Hart"]);
    expect(who("is Oy busy")).toEqual(["Sam Oyelaran"]);
    expect(who("Is the engineer stressed?")).toEqual(["Sam Oyelaran"]);
  });
  it("reads contractions without apostrophes and text-speak as standard English", () => {
    const a = analyseQuery("whats petra up to rn, shes been on the phone forever", studio);
    expect(a.scope).toEqual({ kind: "person", agents: ["Petra Lind"] });
    expect(a.hidden).toContain("unspoken_goal");
    expect(a.literal).toContain("time");
  });
  it("reads view questions and embedded questions about another person as beliefs", () => {
    expect(analyseQuery("How does Petra rate the engineer today?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    expect(analyseQuery("Is Petra clueless about how tired Oy is?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    expect(analyseQuery("Does Petra have the slightest notion that Oy wants to quit?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    // A state of X on the way makes it a question about X.
    expect(analyseQuery("Is Petra upset that Oy left early?", studio).secondOrder).toBeNull();
  });
  it("reads a possessed attitude about someone, a clause-held notion and a participle before 'as' as beliefs", () => {
    expect(analyseQuery("What's Petra's honest take on Oy tonight?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    expect(analyseQuery("Is Petra clinging to the notion that Oy is fine?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    expect(analyseQuery("Has Petra got Oy marked as a slacker?", studio).secondOrder).toMatchObject({ believer: "Petra Lind", target: "Sam Oyelaran" });
    // A reporter the query does not resolve: no one's private state is read.
    expect(analyseQuery("Has the night cleaner realised that Oy is exhausted?", studio).hidden).toEqual([]);
  });
  it("drops a missing determiner and reads an agent noun by what people do", () => {
    expect(analyseQuery("engineer free yet?", studio).scope).toEqual({ kind: "person", agents: ["Sam Oyelaran"] });
    expect(analyseQuery("Is the caller-taker on the phone stressed?", studio).scope.kind).not.toBe("all");
    const desk: PerceivedScene = { ...studio, public: { ...studio.public, "Petra Lind": { location: "Studio", action: "taking calls and selling raffle tickets" } } };
    expect(analyseQuery("Is the ticket seller swamped?", desk).scope).toEqual({ kind: "person", agents: ["Petra Lind"] });
  });
});

describe("intent analyser: second-order structure", () => {
  const cases: Array<[string, string, string]> = [
    ["Is Ingrid under the impression that Tomasz is free?", "Ingrid Berg", "Tomasz Nowak"],
    ["As far as Rui knows, is the baker swamped?", "Rui Costa", "Ingrid Berg"],
    ["According to Ana Silva, is Rui Costa around?", "Ana Silva", "Rui Costa"],
    ["In Tomasz's eyes, is Ana in a foul mood?", "Tomasz Nowak", "Ana Silva"],
    ["Is the novelist aware that Ingrid is exhausted?", "Tomasz Nowak", "Ingrid Berg"],
    ["Does Rui have any idea that Ana is stressed?", "Rui Costa", "Ana Silva"],
    ["Would the fisherman reckon the baker is busy?", "Ana Silva", "Ingrid Berg"],
  ];
  for (const [q, believer, target] of cases) {
    it(`reads the believer's belief: ${q}`, () => {
      const a = analyseQuery(q, scene);
      expect(a.secondOrder).toMatchObject({ believer, target });
      // Never the target's private state: no hidden field is probed for anyone.
      expect(a.hidden).toEqual([]);
      expect(a.scope).toEqual({ kind: "person", agents: [believer] });
    });
  }

  it("takes the belief reading when a belief word stands beside two people without clear structure", () => {
    const a = analyseQuery("Tomasz and Ana: does either reckon the other is free?", scene);
    expect(a.secondOrder).not.toBeNull();
    expect(a.hidden).toEqual([]);
  });

  it("reads a belief report by its syntax when the verb is not in the vocabulary", () => {
    expect(analyseQuery("Does Ana gather that Rui is upset?", scene).secondOrder).toMatchObject({ believer: "Ana Silva", target: "Rui Costa" });
    expect(analyseQuery("Is Ana helping Rui carry the nets?", scene).secondOrder).toBeNull();
  });

  it("reads no one's private state for a belief whose other person it cannot resolve", () => {
    const a = analyseQuery("Does Ana reckon somebody took her nets?", scene);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toEqual([]);
    // "on X's mind" is a goal, not a perspective.
    expect(analyseQuery("What's on Rui's mind?", scene).hidden).toContain("unspoken_goal");
  });

  it("reads attribution ('sees B as', 'has B down as') and appearance ('comes across to X') as beliefs", () => {
    expect(analyseQuery("Does Ana have Rui down as a grump?", scene).secondOrder).toMatchObject({ believer: "Ana Silva", target: "Rui Costa" });
    expect(analyseQuery("Does Ingrid see Tomasz as a friend?", scene).secondOrder).toMatchObject({ believer: "Ingrid Berg", target: "Tomasz Nowak" });
    expect(analyseQuery("How does the baker come across to Rui?", scene).secondOrder).toMatchObject({ believer: "Rui Costa", target: "Ingrid Berg" });
    // An unresolved person who believes: no private state is read.
    expect(analyseQuery("Would her assistant bet that Ana is exhausted?", scene).hidden).toEqual([]);
  });

  it("does not read the user's own belief as a second-order one", () => {
    expect(analyseQuery("I think Ingrid and Tomasz are busy?", scene).secondOrder).toBeNull();
    expect(analyseQuery("Do you reckon Ana and Rui are free?", scene).secondOrder).toBeNull();
  });
});

describe("intent analyser: the need", () => {
  it("adds the unspoken goal for appropriateness and pursuit questions, not for a plain whereabouts one", () => {
    expect(analyseQuery("Where's Rui?", scene).hidden).toEqual(["availability", "emotional_state"]);
    expect(analyseQuery("Would it be rude to ask Ingrid for a discount?", scene).hidden).toContain("unspoken_goal");
    expect(analyseQuery("What is Tomasz secretly drafting?", scene).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Should I interrupt Ana?", scene).appropriateness).toBe(true);
  });

  it("reads an ongoing act aimed at an unnamed object, and 'what is that about', as asking what someone is after", () => {
    expect(analyseQuery("Ana keeps glancing at the road. Is she looking for somebody?", scene).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Is anyone here secretly saving up for something?", scene).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Rui has swept the chapel steps three times. What is that about?", scene).hidden).toContain("unspoken_goal");
    // A generic verb before an indefinite is no pursuit.
    expect(analyseQuery("Is Rui doing anything?", scene).hidden).not.toContain("unspoken_goal");
  });

  it("separates what the wording asks from what the need adds", () => {
    const a = analyseQuery("Is the baker swamped?", scene);
    expect(a.asked).toEqual(["availability"]);
    expect(a.hidden).toEqual(["availability", "emotional_state"]);
    expect(analyseQuery("Where is Rui Costa?", scene).asked).toEqual([]);
  });
});

describe("the analyser's vocabulary", () => {
  it("names a known source for every entry of data/aura/intent-lexicon.json", () => {
    expect(LEXICON.entries.length).toBeGreaterThan(300);
    expect(lexiconProblems(LEXICON)).toEqual([]);
  });

  it("flags an entry without a source, with an unknown source, or a WordNet entry without its synset", () => {
    const bad = { sources: { "paper:A18": "…" }, entries: [
      { term: "busy", category: "availability", source: "paper:A18" },
      { term: "slammed", category: "availability", source: "" },
      { term: "frazzled", category: "emotional_state", source: "a hunch" },
      { term: "engaged", category: "availability", source: "wordnet" },
    ] } as never;
    const problems = lexiconProblems({ ...(bad as object), sources: { "paper:A18": "…", wordnet: "…" } } as never);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/entries\[1\].*source: missing/);
    expect(problems[1]).toMatch(/'a hunch' is not one of sources/);
    expect(problems[2]).toMatch(/WordNet entry names its synset/);
    expect(lexiconProblems({ sources: {}, entries: [], classes: [{ category: "role", lexfile: "noun.person", source: "a hunch" }] } as never)).toEqual([expect.stringMatching(/classes\[0\] \(noun.person\): source: 'a hunch'/)]);
  });
});
