// The fail-safe perspective (issue 21): a query about what one person knows, believes, expects,
// was told or would say of another never reads anyone's private state, whether the analyser reads
// its structure or only sees two people where a mind's content could stand. Wordings and the
// scene are this file's own (no benchmark query).
import { describe, expect, it } from "vitest";
import { analyseQuery, frameOf, type PerceivedScene } from "../actors/aura/intent.ts";
import { candidates, type StepView } from "../actors/aura/strategies.ts";

const orchard: PerceivedScene = {
  summary: "Cider orchard, 16:05, pressing day. At the Press Barn: Odile Fontaine (cider maker, feeding apples into the press) and Bartosz Wrona (farmhand, stacking crates). In the Shop: Henrietta Lowe (shop manager, counting the float). Emeka Udo (beekeeper) is at the Hives.",
  time: "16:05",
  focus: "Press Barn",
  public: {
    "Odile Fontaine": { location: "Press Barn", action: "feeding apples into the press" },
    "Bartosz Wrona": { location: "Press Barn", action: "stacking crates" },
    "Henrietta Lowe": { location: "Shop", action: "counting the float" },
    "Emeka Udo": { location: "Hives", action: "checking the hives" },
  },
};

const TOOLS = ["get_agent_private_state", "get_agent_belief_about", "get_agent_plan", "get_nearby_agents", "get_all_agents"];

/** The private-state reads AURA Intent would make for a query: its frame's probes and its strategy's calls. */
function privateReads(query: string): string[] {
  const analysis = analyseQuery(query, orchard);
  const frame = frameOf(query, analysis, TOOLS);
  const order = analysis.scope.kind === "none" ? [] : [...analysis.scope.agents];
  const view: StepView = { text: query, analysis, labels: null, publicState: orchard.public, focus: orchard.focus, order, known: new Set(), tried: new Set() };
  const calls = candidates("aura-intent", view).filter((c) => c.tool === "get_agent_private_state").map((c) => c.target ?? "");
  // The frame's recommendation alone also counts as a read.
  return calls.length === 0 && frame.recommended_probes.includes("get_agent_private_state") ? ["(frame)"] : calls;
}

const SECOND_ORDER = [
  // knowledge and awareness
  "Does the beekeeper know the shop manager is run ragged?",
  "Is Odile clued in about Henrietta being swamped?",
  "Has Bartosz been kept in the loop on how Odile is coping?",
  "Is Emeka in the know about Henrietta's mood?",
  "How much does the farmhand grasp of what the cider maker is going through?",
  "Is Henrietta conscious that Emeka is worn out?",
  "To Emeka's knowledge, is Odile free?",
  // suspicion and assumption
  "Does Odile smell a rat about what Bartosz is after?",
  "Is Henrietta working on the assumption that Bartosz is free after five?",
  "Does the farmhand presume Odile is in a good mood?",
  "Has Emeka got a suspicion that the shop manager is cross with him?",
  // confidence and certainty
  "How confident is Bartosz that Odile will have a minute?",
  "Is Henrietta positive the beekeeper is free?",
  "Is Odile dubious that Emeka is really fine?",
  "How sure is the shop manager of Bartosz being calm?",
  // opinion and expectation
  "What's Emeka's opinion on whether Odile is stressed?",
  "Does Henrietta expect the cider maker to be busy all evening?",
  "Would Bartosz call Odile grumpy today?",
  "Does Emeka find Henrietta moody lately?",
  "To Odile, does Bartosz seem free?",
  // being told or informed
  "Has anyone told Emeka that Odile is exhausted?",
  "Was Henrietta informed that the farmhand is off sick?",
  "Has word reached Bartosz that Henrietta is fed up?",
  "Did somebody mention to Odile that Emeka is upset?",
  "Has Henrietta been briefed on how busy Odile is?",
  "What's the word from Bartosz on Henrietta's mood?",
  // content said in an earlier sentence, or as a cognition noun's clause
  "Henrietta is run off her feet. Has Emeka grasped that?",
  "Does the beekeeper get the sense the cider maker is annoyed?",
  // imagined speech
  "Would Emeka say the cider maker is in a foul mood?",
  "How would Henrietta describe Bartosz's mood right now?",
  "What would Odile call Emeka's state of mind this afternoon?",
  "If you asked Bartosz, would he say Henrietta is free?",
  // a sentence-opening clause of one person's seeing, knowing or telling
  "As Bartosz sees it, is Odile worn out?",
  "The way Henrietta tells it, is Emeka free later?",
  "As the beekeeper understands things, is the cider maker upset?",
  "As Odile remembers, was Emeka in a strop?",
  // a perspective whose other person the query does not resolve
  "To Odile's mind, is the new picker coping?",
  "In Henrietta's eyes, is the lad up the ladder slacking?",
  "To Emeka's way of thinking, how is the woman with the clipboard holding up?",
  // an attribution with a participle and its particle, or a person noun phrase after "for"
  "Has Emeka got Odile written off as a grump?",
  "Does Henrietta have the farmhand pegged down as someone who skives?",
  "Has the shop manager got Bartosz figured for a troublemaker?",
  "Does Odile take Emeka for a thoroughly honest old farmer?",
  // a hypothetical judgement with a fronted measure
  "What chance would Henrietta give Bartosz of finishing by six?",
  "What score would the beekeeper put on Odile's temper today?",
  "How much credit does Emeka give his neighbour for keeping calm?",
];

describe("second-order queries read no private state", () => {
  for (const q of SECOND_ORDER) {
    it(q, () => {
      expect(privateReads(q)).toEqual([]);
    });
  }

  it("asks the believer's belief about the other when both are resolved", () => {
    expect(analyseQuery("Is Odile clued in about Henrietta being swamped?", orchard).secondOrder).toMatchObject({ believer: "Odile Fontaine", target: "Henrietta Lowe" });
    expect(analyseQuery("To Emeka's knowledge, is Odile free?", orchard).secondOrder).toMatchObject({ believer: "Emeka Udo", target: "Odile Fontaine" });
    expect(analyseQuery("What's the word from Bartosz on Henrietta's mood?", orchard).secondOrder).toMatchObject({ believer: "Bartosz Wrona", target: "Henrietta Lowe" });
  });

  it("takes the believer from a perspective clause, an attribution and a fronted judgement", () => {
    expect(analyseQuery("As Bartosz sees it, is Odile worn out?", orchard).secondOrder).toMatchObject({ believer: "Bartosz Wrona", target: "Odile Fontaine" });
    expect(analyseQuery("Has Emeka got Odile written off as a grump?", orchard).secondOrder).toMatchObject({ believer: "Emeka Udo", target: "Odile Fontaine" });
    // A role believer ends before its verb, also when a name follows ("the shop manager got Bartosz …").
    expect(analyseQuery("Has the shop manager got Bartosz figured for a troublemaker?", orchard).secondOrder).toMatchObject({ believer: "Henrietta Lowe", target: "Bartosz Wrona" });
    expect(analyseQuery("Does Odile take Emeka for a thoroughly honest old farmer?", orchard).secondOrder).toMatchObject({ believer: "Odile Fontaine", target: "Emeka Udo" });
    expect(analyseQuery("What chance would Henrietta give Bartosz of finishing by six?", orchard).secondOrder).toMatchObject({ believer: "Henrietta Lowe", target: "Bartosz Wrona" });
  });

  it("ends an opening perspective where the question starts when the tokenizer drops its comma", () => {
    expect(analyseQuery("As Bartosz sees it, is Odile worn out?", orchard, { tokenizer: "compromise" }).secondOrder).toMatchObject({ believer: "Bartosz Wrona", target: "Odile Fontaine" });
    expect(analyseQuery("To Emeka's way of thinking, is Henrietta coping?", orchard, { tokenizer: "compromise" }).secondOrder).toMatchObject({ believer: "Emeka Udo", target: "Henrietta Lowe" });
  });

  it("reads no one's private state for a belief frame whose other person is named only indirectly", () => {
    expect(privateReads("Is Henrietta under the impression the cider takings pay for the new roof?")).toEqual([]);
    expect(privateReads("Does the farmhand suspect the spare crates are meant for the village fete?")).toEqual([]);
  });

  it("reads the believer's belief for an evidential frame opening the sentence", () => {
    expect(privateReads("Judging by what Odile has heard, is the farmhand in a mood?")).toEqual([]);
    expect(privateReads("Based on what Henrietta knows, what is Emeka up to?")).toEqual([]);
    expect(analyseQuery("From what Bartosz has seen, where did the shop manager get to?", orchard).secondOrder).toMatchObject({ believer: "Bartosz Wrona", target: "Henrietta Lowe" });
  });

  it("takes the believer before a hyphenated belief verb", () => {
    expect(analyseQuery("Does Henrietta half-believe Emeka will forget the honey order?", orchard).secondOrder).toMatchObject({ believer: "Henrietta Lowe", target: "Emeka Udo" });
  });

  it("reads A's belief about B for what A would do in a hypothetical act aimed at B", () => {
    expect(privateReads("If Emeka wanted to track down Odile, where would he head?")).toEqual([]);
    expect(analyseQuery("If Henrietta set off to find the farmhand, which spot would she check first?", orchard).secondOrder).toMatchObject({ believer: "Henrietta Lowe", target: "Bartosz Wrona" });
  });

  it("resolves the other person of a resident believer's frame by what only they are seen handling", () => {
    expect(analyseQuery("Is Henrietta under the impression the hives will be moved next week?", orchard).secondOrder).toMatchObject({ believer: "Henrietta Lowe", target: "Emeka Udo" });
  });

  it("reads no private state for a belief about someone the query does not resolve", () => {
    expect(privateReads("Is Odile aware that the new picker is exhausted?")).toEqual([]);
    expect(privateReads("Has Henrietta been told that the delivery driver is running late?")).toEqual([]);
  });
});

describe("two people that are no second-order question still read private state", () => {
  it("reads both people of a joined subject", () => {
    expect(privateReads("Are Odile and Bartosz both free for a minute?")).toEqual(["Odile Fontaine", "Bartosz Wrona"]);
  });

  it("reads the person the speaker would act towards, and one whom a request or an order concerns", () => {
    expect(privateReads("Should I tell Odile that Emeka is looking for her?")).toContain("Odile Fontaine");
    expect(privateReads("Odile told Bartosz to take a break. Is she annoyed?")).toContain("Odile Fontaine");
    // The speaker's own wish to know, through a verb taking an infinitive, is no resident's mind.
    expect(privateReads("I only want to know if Emeka is alright. Would it be rude to ask Henrietta?")).toEqual(["Henrietta Lowe"]);
    // The speaker's own people report to the speaker, not a resident's mind.
    expect(privateReads("My sister says the beekeeper was stung twice. Is he okay?")).toContain("Emeka Udo");
  });

  it("reads private state when a hypothetical act asks what the other person would do", () => {
    expect(privateReads("If Odile waved at Bartosz, how soon would Bartosz come over?")).not.toEqual([]);
  });

  it("reads private state when an opening clause is no perspective, or a fronted noun is a time", () => {
    expect(analyseQuery("As Odile walked in, was Bartosz upset?", orchard).secondOrder).toBeNull();
    expect(privateReads("As Odile walked in, was Bartosz upset?")).not.toEqual([]);
    expect(analyseQuery("What time would Henrietta see Bartosz?", orchard).secondOrder).toBeNull();
  });

  it("reads only the person whose state is said, never the one in the clause about them", () => {
    expect(privateReads("Is Henrietta upset that Odile left early?")).toEqual(["Henrietta Lowe"]);
  });

  it("reads one person when a report verb carries no content about anyone", () => {
    expect(privateReads("Should I wake Bartosz to tell him about the delivery?")).toContain("Bartosz Wrona");
    expect(privateReads("Is Henrietta worried about that customer?")).toContain("Henrietta Lowe");
  });
});
