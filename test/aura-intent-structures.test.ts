// The analyser's belief structures that name their own believer, and the ways of naming a person
// added for wordings written blind to it: each on a scene and wordings of this file's own (no
// benchmark query).
import { describe, expect, it } from "vitest";
import { analyseQuery, type PerceivedScene } from "../actors/aura/intent.ts";
import { tokenize } from "../actors/aura/language/tokens.ts";
import { profilesOf } from "../actors/aura/language/people.ts";
import { harbour, peopleIn } from "./analyserScenes.ts";

const quay = harbour;

const theatre: PerceivedScene = {
  summary: 'Little theatre, 19:20, an hour before curtain. In the Dressing Room: Kai Luna (lead actor, pacing with his script) and Mira Vance (head of makeup, powdering his face). At the Stage Door: Walter "Old Wally" Pike (81, the doorman, reading a paper behind the desk). In the Wings: Josie Park (16, work-experience student, coiling cables) and Ben Ortiz (stage manager, checking the cue sheet).',
  time: "19:20",
  focus: "Dressing Room",
  public: {
    "Kai Luna": { location: "Dressing Room", action: "pacing with his script" },
    "Mira Vance": { location: "Dressing Room", action: "powdering the lead actor's face" },
    "Walter Pike": { location: "Stage Door", action: "reading a paper behind the desk" },
    "Josie Park": { location: "Wings", action: "coiling cables" },
    "Ben Ortiz": { location: "Wings", action: "checking the cue sheet" },
  },
};

const who = (q: string, scene: PerceivedScene = theatre) => peopleIn(scene, q);

describe("belief structures that name their believer", () => {
  it("reads a person after an experiencer preposition, before a clause about another, as the believer", () => {
    expect(analyseQuery("Has it dawned on Ana that the baker is exhausted?", quay).secondOrder).toMatchObject({ believer: "Ana Silva", target: "Ingrid Berg" });
    expect(analyseQuery("Has the coin dropped for Rui about what Ana is planning?", quay).secondOrder).toMatchObject({ believer: "Rui Costa", target: "Ana Silva" });
    // The speaker's own act towards X is no belief of X's.
    expect(analyseQuery("Should I talk to Rui about what Ana is planning?", quay).secondOrder).toBeNull();
  });

  it("reads a representation a person has of another, whatever the noun, as a view", () => {
    expect(analyseQuery("What sort of image does Rui have of where Ana went?", quay).secondOrder).toMatchObject({ believer: "Rui Costa", target: "Ana Silva" });
    expect(analyseQuery("Does Ingrid have a clear sketch of what Tomasz is after?", quay).secondOrder).toMatchObject({ believer: "Ingrid Berg", target: "Tomasz Nowak" });
  });

  it("reads a stative small clause after any verb as what the person takes the other's state to be", () => {
    expect(analyseQuery("Is Ana relying on Rui being around later?", quay).secondOrder).toMatchObject({ believer: "Ana Silva", target: "Rui Costa" });
    expect(analyseQuery("Is Ana watching Rui sweeping?", quay).secondOrder).toBeNull();
  });

  it("reads the verb after an inverted subject whatever its tag, and a possessor across modifiers", () => {
    expect(analyseQuery("Does the fisherman regard the baker as a rival?", quay).secondOrder).toMatchObject({ believer: "Ana Silva", target: "Ingrid Berg" });
    expect(analyseQuery("What's Rui's first rough read on the novelist?", quay).secondOrder).toMatchObject({ believer: "Rui Costa", target: "Tomasz Nowak" });
  });

  it("reads no one's private state for a report whose clause is about someone it cannot resolve", () => {
    const a = analyseQuery("Is Ana taking it as read that the new waiter is free?", quay);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toEqual([]);
    // "I" after a belief verb is the speaker, not someone the belief is about.
    expect(analyseQuery("Is it fine if I ask Ana to show me what she's caught? I won't be long.", quay).hidden).toContain("availability");
  });

  it("reads no one's private state when a name the scene does not hold believes something of another", () => {
    // "Bodge", "Skip": capitals inside the sentence that no profile resolves; the belief is theirs.
    for (const q of ["Does Bodge reckon Ana is free tonight?", "Would Skip think Ana is busy?", "Would Nads say Ana is annoyed?"]) {
      const a = analyseQuery(q, quay);
      expect(a.hidden, q).toEqual([]);
    }
    // The speaker's own belief still reads Ana's state.
    expect(analyseQuery("Do you think Ana is free tonight?", quay).hidden).toContain("availability");
  });
});

describe("people named by nickname, compound, age and description", () => {
  it("finds a nickname of several words and a lower-case name after a preposition", () => {
    expect(who("Is Old Wally still on the door?")).toEqual(["Walter Pike"]);
    expect(who("I'm a bit worried about kai, is he okay")).toEqual(["Kai Luna"]);
  });

  it("reads a summary role whose first word the tagger calls a verb, a WordNet compound and an adjective-tagged head", () => {
    expect(who("Is the leading man nervous?")).toEqual(["Kai Luna"]);
    expect(who("Is the makeup chief swamped?")).toEqual(["Mira Vance"]);
  });

  it("reads a person noun that names no role as a description, with the summary's ages", () => {
    expect(who("Is the elderly gentleman behind the desk alright?")).toEqual(["Walter Pike"]);
    expect(who("Is the teenage girl in the wings coping?")).toEqual(["Josie Park"]);
    // A phrase said of the speaker, or a person noun only owning what is described, names no one.
    expect(who("I am the understudy. Is the doorman in?")).toEqual(["Walter Pike"]);
    expect(who("My nephew's cables are everywhere, sorry")).toEqual([]);
  });
});

describe("a description ends where its clause's predicate starts", () => {
  it("does not read the predicate of a clause or of an inverted question as part of who is meant", () => {
    // The doorman is the one elderly person; the wings are where the student and the stage manager are.
    expect(analyseQuery("Does Kai realise that the elderly gentleman is still waiting in the wings?", theatre).secondOrder).toMatchObject({ believer: "Kai Luna", target: "Walter Pike" });
    expect(who("Is the elderly gentleman reading in the wings now?")).toEqual(["Walter Pike"]);
    // A statement that opens the query keeps its predicate: it is how the speaker picks the person out.
    expect(who("My niece is coiling cables backstage. Is she coping?")).toEqual(["Josie Park"]);
  });
});

describe("appropriateness by the speaker's hypothetical act and a judged moment", () => {
  it("weighs the speaker's own act, and 'is this / now a <adjective> moment'", () => {
    const a = analyseQuery("Would Ben mind if I sat in the wings?", theatre);
    expect(a.appropriateness).toBe(true);
    expect(a.hidden).toContain("unspoken_goal");
    expect(analyseQuery("Is now a decent time, with Kai pacing like that?", theatre).appropriateness).toBe(true);
    expect(analyseQuery("Is Ben in the wings now?", theatre).appropriateness).toBe(false);
    // A choice of judgements is a judgement.
    expect(analyseQuery("Would it be rude or fine to ask Mira for a photo now?", theatre).appropriateness).toBe(true);
  });

  it("weighs a judgement whose 'is it' is dropped: a clause opening on a word before 'to' and a bare verb", () => {
    const a = analyseQuery("Polite to knock on Ben's door yet, or is he still at it?", theatre);
    expect(a.appropriateness).toBe(true);
    expect(a.hidden).toContain("unspoken_goal");
    expect(analyseQuery("Okay to grab Mira for a second?", theatre).appropriateness).toBe(true);
    // A person opening the clause is no judgement ("Kai to go on first?").
    expect(analyseQuery("Is Kai going to go on first?", theatre).appropriateness).toBe(false);
  });
});

describe("a hidden matter or what lies behind, with generic verbs", () => {
  it("reads an unnamed matter someone has, or one as a clause's subject, as what they keep to themselves", () => {
    expect(analyseQuery("Has Ana got something on the go she isn't telling us about?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Is something gnawing at the baker?", quay).hidden).toContain("unspoken_goal");
    // What something is for says nothing hidden.
    expect(analyseQuery("Has Ana got something to eat?", quay).asked).not.toContain("unspoken_goal");
  });

  it("reads a what-question on a generic verb and its particle as asking what lies behind", () => {
    expect(analyseQuery("Rui has swept those steps four times. What's going on with him?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("What has come over the novelist?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("What is Rui sweeping?", quay).asked).not.toContain("unspoken_goal");
  });

  it("reads an act other than the one seen after an inverted subject, whatever its tag, as a pursuit", () => {
    expect(analyseQuery("what's ingrid plotting at this hour", quay).hidden).toContain("unspoken_goal");
  });

  it("reads whom someone deals with in an ongoing act as what they are up to", () => {
    expect(analyseQuery("Who is Ana on the radio to every ten minutes?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Who is Ana?", quay).hidden).not.toContain("unspoken_goal");
  });

  it("reads 'what's the <noun> with X', a bare possessed noun and something of one's own as what lies behind", () => {
    expect(analyseQuery("Tomasz keeps sighing. What's the problem with Tomasz?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Ana keeps glancing at the chapel. What's her angle?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Ana keeps glancing at the chapel. What's her mood?", quay).asked).not.toContain("unspoken_goal");
    expect(analyseQuery("Is the novelist pursuing some scheme of his own?", quay).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Is the novelist working on a book of my own?", quay).asked).not.toContain("unspoken_goal");
  });
});

describe("the speaker's contraction and a stretch of time one has", () => {
  it("splits a first-person contraction the tagger leaves whole, so the speaker's certainty stays the speaker's", () => {
    const words = tokenize("Oh, I'm sure Ana is fine.").map((t) => `${t.text}/${t.pos}`);
    expect(words.slice(2, 4)).toEqual(["i/PRON", "'m/AUX"]);
  });

  it("reads no view in a stretch of time someone has, so their own state is still read", () => {
    const a = analyseQuery("Oh, I'm sure the baker is having the time of her life with that oven. How is she really?", quay);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toContain("emotional_state");
  });
});

describe("a query that turns on when something will happen asks the plan", () => {
  it("reads 'how long', a when-question and a temporal subordinator as the person's plan", () => {
    expect(analyseQuery("How long till Ben is off the headset?", theatre).wantsPlan).toBe(true);
    expect(analyseQuery("When's Mira done with the powder?", theatre).wantsPlan).toBe(true);
    expect(analyseQuery("Should I leave Kai alone until the curtain's up?", theatre).wantsPlan).toBe(true);
    expect(analyseQuery("How much longer will Josie be coiling those cables?", theatre).wantsPlan).toBe(true);
    expect(analyseQuery("How soon is Ben free?", theatre).wantsPlan).toBe(true);
    expect(analyseQuery("How much does Ben know about the cues?", theatre).wantsPlan).toBe(false);
    // A when-clause, and "after what happened", are no question about the future.
    expect(analyseQuery("When Kai paces he looks pale. Is he alright?", theatre).wantsPlan).toBe(false);
    expect(analyseQuery("Is Josie okay after what happened with the cables?", theatre).wantsPlan).toBe(false);
  });

  it("reads a clause-final 'yet' as whether something has happened by now, not what comes next", () => {
    // Annotators of the development splits asked for the plan on 3 of 32 such queries: the state
    // answers them ("is she out of surgery yet?"), so "yet" adds no plan read.
    expect(analyseQuery("Is Mira done with the powder yet?", theatre).wantsPlan).toBe(false);
    expect(analyseQuery("Ben hasn't gone on his break yet, has he?", theatre).wantsPlan).toBe(false);
    expect(analyseQuery("When will Mira be done with the powder?", theatre).wantsPlan).toBe(true);
  });
});

describe("a need the wording does not name", () => {
  it("keeps every private field when the query names none and asks no public fact", () => {
    // Nothing says availability, mood or aim: the frame does not guess two of the three.
    expect(analyseQuery("Ben keeps glancing at the clock. Any reason?", theatre).hidden).toEqual(["availability", "emotional_state", "unspoken_goal"]);
    // A whereabouts or wellbeing question keeps the two the rubric gives it.
    expect(analyseQuery("Is Ben in the Wings?", theatre).hidden).toEqual(["availability", "emotional_state"]);
    expect(analyseQuery("How's Ben today?", theatre).hidden).toEqual(["availability", "emotional_state"]);
    // A named field keeps the frame to the need.
    expect(analyseQuery("Is Ben busy?", theatre).hidden).not.toContain("unspoken_goal");
  });
});

describe("a person word its own phrase does not pin down", () => {
  it("reads it against the rest of the query: whose visible doings the other words describe", () => {
    // No one in the scene is called a caretaker; only Walter sits behind the desk with a paper.
    expect(who("Is the caretaker going to be done with the paper behind the desk soon?")).toEqual(["Walter Pike"]);
    // A place after a preposition of place is where, not who ("ward" is first a person in WordNet).
    expect(analyseQuery("How's morale across the ward, with all the cue sheet changes?", theatre).scope.kind).toBe("all");
  });
});

describe("construals, reports to the speaker, and questions someone asks", () => {
  it("reads 'A <verb> B (or B's doing) as / for X' as A's view of B, whatever the verb", () => {
    expect(analyseQuery("Is Mira chalking up Kai's pacing as stage fright?", theatre).secondOrder).toMatchObject({ believer: "Mira Vance", target: "Kai Luna" });
    expect(analyseQuery("Does Ben read Josie's quiet for sulking?", theatre).secondOrder).toMatchObject({ believer: "Ben Ortiz", target: "Josie Park" });
    // A believer the query does not resolve: a belief all the same, so B's private state is not read.
    const a = analyseQuery("Has the lighting lady pegged Kai as a diva?", theatre);
    expect(a.secondOrder?.target ?? null).not.toBe("Mira Vance");
    expect(a.hidden).toEqual([]);
    // A purpose is no construal ("B's script for the show").
    expect(analyseQuery("Should I fetch Kai's script for the second act?", theatre).secondOrder).toBeNull();
  });

  it("takes what someone tells the speaker as the speaker's information, not a second-order question", () => {
    const a = analyseQuery("Ben told me he's fine. Is he, though?", theatre);
    expect(a.secondOrder).toBeNull();
    expect(a.scope).toMatchObject({ kind: "person", agents: ["Ben Ortiz"] });
    expect(a.hidden.length).toBeGreaterThan(0);
  });

  it("reads a question A asks, or a why-question on A's act, as about A, not A's view of another", () => {
    expect(analyseQuery("Why does Ben keep asking where Kai is?", theatre).secondOrder).toBeNull();
    expect(analyseQuery("Why does Ben keep asking where Kai is?", theatre).hidden).toContain("unspoken_goal");
    expect(analyseQuery("Josie keeps asking me if someone can cover her cue. What is she after?", theatre).hidden).toContain("unspoken_goal");
  });
});

describe("expectations and searches that show a view of another", () => {
  it("reads 'A <verb> herself for B being …' as A's expectation of B", () => {
    expect(analyseQuery("Is Josie steeling herself for Ben being cross about the cables?", theatre).secondOrder).toMatchObject({ believer: "Josie Park", target: "Ben Ortiz" });
  });

  it("reads 'where would A look for B' as A's belief about where B is, at a sentence's start", () => {
    expect(analyseQuery("Mira needs the lead back in his chair. Where would she look for Kai?", theatre).secondOrder).toMatchObject({ believer: "Mira Vance", target: "Kai Luna" });
    // Where someone would go for themselves asks no view of another.
    expect(analyseQuery("Where would Mira go for a coffee?", theatre).secondOrder).toBeNull();
  });

  it("takes 'A goes on the idea that B …' as held by A, and the person in the clause as the target", () => {
    expect(analyseQuery("Ben keeps glancing at the wings for his stagehand. Is he going on the idea that Kai is ready?", theatre).secondOrder).toMatchObject({ believer: "Ben Ortiz", target: "Kai Luna" });
  });
});

describe("contractions, determiners and body parts that name no one", () => {
  it("reads \"'s\" after a pronoun as 'is', not a possessor of a view", () => {
    const a = analyseQuery("Kai, the lead guy. Is he chuffed with whatever he's finding back there or just fed up?", theatre);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toContain("emotional_state");
  });

  it("reads a pronoun before a noun as a determiner, not the person an impression is to", () => {
    expect(analyseQuery("Does Ben look free to chat, or is he up to his ears?", theatre).hidden).toContain("availability");
  });

  it("reads 'in the <someone>'s mind' as that person's view even when the query does not resolve them", () => {
    const a = analyseQuery("In the prompter's mind, where is Kai right now?", theatre);
    expect(a.hidden).toEqual([]);
  });

  it("reads a body part after a possessive as the owner's own, not a role ('my head' is no head of makeup)", () => {
    expect(analyseQuery("Somebody in the wings just bit my head off. Stressed, maybe?", theatre).scope).toMatchObject({ kind: "location", location: "Wings" });
  });
});

describe("nicknames a summary gives in an appositive", () => {
  const yard: PerceivedScene = {
    summary: "Boatyard, 6:00 AM. In the Shed: Oskar Lind, called Big Os by the apprentices (yard foreman, sanding a hull), and Marta Sousa, who goes by Tata (apprentice, mixing varnish). On the Slipway: Ewan Reid, Captain Ewan to everyone (skipper, checking the ropes).",
    time: "6:00 AM",
    focus: "Shed",
    public: {
      "Oskar Lind": { location: "Shed", action: "sanding a hull" },
      "Marta Sousa": { location: "Shed", action: "mixing varnish" },
      "Ewan Reid": { location: "Slipway", action: "checking the ropes" },
    },
  };
  it("takes 'called X by …', 'who goes by X' and 'X to everyone' as the person's names, and the role after them as theirs", () => {
    expect(who("Is Big Os free for a word?", yard)).toEqual(["Oskar Lind"]);
    expect(who("Tata looks fed up. Is she?", yard)).toEqual(["Marta Sousa"]);
    expect(who("Can I grab Captain Ewan now?", yard)).toEqual(["Ewan Reid"]);
    expect(who("Is the foreman in a good mood?", yard)).toEqual(["Oskar Lind"]);
  });
});

// A workshop of this file's own, for the ways of naming added after the thirteenth blind split.
const garage: PerceivedScene = {
  summary: `Corner Garage, 16:10, a van on the ramp. In the Workshop: Dmitri 'Tall Dima' Orlov (senior mechanic, under the van) and Sam Okafor (apprentice crew, sweeping the bay). In the Office: Priya Nair (service manager, on the phone).`,
  time: "16:10",
  focus: "Workshop",
  public: {
    "Dmitri Orlov": { location: "Workshop", action: "working under the van" },
    "Sam Okafor": { location: "Workshop", action: "sweeping the bay" },
    "Priya Nair": { location: "Office", action: "talking on the phone" },
  },
};

describe("names from epithets, group roles and lower-case writing", () => {
  it("reads the last word of a nickname of several words as a name, and its epithet as a description", () => {
    expect(who("Is Dima busy under there?", garage)).toEqual(["Dmitri Orlov"]);
    expect(who("The tall bloke with the spanner looks grumpy, doesn't he?", garage)).toEqual(["Dmitri Orlov"]);
  });

  it("takes the person noun before a group noun as the role", () => {
    expect(who("Has the apprentice eaten yet?", garage)).toEqual(["Sam Okafor"]);
  });

  it("reads name parts as names in a query written all in lower case", () => {
    expect(analyseQuery("would sam dare bother dima today", garage).mentioned).toEqual(["Sam Okafor", "Dmitri Orlov"]);
    // With capitals written, a lower-case word still needs a name's position.
    expect(analyseQuery("Priya said the sam file is missing", garage).mentioned).toEqual(["Priya Nair"]);
  });

  it("keeps a subject pronoun and an object pronoun of one clause apart", () => {
    const a = analyseQuery("would sam dare bother dima today, like does he see him as scary", garage);
    expect(a.secondOrder).toMatchObject({ believer: "Sam Okafor", target: "Dmitri Orlov" });
  });

  it("hears a plan in 'has got planned' and a judged moment without an adjective", () => {
    expect(analyseQuery("What has Sam got planned after work?", garage).wantsPlan).toBe(true);
    expect(analyseQuery("Is now the moment to ask Priya for a raise?", garage).appropriateness).toBe(true);
    expect(analyseQuery("Is now the moment Priya leaves?", garage).appropriateness).toBe(false);
  });
});

// A depot of this file's own, for the summary shapes added after the fourteenth blind split.
const depot: PerceivedScene = {
  summary: "Bus Depot, 06:00, the first buses due out at 06:30. In the Yard: Olu Adeyemi (night-shift mechanic and part-time student, greasing a hub), Kasia Nowak (union rep and off-duty medic in a hi-vis vest, playing darts), Ed Brennan (cleaner, the new boy, mopping a cab, whom the drivers call Sparky). In the Office: Rhona Kerr (duty manager, on the phone).",
  time: "06:00",
  focus: "Yard",
  public: {
    "Olu Adeyemi": { location: "Yard", action: "greasing a hub" },
    "Kasia Nowak": { location: "Yard", action: "playing darts" },
    "Ed Brennan": { location: "Yard", action: "mopping a cab" },
    "Rhona Kerr": { location: "Office", action: "talking on the phone" },
  },
};

describe("roles and names a summary gives in coordinated, hyphenated and 'call' clauses", () => {
  it("reads each conjunct of a role that names a person, across a hyphenated modifier", () => {
    expect(who("Has the student gone home yet?", depot)).toEqual(["Olu Adeyemi"]);
    expect(who("Is the medic around?", depot)).toEqual(["Kasia Nowak"]);
  });

  it("reads a name others call someone as a nickname", () => {
    expect(who("Is Sparky on his break?", depot)).toEqual(["Ed Brennan"]);
  });

  it("reads an act with a role verb but no person as what they do, not a role", () => {
    const roster = Object.keys(depot.public).sort();
    expect(profilesOf(depot.summary, roster, depot.public, "wink")["Kasia Nowak"]!.heads).not.toContain("darts");
  });

  it("reads a word for anyone that the summary calls one person as that person", () => {
    expect(who("is the boy ok, he looks tired", depot)).toEqual(["Ed Brennan"]);
    // … but a description still decides who "the guy" is.
    expect(who("Is the guy on the phone busy?", depot)).toEqual(["Rhona Kerr"]);
  });
});

// A fete of this file's own, for the readings added after the fifteenth blind split.
const fete: PerceivedScene = {
  summary: "Village fete, 15:00, the tombola about to be drawn. On the Green: Priya Shah (MC, on the microphone by the bandstand), Tom Ellis (retired teacher, on steward duty at the gate, handing out raffle cards), Dee Walsh (photographer, shooting the dog show). In the Tea Tent: Colin Ward (fete organiser, counting the float).",
  time: "15:00",
  focus: "Green",
  public: {
    "Priya Shah": { location: "Green", action: "talking into the microphone" },
    "Tom Ellis": { location: "Green", action: "handing out raffle cards" },
    "Dee Walsh": { location: "Green", action: "photographing the dog show" },
    "Colin Ward": { location: "Tea Tent", action: "counting the float" },
  },
};

describe("abbreviated roles, a person word the summary uses, and things that are no one", () => {
  it("reads a summary role written as an abbreviation, before 's and in lower case too", () => {
    expect(who("Is the MC free for a word?", fete)).toEqual(["Priya Shah"]);
    expect(analyseQuery("mc's been talking non-stop. is she ok", fete).mentioned).toContain("Priya Shah");
  });

  it("reads a person word that only someone's duties name as them", () => {
    expect(who("Does the steward look fed up?", fete)).toEqual(["Tom Ellis"]);
  });

  it("reads no person in a possessed thing, even one a role's name starts with or someone holds", () => {
    expect(analyseQuery("Would Colin mind if I borrowed his business card?", fete).mentioned).toEqual(["Colin Ward"]);
    expect(analyseQuery("If Colin wanted his photo taken, would he expect Dee to be free?", fete).secondOrder).toMatchObject({ believer: "Colin Ward", target: "Dee Walsh" });
  });

  it("reads a participle after a role in a what-question as its predicate", () => {
    expect(analyseQuery("What's the fete organiser planning for the evening?", fete).wantsPlan).toBe(true);
  });
});

// A harbour office written in prose, as a summary may be: roles in appositives, before the name and
// in relative clauses, nicknames in quotes. The test file's own scene and wordings.
const prose: PerceivedScene = {
  summary: "Harbour office, 05:30, the ferry delayed by fog. Inside: Agnes Moyo, the harbour master ('Cap' to the crews), on the radio; Tevita Lolo, deckhand and part-time diver, mending a rope; Ruth Cole - runs the ticket desk, 'the gaffer' - counting change. On the quay, retired fisherman Ian Shaw is feeding the gulls, and Agnes's teenage daughter Mia Moyo is reading in the car; Ola Berg, who works as a crane driver, is asleep in the cab.",
  time: "05:30",
  focus: "Harbour office",
  public: {
    "Agnes Moyo": { location: "Harbour office", action: "talking on the radio" },
    "Tevita Lolo": { location: "Harbour office", action: "mending a rope" },
    "Ruth Cole": { location: "Harbour office", action: "counting change" },
    "Ian Shaw": { location: "Quay", action: "feeding the gulls" },
    "Mia Moyo": { location: "Quay", action: "reading in the car" },
    "Ola Berg": { location: "Quay", action: "sleeping in the crane cab" },
  },
};

describe("roles and nicknames a summary gives in prose", () => {
  it("reads an appositive after the name, up to the next person, with its quoted nickname", () => {
    expect(who("Is the harbour master busy?", prose)).toEqual(["Agnes Moyo"]);
    expect(who("How's Cap doing?", prose)).toEqual(["Agnes Moyo"]);
    expect(who("Is the diver free?", prose)).toEqual(["Tevita Lolo"]);
    expect(who("Is the gaffer in a mood?", prose)).toEqual(["Ruth Cole"]);
  });

  it("reads a noun phrase before the name and a role after 'who works as'", () => {
    expect(who("Has the fisherman eaten?", prose)).toEqual(["Ian Shaw"]);
    expect(who("Is the crane driver awake?", prose)).toEqual(["Ola Berg"]);
  });

  it("does not take a title's period for a sentence's end", () => {
    const school: PerceivedScene = { ...prose, summary: "School office, 08:00. Present: Mrs. Ada Lind (headteacher, on the phone), Mr. Omar Said (caretaker, fixing a door).", public: { "Ada Lind": { location: "Office", action: "on the phone" }, "Omar Said": { location: "Office", action: "fixing a door" } } };
    expect(analyseQuery("mr said free yet", school).mentioned).toEqual(["Omar Said"]);
  });

  it("reads a word for anyone that is a synonym of someone's role as them, and a pronoun as a view's holder", () => {
    expect(analyseQuery("Agnes doesn't realise her girl is still up, does she?", prose).secondOrder).toMatchObject({ believer: "Agnes Moyo", target: "Mia Moyo" });
    expect(analyseQuery("Ian is watching the deckhand. How does he read him?", prose).secondOrder).toMatchObject({ believer: "Ian Shaw", target: "Tevita Lolo" });
    expect(analyseQuery("Ian's watching the deckhand. How does he read him?", prose).secondOrder).toMatchObject({ believer: "Ian Shaw", target: "Tevita Lolo" });
  });
});

// A summary written as a list, as notes may be. The test file's own scene.
const rota: PerceivedScene = {
  summary: "Food bank, 09:10, the van late.\n- Joy Mensah: duty manager, at the front counter (office shut till ten)\n- Karl Brandt: volunteer driver, first in the queue for tea\n- Ifeoma Obi, the intake coordinator everyone calls Ify, sorting tins",
  time: "09:10",
  focus: "Front counter",
  public: {
    "Joy Mensah": { location: "Front counter", action: "signing people in" },
    "Karl Brandt": { location: "Kitchen", action: "making tea" },
    "Ifeoma Obi": { location: "Store room", action: "sorting tins" },
  },
};

describe("roles a summary gives as a list", () => {
  it("reads 'Name: role, …' to the end of its line", () => {
    expect(who("is the duty manager around?", rota)).toEqual(["Joy Mensah"]);
    expect(who("Has the driver had his tea?", rota)).toEqual(["Karl Brandt"]);
  });

  it("keeps the words that give a nickname out of the role, and a note with no person noun out of the roles", () => {
    const roster = Object.keys(rota.public).sort();
    const profiles = profilesOf(rota.summary, roster, rota.public, "wink");
    expect(profiles["Ifeoma Obi"]!.heads).toContain("coordinator");
    expect(profiles["Ifeoma Obi"]!.nicknames).toContain("Ify");
    expect(profiles["Joy Mensah"]!.heads).not.toContain("office");
    expect(profiles["Karl Brandt"]!.heads).not.toContain("queue");
  });
});

// A yard written in prose with a role set before the name. The test file's own scene.
const yard2: PerceivedScene = {
  summary: "Timber yard, 07:30. The owner, Hazel Grant (a former carpenter), checks the invoices in the Office; Piotr Nowak, site foreman, known to everyone as Pete, walks the stacks; Ade Bello, the forklift driver, loads a lorry.",
  time: "07:30",
  focus: "Office",
  public: {
    "Hazel Grant": { location: "Office", action: "checking invoices" },
    "Piotr Nowak": { location: "Stacks", action: "walking the stacks" },
    "Ade Bello": { location: "Loading Bay", action: "loading a lorry" },
  },
};

describe("a role set before the name, a nickname 'known as' in prose, and a report with a finite clause", () => {
  it("reads 'The owner, Name' and 'known to everyone as X'", () => {
    expect(who("Is the owner in a good mood?", yard2)).toEqual(["Hazel Grant"]);
    expect(who("has Pete had a break?", yard2)).toEqual(["Piotr Nowak"]);
    expect(who("Is the foreman free?", yard2)).toEqual(["Piotr Nowak"]);
  });

  it("reads 'would A say B <verb>s …' as A's view of B", () => {
    expect(analyseQuery("would Ade say the owner wants to be left alone?", yard2).secondOrder).toMatchObject({ believer: "Ade Bello", target: "Hazel Grant" });
  });
});

// A ski-hire shop's hand-over note: a table whose rows are "Name | role | what they do", a list item
// with a nickname before a dash, someone given by first name only, and a role said through "as".
// The test file's own scene.
const skiShop: PerceivedScene = {
  summary: [
    "PEAK RENTALS - HANDOVER, SATURDAY 09:10",
    "",
    "FRONT COUNTER",
    "  Oskar Lind | boot fitter, grumbles about the heaters | heating a pair of liners",
    "  Renata Vogel | our cashier | counting the float",
    "WORKSHOP",
    "  Tuck - Edgar Holm - lift operator - waxing a board",
    "  Saoirse Byrne | Oskar's niece, second season as the junior technician | sharpening edges",
    "SLOPE",
    "  Gunnar's 12-year-old, Mika, waiting by the lift.",
    "  Gunnar Dahl | who agreed to instruct the beginners' class | lining up the class",
  ].join("\n"),
  time: "09:10",
  focus: "Front Counter",
  public: {
    "Oskar Lind": { location: "Front Counter", action: "heating a pair of liners" },
    "Renata Vogel": { location: "Front Counter", action: "counting the float" },
    "Edgar Holm": { location: "Workshop", action: "waxing a board" },
    "Saoirse Byrne": { location: "Workshop", action: "sharpening edges" },
    "Mika Dahl": { location: "Slope", action: "waiting by the lift" },
    "Gunnar Dahl": { location: "Slope", action: "lining up the class" },
  },
};

describe("people in a table's rows, before a dash, by first name, through 'as', and by what they do", () => {
  it("reads a row's cells after the name as notes, and a possessive determiner as a determiner", () => {
    expect(who("Has the boot fitter got a minute?", skiShop)).toEqual(["Oskar Lind"]);
    expect(who("Is the cashier stressed?", skiShop)).toEqual(["Renata Vogel"]);
    // A head noun whose most frequent sense is no person still names a role ("lift operator").
    expect(profilesOf(skiShop.summary, Object.keys(skiShop.public), skiShop.public, "wink")["Edgar Holm"]!.heads).toContain("operator");
  });

  it("reads a relation to another person inside a note, and the role a note gives with 'as'", () => {
    expect(who("Is the junior technician free?", skiShop)).toEqual(["Saoirse Byrne"]);
    expect(profilesOf(skiShop.summary, Object.keys(skiShop.public), skiShop.public, "wink")["Saoirse Byrne"]!.heads).toContain("niece");
  });

  it("reads a capitalised phrase set off by a dash before the name as a nickname, but not a place", () => {
    expect(who("Is Tuck in a mood?", skiShop)).toEqual(["Edgar Holm"]);
    const profiles = profilesOf(skiShop.summary, Object.keys(skiShop.public), skiShop.public, "wink");
    expect(profiles["Oskar Lind"]!.nicknames).not.toContain("FRONT COUNTER");
  });

  it("reads a person the summary names by first name only, and someone's N-year-old as their child", () => {
    const profiles = profilesOf(skiShop.summary, Object.keys(skiShop.public), skiShop.public, "wink");
    expect(profiles["Mika Dahl"]!.heads).toContain("child");
    expect(who("Where has Gunnar's kid got to?", skiShop)).toEqual(["Mika Dahl"]);
  });

  it("reads kin the summary states, and its inverse, after a possessor", () => {
    expect(who("Where's Gunnar's son got to?", skiShop)).toEqual(["Mika Dahl"]);
    expect(analyseQuery("Does Mika know where his dad is?", skiShop).secondOrder).toMatchObject({ believer: "Mika Dahl", target: "Gunnar Dahl" });
    // A kinship the summary does not state names no one: Oskar has no child in the scene.
    expect(who("Is Oskar's daughter around?", skiShop)).not.toContain("Mika Dahl");
  });

  it("reads a role noun as whoever the summary says does its verb (WordNet's derivation)", () => {
    // "instructor" comes from "instruct"; no one's role is written as an instructor.
    expect(who("Is the instructor ready to start?", skiShop)).toEqual(["Gunnar Dahl"]);
  });

  it("reads a phrase construed as in a person's state as someone unresolved: no private state is read", () => {
    const a = analyseQuery("Does Oskar see the workshop as too busy to take a repair?", skiShop);
    expect(a.hidden).toEqual([]);
    expect(a.secondOrder).toBeNull();
    // A thing construed ("too hard") is Oskar's own view: his state is read.
    expect(analyseQuery("Does Oskar see the job as too hard?", skiShop).hidden).not.toEqual([]);
  });
});

// A bakery's morning as a rota and a note: a role as a capitalised word or a label before the name,
// a person named by title and surname only, a priest by "Father", a nickname after "and", an aunt.
// The test file's own scene.
const bakeryRota: PerceivedScene = {
  summary: [
    "Rosehill Bakery, Monday rota (written by the manager at 6:15 AM).",
    "6:15 AM - Ovens: Baker: Tomas Ruiz, on the bread since four.",
    "6:15 AM - Counter: Cashier Priya Nair serving the first customers; her nephew Dev works the coffee machine, and Pip - Pippa Grey, our delivery driver - is loading the van.",
    "7:00 AM - Mrs. Okafor from the church hall comes to collect the order; Father Liam will say grace at the opening.",
  ].join("\n"),
  time: "06:15",
  focus: "Counter",
  public: {
    "Tomas Ruiz": { location: "Ovens", action: "baking bread" },
    "Priya Nair": { location: "Counter", action: "serving customers" },
    "Dev Nair": { location: "Counter", action: "making coffee" },
    "Pippa Grey": { location: "Yard", action: "loading the van" },
    "Ada Okafor": { location: "Church Hall", action: "waiting for the order" },
    "Liam Byrne": { location: "Counter", action: "chatting with customers" },
  },
};

describe("people in a rota: labels, capitalised roles, title and surname, a nickname after 'and', kin", () => {
  const profiles = () => profilesOf(bakeryRota.summary, Object.keys(bakeryRota.public), bakeryRota.public, "wink");

  it("reads a label before a colon and a capitalised role word before the name as the role", () => {
    expect(profiles()["Tomas Ruiz"]!.heads).toContain("baker");
    expect(profiles()["Priya Nair"]!.heads).toContain("cashier");
    // "Ovens:", "Counter:" name places, not roles.
    expect(profiles()["Tomas Ruiz"]!.heads).not.toContain("ovens");
  });

  it("reads a person written by title and surname only, and 'Father' as a priest's title", () => {
    expect(profiles()["Ada Okafor"]!.about).toContain("church");
    expect(who("Has the priest arrived?", bakeryRota)).toEqual(["Liam Byrne"]);
  });

  it("reads a dash nickname after 'and', and an aunt as a nephew's inverse", () => {
    expect(who("Is Pip free?", bakeryRota)).toEqual(["Pippa Grey"]);
    expect(analyseQuery("Does Dev think his aunt is too busy to talk?", bakeryRota).secondOrder).toMatchObject({ believer: "Dev Nair", target: "Priya Nair" });
  });

  it("reads a report's clause whose subject has a title with its period ('Mrs.')", () => {
    expect(analyseQuery("Would Tomas say Mrs. Okafor is cross?", bakeryRota).secondOrder).toMatchObject({ believer: "Tomas Ruiz", target: "Ada Okafor" });
  });
});

// A hand-over note in prose: a full name in brackets after what they are called. The test file's own scene.
const rink: PerceivedScene = {
  summary: "Night manager's note, 6:00 AM at the ice rink. Bea (Beatrix Lund), our head skate guard, is on the ice checking the surface, and Coach Sol (Solomon Reyes) is beside the boards with his clipboard. Marta Kowal, Sol's sister, runs the skate hire.",
  time: "06:00",
  focus: "Rink",
  public: {
    "Beatrix Lund": { location: "Rink", action: "checking the ice" },
    "Solomon Reyes": { location: "Rink", action: "watching the skaters" },
    "Marta Kowal": { location: "Skate Hire", action: "handing out skates" },
  },
};

describe("a full name in brackets after what someone is called", () => {
  it("reads the words before the bracket as a nickname, a title among them as the role, and the note after it", () => {
    const profiles = profilesOf(rink.summary, Object.keys(rink.public), rink.public, "wink");
    expect(profiles["Beatrix Lund"]!.nicknames).toContain("Bea");
    expect(profiles["Beatrix Lund"]!.heads).toContain("guard");
    expect(profiles["Solomon Reyes"]!.nicknames).toContain("Sol");
    expect(profiles["Solomon Reyes"]!.heads).toContain("coach");
    expect(who("Is Bea free?", rink)).toEqual(["Beatrix Lund"]);
    expect(who("How's the coach doing?", rink)).toEqual(["Solomon Reyes"]);
  });
});

describe("someone's mind with a content clause after it", () => {
  it("reads A's mind before a that-, how- or wh-clause as A's view of the other, whatever the verb before", () => {
    expect(analyseQuery("Has it crossed Sol's mind how tired Bea is?", rink).secondOrder).toMatchObject({ believer: "Solomon Reyes", target: "Beatrix Lund" });
    expect(analyseQuery("Did it slip Marta's mind whether Sol is free?", rink).secondOrder).toMatchObject({ believer: "Marta Kowal", target: "Solomon Reyes" });
    // "on A's mind" with no clause is what A pursues, not a view.
    expect(analyseQuery("What's on Sol's mind?", rink).secondOrder).toBeNull();
  });
});

// A team chat where each writes a line of their own, and a note that names someone after "And the
// …,": the test file's own scenes.
const boatyard: PerceivedScene = {
  summary: "Boatyard chat, Monday 7:30 AM.\nPia Holm: morning - I'm the rigger today, up the mast of the ketch.\nOle Dahl: on reception (front office), phones already going.\nRuna Berg: owner here - in the loft doing the invoices.\nTeo Vik: sanding the dinghy hull in the shed.",
  time: "07:30",
  focus: "Yard",
  public: {
    "Pia Holm": { location: "Slipway", action: "rigging the ketch's mast" },
    "Ole Dahl": { location: "Front Office", action: "answering the phones" },
    "Runa Berg": { location: "Sail Loft", action: "doing the invoices" },
    "Teo Vik": { location: "Shed", action: "sanding a hull" },
  },
};
const orchard: PerceivedScene = {
  summary: "Note for whoever opens the cider barn, Saturday 3:00 PM. Greta Lind runs the orchard and is in the press house. Hugo Brandt is stacking crates by the gate. And the inspector, Ivo Sander, arrived early and is walking the rows.",
  time: "15:00",
  focus: "Orchard",
  public: {
    "Greta Lind": { location: "Press House", action: "checking the press" },
    "Hugo Brandt": { location: "Gate", action: "stacking crates" },
    "Ivo Sander": { location: "Orchard", action: "walking the rows" },
  },
};

describe("roles said in one's own line, by derivation, after 'And', and who is in charge", () => {
  it("reads 'I'm the X' in a person's own line as their role, and a role noun's WordNet noun derivation as where they are", () => {
    const profiles = profilesOf(boatyard.summary, Object.keys(boatyard.public), boatyard.public, "wink");
    expect(profiles["Pia Holm"]!.heads).toContain("rigger");
    expect(who("Is the rigger free?", boatyard)).toEqual(["Pia Holm"]);
    // "receptionist" is derived from "reception" (WordNet), where the summary puts Ole.
    expect(who("Is the receptionist swamped?", boatyard)).toEqual(["Ole Dahl"]);
  });

  it("reads a role set off before the name after a capitalised 'And'", () => {
    expect(profilesOf(orchard.summary, Object.keys(orchard.public), orchard.public, "wink")["Ivo Sander"]!.heads).toContain("inspector");
    expect(who("Is the inspector in a good mood?", orchard)).toEqual(["Ivo Sander"]);
  });

  it("reads 'the boss' as the owner, else whoever runs the place, when no one holds a role in charge", () => {
    expect(who("Is the boss busy?", boatyard)).toEqual(["Runa Berg"]);
    expect(who("Is the boss busy?", orchard)).toEqual(["Greta Lind"]);
    expect(analyseQuery("Does Hugo expect the boss to have a minute later?", orchard).secondOrder).toMatchObject({ believer: "Hugo Brandt", target: "Greta Lind" });
    // Someone running to a place is not running it.
    const errand: PerceivedScene = { ...orchard, summary: "Greta Lind runs to the gate. Hugo Brandt is stacking crates. Ivo Sander is walking the rows." };
    expect(who("Is the boss busy?", errand)).toEqual([]);
  });

  it("reads a place the query names as what picks out a person whose role word names no one", () => {
    expect(who("Is the boss holed up in the sail loft again?", { ...boatyard, summary: boatyard.summary.replace("owner here - ", "") })).toEqual(["Runa Berg"]);
  });
});

// A family business introduced by relation and role before names, and a kitchen with two chefs: the
// test file's own scenes.
const pottery: PerceivedScene = {
  summary: "Saturday 9:00 AM at the Lindqvist pottery on Quay Road. The mother, Astrid, has been at the wheel since seven. Her husband sits at the glazing bench: Nils Lindqvist is mixing a blue glaze beside the shop assistant, Mara Quist, who is pricing mugs. In the kiln room the couple's daughter is stacking the kiln; Ebba took over the firings this spring. Next to her the clay supplier, Jonas Berg, is wheeling in sacks.",
  time: "09:00",
  focus: "Studio",
  public: {
    "Astrid Lindqvist": { location: "Studio", action: "throwing a bowl" },
    "Nils Lindqvist": { location: "Glazing Bench", action: "mixing a glaze" },
    "Ebba Lindqvist": { location: "Kiln Room", action: "stacking the kiln" },
    "Mara Quist": { location: "Shop", action: "pricing mugs" },
    "Jonas Berg": { location: "Kiln Room", action: "wheeling in sacks" },
  },
};
const kitchen: PerceivedScene = {
  summary: "Tuesday 2:00 PM at the Old Mill kitchen. At the pass the head chef is plating the lunch special; that is Dario Conti, who has run the kitchen for ten years. Across the line the kitchen's junior chef is filleting trout. Pia Hahn started in March. The restaurant manager has shut herself in the office with the rota: Sanne Vos asked not to be disturbed.",
  time: "14:00",
  focus: "Kitchen",
  public: {
    "Dario Conti": { location: "Pass", action: "plating the lunch special" },
    "Pia Hahn": { location: "Line", action: "filleting trout" },
    "Sanne Vos": { location: "Office", action: "working on the rota" },
  },
};
const lobby: PerceivedScene = {
  summary: "Hotel lobby, 10:00 PM. Rosa Marin (receptionist) is checking in a late guest. Karl Ek (porter) is carrying bags to the lift.",
  time: "22:00",
  focus: "Lobby",
  public: { "Rosa Marin": { location: "Lobby", action: "checking in a guest" }, "Karl Ek": { location: "Lobby", action: "carrying bags" } },
};

describe("roles said before the name, a phrase's last noun phrase, and a family's kin", () => {
  const profiles = () => profilesOf(pottery.summary, Object.keys(pottery.public), pottery.public, "wink");

  it("reads the noun phrase that ends the words before a name set off by commas", () => {
    expect(profiles()["Mara Quist"]!.heads).toContain("assistant");
    expect(profiles()["Jonas Berg"]!.heads).toContain("supplier");
    expect(who("Is the supplier in a hurry?", pottery)).toEqual(["Jonas Berg"]);
  });

  it("reads a clause's subject before the name, in its sentence or the one before, as the role", () => {
    expect(profiles()["Ebba Lindqvist"]!.heads).toContain("daughter");
    expect(who("Is the head chef stressed?", kitchen)).toEqual(["Dario Conti"]);
    // Another's role word names someone with a modifier of its own.
    expect(who("Is the junior chef free?", kitchen)).toEqual(["Pia Hahn"]);
    expect(who("Is the restaurant manager busy?", kitchen)).toEqual(["Sanne Vos"]);
  });

  it("reads 'the couple's daughter' as the child of those who share her surname", () => {
    expect(profiles()["Ebba Lindqvist"]!.kin).toEqual(expect.arrayContaining([{ of: "Astrid Lindqvist", word: "daughter" }, { of: "Nils Lindqvist", word: "daughter" }]));
    expect(analyseQuery("Has it dawned on Nils how tired his daughter is?", pottery).secondOrder).toMatchObject({ believer: "Nils Lindqvist", target: "Ebba Lindqvist" });
  });

  it("reads what a role word is derived from as a description of its holder", () => {
    expect(who("Is the lady at reception tired?", lobby)).toEqual(["Rosa Marin"]);
  });
});

describe("a name that says whose, and a mind a question fills", () => {
  it("reads a belief verb with a particle that ends its clause as a phrasal verb of its own", () => {
    const a = analyseQuery("Is Rosa still around, or has she clocked off?", lobby);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toContain("availability");
    expect(analyseQuery("Has Rosa clocked that Karl is worn out?", lobby).secondOrder).toMatchObject({ believer: "Rosa Marin", target: "Karl Ek" });
  });

  it("reads 'picture' (WordNet's envision) as a belief verb, not the noun after a determiner", () => {
    expect(analyseQuery("Where does Rosa picture Karl spending his evening?", lobby).secondOrder).toMatchObject({ believer: "Rosa Marin", target: "Karl Ek" });
    expect(analyseQuery("Does Rosa envision Karl as swamped?", lobby).secondOrder).toMatchObject({ believer: "Rosa Marin", target: "Karl Ek" });
  });

  it("reads a name after 'of' that follows another's role as whose role it is", () => {
    expect(analyseQuery("Is the porter of Rosa Marin busy?", lobby)).toMatchObject({ secondOrder: null, scope: { kind: "person", agents: ["Karl Ek"] } });
    expect(analyseQuery("The porter of Rosa Marin is late. What is the real reason?", lobby).hidden).toContain("unspoken_goal");
    expect(who("Is the shop assistant of Nils Lindqvist free?", pottery)).toEqual(["Mara Quist"]);
    // … not a second person whose mind the first would be asked about.
    expect(analyseQuery("Is the shop assistant of Nils Lindqvist free?", pottery).secondOrder).toBeNull();
    expect(analyseQuery("Is the shop assistant of Nils Lindqvist free?", pottery).hidden).toContain("availability");
    // After an adjective that takes "of", the name is the other person of a belief.
    expect(analyseQuery("How sure is the shop assistant of Jonas being calm?", pottery).secondOrder).toMatchObject({ believer: "Mara Quist", target: "Jonas Berg" });
  });

  it("reads someone's thoughts as the object of a what-question's verb as what they are preoccupied with", () => {
    const a = analyseQuery("What is really occupying Karl's thoughts by the lift?", lobby);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toContain("unspoken_goal");
    expect(a.scope).toEqual({ kind: "person", agents: ["Karl Ek"] });
  });
});

// A crew described by a colleague: nicknames before a bracketed full name with a note, "which is what
// we all call", a nickname with "the", a relative clause after a role. The test file's own scene.
const lifeboat: PerceivedScene = {
  summary: "Harbour lifeboat station, 7:15 AM. The Cox (Captain Ines Duarte, our coxswain) is in the Boathouse checking the engines. Tiny (Hugo Brandt, the mechanic who rebuilt the winch) is up on the Slipway. Nan, which is what we all call Edith Moss (retired skipper who now runs the Tea Hut), is pouring mugs. The new lad, Sami Vale (trainee crew, so everyone calls him the sprog), is coiling ropes.",
  time: "07:15",
  focus: "Boathouse",
  public: {
    "Ines Duarte": { location: "Boathouse", action: "checking the engines" },
    "Hugo Brandt": { location: "Slipway", action: "greasing the winch" },
    "Edith Moss": { location: "Tea Hut", action: "pouring mugs of tea" },
    "Sami Vale": { location: "Boathouse", action: "coiling ropes" },
  },
};

describe("nicknames a colleague gives, and reports to the speaker", () => {
  const profiles = () => profilesOf(lifeboat.summary, Object.keys(lifeboat.public), lifeboat.public, "wink");

  it("reads a nickname before a bracket that holds the full name and a note", () => {
    expect(profiles()["Ines Duarte"]!.nicknames).toContain("Cox");
    expect(profiles()["Ines Duarte"]!.heads).toContain("coxswain");
    expect(profiles()["Hugo Brandt"]!.nicknames).toContain("Tiny");
    // The role is the phrase before a relative clause; the clause describes them.
    expect(profiles()["Hugo Brandt"]!.heads).toEqual(["mechanic"]);
    expect(who("Is Tiny free?", lifeboat)).toEqual(["Hugo Brandt"]);
  });

  it("reads 'X, which is what we all call Name' and 'everyone calls him the X'", () => {
    expect(profiles()["Edith Moss"]!.nicknames).toContain("Nan");
    expect(profiles()["Edith Moss"]!.heads).toContain("skipper");
    expect(who("Is Nan busy?", lifeboat)).toEqual(["Edith Moss"]);
    expect(who("Is the sprog tired?", lifeboat)).toEqual(["Sami Vale"]);
    expect(analyseQuery("What does the sprog figure the Cox wants from him?", lifeboat).secondOrder).toMatchObject({ believer: "Sami Vale", target: "Ines Duarte" });
  });

  it("reads a pronoun after 'X told me Y …' as Y, the topic, not X, the source", () => {
    expect(who("Hugo told me Edith sounded tired on the radio. Is she actually tired?", lifeboat)).toEqual(["Edith Moss"]);
    expect(who("Hugo waved at Edith. Is he tired?", lifeboat)).toEqual(["Hugo Brandt"]);
  });

  it("reads a belief verb with only an adverb or a time word after it as holding no view", () => {
    const a = analyseQuery("Is there something Ines is quietly trying to decide today?", lifeboat);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toContain("unspoken_goal");
  });
});

// A joinery workshop: kin in a nickname's bracket. The test file's own scene.
const joinery: PerceivedScene = {
  summary: "Joinery workshop, 8:00 AM. Ola Berg (master joiner) is planing oak at the bench. Tim Rask (apprentice carpenter) is sweeping shavings. Ebba (Ebba Rask, Tim's mum) is dropping off lunch at the door.",
  time: "08:00",
  focus: "Workshop",
  public: {
    "Ola Berg": { location: "Workshop", action: "planing oak" },
    "Tim Rask": { location: "Workshop", action: "sweeping shavings" },
    "Ebba Rask": { location: "Door", action: "dropping off lunch" },
  },
};

describe("a view someone 'has' of another, kin in a bracket, and a report's subject with a place", () => {
  it("reads 'A has B figured out / sussed' as A's view of B", () => {
    expect(analyseQuery("Does Ola have Tim figured out - bored and hoping to leave early?", joinery).secondOrder).toMatchObject({ believer: "Ola Berg", target: "Tim Rask" });
    expect(analyseQuery("Has the master joiner got Tim sussed?", joinery).secondOrder).toMatchObject({ believer: "Ola Berg", target: "Tim Rask" });
    // A description that runs on over "down as", and an other the query does not resolve (no one's state is read).
    expect(analyseQuery("Does Ola have the lad sweeping shavings down as lazy?", joinery).secondOrder).toMatchObject({ believer: "Ola Berg", target: "Tim Rask" });
    const unresolved = analyseQuery("Does Ola have the new glazier down as lazy?", joinery);
    expect(unresolved.secondOrder).toBeNull();
    expect(unresolved.hidden).toEqual([]);
  });

  it("reads kin in the note of a bracket after a nickname", () => {
    expect(profilesOf(joinery.summary, Object.keys(joinery.public), joinery.public, "wink")["Ebba Rask"]!.kin).toEqual([{ of: "Tim Rask", word: "mum" }]);
    expect(analyseQuery("Does Tim think his mum is upset?", joinery).secondOrder).toMatchObject({ believer: "Tim Rask", target: "Ebba Rask" });
  });

  it("reads a reported clause whose subject has a place phrase", () => {
    expect(analyseQuery("Would Rosa say the porter by the lift is free to chat?", lobby).secondOrder).toMatchObject({ believer: "Rosa Marin", target: "Karl Ek" });
  });
});

// A garden centre run by a family: spouses, gendered kin, shared surnames. The test file's own scene.
const nursery: PerceivedScene = {
  summary: "Brook Garden Centre, 10:15 AM. In the Nursery Beds: Carla Brook (nursery owner, potting seedlings with her sleeves rolled up), Henrik Brook (delivery driver and Carla's husband, unloading compost), Lars Brook (Henrik's teenage son, watering the ferns). At the Till: Omar Said (bank manager, paying for a rose bush, chatting on his phone). Out in the Yard: Piet Brook (Carla's son, stacking pallets).",
  time: "10:15",
  focus: "Nursery Beds",
  public: {
    "Carla Brook": { location: "Nursery Beds", action: "potting seedlings" },
    "Henrik Brook": { location: "Nursery Beds", action: "unloading compost" },
    "Lars Brook": { location: "Nursery Beds", action: "watering the ferns" },
    "Omar Said": { location: "Till", action: "paying for a rose bush" },
    "Piet Brook": { location: "Yard", action: "stacking pallets" },
  },
};

describe("spouses, gender and kin with modifiers", () => {
  const profiles = () => profilesOf(nursery.summary, Object.keys(nursery.public), nursery.public, "wink");

  it("reads a spouse as kin both ways, and kin with a modifier before the kin word", () => {
    expect(profiles()["Henrik Brook"]!.kin).toEqual([{ of: "Carla Brook", word: "husband" }]);
    // (… and a child of one of a couple is the other's too)
    expect(profiles()["Lars Brook"]!.kin).toEqual([{ of: "Henrik Brook", word: "son" }, { of: "Carla Brook", word: "son" }]);
    expect(analyseQuery("Does Henrik think his wife is worn out?", nursery).secondOrder).toMatchObject({ believer: "Henrik Brook", target: "Carla Brook" });
    expect(analyseQuery("According to Carla, is her husband in a mood?", nursery).secondOrder).toMatchObject({ believer: "Carla Brook", target: "Henrik Brook" });
    expect(analyseQuery("Has Lars noticed how tired his dad is?", nursery).secondOrder).toMatchObject({ believer: "Lars Brook", target: "Henrik Brook" });
  });

  it("marks a gender from a role or kin word, a title, or a pronoun in the person's own note", () => {
    expect(profiles()["Carla Brook"]!.gender).toBe("female");
    expect(profiles()["Henrik Brook"]!.gender).toBe("male");
    expect(profiles()["Lars Brook"]!.gender).toBe("male");
    expect(profiles()["Omar Said"]!.gender).toBe("male");
  });

  it("picks by gender among those who share a surname or a relation", () => {
    expect(who("Is Mrs Brook busy?", nursery)).toEqual(["Carla Brook"]);
    expect(who("Does Ms Brook have a minute?", nursery)).toEqual(["Carla Brook"]);
    // Three men are Brooks (Henrik, Lars, Piet): "Mr Brook" names none of them.
    expect(who("Is Mr Brook busy?", nursery)).toEqual([]);
    // Piet's parent is Carla: his mother.
    expect(who("How is Piet's mother doing?", nursery)).toEqual(["Carla Brook"]);
    // A possessive before anyone is named takes the first one after it; "she" then skips the man.
    expect(who("How is his mother doing? Piet said she seemed off.", nursery)).toEqual(["Carla Brook"]);
    // Kin read again after roles: "the driver" first, then his wife.
    expect(analyseQuery("Is the delivery driver convinced his wife is swamped?", nursery).secondOrder).toMatchObject({ believer: "Henrik Brook", target: "Carla Brook" });
  });

  it("reads the boss as the one in charge of the place they are in", () => {
    expect(who("Is the boss around?", nursery)).toEqual(["Carla Brook"]);
  });

  it("reads the speaker's act, not a view, in a judged infinitive, and ends a description at 'about'", () => {
    const a = analyseQuery("Would it be okay to chat to Henrik about Carla's seedlings?", nursery);
    expect(a.secondOrder).toBeNull();
    expect(a.scope).toMatchObject({ agents: ["Henrik Brook"] });
    expect(who("Would it be alright to chat with the lad by the ferns about the compost?", nursery)).toEqual(["Lars Brook"]);
  });
});

// A regatta's radio net and a harbour office's whiteboard: people named by a surname after a role,
// a nickname before a bracket with the surname, a clipped given name. The test file's own scenes.
const regatta: PerceivedScene = {
  summary: "Radio net, Channel 4, Saltmere regatta, 2:15 PM.\nCOMMITTEE BOAT (Principal Race Officer Lindqvist, Start Line): All boats, stand by, over.\nWINDWARD MARK: Umpire Okonkwo at the mark, all clear, over.\nSAFETY RIB: Little Benj here, fuel's getting low, over.\nCOMMITTEE BOAT: Copy. Slipway, Harbourmaster Quayle, anything to report? Over.\nSLIPWAY: Quayle here, trolleys all out, over.",
  time: "14:15",
  focus: "Start Line",
  public: {
    "Astrid Lindqvist": { location: "Start Line", action: "calling the start sequence" },
    "Chidi Okonkwo": { location: "Windward Mark", action: "watching the rounding" },
    "Benjamin Toller": { location: "Safety Boat", action: "refuelling the rib" },
    "Moira Quayle": { location: "Slipway", action: "lining up trolleys" },
  },
};

const harbourOffice: PerceivedScene = {
  summary: "SALTMERE HARBOUR OFFICE - WHITEBOARD - Tue 9:05 AM\nCHART ROOM: Prof K (Kaminski, lead surveyor) - tide tables till 11. Trainee Pilot Varga (Lena, 2nd week!) sitting in.\nLOCK GATE: Coach Tam (Ruiz) - rowing squad launch at 10.\nFRONT DESK: Priya - till + fax OFF, use the laptop.\nYARD: Omar Haddad (crane driver, cab door jammed open).",
  time: "09:05",
  focus: "Chart Room",
  public: {
    "Karol Kaminski": { location: "Chart Room", action: "checking tide tables" },
    "Lena Varga": { location: "Chart Room", action: "taking notes" },
    "Tamsin Ruiz": { location: "Lock Gate", action: "launching the rowing squad" },
    "Priya Nair": { location: "Front Desk", action: "answering the phone" },
    "Omar Haddad": { location: "Yard", action: "fixing the crane cab" },
  },
};

describe("names a log or a whiteboard gives without the whole name", () => {
  const radio = () => profilesOf(regatta.summary, Object.keys(regatta.public), regatta.public, "wink");
  const board = () => profilesOf(harbourOffice.summary, Object.keys(harbourOffice.public), harbourOffice.public, "wink");

  it("reads a surname alone after a capitalised person noun or role phrase, the words before as the role", () => {
    expect(radio()["Astrid Lindqvist"]!.heads).toContain("officer");
    expect(radio()["Chidi Okonkwo"]!.heads).toContain("umpire");
    expect(who("Is the race officer stressed?", regatta)).toEqual(["Astrid Lindqvist"]);
    expect(who("Is the umpire cold out there?", regatta)).toEqual(["Chidi Okonkwo"]);
  });

  it("reads a nickname before a bracket holding only the surname, with a title as the role and a note", () => {
    expect(board()["Karol Kaminski"]!.nicknames).toContain("K");
    expect(board()["Karol Kaminski"]!.heads).toContain("surveyor");
    expect(board()["Tamsin Ruiz"]!.nicknames).toContain("Tam");
    expect(board()["Tamsin Ruiz"]!.heads).toContain("coach");
    // A one-letter nickname names them after a title.
    expect(who("Has Prof K finished the tide tables?", harbourOffice)).toEqual(["Karol Kaminski"]);
    expect(who("Is Tam stressed about the launch?", harbourOffice)).toEqual(["Tamsin Ruiz"]);
    expect(who("Is the surveyor free?", harbourOffice)).toEqual(["Karol Kaminski"]);
  });

  it("reads titles and person nouns before the name in a bracketed nickname as roles, and no note as one", () => {
    expect(board()["Lena Varga"]!.heads).toEqual(expect.arrayContaining(["trainee", "pilot"]));
    expect(board()["Lena Varga"]!.heads).not.toContain("week");
    expect(who("How's the trainee pilot settling in?", harbourOffice)).toEqual(["Lena Varga"]);
  });

  it("reads a clipped given name no English word spells, with its epithet, and not an ordinary word", () => {
    expect(radio()["Benjamin Toller"]!.nicknames).toEqual(expect.arrayContaining(["Little Benj", "Benj"]));
    expect(who("Is Benj running out of fuel?", regatta)).toEqual(["Benjamin Toller"]);
    expect(who("Little Benj sounds worried. Is he ok?", regatta)).toEqual(["Benjamin Toller"]);
    // "The" begins Theodore but is a word of English; "Sal" begins two names.
    const pier: PerceivedScene = {
      summary: "The pier, noon. Sal says the kiosk is shut. Theodore Marsh is fishing off the end; Salome Wren and Salvador Ibarra sell ices.",
      time: "12:00",
      focus: "Pier",
      public: { "Theodore Marsh": { location: "Pier", action: "fishing" }, "Salome Wren": { location: "Pier", action: "selling ices" }, "Salvador Ibarra": { location: "Pier", action: "selling ices" } },
    };
    const p = profilesOf(pier.summary, Object.keys(pier.public), pier.public, "wink");
    expect(p["Theodore Marsh"]!.nicknames).toEqual([]);
    expect(p["Salome Wren"]!.nicknames).toEqual([]);
    expect(p["Salvador Ibarra"]!.nicknames).toEqual([]);
  });

  it("reads a role derived from a word of one person's location as that person, over what others do", () => {
    const surgery: PerceivedScene = {
      summary: "Dental surgery, 10:30 AM. Gemma Holt is answering the phone. Ravi Shah, the courier, is carrying a parcel to reception. Dr Lena Fox (dentist) is with a patient.",
      time: "10:30",
      focus: "Reception",
      public: {
        "Gemma Holt": { location: "Reception", action: "answering the phone" },
        "Ravi Shah": { location: "Waiting Room", action: "carrying a parcel to reception" },
        "Lena Fox": { location: "Surgery", action: "treating a patient" },
      },
    };
    expect(who("Is the receptionist swamped?", surgery)).toEqual(["Gemma Holt"]);
    expect(analyseQuery("Does the dentist think the receptionist is coping?", surgery).secondOrder).toMatchObject({ believer: "Lena Fox", target: "Gemma Holt" });
  });

  it("reads an absolute phrase and a dashed note of things as no role", () => {
    expect(board()["Omar Haddad"]!.heads).toEqual(["driver"]);
    expect(board()["Priya Nair"]!.heads).toEqual([]);
    // A thing's noun is no one's role ("the door", "the till").
    expect(who("Is the door still stuck?", harbourOffice)).toEqual([]);
    expect(who("Is the till working again?", harbourOffice)).toEqual([]);
  });
});

// Allotments: a subject's own intended act, feelings WordNet lists as multiword adjectives, a
// determiner "that" after a report verb, and the speaker as a perceptual verb's object. The test
// file's own scene.
const allotment: PerceivedScene = {
  summary: "Riverside allotments, 10:15 AM, Sunday. By the Shed: Odile Brandt (plot secretary, sorting seed packets), Piet Varga (retired postman, resting on a bench). At the Greenhouse: Nell Ashby (teenage volunteer, watering tomatoes with earbuds in), Casimir Holt (beekeeper, checking a hive).",
  time: "10:15",
  focus: "Shed",
  public: {
    "Odile Brandt": { location: "Shed", action: "sorting seed packets" },
    "Piet Varga": { location: "Shed", action: "resting on a bench" },
    "Nell Ashby": { location: "Greenhouse", action: "watering tomatoes with earbuds in" },
    "Casimir Holt": { location: "Greenhouse", action: "checking a hive" },
  },
};

describe("a subject's own intended act, multiword feelings, and the speaker as an object", () => {
  it("reads a mental verb with a to-infinitive of the subject's own act as the subject's goal, not a view of the other", () => {
    for (const q of ["What does Casimir expect to get out of Nell?", "Is Casimir hoping to get a word out of Nell?"]) {
      const a = analyseQuery(q, allotment);
      expect(a.secondOrder).toBeNull();
      expect(a.scope).toEqual({ kind: "person", agents: ["Casimir Holt"] });
      expect(a.asked).toContain("unspoken_goal");
      expect(a.hidden).toContain("unspoken_goal");
    }
    // An object before the infinitive is the other person's state as the subject expects it.
    expect(analyseQuery("Does Casimir expect Nell to be free?", allotment).secondOrder).toMatchObject({ believer: "Casimir Holt", target: "Nell Ashby" });
  });

  it("reads WordNet's multiword adjectives of displeasure and boredom as a mood", () => {
    // "out of his mind" intensifies the feeling; it is not what he has on his mind.
    for (const q of ["Is Odile fed up?", "Is Nell getting cheesed off?", "Is Piet sick of waiting?", "Is Casimir bored out of his mind?"]) {
      const a = analyseQuery(q, allotment);
      expect(a.asked).toEqual(["emotional_state"]);
      expect(a.hidden).toEqual(["availability", "emotional_state"]);
    }
  });

  it("reads no report in a determiner 'that' after a report verb, nor content across a sentence end", () => {
    // "stick in" is a WordNet report verb; "that shed" opens no clause, and "he" is in the next sentence.
    const a = analyseQuery("Piet has been stuck in that shed for ages. Is he ok?", allotment);
    expect(a.scope).toEqual({ kind: "person", agents: ["Piet Varga"] });
    expect(a.hidden).toEqual(["availability", "emotional_state"]);
  });

  it("reads the speaker as a perceptual verb's only object as no view, and 'can X hear me' as reachability", () => {
    const a = analyseQuery("Can Nell even hear me, or is she lost in her music?", allotment);
    expect(a.secondOrder).toBeNull();
    expect(a.asked).toEqual(["availability"]);
    expect(a.hidden).toContain("availability");
    expect(analyseQuery("Does Odile hear me?", allotment).hidden).toContain("availability");
  });
});

describe("a view possessed by someone the query does not resolve", () => {
  it("reads no one's private state for 'the <person noun>'s view / read / take on B'", () => {
    // No caretaker or treasurer at the allotments: someone's view all the same.
    for (const q of ["What's the caretaker's read on how Nell is coping?", "What is the caretaker's view of Nell?", "What's the treasurer's take on whether the beekeeper is free?"]) {
      const a = analyseQuery(q, allotment);
      expect(a.secondOrder).toBeNull();
      expect(a.hidden).toEqual([]);
    }
    // A view of no person leaves the next question's own person as it was.
    expect(analyseQuery("What's the caretaker's opinion of the new hives? Is Nell free?", allotment).hidden).toContain("availability");
    // A resolved possessor is still the believer.
    expect(analyseQuery("What's the beekeeper's read on how Nell is coping?", allotment).secondOrder).toMatchObject({ believer: "Casimir Holt", target: "Nell Ashby" });
  });

  it("reads no one's private state for a belief when the query resolves no one at all", () => {
    // Believer and content both unresolved, at a place the query names: not the place's people's state.
    for (const q of ["Does the caretaker reckon the Greenhouse crew are busy?", "Does the caretaker think everyone at the Greenhouse is busy?"]) {
      const a = analyseQuery(q, allotment);
      expect(a.secondOrder).toBeNull();
      expect(a.hidden).toEqual([]);
    }
    // The speaker's own belief is no one else's.
    expect(analyseQuery("I think the Greenhouse is busy, is anyone free?", allotment).hidden).toContain("availability");
  });

  it("reads 'has X got any idea how B …' as X's view, X resolved or not", () => {
    // No Mr Finch at the allotments: the belief is his all the same, so Nell's state is not read.
    const a = analyseQuery("Has Mr Finch got any idea how Nell is feeling?", allotment);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toEqual([]);
    expect(analyseQuery("Has Mr Holt got any idea how Nell is feeling?", allotment).secondOrder).toMatchObject({ believer: "Casimir Holt", target: "Nell Ashby" });
  });
});

// A note on the fridge: kin said in the first person belong to whoever signs it. The test file's own scene.
const fridge: PerceivedScene = {
  summary: "Note on the fridge, Sat 7:10 PM. Hi Priya (Priya Shah, babysitter)! Leo (Leo Brandt, our 7-year-old) is in the Playroom with his trains. Jonas (Jonas Brandt, my husband) is in the Garage fixing his bike, so ask him if anything comes up. Jonas's mum, Ursula Brandt, is asleep in the Guest Room. Back by 11. Love, Mia (Mia Brandt)",
  time: "19:10",
  focus: "Playroom",
  public: {
    "Priya Shah": { location: "Playroom", action: "reading to Leo" },
    "Leo Brandt": { location: "Playroom", action: "playing with trains" },
    "Jonas Brandt": { location: "Garage", action: "fixing a bike" },
    "Ursula Brandt": { location: "Guest Room", action: "sleeping" },
    "Mia Brandt": { location: "Theatre", action: "at a show" },
  },
};

describe("kin a note's writer gives in the first person, and gender words' main senses", () => {
  const profiles = () => profilesOf(fridge.summary, Object.keys(fridge.public), fridge.public, "wink");

  it("reads 'my husband', 'our 7-year-old' as kin of whoever signs the note, and the couple's child as both's", () => {
    expect(profiles()["Jonas Brandt"]!.kin).toEqual([{ of: "Mia Brandt", word: "husband" }]);
    expect(profiles()["Leo Brandt"]!.kin).toEqual(expect.arrayContaining([{ of: "Mia Brandt", word: "child" }, { of: "Jonas Brandt", word: "child" }]));
    expect(analyseQuery("Where does Jonas think his wife is tonight?", fridge).secondOrder).toMatchObject({ believer: "Jonas Brandt", target: "Mia Brandt" });
    // "his dad" is Leo's father, not whoever is someone else's dad.
    expect(analyseQuery("Does Leo expect his dad to come and play?", fridge).secondOrder).toMatchObject({ believer: "Leo Brandt", target: "Jonas Brandt" });
  });

  it("genders a person only by a word's most frequent sense ('junior' is no son)", () => {
    const rink: PerceivedScene = { summary: "RINK LOG 6:00 PM\n| Area | Who | Status |\n|---|---|---|\n| Rink | Hana Ito (junior coach) | junior squad session until 7 |", time: "18:00", focus: "Rink", public: { "Hana Ito": { location: "Rink", action: "coaching" } } };
    expect(profilesOf(rink.summary, ["Hana Ito"], rink.public, "wink")["Hana Ito"]!.gender).toBeUndefined();
  });
});

// A diary at a dog groomer's: the writer's first person, a clipped name only a query uses, a name
// the scene never gives, and a noun after an indirect object. The test file's own scene.
const groomers: PerceivedScene = {
  summary: "Thursday, 2:10 PM, written at the counter.\nDear diary, the salon is mad today. I'm stuck on Reception taking bookings while Gwendolyn Price (Mrs Price, a retired nurse with her poodle) waits in Reception. Maximilian Okoro (groomer) is in the Grooming Room clipping a spaniel. Teodora Vance (apprentice) is in the Yard hosing down the tubs.\nIt's me, Saoirse Quinn, on my own till four.",
  time: "14:10",
  focus: "Reception",
  public: {
    "Saoirse Quinn": { location: "Reception", action: "taking bookings" },
    "Gwendolyn Price": { location: "Reception", action: "waiting with a poodle" },
    "Maximilian Okoro": { location: "Grooming Room", action: "clipping a spaniel" },
    "Teodora Vance": { location: "Yard", action: "hosing down the tubs" },
  },
};

describe("a diary's writer, clipped names in a query, and names the scene never gives", () => {
  it("reads 'It's me, Name' as the writer, whose first-person clauses say what they do", () => {
    expect(profilesOf(groomers.summary, Object.keys(groomers.public), groomers.public, "wink")["Saoirse Quinn"]!.about).toEqual(expect.arrayContaining(["stuck", "bookings"]));
    // Two people are at Reception; the one given no other role is "the receptionist".
    expect(who("Is the receptionist free yet?", groomers)).toEqual(["Saoirse Quinn"]);
  });

  it("reads a clipped given name only a query uses, and no English word as one", () => {
    expect(who("is gwen ok? she's been waiting ages", groomers)).toEqual(["Gwendolyn Price"]);
    expect(who("Is Teo hosing the tubs still?", groomers)).toEqual(["Teodora Vance"]);
    // "max" is an English word: it names no one (not Maximilian).
    expect(who("is max ok?", groomers)).toEqual([]);
  });

  it("holds a report about a name the scene does not give as a belief, reading no one's state", () => {
    const a = analyseQuery("would teodora say bronagh's stressed or just busy", groomers);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden).toEqual([]);
  });

  it("reads a noun after a verb's indirect object as no mental verb", () => {
    const a = analyseQuery("Would it be a bad idea to give Teodora notes on her hosing?", groomers);
    expect(a.secondOrder).toBeNull();
    expect(a.hidden.length).toBeGreaterThan(0);
  });
});

describe("'be after' as seeking, not a time", () => {
  it("reads 'is X after something' as X's aim, and 'free after the call' as a time", () => {
    const seeking = analyseQuery("Is Teodora after something? She keeps asking about Maximilian's clients", groomers);
    expect(seeking.wantsPlan).toBe(false);
    expect(seeking.asked).toContain("unspoken_goal");
    expect(analyseQuery("Is Teodora free after the tubs?", groomers).wantsPlan).toBe(true);
  });
});

// A lifeboat station's log: a label that ends on a noun whose person sense is not its first, a
// role before the name with a verb-tagged modifier, and a later note clause that names no person.
const rnliStation: PerceivedScene = {
  summary: "STATION LOG - 3:10 PM. Duty launch lead: Orla Brennan, in the Boathouse. 14:55 Tractor operator Sven Dahl reports the slipway clear. 15:02 visitor Pia Roth (adult, own kayak) warming up in the Crew Room.",
  time: "15:10",
  focus: "Boathouse",
  public: {
    "Orla Brennan": { location: "Boathouse", action: "checking the radio" },
    "Sven Dahl": { location: "Slipway", action: "checking the tractor" },
    "Pia Roth": { location: "Crew Room", action: "warming up" },
  },
};

describe("roles in a log's labels and leads, and note clauses that name no one", () => {
  const profiles = () => profilesOf(rnliStation.summary, Object.keys(rnliStation.public), rnliStation.public, "wink");

  it("reads a label ending on a person noun of a minor sense, and a lead with a verb-tagged modifier", () => {
    expect(who("Where's the duty launch lead right now?", rnliStation)).toEqual(["Orla Brennan"]);
    expect(profiles()["Sven Dahl"]!.heads).toContain("operator");
    expect(who("Is the tractor operator busy?", rnliStation)).toEqual(["Sven Dahl"]);
  });

  it("reads a later note clause that names no person as what they have, not a role", () => {
    expect(profiles()["Pia Roth"]!.heads).not.toContain("kayak");
    expect(who("Is Orla ok? she keeps staring at the kayak", rnliStation)).toEqual(["Orla Brennan"]);
  });

  it("reads a what-question on what someone is busy with as their aim", () => {
    expect(analyseQuery("What's Sven so busy with on that tractor?", rnliStation).asked).toContain("unspoken_goal");
    expect(analyseQuery("Is Sven busy with the tractor?", rnliStation).asked).not.toContain("unspoken_goal");
  });
});

describe("a preference and an unnamed matter as an inverted subject", () => {
  it("reads 'would rather' as what someone wants, and 'is something up' as a hidden matter", () => {
    expect(analyseQuery("How's Sven doing? He looks like he'd rather be anywhere else", rnliStation).asked).toContain("unspoken_goal");
    expect(analyseQuery("Sven looks shattered. Is he ok or is something up?", rnliStation).asked).toContain("unspoken_goal");
    // "rather" as a degree adverb wants nothing.
    expect(analyseQuery("Sven is rather tired today", rnliStation).asked).not.toContain("unspoken_goal");
  });
});

// A voicemail and a review: a dash nickname after a sentence's end, an appositive inside a
// sentence, a capitalised clip that is also an English word, a writer who names themselves.
const voicemail: PerceivedScene = {
  summary: "Voicemail, 4:15 PM, from Josephine Marr: \"Hi love, it's Jo. We're at the county show. Will - Wilhelmina Marr, your niece - is in the Show Ring with her pony, up against a former champion, Dagny Holt. I'm by the Tea Tent. Call me.\"",
  time: "16:15",
  focus: "Show Ring",
  public: {
    "Josephine Marr": { location: "Tea Tent", action: "drinking tea" },
    "Wilhelmina Marr": { location: "Show Ring", action: "riding a pony" },
    "Dagny Holt": { location: "Show Ring", action: "riding a grey mare" },
  },
};
const review: PerceivedScene = {
  summary: "Five stars, posted 2:00 PM from the waiting chairs: \"Booked with Rufus Dane (owner, barber). I'm Colm Ashby, by the way, here for a trim. I've been leafing through old magazines for an hour.\"",
  time: "14:00",
  focus: "Shop Floor",
  public: {
    "Rufus Dane": { location: "Shop Floor", action: "cutting hair" },
    "Colm Ashby": { location: "Waiting Chairs", action: "waiting for a trim" },
  },
};

describe("a voicemail's and a review's people", () => {
  const profiles = () => profilesOf(voicemail.summary, Object.keys(voicemail.public), voicemail.public, "wink");

  it("reads a dash nickname after a sentence's end, and an appositive that opens on a determiner inside a sentence", () => {
    expect(profiles()["Wilhelmina Marr"]!.nicknames).toContain("Will");
    expect(profiles()["Dagny Holt"]!.heads).toContain("champion");
    expect(who("Is the former champion nervous?", voicemail)).toEqual(["Dagny Holt"]);
  });

  it("reads a capitalised clip inside a sentence as a name even when it is an English word", () => {
    expect(who("How's Will holding up in the ring?", voicemail)).toEqual(["Wilhelmina Marr"]);
    expect(who("How's Dag doing?", voicemail)).toEqual(["Dagny Holt"]);
  });

  it("reads \"I'm Name, by the way\" as the writer", () => {
    expect(profilesOf(review.summary, Object.keys(review.public), review.public, "wink")["Colm Ashby"]!.about).toEqual(expect.arrayContaining(["magazines"]));
  });
});

describe("a numbered thread's items", () => {
  it("reads the role before a name after an item's number mark ('4/ Sponsor rep …')", () => {
    const thread: PerceivedScene = {
      summary: "Thread, 1:00 AM. \"1/ Still coding. 2/ Sponsor rep Osric Vale (Fenmoor Bank) is at the Help Desk. 3/ Organiser Ines Roth is asleep.\"",
      time: "01:00",
      focus: "Help Desk",
      public: { "Osric Vale": { location: "Help Desk", action: "handing out drinks" }, "Ines Roth": { location: "Quiet Room", action: "sleeping" } },
    };
    expect(profilesOf(thread.summary, Object.keys(thread.public), thread.public, "wink")["Osric Vale"]!.heads).toContain("rep");
    expect(who("Is the sponsor rep bored?", thread)).toEqual(["Osric Vale"]);
  });
});

describe("a table cell's bracket", () => {
  it("keeps a comma inside a bracket within its cell ('lifeguard on duty (signed in, not a volunteer)')", () => {
    const sheet: PerceivedScene = {
      summary: "SIGN-UP SHEET, 9:00 AM\nName | Job | Where now\nRua Tane | lifeguard on duty (signed in, not a volunteer) | Tower\nEve Moss | volunteer, litter picker | Dunes",
      time: "09:00",
      focus: "Tower",
      public: { "Rua Tane": { location: "Tower", action: "watching the water" }, "Eve Moss": { location: "Dunes", action: "picking litter" } },
    };
    expect(profilesOf(sheet.summary, Object.keys(sheet.public), sheet.public, "wink")["Rua Tane"]!.heads).toContain("lifeguard");
  });
});
