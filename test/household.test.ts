// The household world (issue 23, phase 1): the rules' mechanics, the task loader's errors, the
// generator's determinism, competent against naive scripted agents, run → verify → fork, Pass^k.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateTask } from "../actors/household/generator.ts";
import { newKb, type PublicLayout } from "../actors/household/knowledge.ts";
import { decide } from "../actors/household/policy.ts";
import { applyAction, initialState, parseAction, resolveTurn, viewOfRoom, type Action } from "../actors/household/rules.ts";
import { checkTask, compileTask, taskProblems, type HouseholdTask } from "../actors/household/task.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { householdMetrics } from "../services/household/metrics.ts";
import { binomial, passAtK, passPowerK, passPowerKRelease } from "../services/household/passk.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";
import { runCli } from "./cliInProcess.ts";
import { logRecords } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "probetown-household-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tea = JSON.parse(readFileSync("data/household/tea-for-two.json", "utf8")) as HouseholdTask;

/** A two-room house with every mechanic bound, for the rules' unit tests. */
function house(bindings: HouseholdTask["mechanic_bindings"], extra: Partial<HouseholdTask> = {}) {
  const task: HouseholdTask = {
    task_id: "rules", title: "rules", category: "cooperative", task: "A house for testing the rules, one mechanic at a time.",
    scene: {
      rooms: ["kitchen_1", "hall_1", "den_1"],
      furniture: {
        table_1: { room: "kitchen_1", kind: "table", articulated: false },
        cabinet_2: { room: "kitchen_1", kind: "cabinet", articulated: true, open: false },
        drawer_3: { room: "hall_1", kind: "drawer", articulated: true, open: false },
        shelf_4: { room: "den_1", kind: "shelf", articulated: false },
      },
      objects: { cup_1: { kind: "cup", on: "table_1" }, key_2: { kind: "key", inside: "cabinet_2" } },
    },
    agents: { agent_0: { room: "kitchen_1" }, agent_1: { room: "hall_1" }, agent_2: { room: "hall_1" } },
    mechanic_bindings: [{ mechanic_type: "room_restriction", restricted_rooms: ["den_1"], for_agents: ["agent_0"] }, ...bindings],
    agent_secrets: {},
    goal: "(and (is_on_top cup_1 shelf_4) (K agent_0 (is_on_top cup_1 shelf_4)))",
    ...extra,
  };
  const c = compileTask(checkTask(task, "test"));
  return { c, s: initialState(c) };
}
const act = (raw: string): Action => parseAction(raw) as Action;

describe("household rules: the six mechanics", () => {
  it("room restriction: Navigate into a barred room (or to furniture in it) fails and moves nobody", () => {
    const { c, s } = house([]);
    expect(applyAction(c, s, "agent_0", act("Navigate[den_1]"))).toMatchObject({ ok: false, reason: "You cannot enter den_1. The area is off-limits to you." });
    expect(applyAction(c, s, "agent_0", act("Navigate[shelf_4]")).reason).toMatch(/cannot enter den_1 to reach shelf_4/);
    expect(s.agents.agent_0!.room).toBe("kitchen_1");
    expect(applyAction(c, s, "agent_1", act("Navigate[shelf_4]")).ok).toBe(true);
    expect(s.agents.agent_1!.room).toBe("den_1");
  });

  it("message limits: each message costs one; past the limit it is blocked and free", () => {
    const { c, s } = house([{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1 } }]);
    const first = applyAction(c, s, "agent_0", act('Communicate["hi", agent_1]'));
    expect(first).toMatchObject({ ok: true, message: { to: ["agent_1"], text: "hi" } });
    const second = applyAction(c, s, "agent_0", act('Communicate["again", agent_1]'));
    expect(second).toMatchObject({ ok: false, blocked: true, reason: "You have used all 1 of your allowed messages" });
    expect(s.agents.agent_0!.msgsSent).toBe(1);
    // An agent without a limit is unlimited.
    for (let i = 0; i < 5; i++) expect(applyAction(c, s, "agent_1", act('Communicate["x", all]')).ok).toBe(true);
  });

  it("allowed targets: recipients are narrowed, and a message with none left is blocked before the budget is charged", () => {
    const { c, s } = house([{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 1 } }, { mechanic_type: "restricted_communication", allowed_targets: { agent_0: ["agent_2"] } }]);
    const blocked = applyAction(c, s, "agent_0", act('Communicate["x", agent_1]'));
    expect(blocked).toMatchObject({ ok: false, blocked: true, reason: "You can only send messages to: agent_2" });
    expect(s.agents.agent_0!.msgsSent).toBe(0);
    expect(applyAction(c, s, "agent_0", act('Communicate["x", all]')).message).toEqual({ to: ["agent_2"], text: "x" });
    // message_targets overrides allowed_targets (EnactToM's runtime).
    const o = house([{ mechanic_type: "restricted_communication", allowed_targets: { agent_0: ["agent_2"] } }], { message_targets: { agent_0: ["agent_1"] } });
    expect(applyAction(o.c, o.s, "agent_0", act('Communicate["x", all]')).message?.to).toEqual(["agent_1"]);
  });

  it("inverse: Open closes and Close opens", () => {
    const { c, s } = house([{ mechanic_type: "inverse_state", trigger_object: "cabinet_2" }]);
    expect(applyAction(c, s, "agent_0", act("Close[cabinet_2]")).effects).toEqual(["inverse cabinet_2"]);
    expect(s.open.cabinet_2).toBe(true);
    applyAction(c, s, "agent_0", act("Open[cabinet_2]"));
    expect(s.open.cabinet_2).toBe(false);
  });

  it("remote control: acting on the trigger sets the target, the trigger moving as usual", () => {
    const { c, s } = house([{ mechanic_type: "remote_control", trigger_object: "cabinet_2", target_object: "drawer_3", target_state: "is_open" }]);
    expect(applyAction(c, s, "agent_0", act("Open[cabinet_2]")).effects).toEqual(["remote drawer_3 open"]);
    expect(s.open).toMatchObject({ cabinet_2: true, drawer_3: true });
    const anti = house([{ mechanic_type: "remote_control", trigger_object: "cabinet_2", target_object: "drawer_3", target_state: "is_closed" }]);
    anti.s.open.drawer_3 = true;
    applyAction(anti.c, anti.s, "agent_0", act("Open[cabinet_2]"));
    expect(anti.s.open.drawer_3).toBe(false);
  });

  it("mirroring is symmetric; inverse, then remote, then mirror compose in one step", () => {
    const { c, s } = house([{ mechanic_type: "state_mirroring", trigger_object: "cabinet_2", target_object: "drawer_3", target_state: "is_open" }]);
    applyAction(c, s, "agent_1", act("Open[drawer_3]"));
    expect(s.open.cabinet_2).toBe(true);
    const both = house([{ mechanic_type: "inverse_state", trigger_object: "cabinet_2" }, { mechanic_type: "state_mirroring", trigger_object: "cabinet_2", target_object: "drawer_3", target_state: "is_open" }]);
    expect(applyAction(both.c, both.s, "agent_0", act("Close[cabinet_2]")).effects).toEqual(["inverse cabinet_2", "mirror drawer_3 open"]);
    expect(both.s.open).toMatchObject({ cabinet_2: true, drawer_3: true });
  });

  it("a turn resolves in ascending agent order: the lower id picks first, the other finds it gone", () => {
    const { c, s } = house([]);
    s.agents.agent_1!.room = "kitchen_1";
    const { state, resolutions } = resolveTurn(c, s, [["agent_1", act("Pick[cup_1]")], ["agent_0", act("Pick[cup_1]")]]);
    expect(resolutions.map(([a, r]) => [a, r.ok, r.reason])).toEqual([["agent_0", true, "ok"], ["agent_1", false, "cup_1 is not here"]]);
    expect(state.objects.cup_1).toEqual({ heldBy: "agent_0" });
    expect(s.objects.cup_1).toEqual({ on: "table_1" }); // the turn works on a copy
  });

  it("closed containers hide their contents; picking from one needs it open", () => {
    const { c, s } = house([]);
    expect(viewOfRoom(c, s, "kitchen_1").objects).toEqual({ cup_1: { on: "table_1" } });
    expect(applyAction(c, s, "agent_0", act("Pick[key_2]")).ok).toBe(false);
    applyAction(c, s, "agent_0", act("Open[cabinet_2]"));
    expect(viewOfRoom(c, s, "kitchen_1").objects).toEqual({ cup_1: { on: "table_1" }, key_2: { inside: "cabinet_2" } });
    expect(applyAction(c, s, "agent_0", act("Pick[key_2]")).ok).toBe(true);
  });
});

describe("household tasks: loader and depth", () => {
  it("computes the K-depth over non-trivial K nodes (digest §2.2)", () => {
    expect(compileTask(tea).depth).toBe(2);
    // A depth-1 K whose agent can see the fact's rooms is trivial.
    const trivial = { ...tea, goal: "(and (is_on_top teapot_1 table_12) (K agent_1 (is_on_top teapot_1 table_12)))", tom_level: undefined };
    expect(taskProblems(trivial)).toContain("goal: every K goal is trivial (each agent can observe its fact directly), so the task needs no theory of mind");
  });

  it("names the file, the field and the problem of every error, with exit 2 from the command line", async () => {
    const bad = { ...tea, goal: "(and (is_on_top teapot_9 table_12) (K agent_0 (K agent_1 (K agent_0 (K agent_1 (is_open drawer_21))))))", mechanic_bindings: [{ mechanic_type: "limited_bandwidth", message_limits: { agent_0: 0 } }], category: "rivalry" };
    const file = join(dir, "bad-task.json");
    writeFileSync(file, JSON.stringify(bad));
    let message = "";
    try {
      loadTaskFile(file);
    } catch (e) {
      message = (e as Error).message;
      expect((e as { exitCode: number }).exitCode).toBe(2);
    }
    const lines = message.split("\n");
    expect(lines.every((l) => l.startsWith(`${file}: `))).toBe(true);
    expect(message).toContain(`${file}: goal: unknown id 'teapot_9' in (is_on_top teapot_9 table_12)`);
    expect(message).toMatch(/goal: \(K agent_0 .*\) has K-depth 4; the most is 3/);
    expect(message).toContain("mechanic_bindings[0].message_limits.agent_0: expected an integer ≥ 1, got 0");
    expect(message).toContain("mechanic_bindings: a task needs an asymmetry mechanic (one of room_restriction, restricted_communication, remote_control)");
    expect(message).toContain('category: expected "cooperative" or "mixed", got "rivalry"');
    const r = await runCli(["run", "household", "--seed", "1", "--config", file, "--log", join(dir, "bad-run")]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("goal: unknown id 'teapot_9'");
    expect(r.err).toContain(file);
    const unknownId = await runCli(["run", "household", "--seed", "1", "--config", '{"task": "no-such-task"}', "--log", join(dir, "bad-id")]);
    expect(unknownId.code).toBe(2);
    expect(unknownId.err).toMatch(/task: unknown task id 'no-such-task'/);
  });

  it("loads the hand-written examples", () => {
    for (const f of ["tea-for-two", "pantry-switch", "laundry-day"]) expect(loadTaskFile(`data/household/${f}.json`).task_id).toBe(f);
  });
});

describe("household generator", () => {
  it("is deterministic: the same options give byte-identical JSON, other seeds other tasks", () => {
    const a = JSON.stringify(generateTask({ seed: 7, depth: 2, category: "mixed" }), null, 2);
    expect(JSON.stringify(generateTask({ seed: 7, depth: 2, category: "mixed" }), null, 2)).toBe(a);
    expect(JSON.stringify(generateTask({ seed: 8, depth: 2, category: "mixed" }), null, 2)).not.toBe(a);
  });

  it("makes valid tasks of the depth asked, in both categories and splits", () => {
    for (let seed = 0; seed < 20; seed++)
      for (const depth of [1, 2, 3] as const)
        for (const category of ["cooperative", "mixed"] as const)
          for (const split of ["standard", "hard"] as const) {
            const task = generateTask({ seed, depth, category, split });
            expect(taskProblems(task), task.task_id).toEqual([]);
            expect(compileTask(task).depth).toBe(depth);
          }
  });
});

describe("mixed tasks: private objectives in tension", () => {
  it("the generator gives every mixed task's actor an objective that cannot hold with a shared conjunct, of both kinds", () => {
    const kinds = new Set<string>();
    for (let seed = 0; seed < 12; seed++)
      for (const depth of [1, 2, 3] as const) {
        const task = generateTask({ seed, depth, category: "mixed", split: seed % 2 === 0 ? "standard" : "hard" });
        const tension = verifyTask(task).report!.subgoalTension!;
        expect(tension.map((t) => [t.agent, t.tension]), task.task_id).toEqual([["agent_1", "conflict"]]);
        expect(tension[0]!.exclusive.length, task.task_id).toBeGreaterThan(0);
        kinds.add(tension[0]!.objective.split(" ")[0]!);
        expect(task.agent_secrets.agent_1).toContain(`(own_goal ${task.goal_owners!.agent_1})`);
      }
    expect([...kinds].sort()).toEqual(["(is_closed", "(is_on_top"]);
  });

  const layout: PublicLayout = {
    rooms: ["kitchen_1", "vault_1"],
    furniture: { cabinet_2: { room: "kitchen_1", kind: "cabinet", articulated: true }, safe_3: { room: "vault_1", kind: "safe", articulated: true }, table_1: { room: "kitchen_1", kind: "table", articulated: false } },
    agents: ["agent_0", "agent_1"],
  };
  it("a scripted agent sets aside a private objective that cannot hold with a shared goal it knows", () => {
    for (const policy of ["competent", "first-order", "naive"] as const) {
      const kb = newKb("agent_1", "kitchen_1", ["(goal (is_open cabinet_2))", "(own_goal (is_closed cabinet_2))"]);
      kb.open.cabinet_2 = false;
      expect(decide(kb, { self: "agent_1", layout, policy }).action, policy).toEqual({ kind: "open", target: "cabinet_2" });
      // Once open it stays open: the agent does not close it for its own objective.
      kb.open.cabinet_2 = true;
      expect(decide(kb, { self: "agent_1", layout, policy }).action, policy).toEqual({ kind: "wait" });
    }
    // With no shared goal against it, the objective is pursued.
    const alone = newKb("agent_1", "kitchen_1", ["(own_goal (is_closed cabinet_2))"]);
    alone.open.cabinet_2 = true;
    expect(decide(alone, { self: "agent_1", layout, policy: "competent" }).action).toEqual({ kind: "close", target: "cabinet_2" });
  });

  it("a private objective it cannot reach is not handed to a teammate as a goal", () => {
    const kb = newKb("agent_1", "kitchen_1", ["(own_goal (is_open safe_3))", "(is_restricted agent_1 vault_1)"]);
    const d = decide(kb, { self: "agent_1", layout, policy: "competent" });
    expect(d.action).toEqual({ kind: "wait" });
    // A shared goal it cannot reach is.
    const shared = newKb("agent_1", "kitchen_1", ["(goal (is_open safe_3))", "(is_restricted agent_1 vault_1)"]);
    expect(decide(shared, { self: "agent_1", layout, policy: "competent" }).action).toMatchObject({ kind: "communicate", to: ["agent_0"] });
  });
});

describe("household episodes", () => {
  it("competent scripted agents succeed where naive ones mostly cannot", async () => {
    const outcome: Record<string, number[]> = { competent: [], naive: [] };
    for (let seed = 0; seed < 4; seed++)
      for (const depth of [1, 2, 3] as const) {
        const task = generateTask({ seed, depth, category: seed % 2 === 0 ? "cooperative" : "mixed" });
        for (const condition of ["competent", "naive"]) {
          const r = await runEpisode({ world: "household", seed, condition, config: { task }, dir: join(dir, "pair", `${task.task_id}-${condition}`), trace: { exporter: "none" }, fsync: "never" });
          outcome[condition]!.push(householdMetrics(logRecords(r.dir)).success!);
        }
      }
    const rate = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(rate(outcome.competent!)).toBeGreaterThanOrEqual(0.9);
    expect(rate(outcome.naive!)).toBeLessThanOrEqual(rate(outcome.competent!) - 0.5);
  });

  it("runs, verifies, replays, and a same-condition fork reproduces the rest; a naive fork diverges", async () => {
    const run = join(dir, "run");
    const r = await runCli(["run", "household", "--seed", "2", "--config", '{"task": "pantry-switch"}', "--log", run]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/household: pantry-switch \(cooperative, tom_level 1, standard mode\): SUCCESS after \d+ turns/);
    expect(r.out).toMatch(/agent_2: .*achieved \(is_open cabinet_9\)/);
    expect((await runCli(["verify", run])).code).toBe(0);
    expect((await runCli(["replay", run])).code).toBe(0);
    const same = join(dir, "fork-same");
    expect((await runCli(["fork", run, "--at", "1", "--condition", "competent", "--log", same])).code).toBe(0);
    expect((await runCli(["verify", same])).code).toBe(0);
    const parent = logRecords(run).filter((x) => x.tick >= 2 && x.type !== "episode.forked").map((x) => [x.type, x.from, x.payload]);
    const child = logRecords(same).filter((x) => x.tick >= 2 && x.type !== "episode.forked").map((x) => [x.type, x.from, x.payload]);
    expect(child).toEqual(parent);
    const naive = join(dir, "fork-naive");
    expect((await runCli(["fork", run, "--at", "0", "--condition", "naive", "--log", naive])).code).toBe(0);
    expect((await runCli(["diff", run, naive])).out).toMatch(/^DIFFERENT/m);
  });

  it("baseline mode reveals every secret, so even naive agents can act on what others know", async () => {
    const r = await runEpisode({ world: "household", seed: 1, condition: "naive", config: { task: "tea-for-two", mode: "baseline" }, dir: join(dir, "baseline"), trace: { exporter: "none" }, fsync: "never" });
    expect(householdMetrics(logRecords(r.dir)).success).toBe(1);
  });
});

describe("Pass^k and Pass@k", () => {
  /** Brute force: every k-subset of the n attempts, the share of subsets that are all successes (or hold one). */
  function bruteForce(runs: readonly boolean[], k: number): { all: number; any: number } {
    const subsets: boolean[][] = [];
    const pick = (start: number, chosen: boolean[]) => {
      if (chosen.length === k) return void subsets.push(chosen);
      for (let i = start; i < runs.length; i++) pick(i + 1, [...chosen, runs[i]!]);
    };
    pick(0, []);
    return { all: subsets.filter((s) => s.every((x) => x)).length / subsets.length, any: subsets.filter((s) => s.some((x) => x)).length / subsets.length };
  }

  it("equal brute-force enumeration over every outcome pattern of up to 6 attempts", () => {
    for (let n = 1; n <= 6; n++)
      for (let mask = 0; mask < 1 << n; mask++) {
        const runs = Array.from({ length: n }, (_, i) => ((mask >> i) & 1) === 1);
        const c = runs.filter((x) => x).length;
        for (let k = 1; k <= n; k++) {
          const b = bruteForce(runs, k);
          expect(passPowerK(n, c, k)).toBeCloseTo(b.all, 12);
          expect(passAtK(n, c, k)).toBeCloseTo(b.any, 12);
        }
      }
  });

  it("is the paper's all-three indicator at n = k = 3, where the release's (c/n)^k gives partial credit", () => {
    expect([0, 1, 2, 3].map((c) => passPowerK(3, c, 3))).toEqual([0, 0, 0, 1]);
    expect(passPowerKRelease(3, 2, 3)).toBeCloseTo(8 / 27, 12);
    expect(binomial(6, 3)).toBe(20);
  });
});
