// The K-depth dissociation without a model (issue 23): the generator ties a task's K-depth to how
// far its decisive fact must travel — one hop per K layer, through relays barred from the target
// room — so functional success depends on how much of its partners' knowledge an agent models. The
// competent agent hands a goal to a relay that can only pass it on; the first-order agent hands it
// only to a teammate it believes can act, so it gets the fact past a relay only while it does not
// know the relay is barred.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateTask } from "../actors/household/generator.ts";
import type { Policy } from "../actors/household/policy.ts";
import { compileTask, type HouseholdTask } from "../actors/household/task.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { splitTasks } from "../services/household/commands/evalEnacttom.ts";
import { householdMetrics } from "../services/household/metrics.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { loadWorlds } from "../services/worlds.ts";
import { logRecords, tempDir } from "./helpers.ts";

/** The agents on the shortest message path from the informant (agent_0) to the actor (agent_1). */
function messagePath(task: HouseholdTask): string[] {
  const c = compileTask(task);
  const next = (a: string) => c.mechanics.allowedTargets[a] ?? c.agentIds.filter((b) => b !== a);
  const from: Record<string, string> = {};
  const queue = ["agent_0"];
  while (queue.length > 0) {
    const a = queue.shift()!;
    for (const b of next(a)) if (b !== "agent_0" && from[b] === undefined) (from[b] = a), queue.push(b);
  }
  const path = ["agent_1"];
  while (path[0] !== "agent_0") path.unshift(from[path[0]!]!);
  return path;
}

const targetRoomOf = (task: HouseholdTask): string => {
  const c = compileTask(task);
  return task.scene.furniture[c.functional[0]!.args[1]!]!.room;
};

/** Whether a secret tells its agent of another agent's ban. */
const partnerBan = (self: string, secret: string): boolean => secret.startsWith("(is_restricted ") && !secret.startsWith(`(is_restricted ${self} `);

/** The task with every agent on the chain told (or not told) that the next one cannot enter the target room. */
function withPartnerBans(task: HouseholdTask, told: boolean): HouseholdTask {
  const path = messagePath(task);
  const room = targetRoomOf(task);
  const secrets = Object.fromEntries(Object.entries(task.agent_secrets).map(([a, ss]) => [a, ss.filter((s) => !partnerBan(a, s))]));
  // Every hop that ends at a relay (not the actor, who can enter).
  if (told) for (let i = 0; i + 2 < path.length; i++) secrets[path[i]!]!.push(`(is_restricted ${path[i + 1]} ${room})`);
  return { ...task, agent_secrets: secrets };
}

async function outcome(task: HouseholdTask, policy: Policy, label: string) {
  await loadWorlds();
  const dir = join(tempDir(`hh-depth-${label}`), "ep");
  await runEpisode({ world: "household", seed: 0, condition: policy, config: { task }, dir, trace: { exporter: "none" }, fsync: "never", snapshotEvery: 10 });
  const m = householdMetrics(logRecords(dir));
  return { success: m.success === 1, literalPass: m.literalPass === 1 };
}

describe("the generator ties K-depth to the relay chain", () => {
  it("a depth-d task's target travels d hops, through agents barred from its room whom the K goal names", () => {
    for (const depth of [1, 2, 3] as const)
      for (const split of ["standard", "hard"] as const)
        for (let seed = 0; seed < 4; seed++) {
          const task = generateTask({ seed, depth, category: seed % 2 === 0 ? "cooperative" : "mixed", split });
          const c = compileTask(task);
          const path = messagePath(task);
          expect(c.agentIds).toHaveLength(depth + 1);
          expect(path).toHaveLength(depth + 1);
          // Only the actor may enter the target room; only the informant knows the target.
          const room = targetRoomOf(task);
          expect(c.agentIds.filter((a) => !(c.mechanics.restricted[a] ?? []).includes(room))).toEqual(["agent_1"]);
          const target = c.functional[0]!.args[1]!;
          expect(Object.entries(task.agent_secrets).filter(([, ss]) => ss.some((s) => s.includes(target))).map(([a]) => a)).toEqual(["agent_0"]);
          // The root K node: agent_0 knows that the next d − 1 agents on the path know (…) the fact.
          expect(c.kNodes[0]).toMatchObject({ agent: "agent_0", subjects: path.slice(1, depth), depth });
        }
  });

  it("telling agents of their contacts' bans, or not, keeps a task verified", () => {
    const task = generateTask({ seed: 5, depth: 3, category: "cooperative" });
    for (const told of [true, false]) expect(verifyTask(withPartnerBans(task, told), { target: 3 }).ok).toBe(true);
  });
});

describe("the dissociation in episodes", () => {
  it("first-order succeeds at depth 1 and fails a depth-3 relay task whose relays it knows are barred; competent succeeds at both", async () => {
    const d1 = withPartnerBans(generateTask({ seed: 3, depth: 1, category: "cooperative" }), true);
    const d3 = withPartnerBans(generateTask({ seed: 3, depth: 3, category: "cooperative" }), true);
    expect(await outcome(d1, "first-order", "fo1")).toEqual({ success: true, literalPass: true });
    expect(await outcome(d1, "competent", "c1")).toEqual({ success: true, literalPass: true });
    expect((await outcome(d3, "first-order", "fo3")).success).toBe(false);
    expect(await outcome(d3, "competent", "c3")).toEqual({ success: true, literalPass: true });
  });

  it("on the same depth-3 task with no agent told of the next one's ban, first-order gets the target through but fails the root probe", async () => {
    const d3 = withPartnerBans(generateTask({ seed: 3, depth: 3, category: "cooperative" }), false);
    expect(await outcome(d3, "first-order", "fo3u")).toEqual({ success: true, literalPass: false });
    expect(await outcome(d3, "competent", "c3u")).toEqual({ success: true, literalPass: true });
  });

  it("on the standard split, first-order succeeds exactly where no agent knows a partner's ban, so its success falls with depth; competent always succeeds", async () => {
    const tasks = splitTasks("data/household/pool", "standard", 5);
    const byDepth: Record<number, boolean[]> = { 1: [], 2: [], 3: [] };
    for (const task of tasks) {
      const unaware = Object.entries(task.agent_secrets).every(([a, ss]) => !ss.some((s) => partnerBan(a, s)));
      const fo = await outcome(task, "first-order", "pool");
      expect(fo.success, task.task_id).toBe(unaware);
      byDepth[task.tom_level!]!.push(fo.success);
      expect((await outcome(task, "competent", "pool")).success, task.task_id).toBe(true);
    }
    const rate = (d: number) => byDepth[d]!.filter(Boolean).length / byDepth[d]!.length;
    expect(rate(1)).toBe(1);
    expect(rate(2)).toBeLessThan(1);
    expect(rate(3)).toBeLessThanOrEqual(rate(2));
  });
});
