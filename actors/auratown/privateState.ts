// The seven-rule private-state table (paper Appendix A3, Table 6; reference §3.2), first match wins.
// Departures from the reference release, each a defect there:
// - workplaces are real location names and may be several (Zhang Hao: home and Town Library);
// - word forms are complete ("serves", "service", "studies" match) and the prefix accidents are
//   gone ("restock" no longer counts as rest, "ready" no longer as read);
// so that every rule can fire from ordinary routine wording.
import type { AvailabilityType, RuleIdType } from "./events.ts";

export interface PrivateState {
  readonly availability: AvailabilityType;
  readonly emotional_state: string;
  readonly unspoken_goal: string | null;
  readonly rule: RuleIdType;
}

export interface RuleInput {
  readonly action: string;
  /** Named location the agent stands in, or null on the road. */
  readonly location: string | null;
  /** Other agents at the same named location. */
  readonly nearbyCount: number;
  readonly hour: number;
  readonly minute: number;
  /** Descriptions of the last 8 events of the town feed, this tick's included. */
  readonly recentEvents: readonly string[];
  readonly previousEmotion: string;
  readonly workplaces: readonly string[];
  /** Opening hours [from, to): the workplace counts as open when from ≤ hour < to. */
  readonly openHours: readonly [number, number];
}

// Objects built here and in the hot payloads list their keys in sorted order, so canonical JSON
// can take its no-copy fast path (events/canonical.ts).
export const initialPrivateState: PrivateState = { availability: "available", emotional_state: "neutral", rule: "default", unspoken_goal: null };

const SLEEP = /\bsleep/;
const BUSY = [/\bserv(?:e|es|ed|ing|ice)\b/, /\bbrew/, /\bbak(?:e|es|ing)\b/, /\brestock/, /\bclos(?:e|es|ing) (?:up|down|out)\b/, /\brush\b/];
const FOCUS = [/\bwrit(?:e|es|ing)\b/, /\bdraft(?:s|ing)?\b/, /\bchapter\b/, /\bstud(?:y|ies|ying)\b/, /\bresearch/, /\bmeditat/];
const RELAXED = [/\bwalk/, /\brest(?:s|ing)?\b/, /\bread(?:s|ing)?\b/, /\btai chi\b/, /\bstargaz/, /\bsleep/, /\beat(?:s|ing)?\b/, /\blunch/, /\bbreakfast/, /\bdinner/];
const STRESS = /\b(?:argument|emergency|failed|broke|worried)\b/;

const BREAKS = [12 * 60, 18 * 60];

function rushGoal(hour: number, minute: number): string {
  const now = hour * 60 + minute;
  const next = BREAKS.find((b) => b >= now);
  if (next === undefined) return "wants to clear the queue";
  return `wants to close out the current rush before the next break in ${next - now} min`;
}

function focusGoal(action: string): string | null {
  if (/writ|draft|chapter/.test(action)) return "wants to finish a writing milestone before sunset";
  if (/stud/.test(action)) return "trying to make progress on the current syllabus before the next class";
  if (/research/.test(action)) return "tracking down a specific reference";
  if (/meditat/.test(action)) return "wants undisturbed quiet to settle the mind";
  return null;
}

/** What the rules read from an action's wording (lower-cased), worked out once per distinct action. */
interface ActionWording {
  readonly sleep: boolean;
  readonly busy: boolean;
  readonly focus: boolean;
  readonly relaxed: boolean;
  readonly focusGoal: string | null;
}

// Every agent's rules run every tick, and a town has a few dozen distinct actions: matching ~25
// patterns against each agent's action each tick was most of the rule table's cost (pure memo).
const wordings = new Map<string, ActionWording>();
function wordingOf(action: string): ActionWording {
  let known = wordings.get(action);
  if (known === undefined) {
    const lower = action.toLowerCase();
    known = {
      sleep: SLEEP.test(lower),
      busy: BUSY.some((p) => p.test(lower)),
      focus: FOCUS.some((p) => p.test(lower)),
      relaxed: RELAXED.some((p) => p.test(lower)),
      focusGoal: focusGoal(lower),
    };
    if (wordings.size < 10_000) wordings.set(action, known);
  }
  return known;
}

// Every agent reads the same feed (one `town.feed` payload, whose list is never changed): whether
// it holds a stressful event is worked out once per list (pure memo).
const stressIn = new WeakMap<readonly string[], boolean>();
function recentStress(events: readonly string[]): boolean {
  let known = stressIn.get(events);
  if (known === undefined) stressIn.set(events, (known = events.slice(-8).some((e) => STRESS.test(e.toLowerCase()))));
  return known;
}

/**
 * The first matching rule. `recentEvents` is read as given when evaluated: a caller that changes
 * a list after passing it must pass a new list (the town's feed payloads are never changed).
 */
export function evaluatePrivateState(input: RuleInput): PrivateState {
  const wording = wordingOf(input.action);
  if (wording.sleep) return { availability: "do_not_disturb", emotional_state: "resting", rule: "sleep", unspoken_goal: null };
  const atWork = input.location !== null && input.workplaces.includes(input.location);
  if (atWork && input.nearbyCount >= 3 && wording.busy) {
    return { availability: "busy", emotional_state: "tired-focused", rule: "workplace_loaded", unspoken_goal: rushGoal(input.hour, input.minute) };
  }
  if (wording.focus) {
    return { availability: "do_not_disturb", emotional_state: "creatively flowing", rule: "deep_focus", unspoken_goal: wording.focusGoal };
  }
  const [opens, closes] = input.openHours;
  if (atWork && input.nearbyCount === 0 && input.hour >= opens && input.hour < closes) {
    return { availability: "available", emotional_state: "lonely", rule: "workplace_empty", unspoken_goal: "hoping a regular drops by for conversation" };
  }
  if (wording.relaxed) {
    const prev = input.previousEmotion;
    const emotion = prev === "tired-focused" || prev === "stressed" ? "recovering" : prev === "lonely" ? "lonely" : "calm";
    return { availability: "available", emotional_state: emotion, rule: "relaxed", unspoken_goal: null };
  }
  if (recentStress(input.recentEvents)) {
    return { availability: "available", emotional_state: "stressed", rule: "recent_stress", unspoken_goal: null };
  }
  return { availability: "available", emotional_state: "neutral", rule: "default", unspoken_goal: null };
}

export const samePrivateState = (a: PrivateState, b: PrivateState): boolean =>
  a.availability === b.availability && a.emotional_state === b.emotional_state && a.unspoken_goal === b.unspoken_goal && a.rule === b.rule;
