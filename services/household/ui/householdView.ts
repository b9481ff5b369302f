// The household's view in `probetown ui`: per turn, what each agent did and saw, the messages, the
// rooms and objects as the agents saw them, and each agent's knowledge so far (its secrets, the
// latest view it logged of each room, the messages it received); after the episode, the K-goal
// tree with each K-probe's answer and score. All from the records the world writes
// (actors/household/events.ts); the house's hidden state is not in the log and is not shown.
import type { LogRecord } from "../../../events/record.ts";
import type {
  HouseholdDecidedPayload,
  HouseholdEndedPayload,
  HouseholdLatchedPayload,
  HouseholdMessagePayload,
  HouseholdObservedPayload,
  HouseholdProbeAnsweredPayload,
  HouseholdProbePayload,
  HouseholdProbeScoredPayload,
  HouseholdResolvedPayload,
} from "../../../actors/household/events.ts";
import type { WorldUi } from "../../kernel/worldModule.ts";

type RoomView = HouseholdObservedPayload["rooms"][number];

/** An agent's knowledge after a turn: each room as it last saw it (and when), and what it was told. */
export interface AgentKnowledge {
  readonly agent: string;
  readonly room: string | null;
  readonly holding: string | null;
  readonly rooms: readonly (RoomView & { readonly seenAt: number })[];
  readonly told: readonly { readonly turn: number; readonly from: string; readonly text: string }[];
}

export interface HouseholdTurn {
  readonly turn: number;
  readonly actions: readonly { readonly agent: string; readonly action: string; readonly why: string | null; readonly ok: boolean | null; readonly reason: string | null; readonly effects: readonly string[] }[];
  readonly messages: readonly HouseholdMessagePayload[];
  readonly latched: readonly string[];
  /** Every room some agent saw at the end of this turn, with who saw it. */
  readonly rooms: readonly (RoomView & { readonly seenBy: readonly string[] })[];
  readonly knowledge: readonly AgentKnowledge[];
}

export interface KProbeNode {
  readonly probeId: string;
  readonly agent: string;
  readonly depth: number;
  readonly subjects: readonly string[];
  readonly fact: string;
  readonly answer: { readonly predicate: string; readonly args: readonly string[]; readonly holds: boolean | null } | null;
  readonly score: { readonly root: boolean; readonly basis: "world" | "child"; readonly passed: boolean } | null;
  readonly children: readonly KProbeNode[];
}

export interface HouseholdViewData {
  readonly title: string | null;
  readonly goal: string | null;
  readonly secrets: Readonly<Record<string, readonly string[]>>;
  readonly turns: readonly HouseholdTurn[];
  readonly ended: HouseholdEndedPayload | null;
  readonly kTree: readonly KProbeNode[];
  readonly kScore: { readonly roots: number; readonly passedRoots: number; readonly score: number; readonly pass: boolean } | null;
}

function kTree(asked: readonly HouseholdProbePayload[], answered: readonly HouseholdProbeAnsweredPayload[], scored: HouseholdProbeScoredPayload | null): KProbeNode[] {
  const answers = new Map(answered.flatMap((a) => a.answers.map((x) => [x.probeId, x] as const)));
  const scores = new Map((scored?.probes ?? []).map((s) => [s.probeId, s] as const));
  const flat = asked.flatMap((a) => a.probes.map((p) => ({ ...p, agent: a.agent })));
  // A node "agent knows that subjects[0] knows … fact" has as child the node its first subject heads, one level down, on the same fact.
  const build = (p: (typeof flat)[number]): KProbeNode => {
    const a = answers.get(p.probeId);
    const s = scores.get(p.probeId);
    const child = flat.filter((c) => c.agent === p.subjects[0] && c.depth === p.depth - 1 && c.fact === p.fact);
    return { probeId: p.probeId, agent: p.agent, depth: p.depth, subjects: p.subjects, fact: p.fact, answer: a === undefined ? null : { predicate: a.predicate, args: a.args, holds: a.holds }, score: s === undefined ? null : { root: s.root, basis: s.basis, passed: s.passed }, children: child.map(build) };
  };
  const roots = flat.filter((p) => (scored === null ? !flat.some((q) => q.depth === p.depth + 1 && q.subjects[0] === p.agent && q.fact === p.fact) : scores.get(p.probeId)?.root === true));
  return roots.map(build);
}

export function householdViewData(records: readonly LogRecord[]): HouseholdViewData {
  const header = records[0]?.payload as { config?: { task?: { title?: string; goal?: string; agent_secrets?: Record<string, string[]>; agents?: Record<string, unknown> } } } | undefined;
  const task = header?.config?.task;
  const turns = new Map<number, { decided: HouseholdDecidedPayload[]; resolved: HouseholdResolvedPayload[]; messages: HouseholdMessagePayload[]; latched: string[]; observed: HouseholdObservedPayload[] }>();
  const turnOf = (t: number) => {
    let found = turns.get(t);
    if (found === undefined) turns.set(t, (found = { decided: [], resolved: [], messages: [], latched: [], observed: [] }));
    return found;
  };
  let ended: HouseholdEndedPayload | null = null;
  const asked: HouseholdProbePayload[] = [];
  const answered: HouseholdProbeAnsweredPayload[] = [];
  let scored: HouseholdProbeScoredPayload | null = null;
  for (const r of records) {
    const p = r.payload as { turn: number };
    switch (r.type) {
      case "household.decided": turnOf(p.turn).decided.push(r.payload as HouseholdDecidedPayload); break;
      case "household.resolved": turnOf(p.turn).resolved.push(r.payload as HouseholdResolvedPayload); break;
      case "household.message": turnOf(p.turn).messages.push(r.payload as HouseholdMessagePayload); break;
      case "household.latched": turnOf(p.turn).latched.push((r.payload as HouseholdLatchedPayload).conjunct); break;
      case "household.observed": turnOf(p.turn).observed.push(r.payload as HouseholdObservedPayload); break;
      case "household.ended": ended = r.payload as HouseholdEndedPayload; break;
      case "household.probe": asked.push(r.payload as HouseholdProbePayload); break;
      case "household.probeAnswered": answered.push(r.payload as HouseholdProbeAnsweredPayload); break;
      case "household.probeScored": scored = r.payload as HouseholdProbeScoredPayload; break;
    }
  }
  const agents = [...new Set([...Object.keys(task?.agents ?? {}), ...[...turns.values()].flatMap((t) => t.observed.map((o) => o.agent))])].sort();
  // Each agent's knowledge, folded turn by turn from its own observations.
  const known = new Map(agents.map((a) => [a, { room: null as string | null, holding: null as string | null, rooms: new Map<string, RoomView & { seenAt: number }>(), told: [] as AgentKnowledge["told"][number][] }]));
  const out: HouseholdTurn[] = [];
  for (const [turn, t] of [...turns.entries()].sort(([a], [b]) => a - b)) {
    const seen = new Map<string, RoomView & { seenBy: string[] }>();
    for (const o of t.observed) {
      const k = known.get(o.agent)!;
      k.room = o.room;
      k.holding = o.holding;
      for (const v of o.rooms) {
        k.rooms.set(v.room, { ...v, seenAt: turn });
        const s = seen.get(v.room);
        if (s === undefined) seen.set(v.room, { ...v, seenBy: [o.agent] });
        else s.seenBy.push(o.agent);
      }
      for (const m of o.messages) k.told.push({ turn, from: m.from, text: m.text });
    }
    const result = new Map(t.resolved.map((x) => [x.agent, x]));
    const actions = [...new Set([...t.decided.map((d) => d.agent), ...t.resolved.map((x) => x.agent)])].sort().map((agent) => {
      const d = t.decided.find((x) => x.agent === agent);
      const x = result.get(agent);
      return { agent, action: x?.action ?? d!.action, why: d?.why ?? null, ok: x?.ok ?? null, reason: x?.reason ?? null, effects: x?.effects ?? [] };
    });
    out.push({
      turn,
      actions,
      messages: t.messages,
      latched: t.latched,
      rooms: [...seen.values()].sort((a, b) => (a.room < b.room ? -1 : 1)),
      knowledge: agents.map((agent) => {
        const k = known.get(agent)!;
        return { agent, room: k.room, holding: k.holding, rooms: [...k.rooms.values()].sort((a, b) => (a.room < b.room ? -1 : 1)), told: [...k.told] };
      }),
    });
  }
  const s = scored as HouseholdProbeScoredPayload | null;
  return {
    title: task?.title ?? null,
    goal: task?.goal ?? null,
    secrets: task?.agent_secrets ?? {},
    turns: out,
    ended,
    kTree: kTree(asked, answered, s),
    kScore: s === null ? null : { roots: s.roots, passedRoots: s.passedRoots, score: s.score, pass: s.pass },
  };
}

export const householdUi: WorldUi = {
  label: "Household",
  data: householdViewData,
  script: new URL("./householdView.js", import.meta.url),
};
