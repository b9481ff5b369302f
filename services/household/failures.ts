// The failure taxonomy (digest §5.5; the paper audited failures by hand) where the log lets it be
// derived: why an attempt failed functionally, and why its literal probes failed. Each tag is read
// off the records and the task's mechanics, never off a message's wording.
import type { HouseholdEndedPayload, HouseholdMessagePayload, HouseholdProbeAnsweredPayload, HouseholdResolvedPayload } from "../../actors/household/events.ts";
import { show } from "../../actors/household/pddl.ts";
import { compileTask, initialRoomOf, type HouseholdTask } from "../../actors/household/task.ts";
import type { LogRecord } from "../../events/record.ts";
import { probesOf } from "./metrics.ts";

export const FUNCTIONAL_FAILURES = {
  never_communicated: "a needed goal fact stayed with agents barred from it: no message carried it",
  told_not_achieved: "a needed goal fact was sent, but not achieved before the end",
  message_budget_exhausted: "a message was blocked: its sender had used its message limit",
  wrong_target: "a message was blocked: a recipient outside the sender's allowed targets",
  restricted_room: "an agent tried to enter a room barred to it",
  turn_limit: "the episode ran out of turns",
} as const;

export const LITERAL_FAILURES = {
  leaf_false_at_end: "a root probe's fact did not hold in the final world (or the agent denied it)",
  partner_knowledge_unknown: "a root probe's agent could not say what its partner would report",
  partner_knowledge_wrong: "a root probe's agent predicted another answer than its partner gave",
} as const;

export type FunctionalFailure = keyof typeof FUNCTIONAL_FAILURES;
export type LiteralFailure = keyof typeof LITERAL_FAILURES;

const of = <T>(records: readonly LogRecord[], type: string): T[] => records.filter((r) => r.type === type).map((r) => r.payload as T);

/** Why a failed attempt failed, functionally (empty for a success). */
export function functionalFailures(records: readonly LogRecord[]): FunctionalFailure[] {
  const header = records.find((r) => r.type === "episode.started" || r.type === "episode.forked");
  const task = (header?.payload as { config?: { task?: HouseholdTask } } | undefined)?.config?.task;
  const end = of<HouseholdEndedPayload>(records, "household.ended").at(-1);
  if (task === undefined || end?.success === true) return [];
  const c = compileTask(task);
  const m = c.mechanics;
  const tags = new Set<FunctionalFailure>();
  const messages = of<HouseholdMessagePayload>(records, "household.message");
  const sent: Record<string, number> = {};
  for (const msg of messages) {
    if (msg.status === "queued") sent[msg.from] = (sent[msg.from] ?? 0) + 1;
    else if (m.msgLimit[msg.from] !== undefined && (sent[msg.from] ?? 0) >= m.msgLimit[msg.from]!) tags.add("message_budget_exhausted");
    else if (m.allowedTargets[msg.from] !== undefined && msg.to.some((t) => !m.allowedTargets[msg.from]!.includes(t))) tags.add("wrong_target");
  }
  for (const r of of<HouseholdResolvedPayload>(records, "household.resolved")) {
    if (r.ok || !r.action.startsWith("Navigate[")) continue;
    const target = r.action.slice("Navigate[".length, -1);
    const room = task.scene.rooms.includes(target) ? target : task.scene.furniture[target]?.room;
    if (room !== undefined && (m.restricted[r.agent] ?? []).includes(room)) tags.add("restricted_room");
  }
  const latched = new Set(end?.latched ?? []);
  const carried = (fact: string) => messages.some((msg) => msg.status === "queued" && msg.text.includes(fact));
  for (const l of c.functional) {
    const fact = show(l);
    if (latched.has(fact)) continue;
    // Who knew it from the start, and whether any of them could reach every room it names.
    const knowers = Object.entries(task.agent_secrets).filter(([, ss]) => ss.some((s) => s.includes(fact))).map(([a]) => a);
    const rooms = l.args.map((a) => initialRoomOf(task, a)).filter((r): r is string => r !== null);
    const someoneCan = knowers.some((a) => rooms.every((r) => !(m.restricted[a] ?? []).includes(r)));
    if (carried(fact)) tags.add("told_not_achieved");
    else if (!someoneCan) tags.add("never_communicated");
  }
  if (end?.reason === "turn_limit") tags.add("turn_limit");
  return [...tags];
}

/** Why the literal probes failed (empty when every root passed or none was asked). */
export function literalFailures(records: readonly LogRecord[]): LiteralFailure[] {
  const scored = probesOf(records);
  if (scored === null || scored.pass) return [];
  const answers = new Map(of<HouseholdProbeAnsweredPayload>(records, "household.probeAnswered").flatMap((a) => a.answers.map((x) => [x.probeId, x] as const)));
  const tags = new Set<LiteralFailure>();
  for (const p of scored.probes) {
    if (!p.root || p.passed) continue;
    if (p.basis === "world") tags.add("leaf_false_at_end");
    else tags.add(answers.get(p.probeId)?.holds === null ? "partner_knowledge_unknown" : "partner_knowledge_wrong");
  }
  return [...tags];
}
