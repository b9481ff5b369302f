// The household's rules, once (digest §8.4): the state, the action grammar, what one agent's action
// does (the six mechanics included), a whole turn resolved in ascending agent order, what each
// agent observes, and whether a literal holds. The environment actor runs them; the verifier's
// successor function (later) is `applyAction` on the same state. Pure: no I/O, no clock, no RNG.
import type { Literal } from "./pddl.ts";
import type { CompiledTask, Mechanics } from "./task.ts";

export type Loc = { readonly on: string } | { readonly inside: string } | { readonly heldBy: string };

export interface AgentState {
  room: string;
  holding: string | null;
  done: boolean;
  msgsSent: number;
}

/** The mutable part of a house; the layout and mechanics are the task's (static). */
export interface HouseState {
  /** Articulated furniture: open or not. */
  open: Record<string, boolean>;
  objects: Record<string, Loc>;
  agents: Record<string, AgentState>;
}

export type Action =
  | { readonly kind: "navigate"; readonly target: string }
  | { readonly kind: "open" | "close"; readonly target: string }
  | { readonly kind: "pick"; readonly target: string }
  | { readonly kind: "place"; readonly target: string; readonly relation: "on" | "within"; readonly furniture: string }
  | { readonly kind: "communicate"; readonly text: string; readonly to: readonly string[] | "all" }
  | { readonly kind: "wait" }
  | { readonly kind: "done" }
  /** Baseline mode only (digest §4.1, §8.3): read a teammate's past actions and observations. */
  | { readonly kind: "read"; readonly target: string }
  /** The paper's Find tools (digest §4.3): a query answered from the agent's own knowledge base. Config `findTools`. */
  | { readonly kind: "find"; readonly tool: FindTool; readonly query: string };

/** The three Find tools' names, in the paper's syntax (`FindObjectTool[cup]`). */
export const FIND_TOOLS = { object: "FindObjectTool", receptacle: "FindReceptacleTool", room: "FindRoomTool" } as const;
export type FindTool = keyof typeof FIND_TOOLS;
/** The baseline-mode tool's name (the paper's `ReadAgentTrajectoryTool`; `ReadAgentTrajectory[agent_j]` parses too). */
export const READ_TRAJECTORY = "ReadAgentTrajectory";

const NAME_OF: Readonly<Record<Exclude<Action["kind"], "find">, string>> = { navigate: "Navigate", open: "Open", close: "Close", pick: "Pick", place: "Place", communicate: "Communicate", wait: "Wait", done: "Done", read: READ_TRAJECTORY };

/** An action's name as the action lists say it (`Navigate`, `FindObjectTool`, `ReadAgentTrajectory`). */
export const actionName = (a: Action): string => (a.kind === "find" ? FIND_TOOLS[a.tool] : NAME_OF[a.kind]);

/** `Navigate[kitchen_1]`, `Place[bowl_1, on, table_22]`, `Communicate["text", agent_1]` (EnactToM's syntax). */
export function formatAction(a: Action): string {
  switch (a.kind) {
    case "communicate":
      return `Communicate[${JSON.stringify(a.text)}, ${a.to === "all" ? "all" : a.to.join(", ")}]`;
    case "place":
      return `Place[${a.target}, ${a.relation}, ${a.furniture}]`;
    case "wait":
    case "done":
      return `${NAME_OF[a.kind]}[]`;
    case "find":
      return `${FIND_TOOLS[a.tool]}[${a.query}]`;
    default:
      return `${NAME_OF[a.kind]}[${a.target}]`;
  }
}

/** Parses an action string; a string it cannot read is an error string (the turn is then spent). */
export function parseAction(raw: string): Action | { readonly error: string } {
  const m = /^\s*(\w+)\[(.*)\]\s*$/s.exec(raw);
  if (m === null) return { error: `cannot read action '${raw}' (expected Name[args])` };
  const [, name, body] = m as unknown as [string, string, string];
  if (name === "Communicate") {
    const q = /^\s*("(?:[^"\\]|\\.)*")\s*,\s*(.+)$/s.exec(body);
    if (q === null) return { error: `Communicate takes ["text", agent…|all]` };
    const to = q[2]!.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
    return { kind: "communicate", text: JSON.parse(q[1]!) as string, to: to.length === 1 && to[0] === "all" ? "all" : to };
  }
  const args = body.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  const one = (kind: "navigate" | "open" | "close" | "pick"): Action | { error: string } => (args.length === 1 ? { kind, target: args[0]! } : { error: `${name} takes one argument` });
  switch (name) {
    case "Navigate":
      return one("navigate");
    case "Open":
      return one("open");
    case "Close":
      return one("close");
    case "Pick":
      return one("pick");
    case "Place":
      return args.length === 3 && (args[1] === "on" || args[1] === "within") ? { kind: "place", target: args[0]!, relation: args[1], furniture: args[2]! } : { error: "Place takes [object, on|within, furniture]" };
    case "Wait":
      return { kind: "wait" };
    case "Done":
      return { kind: "done" };
    case READ_TRAJECTORY:
    case "ReadAgentTrajectoryTool":
      return args.length === 1 ? { kind: "read", target: args[0]! } : { error: `${name} takes one teammate, e.g. ${READ_TRAJECTORY}[agent_1]` };
    case FIND_TOOLS.object:
    case FIND_TOOLS.receptacle:
    case FIND_TOOLS.room: {
      const tool = (Object.keys(FIND_TOOLS) as FindTool[]).find((t) => FIND_TOOLS[t] === name)!;
      return body.trim() === "" ? { error: `${name} takes a query, e.g. ${name}[cup]` } : { kind: "find", tool, query: body.trim() };
    }
    default:
      return { error: `unknown action '${name}'` };
  }
}

export function initialState(c: CompiledTask): HouseState {
  const { scene, agents } = c.task;
  const open: Record<string, boolean> = {};
  for (const [id, f] of Object.entries(scene.furniture)) if (f.articulated) open[id] = f.open === true;
  const objects: Record<string, Loc> = {};
  for (const [id, o] of Object.entries(scene.objects)) objects[id] = o.on !== undefined ? { on: o.on } : { inside: o.inside! };
  const agentStates: Record<string, AgentState> = {};
  for (const [id, a] of Object.entries(agents)) agentStates[id] = { room: a.room, holding: null, done: false, msgsSent: 0 };
  return { open, objects, agents: agentStates };
}

export const cloneState = (s: HouseState): HouseState => ({
  open: { ...s.open },
  objects: { ...s.objects },
  agents: Object.fromEntries(Object.entries(s.agents).map(([k, v]) => [k, { ...v }])),
});

/** Where an object is now: a room, through its furniture or its holder. */
export function roomOfObject(c: CompiledTask, s: HouseState, obj: string): string | null {
  const loc = s.objects[obj];
  if (loc === undefined) return null;
  if ("heldBy" in loc) return s.agents[loc.heldBy]?.room ?? null;
  return c.task.scene.furniture["on" in loc ? loc.on : loc.inside]?.room ?? null;
}

export function roomOf(c: CompiledTask, s: HouseState, id: string): string | null {
  if (c.task.scene.rooms.includes(id)) return id;
  if (c.task.scene.furniture[id] !== undefined) return c.task.scene.furniture[id].room;
  if (s.agents[id] !== undefined) return s.agents[id].room;
  return roomOfObject(c, s, id);
}

export function holds(c: CompiledTask, s: HouseState, l: Literal): boolean {
  const [x, y] = l.args as [string, string];
  const loc = s.objects[x];
  switch (l.pred) {
    case "is_on_top":
      return loc !== undefined && "on" in loc && loc.on === y;
    case "is_inside":
      return loc !== undefined && "inside" in loc && loc.inside === y;
    case "is_open":
      return s.open[x] === true;
    case "is_closed":
      return s.open[x] === false;
    case "is_in_room":
      return roomOf(c, s, x) === y;
    case "agent_in_room":
      return s.agents[x]?.room === y;
    case "is_held_by":
      return loc !== undefined && "heldBy" in loc && loc.heldBy === y;
    default:
      return false;
  }
}

/** The outcome of one agent's action. `message`: a Communicate that went through (queued). */
export interface Resolution {
  readonly ok: boolean;
  readonly reason: string;
  /** Mechanic effects, e.g. `inverse cabinet_3`, `remote fridge_2 open`, `mirror drawer_4 closed`. */
  readonly effects: readonly string[];
  readonly message?: { readonly to: readonly string[]; readonly text: string };
  /** A Communicate refused by the graph or the budget (it costs no budget). */
  readonly blocked?: boolean;
}

const fail = (reason: string): Resolution => ({ ok: false, reason, effects: [] });

/** Sets an articulated piece open or closed, then the mechanics it triggers: inverse, then remote, then mirror, in one step. */
function operate(m: Mechanics, s: HouseState, f: string, opening: boolean): string[] {
  const effects: string[] = [];
  let dir = opening;
  if (m.inverse.includes(f)) {
    dir = !dir;
    effects.push(`inverse ${f}`);
  }
  s.open[f] = dir;
  for (const r of m.remote) {
    if (r.trigger !== f) continue;
    const v = r.targetState === "is_open" ? dir : !dir;
    s.open[r.target] = v;
    effects.push(`remote ${r.target} ${v ? "open" : "closed"}`);
  }
  // Mirroring is symmetric (the runtime's semantics, digest §3): acting on either sets the partner.
  for (const mi of m.mirror) {
    const partner = mi.a === f ? mi.b : mi.b === f ? mi.a : null;
    if (partner === null) continue;
    const v = mi.state === "is_open" ? dir : !dir;
    s.open[partner] = v;
    effects.push(`mirror ${partner} ${v ? "open" : "closed"}`);
  }
  return effects;
}

/**
 * One agent's action against the state, which it updates in place (the caller clones when it
 * needs the old one). Every failure spends the agent's turn and changes nothing.
 */
export function applyAction(c: CompiledTask, s: HouseState, agent: string, action: Action): Resolution {
  const m = c.mechanics;
  const me = s.agents[agent]!;
  const { furniture } = c.task.scene;
  const allowedActions = m.actions[agent];
  // The tools (ReadAgentTrajectory, Find*) are not part of a task's action list: the mode and the config grant them.
  if (allowedActions !== undefined && action.kind !== "read" && action.kind !== "find" && !allowedActions.includes(NAME_OF[action.kind])) return fail(`you cannot ${NAME_OF[action.kind]}`);
  switch (action.kind) {
    case "navigate": {
      const room = c.task.scene.rooms.includes(action.target) ? action.target : furniture[action.target]?.room;
      if (room === undefined) return fail(`unknown place '${action.target}' (navigate to a room or a piece of furniture)`);
      if ((m.restricted[agent] ?? []).includes(room)) return fail(`You cannot enter ${room}${room === action.target ? "" : ` to reach ${action.target}`}. The area is off-limits to you.`);
      me.room = room;
      return { ok: true, reason: "ok", effects: [] };
    }
    case "open":
    case "close": {
      const f = furniture[action.target];
      if (f === undefined || !f.articulated) return fail(`${action.target} cannot be opened or closed`);
      if (f.room !== me.room) return fail(`${action.target} is not in ${me.room}`);
      return { ok: true, reason: "ok", effects: operate(m, s, action.target, action.kind === "open") };
    }
    case "pick": {
      const loc = s.objects[action.target];
      if (loc === undefined) return fail(`unknown object '${action.target}'`);
      if (me.holding !== null) return fail(`your hands are full (holding ${me.holding})`);
      if ("heldBy" in loc || roomOfObject(c, s, action.target) !== me.room) return fail(`${action.target} is not here`);
      if ("inside" in loc && s.open[loc.inside] !== true) return fail(`${action.target} is not here`);
      s.objects[action.target] = { heldBy: agent };
      me.holding = action.target;
      return { ok: true, reason: "ok", effects: [] };
    }
    case "place": {
      if (me.holding !== action.target) return fail(`you are not holding ${action.target}`);
      const f = furniture[action.furniture];
      if (f === undefined) return fail(`unknown furniture '${action.furniture}'`);
      if (f.room !== me.room) return fail(`${action.furniture} is not in ${me.room}`);
      if (action.relation === "within" && (!f.articulated || s.open[action.furniture] !== true)) return fail(f.articulated ? `${action.furniture} is closed` : `${action.furniture} is a surface; place on it`);
      if (action.relation === "on" && f.articulated) return fail(`${action.furniture} is a container; place within it`);
      s.objects[action.target] = action.relation === "on" ? { on: action.furniture } : { inside: action.furniture };
      me.holding = null;
      return { ok: true, reason: "ok", effects: [] };
    }
    case "communicate": {
      const others = Object.keys(s.agents).filter((a) => a !== agent);
      const named = action.to === "all" ? others : [...new Set(action.to)];
      const unknown = named.filter((a) => !others.includes(a));
      if (unknown.length > 0) return { ...fail(`no teammate ${unknown.join(", ")}`), blocked: true };
      // The graph first, then the budget; a blocked message is free (digest §8.4).
      const allowed = m.allowedTargets[agent];
      const to = allowed === undefined ? named : named.filter((a) => allowed.includes(a));
      if (to.length === 0) return { ...fail(`You can only send messages to: ${allowed!.join(", ")}`), blocked: true };
      const limit = m.msgLimit[agent];
      if (limit !== undefined && me.msgsSent >= limit) return { ...fail(`You have used all ${limit} of your allowed messages`), blocked: true };
      me.msgsSent++;
      return { ok: true, reason: limit === undefined ? "Message sent." : `Message sent. You have ${limit - me.msgsSent} messages remaining.`, effects: [], message: { to, text: action.text } };
    }
    case "wait":
      return { ok: true, reason: "ok", effects: [] };
    // The tools change nothing in the house; the house (read) or the agent (find) answers them.
    case "read":
      if (action.target === agent || s.agents[action.target] === undefined) return fail(`no teammate ${action.target}`);
      return { ok: true, reason: "ok", effects: [] };
    case "find":
      return { ok: true, reason: "ok", effects: [] };
    case "done":
      me.done = true;
      return { ok: true, reason: "ok", effects: [] };
  }
}

/** A turn: each decision resolved in ascending agent id against the evolving state (digest §8.4). */
export function resolveTurn(c: CompiledTask, s: HouseState, decisions: readonly (readonly [string, Action | { readonly error: string }])[]): { state: HouseState; resolutions: [string, Resolution][] } {
  const next = cloneState(s);
  const sorted = [...decisions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const resolutions: [string, Resolution][] = [];
  for (const [agent, action] of sorted) {
    if (next.agents[agent]?.done !== false) continue;
    resolutions.push([agent, "error" in action ? fail(action.error) : applyAction(c, next, agent, action)]);
  }
  return { state: next, resolutions };
}

/** What an agent sees of one room: open states, objects on surfaces and in open containers, agents and what they hold. */
export interface RoomView {
  readonly room: string;
  readonly open: Readonly<Record<string, boolean>>;
  /** Object → furniture and relation, for every object it can see (closed containers hide theirs). */
  readonly objects: Readonly<Record<string, { readonly on: string } | { readonly inside: string }>>;
  readonly agents: Readonly<Record<string, string | null>>;
}

export function viewOfRoom(c: CompiledTask, s: HouseState, room: string): RoomView {
  const open: Record<string, boolean> = {};
  for (const [id, f] of Object.entries(c.task.scene.furniture)) if (f.room === room && f.articulated) open[id] = s.open[id] === true;
  const objects: Record<string, { on: string } | { inside: string }> = {};
  for (const [id, loc] of Object.entries(s.objects)) {
    if ("heldBy" in loc) continue;
    const f = "on" in loc ? loc.on : loc.inside;
    if (c.task.scene.furniture[f]?.room !== room) continue;
    if ("inside" in loc && s.open[f] !== true) continue;
    objects[id] = loc;
  }
  const agents: Record<string, string | null> = {};
  for (const [id, a] of Object.entries(s.agents)) if (a.room === room) agents[id] = a.holding;
  return { room, open, objects, agents };
}

/** The rooms an agent sees at the end of a turn: its own (standard), or every room (baseline mode). */
export const roomsSeenBy = (c: CompiledTask, s: HouseState, agent: string, baseline: boolean): string[] => (baseline ? [...c.task.scene.rooms] : [s.agents[agent]!.room]);
