// Literal probes (digest §5.3): one per K node, asked after the episode and logged; leaves scored
// against the final world, parents against the child agent's answer, only roots counting. The
// scripted agents answer from their knowledge: the first-order agent, which sends no `(K agent φ)`
// statement, fails the depth-3 root that the competent agent passes, even where it gets the cup
// placed.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import type { HouseholdProbeAnsweredPayload, HouseholdProbePayload, HouseholdProbeScoredPayload } from "../actors/household/events.ts";
import { literalOf, probeChildren, scoreProbes, type ProbeAnswer } from "../actors/household/probes.ts";
import { compileTask } from "../actors/household/task.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { loadWorlds } from "../services/worlds.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";
import { logRecords, tempDir } from "./helpers.ts";

// A depth-3 chain agent_0 → agent_2 → agent_3 → agent_1, where agent_0 knows that agent_2 cannot
// enter the hallway either.
// The pool task as it was before mixed tasks' private objectives were drawn in tension (an
// independent objective, mug_47 to shelf_35), kept as a fixture so these expectations stand.
const task = loadTaskFile("test/fixtures/household/gen-mixed-d3-hard-s2310.json");
// The same task with agent_0 not knowing it: the first-order agent then believes agent_2 can act.
const unaware = { ...task, agent_secrets: { ...task.agent_secrets, agent_0: task.agent_secrets.agent_0!.filter((s) => s !== "(is_restricted agent_2 hallway_1)") } };
const nodes = compileTask(task).kNodes;
const yes = (probeId: string): ProbeAnswer => ({ probeId, predicate: "is_on_top", args: ["cup_46", "table_43"], holds: true });
const unknown = (probeId: string): ProbeAnswer => ({ probeId, predicate: "unknown", args: [], holds: null });

describe("probe scoring", () => {
  it("chains each K node to its inner one; only the root counts", () => {
    expect([...probeChildren(nodes)]).toEqual([["k_probe_0", "k_probe_1"], ["k_probe_1", "k_probe_2"]]);
    const all = new Map(["k_probe_0", "k_probe_1", "k_probe_2"].map((id) => [id, yes(id)]));
    const scored = scoreProbes(nodes, all, () => true);
    expect(scored.map((s) => [s.probeId, s.root, s.basis, s.passed])).toEqual([["k_probe_0", true, "child", true], ["k_probe_1", false, "child", true], ["k_probe_2", false, "world", true]]);
    expect(literalOf(scored)).toEqual({ roots: 1, passedRoots: 1, score: 1, pass: true });
  });

  it("a leaf needs the fact true in the final world; a parent needs the child's answer, and two unknowns do not pass", () => {
    const leafFalse = scoreProbes(nodes, new Map(["k_probe_0", "k_probe_1", "k_probe_2"].map((id) => [id, yes(id)])), () => false);
    expect(leafFalse.find((s) => s.probeId === "k_probe_2")!.passed).toBe(false);
    // The root is scored against agent_2's answer, not the world: it still passes.
    expect(leafFalse[0]!.passed).toBe(true);
    const differs = scoreProbes(nodes, new Map([["k_probe_0", yes("k_probe_0")], ["k_probe_1", unknown("k_probe_1")]]), () => true);
    expect(differs[0]!.passed).toBe(false);
    const bothUnknown = scoreProbes(nodes, new Map([["k_probe_0", unknown("k_probe_0")], ["k_probe_1", unknown("k_probe_1")]]), () => true);
    expect(bothUnknown[0]!.passed).toBe(false);
  });
});

describe("probes in an episode", () => {
  const probeRecords = async (condition: string, t = task) => {
    await loadWorlds();
    const dir = join(tempDir(`hh-probes-${condition}`), "ep");
    await runEpisode({ world: "household", seed: 0, condition, config: { task: t }, dir, trace: { exporter: "none" }, fsync: "never" });
    const records = logRecords(dir);
    return {
      asked: records.filter((r) => r.type === "household.probe").map((r) => r.payload as HouseholdProbePayload),
      answered: records.filter((r) => r.type === "household.probeAnswered").map((r) => r.payload as HouseholdProbeAnsweredPayload),
      scored: records.filter((r) => r.type === "household.probeScored").map((r) => r.payload as HouseholdProbeScoredPayload),
      messages: records.filter((r) => r.type === "household.message").map((r) => (r.payload as { text: string }).text),
      ended: records.find((r) => r.type === "household.ended")!.payload as { success: boolean },
    };
  };

  it("the competent agents pass the depth-3 root: the relay tells agent_0 that agent_3 knows", async () => {
    const r = await probeRecords("competent");
    expect(r.asked.map((p) => [p.agent, p.probes.map((q) => q.probeId)])).toEqual([["agent_0", ["k_probe_0"]], ["agent_2", ["k_probe_1"]], ["agent_3", ["k_probe_2"]]]);
    expect(r.messages).toContain("agent_3 knows: cup_46 is on table_43. (K agent_3 (is_on_top cup_46 table_43))");
    expect(r.answered.map((a) => a.answers[0]!.holds)).toEqual([true, true, true]);
    expect(r.scored).toHaveLength(1);
    expect(r.scored[0]).toMatchObject({ roots: 1, passedRoots: 1, score: 1, pass: true });
  });

  it("the first-order agents, where agent_0 does not know agent_2's ban, get the cup placed but fail the root: agent_0 cannot say what agent_2 knows of agent_3", async () => {
    const r = await probeRecords("first-order", unaware);
    expect(r.ended).toMatchObject({ success: true });
    expect(r.messages.some((m) => m.includes("(K "))).toBe(false);
    const byAgent = Object.fromEntries(r.answered.map((a) => [a.agent, a.answers[0]!]));
    expect(byAgent.agent_0).toMatchObject({ predicate: "unknown", holds: null });
    expect(byAgent.agent_2).toMatchObject({ predicate: "is_on_top", holds: true });
    expect(byAgent.agent_3).toMatchObject({ predicate: "is_on_top", holds: true });
    expect(r.scored[0]).toMatchObject({ roots: 1, passedRoots: 0, score: 0, pass: false });
    expect(r.scored[0]!.probes.find((p) => p.probeId === "k_probe_2")).toMatchObject({ basis: "world", passed: true });
  });

  it("the first-order agents, where agent_0 knows agent_2's ban, fail it and the task: the cup's target never leaves agent_0", async () => {
    const r = await probeRecords("first-order");
    expect(r.messages.some((m) => m.includes("table_43"))).toBe(false);
    expect(r.ended).toMatchObject({ success: false });
    expect(r.scored[0]).toMatchObject({ pass: false, score: 0 });
  });

  it("the naive agents, who never message, fail it", async () => {
    const r = await probeRecords("naive");
    expect(r.messages).toEqual([]);
    expect(r.scored[0]).toMatchObject({ pass: false, score: 0 });
  });
});
