// The household task verifier (issue 23 phase 2, digest §8.6): each check on hand-built tasks
// whose answer is known, the generated tasks of every mechanic class with deliberately broken
// variants, and the golden trajectory's replay and hashes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashOf } from "../events/canonical.ts";
import { generateTask } from "../actors/household/generator.ts";
import { initialState, parseAction, resolveTurn } from "../actors/household/rules.ts";
import { compileTask, type HouseholdTask, type MechanicBinding } from "../actors/household/task.ts";
import { epistemicModel, searchKnowledge } from "../actors/household/verifier/epistemic.ts";
import type { VerifierFailure } from "../actors/household/verifier/findings.ts";
import { informationOf } from "../actors/household/verifier/information.ts";
import { searchJoint } from "../actors/household/verifier/joint.ts";
import { communicationNecessity } from "../actors/household/verifier/necessity.ts";
import { searchPlans } from "../actors/household/verifier/physical.ts";
import { abstractFor } from "../actors/household/verifier/relevance.ts";
import { deriveStream, Draws } from "../actors/rng.ts";
import { leavesOf, literalKey } from "../actors/household/pddl.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { logRecords } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "probetown-household-verifier-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A three-room house: a cup in a closed kitchen cabinet must go on one of three den shelves; agent_0 (who knows which) may not enter the den. */
function small(extra: Partial<HouseholdTask> = {}, bindings: readonly MechanicBinding[] = [{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1, agent_1: 1 } }]): HouseholdTask {
  return {
    task_id: "small", title: "Small", category: "cooperative", task: "A cup from the kitchen belongs on one of the den's shelves.",
    scene: {
      rooms: ["kitchen_1", "den_1", "hall_1"],
      furniture: {
        table_1: { room: "kitchen_1", kind: "table", articulated: false },
        cabinet_2: { room: "kitchen_1", kind: "cabinet", articulated: true, open: false },
        shelf_4: { room: "den_1", kind: "shelf", articulated: false },
        shelf_5: { room: "den_1", kind: "shelf", articulated: false },
        shelf_6: { room: "den_1", kind: "shelf", articulated: false },
        desk_7: { room: "hall_1", kind: "desk", articulated: false },
      },
      objects: { cup_1: { kind: "cup", inside: "cabinet_2" }, vase_2: { kind: "vase", on: "desk_7" } },
    },
    agents: { agent_0: { room: "hall_1" }, agent_1: { room: "hall_1" } },
    mechanic_bindings: [{ mechanic_type: "room_restriction", restricted_rooms: ["den_1"], for_agents: ["agent_0"] }, ...bindings],
    agent_secrets: { agent_0: ["(goal (is_on_top cup_1 shelf_5))", "(is_restricted agent_0 den_1)"], agent_1: [] },
    goal: "(and (is_on_top cup_1 shelf_5) (K agent_0 (is_on_top cup_1 shelf_5)))",
    tom_level: 1,
    max_turns: 16,
    ...extra,
  };
}

const tags = (fs: readonly VerifierFailure[]) => fs.map((f) => f._tag);

describe("household verifier: each check on a task whose answer is known", () => {
  it("passes the small task, with the shortest plan, the relevant ids only, and the messages it needs", () => {
    const v = verifyTask(small());
    expect(v.failures).toEqual([]);
    const r = v.report!;
    // Five steps, all agent_1's: agent_0 opening the cabinet would cost it a Navigate too (six).
    expect(r.physical.plan.map((s) => `${s.agent}: ${s.action}`)).toEqual(["agent_1: Navigate[kitchen_1]", "agent_1: Open[cabinet_2]", "agent_1: Pick[cup_1]", "agent_1: Navigate[den_1]", "agent_1: Place[cup_1, on, shelf_5]"]);
    expect(r.relevance).toMatchObject({ rooms: ["kitchen_1", "den_1"], furniture: ["cabinet_2", "shelf_5"], objects: ["cup_1"], collapsed: true });
    expect(r.information).toEqual([{ literal: "(is_on_top cup_1 shelf_5)", decisive: "shelf_5", holders: ["agent_0"], achievers: ["agent_1"], dependent: true }]);
    expect(r.epistemic.messages).toEqual([
      { kind: "inform", from: "agent_0", to: "agent_1", fact: "(needed (is_on_top cup_1 shelf_5))" },
      { kind: "inform", from: "agent_1", to: "agent_0", fact: "(is_on_top cup_1 shelf_5)" },
    ]);
    expect(r.communication._tag).toBe("CommunicationNeeded");
    expect(r.agents.map((a) => [a.agent, a.breaks])).toEqual([["agent_0", ["epistemic"]], ["agent_1", ["physical", "epistemic"]]]);
    expect(r.turns).toEqual({ physicalTurns: 5, messageTurns: 2, tMin: 7, tMax: 14 });
    expect(r.guessability[0]).toMatchObject({ candidates: ["shelf_4", "shelf_5", "shelf_6"], guessable: false });
  });

  it("finds the shortest plan through a mechanic: a remote switch opens a cabinet nobody may reach", () => {
    const task = small(
      { goal: "(and (is_on_top cup_1 shelf_5) (is_open cabinet_2) (K agent_0 (is_on_top cup_1 shelf_5)))", scene: { ...small().scene, furniture: { ...small().scene.furniture, switch_8: { room: "hall_1", kind: "switch", articulated: true, open: false } }, objects: { cup_1: { kind: "cup", on: "table_1" } } } },
      [{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1, agent_1: 1 } }, { mechanic_type: "room_restriction", restricted_rooms: ["kitchen_1"], for_agents: ["agent_0"] }, { mechanic_type: "remote_control", trigger_object: "switch_8", target_object: "cabinet_2", target_state: "is_open" }],
    );
    const v = verifyTask(task);
    expect(v.failures).toEqual([]);
    // agent_0, first in order, opens the cabinet from the hall with the switch it stands by.
    expect(v.report!.physical.plan.map((s) => `${s.agent}: ${s.action}`)).toEqual(["agent_0: Open[switch_8]", "agent_1: Navigate[kitchen_1]", "agent_1: Pick[cup_1]", "agent_1: Navigate[den_1]", "agent_1: Place[cup_1, on, shelf_5]"]);
  });

  it("rejects a guessable task: one shelf in the den, or a public text that names it", () => {
    const { shelf_4: _a, shelf_6: _b, ...furniture } = small().scene.furniture;
    const one = verifyTask(small({ scene: { ...small().scene, furniture } }));
    expect(one.failures).toEqual([{ _tag: "Guessable", literal: "(is_on_top cup_1 shelf_5)", decisive: "shelf_5", candidates: ["shelf_5"], leakedInText: false }]);
    const leaked = verifyTask(small({ task: "The cup from the kitchen belongs on shelf_5 in the den." }));
    expect(leaked.failures).toEqual([{ _tag: "Guessable", literal: "(is_on_top cup_1 shelf_5)", decisive: "shelf_5", candidates: ["shelf_4", "shelf_5", "shelf_6"], leakedInText: true }]);
  });

  it("communication necessity: a goal reachable without any message fails it", () => {
    // A K goal its agent can observe (the loader rejects this as trivial; the check alone says why).
    const seen = compileTask(small({ goal: "(and (is_on_top cup_1 shelf_5) (K agent_1 (is_on_top cup_1 shelf_5)))" }));
    expect(communicationNecessity(epistemicModel(seen, []))).toEqual({ _tag: "SolvableWithoutMessages", nodes: 1 });
    expect(communicationNecessity(epistemicModel(compileTask(small()), []))._tag).toBe("CommunicationNeeded");
    // The same goal with the information agent_1 needs from agent_0: that too needs a message.
    const needs = [{ literal: { pred: "is_on_top", args: ["cup_1", "shelf_5"] }, holders: ["agent_0"], achievers: ["agent_1"] }];
    expect(communicationNecessity(epistemicModel(seen, needs))._tag).toBe("CommunicationNeeded");
  });

  it("agent necessity: a third agent free to do everything makes the others' parts (and its own) replaceable", () => {
    const v = verifyTask(small({ agents: { agent_0: { room: "hall_1" }, agent_1: { room: "hall_1" }, agent_2: { room: "hall_1" } }, agent_secrets: { agent_0: ["(goal (is_on_top cup_1 shelf_5))"], agent_1: [], agent_2: [] } }));
    expect(v.failures).toEqual([{ _tag: "AgentNotNeeded", agent: "agent_1" }, { _tag: "AgentNotNeeded", agent: "agent_2" }]);
    expect(v.report!.agents.find((a) => a.agent === "agent_0")!.breaks).toEqual(["epistemic"]);
  });

  it("information necessity: when the agent that can act holds the id itself, nothing needs to be told", () => {
    const v = verifyTask(small({ agent_secrets: { agent_0: [], agent_1: ["(goal (is_on_top cup_1 shelf_5))"] } }));
    expect(tags(v.failures)).toContain("NoInformationDependence");
    expect(v.report!.information[0]).toMatchObject({ holders: ["agent_1"], achievers: ["agent_1"], dependent: false });
  });

  it("a mixed task's private objective must be reachable, by someone", () => {
    const mixed = (owned: string) => small({ category: "mixed", goal_owners: { agent_1: owned } });
    // Pick the vase in the hall, go to the kitchen, put it on the table.
    expect(verifyTask(mixed("(is_on_top vase_2 table_1)")).report!.privateObjectives).toEqual([{ agent: "agent_1", planLength: 3 }]);
    // Into the closed cabinet: it must be opened first.
    expect(verifyTask(mixed("(is_inside vase_2 cabinet_2)")).report!.privateObjectives).toEqual([{ agent: "agent_1", planLength: 4 }]);
    // Into the den, once agent_1 (the only one who may enter it) is barred too: unreachable.
    const v = verifyTask({ ...mixed("(is_on_top vase_2 shelf_4)"), mechanic_bindings: [...small().mechanic_bindings, { mechanic_type: "room_restriction", restricted_rooms: ["den_1"], for_agents: ["agent_1"] }] });
    expect(v.failures).toContainEqual({ _tag: "PrivateObjectiveUnreachable", agent: "agent_1", nodes: expect.any(Number) });
  });

  it("epistemic search: with no edge from agent_1 to agent_0 the K goal cannot be met", () => {
    const v = verifyTask(small({}, [{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1, agent_1: 1 } }, { mechanic_type: "restricted_communication", allowed_targets: { agent_1: [] } }]));
    expect(v.failures).toEqual([{ _tag: "EpistemicallyUnsolvable", nodes: 2 }]);
  });

  it("depth, the node cap, the turn limit and a physically impossible goal each have their tag", () => {
    expect(verifyTask(small(), { target: 2 }).failures).toEqual([{ _tag: "DepthMismatch", computed: 1, target: 2 }]);
    expect(tags(verifyTask(small(), { cap: 3 }).failures)).toEqual(["TooLarge"]);
    expect(verifyTask(small({ max_turns: 6 })).failures).toEqual([{ _tag: "TurnLimitTooSmall", maxTurns: 6, tMin: 7 }]);
    const barred = verifyTask(small({}, [{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1, agent_1: 1 } }, { mechanic_type: "room_restriction", restricted_rooms: ["kitchen_1"], for_agents: ["agent_1"] }]));
    expect(barred.failures[0]).toMatchObject({ _tag: "PhysicallyUnsolvable", goal: "functional" });
  });

  it("reports the loader's problems by field", () => {
    const v = verifyTask({ ...small(), goal: "(and (is_on_top cup_9 shelf_5) (K agent_0 (is_on_top cup_9 shelf_5)))" });
    expect(v.report).toBeNull();
    expect(v.failures).toEqual([{ _tag: "Invalid", problems: [{ field: "goal", problem: "unknown id 'cup_9' in (is_on_top cup_9 shelf_5)" }, { field: "goal", problem: "unknown id 'cup_9' in (is_on_top cup_9 shelf_5)" }] }]);
  });

  it("the golden trajectory replays under the full rules to the state hashes it records", () => {
    const g = verifyTask(small()).report!.golden!;
    expect(g.turns.map((t) => t.actions.map((a) => `${a.agent}: ${a.action}`))).toEqual([
      ["agent_0: Wait[]", "agent_1: Navigate[kitchen_1]"],
      ["agent_0: Wait[]", "agent_1: Open[cabinet_2]"],
      ["agent_0: Wait[]", "agent_1: Pick[cup_1]"],
      ["agent_0: Wait[]", "agent_1: Navigate[den_1]"],
      ["agent_0: Wait[]", "agent_1: Place[cup_1, on, shelf_5]"],
    ]);
    const c = compileTask(small());
    let state = initialState(c);
    const hashes = g.turns.map((t) => {
      state = resolveTurn(c, state, t.actions.map((a) => [a.agent, parseAction(a.action)] as const)).state;
      return hashOf(state);
    });
    expect(hashes).toEqual(g.state_hashes);
    expect(g.trajectory_hash).toBe(hashOf(g.turns));
    expect(g.spec_hash).toBe(hashOf(small()));
  });
});

describe("household verifier: generated tasks of every mechanic class", () => {
  const classOf = (t: HouseholdTask): string => {
    const types = t.mechanic_bindings.map((b) => b.mechanic_type);
    if (types.includes("remote_control")) return "remote";
    if (types.includes("state_mirroring")) return "mirror";
    if (types.includes("inverse_state")) return "inverse";
    return /is_open/.test(t.goal) ? "plain" : "none";
  };
  const byClass = new Map<string, HouseholdTask>();
  for (let seed = 0; byClass.size < 5 && seed < 60; seed++) {
    const t = generateTask({ seed, depth: 2, category: "cooperative" });
    if (!byClass.has(classOf(t))) byClass.set(classOf(t), t);
  }
  const ban = (t: HouseholdTask, rooms: readonly string[], agents: readonly string[]): HouseholdTask => ({ ...t, mechanic_bindings: [...t.mechanic_bindings, { mechanic_type: "room_restriction", restricted_rooms: [...rooms], for_agents: [...agents] }] });
  const targetRoomOf = (t: HouseholdTask) => t.scene.furniture[/is_on_top \S+ (\S+)\)/.exec(t.goal)![1]!]!.room;

  it("covers the five classes, and each generated task passes", () => {
    expect([...byClass.keys()].sort()).toEqual(["inverse", "mirror", "none", "plain", "remote"]);
    for (const t of byClass.values()) expect(verifyTask(t).failures, t.task_id).toEqual([]);
  });

  it("rejects, for each class, a variant nobody can finish: every agent barred from the target room", () => {
    for (const [cls, t] of byClass) {
      const v = verifyTask(ban(t, [targetRoomOf(t)], Object.keys(t.agents)));
      expect(v.failures[0], cls).toMatchObject({ _tag: "PhysicallyUnsolvable", goal: "functional" });
    }
  });

  it("rejects remote and mirror variants without their mechanic: the storage piece is out of everyone's reach", () => {
    for (const cls of ["remote", "mirror"]) {
      const t = byClass.get(cls)!;
      const v = verifyTask({ ...t, mechanic_bindings: t.mechanic_bindings.filter((b) => b.mechanic_type !== "remote_control" && b.mechanic_type !== "state_mirroring") });
      expect(v.failures[0], cls).toMatchObject({ _tag: "PhysicallyUnsolvable", goal: "functional" });
    }
  });

  it("rejects, for each class, an inflated-K variant: the outermost agent allowed into the room it must be told about", () => {
    for (const [cls, t] of byClass) {
      const room = targetRoomOf(t);
      const lifted: HouseholdTask = { ...t, mechanic_bindings: t.mechanic_bindings.map((b) => (b.mechanic_type === "room_restriction" && b.restricted_rooms.includes(room) ? { ...b, for_agents: b.for_agents.filter((a) => a !== "agent_0") } : b)) };
      const v = verifyTask(lifted);
      expect(v.failures, cls).toContainEqual({ _tag: "InflatedK", node: /\(K agent_0 .*\)\)$/.exec(t.goal)![0].slice(0, -1), agent: "agent_0" });
    }
  });
});

describe("household generator: every task it returns passes the verifier", () => {
  it("passes for seeds 0–9 in every cell (depth × category × split), at the depth asked", () => {
    for (let seed = 0; seed < 10; seed++)
      for (const depth of [1, 2, 3] as const)
        for (const category of ["cooperative", "mixed"] as const)
          for (const split of ["standard", "hard"] as const) {
            const t = generateTask({ seed, depth, category, split });
            const v = verifyTask(t, { target: depth });
            expect(v.failures, t.task_id).toEqual([]);
            // It carries the verifier's golden trajectory, and a turn limit at least the estimate's T_max.
            expect(t.golden_trajectory).toEqual(v.report!.golden);
            expect(t.max_turns).toBeGreaterThanOrEqual(v.report!.turns!.tMax);
          }
  });

  it("is byte-identical per seed, golden trajectory and hashes included", () => {
    const a = JSON.stringify(generateTask({ seed: 11, depth: 3, category: "mixed", split: "hard" }), null, 2);
    expect(JSON.stringify(generateTask({ seed: 11, depth: 3, category: "mixed", split: "hard" }), null, 2)).toBe(a);
    expect(JSON.parse(a).golden_trajectory.state_hashes.length).toBeGreaterThan(0);
  });

  it("a run of a generated task holds the task inline in its log, so replay needs no task file", async () => {
    const task = generateTask({ seed: 4, depth: 2, category: "cooperative" });
    const r = await runEpisode({ world: "household", seed: 1, config: { task: task.task_id }, dir: join(dir, "inline"), trace: { exporter: "none" }, fsync: "never" });
    const header = logRecords(r.dir).find((x) => x.type === "episode.started")!;
    expect((header.payload as { config: { task: unknown } }).config.task).toEqual(task);
  });
});

describe("household verifier: the decomposition agrees with a joint physical × epistemic search", () => {
  /** A generated task, then a seeded mutation: tighter budgets, a cut edge, a new room ban, or a lifted one. */
  function mutated(i: number): HouseholdTask {
    const d = new Draws(deriveStream(i, "test/household/joint"));
    const t = generateTask({ seed: 100 + i, depth: ([1, 2, 3] as const)[i % 3]!, category: "cooperative", split: i % 2 === 0 ? "standard" : "hard" });
    const agents = Object.keys(t.agents);
    const a = d.pick(agents);
    const b = d.pick(agents.filter((x) => x !== a));
    switch (d.int(0, 4)) {
      case 0:
        return { ...t, mechanic_bindings: [...t.mechanic_bindings, { mechanic_type: "limited_bandwidth", message_limits: Object.fromEntries(agents.map((x) => [x, 1])) }] };
      case 1:
        return { ...t, message_targets: { ...t.message_targets, [a]: agents.filter((x) => x !== a && x !== b) } };
      case 2:
        return { ...t, mechanic_bindings: [...t.mechanic_bindings, { mechanic_type: "room_restriction", restricted_rooms: [d.pick(t.scene.rooms)], for_agents: [a] }] };
      case 3:
        return { ...t, mechanic_bindings: t.mechanic_bindings.map((m) => (m.mechanic_type === "room_restriction" ? { ...m, for_agents: m.for_agents.filter((x) => x !== a) } : m)) };
      default:
        return t;
    }
  }

  it("on 40 small tasks and mutations: solvable jointly exactly when physical (strip_K) and epistemic searches both succeed", () => {
    const outcomes = { solvable: 0, unsolvable: 0 };
    for (let i = 0; i < 40; i++) {
      const c = compileTask(mutated(i));
      const stripK = [...new Map([...c.functional, ...leavesOf(c.goal)].map((l) => [literalKey(l), l])).values()];
      const abs = abstractFor(c, stripK);
      const needs = informationOf(c, c.functional).filter((x) => x.info.dependent).map((x) => ({ literal: x.literal, holders: x.info.holders, achievers: x.info.achievers }));
      const model = epistemicModel(c, needs);
      const decomposed = searchPlans(abs, [stripK]).plans[0] !== null && searchKnowledge(model)._tag === "Reached";
      const joint = searchJoint(abs, stripK, model);
      expect(joint._tag, c.task.task_id).not.toBe("TooLarge");
      expect(joint._tag === "Solvable", `${c.task.task_id} (mutation ${i})`).toBe(decomposed);
      outcomes[decomposed ? "solvable" : "unsolvable"]++;
    }
    // Both answers occur, so the agreement is not on one side only.
    expect(outcomes.solvable).toBeGreaterThan(5);
    expect(outcomes.unsolvable).toBeGreaterThan(5);
  });
});
