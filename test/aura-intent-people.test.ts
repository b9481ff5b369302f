// People named through another person or by what they visibly do, on scenes and wordings of this
// file's own (no benchmark query).
import { describe, expect, it } from "vitest";
import { analyseQuery, type PerceivedScene } from "../actors/aura/intent.ts";
import { peopleIn } from "./analyserScenes.ts";

// Town residents (their relationships come from the town's own table) at a kite festival.
const kites: PerceivedScene = {
  summary: "Town Park, 11:30, kite festival. Wang Jun (retired philosophy professor, judging the kites from a deck chair), Zhang Hao (writer, untangling a kite string) and Chen Mei (shop owner, selling ice lollies). Lin Wei (cafe owner) is at Sunrise Cafe.",
  time: "11:30",
  focus: "Town Park",
  public: {
    "Wang Jun": { location: "Town Park", action: "judging the kites" },
    "Zhang Hao": { location: "Town Park", action: "untangling a kite string" },
    "Chen Mei": { location: "Town Park", action: "selling ice lollies" },
    "Lin Wei": { location: "Sunrise Cafe", action: "serving coffee" },
  },
};

describe("people named through another", () => {
  it("finds a relation in the possessor's relationships, by name or by pronoun", () => {
    expect(peopleIn(kites, "Is Zhang Hao's mentor in a good mood?")).toEqual(["Wang Jun"]);
    expect(analyseQuery("Does Zhang Hao reckon his mentor is tired?", kites).secondOrder).toMatchObject({ believer: "Zhang Hao", target: "Wang Jun" });
  });

  it("leaves a relation no one's entry names unresolved", () => {
    expect(peopleIn(kites, "Is Chen Mei's cousin around?")).toEqual([]);
  });

  it("reads a person noun that is the verb of what someone visibly does", () => {
    expect(peopleIn(kites, "Is the kite judge free for a word?")).toEqual(["Wang Jun"]);
  });
});

describe("the one person a query about several is about", () => {
  it("reads the question's subject, not the people named to place or describe them", () => {
    expect(peopleIn(kites, "Zhang Hao keeps glancing over at the lolly seller. What's he after?")).toEqual(["Zhang Hao"]);
    expect(peopleIn(kites, "Is now a good moment to hand Chen Mei's change to Wang Jun, or is he busy?")).toEqual(["Wang Jun"]);
  });

  it("keeps everyone of a joined subject", () => {
    expect(peopleIn(kites, "Are Zhang Hao and Chen Mei in a good mood?")).toEqual(["Zhang Hao", "Chen Mei"]);
    expect(peopleIn(kites, "Zhang Hao or Wang Jun, is either of them free?")).toEqual(["Zhang Hao", "Wang Jun"]);
  });
});

describe("the boss", () => {
  const works: PerceivedScene = {
    summary: "Bottling plant, 06:50. Present: Greta Holm (plant manager, in her office), Idris Kane (line supervisor, at the conveyor), Pavel Novak (forklift driver, loading pallets) and Suki Tan (lab technician, testing samples).",
    time: "06:50",
    focus: "Bottling Hall",
    public: {
      "Greta Holm": { location: "Office", action: "reading reports" },
      "Idris Kane": { location: "Bottling Hall", action: "watching the conveyor" },
      "Pavel Novak": { location: "Bottling Hall", action: "loading pallets" },
      "Suki Tan": { location: "Lab", action: "testing samples" },
    },
  };
  it("names whoever holds a role in charge, before one of mere rank", () => {
    expect(peopleIn(works, "Is the boss in a good mood this morning?")).toEqual(["Greta Holm"]);
    expect(analyseQuery("Does Pavel reckon his boss is annoyed with him?", works).secondOrder).toMatchObject({ believer: "Pavel Novak", target: "Greta Holm" });
  });
  it("names the one of greater rank when no one is in charge", () => {
    const noManager: PerceivedScene = { ...works, public: Object.fromEntries(Object.entries(works.public).filter(([n]) => n !== "Greta Holm")), summary: works.summary.replace("Greta Holm (plant manager, in her office), ", "") };
    expect(peopleIn(noManager, "Is the boss free for a word?")).toEqual(["Idris Kane"]);
  });
});

// A scene of this file's own: roles written with an adverb and a participle, and acts that open
// with a participle and its object.
const museum: PerceivedScene = {
  summary: "Harbour Museum, 14:20. Present: Ottilie Marsh (senior curator, checking labels in the Map Room), Ravi Kapoor (newly appointed curator, hanging a painting in the Long Gallery), Sunniva Berg (guide, leading a tour through the Long Gallery), Moses Okafor (security guard, answering radios at the Front Desk).",
  time: "14:20",
  focus: "Long Gallery",
  public: {
    "Ottilie Marsh": { location: "Map Room", action: "checking labels" },
    "Ravi Kapoor": { location: "Long Gallery", action: "hanging a painting" },
    "Sunniva Berg": { location: "Long Gallery", action: "leading a tour" },
    "Moses Okafor": { location: "Front Desk", action: "answering radios" },
  },
};

describe("roles and descriptions in a summary's own words", () => {
  it("matches a modifier to the adverb a role is written with", () => {
    expect(peopleIn(museum, "Is the new curator free for a chat?")).toEqual(["Ravi Kapoor"]);
    expect(peopleIn(museum, "Is the senior curator free for a chat?")).toEqual(["Ottilie Marsh"]);
  });

  it("reads a clause opening on a participle whose object names no person as an act, not a role", () => {
    expect(peopleIn(museum, "Is the radio on the desk working?")).toEqual([]);
  });

  it("keeps a participle and its object after the person word in the description", () => {
    expect(peopleIn(museum, "How is the woman leading the tour holding up?")).toEqual(["Sunniva Berg"]);
  });
});
