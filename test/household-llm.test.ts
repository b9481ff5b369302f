// The LLM household agent (condition `llm`, role `agent`) against the fake OpenAI-compatible server,
// through the real gateway and sequencer: valid answers are the agents' actions and the episode
// verifies and replays with zero model calls; an invalid answer (after the gateway's repair attempt)
// falls back to the competent policy for that turn, counted and said; the prompt holds the agent's
// own knowledge and not a teammate's secrets; `run household --llm` and `fork --reuse-llm` work.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentContext } from "../actors/household/agent.ts";
import type { HouseholdDecidedPayload, HouseholdEndedPayload } from "../actors/household/events.ts";
import { ACTION_OUTPUT, choicesOfRequest, HOUSEHOLD_LLM_JSON_SCHEMAS, HOUSEHOLD_LLM_OUTPUTS, parseActionAnswer } from "../actors/household/llm.ts";
import type { LogRecord } from "../events/record.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { makeLlmGateway, type LlmConfig } from "../services/llm/index.ts";
import { fakeServer, type ChatBody, type Reply } from "./fakeLlmServer.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";

const MODEL = "fake-agent";
const gatewayConfig = (url: string): LlmConfig => ({ baseURL: url, apiKey: null, models: { agent: MODEL }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2 });
const userOf = (body: ChatBody) => body.messages.find((m) => m.role === "user")!.content;
const selfOf = (body: ChatBody) => /^You are (agent_\d+)\./m.exec(userOf(body))![1]!;
const decisions = (records: readonly LogRecord[]) => records.filter((r) => r.type === "household.decided").map((r) => r.payload as HouseholdDecidedPayload);

/** A model that walks each agent to the study (when the house has one), then waits. */
const walker = (body: ChatBody): Reply => ({ content: JSON.stringify({ thought: "go", action: userOf(body).includes("You are in study_1") || !userOf(body).includes("study_1") ? "Wait[]" : "Navigate[study_1]" }) });

async function runLlm(label: string, reply: (body: ChatBody, n: number) => Reply, task = "tea-for-two") {
  const server = await fakeServer(reply);
  try {
    const gateway = makeLlmGateway(gatewayConfig(server.url));
    const dir = join(tempDir(`household-llm-${label}`), "ep");
    await runEpisode({ world: "household", seed: 1, condition: "llm", config: { task, llm: { agent: MODEL } }, dir, trace: { exporter: "none" }, llm: gateway.responder });
    return { dir, records: logRecords(dir), bodies: [...server.bodies], requests: server.requests };
  } finally {
    await server.close();
  }
}

describe("household LLM agent: the answer's validation", () => {
  const choices = { actions: ["Navigate", "Open", "Pick", "Communicate", "Wait"], ids: ["kitchen_1", "counter_3", "cabinet_7", "cup_2"], openable: ["cabinet_7"], objects: ["cup_2"], contacts: ["agent_1"], messagesLeft: 1 };
  it("takes an action in EnactToM's syntax or a message as fields; refuses what the rules' Action does not allow", () => {
    expect(parseActionAnswer('{"action": "Navigate[kitchen_1]"}', choices)).toEqual({ ok: true, action: { kind: "navigate", target: "kitchen_1" } });
    expect(parseActionAnswer('{"action": "Communicate", "text": "cup in kitchen", "to": ["agent_1"]}', choices)).toEqual({ ok: true, action: { kind: "communicate", text: "cup in kitchen", to: ["agent_1"] } });
    const err = (content: string, c = choices) => {
      const r = parseActionAnswer(content, c);
      expect(r.ok).toBe(false);
      return (r as { error: string }).error;
    };
    expect(parseActionAnswer('{"action": "Pick[cup_2]"}', choices)).toEqual({ ok: true, action: { kind: "pick", target: "cup_2" } });
    expect(err('{"action": "Close[cabinet_7]"}')).toMatch(/Close is not an action you may take/);
    expect(err('{"action": "Open[counter_3]"}')).toMatch(/'counter_3' cannot be opened or closed/);
    expect(err('{"action": "Pick[counter_3]"}')).toMatch(/'counter_3' is not an object you know of/);
    expect(err('{"action": "Navigate[garage_9]"}')).toMatch(/unknown id 'garage_9'/);
    expect(err('{"action": "Fly[kitchen_1]"}')).toMatch(/unknown action 'Fly'/);
    expect(err('{"action": "Communicate", "text": "hi", "to": ["agent_7"]}')).toMatch(/cannot message 'agent_7'/);
    expect(err('{"action": "Communicate", "text": "hi", "to": ["agent_1"]}', { ...choices, messagesLeft: 0 })).toMatch(/no messages left/);
    expect(err("not json")).toBeTruthy();
  });
});

describe("household LLM agent through the gateway", () => {
  let valid: Awaited<ReturnType<typeof runLlm>>;
  beforeAll(async () => {
    valid = await runLlm("valid", walker);
  });

  it("valid answers are the agents' actions; the episode completes, verifies and replays with zero model calls", async () => {
    const ds = decisions(valid.records);
    const ended = valid.records.find((r) => r.type === "household.ended")!.payload as HouseholdEndedPayload;
    expect(ended.reason).toBe("turn_limit");
    expect(ds.length).toBe(40);
    expect(ds.every((d) => d.why === `llm:${MODEL}`)).toBe(true);
    expect(ds.filter((d) => d.agent === "agent_0").map((d) => d.action).slice(0, 2)).toEqual(["Navigate[study_1]", "Wait[]"]);
    expect(valid.requests).toBe(40);
    expect(valid.records.filter((r) => r.type === "llm.completed").length).toBe(40);
    // The server is closed: a model call during verify or replay would fail and diverge.
    const report = await verifyEpisode(valid.dir);
    expect(report.ok, report.text).toBe(true);
    const replay = await replayEpisode(valid.dir);
    const agent = replay.host.contextOf("agent/agent_0") as AgentContext;
    replay.host.stop();
    expect(replay.stateHash).toBe((valid.records.filter((r) => r.type === "tick.committed").at(-1)!.payload as { stateHash: string }).stateHash);
    expect(agent.llm).toMatchObject({ calls: 20, fallbacks: 0 });
  });

  it("the prompt holds the agent's own knowledge (its secrets, its budget) and not a teammate's secrets", () => {
    const first = (self: string) => userOf(valid.bodies.find((b) => selfOf(b) === self)!);
    const a0 = first("agent_0");
    const a1 = first("agent_1");
    // agent_0's secrets: the teapot's goal and place, its ban, its 1-message budget.
    expect(a0).toContain("(is_on_top teapot_1 table_12)");
    expect(a0).toContain("teapot_1 inside cabinet_7");
    expect(a0).toContain("You cannot enter dining_room_1.");
    expect(a0).toContain("Messages left: 1;");
    expect(a0).not.toContain("drawer_21)");
    // agent_1's: the drawer's goal and 2 messages; nothing of agent_0's.
    expect(a1).toContain("(is_open drawer_21)");
    expect(a1).toContain("Messages left: 2;");
    expect(a1).not.toContain("teapot_1");
    expect(a1).not.toContain("cannot enter");
    expect(choicesOfRequest({ messages: [{ role: "user", content: a1 }] })).toMatchObject({ contacts: ["agent_0"], messagesLeft: 2 });
  });

  it("the local model's grammar allows only answers the validator takes: every concrete action, a Place, a message to a contact", () => {
    // agent_0 on its first turn: it knows of teapot_1 (a Place) and may message agent_1.
    const request = { messages: valid.bodies.find((b) => selfOf(b) === "agent_0")!.messages.map((m) => ({ role: m.role as "user", content: m.content })) };
    const schema = HOUSEHOLD_LLM_JSON_SCHEMAS[ACTION_OUTPUT]!(request) as { oneOf: Array<{ properties: { action: { enum?: string[] }; object?: { enum: string[] }; furniture?: { enum: string[] }; to?: { items: { enum: string[] } } } }> };
    const validate = HOUSEHOLD_LLM_OUTPUTS[ACTION_OUTPUT]!;
    const [concrete, place, message] = schema.oneOf;
    expect(concrete!.properties.action.enum!.length).toBeGreaterThan(10);
    for (const action of concrete!.properties.action.enum!) expect(validate(JSON.stringify({ thought: "", action }), request), action).toBeNull();
    expect(concrete!.properties.action.enum).toContain("Open[cabinet_7]");
    expect(concrete!.properties.action.enum).not.toContain("Open[counter_3]");
    const object = place!.properties.object!.enum[0]!;
    expect(validate(JSON.stringify({ thought: "", action: "Place", object, relation: "on", furniture: place!.properties.furniture!.enum.at(-1) }), request)).toBeNull();
    for (const to of message!.properties.to!.items.enum) expect(validate(JSON.stringify({ thought: "", action: "Communicate", text: "hi", to: [to] }), request), to).toBeNull();
  });

  it("an invalid answer (after the repair attempt) falls back to the competent policy for that turn, counted and said", async () => {
    // agent_1 always answers an action it may not take; agent_0 walks.
    const bad = await runLlm("invalid", (body) => (selfOf(body) === "agent_1" ? { content: '{"thought": "x", "action": "Fly[moon_1]"}' } : walker(body)));
    const ds = decisions(bad.records);
    const a1 = ds.filter((d) => d.agent === "agent_1");
    expect(a1.length).toBeGreaterThan(0);
    expect(a1.every((d) => d.why.startsWith(`scripted (fallback from llm:${MODEL}: invalid_output`))).toBe(true);
    expect(ds.filter((d) => d.agent === "agent_0").every((d) => d.why === `llm:${MODEL}`)).toBe(true);
    // The competent agent_1 opens the drawer on its first turn (it stands in the study).
    expect(a1[0]!.action).toBe("Open[drawer_21]");
    expect(bad.records.filter((r) => r.type === "llm.failed").length).toBe(a1.length);
    const replay = await replayEpisode(bad.dir);
    const agent = replay.host.contextOf("agent/agent_1") as AgentContext;
    replay.host.stop();
    expect(agent.llm).toMatchObject({ calls: a1.length, fallbacks: a1.length });
    const report = await verifyEpisode(bad.dir);
    expect(report.ok, report.text).toBe(true);
  });
});

describe("household LLM agent on the command line", () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  beforeAll(async () => {
    server = await fakeServer(walker);
  });
  afterAll(async () => {
    await server.close();
  });
  const cli = async (args: string[]) => {
    const r = await runCli(args, undefined, { PROBETOWN_LLM_API_KEY: "", OPENAI_API_KEY: "" });
    return { code: r.code, stdout: r.out, stderr: r.err };
  };

  it("`run household --condition llm --llm` runs on the model; `fork --reuse-llm` without an endpoint makes no call and verifies", async () => {
    const root = tempDir("household-llm-cli");
    const before = server.requests;
    const run = await cli(["run", "household", "--seed", "1", "--task", "tea-for-two", "--condition", "llm", "--log", join(root, "parent"), "--trace", "none", "--llm", server.url, "--model", `agent=${MODEL}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`agent=${MODEL}`));
    expect(server.requests - before).toBe(40);
    expect(run.stdout).toContain(`llm agent (${MODEL}): turns decided by the model: agent_0 20/20, agent_1 20/20; 0 fell back to the competent policy`);
    const header = logRecords(join(root, "parent"))[0]!.payload as { config: { llm?: unknown } };
    expect(header.config.llm).toEqual({ agent: MODEL });
    const mid = server.requests;
    const fork = await cli(["fork", join(root, "parent"), "--at", "2", "--condition", "llm", "--reuse-llm", "--log", join(root, "child"), "--trace", "none"]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(server.requests).toBe(mid);
    const child = decisions(logRecords(join(root, "child")));
    expect(child.length).toBeGreaterThan(0);
    expect(child.every((d) => d.why === `llm:${MODEL}`)).toBe(true);
    const verify = await cli(["verify", join(root, "child")]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect(server.requests).toBe(mid);
  });

  it("a competent run with --llm asks no model; its fork into llm with --llm acts on the parent's model from the fork on", async () => {
    const root = tempDir("household-llm-fork-into");
    const before = server.requests;
    const run = await cli(["run", "household", "--seed", "1", "--task", "tea-for-two", "--condition", "competent", "--log", join(root, "parent"), "--trace", "none", "--llm", server.url, "--model", `agent=${MODEL}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests).toBe(before);
    expect(decisions(logRecords(join(root, "parent"))).some((d) => d.why.startsWith("llm:"))).toBe(false);
    const fork = await cli(["fork", join(root, "parent"), "--at", "1", "--condition", "llm", "--log", join(root, "child"), "--trace", "none", "--llm", server.url]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(server.requests).toBeGreaterThan(before);
    const after = decisions(logRecords(join(root, "child"))).filter((d) => d.turn >= 2);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((d) => d.why === `llm:${MODEL}`)).toBe(true);
  });

  it("`eval enacttom --agents llm --llm` runs the LLM agent on the pool and counts its calls and fallbacks; without --llm it is a usage error", async () => {
    const out = join(tempDir("household-llm-eval"), "ev");
    const before = server.requests;
    const r = await cli(["eval", "enacttom", "--split", "standard", "--agents", "llm", "--runs", "1", "--per-cell", "1", "--out", out, "--json", "--llm", server.url, "--model", `agent=${MODEL}`]);
    expect(r.code, r.stderr).toBe(0);
    const calls = server.requests - before;
    expect(calls).toBeGreaterThan(0);
    // Every turn one valid answer: as many calls as turns, none failed, no fallback.
    expect(r.stderr).toContain(`eval enacttom: llm agent (${MODEL}): ${calls} model calls, 0 failed; 0 of ${calls} turns fell back to the competent policy`);
    expect(readdirSync(join(out, "llm")).length).toBe(6);
    const summary = JSON.parse(r.stdout) as { rows?: unknown };
    expect(JSON.stringify(summary)).toContain('"llm"');
    const none = await cli(["eval", "enacttom", "--agents", "llm", "--runs", "1", "--per-cell", "1", "--out", join(out, "x")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--agents llm: the LLM agent needs a model/);
  });
});
