// The task verifier (digest §8.6), in TypeScript with no external planner. Stages, each in its own
// file, all deterministic: validation → depth and inflated K → relevance abstraction → physical
// search (functional goal and strip_K(φ); private objectives) → information necessity and
// non-guessability →
// epistemic search → communication necessity → agent necessity (necessity.ts) → golden trajectory
// (schedule.ts, golden.ts) and turn estimate. Every failure is a tagged value (findings.ts); a verdict lists all of them, not just
// the first, with the proof statistics of every stage that ran.
import { leavesOf, literalKey, mutuallyExclusive, show, type Literal } from "../pddl.ts";
import { DEFAULT_MAX_TURNS, type HouseholdTask } from "../task.ts";
import { checkDepth, inflatedK } from "./depth.ts";
import { epistemicModel, searchKnowledge, type Message } from "./epistemic.ts";
import type { VerifierFailure } from "./findings.ts";
import { goldenTrajectory, type GoldenTrajectory } from "./golden.ts";
import { guessability, type Guessability } from "./guessability.ts";
import { informationOf, type LiteralInformation } from "./information.ts";
import { agentNecessity, communicationNecessity, type AgentNecessity, type CommunicationNecessity } from "./necessity.ts";
import { NODE_CAP, searchPlans } from "./physical.ts";
import { abstractFor } from "./relevance.ts";
import { scheduleTurns } from "./schedule.ts";
import { stateCodec } from "./stateKey.ts";
import { estimateTurns, type TurnEstimate } from "./turnEstimate.ts";
import { validate } from "./validation.ts";

export interface VerifierReport {
  readonly tomLevel: number;
  readonly trivialK: readonly string[];
  readonly functional: readonly string[];
  readonly relevance: { readonly rooms: readonly string[]; readonly furniture: readonly string[]; readonly objects: readonly string[]; readonly collapsed: boolean; readonly stateBound: number };
  readonly physical: { readonly nodes: number; readonly plan: readonly { readonly agent: string; readonly action: string }[]; readonly stripKPlanLength: number | null };
  /** Per owner of a private objective (mixed tasks), its shortest plan's length (null: unreachable). */
  readonly privateObjectives: readonly { readonly agent: string; readonly planLength: number | null }[];
  /** Unless VerifyOptions.subgoalTension is false: per owner, whether its objective pulls against the shared goal (empty: cooperative). */
  readonly subgoalTension?: readonly SubgoalTension[];
  readonly information: readonly LiteralInformation[];
  readonly guessability: readonly Guessability[];
  readonly epistemic: { readonly nodes: number; readonly messages: readonly Message[] | null };
  readonly communication: CommunicationNecessity;
  /** Per agent, what freezing it breaks: the physical search, the epistemic one, or neither. */
  readonly agents: readonly AgentNecessity[];
  readonly turns: TurnEstimate | null;
  readonly golden: GoldenTrajectory | null;
  /** Nodes expanded over every search the verdict needed. */
  readonly totalNodes: number;
  /** Milliseconds per stage, when the caller gave a clock (VerifyOptions.clock). */
  readonly timings?: Readonly<Record<VerifierStage, number>>;
}

/** The stages a verdict times, in the order they run. */
export const VERIFIER_STAGES = ["validation", "depth", "physical", "privateObjectives", "information", "epistemic", "communication", "agents", "golden", "subgoalTension"] as const;

/**
 * The judge's "subgoal tension" (digest §6.3, criterion 8 for mixed tasks), as a deterministic
 * check: an owner's private objective is in tension with the shared goal when both cannot hold
 * together (`conflict`: the joint physical search fails while each is reachable alone), or when it
 * names an object or piece of furniture a shared conjunct names (`contention`: the two compete for
 * it). Otherwise it is independent: pursuing it costs the team nothing but turns. A conflict that
 * the house's structure decides (a shared conjunct and the objective mutually exclusive: one piece
 * open and closed, one object in two places; pddl.ts `mutuallyExclusive`) needs no joint search.
 */
export interface SubgoalTension {
  readonly agent: string;
  readonly objective: string;
  readonly tension: "conflict" | "contention" | null;
  /** Ids the objective shares with the shared goal's conjuncts. */
  readonly shared: readonly string[];
  /** The joint shortest plan (shared goal and objective together; null: none). */
  readonly jointPlanLength: number | null;
  /** Pairs (shared conjunct, objective literal) that can never hold together; when any, no joint search runs. */
  readonly exclusive: readonly (readonly [string, string])[];
  readonly nodes: number;
}
export type VerifierStage = (typeof VERIFIER_STAGES)[number];

export interface Verdict {
  readonly ok: boolean;
  readonly failures: readonly VerifierFailure[];
  /** Null when the task did not validate. */
  readonly report: VerifierReport | null;
}

export interface VerifyOptions {
  /** The K-depth asked for (default: the task's tom_level, else its computed depth). */
  readonly target?: number;
  readonly cap?: number;
  /**
   * A clock in milliseconds, given by a caller that reports each stage's time (the verifier itself
   * reads no clock: it is deterministic).
   */
  readonly clock?: () => number;
  /**
   * Check that each private objective of a mixed task pulls against the shared goal
   * (SubgoalTension), as the paper's judge asks of every mixed task (digest §6.3). On unless false:
   * the generator draws objectives in tension and the committed pool passes it (docs/enacttom.md).
   */
  readonly subgoalTension?: boolean;
}

const unique = (ls: readonly Literal[]): Literal[] => [...new Map(ls.map((l) => [literalKey(l), l])).values()];

export function verifyTask(raw: unknown, options: VerifyOptions = {}): Verdict {
  const clock = options.clock;
  const timings: Partial<Record<VerifierStage, number>> = {};
  let last = clock?.() ?? 0;
  const lap = (stage: VerifierStage): void => {
    if (clock === undefined) return;
    const now = clock();
    timings[stage] = now - last;
    last = now;
  };
  const v = validate(raw);
  lap("validation");
  if (v._tag === "Invalid") return { ok: false, failures: [{ _tag: "Invalid", problems: v.problems }], report: null };
  const c = v.compiled;
  const task: HouseholdTask = c.task;
  const failures: VerifierFailure[] = [];
  let totalNodes = 0;
  const depth = checkDepth(c, options.target ?? task.tom_level ?? c.depth);
  if (depth._tag === "DepthMismatch") failures.push(depth);
  failures.push(...inflatedK(c));
  lap("depth");

  // Physical: the functional projection, and strip_K(φ) (every physical literal, those in K too).
  const stripK = unique([...c.functional, ...leavesOf(c.goal)]);
  const abs = abstractFor(c, stripK);
  const cap = options.cap ?? NODE_CAP;
  const physical = searchPlans(abs, [c.functional, stripK], { cap });
  totalNodes += physical.nodes;
  const [functionalPlan, stripKPlan] = physical.plans;
  if (physical.capped) failures.push({ _tag: "TooLarge", nodes: physical.nodes, cap });
  else if (functionalPlan === null) failures.push({ _tag: "PhysicallyUnsolvable", goal: "functional", nodes: physical.nodes });
  else if (stripKPlan === null) failures.push({ _tag: "PhysicallyUnsolvable", goal: "strip_k", nodes: physical.nodes });
  lap("physical");

  // A mixed task's private objectives: each reachable at all (they are not part of success).
  const privateObjectives = Object.entries(c.owned).map(([agent, literals]) => {
    const search = searchPlans(abstractFor(c, literals), [literals], { cap });
    totalNodes += search.nodes;
    if (search.plans[0] === null) failures.push({ _tag: "PrivateObjectiveUnreachable", agent, nodes: search.nodes });
    return { agent, planLength: search.plans[0]?.length ?? null };
  });
  lap("privateObjectives");

  // Information necessity and non-guessability.
  const information = informationOf(c, c.functional);
  const dependent = information.filter((x) => x.info.dependent);
  if (dependent.length === 0) failures.push({ _tag: "NoInformationDependence" });
  const guesses = dependent.map((x) => guessability(c, x.info));
  if (guesses.length > 0 && guesses.every((g) => g.guessable)) failures.push({ _tag: "Guessable", literal: guesses[0]!.literal, decisive: guesses[0]!.decisive, candidates: guesses[0]!.candidates, leakedInText: guesses[0]!.leakedInText });
  lap("information");

  // Epistemic: the K goals and the needed information, within budgets and the graph.
  const model = epistemicModel(c, dependent.map((x) => ({ literal: x.literal, holders: x.info.holders, achievers: x.info.achievers })));
  const epistemic = searchKnowledge(model);
  totalNodes += epistemic.nodes;
  if (epistemic._tag === "Unreachable") failures.push({ _tag: "EpistemicallyUnsolvable", nodes: epistemic.nodes });
  lap("epistemic");
  const communication = communicationNecessity(model);
  totalNodes += communication.nodes;
  if (communication._tag === "SolvableWithoutMessages") failures.push(communication);
  lap("communication");

  // Agent necessity: freeze each agent in turn; some search must then fail. Only asked of a task
  // both searches solve (otherwise every agent would look needed).
  const solved = functionalPlan !== null && functionalPlan !== undefined && stripKPlan !== null && stripKPlan !== undefined && epistemic._tag === "Reached";
  const agents = solved ? c.agentIds.map((a) => agentNecessity(abs, stripK, model, a, cap)) : [];
  for (const a of agents) {
    totalNodes += a.nodes;
    if (a.breaks.length === 0) failures.push({ _tag: "AgentNotNeeded", agent: a.agent });
  }
  lap("agents");

  // Golden trajectory under the full rules, and the turn estimate.
  let golden: GoldenTrajectory | null = null;
  let turns: TurnEstimate | null = null;
  if (functionalPlan !== null && functionalPlan !== undefined) {
    const g = goldenTrajectory(c, scheduleTurns(c, functionalPlan));
    if ("_tag" in g) failures.push(g);
    else {
      golden = g;
      turns = estimateTurns(g.turns.length, epistemic._tag === "Reached" ? epistemic.messages : []);
      const maxTurns = task.max_turns ?? DEFAULT_MAX_TURNS;
      if (maxTurns < turns.tMin) failures.push({ _tag: "TurnLimitTooSmall", maxTurns, tMin: turns.tMin });
    }
  }
  lap("golden");
  let subgoalTension: SubgoalTension[] | undefined;
  if (options.subgoalTension !== false) {
    const ids = new Set(c.functional.flatMap((l) => l.args));
    subgoalTension = Object.entries(c.owned).map(([agent, literals]) => {
      const exclusive = c.functional.flatMap((f) => literals.filter((l) => mutuallyExclusive(f, l)).map((l) => [show(f), show(l)] as const));
      const joint = unique([...c.functional, ...literals]);
      const search = exclusive.length > 0 ? { plans: [null], nodes: 0, capped: false } : searchPlans(abstractFor(c, joint), [joint], { cap });
      totalNodes += search.nodes;
      const shared = [...new Set(literals.flatMap((l) => l.args).filter((id) => ids.has(id)))].sort();
      const alone = privateObjectives.find((p) => p.agent === agent)?.planLength ?? null;
      const tension = search.plans[0] === null && !search.capped && functionalPlan !== null && alone !== null ? "conflict" : shared.length > 0 ? "contention" : null;
      const objective = literals.length === 1 ? show(literals[0]!) : `(and ${literals.map(show).join(" ")})`;
      if (tension === null) failures.push({ _tag: "NoSubgoalTension", agent, objective, jointPlanLength: search.plans[0]?.length ?? null });
      return { agent, objective, tension, shared, jointPlanLength: search.plans[0]?.length ?? null, exclusive, nodes: search.nodes };
    });
    lap("subgoalTension");
  }
  const report: VerifierReport = {
    tomLevel: c.depth,
    trivialK: depth._tag === "DepthOk" ? depth.trivial : [],
    functional: c.functional.map(show),
    relevance: { rooms: abs.rooms, furniture: abs.furniture, objects: abs.objects, collapsed: abs.collapsed, stateBound: stateCodec(abs).size },
    physical: { nodes: physical.nodes, plan: (functionalPlan ?? []).map((s) => ({ agent: s.agent, action: s.text })), stripKPlanLength: stripKPlan?.length ?? null },
    privateObjectives,
    ...(subgoalTension === undefined ? {} : { subgoalTension }),
    information: information.map((x) => x.info),
    guessability: guesses,
    epistemic: { nodes: epistemic.nodes, messages: epistemic._tag === "Reached" ? epistemic.messages : null },
    communication,
    agents,
    turns,
    golden,
    totalNodes,
    ...(clock === undefined ? {} : { timings: timings as Record<VerifierStage, number> }),
  };
  return { ok: failures.length === 0, failures, report };
}
