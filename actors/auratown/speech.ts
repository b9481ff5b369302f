// Deterministic wording: conversation templates (the release's fallback dialogue, reference §2.8,
// with its unseeded random.choice replaced by a named stream), town incidents, and reflections.
import type { Draws } from "../rng.ts";
import type { Clock } from "./town.ts";
import type { MemoryItem } from "./memory.ts";

export type Bond = "friend" | "mentor" | "acquaintance";

/** The release's relationship buckets: friend/close/best → friend; mentor/professor/guide/teach → mentor. */
export function bondOf(description: string | undefined): Bond {
  const text = (description ?? "").toLowerCase();
  if (/friend|close|best/.test(text)) return "friend";
  if (/mentor|professor|guide|teach/.test(text)) return "mentor";
  return "acquaintance";
}

const GREETINGS: Record<Bond, readonly string[]> = {
  friend: ["Hey {other}! So good to see you.", "{other}! I was hoping I'd run into you."],
  mentor: ["Ah, {other}, I was just thinking about our last talk.", "{other}, do you have a minute? I'd value your view."],
  acquaintance: ["Hello {other}, nice to see you around.", "Good to see you, {other}."],
};

const TIME_LINES: Record<"morning" | "afternoon" | "evening", readonly string[]> = {
  morning: ["Busy morning so far?", "The morning light is lovely today.", "Did you sleep well?"],
  afternoon: ["How's your afternoon going?", "It's been a long day already.", "I needed this break."],
  evening: ["Nice evening, isn't it?", "Heading home soon?", "What a day it has been."],
};

const REPLIES: readonly string[] = ["Good to see you too. I'm here to {action}.", "Not bad at all; I came to {action}.", "Can't complain. Time to {action}."];

export interface Line {
  readonly speaker: string;
  readonly text: string;
}

export function conversationLines(
  draws: Draws,
  a: { id: string; name: string; action: string; bond: Bond },
  b: { id: string; name: string; action: string },
  clock: Clock,
): Line[] {
  const firstName = (name: string) => name.split(" ").at(-1) ?? name;
  const part = clock.hour < 12 ? "morning" : clock.hour < 17 ? "afternoon" : "evening";
  return [
    { speaker: a.id, text: draws.pick(GREETINGS[a.bond]).replace("{other}", firstName(b.name)) },
    { speaker: b.id, text: draws.pick(REPLIES).replace("{action}", b.action) },
    { speaker: a.id, text: draws.pick(TIME_LINES[part]) },
    { speaker: b.id, text: `I should get back to ${a.action === b.action ? "it" : "things"} soon.` },
  ];
}

const STRESSFUL = [
  "A water pipe broke near {place}.",
  "An argument broke out at {place}.",
  "A delivery van failed to start outside {place}.",
  "Neighbours at {place} are worried about the storm forecast.",
  "A minor emergency drew a crowd at {place}.",
];

const CALM = [
  "A street musician is playing near {place}.",
  "Fresh flowers were delivered to {place}.",
  "A cat is napping in the sun at {place}.",
  "The smell of baking drifts over {place}.",
];

export function incidentText(draws: Draws, place: string, stressful: boolean): string {
  return draws.pick(stressful ? STRESSFUL : CALM).replace("{place}", place);
}

function mostCommon(values: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [v, c] of [...counts.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    if (c > bestCount) {
      best = v;
      bestCount = c;
    }
  }
  return best;
}

/** Two or three insights from the memories retrieval ranks highest (the release's fallback, grounded in memory). */
export function reflectionInsights(memories: readonly MemoryItem[]): string[] {
  const places = memories
    .filter((m) => m.kind === "observation")
    .map((m) => /is at (.+?)\. Time:/.exec(m.content)?.[1])
    .filter((p): p is string => p !== undefined && p !== "somewhere on the road");
  const partners = memories
    .filter((m) => m.kind === "conversation")
    .map((m) => /conversation with (.+?) at /.exec(m.content)?.[1])
    .filter((p): p is string => p !== undefined);
  const insights: string[] = [];
  const place = mostCommon(places);
  if (place !== null) insights.push(`I spend much of my time at ${place}.`);
  const partner = mostCommon(partners);
  if (partner !== null) insights.push(`${partner} and I keep finding time to talk; that matters to me.`);
  const top = memories[0];
  if (top !== undefined) insights.push(`What stays with me: ${top.content.slice(0, 80)}`);
  return insights.slice(0, 3);
}
