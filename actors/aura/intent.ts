// The IntentInferrer's deterministic backend and the gap→budget map (paper §3.2–3.3, A1).
//
// The released heuristic (15 marker words, gap = 0.2·hits) gives gap 0 to most availability and
// latent-goal queries. This backend instead reads the query's *structure* against the scene's
// public layer, so it carries over to scenes and wordings it has not seen:
//   1. who is the topic: roster names mentioned (possessives count), a place whose occupants are
//      meant ("who's at …", "the group at …", "the atmosphere at …"), or everyone ("anyone");
//   2. whether it is about someone's mind rather than the world (a roster name right before a
//      mental verb — think, believe, assume, expect, know … — or "from X's perspective"): then the
//      need is the believer's belief about the other person, never the other's private state;
//   3. which hidden fields the need touches: asking where someone is or what they do is, in a
//      social scene, asking whether they can be approached (availability, emotional state);
//      appropriateness ("should I", "good time", "can I ask") also needs what they are privately
//      dealing with (unspoken goal); motive and agenda cues ("why", "up to", "on … mind") need the
//      goal; schedule cues ("planning", "heading", "stop by", "invite", "tonight") need the plan;
//   4. what the literal question is (place, activity, presence, time, plan), answered from the
//      observed public scene.
// Cue lists are general English, not the benchmark's wording; the held-out tests use other names,
// places and phrasings.
import type { IntentFramePayload } from "../../events/probes.ts";
import { mentionedLocation, mentionedNames, normalise, type PublicRow } from "./scene.ts";

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
  readonly secondOrder: { readonly believer: string; readonly target: string; readonly fields: readonly ("availability" | "emotional_state")[] } | null;
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

const any = (t: string, patterns: readonly RegExp[]) => patterns.some((p) => p.test(t));
const w = (s: string) => new RegExp(`(^| )(${s})( |$)`);

const MENTAL = "think|thinks|thought|believe|believes|believed|assume|assumes|expect|expects|suppose|supposes|reckon|reckons|know|knows|realise|realises|realize|realizes|imagine|imagines|guess|guesses|suspect|suspects|feel that|feels that";
const PERSPECTIVE = ["perspective", "point of view", "eyes", "view", "impression", "opinion", "mind"];

const AVAILABILITY_CUES = [w("free|busy|available|availability|interrupt|interrupted|disturb|disturbed|bother|bothering|catch|reach|approach|alone|solitude|company|occupied|tied up|swamped|bandwidth|join|talk|chat|chatting|around")];
const EMOTION_CUES = [w("mood|moods|feel|feeling|feelings|emotion|emotional|happy|sad|upset|stressed|stress|anxious|cheerful|angry|annoyed|okay|ok|doing ok|good day|bad day|atmosphere|vibe|seem|seems|look|looks|receptive|tense|tension|how's|how is|hows")];
const GOAL_CUES = [w("why|up to|planning|plans|goal|goals|hoping|hope|trying|motive|motives|intend|intends|purpose|reason|mind|lately|these days|secret|secrets|hiding|avoid|avoiding|avoids|wants|want to|worried|worrying|preoccupied|agenda")];
const PLAN_CUES = [w("planning|planned|plans for|schedule|scheduled|up to|heading|headed|this morning|this afternoon|this evening|tonight|tomorrow|later today|later|stop by|drop by|come by|swing by|visit|invite|meet up|meet")];
const APPROPRIATE_CUES = [w("should i|should we|good time|good moment|right time|bad time|is it ok|is it okay|okay to|ok to|can i|could i|may i|would it be|appropriate|invite|bring up|ask .* for|ask .* about|interrupt")];
const GROUP_CUES = [w("anyone|anybody|someone|somebody|everyone|everybody|people|folks|group|crowd|who|who's|whos|atmosphere|vibe|team|regulars")];
const ALL_CUES = [w("anyone|anybody|someone|somebody|everyone|everybody|people|folks|any of them")];
const LITERAL_ONLY = [w("what time|what day|what date|where am i|how many|how far|what season|weather|raining|indoors|outdoors")];
const TIME_CUES = [w("now|right now|time|moment|today|tonight|this morning|this afternoon|this evening|hour")];
const SELF_ONLY = [w("i|me|my|am i")];

/** Reads the query against the perceived scene. Pure and deterministic. */
export function analyseQuery(text: string, scene: PerceivedScene): QueryAnalysis {
  const t = normalise(text);
  const roster = Object.keys(scene.public).sort();
  const locations = [...new Set(roster.map((n) => scene.public[n]!.location))].sort();
  const mentioned = mentionedNames(text, roster);
  const location = mentionedLocation(text, locations);
  const second = secondOrderOf(t, mentioned);
  const appropriateness = any(t, APPROPRIATE_CUES);
  const wantsPlan = any(t, PLAN_CUES);
  const literalOnly = mentioned.length === 0 && any(t, LITERAL_ONLY) && !any(t, [...AVAILABILITY_CUES, ...EMOTION_CUES]);

  let scope: Scope = { kind: "none" };
  if (second !== null) scope = { kind: "person", agents: [second.believer] };
  else if (mentioned.length > 0) scope = { kind: "person", agents: mentioned };
  else if (!literalOnly && location !== null && any(t, GROUP_CUES)) {
    scope = { kind: "location", location, agents: roster.filter((n) => scene.public[n]!.location === location) };
  } else if (!literalOnly && any(t, ALL_CUES)) scope = { kind: "all", agents: roster };
  else if (!literalOnly && any(t, GROUP_CUES) && !any(t, SELF_ONLY)) scope = { kind: "location", location: scene.focus, agents: roster.filter((n) => scene.public[n]!.location === scene.focus) };

  const hidden: HiddenField[] = [];
  if (second === null && scope.kind !== "none") {
    // People are asked about because the user may want to approach them: reachability and mood.
    hidden.push("availability", "emotional_state");
    if (appropriateness || any(t, GOAL_CUES)) hidden.push("unspoken_goal");
  }

  const asked: HiddenField[] = [];
  if (second === null && scope.kind !== "none") {
    if (any(t, AVAILABILITY_CUES)) asked.push("availability");
    if (any(t, EMOTION_CUES)) asked.push("emotional_state");
    if (any(t, GOAL_CUES)) asked.push("unspoken_goal");
  }

  const literal: QueryAnalysis["literal"][number][] = [];
  if (/ where /.test(t) || / at (the )?/.test(t) || / still (at|in) /.test(t)) literal.push("location");
  if (/ doing | up to | busy | action /.test(t) || scope.kind === "person") literal.push("action");
  if (scope.kind === "location" || scope.kind === "all" || / who /.test(t)) literal.push("presence");
  if (any(t, TIME_CUES)) literal.push("time");
  if (wantsPlan) literal.push("plan");
  if (/ how many /.test(t)) literal.push("count");

  return { mentioned, location, scope, secondOrder: second, hidden, asked, wantsPlan: wantsPlan && second === null, literal: [...new Set(literal)], appropriateness, literalOnly };
}

function secondOrderOf(t: string, mentioned: readonly string[]): QueryAnalysis["secondOrder"] {
  if (mentioned.length < 2) return null;
  const slug = (n: string) => normalise(n).trim();
  let believer: string | undefined;
  for (const name of mentioned) {
    const n = slug(name);
    const mental = new RegExp(` ${n}('s)? (really |still |actually |now |already )?(${MENTAL}) `);
    const perspective = new RegExp(` ${n}'s (${PERSPECTIVE.join("|")}) | according to ${n} | as far as ${n} (knows|can tell) | in ${n}'s (${PERSPECTIVE.join("|")}) `);
    if (mental.test(t) || perspective.test(t)) {
      believer = name;
      break;
    }
  }
  if (believer === undefined) return null;
  const target = mentioned.find((n) => n !== believer)!;
  const fields: ("availability" | "emotional_state")[] = [];
  if (any(t, EMOTION_CUES)) fields.push("emotional_state");
  if (any(t, AVAILABILITY_CUES)) fields.push("availability");
  return { believer, target, fields: fields.length === 0 ? ["availability", "emotional_state"] : fields };
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
