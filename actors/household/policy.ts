// The scripted agents (no model): each turn, one action chosen from the agent's own knowledge base
// (knowledge.ts), never from the task's ground truth or a golden trajectory.
// - competent: first tells a teammate what it needs (a goal this agent cannot reach, with what it
//   knows about the objects and mechanics involved), bundled into one message and within the
//   message budget and the allowed recipients; then works on the goals it can reach (its own and
//   those it was told), exploring rooms and containers for objects it has not seen; when idle,
//   reports finished goals to teammates barred from seeing them.
//   It also tells whoever gave it a goal whom it passed that goal on to (`(K agent φ)`): what a
//   partner knows about a third agent, which deeper K goals need.
// - first-order: shares what it knows, but does not model what partners know about others: it
//   tells a goal only to a teammate who, as far as it knows, can act on it itself (never to one it
//   knows could only pass it on), reports finished goals, and sends no `(K agent φ)` statement.
// - naive: works on the goals of its own secrets only and never sends a message.
// All three put the shared goal first in a mixed task: a private objective that cannot hold with
// a shared conjunct the agent knows of is set aside (the paper scores the shared goal only), and a
// private objective is never passed to a teammate.
// All act on the same action interface as a model would (rules.ts `Action`).
import { literalsIn, mutuallyExclusive, parseSexp, show, type Literal } from "./pddl.ts";
import type { Kb, PublicLayout } from "./knowledge.ts";
import { render } from "./knowledge.ts";
import type { Action } from "./rules.ts";

export type Policy = "competent" | "first-order" | "naive";

export interface PolicyView {
  readonly self: string;
  readonly layout: PublicLayout;
  readonly policy: Policy;
  /** The actions this agent may take (absent: all). */
  readonly actions?: readonly string[];
  /** The tools it has beyond the task's actions (baseline mode: ReadAgentTrajectory; config findTools: the Find tools). */
  readonly tools?: { readonly read: boolean; readonly find: boolean };
}

export interface Decision {
  readonly action: Action;
  readonly why: string;
}

const lit = (key: string): Literal => {
  const s = parseSexp(key) as string[];
  return { pred: s[0]!, args: s.slice(1) };
};

export const believedHolds = (kb: Kb, l: Literal, self: string): boolean | null => {
  const [x, y] = l.args as [string, string];
  const loc = kb.loc[x];
  switch (l.pred) {
    case "is_on_top":
      return loc === undefined ? null : "on" in loc && loc.on === y;
    case "is_inside":
      return loc === undefined ? null : "inside" in loc && loc.inside === y;
    case "is_open":
      return kb.open[x] ?? null;
    case "is_closed":
      return kb.open[x] === undefined ? null : !kb.open[x];
    case "agent_in_room":
      return x === self ? kb.room === y : null;
    case "is_held_by":
      return loc === undefined ? null : "heldBy" in loc && loc.heldBy === y;
    default:
      return null;
  }
};

const barred = (kb: Kb, agent: string, room: string | undefined): boolean => room !== undefined && (kb.restricted[agent] ?? []).includes(room);

function objectRoom(kb: Kb, v: PolicyView, obj: string): string | undefined {
  const loc = kb.loc[obj];
  if (loc === undefined || "heldBy" in loc) return undefined;
  return v.layout.furniture["on" in loc ? loc.on : loc.inside]?.room;
}

const can = (v: PolicyView, name: string) => v.actions === undefined || v.actions.includes(name);

/** Whether `agent` (as far as this agent knows) can make literal `l` true itself. */
function reachable(kb: Kb, v: PolicyView, agent: string, l: Literal): boolean {
  const [x, y] = l.args as [string, string];
  switch (l.pred) {
    case "is_on_top":
    case "is_inside":
      if (agent === v.self && (!can(v, "Pick") || !can(v, "Place"))) return false;
      return !barred(kb, agent, v.layout.furniture[y]?.room) && !barred(kb, agent, objectRoom(kb, v, x));
    case "is_open":
    case "is_closed":
      return !barred(kb, agent, v.layout.furniture[x]?.room) || triggerFor(kb, v, agent, x, l.pred === "is_open") !== null;
    case "agent_in_room":
      return x === agent && !barred(kb, agent, y);
    case "is_held_by":
      return y === agent && !barred(kb, agent, objectRoom(kb, v, x));
    default:
      return false;
  }
}

/** A piece `agent` can reach whose Open/Close sets `target` as wanted (remote control or mirroring). */
function triggerFor(kb: Kb, v: PolicyView, agent: string, target: string, wantOpen: boolean): { furniture: string; open: boolean } | null {
  for (const r of kb.remote) if (r.target === target && !barred(kb, agent, v.layout.furniture[r.trigger]?.room)) return { furniture: r.trigger, open: r.opens ? wantOpen : !wantOpen };
  for (const m of kb.mirror) {
    const other = m.a === target ? m.b : m.b === target ? m.a : null;
    if (other !== null && !barred(kb, agent, v.layout.furniture[other]?.room)) return { furniture: other, open: m.same ? wantOpen : !wantOpen };
  }
  return null;
}

/** Open or Close `f` so that it ends `wantOpen`, minding a piece known to work backwards. */
const operate = (kb: Kb, f: string, wantOpen: boolean): Action => ({ kind: (wantOpen !== kb.inverse.includes(f)) ? "open" : "close", target: f });

/** The next step towards literal `l`, or null when this agent cannot take one now. */
function stepTowards(kb: Kb, v: PolicyView, l: Literal): Decision | null {
  const [x, y] = l.args as [string, string];
  const why = `towards ${show(l)}`;
  const here = kb.room;
  const go = (room: string, via: string): Decision | null => (barred(kb, v.self, room) ? null : { action: { kind: "navigate", target: via }, why });
  switch (l.pred) {
    case "is_open":
    case "is_closed": {
      const wantOpen = l.pred === "is_open";
      const room = v.layout.furniture[x]!.room;
      if (!barred(kb, v.self, room)) return here === room ? { action: operate(kb, x, wantOpen), why } : go(room, room);
      const t = triggerFor(kb, v, v.self, x, wantOpen);
      if (t === null) return null;
      const troom = v.layout.furniture[t.furniture]!.room;
      return here === troom ? { action: operate(kb, t.furniture, t.open), why: `${why} via ${t.furniture}` } : go(troom, troom);
    }
    case "agent_in_room":
      return x === v.self ? go(y, y) : null;
    case "is_on_top":
    case "is_inside":
    case "is_held_by": {
      if (kb.holding === x) {
        if (l.pred === "is_held_by") return { action: { kind: "wait" }, why };
        const room = v.layout.furniture[y]!.room;
        if (here !== room) return go(room, room);
        if (l.pred === "is_inside" && kb.open[y] !== true) return { action: operate(kb, y, true), why: `${why}: open ${y} first` };
        return { action: { kind: "place", target: x, relation: l.pred === "is_on_top" ? "on" : "within", furniture: y }, why };
      }
      const loc = kb.loc[x];
      if (loc !== undefined && "heldBy" in loc) return null; // a teammate has it in hand
      if (kb.holding !== null) return putDown(kb, v);
      if (loc === undefined) return explore(kb, v, x);
      const room = objectRoom(kb, v, x)!;
      if (here !== room) return go(room, room);
      if ("inside" in loc && kb.open[loc.inside] !== true) return { action: operate(kb, loc.inside, true), why: `${why}: open ${loc.inside}` };
      return { action: { kind: "pick", target: x }, why };
    }
    default:
      return null;
  }
}

/** Frees the hand: puts what it holds on a surface of this room. */
function putDown(kb: Kb, v: PolicyView): Decision | null {
  const surface = Object.keys(v.layout.furniture).sort().find((f) => v.layout.furniture[f]!.room === kb.room && !v.layout.furniture[f]!.articulated);
  return surface === undefined ? null : { action: { kind: "place", target: kb.holding!, relation: "on", furniture: surface }, why: `free hands` };
}

/** Looks for an object it has not seen: closed containers here first, then unvisited rooms, then unsearched containers elsewhere. */
function explore(kb: Kb, v: PolicyView, obj: string): Decision | null {
  const why = `looking for ${obj}`;
  // Containers that work a mechanic are not opened to look inside (it would move another piece).
  const triggers = new Set([...kb.remote.map((r) => r.trigger), ...kb.mirror.flatMap((m) => [m.a, m.b])]);
  const unsearched = (room: string) => Object.keys(v.layout.furniture).sort().filter((f) => v.layout.furniture[f]!.room === room && v.layout.furniture[f]!.articulated && !kb.searched.includes(f) && !triggers.has(f));
  const here = unsearched(kb.room)[0];
  if (here !== undefined) return { action: operate(kb, here, true), why };
  const rooms = v.layout.rooms.filter((r) => !barred(kb, v.self, r));
  const next = rooms.find((r) => !kb.visited.includes(r)) ?? rooms.find((r) => unsearched(r).length > 0);
  return next === undefined ? null : { action: { kind: "navigate", target: next }, why };
}

/** The message a competent agent sends now, if any: what one teammate needs from it, in one message. */
function messageFor(kb: Kb, v: PolicyView, pending: readonly Literal[], relays: boolean): Decision | null {
  if (kb.msgLimit !== null && kb.sent >= kb.msgLimit) return null;
  const teammates = v.layout.agents.filter((a) => a !== v.self && (kb.targets === null || kb.targets.includes(a)));
  if (teammates.length === 0) return null;
  const mine = pending.filter((l) => !reachable(kb, v, v.self, l));
  let best: { to: string; statements: string[]; able: boolean } | null = null;
  for (const to of teammates) {
    const told = kb.told[to] ?? [];
    const statements: string[] = [];
    // Goals it cannot reach, for a teammate who (as far as it knows) can, or who can pass them on.
    // Only an agent that models what partners know about others hands a goal to one who must pass it on.
    const delegated = mine.filter((l) => reachable(kb, v, to, l) || (relays && (teammates.length === 1 || kb.restricted[to] !== undefined)));
    for (const l of delegated) {
      statements.push(`(goal ${show(l)})`);
      for (const id of l.args) {
        const loc = kb.loc[id];
        if (loc !== undefined && !("heldBy" in loc)) statements.push("on" in loc ? `(is_on_top ${id} ${loc.on})` : `(is_inside ${id} ${loc.inside})`);
        if (kb.inverse.includes(id)) statements.push(`(is_inverse ${id})`);
        for (const r of kb.remote) if (r.target === id) statements.push(`(${r.opens ? "controls" : "controls_closed"} ${r.trigger} ${r.target})`);
        for (const m of kb.mirror) if (m.a === id || m.b === id) statements.push(`(${m.same ? "mirrors" : "mirrors_closed"} ${m.a} ${m.b})`);
      }
    }
    const fresh = [...new Set(statements)].filter((s) => !told.includes(s));
    if (!fresh.some((s) => s.startsWith("(goal"))) continue;
    const able = delegated.some((l) => reachable(kb, v, to, l));
    if (best === null || (able && !best.able) || (able === best.able && fresh.length > best.statements.length)) best = { to, statements: fresh, able };
  }
  if (best === null) return null;
  return { action: { kind: "communicate", text: best.statements.map((s) => `${render(s, best.to)} ${s}`).join(" "), to: [best.to] }, why: `tell ${best.to} what it needs` };
}

/**
 * A goal it was given and passed on: it tells the one who gave it that the next agent knows it
 * (`(K next φ)`), so the giver knows who knows (the acknowledgement a relay owes its informant).
 */
function passedOnFor(kb: Kb, v: PolicyView): Decision | null {
  if (kb.msgLimit !== null && kb.sent >= kb.msgLimit) return null;
  for (const [giver, said] of Object.entries(kb.heardFrom).sort(([a], [b]) => a.localeCompare(b))) {
    if (kb.targets !== null && !kb.targets.includes(giver)) continue;
    for (const statement of said) {
      if (!statement.startsWith("(goal ")) continue;
      const fact = statement.slice("(goal ".length, -1);
      for (const [next, told] of Object.entries(kb.told).sort(([a], [b]) => a.localeCompare(b))) {
        const nested = `(K ${next} ${fact})`;
        if (next === giver || !told.includes(statement) || (kb.told[giver] ?? []).includes(nested)) continue;
        return { action: { kind: "communicate", text: `${render(nested, giver)} ${nested}`, to: [giver] }, why: `tell ${giver} that ${next} knows ${fact}` };
      }
    }
  }
  return null;
}

/** When idle: a finished goal reported to a teammate barred from its room, who has not heard it from this agent. */
function reportFor(kb: Kb, v: PolicyView, done: readonly Literal[]): Decision | null {
  if (kb.msgLimit !== null && kb.sent >= kb.msgLimit) return null;
  for (const l of done) {
    const rooms = l.args.map((a) => v.layout.furniture[a]?.room ?? objectRoom(kb, v, a)).filter((r): r is string => r !== undefined);
    for (const to of v.layout.agents) {
      if (to === v.self || (kb.targets !== null && !kb.targets.includes(to))) continue;
      if (!rooms.some((r) => barred(kb, to, r)) || (kb.told[to] ?? []).includes(show(l))) continue;
      return { action: { kind: "communicate", text: `Done: ${render(show(l), to)} ${show(l)}`, to: [to] }, why: `report ${show(l)} to ${to}` };
    }
  }
  return null;
}

export function decide(kb: Kb, v: PolicyView): Decision {
  // An action that had no visible effect on an articulated piece: it works backwards.
  if (kb.last?.ok === true) {
    const m = /^(Open|Close)\[(\w+)\]$/.exec(kb.last.action);
    if (m !== null && kb.open[m[2]!] !== undefined && kb.open[m[2]!] !== (m[1] === "Open") && !kb.inverse.includes(m[2]!)) kb.inverse.push(m[2]!);
  }
  // A dilemma (a mixed task): success counts the shared goal only (digest §5.1), so a private
  // objective that cannot hold together with a shared conjunct it knows of is set aside. One it
  // pursues comes after the shared goals, and stays its own: it is never handed to a teammate.
  const shared = kb.goals.map(lit);
  const goals = [...shared, ...kb.own.map(lit).filter((o) => !shared.some((g) => mutuallyExclusive(g, o)))];
  const pending = goals.filter((l) => believedHolds(kb, l, v.self) !== true);
  if (v.policy !== "naive") {
    const sharedPending = pending.filter((l) => shared.includes(l));
    const message = messageFor(kb, v, sharedPending, v.policy === "competent") ?? (v.policy === "competent" ? passedOnFor(kb, v) : null);
    if (message !== null) return message;
  }
  for (const l of pending) {
    if (!reachable(kb, v, v.self, l)) continue;
    const step = stepTowards(kb, v, l);
    if (step !== null) return step;
  }
  if (v.policy !== "naive") {
    const report = reportFor(kb, v, shared.filter((l) => believedHolds(kb, l, v.self) === true));
    if (report !== null) return report;
  }
  const read = v.policy === "naive" ? null : readFor(kb, v);
  if (read !== null) return read;
  return { action: { kind: "wait" }, why: pending.length === 0 ? "every goal it knows holds" : "nothing it can do now" };
}

/**
 * Baseline mode, when it would otherwise wait: read the trajectory of the teammate it has read
 * least recently (never read first, then by id) that has a turn it has not read. What it learns
 * is what partners know (knowledge.ts readTrajectory), which the literal probes ask about; the
 * naive agent, which models no partner, never reads. Scripted agents never use the Find tools:
 * they query their knowledge base directly.
 */
function readFor(kb: Kb, v: PolicyView): Decision | null {
  const b = kb.baseline;
  if (v.tools?.read !== true || b === undefined) return null;
  const upTo = (a: string) => b.read[a]?.upTo ?? -1;
  const next = v.layout.agents.filter((a) => a !== v.self && upTo(a) < b.turn).sort((x, y) => upTo(x) - upTo(y) || x.localeCompare(y))[0];
  return next === undefined ? null : { action: { kind: "read", target: next }, why: `read ${next}'s trajectory (what it knows)` };
}

/** After a message goes out: the statements it carried count as told to each recipient. */
export function noteTold(kb: Kb, to: readonly string[], text: string): void {
  for (const s of literalsIn(text)) for (const r of to) {
    kb.told[r] ??= [];
    const key = show(s);
    if (!kb.told[r]!.includes(key)) kb.told[r]!.push(key);
    // A report "Done: φ" counts φ itself as told.
  }
}

/**
 * After its own Open/Close went through: what the mechanics it knows did to pieces it cannot see
 * (remote control, mirroring), so it does not repeat an action whose effect is out of sight.
 */
export function inferEffects(kb: Kb, action: string): void {
  const m = /^(Open|Close)\[(\w+)\]$/.exec(action);
  if (m === null) return;
  const f = m[2]!;
  const dir = (m[1] === "Open") !== kb.inverse.includes(f);
  for (const r of kb.remote) if (r.trigger === f) kb.open[r.target] = r.opens ? dir : !dir;
  for (const mi of kb.mirror) {
    const partner = mi.a === f ? mi.b : mi.b === f ? mi.a : null;
    if (partner !== null) kb.open[partner] = mi.same ? dir : !dir;
  }
}
