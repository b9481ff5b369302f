// The LLM gateway against a fake OpenAI-compatible server (node:http on 127.0.0.1, random port)
// through the real `openai` client: well-formed answers, malformed JSON (repair, then the
// deterministic fallback), 429 then success, a timeout, a planner that invents tools. Each case
// runs as an aura-scene episode and is checked in its log. Then every aura-scene condition runs
// end to end on LLM backends, and verifying and replaying those logs makes zero HTTP requests.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auraSceneWorld, FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS } from "../actors/aura/world.ts";
import type { LogRecord } from "../events/record.ts";
import type { LlmCompletedPayload, LlmFailedPayload, LlmRequestedPayload } from "../events/llm.ts";
import type { AnswerGivenPayload, IntentInferredPayload, ProbeDeniedPayload } from "../actors/aura/events.ts";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { LlmCache, RecordedEndpointProblems } from "../services/llm/index.ts";
import { llmRequest } from "../events/llm.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { makeLlmGateway, resolveLlmConfig, usageFromRecords, type LlmConfig, type LlmWaiting } from "../services/llm/index.ts";
import { waitingLine } from "../services/cli/llm.ts";
import { runPrivacyEval } from "../services/aura/eval.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";
import { fakeServer, type ChatBody, type Reply } from "./fakeLlmServer.ts";
import { natsForSuite } from "./natsServer.ts";
import { readJetStreamLog } from "../infra/jetStreamEventStore.ts";
import { jetstream } from "@nats-io/jetstream";

const FRAME = { literal_need: "where Ben is", implicit_need: ["whether Ben can be approached"], gap: 0.55, recommended_probes: ["get_agent_private_state", "invented_tool"], should_alert: true, confidence: 0.66, rationale: "fake" };

const SECRET = "sk-test-SECRETKEY123456789";

const config = (url: string, models: Partial<Record<"intent" | "planner" | "answer", string | null>>, extra: Partial<LlmConfig> = {}): LlmConfig => ({
  baseURL: url, apiKey: SECRET, models, backoffMs: 5, timeoutMs: 2000, maxAttempts: 3, prices: { "fake-intent": { input: 0.15, output: 0.6 } }, ...extra,
});

const sceneModels = (c: LlmConfig) => ({ intent: c.models.intent ?? null, planner: c.models.planner ?? null, answer: c.models.answer ?? null });

/** One aura-scene episode (the demo scene) with the gateway answering its model calls. */
async function runScene(label: string, condition: string, c: LlmConfig, extra: Record<string, unknown> = {}) {
  const gateway = makeLlmGateway(c);
  const dir = join(tempDir(`llm-${label}`), "ep");
  await runEpisode({ world: "aura-scene", seed: 42, condition, dir, trace: { exporter: "none" }, config: { llm: sceneModels(c), ...extra }, llm: gateway.responder });
  return { dir, records: logRecords(dir), gateway };
}

const ofType = <P>(records: readonly LogRecord[], type: string) => records.filter((r) => r.type === type) as LogRecord<P>[];

// Fake clocks over real HTTP: only setTimeout/clearTimeout (and for the waiting notice
// performance) are faked, so the gateway's backoff, the openai client's timeout, the fake server's
// reply delay and the notice's timer wait for the test to move the clock, while sockets and
// setImmediate stay real. Nothing below waits on a clock of the machine: `until` waits for real I/O
// to have happened, whatever it takes.
/** Lets real I/O, promise jobs and the effect runtime's scheduled tasks run a while. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};
/** Waits for real I/O until `done()` holds. */
const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise<void>((resolve) => setImmediate(resolve));
};
/** Moves the fake clock on 1 ms at a time, letting real I/O run in between, until `done()`; the fake ms it took. */
const stepUntil = async (done: () => boolean): Promise<number> => {
  let ms = 0;
  while (!done()) {
    vi.advanceTimersByTime(1);
    ms++;
    await settle();
  }
  return ms;
};
/** Whether a promise has settled yet. */
const watch = <T>(p: Promise<T>) => {
  const box = { done: false };
  void p.then(
    () => (box.done = true),
    () => (box.done = true),
  );
  return box;
};

describe("LLM gateway against a fake OpenAI-compatible server", () => {
  it("well-formed JSON: the frame comes from the model, the log says so, usage and cost are counted", async () => {
    const server = await fakeServer(() => ({ content: JSON.stringify(FRAME) }));
    try {
      const { records, gateway, dir } = await runScene("ok", "aura-intent", config(server.url, { intent: "fake-intent" }));
      const requested = ofType<LlmRequestedPayload>(records, "llm.requested");
      expect(requested).toHaveLength(1);
      expect(requested[0]!.payload).toMatchObject({ role: "intent", model: "fake-intent", queryId: "1", params: { json: true, output: "intent-frame", temperature: 0.1, maxTokens: 512 } });
      expect(requested[0]!.to).toBe("llm/gateway");
      const completed = ofType<LlmCompletedPayload>(records, "llm.completed");
      expect(completed).toHaveLength(1);
      expect(completed[0]!.cause).toBe(requested[0]!.seq);
      expect(completed[0]!.to).toBe("probe/aura");
      expect(completed[0]!.payload).toMatchObject({ attempts: 1, backend: "openai-compatible", model: "fake-intent-served", usage: { promptTokens: 100, completionTokens: 20 }, costUsd: 0.000027 });
      const inferred = ofType<IntentInferredPayload>(records, "intent.inferred")[0]!.payload;
      expect(inferred.backend).toBe("llm:fake-intent");
      // The model's frame, with its invented probe name whitelisted away.
      expect(inferred.frame.gap).toBe(0.55);
      expect(inferred.frame.recommended_probes).toEqual(["get_agent_private_state"]);
      expect(inferred.maxSteps).toBe(2);
      expect(ofType(records, "probe.answered").length).toBeGreaterThan(0);
      // The prompt: system with the rubric and few-shot examples; JSON mode asked of the server.
      expect(server.bodies[0]!.messages[0]!.content).toMatch(/Gap rubric/);
      expect(server.bodies[0]!.messages[0]!.content).toMatch(/Does Aiko think Tomas/);
      expect(server.bodies[0]!.messages[1]!.content).toMatch(/^USER QUERY: Is Ben around\?/);
      expect(server.bodies[0]!.response_format).toEqual({ type: "json_object" });
      expect(server.authorization[0]).toBe(`Bearer ${SECRET}`);
      expect(gateway.accounting().byQuery["1"]).toMatchObject({ calls: 1, promptTokens: 100, completionTokens: 20, costUsd: 0.000027 });
      expect(gateway.accounting().byActor["probe/aura"]?.calls).toBe(1);
      expect(usageFromRecords(records).byQuery["1"]).toMatchObject({ calls: 1, promptTokens: 100, completionTokens: 20, costUsd: 0.000027 });
      expect(readFileSync(join(dir, "log", "000000000000.jsonl"), "utf8")).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });

  it("malformed JSON: one repair attempt with the error sent back; repaired output is used and marked", async () => {
    const server = await fakeServer((_b, n) => ({ content: n === 1 ? "Sure! Here is the frame: {gap: high}" : JSON.stringify(FRAME) }));
    try {
      const { records } = await runScene("repair", "aura-intent", config(server.url, { intent: "fake-intent" }));
      expect(server.requests).toBe(2);
      const repair = server.bodies[1]!.messages;
      expect(repair.at(-2)).toEqual({ role: "assistant", content: "Sure! Here is the frame: {gap: high}" });
      expect(repair.at(-1)!.content).toMatch(/could not be used: not valid JSON/);
      const completed = ofType<LlmCompletedPayload>(records, "llm.completed")[0]!.payload;
      expect(completed).toMatchObject({ attempts: 2, repaired: true, usage: { promptTokens: 200, completionTokens: 40 } });
      expect(ofType<IntentInferredPayload>(records, "intent.inferred")[0]!.payload.backend).toBe("llm:fake-intent");
    } finally {
      await server.close();
    }
  });

  it("malformed twice: llm.failed (invalid_output) is logged and the deterministic inferrer produces the frame, labelled as a fallback", async () => {
    const server = await fakeServer(() => ({ content: '{"literal_need": "x", "gap": "very"}' }));
    try {
      const { records, gateway } = await runScene("fallback", "aura-intent", config(server.url, { intent: "fake-intent" }));
      expect(server.requests).toBe(2);
      // Both answered requests were billed: the spend counts them (it said $0 for a failed call).
      expect(gateway.accounting().total).toMatchObject({ calls: 1, failed: 1, promptTokens: 200, completionTokens: 40, costUsd: 0.000054 });
      const failed = ofType<LlmFailedPayload>(records, "llm.failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]!.payload).toMatchObject({ error: "invalid_output", attempts: 2, fallback: "deterministic", content: '{"literal_need": "x", "gap": "very"}' });
      expect(failed[0]!.payload.message).toMatch(/gap/);
      const inferred = ofType<IntentInferredPayload>(records, "intent.inferred")[0]!.payload;
      expect(inferred.backend).toBe("deterministic (fallback from llm:fake-intent: invalid_output)");
      expect(inferred.frame.rationale).toMatch(/^deterministic:/);
      expect(ofType<AnswerGivenPayload>(records, "answer.given")[0]!.payload.backend).toBe("intent=deterministic (fallback from llm:fake-intent: invalid_output)");
    } finally {
      await server.close();
    }
  });

  it("429 then success: retried after the server's Retry-After (on a fake clock), one completion with attempts 2", async () => {
    const server = await fakeServer((_b, n) => (n === 1 ? { status: 429, headers: { "retry-after-ms": "20" } } : { content: JSON.stringify(FRAME) }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const scene = runScene("429", "aura-intent", config(server.url, { intent: "fake-intent" }));
      await until(() => server.requests === 1);
      // The retry waits the 429's Retry-After (20 ms), not the 5 ms backoff: at least 20 ms of the
      // fake clock pass before it (more only while the 429 is still on its way back).
      expect(await stepUntil(() => server.requests === 2)).toBeGreaterThanOrEqual(20);
      vi.useRealTimers();
      const { records } = await scene;
      expect(server.requests).toBe(2);
      expect(ofType<LlmCompletedPayload>(records, "llm.completed")[0]!.payload).toMatchObject({ attempts: 2 });
      expect(ofType(records, "llm.failed")).toHaveLength(0);
      expect(ofType<IntentInferredPayload>(records, "intent.inferred")[0]!.payload.backend).toBe("llm:fake-intent");
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });

  it("429 insufficient_quota (OpenAI's exhausted quota) fails at once as quota, not retried as a rate limit", async () => {
    const server = await fakeServer(() => ({ status: 429, error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } }));
    try {
      const { records } = await runScene("quota", "aura-intent", config(server.url, { intent: "fake-intent" }, { maxAttempts: 3 }));
      expect(server.requests).toBe(1);
      expect(ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload).toMatchObject({ error: "quota", attempts: 1, message: "HTTP 429: You exceeded your current quota, please check your plan and billing details." });
    } finally {
      await server.close();
    }
  });

  it("a server that refuses JSON mode (400) is asked once more without it; other 4xx fail at once, a 401 as `auth`", async () => {
    const server = await fakeServer((body) => (body.response_format !== undefined ? { status: 400 } : { content: JSON.stringify(FRAME) }));
    try {
      const { records } = await runScene("400", "aura-intent", config(server.url, { intent: "fake-intent" }));
      expect(server.bodies.map((b) => b.response_format?.type ?? null)).toEqual(["json_object", null]);
      expect(ofType<LlmCompletedPayload>(records, "llm.completed")[0]!.payload).toMatchObject({ attempts: 2 });
    } finally {
      await server.close();
    }
    const denied = await fakeServer(() => ({ status: 401 }));
    try {
      const { records } = await runScene("401", "aura-intent", config(denied.url, { intent: "fake-intent" }));
      expect(denied.requests).toBe(1);
      const failed = ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload;
      expect(failed).toMatchObject({ error: "auth", attempts: 1, message: "HTTP 401: fake error 401" });
      expect(failed.message).not.toContain(SECRET);
    } finally {
      await denied.close();
    }
  });

  it("a 5xx on every attempt ends in llm.failed (server_error) after maxAttempts, the backoff doubling between them (on a fake clock)", async () => {
    const server = await fakeServer(() => ({ status: 503 }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const scene = runScene("503", "aura-intent", config(server.url, { intent: "fake-intent" }, { maxAttempts: 3, backoffMs: 100 }));
      await until(() => server.requests === 1);
      // 100 ms, then 200 ms of the fake clock (more only while a 503 is still on its way back).
      expect(await stepUntil(() => server.requests === 2)).toBeGreaterThanOrEqual(100);
      expect(await stepUntil(() => server.requests === 3)).toBeGreaterThanOrEqual(200);
      vi.useRealTimers();
      const { records } = await scene;
      expect(server.requests).toBe(3);
      expect(ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload).toMatchObject({ error: "server_error", attempts: 3, fallback: "deterministic" });
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });

  it("usage figures a server gets wrong (1e300, a string, negative, 1e999) count as 0: the run ends and its log verifies", async () => {
    const answer = JSON.stringify({ answer: "Ben is at the square." });
    const completion = (content: string, usage: string) => `{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(content)}},"finish_reason":"stop"}],"usage":${usage}}`;
    const usages = ['{"prompt_tokens":1e300,"completion_tokens":"lots"}', '{"prompt_tokens":-5,"completion_tokens":1e999}'];
    const server = await fakeServer((b, n) => ({ body: completion(b.messages[0]!.content.includes("Gap rubric") ? JSON.stringify(FRAME) : answer, usages[(n - 1) % usages.length]!) }));
    try {
      const { records, dir, gateway } = await runScene("bad-usage", "aura-intent", config(server.url, { intent: "fake-intent", answer: "fake-answer" }));
      // Before: the 1e300 went into the log (a record verify calls damaged, exit 3) and the string or
      // 1e999 crashed the run in canonical JSON (exit 4).
      expect(server.requests).toBe(2);
      const completed = ofType<LlmCompletedPayload>(records, "llm.completed");
      expect(completed).toHaveLength(2);
      expect(completed.every((r) => r.payload.usage.promptTokens === 0 && r.payload.usage.completionTokens === 0)).toBe(true);
      expect(gateway.accounting().total).toMatchObject({ calls: 2, promptTokens: 0, completionTokens: 0, costUsd: 0 });
      expect((await verifyEpisode(dir)).ok).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("a 200 whose body is not a chat completion (not JSON, an HTML page, no choices) is a server_error naming what came, and does not make the endpoint 'unreachable'", async () => {
    const bodies: Reply[] = [
      { body: "this is not json {" },
      { body: "<html><body>Bad Gateway</body></html>", contentType: "text/html" },
      { body: '{"id":"x","object":"chat.completion"}' },
      { body: "" },
    ];
    const server = await fakeServer((_b, n) => (n <= 8 ? bodies[Math.floor((n - 1) / 2)]! : { content: JSON.stringify({ answer: "fine" }) }));
    try {
      const ask = (i: number) => llmRequest("answer", "fake-answer", [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "answer", temperature: 0 }, String(i));
      const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }, { maxAttempts: 2 }));
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
      const failures = answers.slice(0, 4).map((a) => a.payload as LlmFailedPayload);
      expect(failures.map((f) => [f.error, f.attempts])).toEqual([["server_error", 2], ["server_error", 2], ["server_error", 2], ["server_error", 2]]);
      expect(failures[0]!.message).toMatch(/^the server answered with a body that is not JSON/);
      expect(failures[1]!.message).toBe('the server\'s answer is not a chat completion: "<html><body>Bad Gateway</body></html>"');
      expect(failures[2]!.message).toMatch(/not a chat completion: an object without 'choices'/);
      expect(failures[3]!.message).toMatch(/not a chat completion: an empty body/);
      // The server answered every time: it is not taken as down (before, these were 'network'
      // failures, and after three the endpoint was 'unreachable … could not connect').
      expect(answers[4]!.type).toBe("llm.completed");
      expect(server.requests).toBe(9);
    } finally {
      await server.close();
    }
  });

  it("a reply of megabytes (max_tokens ignored) gets the repair attempt with only its start sent back, and never reaches the log", async () => {
    const huge = JSON.stringify({ ...FRAME, rationale: "x".repeat(1_000_000) });
    const server = await fakeServer((_b, n) => ({ content: n === 1 ? huge : JSON.stringify(FRAME) }));
    try {
      const { records, dir } = await runScene("huge", "aura-intent", config(server.url, { intent: "fake-intent" }));
      expect(server.requests).toBe(2);
      expect(server.bodies[1]!.messages.at(-2)!.content).toHaveLength(4000);
      expect(server.bodies[1]!.messages.at(-1)!.content).toMatch(/the reply is 1000\d{3} characters, far more than max_tokens 512 allows/);
      expect(ofType<LlmCompletedPayload>(records, "llm.completed")[0]!.payload).toMatchObject({ repaired: true, attempts: 2 });
      // Before, the megabyte went into llm.completed (and the frame's rationale was cut at 400).
      expect(readFileSync(join(dir, "log", "000000000000.jsonl"), "utf8").length).toBeLessThan(100_000);
    } finally {
      await server.close();
    }
  });

  it("timeout: each attempt is cut at timeoutMs (on a fake clock), then llm.failed (timeout) and the deterministic frame", async () => {
    // The server's reply would come after 10 s of the same fake clock: only the timeout ends an attempt.
    const server = await fakeServer(() => ({ content: JSON.stringify(FRAME), delayMs: 10_000 }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      // No backoff: an attempt that is cut is asked again at once, so the cut shows as a new request.
      const scene = runScene("timeout", "aura-intent", config(server.url, { intent: "fake-intent" }, { timeoutMs: 150, maxAttempts: 2, backoffMs: 0 }));
      const ended = watch(scene);
      for (const n of [1, 2]) {
        // The client set its timer before the request went out: the attempt is cut at 150 ms, not before.
        await until(() => server.requests === n);
        vi.advanceTimersByTime(149);
        await settle();
        expect(server.requests).toBe(n);
        expect(ended.done).toBe(false);
        vi.advanceTimersByTime(1);
      }
      vi.useRealTimers();
      const { records } = await scene;
      expect(server.requests).toBe(2);
      expect(ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload).toMatchObject({ error: "timeout", attempts: 2, fallback: "deterministic" });
      expect(ofType<IntentInferredPayload>(records, "intent.inferred")[0]!.payload.backend).toBe("deterministic (fallback from llm:fake-intent: timeout)");
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });

  it("a planner that invents tool names: the invented calls are logged as denied and never executed", async () => {
    const steps = [
      { action: "call_tool", tool: "teleport_agent", arguments: { agent_name: "Ben" } },
      { action: "call_tool", tool: "get_agent_private_state", arguments: { agent_name: "Zorro" } },
      { action: "call_tool", tool: "get_time", arguments: {} },
    ];
    const server = await fakeServer((body) => {
      if (body.model === "fake-answer") return { content: JSON.stringify({ answer: "I could not find out." }) };
      const made = (body.messages[1]!.content.match(/^\d+\. /gm) ?? []).length;
      return { content: JSON.stringify(steps[made] ?? { action: "stop" }) };
    });
    try {
      const { records } = await runScene("invent", "no-intent", config(server.url, { planner: "fake-planner", answer: "fake-answer" }));
      const denied = ofType<ProbeDeniedPayload>(records, "probe.denied").map((r) => [r.from, r.payload.tool, r.payload.reason]);
      expect(denied).toEqual([
        ["env/scene", "teleport_agent", "unknown tool 'teleport_agent'"],
        ["env/scene", "get_agent_private_state", "no agent 'Zorro' in the scene answers 'get_agent_private_state'"],
        ["env/scene", "get_time", "tool 'get_time' is not in this registry"],
      ]);
      expect(ofType(records, "probe.answered")).toHaveLength(0);
      // The third step spent the budget (3); the planner saw each refusal.
      expect(server.bodies.filter((b) => b.model === "fake-planner")).toHaveLength(3);
      expect(server.bodies[2]!.messages[1]!.content).toMatch(/2\. get_agent_private_state\(agent_name=Zorro\) -> refused: no agent 'Zorro'/);
      const answer = ofType<AnswerGivenPayload>(records, "answer.given")[0]!.payload;
      expect(answer).toMatchObject({ probes: 3, text: "I could not find out.", backend: "answer=llm:fake-answer, planner=llm:fake-planner" });
    } finally {
      await server.close();
    }
  });

  it("caps calls in flight at `concurrency`", async () => {
    let inFlight = 0;
    let peak = 0;
    const server = await fakeServer(() => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => inFlight--, 40); // before the reply goes out (50 ms): a freed slot cannot overlap
      return { content: JSON.stringify({ answer: "ok" }), delayMs: 50 };
    });
    try {
      const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }, { concurrency: 2 }));
      const requests = [1, 2, 3, 4, 5, 6].map((i) => llmRequest("answer", "fake-answer", [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "answer", temperature: 0 }, String(i)));
      const answers = await Promise.all(requests.map((r) => gateway.complete(r, "probe/x")));
      expect(answers.every((a) => a.type === "llm.completed")).toBe(true);
      expect(peak).toBe(2);
      expect(gateway.accounting().byActor["probe/x"]).toMatchObject({ calls: 6, httpRequests: 6, promptTokens: 600 });
      expect(Object.keys(gateway.accounting().byQuery)).toEqual(["1", "2", "3", "4", "5", "6"]);
    } finally {
      await server.close();
    }
  });

  it("an endpoint nobody listens on: after `unreachableAfter` calls that could not connect, later calls fail at once", async () => {
    // A port that was free a moment ago: connections to it are refused.
    const closed = await fakeServer(() => ({ status: 500 }));
    const url = closed.url;
    await closed.close();
    const ask = (i: number) => llmRequest("answer", "fake-answer", [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "answer", temperature: 0 }, String(i));
    const gateway = makeLlmGateway(config(url, { answer: "fake-answer" }, { maxAttempts: 2 }));
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
    expect(answers.map((a) => [a.type, a.payload.attempts])).toEqual([["llm.failed", 2], ["llm.failed", 2], ["llm.failed", 2], ["llm.failed", 0], ["llm.failed", 0]]);
    expect(answers.every((a) => a.type === "llm.failed" && a.payload.error === "network")).toBe(true);
    expect((answers[3]!.payload as LlmFailedPayload).message).toMatch(/endpoint unreachable: 3 calls in a row got no answer \(could not connect\)/);
    // Why it could not connect (it said only 'connection failed: Connection error.').
    expect((answers[0]!.payload as LlmFailedPayload).message).toBe(`connection failed: connect ECONNREFUSED ${new URL(url).host}`);
    expect(gateway.httpRequests).toBe(6);
    // 0 keeps trying every call.
    const stubborn = makeLlmGateway(config(url, { answer: "fake-answer" }, { maxAttempts: 1, unreachableAfter: 0 }));
    for (let i = 0; i < 5; i++) await stubborn.complete(ask(i), "agent/x");
    expect(stubborn.httpRequests).toBe(5);
  });

  it("a server that accepts but never answers: after `unreachableAfter` calls that timed out, later calls fail at once", async () => {
    const hanging = await fakeServer(() => ({ content: "{}", delayMs: 60_000 }));
    try {
      const ask = (i: number) => llmRequest("answer", "fake-answer", [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "answer", temperature: 0 }, String(i));
      const gateway = makeLlmGateway(config(hanging.url, { answer: "fake-answer" }, { maxAttempts: 1, timeoutMs: 150 }));
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
      expect(answers.map((a) => [a.type, a.payload.attempts, (a.payload as LlmFailedPayload).error])).toEqual([
        ["llm.failed", 1, "timeout"], ["llm.failed", 1, "timeout"], ["llm.failed", 1, "timeout"], ["llm.failed", 0, "timeout"], ["llm.failed", 0, "timeout"],
      ]);
      expect((answers[3]!.payload as LlmFailedPayload).message).toMatch(/3 calls in a row got no answer \(timed out\)/);
      expect(hanging.requests).toBe(3);
    } finally {
      await hanging.close();
    }
  });

  const ask = (i: number, model = "fake-answer") => llmRequest("answer", model, [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "answer", temperature: 0 }, String(i));
  const ANSWER = JSON.stringify({ answer: "fine" });

  /** The gateway's waiting notices. */
  const noticesOf = () => {
    const notices: LlmWaiting[] = [];
    return { notices, onWaiting: (w: LlmWaiting) => void notices.push(w) };
  };

  it("calls that wait with no answer: after `waitNoticeMs` (on a fake clock) the gateway says what for (model, endpoint, calls in flight), then no oftener than every 3 × waitNoticeMs, and not after the calls end", async () => {
    const hanging = await fakeServer(() => ({ content: "{}", delayMs: 60_000 }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      const { notices, onWaiting } = noticesOf();
      const gateway = makeLlmGateway(config(hanging.url, { answer: "fake-answer" }, { maxAttempts: 1, timeoutMs: 30_000, concurrency: 2, waitNoticeMs: 100 }), { onWaiting });
      // Two calls at once on one model (the second behind the first call's gate), a third queued behind the concurrency cap.
      const calls = Promise.all([gateway.complete(ask(1), "agent/x"), gateway.complete(ask(2), "agent/x"), gateway.complete(ask(3), "agent/y")]);
      await until(() => hanging.requests === 1);
      vi.advanceTimersByTime(99);
      await settle();
      expect(notices).toEqual([]);
      vi.advanceTimersByTime(1);
      await settle();
      const host = new URL(hanging.url).host;
      expect(notices).toEqual([{ models: ["fake-answer"], server: host, inFlight: 2, queued: 1, oldestMs: 100, answeredBefore: false, timeoutMs: 30_000, maxAttempts: 1, callLimitMs: 30_000, unreachableAfter: 3, unansweredInARow: 0 }]);
      expect(waitingLine("ask", notices[0]!)).toBe(`ask: waiting for fake-answer at ${host}: 2 calls in flight, the oldest for 100 ms (1 more queued), no answer from it yet (each call times out after 30 s; the endpoint is given up after 3 calls in a row without an answer; set timeoutMs / maxAttempts in --llm-config to wait less)`);
      // Then every three times the interval while no answer comes (the same oldest call: its wait is the clock).
      vi.advanceTimersByTime(299);
      await settle();
      expect(notices).toHaveLength(1);
      vi.advanceTimersByTime(1);
      await settle();
      vi.advanceTimersByTime(300);
      await settle();
      expect(notices.map((n) => n.oldestMs)).toEqual([100, 400, 700]);
      // The server goes away: every call ends (failed), and nothing more is said.
      await hanging.close();
      expect((await calls).every((a) => a.type === "llm.failed")).toBe(true);
      vi.advanceTimersByTime(10_000);
      await settle();
      expect(notices).toHaveLength(3);
    } finally {
      vi.useRealTimers();
      await hanging.close();
    }
  });

  it("a call that waits after earlier ones timed out: the notice says how many in a row had no answer, and how long a call can take", () => {
    const line = waitingLine("run", { models: ["m1", "m2"], server: "127.0.0.1:8000", inFlight: 1, queued: 0, oldestMs: 10_400, answeredBefore: true, timeoutMs: 60_000, maxAttempts: 3, callLimitMs: 181_500, unreachableAfter: 3, unansweredInARow: 2 });
    expect(line).toBe("run: waiting for m1, m2 at 127.0.0.1:8000: 1 call in flight, for 10 s (each attempt times out after 60 s, up to 3 attempts: ~3 min 2 s a call; the endpoint is given up after 3 calls in a row without an answer, 2 so far; set timeoutMs / maxAttempts in --llm-config to wait less)");
  });

  it("calls answered promptly: no waiting notice, however long the calls go on (on a fake clock)", async () => {
    // Each reply takes 20 ms of the fake clock.
    const server = await fakeServer(() => ({ content: ANSWER, delayMs: 20 }));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      const { notices, onWaiting } = noticesOf();
      const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }, { concurrency: 2, waitNoticeMs: 2500 }), { onWaiting });
      /** Runs the clock on a reply's 20 ms whenever a request has reached the server, until `p` settles. */
      const answered = async <T>(p: Promise<T>): Promise<T> => {
        const box = watch(p);
        let seen = 0;
        for (;;) {
          await until(() => box.done || server.requests > seen);
          if (box.done) return p;
          seen = server.requests;
          vi.advanceTimersByTime(20);
        }
      };
      // Calls in flight for 3 s of the clock in all, well over the interval, each answered in 20 ms of it.
      const started = performance.now();
      let i = 0;
      while (performance.now() - started < 3000) await answered(Promise.all([gateway.complete(ask(i++), "agent/x"), gateway.complete(ask(i++), "agent/x")]));
      expect(gateway.accounting().total).toMatchObject({ calls: i, failed: 0 });
      expect(notices).toEqual([]);
    } finally {
      vi.useRealTimers();
      await server.close();
    }
  });

  it("a refused key (401, 403) is asked once, however many calls are in flight: the rest fail at once as `auth`, naming the refusal; problems() says so", async () => {
    for (const status of [401, 403]) {
      const server = await fakeServer(() => ({ status, delayMs: 50, error: { message: `Incorrect API key provided: ${SECRET.slice(0, 8)}…${SECRET.slice(-4)}; also ${SECRET}`, type: "invalid_request_error", code: "invalid_api_key" } }));
      try {
        const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }, { concurrency: 4 }));
        // Eight calls at once (four in flight): only the first reaches the server.
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => gateway.complete(ask(i), "agent/x")));
        expect(server.requests).toBe(1);
        const failures = answers.map((a) => a.payload as LlmFailedPayload);
        expect(failures.every((f) => f.error === "auth")).toBe(true);
        expect(failures.map((f) => f.attempts).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
        const first = failures.find((f) => f.attempts === 1)!;
        expect(first.message).toMatch(new RegExp(`^HTTP ${status}: Incorrect API key provided: `));
        const host = new URL(server.url).host;
        expect(failures.find((f) => f.attempts === 0)!.message).toBe(`not asked: ${host} refused an earlier call (${first.message}): check the API key; not asked again in this run`);
        expect(JSON.stringify(failures)).not.toContain(SECRET);
        // Later calls, and another model's, are not asked either.
        expect((await gateway.complete(ask(9, "fake-other"), "agent/x")).payload).toMatchObject({ error: "auth", attempts: 0 });
        expect(server.requests).toBe(1);
        expect(gateway.problems()).toEqual([{ kind: "auth", status, message: first.message, server: host, model: "fake-answer", live: true }]);
      } finally {
        await server.close();
      }
    }
  });

  it("an unknown model (404 naming it, or a 400 whose error code says it does not exist) fails that model at once from then on; other models are still asked", async () => {
    const server = await fakeServer((body) =>
      body.model === "gone" ? { status: 404, error: { message: "The model `gone` does not exist or you do not have access to it.", type: "invalid_request_error", code: "model_not_found" } }
      : body.model === "gone-400" ? { status: 400, error: { message: "Invalid model: no such model 'gone-400'", code: "model_not_found" } }
      : { content: ANSWER });
    try {
      const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }));
      const gone = [];
      for (let i = 0; i < 3; i++) gone.push(await gateway.complete(ask(i, "gone"), "agent/x"));
      expect(gone.map((a) => [a.type, (a.payload as LlmFailedPayload).error, a.payload.attempts])).toEqual([["llm.failed", "model_not_found", 1], ["llm.failed", "model_not_found", 0], ["llm.failed", "model_not_found", 0]]);
      expect((gone[1]!.payload as LlmFailedPayload).message).toContain(`does not serve model 'gone' (HTTP 404: The model \`gone\` does not exist`);
      // A 400 about the model is not mistaken for a server refusing JSON mode (asked once, not twice).
      const before = server.requests;
      expect((await gateway.complete(ask(0, "gone-400"), "agent/x")).payload).toMatchObject({ error: "model_not_found", attempts: 1 });
      expect(server.requests).toBe(before + 1);
      expect((await gateway.complete(ask(1, "fake-answer"), "agent/x")).type).toBe("llm.completed");
      expect(server.bodies.filter((b) => b.model === "gone")).toHaveLength(1);
      expect(gateway.problems().map((p) => [p.kind, p.status, p.model])).toEqual([["model_not_found", 404, "gone"], ["model_not_found", 400, "gone-400"]]);
    } finally {
      await server.close();
    }
  });

  it("an exhausted quota (429 insufficient_quota) is asked once: later calls fail at once as `quota`, and problems() says so", async () => {
    const server = await fakeServer(() => ({ status: 429, error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } }));
    try {
      const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }));
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
      expect(answers.map((a) => [(a.payload as LlmFailedPayload).error, a.payload.attempts])).toEqual([["quota", 1], ["quota", 0], ["quota", 0]]);
      expect((answers[1]!.payload as LlmFailedPayload).message).toMatch(/refused an earlier call for quota \(HTTP 429: You exceeded your current quota.*\): check the account's plan and billing/);
      expect(server.requests).toBe(1);
      expect(gateway.problems()).toMatchObject([{ kind: "quota", status: 429 }]);
    } finally {
      await server.close();
    }
  });

  it("a 404 that is not about a model (a base URL without /v1: a page, or no body) is `endpoint_not_found`, and the endpoint is not asked again", async () => {
    for (const reply of [{ status: 404, body: "404 page not found" }, { status: 404, body: JSON.stringify({ detail: "Not Found" }), contentType: "application/json" }] as Reply[]) {
      const server = await fakeServer(() => reply);
      try {
        const gateway = makeLlmGateway(config(server.url, { answer: "fake-answer" }));
        const answers = [];
        for (let i = 0; i < 3; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
        expect(answers.map((a) => [(a.payload as LlmFailedPayload).error, a.payload.attempts])).toEqual([["endpoint_not_found", 1], ["endpoint_not_found", 0], ["endpoint_not_found", 0]]);
        expect(server.requests).toBe(1);
        expect(gateway.problems()).toMatchObject([{ kind: "endpoint_not_found", status: 404 }]);
      } finally {
        await server.close();
      }
    }
  });

  it("problems(): an endpoint that never answered is unreachable even before `unreachableAfter` calls; one that timed out once and then answered is not", async () => {
    const closed = await fakeServer(() => ({ status: 500 }));
    await closed.close();
    const dead = makeLlmGateway(config(closed.url, { answer: "fake-answer" }, { maxAttempts: 1 }));
    await dead.complete(ask(0), "agent/x");
    expect(dead.problems()).toEqual([{ kind: "unreachable", status: null, message: `connection failed: connect ECONNREFUSED ${new URL(closed.url).host}`, server: new URL(closed.url).host, model: null, live: true }]);
    const flaky = await fakeServer((_body, n) => (n === 1 ? { content: ANSWER, delayMs: 10_000 } : n === 2 ? { status: 503 } : { content: ANSWER }));
    // On a fake clock: the first call times out when the test says so, and the answered calls never
    // do, however slow the machine (on the machine's clock a loaded one timed them out too).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const gateway = makeLlmGateway(config(flaky.url, { answer: "fake-answer" }, { maxAttempts: 1, timeoutMs: 150 }));
      const first = gateway.complete(ask(0), "agent/x");
      await until(() => flaky.requests === 1);
      vi.advanceTimersByTime(150);
      const answers = [await first];
      for (let i = 1; i < 4; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
      expect(answers.map((a) => (a.type === "llm.failed" ? a.payload.error : "ok"))).toEqual(["timeout", "server_error", "ok", "ok"]);
      expect(gateway.problems()).toEqual([]);
    } finally {
      vi.useRealTimers();
      await flaky.close();
    }
  });

  it("problems(): an endpoint that answered every call with an HTTP error (500, 429) after the retries is `errors_only`, scrubbed, live and recorded; one completed call among them makes it chance", async () => {
    for (const status of [500, 429]) {
      const failing = await fakeServer(() => ({ status, error: { message: `overloaded (key ${SECRET})`, type: "server_error" } }));
      try {
        const gateway = makeLlmGateway(config(failing.url, { answer: "fake-answer" }, { maxAttempts: 2 }));
        for (let i = 0; i < 3; i++) await gateway.complete(ask(i), "agent/x");
        expect(failing.requests).toBe(6);
        const problem = { kind: "errors_only", status, message: `HTTP ${status}: overloaded (key [redacted])`, server: new URL(failing.url).host, model: "fake-answer", live: true };
        expect(gateway.problems()).toEqual([problem]);
      } finally {
        await failing.close();
      }
    }
    const halfFailing = await fakeServer((_body, n) => (n % 2 === 1 ? { status: 500 } : { content: ANSWER }));
    try {
      const gateway = makeLlmGateway(config(halfFailing.url, { answer: "fake-answer" }, { maxAttempts: 1 }));
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await gateway.complete(ask(i), "agent/x"));
      expect(answers.map((a) => (a.type === "llm.failed" ? a.payload.error : "ok"))).toEqual(["server_error", "ok", "server_error", "ok"]);
      expect(gateway.problems()).toEqual([]);
    } finally {
      await halfFailing.close();
    }
    // From logs served as recorded: only when they hold no llm.completed at all.
    const requested = (seq: number, i: number) => ({ seq, type: "llm.requested", payload: ask(i) }) as unknown as LogRecord;
    const failedRecord = (seq: number, i: number) => ({ seq, type: "llm.failed", payload: { requestHash: ask(i).requestHash, error: "server_error", message: "HTTP 503: fake error 503", attempts: 3, fallback: "deterministic" } }) as unknown as LogRecord;
    const completedRecord = (seq: number, i: number) => ({ seq, type: "llm.completed", payload: { requestHash: ask(i).requestHash, content: ANSWER, model: "fake-answer", backend: "openai-compatible", attempts: 1 } }) as unknown as LogRecord;
    const failedLog = [requested(1, 0), failedRecord(2, 0), requested(3, 1), failedRecord(4, 1)];
    // A log records no status, and a server_error's is any 5xx: the recorded problem names none (its message says it).
    expect(new RecordedEndpointProblems().add(failedLog).problems()).toEqual([{ kind: "errors_only", status: null, message: "HTTP 503: fake error 503", server: null, model: "fake-answer", live: false }]);
    expect(new RecordedEndpointProblems().add(failedLog).add([requested(1, 2), completedRecord(2, 2)]).problems()).toEqual([]);
    // Per model: a model the server cannot run is named even while another model's calls complete.
    const onlyJudgeFails = await fakeServer((body) => (body.model === "fake-judge" ? { status: 500 } : { content: ANSWER }));
    try {
      const gateway = makeLlmGateway(config(onlyJudgeFails.url, { answer: "fake-answer" }, { maxAttempts: 1 }));
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await gateway.complete(ask(i, i % 2 === 0 ? "fake-answer" : "fake-judge"), "agent/x"));
      expect(answers.map((a) => (a.type === "llm.failed" ? a.payload.error : "ok"))).toEqual(["ok", "server_error", "ok", "server_error"]);
      expect(gateway.problems()).toEqual([{ kind: "errors_only", status: 500, message: expect.stringMatching(/^HTTP 500/), server: new URL(onlyJudgeFails.url).host, model: "fake-judge", live: true }]);
    } finally {
      await onlyJudgeFails.close();
    }
    const judgeFailed = (seq: number, i: number) => ({ seq, type: "llm.failed", payload: { requestHash: ask(i, "fake-judge").requestHash, error: "server_error", message: "HTTP 500: no judge", attempts: 3, fallback: "deterministic" } }) as unknown as LogRecord;
    const judgeRequested = (seq: number, i: number) => ({ seq, type: "llm.requested", payload: ask(i, "fake-judge") }) as unknown as LogRecord;
    expect(new RecordedEndpointProblems().add([requested(1, 0), completedRecord(2, 0), judgeRequested(3, 1), judgeFailed(4, 1)]).problems()).toEqual([{ kind: "errors_only", status: null, message: "HTTP 500: no judge", server: null, model: "fake-judge", live: false }]);
  });

  it("no gateway for a run that asks for models: every request fails with no_backend and the run still ends", async () => {
    const dir = join(tempDir("llm-none"), "ep");
    await runEpisode({ world: "aura-scene", seed: 42, condition: "aura-intent", dir, trace: { exporter: "none" }, config: { llm: { intent: "m", planner: null, answer: null } } });
    const records = logRecords(dir);
    expect(ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload).toMatchObject({ error: "no_backend", attempts: 0 });
    expect(ofType(records, "answer.given")).toHaveLength(1);
    expect((await verifyEpisode(dir)).ok).toBe(true);
  });
});

// ---- Every condition end to end, then replay and verify with zero HTTP --------------------------

const ENV_SCENE = {
  name: "square",
  summary: "Town Square, 09:30. Ana is painting near the fountain; Ben reads at the Cafe.",
  public_state: { Ana: { location: "Town Square", action: "painting" }, Ben: { location: "Cafe", action: "reading" } },
  private_state: { Ana: { availability: "available", emotional_state: "calm", unspoken_goal: "finish the mural" }, Ben: { availability: "busy", emotional_state: "tired", unspoken_goal: "avoid the meeting" } },
  beliefs_about_others: { Ana: { Ben: { availability: "available", emotional_state: "happy" } }, Ben: { Ana: { availability: "busy", emotional_state: "unknown" } } },
};

const ENV_CONFIG = {
  scene: ENV_SCENE,
  registry: "environment",
  queries: [{ id: "f1", text: "What time is it, and who is at the Cafe?", asker: "Ana" }, { id: "f2", text: "What did I do recently?", asker: "Ben" }],
  order: ["f1", "f2"],
  maxSteps: 5,
  town: { events: ["09:00 the market opened"], memories: { Ana: ["painted the mural"], Ben: ["read a novel"] }, places: { Cafe: "cafe", "Town Square": "square" } },
};

const IMPLICIT_CONFIG = {
  queries: [{ id: "1", text: "Is Ben around?" }, { id: "2", text: "Does Ana think Ben is free to chat?" }, { id: "3", text: "Should I invite anyone at the Town Square for coffee?" }],
  order: ["1", "2", "3"],
  labels: { "1": { subcategory: "availability", subject: "Ben", target: null, gold: ["get_agent_private_state"] }, "2": { subcategory: "second_order", subject: "Ana", target: "Ben", gold: ["get_agent_belief_about"] }, "3": { subcategory: "appropriateness", subject: null, target: null, gold: ["get_agent_private_state"] } },
};

/** A fake model that answers every role in the expected format (and names a tool no registry has once). */
function smartReply(body: ChatBody): Reply {
  const user = body.messages.at(-1)!.content;
  if (body.model === "fake-intent") {
    const second = /think/.test(user);
    return { content: JSON.stringify({ ...FRAME, gap: second ? 0.8 : 0.5, recommended_probes: second ? ["get_agent_belief_about"] : ["get_agent_private_state", "get_time", "get_location_info"] }) };
  }
  if (body.model === "fake-answer") return { content: JSON.stringify({ answer: `answer with ${(user.match(/^- /gm) ?? []).length} pieces of evidence` }) };
  if (/Plan-and-Solve/.test(body.messages[0]!.content)) return { content: JSON.stringify({ steps: [{ tool: "get_all_agents" }, { tool: "get_agent_private_state", arguments: { agent_name: "ben" } }, { tool: "made_up_tool" }] }) };
  const made = (user.match(/^\d+\. /gm) ?? []).length;
  const plan = [{ action: "call_tool", tool: "get_all_agents", arguments: {} }, { action: "call_tool", tool: "get_recent_events", arguments: {} }];
  return { content: JSON.stringify(plan[made] ?? { action: "stop", reason: "enough" }) };
}

describe("every aura-scene condition on LLM backends, then replay and verify with zero HTTP", () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  const runs: Array<{ condition: string; dir: string }> = [];
  beforeAll(async () => {
    server = await fakeServer(smartReply);
  });
  afterAll(async () => {
    await server.close();
  });

  it("runs all conditions end to end; each answer says which backend produced it", async () => {
    const c = config(server.url, { intent: "fake-intent", planner: "fake-planner", answer: "fake-answer" });
    const gateway = makeLlmGateway(c);
    const root = tempDir("llm-all");
    expect(Object.keys(auraSceneWorld.conditions).sort()).toEqual([...new Set([...IMPLICIT_CONDITIONS, ...FACTUAL_CONDITIONS])].sort());
    for (const condition of Object.keys(SCENE_CONDITIONS)) {
      const environment = (FACTUAL_CONDITIONS as readonly string[]).includes(condition) && !(IMPLICIT_CONDITIONS as readonly string[]).includes(condition);
      for (const registry of environment ? ["environment"] : condition === "plan-and-solve" ? ["agent-state", "environment"] : ["agent-state"]) {
        const dir = join(root, `${condition}-${registry}`);
        const base = registry === "environment" ? ENV_CONFIG : IMPLICIT_CONFIG;
        await runEpisode({ world: "aura-scene", seed: 7, condition, dir, trace: { exporter: "none" }, config: { ...base, llm: sceneModels(c) }, llm: gateway.responder });
        const records = logRecords(dir);
        const answers = ofType<AnswerGivenPayload>(records, "answer.given");
        expect(answers, condition).toHaveLength(base.queries.length);
        for (const a of answers) {
          expect(a.payload.text, condition).toMatch(/answer with \d+ pieces of evidence/);
          expect(a.payload.backend, condition).toMatch(/llm:fake-/);
          expect(a.payload.backend, condition).not.toMatch(/fallback/);
        }
        expect(ofType(records, "llm.failed"), condition).toHaveLength(0);
        const inferred = ofType<IntentInferredPayload>(records, "intent.inferred");
        if (condition.startsWith("aura-")) for (const i of inferred) expect(i.payload.backend, condition).toBe("llm:fake-intent");
        const roles = new Set(ofType<LlmRequestedPayload>(records, "llm.requested").map((r) => r.payload.role));
        if (["no-intent", "react", "reflexion", "aura-full", "plan-and-solve"].includes(condition)) expect(roles.has("planner"), condition).toBe(true);
        // Tools a model invents are refused by the environment, never answered.
        for (const d of ofType<ProbeDeniedPayload>(records, "probe.denied")) expect(d.payload.reason, `${condition}: ${d.payload.tool}`).toMatch(/^(unknown tool|tool '.*' is not in this registry)/);
        for (const a of ofType<{ tool: string }>(records, "probe.answered")) expect(a.payload.tool).not.toBe("made_up_tool");
        runs.push({ condition: `${condition}/${registry}`, dir });
      }
    }
    expect(runs.length).toBe(Object.keys(SCENE_CONDITIONS).length + 1);
    expect(gateway.accounting().total.calls).toBeGreaterThan(runs.length * 2);
    // Invented names were actually exercised somewhere.
    const allDenied = runs.flatMap((r) => ofType<ProbeDeniedPayload>(logRecords(r.dir), "probe.denied"));
    expect(allDenied.some((d) => d.payload.tool === "made_up_tool")).toBe(true);
  });

  it("verify and replay reproduce every answer from the logs with zero HTTP requests", async () => {
    expect(runs.length).toBeGreaterThan(0);
    const before = server.requests;
    expect(before).toBeGreaterThan(0);
    for (const { condition, dir } of runs) {
      const report = await verifyEpisode(dir);
      expect(report.ok, `${condition}: ${report.text}`).toBe(true);
      const replay = await replayEpisode(dir);
      replay.host.stop();
      const logged = logRecords(dir).filter((r) => r.type === "tick.committed").at(-1)!.payload as { stateHash: string };
      expect(replay.stateHash).toBe(logged.stateHash);
    }
    expect(server.requests).toBe(before);
  });

  it("a tampered completion in the log is a divergence, not a silent model call", async () => {
    const { dir } = runs.find((r) => r.condition === "aura-intent/agent-state")!;
    const file = join(dir, "log", "000000000000.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    const before = server.requests;
    // Drop the completion of the first intent request: the replayed actors wait for an answer the log lacks.
    const at = lines.findIndex((l) => l.includes('"type":"llm.completed"'));
    const copy = join(tempDir("llm-tamper"), "ep");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(copy, "log"), { recursive: true });
    writeFileSync(join(copy, "log", "000000000000.jsonl"), lines.slice(0, at).join("\n") + "\n");
    const report = await verifyEpisode(copy);
    expect(report.ok).toBe(true);
    expect(report.notes.join(" ")).toMatch(/ends part-way through tick 0/);
    expect(server.requests).toBe(before);
  });
});

describe("LLM configuration", () => {
  it("stays deterministic unless an LLM is asked for, and says why in one line", () => {
    expect(resolveLlmConfig({}, {}).config).toBeNull();
    const noEndpoint = resolveLlmConfig({ model: "intent=gpt-4o-mini" }, {});
    expect(noEndpoint.config).toBeNull();
    expect(noEndpoint.note).toMatch(/^backends: deterministic \(no LLM endpoint and no API key/);
    expect(noEndpoint.note.split("\n")).toHaveLength(1);
  });

  it("reads --llm, per-role --model and the key from the environment (never printed)", () => {
    const r = resolveLlmConfig({ llm: "http://127.0.0.1:11434/v1", model: ["qwen2.5:7b", "intent=gpt-4o-mini", "planner=none"] }, { PROBETOWN_LLM_API_KEY: SECRET });
    expect(r.config).toMatchObject({ baseURL: "http://127.0.0.1:11434/v1", apiKey: SECRET, models: { intent: "gpt-4o-mini", planner: null, answer: "qwen2.5:7b" } });
    expect(r.note).toContain("intent=gpt-4o-mini planner=deterministic answer=qwen2.5:7b");
    expect(r.note).not.toContain(SECRET);
    const keyOnly = resolveLlmConfig({ model: "gpt-4o-mini" }, { OPENAI_API_KEY: SECRET });
    expect(keyOnly.config?.baseURL).toBe("https://api.openai.com/v1");
    // A key from a CRLF .env file, or pasted with a space: sent without them.
    expect(resolveLlmConfig({ llm: "http://127.0.0.1:11434/v1" }, { PROBETOWN_LLM_API_KEY: ` ${SECRET}\r` }).config?.apiKey).toBe(SECRET);
  });

  it("refuses an endpoint that is not an http(s) URL, naming where it came from (a scheme-less localhost:8000/v1 ran with every call failing)", () => {
    expect(() => resolveLlmConfig({ llm: "localhost:8000/v1" }, {})).toThrow("--llm: expected an http:// or https:// URL, got 'localhost:8000/v1' (e.g. http://127.0.0.1:11434/v1)");
    expect(() => resolveLlmConfig({ llm: "127.0.0.1:8000/v1" }, {})).toThrow("--llm: not a URL: '127.0.0.1:8000/v1'");
    expect(() => resolveLlmConfig({ model: "m" }, { PROBETOWN_LLM_BASE_URL: "ollama:11434" })).toThrow(/^PROBETOWN_LLM_BASE_URL: expected an http/);
    expect(() => resolveLlmConfig({ configObject: { label: "spec.json: llm", value: { baseURL: "ftp://x/v1" } } }, {})).toThrow(/^spec\.json: llm: baseURL: expected an http/);
    expect(resolveLlmConfig({ llm: "HTTPS://example.org/v1" }, {}).config?.baseURL).toBe("HTTPS://example.org/v1");
  });

  it("refuses a port Node's fetch never connects to, naming it (a server running on 6000 was reported unreachable after every call's retries)", async () => {
    // The premise, in this Node: fetch refuses the port without connecting, whatever listens there.
    const refused = await fetch("http://127.0.0.1:6000/v1/chat/completions").then(() => null, (e: Error) => String((e.cause as Error | undefined)?.message ?? e.message));
    expect(refused).toBe("bad port");
    expect(() => resolveLlmConfig({ llm: "http://127.0.0.1:6000/v1" }, {})).toThrow(/^--llm: port 6000 is one Node's fetch \(the model client's HTTP\) never connects to, whatever listens there .*; serve the model on another port/);
    expect(() => resolveLlmConfig({ configObject: { label: "spec.json: field 'llm'", value: { baseURL: "http://localhost:6666/v1" } } }, {})).toThrow(/^spec\.json: field 'llm': baseURL: port 6666 is one/);
    expect(resolveLlmConfig({ llm: "http://127.0.0.1:8000/v1" }, {}).config?.baseURL).toBe("http://127.0.0.1:8000/v1");
  });

  it("reads --llm-config files and refuses keys in them", () => {
    const dir = tempDir("llm-config");
    writeFileSync(join(dir, "ok.json"), JSON.stringify({ baseURL: "http://localhost:8000/v1", models: { intent: "m1", answer: null }, timeoutMs: 5000, concurrency: 2 }));
    const r = resolveLlmConfig({ llmConfig: join(dir, "ok.json") }, {});
    expect(r.config).toMatchObject({ baseURL: "http://localhost:8000/v1", models: { intent: "m1", answer: null, planner: "gpt-4o-mini" }, timeoutMs: 5000, concurrency: 2, apiKey: null });
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ baseURL: "http://x/v1", apiKey: "sk-nope-1234567" }));
    expect(() => resolveLlmConfig({ llmConfig: join(dir, "bad.json") }, {})).toThrow(/do not put the API key in a file/);
    expect(() => resolveLlmConfig({ llm: "http://x/v1", model: "critic=m" }, {})).toThrow(/unknown role 'critic'/);
    writeFileSync(join(dir, "typo.json"), JSON.stringify({ baseURL: "http://x/v1", timeout: 5 }));
    expect(() => resolveLlmConfig({ llmConfig: join(dir, "typo.json") }, {})).toThrow(/typo\.json: Expected no excess property at \["timeout"\] \(the config has the fields: .*\btimeoutMs\b/);
    writeFileSync(join(dir, "type.json"), JSON.stringify({ baseURL: "http://x/v1", concurrency: "many" }));
    expect(() => resolveLlmConfig({ llmConfig: join(dir, "type.json") }, {})).toThrow(/\["concurrency"\]/);
    // A negative price made negative costs (and hid them: only a cost > 0 is printed).
    writeFileSync(join(dir, "price.json"), JSON.stringify({ baseURL: "http://x/v1", prices: { m: { input: -1, output: 0.6 } } }));
    expect(() => resolveLlmConfig({ llmConfig: join(dir, "price.json") }, {})).toThrow(/price\.json: Expected a value greater than or equal to 0 at \["prices"\]\["m"\]\["input"\]/);
  });
});

describe("chat spans, forks that reuse recorded answers, resume", () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  beforeAll(async () => {
    server = await fakeServer(smartReply);
  });
  afterAll(async () => {
    await server.close();
  });
  const models = { intent: "fake-intent", planner: "fake-planner", answer: "fake-answer" };

  it("a `chat <model>` span per call (GenAI attributes, child of the request's deliver span); no prompt text unless opted in; never the key", async () => {
    const spansOf = (file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; spanId: string; parentSpanId: string | null; kind: number; attributes: Record<string, unknown> });
    for (const captureContent of [false, true]) {
      const dir = join(tempDir("llm-trace"), "ep");
      const trace = join(dir, "..", "trace.jsonl");
      await runEpisode({ world: "aura-scene", seed: 1, condition: "aura-intent", dir, trace: { exporter: "jsonl", file: trace }, config: { ...IMPLICIT_CONFIG, llm: models }, llm: makeLlmGateway(config(server.url, models, { captureContent })).responder });
      const spans = spansOf(trace);
      const chats = spans.filter((x) => x.name.startsWith("chat "));
      expect(chats.map((c) => c.name)).toEqual(["chat fake-intent", "chat fake-answer", "chat fake-intent", "chat fake-answer", "chat fake-intent", "chat fake-answer"]);
      const c = chats[0]!;
      expect(c.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-intent", "gen_ai.response.model": "fake-intent-served", "gen_ai.request.temperature": 0.1, "gen_ai.request.max_tokens": 512, "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20, "server.address": "127.0.0.1", "probetown.llm.role": "intent", "probetown.llm.attempts": 1 });
      // The reply's id and finish reasons, as the server gave them (the trace only: the log has neither).
      expect(c.attributes["gen_ai.response.id"]).toMatch(/^chatcmpl-\d+$/);
      expect(c.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
      expect(readFileSync(join(dir, "log", "000000000000.jsonl"), "utf8")).not.toContain("chatcmpl-");
      const parent = spans.find((x) => x.spanId === c.parentSpanId)!;
      expect(parent.name).toBe("deliver llm.requested");
      const raw = readFileSync(trace, "utf8");
      expect(raw).not.toContain(SECRET);
      if (captureContent) expect(c.attributes["gen_ai.input.messages"]).toMatch(/Gap rubric/);
      else expect(raw).not.toContain("Gap rubric");
    }
  });

  it("a server that echoes the key into its reply: the key is cut from the content before the log, the trace and the answer see it", async () => {
    // The intent call gets prose with the key (invalid twice: logged as llm.failed content), the
    // answer call a valid answer quoting it (logged as llm.completed content, shown as the answer).
    const echo = await fakeServer((b) => {
      return { content: b.messages[0]!.content.includes("Gap rubric") ? `Sorry, the key ${SECRET} is not valid here` : JSON.stringify({ answer: `Your key is ${SECRET}.` }) };
    });
    try {
      const dir = join(tempDir("llm-echo"), "ep");
      const trace = join(dir, "..", "trace.jsonl");
      await runEpisode({ world: "aura-scene", seed: 1, condition: "aura-intent", dir, trace: { exporter: "jsonl", file: trace }, config: { llm: { intent: "fake-intent", planner: null, answer: "fake-answer" } }, llm: makeLlmGateway(config(echo.url, models, { captureContent: true })).responder });
      const records = logRecords(dir);
      expect(ofType<LlmFailedPayload>(records, "llm.failed")[0]!.payload.content).toBe("Sorry, the key [redacted] is not valid here");
      expect(ofType<AnswerGivenPayload>(records, "answer.given")[0]!.payload.text).toContain("Your key is [redacted].");
      expect(readFileSync(join(dir, "log", "000000000000.jsonl"), "utf8")).not.toContain(SECRET);
      expect(readFileSync(trace, "utf8")).toContain("[redacted]");
      expect(readFileSync(trace, "utf8")).not.toContain(SECRET);
      expect((await verifyEpisode(dir)).ok).toBe(true);
    } finally {
      await echo.close();
    }
  });

  it("captureContent: a reply that failed validation is on its chat span (the last as gen_ai.output.messages, each as an event with why), key redacted, a runaway one cut; without it, no content", async () => {
    type Event = { name: string; attributes: Record<string, unknown> };
    const chatsOf = (file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown>; events: Event[] }).filter((x) => x.name.startsWith("chat "));
    const outputOf = (value: unknown): string => (JSON.parse(String(value)) as Array<{ parts: Array<{ content: string }> }>)[0]!.parts[0]!.content;
    // Intent calls: prose quoting the key, then a runaway reply (both invalid: the call falls back).
    const huge = "y".repeat(1_000_000);
    const bad = await fakeServer((b, n) => (b.model !== "fake-intent" ? { content: JSON.stringify({ answer: "ok" }) } : { content: n % 2 === 1 ? `I think Ben is around (key ${SECRET})` : huge }));
    try {
      for (const captureContent of [true, false]) {
        const dir = join(tempDir("llm-invalid-trace"), "ep");
        const trace = join(dir, "..", "trace.jsonl");
        await runEpisode({ world: "aura-scene", seed: 1, condition: "aura-intent", dir, trace: { exporter: "jsonl", file: trace }, config: { llm: { intent: "fake-intent", planner: null, answer: "fake-answer" } }, llm: makeLlmGateway(config(bad.url, models, { captureContent })).responder });
        const failed = ofType<LlmFailedPayload>(logRecords(dir), "llm.failed");
        expect(failed.length).toBeGreaterThan(0);
        expect(failed.every((r) => r.payload.error === "invalid_output")).toBe(true);
        const raw = readFileSync(trace, "utf8");
        expect(raw).not.toContain(SECRET);
        const intent = chatsOf(trace).find((c) => c.name === "chat fake-intent")!;
        const events = intent.events.filter((e) => e.name === "probetown.llm.invalid_output");
        expect(events.map((e) => e.attributes["probetown.llm.phase"])).toEqual(["first", "repair"]);
        if (!captureContent) {
          expect(raw).not.toContain("I think Ben");
          expect(intent.attributes).not.toHaveProperty("gen_ai.output.messages");
          expect(events.every((e) => !("probetown.llm.problem" in e.attributes))).toBe(true);
          continue;
        }
        expect(outputOf(events[0]!.attributes["gen_ai.output.messages"])).toBe("I think Ben is around (key [redacted])");
        expect(events[0]!.attributes["probetown.llm.problem"]).toMatch(/^not valid JSON/);
        // The runaway reply: cut at the longest reply taken for the request (max(20,000, 40 × max_tokens 512)).
        const last = outputOf(intent.attributes["gen_ai.output.messages"]);
        expect(last).toBe(`${"y".repeat(20_480)}… [${1_000_000 - 20_480} more characters not captured]`);
        expect(outputOf(events[1]!.attributes["gen_ai.output.messages"])).toBe(last);
        expect(events[1]!.attributes["probetown.llm.problem"]).toMatch(/the reply is 1000000 characters/);
        expect(raw.length).toBeLessThan(200_000);
      }
    } finally {
      await bad.close();
    }
  });

  it("a fork asked to reuse recorded answers makes zero HTTP requests for requests its parent logged", async () => {
    const dir = join(tempDir("llm-fork"), "parent");
    await runEpisode({ world: "aura-scene", seed: 3, condition: "aura-intent", dir, trace: { exporter: "none" }, config: { ...IMPLICIT_CONFIG, llm: models }, llm: makeLlmGateway(config(server.url, models)).responder });
    const parent = logRecords(dir);
    const before = server.requests;
    // Fork after tick 0 with the parent's own condition: the remaining requests are the parent's.
    const reuse = makeLlmGateway(config(server.url, models, { reuse: true }), { cache: new LlmCache().addRecords(parent) });
    const child = await forkEpisode({ parent: dir, atTick: 0, condition: "aura-intent", dir: join(dir, "..", "child"), trace: { exporter: "none" }, llm: reuse.responder });
    expect(server.requests).toBe(before);
    const completions = ofType<LlmCompletedPayload>(logRecords(child.dir), "llm.completed");
    expect(completions.length).toBeGreaterThan(0);
    expect(completions.every((r) => r.payload.cached === true && r.payload.attempts === 0)).toBe(true);
    // Nothing was spent: the recorded answers' tokens and cost were the parent's (they were counted again).
    expect(reuse.accounting().total).toMatchObject({ cached: completions.length, httpRequests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });
    // The log, recounted, says the same of the child's own records (the eval rows' tokens are read this way).
    const own = logRecords(child.dir).filter((r) => r.seq > child.atSeq);
    expect(usageFromRecords(own).total).toMatchObject({ cached: completions.length, httpRequests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0 });
    // The answers equal the parent's (the same recorded contents).
    const text = (rs: readonly LogRecord[]) => ofType<AnswerGivenPayload>(rs, "answer.given").filter((r) => r.tick > 0).map((r) => r.payload.text);
    expect(text(logRecords(child.dir))).toEqual(text(parent));
    // Without `reuse` the same fork asks the model again.
    await forkEpisode({ parent: dir, atTick: 0, condition: "aura-intent", dir: join(dir, "..", "child2"), trace: { exporter: "none" }, llm: makeLlmGateway(config(server.url, models)).responder });
    expect(server.requests).toBeGreaterThan(before);
  });

  it("resume serves the logged part of an interrupted LLM run from its log and asks only for the rest", async () => {
    const dir = join(tempDir("llm-resume"), "ep");
    await runEpisode({ world: "aura-scene", seed: 5, condition: "no-intent", dir, trace: { exporter: "none" }, config: { ...IMPLICIT_CONFIG, llm: models }, llm: makeLlmGateway(config(server.url, models)).responder });
    const file = join(dir, "log", "000000000000.jsonl");
    const full = readFileSync(file, "utf8");
    const lines = full.trimEnd().split("\n");
    // Cut the log in the middle of tick 1, just after a completion: the run died there.
    const cut = lines.findIndex((l) => l.includes('"tick":1,') && l.includes('"type":"llm.completed"'));
    expect(cut).toBeGreaterThan(0);
    writeFileSync(file, lines.slice(0, cut + 1).join("\n") + "\n");
    const { rmSync } = await import("node:fs");
    rmSync(join(dir, "snapshots"), { recursive: true, force: true });
    const before = server.requests;
    const logged = lines.slice(0, cut + 1).filter((l) => l.includes('"type":"llm.requested"')).length;
    const total = lines.filter((l) => l.includes('"type":"llm.requested"')).length;
    await runEpisode({ world: "aura-scene", seed: 5, condition: "no-intent", dir, trace: { exporter: "none" }, config: { ...IMPLICIT_CONFIG, llm: models }, resume: true, llm: makeLlmGateway(config(server.url, models)).responder });
    expect(server.requests - before).toBe(total - logged);
    const strip = (text: string) => text.trimEnd().split("\n").map((l) => { const r = JSON.parse(l) as Record<string, unknown>; delete r.meta; return JSON.stringify(r); });
    expect(strip(readFileSync(file, "utf8"))).toEqual(strip(full));
  });
});

// ---- eval implicit / eval privacy with --llm ------------------------------------------------------

const HELDOUT = join(import.meta.dirname, "fixtures", "aura-heldout-scene.json");
const PRIVACY = join(import.meta.dirname, "..", "data", "aura", "privacy_queries.json");

/** A parent for the fork tests: run aura-scene (seed 9, aura-intent) with the intent and answer roles at `url`. */
async function parentRun(label: string, url: string, expectedExit = 0): Promise<{ root: string; env: NodeJS.ProcessEnv; parent: LogRecord[] }> {
  const root = tempDir(label);
  writeFileSync(join(root, "scene.json"), JSON.stringify(IMPLICIT_CONFIG));
  const env = { PROBETOWN_LLM_API_KEY: SECRET, OPENAI_API_KEY: "", PROBETOWN_LLM_BASE_URL: "" };
  const run = await cli(["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), "--log", join(root, "parent"), "--trace", "none", "--quiet", "--llm", url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"], env);
  expect(run.code, run.stderr).toBe(expectedExit);
  return { root, env, parent: logRecords(join(root, "parent")) };
}

/** The CLI, in this process (the fake server lives here too), with `env` over the environment. */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args, undefined, env);
  return { code: r.code, stdout: r.out, stderr: r.err };
}

describe("eval with --llm", () => {
  let server: Awaited<ReturnType<typeof fakeServer>>;
  const suite = natsForSuite();
  beforeAll(async () => {
    server = await fakeServer(smartReply);
  });
  afterAll(async () => {
    await server.close();
  });

  it("eval implicit --llm --model role=…: rows and the summary label the LLM backends; a rerun judges the recorded logs with zero HTTP", async () => {
    const out = tempDir("llm-eval");
    const args = ["eval", "implicit", "--file", HELDOUT, "--condition", "aura-intent,no-intent", "--seeds", "42", "--out", out, "--llm", server.url, "--model", "intent=fake-intent", "--model", "planner=fake-planner,answer=fake-answer", "--json"];
    const env = { PROBETOWN_LLM_API_KEY: SECRET, OPENAI_API_KEY: "" };
    const first = await cli(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(new RegExp(`eval: backends: LLM at ${server.url.replace(/[.]/g, "\\.")} \\(intent=fake-intent planner=fake-planner answer=fake-answer; key from the environment\\)`));
    expect(first.stdout + first.stderr).not.toContain(SECRET);
    const summary = JSON.parse(first.stdout) as { backend: string; conditions: Array<{ condition: string; backend: string }>; llm: { baseURL: string; usage: { total: { calls: number; httpRequests: number } } }; results: string };
    expect(summary.backend).toBe("llm");
    expect(summary.conditions.find((c) => c.condition === "aura-intent")!.backend).toBe("answer=llm:fake-answer, intent=llm:fake-intent");
    expect(summary.conditions.find((c) => c.condition === "no-intent")!.backend).toBe("answer=llm:fake-answer, planner=llm:fake-planner");
    expect(summary.llm.usage.total.calls).toBeGreaterThan(30);
    const rows = readFileSync(summary.results, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { backend: string; tokens?: number; log: string });
    expect(rows).toHaveLength(30);
    for (const r of rows) {
      expect(r.backend).toMatch(/llm:fake-answer/);
      expect(r.tokens).toBeGreaterThan(0);
      expect(r.log).toMatch(/-llm$/);
    }
    const before = server.requests;
    const again = await cli(args, env);
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests).toBe(before);
    expect((JSON.parse(again.stdout) as { llm: { usage: { total: { calls: number } } } }).llm.usage.total.calls).toBe(0);
    expect((await verifyEpisode(rows[0]!.log)).ok).toBe(true);
    expect(server.requests).toBe(before);
  });

  it("run aura-scene --llm, then fork --reuse-llm without an endpoint: the child reuses the parent's answers with zero HTTP and verifies", async () => {
    const { root, env, parent } = await parentRun("llm-cli-run", server.url);
    expect(ofType<LlmCompletedPayload>(parent, "llm.completed")).toHaveLength(6);
    const before = server.requests;
    const fork = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "aura-intent", "--reuse-llm", "--log", join(root, "child"), "--trace", "none"], env);
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stderr).toMatch(/6 recorded LLM answer\(s\) of the parent can be served/);
    expect(fork.stderr).toMatch(/the parent's recording answered 4 of the child's 4 model request\(s\)\n/);
    // The summary's model-call line: the recorded answers' tokens were spent by the parent.
    expect(fork.stdout).toContain("\nllm: 4 model calls, none failed · 4 served from a recording · 0 HTTP requests, 0 prompt + 0 completion tokens\n");
    expect(server.requests).toBe(before);
    const child = logRecords(join(root, "child"));
    const completed = ofType<LlmCompletedPayload>(child, "llm.completed");
    expect(completed).toHaveLength(4);
    expect(completed.every((r) => r.payload.cached === true)).toBe(true);
    const verify = await cli(["verify", join(root, "child")], env);
    expect(verify.code, verify.stdout).toBe(0);
    expect(server.requests).toBe(before);
    // Under another condition the child asks other questions: the note says how few were answered.
    const other = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "literal", "--reuse-llm", "--log", join(root, "other"), "--trace", "none"], env);
    expect(other.code, other.stderr).toBe(0);
    const otherLog = logRecords(join(root, "other"));
    const misses = ofType(otherLog, "llm.failed").length;
    expect(misses).toBeGreaterThan(0);
    const served = ofType<LlmCompletedPayload>(otherLog, "llm.completed").filter((r) => r.payload.cached === true).length;
    expect(other.stderr).toContain(`the parent's recording answered ${served} of the child's ${served + misses} model request(s); ${misses} had no identical recorded request and no endpoint, and fell back to the deterministic backend`);
    // A fork keeps its parent's models: --model was silently not applied (and the note named
    // gpt-4o-mini for every role); with --llm the note says whose models are asked.
    const remodel = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "aura-intent", "--llm", server.url, "--model", "gpt-4o", "--log", join(root, "remodel"), "--trace", "none"], env);
    expect(remodel.code).toBe(2);
    expect(remodel.stderr).toContain("--model gpt-4o: a fork keeps its parent's models (they are part of the episode's config); give the endpoint with --llm, or run a new episode with other models");
    const asked = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "aura-intent", "--llm", server.url, "--log", join(root, "asked"), "--trace", "none"], env);
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stderr).toContain(`fork: backends: LLM at ${server.url} (the models of the episode's config; key from the environment)`);
    expect(new Set(ofType<LlmRequestedPayload>(logRecords(join(root, "asked")), "llm.requested").map((r) => r.payload.model))).toEqual(new Set(["fake-intent", "fake-answer"]));
    // A key the endpoint refuses: every call falls back, and the summary says why (it showed only
    // 'fallback from llm:…: http_error' on each answer); the key was asked once, and the run exits 5.
    const refusing = await fakeServer(() => ({ status: 401 }));
    try {
      const refused = await cli(["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), "--log", join(root, "refused"), "--trace", "none", "--llm", refusing.url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"], env);
      expect(refused.code, refused.stderr).toBe(5);
      expect(refused.stdout).toContain("\nllm: 6 model calls, 6 failed and fell back (auth ×6: HTTP 401: fake error 401) · 1 HTTP request, 0 prompt + 0 completion tokens\n");
      expect(refused.stdout + refused.stderr).not.toContain(SECRET);
    } finally {
      await refusing.close();
    }
    const bad = await cli(["run", "auratown", "--seed", "1", "--ticks", "1", "--llm", server.url], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--llm: the auratown world has no LLM roles yet/);
    const modelOnly = await cli(["run", "auratown", "--seed", "1", "--ticks", "1", "--model", "gpt-4o-mini"], env);
    expect(modelOnly.code).toBe(2);
    expect(modelOnly.stderr).toMatch(/--model: the auratown world has no LLM roles yet/);
  });

  it("fork --reuse-llm without an endpoint: a request the parent logged only as a failure gets that failure, so the fork reproduces the parent", async () => {
    // The answer model's endpoint refuses (HTTP 400, not retried): every answer request fails in the parent.
    const refusing = await fakeServer((body) => (body.model === "fake-answer" ? { status: 400 } : smartReply(body)));
    try {
      // Exit 5: no call to the answer model completed (`errors_only` for that model), though the intent model's did.
      const { root, env, parent } = await parentRun("llm-cli-failed", refusing.url, 5);
      const parentFailed = ofType<LlmFailedPayload>(parent, "llm.failed");
      expect(parentFailed.length).toBeGreaterThan(0);
      expect(parentFailed.every((r) => r.payload.error === "http_error")).toBe(true);
      const before = refusing.requests;
      const fork = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "aura-intent", "--reuse-llm", "--log", join(root, "child"), "--trace", "none"], env);
      expect(fork.code, fork.stderr).toBe(0);
      expect(refusing.requests).toBe(before);
      const child = logRecords(join(root, "child"));
      const childFailed = ofType<LlmFailedPayload>(child, "llm.failed");
      const forkedAt = parent.findIndex((r) => r.type === "tick.committed" && r.tick === 0);
      const remainingFailed = parentFailed.filter((r) => r.seq > parent[forkedAt]!.seq);
      // Past its header the child is the parent's remaining log, record for record (a served
      // completion or failure says it was cached, with no HTTP attempt).
      const served = (p: unknown) => {
        const { attempts: _a, cached: _c, ...rest } = p as { attempts?: number; cached?: boolean };
        return rest;
      };
      expect(childFailed.map((r) => served(r.payload))).toEqual(remainingFailed.map((r) => served(r.payload)));
      expect(childFailed.every((r) => r.payload.cached === true && r.payload.attempts === 0)).toBe(true);
      expect(remainingFailed.some((r) => r.payload.attempts > 0)).toBe(true);
      expect(fork.stderr).toContain(`${childFailed.length} got the failure the parent logged for them (no endpoint to retry on) and fell back as the parent did`);
      // The fork's llm line counts no HTTP request or token of the parent's as its own.
      expect(fork.stdout).toMatch(/\nllm: .* · 0 HTTP requests, 0 prompt \+ 0 completion tokens\n/);
      const body = (r: LogRecord) => ({ type: r.type, from: r.from, to: r.to, tick: r.tick, payload: r.type === "llm.completed" || r.type === "llm.failed" ? served(r.payload) : r.payload });
      expect(child.slice(1).map(body)).toEqual(parent.slice(forkedAt + 1).map(body));
    } finally {
      await refusing.close();
    }
  });

  it("fork --nats --reuse-llm: the parent's answers are read from JetStream and served with zero HTTP", async () => {
    const root = tempDir("llm-nats-fork");
    writeFileSync(join(root, "scene.json"), JSON.stringify(IMPLICIT_CONFIG));
    const env = { PROBETOWN_LLM_API_KEY: SECRET, OPENAI_API_KEY: "", PROBETOWN_LLM_BASE_URL: "" };
    const ns = suite.nats.namespace("reuse");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    const run = await cli(["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), ...nats, "--trace", "none", "--quiet", "--llm", server.url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"], env);
    expect(run.code, run.stderr).toBe(0);
    const before = server.requests;
    const fork = await cli(["fork", "aura-scene-s9-aura-intent", "--at", "0", "--condition", "aura-intent", "--reuse-llm", ...nats, "--trace", "none", "--json"], env);
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stderr).toMatch(/the parent's recording answered 4 of the child's 4 model request\(s\)\n/);
    expect(server.requests).toBe(before);
    const child = await readJetStreamLog(suite.nc, ns, JSON.parse(fork.stdout).episode);
    const completed = ofType<LlmCompletedPayload>(child, "llm.completed");
    expect(completed).toHaveLength(4);
    expect(completed.every((r) => r.payload.cached === true)).toBe(true);
    const verify = await cli(["verify", JSON.parse(fork.stdout).episode, ...nats], env);
    expect(verify.code, verify.stdout).toBe(0);
  });

  it("run/fork --json give the model usage the summary prints (from the log); on --nats the llm line and `llm` count the episode's whole log, a resumed run's earlier calls too", async () => {
    const { root, env, parent } = await parentRun("llm-usage-json", server.url);
    const run = await cli(["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), "--log", join(root, "again"), "--trace", "none", "--json", "--llm", server.url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"], env);
    expect(run.code, run.stderr).toBe(0);
    const whole = { calls: 6, failed: 0, cached: 0, httpRequests: 6, promptTokens: 600, completionTokens: 120, costUsd: 0, failures: [] };
    expect(JSON.parse(run.stdout).llm).toEqual(whole);
    // A resumed run (here with nothing left to do) says the episode's usage too, read from its log.
    const resumedFile = await cli(["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), "--log", join(root, "again"), "--trace", "none", "--resume", "--llm", server.url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"], env);
    expect(resumedFile.code, resumedFile.stderr).toBe(0);
    expect(resumedFile.stdout).toContain("\nllm: 6 model calls, none failed · 6 HTTP requests, 600 prompt + 120 completion tokens\n");
    expect(ofType(parent, "llm.completed")).toHaveLength(6);
    const fork = await cli(["fork", join(root, "parent"), "--at", "0", "--condition", "aura-intent", "--reuse-llm", "--log", join(root, "child"), "--trace", "none", "--json"], env);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout).llm).toEqual({ calls: 4, failed: 0, cached: 4, httpRequests: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, failures: [] });
    const deterministic = await cli(["run", "aura-scene", "--seed", "9", "--config", join(root, "scene.json"), "--log", join(root, "none"), "--trace", "none", "--json"], env);
    expect(JSON.parse(deterministic.stdout).llm).toBeNull();

    // The same episode in JetStream, cut in tick 1 just after a completion (the run died there):
    // the resumed run asks only for the rest, and says the episode's usage, not only its own.
    const ns = suite.nats.namespace("usage");
    const nats = ["--nats", suite.nats.url, "--namespace", ns];
    const args = ["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), ...nats, "--trace", "none", "--llm", server.url, "--model", "intent=fake-intent", "--model", "answer=fake-answer"];
    // Another episode first, so the namespace's stream exists.
    expect((await cli(["run", "aura-scene", "--seed", "8", "--config", join(root, "scene.json"), ...nats, "--trace", "none", "--quiet"], env)).code).toBe(0);
    const lines = readFileSync(join(root, "parent", "log", "000000000000.jsonl"), "utf8").trimEnd().split("\n");
    const cut = lines.findIndex((l) => l.includes('"tick":1,') && l.includes('"type":"llm.completed"'));
    expect(cut).toBeGreaterThan(0);
    await jetstream(suite.nc).publish(`pt.${ns}.log.aura-scene-s9-aura-intent`, lines.slice(0, cut + 1).join("\n"));
    const before = server.requests;
    const resumed = await cli([...args, "--resume"], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const logged = lines.slice(0, cut + 1).filter((l) => l.includes('"type":"llm.completed"')).length;
    expect(server.requests - before).toBe(6 - logged);
    expect(resumed.stdout).toContain("\nllm: 6 model calls, none failed · 6 HTTP requests, 600 prompt + 120 completion tokens\n");
    const again = await cli([...args, "--resume", "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ records: 0, llm: whole });
    expect(server.requests - before).toBe(6 - logged);
    const natsFork = await cli(["fork", "aura-scene-s9-aura-intent", "--at", "0", "--condition", "aura-intent", "--reuse-llm", ...nats, "--trace", "none", "--json"], env);
    expect(natsFork.code, natsFork.stderr).toBe(0);
    expect(JSON.parse(natsFork.stdout).llm).toEqual(JSON.parse(fork.stdout).llm);
  });

  it("eval privacy with an LLM config: answers and rows say which backend answered", async () => {
    const result = await runPrivacyEval({ file: PRIVACY, conditions: ["aura-gap-routed", "react"], seeds: [42], out: tempDir("llm-privacy"), llm: config(server.url, { intent: "fake-intent", planner: "fake-planner", answer: "fake-answer" }) });
    expect(result.conditions.map((c) => [c.condition, c.backend])).toEqual([
      ["aura-gap-routed", "answer=llm:fake-answer, intent=llm:fake-intent"],
      ["react", "answer=llm:fake-answer, planner=llm:fake-planner"],
    ]);
    const rows = readFileSync(result.results, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { backend: string; tokens?: number });
    expect(rows).toHaveLength(60);
    expect(rows.every((r) => /llm:fake-answer/.test(r.backend) && (r.tokens ?? 0) > 0)).toBe(true);
    expect(result.llm?.usage.total.failed).toBe(0);
  });

  it("eval privacy against an endpoint that refuses the key: the summary says the calls fell back and that a rerun keeps those cells (--fresh runs them again); exit 5", async () => {
    const refusing = await fakeServer(() => ({ status: 401 }));
    try {
      const out = tempDir("llm-privacy-401");
      const args = ["eval", "privacy", "--file", PRIVACY, "--condition", "aura-gap-routed", "--seeds", "42", "--warmup", "2", "--out", out, "--llm", refusing.url, "--model", "answer=fake-answer", "--model", "none"];
      const first = await cli(args, { PROBETOWN_LLM_API_KEY: SECRET, OPENAI_API_KEY: "", PROBETOWN_LLM_BASE_URL: "" });
      expect(first.code, first.stderr).toBe(5);
      expect(first.stderr).toContain("eval privacy: finished, but the model endpoint refused: 30 model call(s) fell back to the deterministic backends;");
      expect(refusing.requests).toBe(1);
      // Before, the privacy summary did not mention the fallbacks at all (only '30 failed' on the llm line).
      expect(first.stdout).toContain("\nnote: 30 model call(s) fell back to the deterministic backend (why: the llm.failed records in the cells' logs); a rerun serves finished cells from their logs as they are: --fresh runs them again\n");
      expect(first.stdout + first.stderr).not.toContain(SECRET);
    } finally {
      await refusing.close();
    }
  });
});

describe("a model endpoint that refuses the run, or cannot be reached: exit 5 naming what to fix; the logs verify", () => {
  const env = { PROBETOWN_LLM_API_KEY: SECRET, OPENAI_API_KEY: "", PROBETOWN_LLM_BASE_URL: "" };
  /** A port nobody listens on (it was free a moment ago). */
  const deadUrl = async (): Promise<string> => {
    const closed = await fakeServer(() => ({ status: 500 }));
    await closed.close();
    return closed.url;
  };
  const scene = (root: string, url: string, extra: string[] = []) =>
    ["run", "aura-scene", "--seed", "9", "--condition", "aura-intent", "--config", join(root, "scene.json"), "--log", join(root, "run"), "--trace", "none", "--quiet", "--llm", url, "--model", "intent=fake-intent", "--model", "answer=fake-answer", ...extra];
  const implicit = (out: string, url: string, extra: string[] = []) =>
    ["eval", "implicit", "--file", HELDOUT, "--condition", "aura-intent", "--seeds", "42", "--out", out, "--llm", url, "--model", "intent=fake-intent", "--model", "answer=fake-answer", "--model", "planner=none", "--json", ...extra];
  const verified = async (dir: string) => {
    const v = await cli(["verify", dir], env);
    expect(v.code, v.stdout + v.stderr).toBe(0);
  };
  const setup = (label: string) => {
    const root = tempDir(label);
    writeFileSync(join(root, "scene.json"), JSON.stringify(IMPLICIT_CONFIG));
    // Fast retries for the dead endpoint (its calls wait out their backoff).
    writeFileSync(join(root, "llm.json"), JSON.stringify({ backoffMs: 5 }));
    return root;
  };

  it("a refused key (401): run aura-scene and eval implicit ask it once, exit 5 naming the status, the server's message (scrubbed), the endpoint and the key's variable", async () => {
    const refusing = await fakeServer(() => ({ status: 401, error: { message: `Incorrect API key provided: ${SECRET}.`, type: "invalid_request_error", code: "invalid_api_key" } }));
    try {
      const root = setup("refused-401");
      const host = new URL(refusing.url).host;
      const run = await cli(scene(root, refusing.url), env);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain("run: finished, but the model endpoint refused: 6 of 6 model call(s) fell back to the deterministic backends; the log is complete and valid, but not a model run (exit 5)\n");
      expect(run.stderr).toContain(`  key refused by ${host}: HTTP 401: Incorrect API key provided: [redacted].; check the API key variable PROBETOWN_LLM_API_KEY\n`);
      expect(run.stdout + run.stderr).not.toContain(SECRET);
      expect(refusing.requests).toBe(1);
      expect(ofType<LlmFailedPayload>(logRecords(join(root, "run")), "llm.failed").map((r) => r.payload.error)).toEqual(Array(6).fill("auth"));
      await verified(join(root, "run"));
      // The key from OPENAI_API_KEY is named as such.
      const openai = await cli(scene(root, refusing.url, ["--log", join(root, "run-openai")]), { ...env, PROBETOWN_LLM_API_KEY: "", OPENAI_API_KEY: SECRET });
      expect(openai.code).toBe(5);
      expect(openai.stderr).toContain("; check the API key variable OPENAI_API_KEY\n");

      const out = join(root, "eval");
      const before = refusing.requests;
      const evaluated = await cli(implicit(out, refusing.url), env);
      expect(evaluated.code, evaluated.stderr).toBe(5);
      expect(refusing.requests).toBe(before + 1);
      expect(evaluated.stderr).toMatch(/eval implicit: finished, but the model endpoint refused: \d+ model call\(s\) fell back to the deterministic backends; the cells' logs are complete and valid, but not a model run \(exit 5\)\n/);
      expect(evaluated.stderr).toContain(`  key refused by ${host}: HTTP 401: Incorrect API key provided: [redacted].; check the API key variable PROBETOWN_LLM_API_KEY\n`);
      const summary = JSON.parse(evaluated.stdout) as { llm: { endpointProblems: Array<{ kind: string; status: number; live: boolean }> } };
      expect(summary.llm.endpointProblems).toMatchObject([{ kind: "auth", status: 401, live: true }]);
      await verified(out);
      // A rerun serves the cells as they were recorded: still not a model run, and it says how to run them again.
      const again = await cli(implicit(out, refusing.url), env);
      expect(again.code, again.stderr).toBe(5);
      expect(refusing.requests).toBe(before + 1);
      expect(again.stderr).toContain("  key refused by the endpoint: HTTP 401: Incorrect API key provided: [redacted].; check the API key variable PROBETOWN_LLM_API_KEY [recorded in logs served as they are: --fresh runs them again]\n");
    } finally {
      await refusing.close();
    }
  });

  it("an unknown model (404): exit 5 naming the model and --model; the other model's calls still answered", async () => {
    const server = await fakeServer((body) => (body.model === "fake-intent" ? { status: 404, error: { message: `model "${body.model}" not found, try pulling it first`, type: "api_error" } } : smartReply(body)));
    try {
      const root = setup("refused-404");
      const host = new URL(server.url).host;
      const run = await cli(scene(root, server.url), env);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain("run: finished, but the model endpoint refused: 3 of 6 model call(s) fell back to the deterministic backends;");
      expect(run.stderr).toContain(`  model not found: ${host} does not serve model 'fake-intent' (HTTP 404: model "fake-intent" not found, try pulling it first); check --model (GET ${server.url}/models lists the models it serves)\n`);
      expect(server.bodies.filter((b) => b.model === "fake-intent")).toHaveLength(1);
      expect(ofType<LlmCompletedPayload>(logRecords(join(root, "run")), "llm.completed")).toHaveLength(3);
      await verified(join(root, "run"));
      const out = join(root, "eval");
      const evaluated = await cli(implicit(out, server.url), env);
      expect(evaluated.code, evaluated.stderr).toBe(5);
      expect(evaluated.stderr).toContain(`  model not found: ${host} does not serve model 'fake-intent'`);
      expect(server.bodies.filter((b) => b.model === "fake-intent")).toHaveLength(2);
      await verified(out);
    } finally {
      await server.close();
    }
  });

  it("a dead endpoint: exit 5 'could not be reached', naming the host and why", async () => {
    const url = await deadUrl();
    const host = new URL(url).host;
    const root = setup("refused-dead");
    const run = await cli(scene(root, url, ["--llm-config", join(root, "llm.json")]), env);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toContain("run: finished, but the model endpoint could not be reached: 6 of 6 model call(s) fell back to the deterministic backends; the log is complete and valid, but not a model run (exit 5)\n");
    expect(run.stderr).toContain(`  unreachable: no answer from ${host} (connection failed: connect ECONNREFUSED ${host}); is the server running? check --llm ${url}\n`);
    await verified(join(root, "run"));
    const out = join(root, "eval");
    const evaluated = await cli(implicit(out, url, ["--llm-config", join(root, "llm.json")]), env);
    expect(evaluated.code, evaluated.stderr).toBe(5);
    expect(evaluated.stderr).toContain(`  unreachable: no answer from ${host} (connection failed: connect ECONNREFUSED ${host})`);
    await verified(out);
  });

  it("an endpoint that answers every call with HTTP 500 after the retries: run aura-scene and eval implicit exit 5 saying so (status, scrubbed message, endpoint, model); 500s among answered calls keep exit 0", async () => {
    const failing = await fakeServer(() => ({ status: 500, error: { message: `CUDA out of memory (request by ${SECRET})`, type: "server_error" } }));
    try {
      const root = setup("errors-only");
      const host = new URL(failing.url).host;
      const line = `  errors only: ${host} answered no call to model 'fake-intent' with a completion, only errors after the retries (first: HTTP 500: CUDA out of memory (request by [redacted])); check the server's own log (is the model loaded? out of memory?), then run again`;
      const run = await cli(scene(root, failing.url, ["--llm-config", join(root, "llm.json")]), env);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain("run: finished, but the model endpoint answered every call to a model with an error: 6 of 6 model call(s) fell back to the deterministic backends; the log is complete and valid, but not a model run (exit 5)\n");
      expect(run.stderr).toContain(`${line}\n`);
      expect(run.stdout + run.stderr).not.toContain(SECRET);
      expect(failing.requests).toBe(18);
      await verified(join(root, "run"));
      const out = join(root, "eval");
      const evaluated = await cli(implicit(out, failing.url, ["--llm-config", join(root, "llm.json")]), env);
      expect(evaluated.code, evaluated.stderr).toBe(5);
      expect(evaluated.stderr).toMatch(/eval implicit: finished, but the model endpoint answered every call to a model with an error: \d+ model call\(s\) fell back/);
      expect(evaluated.stderr).toContain(line);
      const summary = JSON.parse(evaluated.stdout) as { llm: { endpointProblems: unknown[] } };
      // Both models the eval asks (intent and answer) answered only errors: each is named.
      expect(summary.llm.endpointProblems).toMatchObject([{ kind: "errors_only", status: 500, live: true, model: "fake-intent" }, { kind: "errors_only", status: 500, live: true, model: "fake-answer" }]);
      // Served as recorded, the cells are still not a model run.
      const again = await cli(implicit(out, failing.url, ["--llm-config", join(root, "llm.json")]), env);
      expect(again.code, again.stderr).toBe(5);
      expect(again.stderr).toContain("  errors only: the endpoint answered no call to model 'fake-intent' with a completion, only errors after the retries (first: HTTP 500: CUDA out of memory (request by [redacted])); check the server's own log (is the model loaded? out of memory?), then run again [recorded in logs served as they are: --fresh runs them again]\n");
    } finally {
      await failing.close();
    }
    // Every second request to each model answered 500 (no retry): those calls fell back, the rest are the model's.
    const perModel = new Map<string, number>();
    const flaky = await fakeServer((body) => {
      const n = (perModel.get(body.model) ?? 0) + 1;
      perModel.set(body.model, n);
      return n % 2 === 0 ? { status: 500 } : smartReply(body);
    });
    try {
      const root = setup("some-500");
      writeFileSync(join(root, "llm.json"), JSON.stringify({ backoffMs: 5, maxAttempts: 1 }));
      const run = await cli(scene(root, flaky.url, ["--llm-config", join(root, "llm.json")]).filter((a) => a !== "--quiet"), env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/\nllm: 6 model calls, 2 failed and fell back \(server_error ×2: HTTP 500: fake error 500\)/);
      expect(run.stderr).not.toContain("finished, but");
    } finally {
      await flaky.close();
    }
  });

  it("one transient failure (a timeout, a 503) among answered calls: exit 0, the summary counts it", async () => {
    const server = await fakeServer((body, n) => (n === 1 ? { ...smartReply(body), delayMs: 10_000 } : n === 2 ? { status: 503 } : smartReply(body)));
    try {
      const root = setup("transient");
      // The answered calls must come within the timeout: 500 ms was close for a loaded machine.
      writeFileSync(join(root, "llm.json"), JSON.stringify({ backoffMs: 5, maxAttempts: 1, timeoutMs: 2000 }));
      const run = await cli(scene(root, server.url, ["--llm-config", join(root, "llm.json")]).filter((a) => a !== "--quiet"), env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/\nllm: 6 model calls, 2 failed and fell back \(timeout ×1: the request timed out; server_error ×1: HTTP 503: fake error 503\)/);
      expect(run.stderr).not.toContain("finished, but");
      await verified(join(root, "run"));
    } finally {
      await server.close();
    }
  });
});
