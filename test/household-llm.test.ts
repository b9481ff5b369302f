// The LLM household agent (condition `llm`, role `agent`) against the fake OpenAI-compatible server,
// through the real gateway and sequencer: valid answers are the agents' actions and the episode
// verifies and replays with zero model calls; an invalid answer (after the gateway's repair attempt)
// falls back to the competent policy for that turn, counted and said; the prompt holds the agent's
// own knowledge and its last turns (bounded by `history`) and not a teammate's secrets; `run
// household --llm` and `fork --reuse-llm` work. After the episode the literal probes go to the model
// (one call per depth and agent): its answers are scored, an invalid or failed one falls back to the
// knowledge base's answer, counted in the log and by `eval enacttom`.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentContext } from "../actors/household/agent.ts";
import type { HouseholdDecidedPayload, HouseholdEndedPayload, HouseholdProbeAnsweredPayload, HouseholdProbePayload, HouseholdProbeScoredPayload } from "../actors/household/events.ts";
import { ACTION_OUTPUT, choicesOfRequest, HOUSEHOLD_LLM_JSON_SCHEMAS, HOUSEHOLD_LLM_OUTPUTS, parseActionAnswer, parseProbeAnswers, PROBES_OUTPUT, probeSpecOfRequest } from "../actors/household/llm.ts";
import { believedHolds } from "../actors/household/policy.ts";
import { answerProbe } from "../actors/household/probes.ts";
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
const isProbeCall = (body: ChatBody) => userOf(body).includes("\nPROBES: ");
const payloadsOf = <T>(records: readonly LogRecord[], type: string) => records.filter((r) => r.type === type).map((r) => r.payload as T);

/** The fact a probe line names, read back from the prompt's sentence (what a model would do). */
const PREDICATE_OF: ReadonlyArray<[RegExp, string]> = [[/ is on /, "is_on_top"], [/ is inside /, "is_inside"], [/ is open/, "is_open"], [/ is closed/, "is_closed"], [/ is held by /, "is_held_by"], [/ is in /, "is_in_room"]];
/** A model that answers every probe "holds" with the fact it names (`holds` null: unknown). */
const probeAnswerer = (body: ChatBody, holds: boolean | null = true): Reply => {
  const lines = userOf(body).split("\n").filter((l) => /^k_probe_\d+: /.test(l));
  const answers = lines.map((l) => {
    const m = /^(k_probe_\d+): .*"(.*)".* for ordered entities \[(.*)\]/.exec(l)!;
    const predicate = PREDICATE_OF.find(([re]) => re.test(` ${m[2]!}`))![1];
    return holds === null ? { probe_id: m[1], predicate: "unknown", args: [], holds: null } : { probe_id: m[1], predicate, args: m[3]!.split(", "), holds };
  });
  return { content: JSON.stringify({ answers }) };
};

/** A model that walks each agent to the study (when the house has one), then waits; it answers the probes "holds". */
const walker = (body: ChatBody): Reply => (isProbeCall(body) ? probeAnswerer(body) : { content: JSON.stringify({ thought: "go", action: userOf(body).includes("You are in study_1") || !userOf(body).includes("study_1") ? "Wait[]" : "Navigate[study_1]" }) });

async function runLlm(label: string, reply: (body: ChatBody, n: number) => Reply, task = "tea-for-two", extra: Record<string, unknown> = {}) {
  const server = await fakeServer(reply);
  try {
    const gateway = makeLlmGateway(gatewayConfig(server.url));
    const dir = join(tempDir(`household-llm-${label}`), "ep");
    await runEpisode({ world: "household", seed: 1, condition: "llm", config: { task, llm: { agent: MODEL }, ...extra }, dir, trace: { exporter: "none" }, llm: gateway.responder });
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
    // 40 turns, then one probe call per (depth, agent): agent_0 heads the depth-2 probe, agent_1 the depth-1 one.
    expect(valid.requests).toBe(42);
    expect(valid.bodies.filter(isProbeCall).length).toBe(2);
    expect(valid.records.filter((r) => r.type === "llm.completed").length).toBe(42);
    // The server is closed: a model call during verify or replay would fail and diverge.
    const report = await verifyEpisode(valid.dir);
    expect(report.ok, report.text).toBe(true);
    const replay = await replayEpisode(valid.dir);
    const agent = replay.host.contextOf("agent/agent_0") as AgentContext;
    replay.host.stop();
    expect(replay.stateHash).toBe((valid.records.filter((r) => r.type === "tick.committed").at(-1)!.payload as { stateHash: string }).stateHash);
    expect(agent.llm).toMatchObject({ calls: 20, fallbacks: 0, probeCalls: 1, probeFallbacks: 0 });
  });

  it("the probes' answers are the model's, and they are scored: two agents that never spoke pass the depth-2 root", () => {
    // The walker model answers both probes "(is_on_top teapot_1 table_12) holds". The root is
    // agent_0's depth-2 probe, scored against agent_1's actual answer: they agree, so it passes.
    // The knowledge base would have said unknown (no message was sent), and failed it.
    const answered = payloadsOf<HouseholdProbeAnsweredPayload>(valid.records, "household.probeAnswered");
    expect(answered.map((a) => a.agent).sort()).toEqual(["agent_0", "agent_1"]);
    for (const a of answered) {
      expect(a.llm).toEqual({ model: MODEL, calls: 1, fallbacks: [] });
      expect(a.answers).toEqual([{ probeId: a.agent === "agent_0" ? "k_probe_0" : "k_probe_1", predicate: "is_on_top", args: ["teapot_1", "table_12"], holds: true }]);
    }
    const scored = payloadsOf<HouseholdProbeScoredPayload>(valid.records, "household.probeScored")[0]!;
    expect(scored).toMatchObject({ roots: 1, passedRoots: 1, score: 1, pass: true });
    expect(scored.probes.find((p) => p.root)).toMatchObject({ probeId: "k_probe_0", agent: "agent_0", basis: "child", passed: true });
    // The probe prompt: the release's wording, the agent's own knowledge and transcript, no teammate's secrets.
    const probe1 = userOf(valid.bodies.filter(isProbeCall).find((b) => selfOf(b) === "agent_1")!);
    expect(probe1).toContain("The episode is over. Do not propose any more actions.");
    expect(probe1).toContain('k_probe_1: Report whether "teapot_1 is on table_12." holds for ordered entities [teapot_1, table_12].');
    expect(probe1).toContain("Turn 20:\nThought: go\nAction: Wait[]");
    expect(probe1).not.toContain("teapot_1 inside cabinet_7");
    expect(probe1).not.toContain("cannot enter");
    const probe0 = userOf(valid.bodies.filter(isProbeCall).find((b) => selfOf(b) === "agent_0")!);
    expect(probe0).toContain('k_probe_0: Predict what agent_1 would report about "teapot_1 is on table_12." for ordered entities [teapot_1, table_12].');
    expect(probe0).not.toContain("drawer_21)");
  });

  it("each turn's prompt carries the agent's last turns (its thought, action, result, what it saw), at most `history` of them", async () => {
    const second = userOf(valid.bodies.filter((b) => !isProbeCall(b) && selfOf(b) === "agent_0")[1]!);
    expect(second).toContain("[History]\nYour turns so far, oldest first:\nTurn 1:\nThought: go\nAction: Navigate[study_1]\nObservation: Successful execution! Saw: book_4 (on desk_20); agent_1 in study_1. You are in study_1.");
    // The default keeps 8 turns; the last prompt holds turns 12-19.
    const last = userOf(valid.bodies.filter((b) => !isProbeCall(b) && selfOf(b) === "agent_0").at(-1)!);
    expect(last).toContain("Your last 8 turns (of 19), oldest first:");
    expect(last.match(/^Turn \d+:$/gm)).toEqual(["Turn 12:", "Turn 13:", "Turn 14:", "Turn 15:", "Turn 16:", "Turn 17:", "Turn 18:", "Turn 19:"]);
    const short = await runLlm("history2", walker, "tea-for-two", { history: 2 });
    const shortLast = userOf(short.bodies.filter((b) => !isProbeCall(b) && selfOf(b) === "agent_0").at(-1)!);
    expect(shortLast.match(/^Turn \d+:$/gm)).toEqual(["Turn 18:", "Turn 19:"]);
    expect(JSON.stringify(short.records[0]!.payload)).toContain('"history":2');
    const none = await runLlm("history0", walker, "tea-for-two", { history: 0 });
    expect(none.bodies.some((b) => userOf(b).includes("[History]"))).toBe(false);
    const report = await verifyEpisode(short.dir);
    expect(report.ok, report.text).toBe(true);
  });

  it("an invalid probe answer falls back to the knowledge base's answer, counted, and the log says why; verify replays it", async () => {
    // agent_1's probe answers name a probe it was not asked; agent_0's are valid. agent_0's first
    // turn is invalid too: the competent fallback tells agent_1 the goal, which agent_1's transcript shows.
    const bad = await runLlm("probe-invalid", (body) =>
      isProbeCall(body) && selfOf(body) === "agent_1" ? { content: '{"answers": [{"probe_id": "k_probe_9", "predicate": "unknown", "args": [], "holds": null}]}' } : selfOf(body) === "agent_0" && userOf(body).startsWith("You are agent_0. Turn 1 of") ? { content: "{}" } : walker(body),
    );
    const heard = userOf(bad.bodies.find((b) => selfOf(b) === "agent_1" && userOf(b).startsWith("You are agent_1. Turn 2 of"))!);
    expect(heard).toContain("Turn 1:\nThought: go\nAction: Wait[]\nObservation: Successful execution!");
    expect(heard).toMatch(/\nagent_0 said: "By the end: teapot_1 is on table_12\. \(goal \(is_on_top teapot_1 table_12\)\)/);
    const answered = payloadsOf<HouseholdProbeAnsweredPayload>(bad.records, "household.probeAnswered");
    const a1 = answered.find((a) => a.agent === "agent_1")!;
    expect(a1.llm!.calls).toBe(1);
    expect(a1.llm!.fallbacks).toEqual([{ probeId: "k_probe_1", reason: expect.stringMatching(/^invalid_output: .*unknown probe_id "k_probe_9"/) as unknown as string }]);
    expect(answered.find((a) => a.agent === "agent_0")!.llm!.fallbacks).toEqual([]);
    // The fallback is what the knowledge base answers at the end (the scripted agents' rule).
    const replay = await replayEpisode(bad.dir);
    const agent = replay.host.contextOf("agent/agent_1") as AgentContext;
    replay.host.stop();
    const question = payloadsOf<HouseholdProbePayload>(bad.records, "household.probe").find((p) => p.agent === "agent_1")!.probes[0]!;
    expect(a1.answers).toEqual([answerProbe(agent.kb, question, (l) => believedHolds(agent.kb, l, "agent_1"))]);
    expect(agent.llm).toMatchObject({ probeCalls: 1, probeFallbacks: 1 });
    expect(bad.records.filter((r) => r.type === "llm.failed").length).toBe(2);
    const report = await verifyEpisode(bad.dir);
    expect(report.ok, report.text).toBe(true);
    // `inspect` says whose each answer is.
    const inspect = await runCli(["inspect", bad.dir, "--from", "19"]);
    expect(inspect.out).toMatch(/probe k_probe_0 → agent_0: \(is_on_top teapot_1 table_12\) holds {2}— llm:fake-agent/);
    expect(inspect.out).toMatch(/probe k_probe_1 → agent_1: .* {2}— knowledge base \(fallback: invalid_output: /);
  });

  it("condition llm without a model: every probe is the knowledge base's answer, each counted as a fallback", async () => {
    const dir = join(tempDir("household-llm-nomodel"), "ep");
    await runEpisode({ world: "household", seed: 1, condition: "llm", config: { task: "tea-for-two" }, dir, trace: { exporter: "none" } });
    const answered = payloadsOf<HouseholdProbeAnsweredPayload>(logRecords(dir), "household.probeAnswered");
    expect(answered.length).toBe(2);
    for (const a of answered) expect(a.llm).toEqual({ model: "none", calls: 0, fallbacks: a.answers.map((x) => ({ probeId: x.probeId, reason: "no model for role agent; give --llm" })) });
    expect(logRecords(dir).some((r) => r.type === "llm.requested")).toBe(false);
  });

  it("the probe answers' validation and the local model's grammar agree", () => {
    const request = { messages: valid.bodies.find((b) => isProbeCall(b) && selfOf(b) === "agent_0")!.messages.map((m) => ({ role: m.role as "user", content: m.content })) };
    const spec = probeSpecOfRequest(request)!;
    expect(spec.ids).toEqual(["k_probe_0"]);
    const ok = (answers: unknown[]) => parseProbeAnswers(JSON.stringify({ answers }), spec);
    expect(ok([{ probe_id: "k_probe_0", predicate: "is_on_top", args: ["teapot_1", "table_12"], holds: false }])).toEqual({ ok: true, answers: [{ probeId: "k_probe_0", predicate: "is_on_top", args: ["teapot_1", "table_12"], holds: false }] });
    // "I do not know" in either field is unknown in both.
    expect(ok([{ probe_id: "k_probe_0", predicate: "is_on_top", args: ["teapot_1", "table_12"], holds: null }])).toEqual({ ok: true, answers: [{ probeId: "k_probe_0", predicate: "unknown", args: [], holds: null }] });
    expect(ok([{ probeId: "k_probe_0", predicate: "unknown", args: [], holds: null }]).ok).toBe(true);
    const error = (answers: unknown[]) => (ok(answers) as { error: string }).error;
    expect(error([])).toMatch(/no answer for k_probe_0/);
    expect(error([{ probe_id: "k_probe_0", predicate: "is_on", args: [], holds: true }])).toMatch(/predicate must be one of/);
    expect(error([{ probe_id: "k_probe_0", predicate: "is_open", args: ["teapot_1", "table_12"], holds: true }])).toMatch(/is_open takes 1 argument/);
    expect(error([{ probe_id: "k_probe_0", predicate: "is_on_top", args: ["teapot_1", "table_12"], holds: "yes" }])).toMatch(/holds must be true, false or null/);
    expect(error([{ probe_id: "k_probe_0", predicate: "unknown", args: [], holds: null }, { probe_id: "k_probe_0", predicate: "unknown", args: [], holds: null }])).toMatch(/answered twice/);
    expect(HOUSEHOLD_LLM_OUTPUTS[PROBES_OUTPUT]!("not json", request)).toBeTruthy();
    // The grammar: one answer per probe, in order, its id fixed; predicates of the vocabulary or unknown; args among the probes' entities.
    const schema = HOUSEHOLD_LLM_JSON_SCHEMAS[PROBES_OUTPUT]!(request) as { properties: { answers: { prefixItems: Array<{ properties: { probe_id: { const: string }; predicate: { enum: string[] }; args: { items: { enum: string[] } }; holds: { enum: unknown[] } } }>; minItems: number; maxItems: number } } };
    const answers = schema.properties.answers;
    expect([answers.minItems, answers.maxItems]).toEqual([1, 1]);
    const item = answers.prefixItems[0]!.properties;
    expect(item.probe_id.const).toBe("k_probe_0");
    expect(item.predicate.enum).toContain("unknown");
    expect(item.args.items.enum).toEqual(["teapot_1", "table_12"]);
    expect(item.holds.enum).toEqual([true, false, null]);
    for (const predicate of item.predicate.enum.filter((p) => p !== "unknown")) {
      const arity = spec.predicates[predicate]!;
      expect(HOUSEHOLD_LLM_OUTPUTS[PROBES_OUTPUT]!(JSON.stringify({ answers: [{ probe_id: "k_probe_0", predicate, args: item.args.items.enum.slice(0, arity), holds: true }] }), request), predicate).toBeNull();
    }
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
    const bad = await runLlm("invalid", (body) => (selfOf(body) === "agent_1" && !isProbeCall(body) ? { content: '{"thought": "x", "action": "Fly[moon_1]"}' } : walker(body)));
    const ds = decisions(bad.records);
    const a1 = ds.filter((d) => d.agent === "agent_1");
    expect(a1.length).toBeGreaterThan(0);
    expect(a1.every((d) => d.why.startsWith(`scripted (fallback from llm:${MODEL}: invalid_output`))).toBe(true);
    expect(ds.filter((d) => d.agent === "agent_0").every((d) => d.why === `llm:${MODEL}`)).toBe(true);
    // The competent agent_1 opens the drawer on its first turn (it stands in the study).
    expect(a1[0]!.action).toBe("Open[drawer_21]");
    expect(bad.records.filter((r) => r.type === "llm.failed").length).toBe(a1.length);
    // Its transcript says the action was chosen for it.
    const a1Second = userOf(bad.bodies.filter((b) => !isProbeCall(b) && selfOf(b) === "agent_1").find((b) => userOf(b).includes("Turn 1:"))!);
    expect(a1Second).toContain("Turn 1:\nAction: Open[drawer_21] (chosen for you: your answer could not be used)");
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
    expect(server.requests - before).toBe(42);
    expect(run.stdout).toContain(`llm agent (${MODEL}): turns decided by the model: agent_0 20/20, agent_1 20/20; 0 fell back to the competent policy`);
    expect(run.stdout).toContain("literal probes: 2 model call(s); 2 of 2 answers from the model, 0 fell back to the knowledge base");
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

  it("`run household --history n` puts the transcript length into the config; out of range or twice is a usage error", async () => {
    const root = tempDir("household-llm-history");
    const before = server.requests;
    const run = await cli(["run", "household", "--seed", "1", "--task", "tea-for-two", "--condition", "llm", "--history", "3", "--log", join(root, "h3"), "--trace", "none", "--llm", server.url, "--model", `agent=${MODEL}`]);
    expect(run.code, run.stderr).toBe(0);
    expect((logRecords(join(root, "h3"))[0]!.payload as { config: { history?: number } }).config.history).toBe(3);
    const last = server.bodies.slice(before).filter((b) => !isProbeCall(b) && selfOf(b) === "agent_0").at(-1)!;
    expect(userOf(last).match(/^Turn \d+:$/gm)).toEqual(["Turn 17:", "Turn 18:", "Turn 19:"]);
    const tooMany = await cli(["run", "household", "--seed", "1", "--condition", "llm", "--history", "101", "--log", join(root, "x"), "--trace", "none"]);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toMatch(/--history/);
    const twice = await cli(["run", "household", "--seed", "1", "--condition", "llm", "--history", "2", "--config", '{"history": 4}', "--log", join(root, "y"), "--trace", "none"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/--history 2: the --config sets history too/);
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
    // Every turn one valid answer and every probe call too: none failed, no fallback.
    const summary = JSON.parse(r.stdout) as { rows?: unknown; llm: { turns: number; turnFallbacks: number; probeCalls: number; probeAnswers: number; probeFallbacks: number } };
    const { turns, probeCalls, probeAnswers } = summary.llm;
    expect(turns + probeCalls).toBe(calls);
    expect(probeCalls).toBeGreaterThan(0);
    expect(probeAnswers).toBeGreaterThanOrEqual(probeCalls);
    expect(summary.llm).toMatchObject({ turnFallbacks: 0, probeFallbacks: 0 });
    expect(r.stderr).toContain(`eval enacttom: llm agent (${MODEL}): ${calls} model calls (${probeCalls} for the literal probes), 0 failed; 0 of ${turns} turns fell back to the competent policy; 0 of ${probeAnswers} probe answers fell back to the knowledge base`);
    expect(readdirSync(join(out, "llm")).length).toBe(6);
    expect(JSON.stringify(summary)).toContain('"llm"');
    const none = await cli(["eval", "enacttom", "--agents", "llm", "--runs", "1", "--per-cell", "1", "--out", join(out, "x")]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--agents llm: the LLM agent needs a model/);
  });
});
