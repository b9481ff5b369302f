// The deterministic inferrer on the 8 environment tools (factual grounding and the privacy slice,
// paper §5.1, A10). It reads which fact the question is about — the clock, the asker's own place,
// who is near the asker, a named place, everyone, the asker's past or plan, recent town events —
// and recommends only the tools that hold that fact. Memories, events and plans are personal or
// historical: they are recommended only when the question is about the asker's past or plans, so
// a plain factual question never discloses them. Questions the registry cannot answer (weather,
// season) get gap ≈ 0: no probe can help.
import type { IntentFramePayload } from "../../events/probes.ts";
import { mentionedLocation, mentionedNames, normalise } from "./scene.ts";

export interface FactualAnalysis {
  /** Tools that hold the asked-for fact, most direct first; `location` argument when a place is named. */
  readonly tools: readonly { readonly tool: string; readonly location: string | null }[];
  readonly place: string | null;
  readonly unanswerable: boolean;
}

const has = (t: string, re: RegExp) => re.test(t);

export function analyseFactual(text: string, locations: readonly string[], types: Readonly<Record<string, string>> = {}, roster: readonly string[] = []): FactualAnalysis {
  const t = normalise(text);
  // A resident named in the question is a person, not a place: "Where is Zhang Hao?" does not ask
  // about Zhang Hao's Home (a place named in full still counts: "is anyone at Zhang Hao's Home").
  const people = mentionedNames(text, roster);
  const unnamed = people.reduce((s, n) => s.replace(new RegExp(n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi"), " "), text);
  const u = normalise(unnamed);
  // A place named by name, by a distinctive word of its name, or by its type ("a park", "the cafe").
  let place = [...locations].sort((a, b) => b.length - a.length).find((l) => t.includes(normalise(l))) ?? mentionedLocation(unnamed, locations);
  if (place === null) {
    const byType = Object.entries(types).sort(([a], [b]) => (a < b ? -1 : 1)).find(([, type]) => new RegExp(` ${type}s? `).test(u));
    place = byType?.[0] ?? null;
  }
  const out: { tool: string; location: string | null }[] = [];
  const add = (tool: string, location: string | null = null) => {
    if (!out.some((o) => o.tool === tool)) out.push({ tool, location });
  };
  const past = has(t, / (have i|did i|i have been|i've been|memor(y|ies)|remember|recently|last time|last eat|talk(ed)? (to|with|about)|met|insights|learned|interacted|happened to me|unfinished) /);
  const plan = has(t, / (my plan|plan for|should i do next|rest of the day|schedule|what should i|should i stay|productive|lunch) /);
  const events = has(t, / (happened|happening|event|events|conversation|conversations|unusual|interesting) /) && !has(t, / what time /);
  const unanswerable = has(t, / (weather|raining|rain|season|snow|sunny) /);
  // "today" dates a question about the weather; it does not ask for the clock.
  // Time words that date an events question ("in the last hour", "today") ask for events, not the clock.
  const time = has(t, / (time|hour|morning|afternoon|evening|noon|day is|what day|minutes|sun up|sun down|open at|at this hour|today) /) && !past && !unanswerable && !events;
  const self = has(t, / (where am i|am i (at|in|inside|indoors|outdoors|currently)|this location|this place|kind of place|here|indoors|outdoors|inside or outside|nearby places|places are nearby) /);
  const near = has(t, / (with me|around me|near me|nearby|who is nearby|people are with|townspeople around) /) && !has(t, / places /);
  const everyone = has(t, / (everyone|all agents|agents are|how many (people|agents)|who else|lives in|active right now|distinct locations|in town in total) /);

  if (time) add("get_time");
  if (place !== null && !self) add("get_location_info", place);
  if (self || (place !== null && / (from here|how far|how do i get) /.test(t))) add("get_location");
  if (place !== null && self && / (from here|how far|how do i get) /.test(t)) add("get_location_info", place);
  if (near) add("get_nearby_agents");
  // "How many people are with me" is about the asker's company, not the whole town.
  // A named resident's whereabouts or doings are in the agents summary (no tool reads one person).
  if (!near && (everyone || (people.length > 0 && !past && !plan) || (place === null && has(t, / (anyone|who is|is there a|any .* in town) /) && !self))) add("get_all_agents");
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
