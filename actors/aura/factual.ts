// The deterministic inferrer on the 8 environment tools (factual grounding and the privacy slice,
// paper §5.1, A10). It reads which fact the question is about — the clock, the asker's own place,
// who is near the asker, a named place, everyone, the asker's past or plan, recent town events —
// and recommends only the tools that hold that fact. Memories, events and plans are personal or
// historical: they are recommended only when the question is about the asker's past or plans, so
// a plain factual question never discloses them. Questions the registry cannot answer (weather,
// season) get gap ≈ 0: no probe can help. It reads the question with the same tokens and vocabulary
// as the implicit-intent analyser (language/), not with phrases.
import type { IntentFramePayload } from "./events.ts";
import { placeOf } from "./intent.ts";
import { hasCue, isPersonNoun } from "./language/lexicon.ts";
import { tokenize } from "./language/tokens.ts";
import { mentionedNames } from "./scene.ts";

export interface FactualAnalysis {
  /** Tools that hold the asked-for fact, most direct first; `location` argument when a place is named. */
  readonly tools: readonly { readonly tool: string; readonly location: string | null }[];
  readonly place: string | null;
  readonly unanswerable: boolean;
}

const NEAR_PREPOSITIONS = new Set(["with", "around", "near", "beside", "by", "next", "close"]);

/**
 * Which fact a question asks for, from its tokens and the vocabulary's fact categories
 * (data/aura/intent-lexicon.json, `fact_*`), read structurally: the asker's past is a first-person
 * question in the past tense or about memory; the asker's plan is a plan word or a first-person
 * question about what to do; the asker's company is a first-person object after "with / around /
 * near"; a named place, resident or group decides the place and people tools.
 */
export function analyseFactual(text: string, locations: readonly string[], types: Readonly<Record<string, string>> = {}, roster: readonly string[] = []): FactualAnalysis {
  const tokens = tokenize(text);
  const cue = (c: Parameters<typeof hasCue>[1]) => hasCue(tokens, c);
  // A resident named in the question is a person, not a place: asking where a resident is does not
  // ask about the home named after them (a place named in full still counts).
  const people = mentionedNames(text, roster);
  const named = placeOf(text, tokens, locations, new Set(), true);
  const nameTokens = new Set<number>();
  for (const n of people) {
    const words = n.toLowerCase().split(/\s+/);
    tokens.forEach((_, i) => words.every((w, k) => tokens[i + k]?.text === w) && words.forEach((__, k) => nameTokens.add(i + k)));
  }
  let place = named?.location ?? placeOf(text, tokens, locations, nameTokens)?.location ?? null;
  if (place === null) {
    // By its type ("a park", "the bakery"): the first place of that type.
    const byType = Object.entries(types).sort(([x], [y]) => (x < y ? -1 : 1)).find(([, type]) => tokens.some((t, i) => !nameTokens.has(i) && (t.text === type.toLowerCase() || t.lemma === type.toLowerCase())));
    place = byType?.[0] ?? null;
  }
  const firstPerson = tokens.some((t) => hasCue([t], "first_person"));
  const pastTense = tokens.some((t) => t.text === "did" || t.text === "was" || t.text === "were" || t.text === "had") || tokens.some((t, i) => t.lemma === "have" && tokens[i + 1]?.pos === "VERB");
  const past = (firstPerson && (pastTense || cue("fact_past"))) || (cue("fact_past") && !cue("fact_events"));
  const plan = cue("fact_plan") || (firstPerson && tokens.some((t, i) => hasCue([t], "appropriateness_modal") && tokens.slice(i + 1, i + 4).some((u) => u.lemma === "do")));
  const events = cue("fact_events") && !past;
  const unanswerable = cue("fact_unanswerable");
  const time = cue("fact_time") && !past && !unanswerable && !events && !plan;
  // The asker's own place: "here", "this place", or a first-person "be" with a place preposition
  // ("am I inside the museum", "which hall am I in"); "outside" in a weather question is not.
  const amI = tokens.some((t, i) => t.lemma === "be" && tokens[i + 1] !== undefined && hasCue([tokens[i + 1]!], "first_person") && (tokens.some((u) => u.text === "where") || tokens.slice(i + 2, i + 5).some((u) => u.text === "at" || u.text === "in" || u.text === "inside" || u.text === "near")));
  const self = (cue("fact_self") || amI) && !unanswerable;
  const near = cue("fact_near") || tokens.some((t, i) => NEAR_PREPOSITIONS.has(t.text) && (tokens[i + 1]?.text === "me" || tokens[i + 2]?.text === "me"));
  // The town's people: an everyone word, or "how many" people; at a named place, that place's tool answers.
  const howManyPeople = tokens.some((t, i) => t.text === "how" && tokens[i + 1]?.text === "many" && tokens[i + 2] !== undefined && (isPersonNoun(tokens[i + 2]!.lemma) || hasCue([tokens[i + 2]!], "group")));
  const everyone = place === null && (cue("fact_everyone") || cue("group") || howManyPeople);
  const distance = tokens.some((t) => t.text === "far" || t.text === "distance") || tokens.some((t, i) => t.text === "get" && tokens[i + 1]?.text === "to");

  const out: { tool: string; location: string | null }[] = [];
  const add = (tool: string, location: string | null = null) => {
    if (!out.some((o) => o.tool === tool)) out.push({ tool, location });
  };
  if (time) add("get_time");
  if (place !== null && !self) add("get_location_info", place);
  if (self || (place !== null && distance)) add("get_location");
  if (place !== null && self && distance) add("get_location_info", place);
  if (near) add("get_nearby_agents");
  // "How many people are with me" is about the asker's company, not the whole town; a named
  // resident's whereabouts or doings are in the agents summary (no tool reads one person).
  if (!near && !self && (everyone || (people.length > 0 && !past && !plan))) add("get_all_agents");
  if (past) add("get_recent_memories");
  if (plan) add("get_agent_plan");
  if (events) add("get_recent_events");
  return { tools: unanswerable && out.length === 0 ? [] : out, place, unanswerable: unanswerable && out.length === 0 };
}

export function factualGap(a: FactualAnalysis): number {
  if (a.tools.length === 0) return 0.1;
  return Math.min(1, 0.25 + 0.2 * (a.tools.length - 1));
}

export function factualFrame(text: string, a: FactualAnalysis): IntentFramePayload {
  const gap = factualGap(a);
  return {
    literal_need: text,
    implicit_need: [],
    gap,
    recommended_probes: a.tools.map((x) => x.tool),
    should_alert: false,
    confidence: a.tools.length === 0 ? 0.6 : 0.8,
    rationale: `deterministic (environment registry): ${a.unanswerable ? "no tool holds this fact" : a.tools.length === 0 ? "answerable from the observed scene" : `facts in ${a.tools.map((x) => x.tool).join(", ")}`}${a.place === null ? "" : `; place: ${a.place}`}`,
  };
}
