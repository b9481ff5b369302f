// Baseline mode (digest §4.1, §8.3) and the tools: every teammate's secret revealed to every agent;
// ReadAgentTrajectory answers with exactly the partner's logged trajectory before that turn, as a
// logged record that verify and replay rebuild with zero model calls; the scripted agents and the
// LLM agent use it on the same action interface; it is refused in standard mode. The Find tools
// (config findTools) answer from the agent's own knowledge base. `eval enacttom --mode` runs
// standard, baseline or both with a comparison table, JSON and exit codes.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentContext, AgentInput } from "../actors/household/agent.ts";
import type { HouseholdDecidedPayload, HouseholdEndedPayload, HouseholdFoundPayload, HouseholdObservedPayload, HouseholdResolvedPayload, HouseholdTrajectoryPayload, TrajectoryStepPayload } from "../actors/household/events.ts";
import { findInKb } from "../actors/household/find.ts";
import { newKb } from "../actors/household/knowledge.ts";
import { actionRequest, choicesOf, parseActionAnswer } from "../actors/household/llm.ts";
import { formatAction, parseAction } from "../actors/household/rules.ts";
import { mutuallyExclusive } from "../actors/household/pddl.ts";
import { compileTask } from "../actors/household/task.ts";
import { searchPlans } from "../actors/household/verifier/physical.ts";
import { abstractFor } from "../actors/household/verifier/relevance.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { householdWorld, layoutOf, resolveHouseholdConfig } from "../actors/household/world.ts";
import type { LogRecord } from "../events/record.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";
import { makeLlmGateway } from "../services/llm/index.ts";
import { fakeServer, type ChatBody } from "./fakeLlmServer.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";

const D3 = "gen-coop-d3-standard-s2301";
const payloads = <T>(records: readonly LogRecord[], type: string) => records.filter((r) => r.type === type).map((r) => r.payload as T);

/** A partner's trajectory before `turn`, rebuilt from the log's decided, resolved and observed records. */
function trajectoryFromLog(records: readonly LogRecord[], partner: string, turn: number): TrajectoryStepPayload[] {
  const decided = payloads<HouseholdDecidedPayload>(records, "household.decided").filter((d) => d.agent === partner && d.turn < turn);
  const resolved = payloads<HouseholdResolvedPayload>(records, "household.resolved").filter((r) => r.agent === partner && r.turn < turn);
  const observed = payloads<HouseholdObservedPayload>(records, "household.observed").filter((o) => o.agent === partner && o.turn < turn);
  return resolved.map((r) => {
    const o = observed.find((x) => x.turn === r.turn)!;
    return { turn: r.turn, action: r.action, why: decided.find((d) => d.turn === r.turn)!.why, ok: r.ok, reason: r.reason, room: o.room, holding: o.holding, heard: o.messages.map((m) => ({ from: m.from, text: m.text })) };
  });
}

const agentInputs = (config: unknown) =>
  householdWorld
    .actors(resolveHouseholdConfig(config), 1)
    .filter((a) => a.id.startsWith("agent/"))
    .map((a) => a.input as AgentInput);

describe("baseline mode: secrets", () => {
  it("reveals every teammate's secrets to every agent, in its knowledge and in the LLM prompt; standard mode reveals none", () => {
    const config = resolveHouseholdConfig({ task: D3, mode: "baseline" });
    const task = config.task;
    for (const input of agentInputs({ task: D3, mode: "baseline" })) {
      const others = Object.keys(task.agents).filter((a) => a !== input.self);
      expect(input.secrets).toEqual(task.agent_secrets[input.self]);
      expect(input.revealed).toEqual(Object.fromEntries(others.map((a) => [a, task.agent_secrets[a]])));
      expect(input.tools).toEqual({ read: true, find: false });
      const kb = newKb(input.self, input.room, input.secrets, input.revealed);
      // The shared goal is known to all (agent_0's secret names it).
      expect(kb.goals.length).toBeGreaterThan(0);
      const layout = layoutOf(task);
      const prompt = actionRequest("m", kb, layout, input.self, 0, 20, choicesOf(kb, layout, input.self, undefined, input.tools)).messages.map((m) => m.content).join("\n");
      for (const a of others) for (const s of task.agent_secrets[a]!) expect(prompt).toContain(`${a} knows: `), expect(prompt).toContain(s);
      expect(prompt).toContain("ReadAgentTrajectory[agent_j]");
    }
    for (const input of agentInputs({ task: D3 })) {
      expect(input.revealed).toBeUndefined();
      expect(input.tools).toBeUndefined();
      const kb = newKb(input.self, input.room, input.secrets);
      expect(kb.baseline).toBeUndefined();
      const layout = layoutOf(task);
      const prompt = actionRequest("m", kb, layout, input.self, 0, 20, choicesOf(kb, layout, input.self, undefined)).messages.map((m) => m.content).join("\n");
      expect(prompt).not.toContain(" knows: ");
      expect(prompt).not.toContain("ReadAgentTrajectory");
    }
  });

  it("a teammate's private objective is shown, not adopted", () => {
    const task = resolveHouseholdConfig({ task: "gen-mixed-d2-standard-s2300" }).task;
    const owner = Object.keys(task.goal_owners!)[0]!;
    for (const input of agentInputs({ task: "gen-mixed-d2-standard-s2300", mode: "baseline" })) {
      const kb = newKb(input.self, input.room, input.secrets, input.revealed);
      expect(kb.own.length > 0).toBe(input.self === owner);
    }
  });
});

describe("ReadAgentTrajectory", () => {
  it("answers with exactly the partner's logged trajectory before that turn; verify and replay rebuild it", async () => {
    const dir = join(tempDir("hh-baseline-read"), "ep");
    await runEpisode({ world: "household", seed: 1, condition: "first-order", config: { task: D3, mode: "baseline" }, dir, trace: { exporter: "none" } });
    const records = logRecords(dir);
    const reads = payloads<HouseholdTrajectoryPayload>(records, "household.trajectory");
    expect(reads.length).toBeGreaterThan(3);
    for (const r of reads) {
      expect(r.upTo).toBe(r.turn - 1);
      expect(r.steps).toEqual(trajectoryFromLog(records, r.partner, r.turn));
      // The decision that asked for it, by a scripted agent through the same action interface.
      expect(payloads<HouseholdDecidedPayload>(records, "household.decided").find((d) => d.agent === r.agent && d.turn === r.turn)!.action).toBe(`ReadAgentTrajectory[${r.partner}]`);
    }
    expect(reads.some((r) => r.steps.some((s) => s.heard.length > 0))).toBe(true);
    const report = await verifyEpisode(dir);
    expect(report.ok, report.text).toBe(true);
    const replay = await replayEpisode(dir);
    const last = reads.at(-1)!;
    const reader = replay.host.contextOf(`agent/${last.agent}`) as AgentContext;
    replay.host.stop();
    expect(reader.kb.baseline!.read[last.partner]!.steps).toEqual(last.steps);
  });

  it("is refused in standard mode (the turn is spent), and the parser reads both spellings", async () => {
    expect(parseAction("ReadAgentTrajectory[agent_1]")).toEqual({ kind: "read", target: "agent_1" });
    expect(parseAction("ReadAgentTrajectoryTool[agent_1]")).toEqual({ kind: "read", target: "agent_1" });
    expect(formatAction({ kind: "read", target: "agent_1" })).toBe("ReadAgentTrajectory[agent_1]");
    // The LLM agent may not choose it in standard mode; in baseline mode it may, for a teammate only.
    const config = resolveHouseholdConfig({ task: "tea-for-two" });
    const layout = layoutOf(config.task);
    const kb = newKb("agent_0", "kitchen_1", []);
    expect(parseActionAnswer('{"action": "ReadAgentTrajectory[agent_1]"}', choicesOf(kb, layout, "agent_0", undefined)).ok).toBe(false);
    const tools = { read: true, find: false };
    expect(parseActionAnswer('{"action": "ReadAgentTrajectory[agent_1]"}', choicesOf(kb, layout, "agent_0", undefined, tools))).toEqual({ ok: true, action: { kind: "read", target: "agent_1" } });
    expect(parseActionAnswer('{"action": "ReadAgentTrajectory[agent_0]"}', choicesOf(kb, layout, "agent_0", undefined, tools)).ok).toBe(false);
  });

  it("the LLM agent reads a partner's trajectory through the gateway; verify and replay need zero model calls", async () => {
    const userOf = (body: ChatBody) => body.messages.find((m) => m.role === "user")!.content;
    // agent_0 reads agent_1's trajectory every turn; agent_1 walks to the study, then waits; probes: unknown.
    const server = await fakeServer((body) => {
      const user = userOf(body);
      if (user.includes("\nPROBES: ")) {
        const ids = [...user.matchAll(/^(k_probe_\d+): /gm)].map((m) => m[1]);
        return { content: JSON.stringify({ answers: ids.map((id) => ({ probe_id: id, predicate: "unknown", args: [], holds: null })) }) };
      }
      const self = /^You are (agent_\d+)\./m.exec(user)![1]!;
      if (self === "agent_0") return { content: JSON.stringify({ thought: "what did agent_1 do?", action: "ReadAgentTrajectory[agent_1]" }) };
      return { content: JSON.stringify({ thought: "go", action: user.includes("You are in study_1") ? "Wait[]" : "Navigate[study_1]" }) };
    });
    const dir = join(tempDir("hh-baseline-llm"), "ep");
    let bodies: ChatBody[];
    try {
      const gateway = makeLlmGateway({ baseURL: server.url, apiKey: null, models: { agent: "fake-agent" }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2 });
      await runEpisode({ world: "household", seed: 1, condition: "llm", config: { task: "tea-for-two", mode: "baseline", llm: { agent: "fake-agent" } }, dir, trace: { exporter: "none" }, llm: gateway.responder });
      bodies = [...server.bodies];
    } finally {
      await server.close();
    }
    const records = logRecords(dir);
    const reads = payloads<HouseholdTrajectoryPayload>(records, "household.trajectory");
    expect(reads.length).toBe(20); // one a turn; turn 0 reads an empty trajectory
    for (const r of reads) expect(r.steps).toEqual(trajectoryFromLog(records, "agent_1", r.turn));
    expect(reads[0]!.steps).toEqual([]);
    expect(payloads<HouseholdDecidedPayload>(records, "household.decided").filter((d) => d.agent === "agent_0").every((d) => d.why === "llm:fake-agent")).toBe(true);
    // What it read is in its next prompt (agent_1 starts in the study, so it waits there).
    const prompts = bodies.filter((b) => userOf(b).startsWith("You are agent_0.") && !userOf(b).includes("\nPROBES: "));
    expect(userOf(prompts[2]!)).toContain("agent_1's trajectory (read up to turn 1):\n  Turn 1: Wait[] — Successful execution!; in study_1.");
    expect(userOf(prompts[2]!)).toContain("agent_1 knows: agent_1 can send 2 messages. (message_limit agent_1 2)");
    // The server is closed: a model call during verify or replay would fail and diverge.
    const report = await verifyEpisode(dir);
    expect(report.ok, report.text).toBe(true);
    const replay = await replayEpisode(dir);
    replay.host.stop();
    expect(replay.stateHash).toBe((records.filter((r) => r.type === "tick.committed").at(-1)!.payload as { stateHash: string }).stateHash);
  });
});

describe("Find tools (config findTools)", () => {
  it("answer from the agent's own knowledge base by id and kind, and are logged", async () => {
    const config = resolveHouseholdConfig({ task: "tea-for-two" });
    const layout = layoutOf(config.task);
    const kb = newKb("agent_0", "kitchen_1", ["(is_on_top teapot_1 counter_3)"]);
    expect(findInKb(kb, layout, "object", "the teapot")).toEqual([{ id: "teapot_1", detail: "on counter_3 in kitchen_1" }]);
    expect(findInKb(kb, layout, "object", "a cup")).toEqual([]);
    expect(findInKb(kb, layout, "room", "kitchen")[0]!.id).toBe("kitchen_1");
    expect(findInKb(kb, layout, "receptacle", "counter in the kitchen").map((r) => r.id)).toEqual(["counter_3"]);
    expect(parseAction("FindObjectTool[the teapot]")).toEqual({ kind: "find", tool: "object", query: "the teapot" });
    expect(choicesOf(kb, layout, "agent_0", undefined).actions).not.toContain("FindObjectTool");

    const server = await fakeServer((body) => {
      const user = body.messages.find((m) => m.role === "user")!.content;
      if (user.includes("\nPROBES: ")) return { content: JSON.stringify({ answers: [...user.matchAll(/^(k_probe_\d+): /gm)].map((m) => ({ probe_id: m[1], predicate: "unknown", args: [], holds: null })) }) };
      return { content: JSON.stringify({ thought: "where is it", action: "FindObjectTool[teapot]" }) };
    });
    const dir = join(tempDir("hh-find"), "ep");
    try {
      const gateway = makeLlmGateway({ baseURL: server.url, apiKey: null, models: { agent: "fake-agent" }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2 });
      await runEpisode({ world: "household", seed: 1, condition: "llm", config: { task: "tea-for-two", findTools: true, llm: { agent: "fake-agent" } }, dir, trace: { exporter: "none" }, llm: gateway.responder });
    } finally {
      await server.close();
    }
    const records = logRecords(dir);
    const found = payloads<HouseholdFoundPayload>(records, "household.found");
    expect(found.length).toBe(40);
    expect(found.every((f) => f.tool === "FindObjectTool" && f.query === "teapot")).toBe(true);
    expect(payloads<HouseholdEndedPayload>(records, "household.ended")[0]!.reason).toBe("turn_limit");
    expect((await verifyEpisode(dir)).ok).toBe(true);
  });
});

describe("eval enacttom --mode", () => {
  it("runs both modes and prints the standard-vs-baseline comparison; a bad --mode exits 2 naming the flag", async () => {
    const out = join(tempDir("hh-eval-modes"), "ev");
    const r = await runCli(["eval", "enacttom", "--mode", "both", "--agents", "first-order,naive", "--runs", "1", "--per-cell", "1", "--out", out, "--json", "-q"]);
    expect(r.code, r.err).toBe(0);
    const s = JSON.parse(r.out);
    expect(s.modes).toEqual(["standard", "baseline"]);
    expect(s.standard).toMatchObject({ mode: "standard", episodes: 12, out });
    expect(s.baseline).toMatchObject({ mode: "baseline", episodes: 12, out: join(out, "baseline") });
    const row = (agent: string, label: string) => s.comparison.find((x: { agent: string; label: string }) => x.agent === agent && x.label === label);
    expect(s.comparison.filter((x: { agent: string }) => x.agent === "naive").map((x: { label: string }) => x.label)).toEqual(["all", "cooperative", "mixed", "d1", "d2", "d3", "cooperative d1", "cooperative d2", "cooperative d3", "mixed d1", "mixed d2", "mixed d3"]);
    // With every secret revealed the naive agent, which never messages, succeeds; in standard mode it cannot.
    expect(row("naive", "all")).toMatchObject({ tasks: 6, standard: { avg: 0, passPower: 0 }, baseline: { avg: 1, passPower: 1 }, gap: { avg: 1, passPower: 1 } });
    expect(row("first-order", "d2")).toMatchObject({ tasks: 2, standard: { avg: 0 }, baseline: { avg: 1 } });
    expect(Object.keys(row("first-order", "d1").standard).sort()).toEqual(["avg", "literalAvg", "literalPassPower", "passPower", "percentComplete", "se"]);
    const table = await runCli(["eval", "enacttom", "--mode", "baseline", "--agents", "naive", "--runs", "1", "--per-cell", "1", "--out", out, "-q"]);
    expect(table.code).toBe(2);
    expect(table.err).toMatch(/already holds logs of baseline\/naive/);
    const again = await runCli(["eval", "enacttom", "--mode", "baseline", "--agents", "naive", "--runs", "1", "--per-cell", "1", "--out", out, "--fresh", "-q"]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain("EnactToM standard split, baseline mode: 6 tasks × 1 runs per agent");
    const bad = await runCli(["eval", "enacttom", "--mode", "hard"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--mode expects one of standard, baseline, both, got 'hard'/);
  });
});

describe("subgoal tension (on by default)", () => {
  const MIXED = "data/household/pool/gen-mixed-d1-standard-s2300.json";
  const withObjective = (objective: string) => ({ ...(JSON.parse(readFileSync(MIXED, "utf8")) as Record<string, unknown>), goal_owners: { agent_1: objective } });
  it("tells conflict and contention from an independent objective, with a reason on rejection", async () => {
    const pool = JSON.parse(readFileSync(MIXED, "utf8")) as { goal: string; goal_owners: Record<string, string> };
    expect(pool.goal).toContain("(is_on_top vase_25 shelf_22)");
    expect(pool.goal).toContain("(is_open cabinet_29)");
    // The generator's objective: the cabinet the team must open stays closed. A conflict the
    // house's structure decides, so no joint search runs (0 nodes).
    expect(pool.goal_owners).toEqual({ agent_1: "(is_closed cabinet_29)" });
    const v = verifyTask(pool);
    expect(v.ok).toBe(true);
    expect(v.report!.subgoalTension).toEqual([{ agent: "agent_1", objective: "(is_closed cabinet_29)", tension: "conflict", shared: ["cabinet_29"], jointPlanLength: null, exclusive: [["(is_open cabinet_29)", "(is_closed cabinet_29)"]], nodes: 0 }]);
    // The search agrees where it has to decide: the vase elsewhere is a conflict too.
    const elsewhere = verifyTask(withObjective("(is_on_top vase_25 table_17)"));
    expect(elsewhere.report!.subgoalTension).toEqual([expect.objectContaining({ tension: "conflict", shared: ["vase_25"], jointPlanLength: null, nodes: 0 })]);
    // The objective the generator drew before (another object to another surface) is independent: rejected, with why.
    const independent = verifyTask(withObjective("(is_on_top book_26 table_17)"));
    expect(independent.ok).toBe(false);
    expect(independent.failures).toEqual([{ _tag: "NoSubgoalTension", agent: "agent_1", objective: "(is_on_top book_26 table_17)", jointPlanLength: expect.any(Number) }]);
    // Skipped when asked: the report has no tension entry.
    const skipped = verifyTask(withObjective("(is_on_top book_26 table_17)"), { subgoalTension: false });
    expect(skipped.ok).toBe(true);
    expect(skipped.report!.subgoalTension).toBeUndefined();
    // Another object onto the shared goal's shelf: both can hold (a joint plan is found), but they compete for it.
    const contention = verifyTask(withObjective("(is_on_top book_26 shelf_22)"));
    expect(contention.report!.subgoalTension).toEqual([expect.objectContaining({ tension: "contention", shared: ["shelf_22"], exclusive: [], jointPlanLength: expect.any(Number) })]);
    expect(contention.ok).toBe(true);
    // A cooperative task has no owners: nothing to check.
    expect(verifyTask(JSON.parse(readFileSync("data/household/pool/gen-coop-d1-standard-s2300.json", "utf8"))).report!.subgoalTension).toEqual([]);
    // The command: the check line by default, exit 1 with the reason; --no-subgoal-tension skips it.
    const file = join(tempDir("hh-tension"), "t.json");
    writeFileSync(file, JSON.stringify(withObjective("(is_on_top book_26 table_17)")));
    const r = await runCli(["tasks", "verify", file, "-q"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL subgoal tension .* agent_1's private objective \(is_on_top book_26 table_17\) pulls nowhere against the shared goal/);
    const off = await runCli(["tasks", "verify", file, "--no-subgoal-tension", "-q"]);
    expect(off.code, off.out).toBe(0);
    expect(off.out).not.toContain("subgoal tension");
    const ok = await runCli(["tasks", "verify", MIXED, "-q"]);
    expect(ok.code, ok.out).toBe(0);
    expect(ok.out).toMatch(/ok {3}subgoal tension .* agent_1: conflict over cabinet_29 \(cannot hold with \(is_open cabinet_29\)\)/);
  });

  it("a structural conflict is one the joint search cannot solve either", () => {
    for (const id of ["gen-mixed-d1-standard-s2300", "gen-mixed-d2-hard-s2304", "gen-mixed-d3-standard-s2301"]) {
      const c = compileTask(loadTaskFile(`data/household/pool/${id}.json`));
      for (const [agent, owned] of Object.entries(c.owned)) {
        const joint = [...c.functional, ...owned];
        const search = searchPlans(abstractFor(c, joint), [joint]);
        expect([id, agent, search.capped, search.plans[0]]).toEqual([id, agent, false, null]);
        expect(c.functional.some((f) => owned.some((o) => mutuallyExclusive(f, o)))).toBe(true);
      }
    }
  });
});
