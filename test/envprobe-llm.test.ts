// The EnvProbe LLM agent (role `belief`) against the fake OpenAI-compatible server, through the real
// gateway and sequencer: well-formed JSON belief updates change the beliefs and their reported
// confidence drives the probing policy and the confident-wrong audit; malformed JSON gets one
// repair attempt, then the step falls back to the scripted update (recorded); a model naming a
// field that does not exist gets a validation error, not a crash; every step's beliefs name their
// backend; verify and replay reproduce the logs with zero HTTP requests; sweeps and `run` take --llm.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inputsOf, envprobeWorld } from "../actors/envprobe/world.ts";
import { parseBeliefUpdates, fieldNamesOfRequest, ENVPROBE_LLM_OUTPUTS } from "../actors/envprobe/llm.ts";
import { LEGACY_CALIBRATION, SOURCE } from "../actors/envprobe/config.ts";
import type { EnvprobeBelievedPayload, EnvprobeDecidedPayload, EnvprobeScoredPayload } from "../actors/envprobe/events.ts";
import type { LlmCompletedPayload, LlmFailedPayload, LlmRequestedPayload } from "../events/llm.ts";
import type { LogRecord } from "../events/record.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import { runSweep, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { makeLlmGateway, settingsWithoutKey, type LlmConfig } from "../services/llm/index.ts";
import { envprobeJobsOf, runEnvprobeChunk } from "../services/envprobe/natsSweep.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { fakeServer, type ChatBody, type Reply } from "./fakeLlmServer.ts";
import { logRecords, runCli, tempDir, withoutMetaLine } from "./helpers.ts";
import { natsForSuite } from "./natsServer.ts";

const MODEL = "fake-belief";
const gatewayConfig = (url: string): LlmConfig => ({ baseURL: url, apiKey: null, models: { belief: MODEL }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2 });

const userOf = (body: ChatBody) => body.messages.find((m) => m.role === "user")!.content;
const fieldsOf = (body: ChatBody): string[] => fieldNamesOfRequest({ messages: body.messages.map((m) => ({ role: m.role as "user", content: m.content })) })!;
const stepOf = (body: ChatBody): number => Number(/^STEP: (\d+) of/m.exec(userOf(body))![1]);
const updates = (...u: Array<[string, string, number, number]>) => JSON.stringify({ updates: u.map(([field, value, staleness, confidence]) => ({ field, value, staleness, confidence })) });

const ofType = <P>(records: readonly LogRecord[], type: string) => records.filter((r) => r.type === type) as LogRecord<P>[];

/** One EnvProbe episode on the LLM agent, the gateway answering its `belief` calls from `reply`. */
async function runLlm(label: string, cfg: Record<string, unknown>, policy: string, seed: number, reply: (body: ChatBody, n: number) => Reply) {
  const server = await fakeServer(reply);
  try {
    const gateway = makeLlmGateway(gatewayConfig(server.url));
    const dir = join(tempDir(`envprobe-llm-${label}`), "ep");
    await runEpisode({ world: "envprobe", seed, condition: policy, config: { ...cfg, llm: { belief: MODEL } }, dir, trace: { exporter: "none" }, llm: gateway.responder });
    return { dir, records: logRecords(dir), bodies: [...server.bodies], requests: server.requests, gateway };
  } finally {
    await server.close();
  }
}

/** verify and replay the log; no model is reachable (the server is closed), so any HTTP would fail. */
async function replays(dir: string, records: readonly LogRecord[]) {
  const report = await verifyEpisode(dir);
  expect(report.ok, report.text).toBe(true);
  const replay = await replayEpisode(dir);
  replay.host.stop();
  expect(replay.stateHash).toBe((records.filter((r) => r.type === "tick.committed").at(-1)!.payload as { stateHash: string }).stateHash);
}

describe("envprobe LLM agent: the belief answer's validation", () => {
  const names = ["agent", "loc:blue_key", "loc:map", "door:door_1", "door:door_2", "inventory"];

  it("accepts well-formed updates and normalises values", () => {
    const r = parseBeliefUpdates('```json\n{"updates": [{"field": "door:door_2", "value": "locked", "staleness": 2.7, "confidence": "0.456"}, {"field": "inventory", "value": "map, blue_key", "staleness": 0, "confidence": 1}]}\n```', names);
    expect(r).toEqual({ ok: true, updates: [{ field: 4, value: "locked", staleness: 2, confidence: 0.46 }, { field: 5, value: "blue_key,map", staleness: 0, confidence: 1 }] });
    const dag = ["var:v_0", "var:v_1", "var:v_2", "var:v_3", "done:t_0", "done:t_1", "done:t_2", "done:t_3", "dep:t_0", "dep:t_1", "dep:t_2", "dep:t_3"];
    expect(parseBeliefUpdates(updates(["dep:t_3", "v_2+v_0", 0, 0.5], ["var:v_1", "1", 0, 0.9]), dag)).toMatchObject({ ok: true, updates: [{ field: 11, value: "v_0+v_2" }, { field: 1, value: "1" }] });
    expect(parseBeliefUpdates('{"updates": []}', names)).toEqual({ ok: true, updates: [] });
  });

  it("a field that does not exist, a value outside the field's domain, a duplicate or a missing number is an error naming it", () => {
    const err = (content: string) => {
      const r = parseBeliefUpdates(content, names);
      expect(r.ok).toBe(false);
      return (r as { error: string }).error;
    };
    expect(err(updates(["door:door_99", "open", 0, 0.9]))).toMatch(/updates\[0\]\.field: unknown field 'door:door_99'/);
    expect(err(updates(["agent", "room_1", 0, 0.9], ["weather", "rain", 0, 0.9]))).toMatch(/updates\[1\]\.field: unknown field 'weather'/);
    expect(err(updates(["door:door_1", "closed", 0, 0.9]))).toMatch(/door:door_1.*'closed' is not allowed; expected "open", "locked"/);
    expect(err(updates(["agent", "room_7", 0, 0.9]))).toMatch(/expected room_0 … room_2/);
    expect(err(updates(["inventory", "lantern", 0, 0.9]))).toMatch(/inventory/);
    expect(err(updates(["agent", "room_1", 0, 0.9], ["agent", "room_2", 0, 0.9]))).toMatch(/'agent' is updated twice/);
    expect(err('{"updates": [{"field": "agent", "value": "room_1", "confidence": 0.5}]}')).toMatch(/staleness.*integer ≥ 0/);
    expect(err(updates(["agent", "room_1", 0, 1.5]))).toMatch(/confidence.*\[0, 1\]/);
    expect(err("I think the door is open")).toMatch(/not valid JSON/);
    expect(err('{"beliefs": []}')).toMatch(/'updates' must be a list/);
    // The gateway's validator reads the field names from the request itself.
    const request = { messages: [{ role: "user" as const, content: `STEP: 1 of 4\nFIELDS: ${JSON.stringify(names)}` }] };
    expect(ENVPROBE_LLM_OUTPUTS["envprobe-beliefs"]!(updates(["door:door_99", "open", 0, 0.9]), request)).toMatch(/unknown field 'door:door_99'/);
    expect(ENVPROBE_LLM_OUTPUTS["envprobe-beliefs"]!(updates(["door:door_2", "open", 0, 0.9]), request)).toBeNull();
  });
});

describe("envprobe LLM agent against a fake OpenAI-compatible server", () => {
  // ToolDAG at low stress, 4 steps, with the guessed priors and the legacy calibration (options, not
  // the paper's defaults): every tool schema is a prior guess (confidence 0.75), so the scripted
  // Self-Uncertainty agent never probes — unless the model reports a low confidence.
  const cfg = { world: "tooldag", regime: "low", horizon: 4, initialBeliefs: "guess", calibration: LEGACY_CALIBRATION };
  const seed = 3;
  const spec = inputsOf(envprobeWorld.applyCondition(envprobeWorld.resolveConfig(cfg), "self-uncertainty"), seed).env.spec;
  const layout = spec.layout;
  // The last tool's schema (the target's): its true value and a wrong one.
  const depName = `dep:t_${layout.size - 1}`;
  const dep = layout.fields.findIndex((f) => f.name === depName);
  const truth = spec.initial[dep]!;
  const wrongValue = truth === "-" ? "v_0" : "-";
  const runs: Array<{ label: string; dir: string; records: LogRecord[] }> = [];

  /**
   * A model that, at step 1 only, states the target tool's schema with the given value and
   * confidence, not confirmed for 2 steps (staleness 0 would make it a fresh fact, not a candidate).
   */
  const statesSchema = (value: string, confidence: number) => (body: ChatBody): Reply => {
    expect(fieldsOf(body)).toContain(depName);
    return { content: stepOf(body) === 1 ? updates([depName, value, 2, confidence]) : updates() };
  };

  it("well-formed updates change the beliefs; the model's confidence drives Self-Uncertainty and the log says which backend produced each step", async () => {
    const scripted = runDirect({ config: cfg, policy: "self-uncertainty", seed });
    const scriptedRecords = scripted.lines.map((l) => JSON.parse(l) as LogRecord);
    expect(scriptedRecords.some((r) => r.type === "envprobe.decided" && (r.payload as EnvprobeDecidedPayload).kind === "probe")).toBe(false);
    const scriptedWrong1 = ofType<EnvprobeScoredPayload>(scriptedRecords, "envprobe.scored")[0]!.payload.wrong;
    expect(truth).not.toBe("v_" + (layout.size - 2)); // the scripted prior (a chain) is wrong here …
    expect(scriptedWrong1).toContain(dep); // … and stays wrong after step 1

    const run = await runLlm("ok", cfg, "self-uncertainty", seed, statesSchema(truth, 0.3));
    runs.push({ label: "ok", ...run });
    const { records, bodies } = run;
    const steps = ofType(records, "envprobe.stepped").length;
    expect(steps).toBe(4);
    // One `belief` call per step, through the gateway, in JSON mode.
    const requested = ofType<LlmRequestedPayload>(records, "llm.requested");
    expect(requested).toHaveLength(steps);
    expect(requested[0]!.from).toBe("agent/envprobe");
    expect(requested[0]!.payload).toMatchObject({ role: "belief", model: MODEL, params: { json: true, output: "envprobe-beliefs", temperature: 0 } });
    expect(bodies).toHaveLength(steps);
    expect(bodies[0]!.response_format).toEqual({ type: "json_object" });
    expect(userOf(bodies[0]!)).toMatch(/^WORLD: tooldag\nTASK: Make variable v_4 available/);
    expect(userOf(bodies[0]!)).toMatch(new RegExp(`^${depName}: v_${layout.size - 2} · \\d+ · 0\\.7\\d$`, "m"));
    const completed = ofType<LlmCompletedPayload>(records, "llm.completed");
    expect(completed).toHaveLength(steps);
    for (const c of completed) expect(c.to).toBe("agent/envprobe");
    // Every step's beliefs say which backend produced them.
    const believed = ofType<EnvprobeBelievedPayload>(records, "envprobe.believed");
    expect(believed.map((b) => b.payload.backend)).toEqual(Array(steps).fill(`llm:${MODEL}`));
    // Step 1: the model's value is the belief (source model), with its staleness and confidence.
    expect(believed[0]!.payload.set).toContainEqual([dep, truth, -1, SOURCE.model]);
    expect(believed[0]!.payload.reports).toEqual([[dep, 2, 0.3]]);
    const scored = ofType<EnvprobeScoredPayload>(records, "envprobe.scored");
    expect(scored[0]!.payload.wrong).not.toContain(dep);
    // Step 2: confidence 0.3 < α = 0.5, so Self-Uncertainty probes that field (the scripted agent never probes).
    const decided = ofType<EnvprobeDecidedPayload>(records, "envprobe.decided");
    expect(decided[1]!.payload).toMatchObject({ kind: "probe", field: dep, why: "conf=0.3" });
    // The probe answer is written back (b ← g) and its report is the calibrated one again.
    expect(believed[1]!.payload.set).toContainEqual([dep, truth, 2, SOURCE.probed]);
    expect(bodies[1]!.messages[1]!.content).toMatch(new RegExp(`^${depName}: ${truth.replace("+", "\\+")} · 0 · 0\\.98$`, "m"));
    expect(bodies[1]!.messages[1]!.content).toMatch(/^LAST STEP: probe inspect_tool_schema\(t_4\): dep:t_4 = \S+ \(written back\) · produces = v_4$/m);
  });

  it("the model's reported confidence is what the confident-wrong audit counts", async () => {
    const sure = await runLlm("sure", cfg, "no-probe", seed, statesSchema(wrongValue, 0.95));
    const unsure = await runLlm("unsure", cfg, "no-probe", seed, statesSchema(wrongValue, 0.3));
    runs.push({ label: "sure", ...sure }, { label: "unsure", ...unsure });
    const first = (records: LogRecord[]) => ofType<EnvprobeScoredPayload>(records, "envprobe.scored")[0]!.payload;
    const a = first(sure.records);
    const b = first(unsure.records);
    expect(a.wrong).toContain(dep);
    expect(b.wrong).toEqual(a.wrong);
    expect(a.hc).toBe(b.hc + 1);
    expect(a.cw).toBe(b.cw + 1);
  });

  it("malformed JSON: one repair attempt, then a recorded fallback to the scripted update — the run equals the scripted agent's", async () => {
    const run = await runLlm("malformed", { world: "objectstate", regime: "medium", horizon: 6 }, "envprobe-simple", 2, () => ({ content: "Beliefs: the door is {probably} open" }));
    runs.push({ label: "malformed", ...run });
    const { records, bodies } = run;
    const steps = ofType(records, "envprobe.stepped").length;
    expect(steps).toBe(6);
    expect(bodies).toHaveLength(2 * steps);
    // The repair attempt sends the reply and the error back.
    expect(bodies[1]!.messages.at(-2)).toEqual({ role: "assistant", content: "Beliefs: the door is {probably} open" });
    expect(bodies[1]!.messages.at(-1)!.content).toMatch(/could not be used: not valid JSON/);
    const failed = ofType<LlmFailedPayload>(records, "llm.failed");
    expect(failed).toHaveLength(steps);
    for (const f of failed) expect(f.payload).toMatchObject({ error: "invalid_output", attempts: 2, content: "Beliefs: the door is {probably} open" });
    const believed = ofType<EnvprobeBelievedPayload>(records, "envprobe.believed");
    expect(believed.map((b) => b.payload.backend)).toEqual(Array(steps).fill(`scripted (fallback from llm:${MODEL}: invalid_output)`));
    for (const b of believed) expect(b.payload.reports).toEqual([]);
    // The fallback is the scripted agent's own update: decisions, beliefs and scores are the scripted run's.
    const scripted = runDirect({ config: { world: "objectstate", regime: "medium", horizon: 6 }, policy: "envprobe-simple", seed: 2 }).lines.map((l) => JSON.parse(l) as LogRecord);
    const envprobe = (rs: readonly LogRecord[]) =>
      rs.filter((r) => r.type.startsWith("envprobe.")).map((r) => (r.type === "envprobe.believed" ? { type: r.type, set: (r.payload as EnvprobeBelievedPayload).set } : { type: r.type, payload: r.payload }));
    expect(envprobe(records)).toEqual(envprobe(scripted));
  });

  it("a model naming a field that does not exist gets a validation error (repair, then fallback), not a crash; a good repair is used", async () => {
    const run = await runLlm("unknown-field", { world: "graphnav", regime: "low", horizon: 4 }, "envprobe-simple", 1, (body) => {
      // Odd steps: always the invented field. Even steps: the invented field, then a valid repair.
      const repairing = body.messages.length > 2;
      if (stepOf(body) % 2 === 0 && repairing) return { content: updates(["agent", "n_0", 1, 0.6]) };
      return { content: updates(["door:door_99", "open", 0, 0.9]) };
    });
    runs.push({ label: "unknown-field", ...run });
    const { records, bodies } = run;
    expect(ofType(records, "envprobe.stepped")).toHaveLength(4);
    expect(bodies[1]!.messages.at(-1)!.content).toMatch(/unknown field 'door:door_99'/);
    const failed = ofType<LlmFailedPayload>(records, "llm.failed");
    expect(failed).toHaveLength(2);
    for (const f of failed) expect(f.payload).toMatchObject({ error: "invalid_output", attempts: 2 });
    expect(failed[0]!.payload.message).toMatch(/unknown field 'door:door_99'/);
    const completed = ofType<LlmCompletedPayload>(records, "llm.completed");
    expect(completed).toHaveLength(2);
    for (const c of completed) expect(c.payload).toMatchObject({ repaired: true, attempts: 2 });
    const believed = ofType<EnvprobeBelievedPayload>(records, "envprobe.believed");
    expect(believed.map((b) => b.payload.backend)).toEqual([`scripted (fallback from llm:${MODEL}: invalid_output)`, `llm:${MODEL}`, `scripted (fallback from llm:${MODEL}: invalid_output)`, `llm:${MODEL}`]);
    expect(believed[1]!.payload.reports).toEqual([[0, 1, 0.6]]);
  });

  it("no endpoint (config llm.belief, no gateway): every call fails with no_backend and every step is the scripted update, logged", async () => {
    const c = { world: "graphnav", regime: "medium", horizon: 5 };
    const dir = join(tempDir("envprobe-llm-nobackend"), "ep");
    await runEpisode({ world: "envprobe", seed: 4, condition: "periodic", config: { ...c, llm: { belief: MODEL } }, dir, trace: { exporter: "none" } });
    const records = logRecords(dir);
    runs.push({ label: "no-backend", dir, records });
    const failed = ofType<LlmFailedPayload>(records, "llm.failed");
    expect(failed).toHaveLength(5);
    for (const f of failed) expect(f.payload).toMatchObject({ error: "no_backend", attempts: 0 });
    const believed = ofType<EnvprobeBelievedPayload>(records, "envprobe.believed");
    expect(believed.map((b) => b.payload.backend)).toEqual(Array(5).fill(`scripted (fallback from llm:${MODEL}: no_backend)`));
    const scripted = runDirect({ config: c, policy: "periodic", seed: 4 }).lines.map((l) => JSON.parse(l) as LogRecord);
    const scores = (rs: readonly LogRecord[]) => ofType<EnvprobeScoredPayload>(rs, "envprobe.scored").map((r) => r.payload);
    expect(scores(records)).toEqual(scores(scripted));
  });

  it("verify and replay reproduce every LLM log from the log alone (zero HTTP: the servers are closed)", async () => {
    expect(runs.map((r) => r.label)).toEqual(["ok", "sure", "unsure", "malformed", "unknown-field", "no-backend"]);
    for (const { dir, records } of runs) await replays(dir, records);
  });
});

describe("envprobe LLM agent from the sweep and the CLI", () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  /** A plausible model: copies what the step observed (staleness 0, confidence 0.9). */
  const observer = (body: ChatBody): Reply => {
    const fields = fieldsOf(body);
    const line = /^OBSERVATION: (.*)$/m.exec(userOf(body))![1]!.split(" · ")[0]!;
    const pairs = line === "(nothing)" ? [] : line.split("; ").map((p) => p.split(" = ") as [string, string]);
    return { content: updates(...pairs.filter(([f]) => fields.includes(f)).map(([f, v]): [string, string, number, number] => [f, v, 0, 0.9])) };
  };
  beforeAll(async () => {
    server = await fakeServer(observer);
  });
  afterAll(async () => {
    await server.close();
  });

  it("sweep: an LLM agent's grid runs through runEpisode with one gateway; its logs verify with zero HTTP", async () => {
    const log = join(tempDir("envprobe-llm-sweep"), "grid");
    const spec = sweepSpecOf({ worlds: "objectstate,graphnav", regimes: "low", policies: "no-probe,envprobe-simple", seeds: "0-1", horizon: 3, log, config: { llm: { belief: MODEL } }, workers: 2 });
    const gateway = makeLlmGateway(gatewayConfig(server.url));
    const before = server.requests;
    const result = await runSweep(spec, undefined, gateway.responder);
    expect(result.episodes).toHaveLength(8);
    expect(result.cells).toHaveLength(4);
    const dirs = ["objectstate-low/no-probe/s0", "objectstate-low/envprobe-simple/s1", "graphnav-low/envprobe-simple/s0", "graphnav-low/no-probe/s1"].map((d) => join(log, d));
    for (const dir of dirs) {
      expect(existsSync(join(dir, "log"))).toBe(true);
      const records = logRecords(dir);
      const believed = ofType<EnvprobeBelievedPayload>(records, "envprobe.believed");
      expect(believed.length).toBeGreaterThan(0);
      for (const b of believed) expect(b.payload.backend).toBe(`llm:${MODEL}`);
      // The model copied the observed agent position, so it is a model-sourced belief.
      expect(believed[0]!.payload.set.some(([i, , , source]) => i === 0 && source === SOURCE.model)).toBe(true);
    }
    const calls = gateway.accounting().total;
    expect(calls.calls).toBe(server.requests - before);
    expect(calls.failed).toBe(0);
    const after = server.requests;
    for (const dir of dirs) await replays(dir, logRecords(dir));
    expect(server.requests).toBe(after);
  });

  it("runDirect refuses an LLM config (it has no gateway)", () => {
    expect(() => runDirect({ config: { world: "tooldag", llm: { belief: MODEL } }, policy: "no-probe", seed: 1 })).toThrow(/runs through runEpisode/);
  });

  /** The CLI, in this process (the fake server lives here too), with no key from the environment. */
  const cli = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const r = await runCli(args, undefined, { PROBETOWN_LLM_API_KEY: "", OPENAI_API_KEY: "", ...env });
    return { code: r.code, stdout: r.out, stderr: r.err };
  };

  it("`run envprobe --llm … --model …` and `sweep envprobe --llm …` use the LLM agent; without --llm the scripted agent", async () => {
    const work = tempDir("envprobe-llm-cli");
    writeFileSync(join(work, "cfg.json"), JSON.stringify({ world: "graphnav", regime: "low", horizon: 3 }));
    const before = server.requests;
    const run = await cli(["run", "envprobe", "--seed", "2", "--condition", "envprobe-simple", "--config", join(work, "cfg.json"), "--log", join(work, "run"), "--trace", "none", "--llm", server.url, "--model", `belief=${MODEL}`]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`run: backends: LLM at .* \\(belief=${MODEL}; key none\\)`));
    expect(run.stdout).toMatch(new RegExp(`beliefs: llm:${MODEL} on 3 steps`));
    expect(server.requests - before).toBe(3);
    const header = logRecords(join(work, "run"))[0]!.payload as { config: { llm?: unknown } };
    expect(header.config.llm).toEqual({ belief: MODEL });
    const sweep = await cli(["sweep", "envprobe", "--worlds", "tooldag", "--regimes", "low", "--policies", "periodic", "--seeds", "0-1", "--horizon", "2", "--llm", server.url, "--model", MODEL, "--json"]);
    expect(sweep.code, sweep.stderr).toBe(0);
    const summary = JSON.parse(sweep.stdout) as { episodes: number; agent: string; llm: { calls: number; failed: number } };
    expect(summary).toMatchObject({ episodes: 2, agent: `llm:${MODEL}`, llm: { calls: 4, failed: 0 } });
    // No endpoint asked for: the scripted agent, no model calls, no backend in the log.
    const plain = await cli(["run", "envprobe", "--seed", "2", "--condition", "envprobe-simple", "--config", join(work, "cfg.json"), "--log", join(work, "plain"), "--trace", "none"]);
    expect(plain.code, plain.stderr).toBe(0);
    const records = logRecords(join(work, "plain"));
    expect(records.some((r) => r.type.startsWith("llm."))).toBe(false);
    expect(ofType<EnvprobeBelievedPayload>(records, "envprobe.believed").every((b) => b.payload.backend === undefined)).toBe(true);
    const bad = await cli(["sweep", "auratown", "--seeds", "1", "--llm", server.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/sweep auratown` has no LLM roles/);
    // --help says what --workers means for an LLM grid (it spoke only of worker threads, 0 = every core).
    const help = await cli(["sweep", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain("or with an LLM agent episodes at a time (0: 4;");
  });

  /** An interrupted grid of three seeds: s1 stopped after its second step's answer, s2 never started. */
  const interruptSeeds = (dirs: readonly string[]) => {
    const segment = join(dirs[1]!, "log", readdirSync(join(dirs[1]!, "log"))[0]!);
    const lines = readFileSync(segment, "utf8").split("\n");
    const cut = lines.findIndex((l, i) => i > lines.findIndex((x) => x.includes('"llm.completed"')) && l.includes('"llm.completed"'));
    writeFileSync(segment, lines.slice(0, cut + 1).join("\n") + "\n");
    rmSync(dirs[2]!, { recursive: true });
  };

  it("a redelivered LLM chunk resumes the logs its first run left: only the missing answers are asked for, and metrics and records end as an uninterrupted run's", async () => {
    const log = join(tempDir("envprobe-llm-chunk"), "grid");
    const spec = sweepSpecOf({ worlds: "graphnav", regimes: "low", policies: "envprobe-simple", seeds: "0-2", horizon: 4, log, config: { llm: { belief: MODEL } } });
    const [job] = envprobeJobsOf(spec, 64, settingsWithoutKey(gatewayConfig(server.url)));
    const before = server.requests;
    const first = await runEnvprobeChunk(job!);
    expect(server.requests - before).toBe(12);
    expect(first.llm).toMatchObject({ calls: 12, failed: 0 });
    const dirs = [0, 1, 2].map((seed) => join(log, `graphnav-low/envprobe-simple/s${seed}`));
    const records = dirs.map((d) => logRecords(d).map(withoutMetaLine));
    // A worker killed mid-chunk.
    interruptSeeds(dirs);
    const again = await runEnvprobeChunk(job!);
    expect(server.requests - before).toBe(12 + 2 + 4);
    expect(again.episodes).toEqual(first.episodes);
    expect(dirs.map((d) => logRecords(d).map(withoutMetaLine))).toEqual(records);
  });

  it("an interrupted LLM grid run again into its --log resumes it (only the missing answers are asked for; cells and records end as an uninterrupted run's); another grid into that --log is refused", async () => {
    const work = tempDir("envprobe-llm-resume");
    const log = join(work, "grid");
    const args = ["sweep", "envprobe", "--worlds", "graphnav", "--regimes", "low", "--policies", "envprobe-simple", "--seeds", "0-2", "--horizon", "4", "--llm", server.url, "--model", MODEL, "--log", log, "--json"];
    const before = server.requests;
    const first = await cli(args);
    expect(first.code, first.stderr).toBe(0);
    expect(server.requests - before).toBe(12);
    const dirs = [0, 1, 2].map((seed) => join(log, `graphnav-low/envprobe-simple/s${seed}`));
    const records = dirs.map((d) => logRecords(d).map(withoutMetaLine));
    interruptSeeds(dirs);
    const again = await cli(args);
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests - before).toBe(12 + 2 + 4);
    const cellsOf = (out: string) => (JSON.parse(out) as { cells: unknown }).cells;
    expect(cellsOf(again.stdout)).toEqual(cellsOf(first.stdout));
    expect((JSON.parse(again.stdout) as { llm: { calls: number } }).llm.calls).toBe(6);
    // Seed 0 had finished: its log is kept (nothing appended), the other two resumed or run.
    expect(JSON.parse(again.stdout)).toMatchObject({ episodes: 3, kept: 1, ran: 2 });
    expect(dirs.map((d) => logRecords(d).map(withoutMetaLine))).toEqual(records);
    const other = await cli(args.map((a) => (a === "0-2" ? "0-3" : a)));
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--log .*grid: holds another sweep's logs \(its spec is in \.envprobe-sweep\.json\), which differs from this one in --seeds \(0-3 here, 0-2 there\)/);
  });

  const nats = natsForSuite();

  it("sweep envprobe --nats with an LLM agent: workers call the model with their own key (the jobs carry none); cells and logs equal the in-process grid's", async () => {
    const work = tempDir("envprobe-llm-nats");
    const ns = nats.nats.namespace("llm");
    const grid = ["sweep", "envprobe", "--worlds", "graphnav", "--regimes", "low", "--policies", "no-probe,envprobe-simple", "--seeds", "0-2", "--horizon", "3", "--llm", server.url, "--model", `belief=${MODEL}`, "--json"];
    const here = await cli([...grid, "--log", join(work, "here")]);
    expect(here.code, here.stderr).toBe(0);
    const worker = spawn(process.execPath, [join(import.meta.dirname, "..", "services/cli/main.ts"), "worker", "--nats", nats.nats.url, "--namespace", ns, "-q"], { env: { ...process.env, PROBETOWN_LLM_API_KEY: "sk-worker-KEY", OPENAI_API_KEY: "" } });
    const from = server.authorization.length;
    const before = server.requests;
    try {
      const queued = await cli([...grid, "--log", join(work, "queued"), "--nats", nats.nats.url, "--namespace", ns, "--chunk", "2"], { PROBETOWN_LLM_API_KEY: "sk-submitter-KEY" });
      expect(queued.code, queued.stderr).toBe(0);
      type Summary = { episodes: number; cells: unknown[]; agent: string; llm: { calls: number; failed: number }; nats?: { jobs: number } };
      const [a, b] = [JSON.parse(here.stdout) as Summary, JSON.parse(queued.stdout) as Summary];
      expect(b).toMatchObject({ episodes: 6, agent: `llm:${MODEL}`, nats: { jobs: 4 } });
      expect(b.cells).toEqual(a.cells);
      expect(b.llm).toEqual(a.llm);
      expect(b.llm.calls).toBe(18);
      expect(server.requests - before).toBe(18);
      expect(new Set(server.authorization.slice(from))).toEqual(new Set(["Bearer sk-worker-KEY"]));
    } finally {
      worker.kill("SIGTERM");
    }
    for (const episode of ["graphnav-low/no-probe/s0", "graphnav-low/envprobe-simple/s2"]) {
      expect(logRecords(join(work, "queued", episode)).map(withoutMetaLine)).toEqual(logRecords(join(work, "here", episode)).map(withoutMetaLine));
    }
    const verified = await cli(["verify", join(work, "queued"), "--json"]);
    expect(verified.code, verified.stdout).toBe(0);
  });

  it("sweep envprobe --nats: jobs whose calls all met HTTP 500 while another job's calls were answered are chance, not an endpoint that never serves: exit 0", async () => {
    // The first job's calls answered, then 500 for every call (as a server that fell over mid-sweep).
    const failing = await fakeServer((body, n) => (n <= 6 ? observer(body) : { status: 500 }));
    const work = tempDir("envprobe-llm-nats-500");
    const ns = nats.nats.namespace("llm500");
    writeFileSync(join(work, "llm.json"), JSON.stringify({ maxAttempts: 1 }));
    const worker = spawn(process.execPath, [join(import.meta.dirname, "..", "services/cli/main.ts"), "worker", "--nats", nats.nats.url, "--namespace", ns, "-q"], { env: { ...process.env, PROBETOWN_LLM_API_KEY: "", OPENAI_API_KEY: "" } });
    try {
      const queued = await cli(["sweep", "envprobe", "--worlds", "graphnav", "--regimes", "low", "--policies", "no-probe,envprobe-simple", "--seeds", "0-2", "--horizon", "3", "--llm", failing.url, "--model", `belief=${MODEL}`, "--llm-config", join(work, "llm.json"), "--json", "--log", join(work, "queued"), "--nats", nats.nats.url, "--namespace", ns, "--chunk", "2"]);
      expect(queued.code, queued.stderr).toBe(0);
      expect(JSON.parse(queued.stdout)).toMatchObject({ llm: { calls: 18, failed: 12 } });
      expect(queued.stderr).not.toContain("finished, but");
    } finally {
      worker.kill("SIGTERM");
      await failing.close();
    }
  });
});
