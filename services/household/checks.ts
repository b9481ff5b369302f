// A verifier verdict (actors/household/verifier/verify.ts) as one line per check: its verdict, the
// reason (the failure's fields, or what the check found) and the stage's time. What
// `tasks verify` prints and its --json gives.
import type { HouseholdTask } from "../../actors/household/task.ts";
import type { VerifierFailure } from "../../actors/household/verifier/findings.ts";
import type { Verdict, VerifierStage } from "../../actors/household/verifier/verify.ts";

export interface CheckLine {
  readonly check: string;
  readonly ok: boolean;
  readonly reason: string;
  readonly ms: number | null;
}

/** The checks in the order they run: the stage that times each, and the failure tags that fail it. */
const CHECKS: readonly { readonly check: string; readonly stage: VerifierStage; readonly tags: readonly VerifierFailure["_tag"][] }[] = [
  { check: "validation", stage: "validation", tags: ["Invalid"] },
  { check: "depth and inflated K", stage: "depth", tags: ["DepthMismatch", "InflatedK"] },
  { check: "physical search", stage: "physical", tags: ["PhysicallyUnsolvable", "TooLarge"] },
  { check: "private objectives", stage: "privateObjectives", tags: ["PrivateObjectiveUnreachable"] },
  { check: "information and non-guessability", stage: "information", tags: ["NoInformationDependence", "Guessable"] },
  { check: "epistemic search", stage: "epistemic", tags: ["EpistemicallyUnsolvable"] },
  { check: "communication necessity", stage: "communication", tags: ["SolvableWithoutMessages"] },
  { check: "agent necessity", stage: "agents", tags: ["AgentNotNeeded"] },
  { check: "golden trajectory and turns", stage: "golden", tags: ["GoldenDiverges", "TurnLimitTooSmall"] },
  // Unless skipped (tasks verify --no-subgoal-tension): the report then carries it.
  { check: "subgoal tension", stage: "subgoalTension", tags: ["NoSubgoalTension"] },
];

/** A failure as a reader's sentence, from its fields. */
export function failureReason(f: VerifierFailure): string {
  switch (f._tag) {
    case "Invalid":
      return f.problems.map((p) => `${p.field}: ${p.problem}`).join("; ");
    case "PhysicallyUnsolvable":
      return `no sequence of actions reaches the ${f.goal === "functional" ? "functional goal" : "goal's facts (strip_K)"} (${f.nodes} states)`;
    case "TooLarge":
      return `more than ${f.cap} states (${f.nodes} expanded)`;
    case "EpistemicallyUnsolvable":
      return `no message plan within the budgets and allowed targets reaches every K goal and needed fact (${f.nodes} nodes)`;
    case "DepthMismatch":
      return `computed K-depth ${f.computed}, expected ${f.target}`;
    case "InflatedK":
      return `${f.node}: ${f.agent} can observe the fact itself, so the K adds no theory of mind`;
    case "SolvableWithoutMessages":
      return `reachable with every message budget at 0 (${f.nodes} nodes)`;
    case "AgentNotNeeded":
      return `${f.agent} is not needed: freezing it breaks neither search`;
    case "NoInformationDependence":
      return "no functional literal needs an id only agents who cannot achieve it hold";
    case "Guessable":
      return `${f.literal}: ${f.decisive} can be guessed (${f.candidates.length} look-alike(s)${f.leakedInText ? ", named in the public text" : ""})`;
    case "PrivateObjectiveUnreachable":
      return `${f.agent}'s private objective is unreachable (${f.nodes} states)`;
    case "TurnLimitTooSmall":
      return `max_turns ${f.maxTurns} is below T_min ${f.tMin}`;
    case "GoldenDiverges":
      return `turn ${f.turn}: ${f.agent}'s ${f.action} fails under the full rules (${f.reason})`;
    case "NoSubgoalTension":
      return `${f.agent}'s private objective ${f.objective} pulls nowhere against the shared goal: both hold together (joint plan ${f.jointPlanLength ?? "-"} step(s)) and it names none of the shared goal's objects or furniture`;
  }
}

/** What a passing check found. */
function found(check: string, v: Verdict, task: HouseholdTask): string {
  const r = v.report;
  if (r === null) return "";
  switch (check) {
    case "validation":
      return "ids, kinds, mechanics and goal are well formed";
    case "depth and inflated K":
      return `K-depth ${r.tomLevel}${r.trivialK.length > 0 ? ` (trivial: ${r.trivialK.join(", ")})` : ""}; no K inflated`;
    case "physical search":
      return `shortest plan ${r.physical.plan.length} step(s), strip_K ${r.physical.stripKPlanLength ?? "-"} (${r.physical.nodes} states; ${r.relevance.rooms.length} rooms, ${r.relevance.furniture.length} furniture, ${r.relevance.objects.length} objects kept)`;
    case "private objectives":
      return r.privateObjectives.length === 0 ? "none (cooperative)" : r.privateObjectives.map((p) => `${p.agent}: ${p.planLength} step(s)`).join(", ");
    case "information and non-guessability": {
      const dependent = r.information.filter((i) => i.dependent);
      return `${dependent.map((i) => `${i.literal} needs ${i.decisive} (held by ${i.holders.join(", ")}; achievable by ${i.achievers.join(", ") || "nobody alone"})`).join("; ")}; ${r.guessability.filter((g) => !g.guessable).length} non-guessable`;
    }
    case "epistemic search":
      return `${r.epistemic.messages?.length ?? 0} message(s) in the shortest plan (${r.epistemic.nodes} nodes)`;
    case "communication necessity":
      return `unreachable with no messages (${r.communication.nodes} nodes)`;
    case "agent necessity":
      return r.agents.map((a) => `${a.agent}: ${a.breaks.join("+")}`).join(", ");
    case "golden trajectory and turns": {
      const stored = task.golden_trajectory;
      const same = stored === undefined ? "" : stored.trajectory_hash === r.golden?.trajectory_hash ? "; matches the file's" : "; differs from the file's";
      return `${r.golden?.turns.length ?? 0} turn(s), hash ${r.golden?.trajectory_hash.slice(0, 12) ?? "-"}${same}; T_min ${r.turns?.tMin ?? "-"}, T_max ${r.turns?.tMax ?? "-"}, max_turns ${task.max_turns ?? "default"}`;
    }
    case "subgoal tension":
      return (r.subgoalTension ?? []).length === 0 ? "none (cooperative)" : (r.subgoalTension ?? []).map((t) => `${t.agent}: ${t.tension}${t.shared.length > 0 ? ` over ${t.shared.join(", ")}` : ""}${t.tension === "conflict" ? ` (cannot hold with ${t.exclusive.length > 0 ? t.exclusive.map(([g]) => g).join(", ") : "the shared goal"})` : ""}`).join(", ");
    default:
      return "";
  }
}

/** One line per check. A stored golden trajectory the verifier does not reproduce fails its check. */
export function checkLines(v: Verdict, task: HouseholdTask): CheckLine[] {
  return CHECKS.filter(({ stage }) => stage !== "subgoalTension" || v.report?.subgoalTension !== undefined || v.failures.some((f) => f._tag === "NoSubgoalTension")).map(({ check, stage, tags }) => {
    const failures = v.failures.filter((f) => tags.includes(f._tag));
    const ms = v.report?.timings?.[stage] ?? null;
    if (failures.length > 0) return { check, ok: false, reason: failures.map(failureReason).join("; "), ms };
    if (v.report === null) return { check, ok: false, reason: "not run (the task did not validate)", ms };
    const goldenDiffers = stage === "golden" && task.golden_trajectory !== undefined && task.golden_trajectory.trajectory_hash !== v.report.golden?.trajectory_hash;
    return { check, ok: !goldenDiffers, reason: found(check, v, task), ms };
  });
}
