// A household task (digest §1.2 and §8, with the departures docs/enacttom.md names): a symbolic
// scene in place of an HSSD scene and `problem_pddl`, the goal as a PDDL s-expression, secrets
// written as literals that render to sentences. `checkTask` validates a task as a file gives it
// and names the file, field and problem of every error (exit 2); `compileTask` derives what the
// rules, the agents and the scores need.
import { InputRejected } from "../../events/inputRejected.ts";
import { conjuncts, formulaOf, functionalConjuncts, GOAL_PREDICATES, kDepth, kNodes, leavesOf, ParseError, parseFormula, parseSexp, show, type Formula, type Literal } from "./pddl.ts";

export interface FurnitureSpec { readonly room: string; readonly kind: string; readonly articulated: boolean; readonly open?: boolean }
export interface ObjectSpec { readonly kind: string; readonly on?: string; readonly inside?: string }

export type MechanicBinding =
  | { readonly mechanic_type: "room_restriction"; readonly restricted_rooms: readonly string[]; readonly for_agents: readonly string[] }
  | { readonly mechanic_type: "limited_bandwidth"; readonly message_limits: Readonly<Record<string, number>> }
  | { readonly mechanic_type: "restricted_communication"; readonly allowed_targets: Readonly<Record<string, readonly string[]>> }
  | { readonly mechanic_type: "remote_control"; readonly trigger_object: string; readonly target_object: string; readonly target_state: "is_open" | "is_closed" }
  | { readonly mechanic_type: "inverse_state"; readonly trigger_object: string }
  | { readonly mechanic_type: "state_mirroring"; readonly trigger_object: string; readonly target_object: string; readonly target_state: "is_open" | "is_closed" };

/** A task as its JSON file holds it. */
export interface HouseholdTask {
  readonly task_id: string;
  readonly title: string;
  readonly category: "cooperative" | "mixed";
  readonly split?: "standard" | "hard";
  readonly task: string;
  readonly scene: { readonly rooms: readonly string[]; readonly furniture: Readonly<Record<string, FurnitureSpec>>; readonly objects: Readonly<Record<string, ObjectSpec>> };
  readonly agents: Readonly<Record<string, { readonly room: string }>>;
  readonly mechanic_bindings: readonly MechanicBinding[];
  readonly agent_secrets: Readonly<Record<string, readonly string[]>>;
  readonly agent_actions?: Readonly<Record<string, readonly string[]>>;
  readonly message_targets?: Readonly<Record<string, readonly string[]>>;
  readonly goal: string;
  readonly goal_owners?: Readonly<Record<string, string>>;
  readonly tom_level?: number;
  readonly max_turns?: number;
  /** The verifier's golden trajectory with its hashes (verifier/golden.ts); pool tasks carry it. */
  readonly golden_trajectory?: {
    readonly turns: readonly { readonly actions: readonly { readonly agent: string; readonly action: string }[] }[];
    readonly state_hashes: readonly string[];
    readonly spec_hash: string;
    readonly trajectory_hash: string;
  };
}

export const ACTION_NAMES = ["Navigate", "Open", "Close", "Pick", "Place", "Communicate", "Wait", "Done"] as const;
export const MECHANIC_TYPES = ["room_restriction", "limited_bandwidth", "restricted_communication", "remote_control", "inverse_state", "state_mirroring"] as const;
/** The mechanics that make information asymmetric: every task needs one (EnactToM's spec validator). */
const ASYMMETRY = ["room_restriction", "restricted_communication", "remote_control"];
const TASK_FIELDS = ["task_id", "title", "category", "split", "task", "scene", "agents", "mechanic_bindings", "agent_secrets", "agent_actions", "message_targets", "goal", "goal_owners", "tom_level", "max_turns", "golden_trajectory"];
export const MAX_DEPTH = 3;
/** Turns when a task sets none: 2 × max(T_min, 6) with a generous T_min (digest §8.6 step 7). */
export const DEFAULT_MAX_TURNS = 20;

/** The mechanics of a task in the form the rules apply them (digest §8.2). */
export interface Mechanics {
  readonly restricted: Readonly<Record<string, readonly string[]>>;
  readonly msgLimit: Readonly<Record<string, number>>;
  /** Absent key: the agent may message anyone. */
  readonly allowedTargets: Readonly<Record<string, readonly string[]>>;
  readonly inverse: readonly string[];
  readonly remote: readonly { readonly trigger: string; readonly target: string; readonly targetState: "is_open" | "is_closed" }[];
  readonly mirror: readonly { readonly a: string; readonly b: string; readonly state: "is_open" | "is_closed" }[];
  /** Per agent, the actions it may take (absent: all). */
  readonly actions: Readonly<Record<string, readonly string[]>>;
}

export interface KNodeInfo {
  /** `k_probe_<i>`, in reading order (digest §5.3). */
  readonly id: string;
  readonly agent: string;
  readonly subjects: readonly string[];
  readonly fact: string;
  readonly depth: number;
  readonly trivial: boolean;
}

/** What the rules, agents and scores derive from a task. */
export interface CompiledTask {
  readonly task: HouseholdTask;
  readonly agentIds: readonly string[];
  readonly mechanics: Mechanics;
  readonly goal: Formula;
  /** The functional conjuncts (K deleted), and which are required for success (mixed: the unowned ones). */
  readonly functional: readonly Literal[];
  readonly owned: Readonly<Record<string, readonly Literal[]>>;
  readonly kNodes: readonly KNodeInfo[];
  /** Max depth over non-trivial K nodes (the compiler's rule, digest §2.2). */
  readonly depth: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isStrList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** Validates a task; throws InputRejected whose lines each read `<source>: <field>: <problem>`. */
export function checkTask(raw: unknown, source: string): HouseholdTask {
  const problems = taskProblems(raw);
  if (problems.length > 0) throw new InputRejected("config", problems.map((p) => `${source}: ${p}`).join("\n"));
  return raw as HouseholdTask;
}

/** Every problem of a task, each `<field>: <problem>` (empty: the task is valid). */
export function taskProblems(raw: unknown): string[] {
  if (!isObj(raw)) return [`(task): expected a JSON object, got ${Array.isArray(raw) ? "an array" : String(raw)}`];
  const p: string[] = [];
  for (const k of Object.keys(raw)) if (!TASK_FIELDS.includes(k)) p.push(`${k}: unknown field (a task has: ${TASK_FIELDS.join(", ")})`);
  const str = (k: string, min = 1) => {
    if (typeof raw[k] !== "string" || (raw[k] as string).length < min) p.push(`${k}: expected a string${min > 1 ? ` of at least ${min} characters` : ""}, got ${JSON.stringify(raw[k])}`);
  };
  str("task_id");
  str("title");
  str("task", 20);
  str("goal");
  if (raw.category !== "cooperative" && raw.category !== "mixed") p.push(`category: expected "cooperative" or "mixed", got ${JSON.stringify(raw.category)}`);
  if (raw.split !== undefined && raw.split !== "standard" && raw.split !== "hard") p.push(`split: expected "standard" or "hard", got ${JSON.stringify(raw.split)}`);
  if (raw.max_turns !== undefined && !(Number.isSafeInteger(raw.max_turns) && (raw.max_turns as number) >= 1 && (raw.max_turns as number) <= 200)) p.push(`max_turns: expected an integer from 1 to 200, got ${JSON.stringify(raw.max_turns)}`);
  const golden = raw.golden_trajectory;
  if (golden !== undefined && !(isObj(golden) && Array.isArray(golden.turns) && isStrList(golden.state_hashes) && typeof golden.spec_hash === "string" && typeof golden.trajectory_hash === "string"))
    p.push(`golden_trajectory: expected {turns, state_hashes, spec_hash, trajectory_hash} (the verifier writes it)`);
  // The scene: rooms, furniture in rooms, objects on or in furniture.
  const scene = raw.scene;
  const rooms = new Set<string>();
  const furniture = new Map<string, FurnitureSpec>();
  const objects = new Map<string, ObjectSpec>();
  if (!isObj(scene)) p.push(`scene: expected an object with rooms, furniture and objects`);
  else {
    if (!isStrList(scene.rooms) || scene.rooms.length === 0) p.push(`scene.rooms: expected a non-empty list of room ids`);
    else for (const r of scene.rooms) rooms.add(r);
    if (!isObj(scene.furniture)) p.push(`scene.furniture: expected an object of furniture by id`);
    else
      for (const [id, f] of Object.entries(scene.furniture)) {
        const at = `scene.furniture.${id}`;
        if (!isObj(f) || typeof f.room !== "string" || typeof f.kind !== "string" || typeof f.articulated !== "boolean") {
          p.push(`${at}: expected {room, kind, articulated[, open]}`);
          continue;
        }
        if (!rooms.has(f.room)) p.push(`${at}.room: unknown room '${f.room}' (rooms: ${[...rooms].join(", ")})`);
        if (f.open !== undefined && (typeof f.open !== "boolean" || !f.articulated)) p.push(`${at}.open: only articulated furniture opens (a boolean)`);
        furniture.set(id, f as unknown as FurnitureSpec);
      }
    if (!isObj(scene.objects)) p.push(`scene.objects: expected an object of objects by id`);
    else
      for (const [id, o] of Object.entries(scene.objects)) {
        const at = `scene.objects.${id}`;
        if (furniture.has(id) || rooms.has(id)) p.push(`${at}: id '${id}' is also a room or furniture id`);
        if (!isObj(o) || typeof o.kind !== "string" || (o.on === undefined) === (o.inside === undefined)) {
          p.push(`${at}: expected {kind, on: <furniture>} or {kind, inside: <furniture>}`);
          continue;
        }
        const f = (o.on ?? o.inside) as string;
        const spec = furniture.get(f);
        if (spec === undefined) p.push(`${at}.${o.on !== undefined ? "on" : "inside"}: unknown furniture '${f}'`);
        else if (o.on !== undefined && spec.articulated) p.push(`${at}.on: '${f}' is a container; use "inside"`);
        else if (o.inside !== undefined && !spec.articulated) p.push(`${at}.inside: '${f}' is a surface; use "on"`);
        objects.set(id, o as unknown as ObjectSpec);
      }
  }
  // Agents: agent_0..agent_{n-1}, each in a room.
  const agents: string[] = [];
  if (!isObj(raw.agents) || Object.keys(raw.agents).length < 2) p.push(`agents: expected an object of 2 or more agents {agent_0: {room}, …}`);
  else {
    const ids = Object.keys(raw.agents);
    ids.forEach((id, i) => {
      if (id !== `agent_${i}`) p.push(`agents.${id}: agents are agent_0…agent_${ids.length - 1}, in order`);
      const a = (raw.agents as Record<string, unknown>)[id];
      if (!isObj(a) || typeof a.room !== "string" || !rooms.has(a.room)) p.push(`agents.${id}.room: expected one of the scene's rooms, got ${JSON.stringify(isObj(a) ? a.room : a)}`);
      agents.push(id);
    });
  }
  const isAgent = (a: unknown) => typeof a === "string" && agents.includes(a);
  const isFurn = (f: unknown) => typeof f === "string" && furniture.has(f);
  const isArticulated = (f: unknown) => isFurn(f) && furniture.get(f as string)!.articulated;
  // Mechanics.
  const types = new Set<string>();
  if (!Array.isArray(raw.mechanic_bindings)) p.push(`mechanic_bindings: expected a list of bindings`);
  else
    raw.mechanic_bindings.forEach((b: unknown, i: number) => {
      const at = `mechanic_bindings[${i}]`;
      if (!isObj(b) || !MECHANIC_TYPES.includes(b.mechanic_type as never)) return p.push(`${at}.mechanic_type: expected one of ${MECHANIC_TYPES.join(", ")}, got ${JSON.stringify(isObj(b) ? b.mechanic_type : b)}`);
      types.add(b.mechanic_type as string);
      switch (b.mechanic_type) {
        case "room_restriction":
          if (!isStrList(b.restricted_rooms) || b.restricted_rooms.some((r) => !rooms.has(r))) p.push(`${at}.restricted_rooms: expected a list of the scene's rooms, got ${JSON.stringify(b.restricted_rooms)}`);
          if (!isStrList(b.for_agents) || !b.for_agents.every(isAgent)) p.push(`${at}.for_agents: expected a list of agent ids, got ${JSON.stringify(b.for_agents)}`);
          break;
        case "limited_bandwidth":
          if (!isObj(b.message_limits)) p.push(`${at}.message_limits: expected {agent: n}`);
          else for (const [a, n] of Object.entries(b.message_limits)) {
            if (!isAgent(a)) p.push(`${at}.message_limits.${a}: unknown agent`);
            if (!Number.isSafeInteger(n) || (n as number) < 1) p.push(`${at}.message_limits.${a}: expected an integer ≥ 1, got ${JSON.stringify(n)}`);
          }
          break;
        case "restricted_communication":
          if (!isObj(b.allowed_targets)) p.push(`${at}.allowed_targets: expected {agent: [agents]}`);
          else for (const [a, ts] of Object.entries(b.allowed_targets)) if (!isAgent(a) || !isStrList(ts) || !ts.every(isAgent)) p.push(`${at}.allowed_targets.${a}: expected an agent mapped to a list of agents`);
          break;
        case "inverse_state":
          if (!isArticulated(b.trigger_object)) p.push(`${at}.trigger_object: expected articulated furniture, got ${JSON.stringify(b.trigger_object)}`);
          break;
        default:
          if (!isArticulated(b.trigger_object)) p.push(`${at}.trigger_object: expected articulated furniture, got ${JSON.stringify(b.trigger_object)}`);
          if (!isArticulated(b.target_object) || b.target_object === b.trigger_object) p.push(`${at}.target_object: expected other articulated furniture, got ${JSON.stringify(b.target_object)}`);
          if (b.target_state !== "is_open" && b.target_state !== "is_closed") p.push(`${at}.target_state: expected "is_open" or "is_closed", got ${JSON.stringify(b.target_state)}`);
      }
    });
  if (![...types].some((t) => ASYMMETRY.includes(t))) p.push(`mechanic_bindings: a task needs an asymmetry mechanic (one of ${ASYMMETRY.join(", ")})`);
  // Secrets, actions, message targets.
  if (!isObj(raw.agent_secrets)) p.push(`agent_secrets: expected {agent: [secret…]}`);
  else
    for (const [a, list] of Object.entries(raw.agent_secrets)) {
      if (!isAgent(a)) p.push(`agent_secrets.${a}: unknown agent`);
      if (!isStrList(list)) p.push(`agent_secrets.${a}: expected a list of strings`);
      else list.forEach((s, i) => {
        if (!s.trim().startsWith("(")) return;
        try {
          parseSexp(s);
        } catch (e) {
          p.push(`agent_secrets.${a}[${i}]: ${(e as Error).message}`);
        }
      });
    }
  if (raw.agent_actions !== undefined) {
    if (!isObj(raw.agent_actions)) p.push(`agent_actions: expected {agent: [action names]}`);
    else for (const [a, list] of Object.entries(raw.agent_actions)) if (!isAgent(a) || !isStrList(list) || !list.every((n) => (ACTION_NAMES as readonly string[]).includes(n))) p.push(`agent_actions.${a}: expected an agent mapped to actions of ${ACTION_NAMES.join(", ")}`);
  }
  if (raw.message_targets !== undefined) {
    if (!isObj(raw.message_targets)) p.push(`message_targets: expected {agent: [agents]}`);
    else for (const [a, ts] of Object.entries(raw.message_targets)) if (!isAgent(a) || !isStrList(ts) || !ts.every(isAgent)) p.push(`message_targets.${a}: expected an agent mapped to a list of agents`);
  }
  // The goal: literals over known ids with the right kinds, K over agents, depth 1–3.
  const kindOf = (id: string) => (objects.has(id) ? "object" : furniture.has(id) ? "furniture" : rooms.has(id) ? "room" : agents.includes(id) ? "agent" : null);
  const checkFormula = (field: string, text: unknown, allowK: boolean): Formula | null => {
    if (typeof text !== "string") return null;
    let f: Formula;
    try {
      f = parseFormula(text);
    } catch (e) {
      p.push(`${field}: ${e instanceof ParseError ? e.message : String(e)}`);
      return null;
    }
    for (const k of kNodes(f)) {
      if (!allowK) p.push(`${field}: K is not allowed here (${show(k)})`);
      if (!agents.includes(k.agent)) p.push(`${field}: unknown agent '${k.agent}' in ${show(k)}`);
    }
    for (const l of leavesOf(f)) {
      const sig = GOAL_PREDICATES[l.pred];
      if (sig === undefined) {
        p.push(`${field}: unknown predicate '${l.pred}' (goals use: ${Object.keys(GOAL_PREDICATES).join(", ")})`);
        continue;
      }
      if (l.args.length !== sig.length) p.push(`${field}: ${show(l)} takes ${sig.length} argument(s)`);
      l.args.forEach((a, i) => {
        const kind = kindOf(a);
        const want = sig[i];
        if (kind === null) p.push(`${field}: unknown id '${a}' in ${show(l)}`);
        else if (want !== undefined && want !== kind && !(want === "entity" && (kind === "object" || kind === "furniture"))) p.push(`${field}: '${a}' in ${show(l)} is a ${kind}, expected a ${want}`);
      });
      if ((l.pred === "is_open" || l.pred === "is_closed" || l.pred === "is_inside") && isFurn(l.args[l.pred === "is_inside" ? 1 : 0]) && !isArticulated(l.args[l.pred === "is_inside" ? 1 : 0])) p.push(`${field}: ${show(l)} needs articulated furniture`);
      if (l.pred === "is_on_top" && isArticulated(l.args[1])) p.push(`${field}: ${show(l)}: '${l.args[1]}' is a container; use is_inside`);
    }
    return f;
  };
  const goal = checkFormula("goal", raw.goal, true);
  if (goal !== null) {
    if (functionalConjuncts(goal).length === 0) p.push(`goal: the functional projection (the goal without its K conjuncts) is empty`);
    for (const c of conjuncts(goal)) if (c.kind === "K" && kDepth(c) > MAX_DEPTH) p.push(`goal: ${show(c)} has K-depth ${kDepth(c)}; the most is ${MAX_DEPTH}`);
  }
  if (raw.goal_owners !== undefined) {
    if (!isObj(raw.goal_owners)) p.push(`goal_owners: expected {agent: "<formula>"}`);
    else for (const [a, g] of Object.entries(raw.goal_owners)) {
      if (!isAgent(a)) p.push(`goal_owners.${a}: unknown agent`);
      if (typeof g !== "string") p.push(`goal_owners.${a}: expected a formula string`);
      else checkFormula(`goal_owners.${a}`, g, false);
    }
  }
  if (raw.category === "mixed" && (!isObj(raw.goal_owners) || Object.keys(raw.goal_owners).length === 0)) p.push(`goal_owners: a mixed task needs private objectives (goal_owners)`);
  if (p.length === 0 && goal !== null) {
    const compiled = compileTask(raw as unknown as HouseholdTask);
    if (compiled.kNodes.length > 0 && compiled.depth === 0) p.push(`goal: every K goal is trivial (each agent can observe its fact directly), so the task needs no theory of mind`);
    if (raw.tom_level !== undefined && raw.tom_level !== compiled.depth) p.push(`tom_level: the task says ${JSON.stringify(raw.tom_level)}, but its goal's K-depth (over non-trivial K nodes) is ${compiled.depth}`);
  }
  return p;
}

/** The mechanics in rule form; bindings accumulate (room bans per agent add up). */
export function mechanicsOf(task: HouseholdTask): Mechanics {
  const restricted: Record<string, string[]> = {};
  const msgLimit: Record<string, number> = {};
  const allowed: Record<string, string[]> = {};
  const inverse: string[] = [];
  const remote: { trigger: string; target: string; targetState: "is_open" | "is_closed" }[] = [];
  const mirror: { a: string; b: string; state: "is_open" | "is_closed" }[] = [];
  for (const b of task.mechanic_bindings) {
    if (b.mechanic_type === "room_restriction") for (const a of b.for_agents) restricted[a] = [...new Set([...(restricted[a] ?? []), ...b.restricted_rooms])].sort();
    else if (b.mechanic_type === "limited_bandwidth") Object.assign(msgLimit, b.message_limits);
    else if (b.mechanic_type === "restricted_communication") for (const [a, ts] of Object.entries(b.allowed_targets)) allowed[a] = [...ts];
    else if (b.mechanic_type === "inverse_state") inverse.push(b.trigger_object);
    else if (b.mechanic_type === "remote_control") remote.push({ trigger: b.trigger_object, target: b.target_object, targetState: b.target_state });
    else mirror.push({ a: b.trigger_object, b: b.target_object, state: b.target_state });
  }
  // message_targets takes precedence over allowed_targets (EnactToM's runtime).
  for (const [a, ts] of Object.entries(task.message_targets ?? {})) allowed[a] = [...ts];
  return { restricted, msgLimit, allowedTargets: allowed, inverse, remote, mirror, actions: { ...(task.agent_actions ?? {}) } };
}

/** The room an entity starts in (objects through their furniture); rooms are their own. */
export function initialRoomOf(task: HouseholdTask, id: string): string | null {
  const f = task.scene.furniture[id];
  if (f !== undefined) return f.room;
  const o = task.scene.objects[id];
  if (o !== undefined) return task.scene.furniture[(o.on ?? o.inside)!]?.room ?? null;
  return task.scene.rooms.includes(id) ? id : null;
}

/**
 * Whether an agent can observe a literal directly (EnactToM's static rule, digest §2.2): it is
 * barred from none of the rooms of the literal's non-agent arguments.
 */
export function canObserve(task: HouseholdTask, mechanics: Mechanics, agent: string, lit: Literal): boolean {
  const banned = mechanics.restricted[agent] ?? [];
  return lit.args.every((a) => {
    const room = initialRoomOf(task, a);
    return room === null || !banned.includes(room);
  });
}

export function compileTask(task: HouseholdTask): CompiledTask {
  const mechanics = mechanicsOf(task);
  const goal = formulaOf(parseSexp(task.goal));
  const nodes: KNodeInfo[] = [];
  // Digest §5.3: one probe per K node, nested ones included; the outermost agent asks about the rest of the chain.
  const walk = (f: Formula, chain: string[]): void => {
    if (f.kind === "and") return f.parts.forEach((x) => walk(x, chain));
    if (f.kind !== "K") return;
    const leaves = leavesOf(f.inner);
    const depth = kDepth(f);
    // A nested K is never trivial; a depth-1 K is when its agent can observe the fact (§2.2).
    const trivial = depth === 1 && leaves.every((l) => canObserve(task, mechanics, f.agent, l));
    nodes.push({ id: `k_probe_${nodes.length}`, agent: f.agent, subjects: kNodes(f.inner).filter((k) => k !== f).map((k) => k.agent).slice(0, depth - 1), fact: leaves.map(show).join(" "), depth, trivial });
    walk(f.inner, [...chain, f.agent]);
  };
  walk(goal, []);
  const owned: Record<string, Literal[]> = {};
  for (const [a, g] of Object.entries(task.goal_owners ?? {})) owned[a] = functionalConjuncts(parseFormula(g));
  return {
    task,
    agentIds: Object.keys(task.agents),
    mechanics,
    goal,
    functional: functionalConjuncts(goal),
    owned,
    kNodes: nodes,
    depth: Math.max(0, ...nodes.filter((n) => !n.trivial).map((n) => n.depth)),
  };
}
