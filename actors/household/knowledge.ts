// What an agent knows (digest §8.3): the public layout, its secrets, what it has seen and what it
// has been told. Secrets and the scripted agents' messages are statements in the goal language,
// rendered to sentences for people and models; free-text secrets are shown and not parsed.
import { literalsIn, parseSexp, show, type Sexp } from "./pddl.ts";
import { parseAction, type RoomView } from "./rules.ts";
import type { TrajectoryStepPayload } from "./events.ts";

/** The public layout every agent knows from the start (rooms, furniture and where it stands). */
export interface PublicLayout {
  readonly rooms: readonly string[];
  readonly furniture: Readonly<Record<string, { readonly room: string; readonly kind: string; readonly articulated: boolean }>>;
  readonly agents: readonly string[];
}

export interface Kb {
  /** Where it last saw (or was told) each object is. */
  loc: Record<string, { on: string } | { inside: string } | { heldBy: string }>;
  open: Record<string, boolean>;
  visited: string[];
  /** Containers whose contents it has seen (open, in its room). */
  searched: string[];
  /** Shared goal conjuncts it knows (literal keys) and its private objectives. */
  goals: string[];
  own: string[];
  restricted: Record<string, string[]>;
  msgLimit: number | null;
  targets: string[] | null;
  remote: { trigger: string; target: string; opens: boolean }[];
  inverse: string[];
  mirror: { a: string; b: string; same: boolean }[];
  /** Statements it has sent to each teammate, and every statement it has heard. */
  told: Record<string, string[]>;
  heard: string[];
  /** Per sender, the statements it sent this agent (a sender knows what it says: the literal probes read it). */
  heardFrom: Record<string, string[]>;
  room: string;
  holding: string | null;
  sent: number;
  last: { action: string; ok: boolean; reason: string } | null;
  ended: boolean;
  /**
   * Baseline mode only (absent in standard mode, so a standard agent's state and hash are as
   * before): every teammate's secrets as given ("agent_k knows: …"), and what it read of
   * teammates' trajectories (ReadAgentTrajectory).
   */
  baseline?: BaselineKb;
}

/** What a baseline-mode agent has of its teammates: their secrets, and the trajectories it read. */
export interface BaselineKb {
  /** Each teammate's secrets, as the task gives them. */
  revealed: Record<string, string[]>;
  /** The last turn it observed (-1 before the first): a teammate's trajectory has news once it moved past what was read. */
  turn: number;
  /**
   * Per teammate read: the last turn read (`upTo`), its steps so far (as the house logged them),
   * and the statements that teammate is known to know from them: what it was told (and that its
   * sender knows it) and, for each message it sent, `(K recipient φ)`.
   */
  read: Record<string, { upTo: number; steps: TrajectoryStepPayload[]; knows: string[] }>;
}

const add = (list: string[], x: string): void => {
  if (!list.includes(x)) list.push(x);
};

/** Takes one statement (from a secret or a message) into the knowledge base, from `self`'s point of view. */
export function learn(kb: Kb, self: string, s: Sexp): void {
  if (typeof s === "string" || s.length === 0) return;
  const [head, ...rest] = s;
  const args = rest.filter((a): a is string => typeof a === "string");
  switch (head) {
    case "goal":
      if (rest[0] !== undefined) add(kb.goals, show(rest[0]));
      return;
    case "own_goal":
      if (rest[0] !== undefined) add(kb.own, show(rest[0]));
      return;
    case "is_restricted":
      kb.restricted[args[0]!] ??= [];
      add(kb.restricted[args[0]!]!, args[1]!);
      return;
    case "message_limit":
      if (args[0] === self) kb.msgLimit = Number(args[1]);
      return;
    case "can_communicate":
      if (args[0] === self) add((kb.targets ??= []), args[1]!);
      return;
    case "controls":
    case "controls_closed":
      if (!kb.remote.some((r) => r.trigger === args[0] && r.target === args[1])) kb.remote.push({ trigger: args[0]!, target: args[1]!, opens: head === "controls" });
      return;
    case "is_inverse":
      add(kb.inverse, args[0]!);
      return;
    case "mirrors":
    case "mirrors_closed":
      if (!kb.mirror.some((m) => m.a === args[0] && m.b === args[1])) kb.mirror.push({ a: args[0]!, b: args[1]!, same: head === "mirrors" });
      return;
    case "is_on_top":
      kb.loc[args[0]!] = { on: args[1]! };
      return;
    case "is_inside":
      kb.loc[args[0]!] = { inside: args[1]! };
      return;
    case "is_held_by":
      kb.loc[args[0]!] = { heldBy: args[1]! };
      return;
    case "is_open":
      kb.open[args[0]!] = true;
      return;
    case "is_closed":
      kb.open[args[0]!] = false;
      return;
  }
}

/** A statement as a sentence (what a prompt or a person reads). */
export function render(statement: string, self: string): string {
  let s: Sexp;
  try {
    s = parseSexp(statement);
  } catch {
    return statement;
  }
  if (typeof s === "string") return s;
  const [head, ...rest] = s;
  const a = rest.map((x) => (typeof x === "string" ? x : show(x)));
  const you = (id: string | undefined) => (id === self ? "You" : id);
  switch (head) {
    case "goal":
      return `By the end: ${rest[0] === undefined ? "" : render(show(rest[0]), self)}`;
    case "own_goal":
      return `Privately, you want this by the end: ${rest[0] === undefined ? "" : render(show(rest[0]), self)}`;
    case "is_restricted":
      return `${you(a[0])} cannot enter ${a[1]}.`;
    case "message_limit":
      return `${you(a[0])} can send ${a[1]} message${a[1] === "1" ? "" : "s"}.`;
    case "can_communicate":
      return `${you(a[0])} can send messages to ${a[1]}.`;
    case "controls":
      return `Opening or closing ${a[0]} does the same to ${a[1]}.`;
    case "controls_closed":
      return `Opening ${a[0]} closes ${a[1]}, and closing it opens ${a[1]}.`;
    case "is_inverse":
      return `${a[0]} works backwards: Open closes it and Close opens it.`;
    case "mirrors":
      return `${a[0]} and ${a[1]} move together: opening or closing one does the same to the other.`;
    case "mirrors_closed":
      return `${a[0]} and ${a[1]} move oppositely.`;
    case "is_on_top":
      return `${a[0]} is on ${a[1]}.`;
    case "is_inside":
      return `${a[0]} is inside ${a[1]}.`;
    case "is_open":
      return `${a[0]} is open.`;
    case "is_closed":
      return `${a[0]} is closed.`;
    case "is_in_room":
      return `${a[0]} is in ${a[1]}.`;
    case "agent_in_room":
      return `${you(a[0])} ${a[0] === self ? "are" : "is"} in ${a[1]}.`;
    case "is_held_by":
      return `${a[0]} is held by ${a[1]}.`;
    case "K":
      return `${you(a[0])} ${a[0] === self ? "know" : "knows"}: ${rest[1] === undefined ? "" : render(show(rest[1]), self)}`;
    default:
      return statement;
  }
}

/**
 * A new knowledge base from its own secrets; in baseline mode (`revealed`: every teammate's
 * secrets) it also takes in what teammates' secrets say about the house, the shared goal, bans and
 * mechanics. A teammate's private objective (`own_goal`) stays that teammate's: it is shown, not
 * adopted.
 */
export function newKb(self: string, room: string, secrets: readonly string[], revealed?: Readonly<Record<string, readonly string[]>>): Kb {
  const kb: Kb = { loc: {}, open: {}, visited: [], searched: [], goals: [], own: [], restricted: {}, msgLimit: null, targets: null, remote: [], inverse: [], mirror: [], told: {}, heard: [], heardFrom: {}, room, holding: null, sent: 0, last: null, ended: false };
  for (const secret of secrets) for (const s of literalsIn(secret)) learn(kb, self, s);
  if (revealed !== undefined) {
    kb.baseline = { revealed: Object.fromEntries(Object.entries(revealed).map(([a, ss]) => [a, [...ss]])), turn: -1, read: {} };
    for (const [, ss] of Object.entries(revealed).sort(([a], [b]) => a.localeCompare(b)))
      for (const secret of ss) for (const s of literalsIn(secret)) if (typeof s === "string" || s[0] !== "own_goal") learn(kb, self, s);
  }
  return kb;
}

/** A statement as known: a goal told counts as its fact (as in the epistemic search). */
const factOfStatement = (statement: string): string => (statement.startsWith("(goal ") ? statement.slice("(goal ".length, -1) : statement);

/**
 * Takes in a teammate's trajectory (baseline mode, ReadAgentTrajectory): the steps, and what they
 * show that teammate knows — each statement it was told, that its sender knows it, and for each
 * message it sent, that the recipients know what it said.
 */
export function readTrajectory(kb: Kb, partner: string, upTo: number, steps: readonly TrajectoryStepPayload[]): void {
  const b = kb.baseline;
  if (b === undefined) return;
  const knows: string[] = [];
  for (const step of steps) {
    for (const m of step.heard)
      for (const s of literalsIn(m.text)) {
        const fact = factOfStatement(show(s));
        add(knows, fact);
        add(knows, `(K ${m.from} ${fact})`);
      }
    const sent = step.ok ? parseAction(step.action) : null;
    if (sent !== null && !("error" in sent) && sent.kind === "communicate" && sent.to !== "all")
      for (const s of literalsIn(sent.text)) for (const r of sent.to) add(knows, `(K ${r} ${factOfStatement(show(s))})`);
  }
  b.read[partner] = { upTo, steps: steps.map((st) => ({ ...st, heard: st.heard.map((h) => ({ ...h })) })), knows };
}

/** Takes in the end-of-turn observation: what it sees replaces what it believed about those rooms. */
export function observe(kb: Kb, views: readonly RoomView[], layout: PublicLayout, self: string): void {
  for (const v of views) {
    add(kb.visited, v.room);
    Object.assign(kb.open, v.open);
    // In id order: the log stores a payload's keys sorted, so a replay sees them in that order, and
    // the list must come out the same live and replayed.
    for (const f of Object.keys(v.open).sort()) if (v.open[f] === true) add(kb.searched, f);
    // Objects believed here but not seen (on a surface or in an open container of this room) have moved.
    for (const [obj, loc] of Object.entries(kb.loc)) {
      if ("heldBy" in loc) continue;
      const f = "on" in loc ? loc.on : loc.inside;
      if (layout.furniture[f]?.room !== v.room) continue;
      if ("inside" in loc && v.open[f] !== true) continue;
      if (v.objects[obj] === undefined) delete kb.loc[obj];
    }
    for (const [obj, loc] of Object.entries(v.objects)) kb.loc[obj] = { ...loc };
    for (const [agent, held] of Object.entries(v.agents)) {
      if (held !== null && agent !== self) kb.loc[held] = { heldBy: agent };
    }
  }
}
