// The LLM Judge (paper §4.2): each step, while budget remains, the belief table and EnvProbe-Simple's
// top candidates go to a model (role `judge`, through the gateway, logged as llm.requested /
// llm.completed); its answer decides probe or act. A failed or unusable answer leaves Simple's own
// decision (logged in `why`). Replay and verify need only the log.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JUDGE_OUTPUT, ENVPROBE_LLM_OUTPUTS, parseJudgeDecision } from "../actors/envprobe/llm.ts";
import type { EnvprobeDecidedPayload } from "../actors/envprobe/events.ts";
import type { LlmRequestedPayload } from "../events/llm.ts";
import type { LogRecord } from "../events/record.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { makeLlmGateway, type LlmConfig } from "../services/llm/index.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { fakeServer, type ChatBody, type Reply } from "./fakeLlmServer.ts";
import { logRecords, tempDir } from "./helpers.ts";

const MODEL = "judge-test";
const cfg = { world: "graphnav", regime: "medium", horizon: 8, llm: { judge: MODEL } };
const ofType = <T>(records: readonly LogRecord[], type: string) => records.filter((r) => r.type === type) as unknown as Array<LogRecord & { payload: T }>;
const userOf = (b: ChatBody) => b.messages.find((m) => m.role === "user")!.content;

async function runJudge(label: string, reply: (body: ChatBody, n: number) => Reply) {
  const server = await fakeServer(reply);
  try {
    const config: LlmConfig = { baseURL: server.url, apiKey: null, models: { judge: MODEL }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 1 };
    const gateway = makeLlmGateway(config);
    const dir = join(tempDir(`envprobe-judge-${label}`), "ep");
    await runEpisode({ world: "envprobe", seed: 2, condition: "envprobe-judge", config: cfg, dir, trace: { exporter: "none" }, llm: gateway.responder });
    return { dir, records: logRecords(dir), bodies: [...server.bodies] };
  } finally {
    await server.close();
  }
}

describe("envprobe LLM Judge", () => {
  it("parses a decision: act, or a probe of one of the candidates; anything else is an error naming the field", () => {
    const names = ["agent", "edge:n_0__n_1", "key:key_a"];
    expect(parseJudgeDecision('{"decision":"act"}', names, [1, 2])).toEqual({ ok: true, field: -1 });
    expect(parseJudgeDecision('{"decision":"probe","field":"key:key_a"}', names, [1, 2])).toEqual({ ok: true, field: 2 });
    expect(parseJudgeDecision('{"decision":"probe","field":"agent"}', names, [1, 2])).toMatchObject({ ok: false, error: expect.stringMatching(/one of the CANDIDATES/) });
    expect(parseJudgeDecision('{"decision":"maybe"}', names, [1])).toMatchObject({ ok: false, error: expect.stringMatching(/"probe" or "act"/) });
    expect(ENVPROBE_LLM_OUTPUTS[JUDGE_OUTPUT]).toBeDefined();
  });

  it("asks the model each step while budget remains; its answer decides the step; replay and verify need only the log", async () => {
    // A judge that always probes the first candidate it is shown.
    const run = await runJudge("probe-first", (body) => {
      const names = JSON.parse(/^CANDIDATES: (.*)$/m.exec(userOf(body))![1]!) as string[];
      return { content: JSON.stringify({ decision: "probe", field: names[0] }) };
    });
    const requested = ofType<LlmRequestedPayload>(run.records, "llm.requested");
    expect(requested.length).toBe(2); // budget ⌊8/4⌋ = 2: asked until it is spent
    expect(requested[0]!.payload).toMatchObject({ role: "judge", model: MODEL, params: { output: JUDGE_OUTPUT, temperature: 0 } });
    expect(userOf(run.bodies[0]!)).toMatch(/^TOP CANDIDATES \(field: rho = c \+ s \+ u \+ d\):/m);
    const decided = ofType<EnvprobeDecidedPayload>(run.records, "envprobe.decided");
    expect(decided.slice(0, 2).map((d) => [d.payload.kind, d.payload.why])).toEqual([["probe", "judge:llm"], ["probe", "judge:llm"]]);
    expect(decided.slice(2).every((d) => d.payload.kind === "act")).toBe(true);
    const report = await verifyEpisode(run.dir);
    expect(report.ok, report.text).toBe(true);
  });

  it("a judge that always says act never probes; a judge that cannot be reached leaves Simple's decision, logged", async () => {
    const act = await runJudge("act", () => ({ content: '{"decision":"act"}' }));
    expect(ofType<EnvprobeDecidedPayload>(act.records, "envprobe.decided").every((d) => d.payload.kind === "act")).toBe(true);
    // Asked on every step the episode ran (it ends early once solved): the budget is never spent.
    expect(ofType(act.records, "llm.requested").length).toBe(ofType(act.records, "envprobe.stepped").length);
    const down = await runJudge("http-500", () => ({ status: 500, content: "" }));
    const simple = runDirect({ config: { world: "graphnav", regime: "medium", horizon: 8 }, policy: "envprobe-simple", seed: 2 }).lines.map((l) => JSON.parse(l) as LogRecord);
    const kinds = (rs: readonly LogRecord[]) => ofType<EnvprobeDecidedPayload>(rs, "envprobe.decided").map((d) => `${d.payload.kind}:${d.payload.field}`);
    expect(kinds(down.records)).toEqual(kinds(simple));
    expect(ofType<EnvprobeDecidedPayload>(down.records, "envprobe.decided")[0]!.payload.why).toMatch(/judge failed/);
  });
});
