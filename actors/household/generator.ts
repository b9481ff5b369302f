// A seeded procedural generator of household tasks (digest §8.2, §8.8 without the model author):
// a house of 4–5 rooms, a goal written first — an object to bring to one of three look-alike
// surfaces in a room its informant may not enter, with one relay per K layer beyond the first
// between the informant and the one agent who may enter — then a second conjunct through one of the
// mechanics, the K goal of the asked depth, and the secrets that make the goal need others; a
// mixed task adds a private objective in tension with the shared goal.
// Pure and deterministic: the same options give the same task, and JSON.stringify gives the same
// bytes. Every task it returns has passed the verifier (digest §8.6).
import { InternalError } from "../../events/internalError.ts";
import { deriveStream, Draws } from "../rng.ts";
import type { FurnitureSpec, HouseholdTask, MechanicBinding, ObjectSpec } from "./task.ts";
import { verifyTask } from "./verifier/verify.ts";

export interface GenerateOptions {
  readonly seed: number;
  readonly depth: 1 | 2 | 3;
  readonly category: "cooperative" | "mixed";
  /** hard: message limits of 1 (a relay gets the 2 it needs). */
  readonly split?: "standard" | "hard";
}

const ROOMS = ["kitchen", "dining_room", "living_room", "bedroom", "bathroom", "hallway", "office", "laundry_room"];
const SURFACES = ["table", "counter", "shelf", "desk"];
const CONTAINERS = ["cabinet", "drawer", "fridge", "wardrobe"];
const OBJECTS = ["bowl", "cup", "book", "plate", "vase", "apple", "towel", "mug", "candle"];
const SECONDARY = ["plain", "remote", "inverse", "mirror", "none"] as const;

const shuffled = <T>(d: Draws, xs: readonly T[]): T[] => {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = d.int(0, i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
};
const words = (id: string) => id.replace(/_\d+$/, "").replace(/_/g, " ");

/** Drafts that may fail the verifier before the generator gives up (none has yet: see verifiedTask). */
export const MAX_ATTEMPTS = 50;

/**
 * A task that passes the verifier (verifier/verify.ts), by rejection: drafts are drawn from the
 * seed's stream (attempt 0) and then from retry streams until one passes. The verifier's turn
 * estimate raises `max_turns` where the draft's own allowance is lower, and its golden trajectory
 * (with the state hashes) goes into the task.
 */
export function generateTask(o: GenerateOptions): HouseholdTask {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const draft = draftTask(o, attempt);
    const verdict = verifyTask(draft, { target: o.depth, subgoalTension: true });
    if (!verdict.ok) continue;
    const tMax = verdict.report!.turns!.tMax;
    const task = tMax > draft.max_turns! ? { ...draft, max_turns: tMax } : draft;
    const final = task === draft ? verdict : verifyTask(task, { target: o.depth, subgoalTension: true });
    if (final.ok) return { ...task, golden_trajectory: final.report!.golden! };
  }
  throw new InternalError(`household generator: no draft of ${JSON.stringify(o)} passed the verifier in ${MAX_ATTEMPTS} attempts`);
}

/** One draft of a task, before the verifier has seen it. */
export function draftTask(o: GenerateOptions, attempt = 0): HouseholdTask {
  const split = o.split ?? "standard";
  const d = new Draws(deriveStream(o.seed, `household/generate/${o.depth}/${o.category}/${split}${attempt === 0 ? "" : `/retry${attempt}`}`));
  let counter = d.int(10, 40);
  const id = (kind: string) => `${kind}_${counter++}`;
  const rooms = shuffled(d, ROOMS).slice(0, d.int(4, 5)).map((r) => `${r}_1`);
  const furniture: Record<string, FurnitureSpec> = {};
  const surfaces: Record<string, string[]> = {};
  const containers: Record<string, string[]> = {};
  for (const r of rooms) {
    surfaces[r] = [];
    containers[r] = [];
    for (let i = d.int(1, 2); i > 0; i--) {
      const f = id(d.pick(SURFACES));
      furniture[f] = { room: r, kind: words(f), articulated: false };
      surfaces[r]!.push(f);
    }
    for (let i = d.int(0, 1); i >= 0; i--) {
      const f = id(d.pick(CONTAINERS));
      furniture[f] = { room: r, kind: words(f), articulated: true, open: false };
      containers[r]!.push(f);
    }
  }
  // The target room gets three look-alike surfaces: the right one cannot be guessed (digest §8.6).
  const [targetRoom, ...others] = rooms as [string, ...string[]];
  const targetKind = d.pick(["table", "shelf"]);
  const lookalikes = [0, 1, 2].map(() => {
    const f = id(targetKind);
    furniture[f] = { room: targetRoom, kind: targetKind, articulated: false };
    return f;
  });
  const target = d.pick(lookalikes);
  // Objects on surfaces or in containers outside the target room.
  const objects: Record<string, ObjectSpec> = {};
  const placeable = others.flatMap((r) => [...surfaces[r]!.map((f) => ({ on: f })), ...containers[r]!.map((f) => ({ inside: f }))]);
  const objectIds = shuffled(d, OBJECTS).slice(0, d.int(4, 6)).map((k) => id(k));
  for (const x of objectIds) objects[x] = { kind: words(x), ...d.pick(placeable) };
  const main = objectIds[0]!;
  const mainLoc = objects[main]!;
  const mainLit = `(is_on_top ${main} ${target})`;

  // The decisive fact (the target surface) travels one hop per K layer: a depth-d task is a chain
  // informant → relay… → actor with d − 1 relays, and its K goal names the chain's first d agents
  // (K agent_0 (K agent_2 … φ)); the actor is one hop past the last of them. Knowledge about a
  // teammate's knowledge travels only by that teammate's own message (digest §2.3), so each K layer
  // is one more agent the fact must pass through before the informant can learn who knows it.
  const agentIds = Array.from({ length: o.depth + 1 }, (_, i) => `agent_${i}`);
  const [informant, actor, ...relays] = agentIds as [string, string, ...string[]];
  const chainOrder = [informant, ...relays, actor];
  const chain = relays.length > 0;
  const limit = split === "hard" ? 1 : 2;
  // Relays are barred from the target room too, so the actor alone can place the object and the
  // fact cannot reach it but through them.
  const restricted: Record<string, string[]> = Object.fromEntries([informant, ...relays].map((a) => [a, [targetRoom]]));
  const secrets: Record<string, string[]> = Object.fromEntries(agentIds.map((a) => [a, [] as string[]]));
  secrets[informant]!.push(`(goal ${mainLit})`);
  if (d.chance(0.5)) secrets[informant]!.push("on" in mainLoc ? `(is_on_top ${main} ${mainLoc.on})` : `(is_inside ${main} ${mainLoc.inside})`);
  const bindings: MechanicBinding[] = [];
  const goal = [mainLit];
  // Who the informant tells: the next agent on the chain.
  const firstContact = chainOrder[1]!;

  // The second conjunct, through a mechanic: on a piece of its own, holding no object.
  const kind = SECONDARY[d.int(0, SECONDARY.length - 1)]!;
  const piece = (room: string) => {
    const f = id(d.pick(CONTAINERS));
    furniture[f] = { room, kind: words(f), articulated: true, open: false };
    return f;
  };
  const anyRoom = () => d.pick(others);
  // The piece the second conjunct opens (none: no second conjunct).
  let second: string | null = null;
  if (kind === "plain" || kind === "inverse") {
    const c = piece(anyRoom());
    second = c;
    goal.push(`(is_open ${c})`);
    secrets[actor]!.push(`(goal (is_open ${c}))`);
    if (kind === "inverse") {
      bindings.push({ mechanic_type: "inverse_state", trigger_object: c });
      if (d.chance(0.5)) secrets[actor]!.push(`(is_inverse ${c})`);
    }
  } else if (kind === "remote" || kind === "mirror") {
    // A storage room nobody may enter: its piece is reached only through the mechanic, which the
    // informant's first contact knows about and the informant does not.
    const storage = "storage_room_1";
    rooms.push(storage);
    const g = piece(storage);
    const t = piece(anyRoom());
    second = g;
    for (const a of agentIds) restricted[a] = [...(restricted[a] ?? []), storage];
    goal.push(`(is_open ${g})`);
    secrets[informant]!.push(`(goal (is_open ${g}))`);
    if (kind === "remote") {
      bindings.push({ mechanic_type: "remote_control", trigger_object: t, target_object: g, target_state: "is_open" });
      secrets[firstContact]!.push(`(controls ${t} ${g})`);
    } else {
      bindings.push({ mechanic_type: "state_mirroring", trigger_object: t, target_object: g, target_state: "is_open" });
      secrets[firstContact]!.push(`(mirrors ${t} ${g})`);
    }
  }
  // The K goal: the informant, barred from the target room, must come to know that the first
  // d − 1 agents after it on the chain know (that the next knows …) it is done.
  const kGoal = chainOrder.slice(0, o.depth).reduceRight((inner, a) => `(K ${a} ${inner})`, mainLit);
  goal.push(kGoal);

  bindings.unshift({ mechanic_type: "room_restriction", restricted_rooms: [targetRoom], for_agents: [informant, ...relays] });
  // A relay passes the target on and later reports back: two messages, even on the hard split.
  const limitOf = (a: string) => (relays.includes(a) ? Math.max(limit, 2) : limit);
  for (const [a, rs] of Object.entries(restricted)) {
    const extra = rs.filter((r) => r !== targetRoom);
    if (extra.length > 0) bindings.push({ mechanic_type: "room_restriction", restricted_rooms: extra, for_agents: [a] });
  }
  bindings.push({ mechanic_type: "limited_bandwidth", message_limits: Object.fromEntries(agentIds.map((a) => [a, limitOf(a)])) });
  // On a chain each agent may message only its neighbours.
  const neighbours = (a: string) => chainOrder.filter((_, i) => Math.abs(i - chainOrder.indexOf(a)) === 1);
  if (chain) bindings.push({ mechanic_type: "restricted_communication", allowed_targets: Object.fromEntries(chainOrder.map((a) => [a, neighbours(a)])) });
  for (const a of agentIds) {
    for (const r of restricted[a] ?? []) secrets[a]!.push(`(is_restricted ${a} ${r})`);
    secrets[a]!.push(`(message_limit ${a} ${limitOf(a)})`);
  }
  if (chain) for (const a of chainOrder) for (const t of neighbours(a)) secrets[a]!.push(`(can_communicate ${a} ${t})`);
  // Whether an agent knows that the next on the chain is barred too is a coin toss for each hop that
  // ends at a relay. An agent that hands a goal only to a teammate it believes can act (the
  // first-order agent) passes it to a relay only while it does not know; one that models what the
  // relay will tell others passes it on either way. Each K layer adds a hop, one more toss to lose.
  for (let i = 0; i + 2 < chainOrder.length; i++) if (d.chance(0.5)) secrets[chainOrder[i]!]!.push(`(is_restricted ${chainOrder[i + 1]} ${targetRoom})`);

  const agents: Record<string, { room: string }> = {};
  for (const a of agentIds) agents[a] = { room: d.pick(rooms.filter((r) => !(restricted[a] ?? []).includes(r))) };

  let goalOwners: Record<string, string> | undefined;
  if (o.category === "mixed") {
    // A private objective for the actor (not required for success) that pulls against the shared
    // goal, as the paper's judge asks of a mixed task (digest §6.3, subgoal tension): it cannot hold
    // together with a shared conjunct. Either the object the team must place belongs, for the actor,
    // on another surface (one of the target's look-alikes or a surface elsewhere), or the piece the
    // team must open should stay closed. Only the actor can place the object, so only the actor can
    // undo what the team needs.
    let owned: string;
    if (second !== null && d.chance(0.5)) owned = `(is_closed ${second})`;
    else {
      const elsewhere = [...lookalikes.filter((f) => f !== target), ...others.flatMap((r) => surfaces[r]!).filter((f) => !("on" in mainLoc) || f !== mainLoc.on)];
      owned = `(is_on_top ${main} ${d.pick(elsewhere)})`;
    }
    goalOwners = { [actor]: owned };
    secrets[actor]!.push(`(own_goal ${owned})`);
  }
  const hops = o.depth;
  const search = "on" in mainLoc ? 2 : 4;
  const tMin = hops + rooms.length + search + 4;
  const task: HouseholdTask = {
    task_id: `gen-${o.category === "cooperative" ? "coop" : "mixed"}-d${o.depth}-${split}-s${o.seed}`,
    title: `${words(main)[0]!.toUpperCase()}${words(main).slice(1)} for the ${words(targetRoom)}`,
    category: o.category,
    split,
    task: `Get the ${words(targetRoom)} ready: ${/^[aeiou]/.test(main) ? "an" : "a"} ${words(main)} from elsewhere in the house belongs on one of its ${targetKind === "shelf" ? "shelves" : `${targetKind}s`}${goal.length > 2 ? ", and a cupboard needs opening" : ""}.`,
    scene: { rooms, furniture, objects },
    agents,
    mechanic_bindings: bindings,
    agent_secrets: secrets,
    goal: `(and ${goal.join(" ")})`,
    ...(goalOwners === undefined ? {} : { goal_owners: goalOwners }),
    tom_level: o.depth,
    max_turns: 2 * Math.max(tMin, 6),
  };
  return task;
}

/** A generated task's id parsed back into its options: `gen-coop-d2-standard-s7`. */
export function generatedOptionsOf(id: string): GenerateOptions | null {
  const m = /^gen-(coop|mixed)-d([123])-(standard|hard)-s(\d+)$/.exec(id);
  if (m === null) return null;
  const seed = Number(m[4]);
  if (!Number.isSafeInteger(seed)) return null;
  return { seed, depth: Number(m[2]) as 1 | 2 | 3, category: m[1] === "coop" ? "cooperative" : "mixed", split: m[3] as "standard" | "hard" };
}
