// The gateway's timing on a fake clock: retries and their backoff (exponential, capped, stretched
// to a Retry-After), the per-attempt timeout handed to the client, the JSON-mode re-ask, the
// concurrency cap and the first call's gate (the waiting notice's, over HTTP, is in
// llm-gateway.test.ts). The model is a scripted client
// whose replies take fake time, so every assertion is about exact milliseconds and none depends on
// how fast the machine is. Only setTimeout/clearTimeout, performance and Date are faked:
// setImmediate stays real, so the effect runtime's own scheduling runs as it does in production.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { llmRequest, type LlmFailedPayload } from "../events/llm.ts";
import { ChatError, type ChatCall, type ChatClient, type ChatResult } from "../infra/openaiClient.ts";
import { makeLlmGateway, type LlmAnswer, type LlmConfig } from "../services/llm/index.ts";

type Outcome = { readonly reply: string; readonly afterMs?: number } | { readonly error: ChatError; readonly afterMs?: number } | { readonly hang: true };

const OK = "ok";
/** The output schema of these requests: the reply must be "ok". */
const outputs = { ok: (content: string) => (content === OK ? null : `expected ok, got ${content}`) };
const ask = (i: number, model = "m") => llmRequest("answer", model, [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 10, output: "ok", temperature: 0 }, String(i));
const config = (extra: Partial<LlmConfig> = {}): LlmConfig => ({ baseURL: "http://127.0.0.1:8000/v1", apiKey: null, models: { answer: "m" }, backoffMs: 500, timeoutMs: 60_000, maxAttempts: 3, ...extra });
const http = (status: number, retryAfterMs: number | null = null): ChatError =>
  new ChatError(status === 429 ? "rate_limit" : status >= 500 ? "server_error" : status === 401 ? "auth" : "http_error", `HTTP ${status}: fake`, status, retryAfterMs);

/** A model client whose every request is kept (when, on the fake clock, and how) and answered as `outcome` says. */
function scripted(outcome: (call: ChatCall, n: number) => Outcome) {
  const t0 = performance.now();
  const sent: Array<{ at: number; json: boolean; timeoutMs: number; last: string }> = [];
  let inFlight = 0;
  let peak = 0;
  const client: ChatClient = {
    server: { address: "127.0.0.1", port: 8000 },
    chat: (call) =>
      new Promise<ChatResult>((resolve, reject) => {
        sent.push({ at: performance.now() - t0, json: call.json, timeoutMs: call.timeoutMs, last: call.messages.at(-1)!.content });
        peak = Math.max(peak, ++inFlight);
        const o = outcome(call, sent.length);
        const settle = (): void => {
          inFlight--;
          if ("hang" in o) reject(new ChatError("timeout", "the request timed out", null));
          else if ("error" in o) reject(o.error);
          else resolve({ content: o.reply, model: `${call.model}-served`, usage: { promptTokens: 10, completionTokens: 2 } });
        };
        // A hung request is cut at the call's timeout, as the openai client does.
        const after = "hang" in o ? call.timeoutMs : o.afterMs;
        if (after === undefined) settle();
        else setTimeout(settle, after);
      }),
  };
  return { client, sent, peak: () => peak };
}

/** Lets promise jobs and the effect runtime's scheduled tasks (real setImmediate) run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};
/** Moves the fake clock on by `ms`, then lets what became due run. */
const tick = async (ms: number): Promise<void> => {
  vi.advanceTimersByTime(ms);
  await settle();
};
/** A call's answer, once it has one (undefined until then). */
const track = (p: Promise<LlmAnswer>) => {
  const box: { answer?: LlmAnswer } = {};
  void p.then((a) => (box.answer = a));
  return box;
};
const failure = (a: LlmAnswer | undefined) => a?.payload as LlmFailedPayload | undefined;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("retries and backoff, on a fake clock", () => {
  it("a 5xx is retried after backoffMs, doubled per retry (500, then 1000 ms), then fails with every attempt counted", async () => {
    const s = scripted(() => ({ error: http(503) }));
    const gateway = makeLlmGateway(config(), { client: s.client, outputs });
    const call = track(gateway.complete(ask(1), "agent/x"));
    await settle();
    expect(s.sent.map((r) => r.at)).toEqual([0]);
    await tick(499);
    expect(s.sent).toHaveLength(1);
    await tick(1);
    expect(s.sent.map((r) => r.at)).toEqual([0, 500]);
    await tick(999);
    expect(s.sent).toHaveLength(2);
    expect(call.answer).toBeUndefined();
    await tick(1);
    expect(s.sent.map((r) => r.at)).toEqual([0, 500, 1500]);
    // The last attempt's failure ends the call at once: no wait after it.
    expect(failure(call.answer)).toMatchObject({ error: "server_error", attempts: 3, fallback: "deterministic", message: "HTTP 503: fake" });
    expect(gateway.httpRequests).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the backoff doubles up to 8 s and stays there: 3, 6, 8, 8 s", async () => {
    const s = scripted(() => ({ error: http(500) }));
    const gateway = makeLlmGateway(config({ backoffMs: 3000, maxAttempts: 5 }), { client: s.client, outputs });
    const call = track(gateway.complete(ask(1), "agent/x"));
    await settle();
    for (const wait of [3000, 6000, 8000, 8000]) {
      await tick(wait - 1);
      const before = s.sent.length;
      await tick(1);
      expect(s.sent.length).toBe(before + 1);
    }
    expect(s.sent.map((r) => r.at)).toEqual([0, 3000, 9000, 17_000, 25_000]);
    expect(failure(call.answer)).toMatchObject({ error: "server_error", attempts: 5 });
  });

  it("a Retry-After longer than the backoff is waited, up to 30 s; a shorter one waits the backoff", async () => {
    for (const [retryAfterMs, waited] of [[20_000, 20_000], [60_000, 30_000], [100, 500]] as const) {
      const s = scripted((_c, n) => (n === 1 ? { error: http(429, retryAfterMs) } : { reply: OK }));
      const gateway = makeLlmGateway(config(), { client: s.client, outputs });
      const call = track(gateway.complete(ask(1), "agent/x"));
      await settle();
      await tick(waited - 1);
      expect(s.sent).toHaveLength(1);
      await tick(1);
      expect(s.sent.map((r) => r.at)).toEqual([0, waited]);
      expect(call.answer).toMatchObject({ type: "llm.completed", payload: { attempts: 2 } });
    }
  });

  it("a refusal (401) or another 4xx is not retried: one attempt, no wait", async () => {
    for (const [status, error] of [[401, "auth"], [422, "http_error"]] as const) {
      const s = scripted(() => ({ error: http(status) }));
      const gateway = makeLlmGateway(config(), { client: s.client, outputs });
      const call = track(gateway.complete(ask(1), "agent/x"));
      await settle();
      expect(failure(call.answer)).toMatchObject({ error, attempts: 1 });
      expect(s.sent).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
    }
  });

  it("a server that refuses JSON mode (400) is asked again at once without it; that re-ask is not one of the maxAttempts", async () => {
    const s = scripted((_c, n) => (n === 1 ? { error: http(400) } : n === 2 ? { error: http(503) } : { reply: OK }));
    const gateway = makeLlmGateway(config({ maxAttempts: 2 }), { client: s.client, outputs });
    const call = track(gateway.complete(ask(1), "agent/x"));
    await settle();
    expect(s.sent.map((r) => [r.at, r.json])).toEqual([[0, true], [0, false]]);
    await tick(500);
    expect(s.sent.map((r) => [r.at, r.json])).toEqual([[0, true], [0, false], [500, false]]);
    expect(call.answer).toMatchObject({ type: "llm.completed", payload: { attempts: 3 } });
  });

  it("each attempt is given timeoutMs; one that times out is retried after the backoff, and the last ends the call", async () => {
    const s = scripted(() => ({ hang: true }));
    const gateway = makeLlmGateway(config({ timeoutMs: 150, maxAttempts: 2 }), { client: s.client, outputs });
    const call = track(gateway.complete(ask(1), "agent/x"));
    await settle();
    await tick(150);
    expect(s.sent.map((r) => r.at)).toEqual([0]);
    await tick(499);
    expect(s.sent).toHaveLength(1);
    await tick(1);
    expect(s.sent.map((r) => [r.at, r.timeoutMs])).toEqual([[0, 150], [650, 150]]);
    await tick(149);
    expect(call.answer).toBeUndefined();
    await tick(1);
    expect(failure(call.answer)).toMatchObject({ error: "timeout", attempts: 2, message: "the request timed out" });
  });

  it("the repair attempt has retries of its own", async () => {
    const s = scripted((_c, n) => (n === 1 ? { reply: "nope" } : n === 2 ? { error: http(503) } : { reply: OK }));
    const gateway = makeLlmGateway(config(), { client: s.client, outputs });
    const call = track(gateway.complete(ask(1), "agent/x"));
    await settle();
    expect(s.sent.map((r) => r.at)).toEqual([0, 0]);
    expect(s.sent[1]!.last).toMatch(/^Your previous reply could not be used: expected ok, got nope\./);
    await tick(500);
    expect(s.sent.map((r) => r.at)).toEqual([0, 0, 500]);
    expect(call.answer).toMatchObject({ type: "llm.completed", payload: { attempts: 3, repaired: true, usage: { promptTokens: 20, completionTokens: 4 } } });
  });
});

describe("concurrency and the first call's gate, on a fake clock", () => {
  it("at most `concurrency` calls in flight, served in the order they came; the first call goes alone until its first attempt ends", async () => {
    const s = scripted(() => ({ reply: OK, afterMs: 100 }));
    const gateway = makeLlmGateway(config({ concurrency: 2 }), { client: s.client, outputs });
    const calls = [1, 2, 3, 4, 5].map((i) => track(gateway.complete(ask(i), "agent/x")));
    await settle();
    expect(s.sent.map((r) => [r.at, r.last])).toEqual([[0, "q1"]]);
    await tick(100);
    expect(s.sent.map((r) => [r.at, r.last])).toEqual([[0, "q1"], [100, "q2"], [100, "q3"]]);
    await tick(100);
    expect(s.sent.map((r) => [r.at, r.last])).toEqual([[0, "q1"], [100, "q2"], [100, "q3"], [200, "q4"], [200, "q5"]]);
    await tick(100);
    expect(calls.every((c) => c.answer?.type === "llm.completed")).toBe(true);
    expect(s.peak()).toBe(2);
  });

  it("the gate opens after the first call's first attempt, its backoff included", async () => {
    const s = scripted((c, n) => (n === 1 ? { error: http(503) } : { reply: OK, afterMs: c.messages[0]!.content === "q1" ? 0 : 10 }));
    const gateway = makeLlmGateway(config({ concurrency: 2 }), { client: s.client, outputs });
    const calls = [1, 2].map((i) => track(gateway.complete(ask(i), "agent/x")));
    await settle();
    await tick(499);
    expect(s.sent.map((r) => [r.at, r.last])).toEqual([[0, "q1"]]);
    await tick(1);
    expect(s.sent.map((r) => [r.at, r.last])).toEqual([[0, "q1"], [500, "q1"], [500, "q2"]]);
    await tick(10);
    expect(calls.map((c) => c.answer?.payload.attempts)).toEqual([2, 1]);
  });

  it("the calls behind the gate see what the first call met: with unreachableAfter 1, a failure to connect fails them unasked", async () => {
    const s = scripted(() => ({ error: new ChatError("network", "connection failed: connect ECONNREFUSED 127.0.0.1:8000", null) }));
    const gateway = makeLlmGateway(config({ concurrency: 3, maxAttempts: 1, unreachableAfter: 1 }), { client: s.client, outputs });
    const calls = [1, 2, 3].map((i) => track(gateway.complete(ask(i), "agent/x")));
    await settle();
    expect(s.sent).toHaveLength(1);
    expect(calls.map((c) => [failure(c.answer)?.error, c.answer?.payload.attempts])).toEqual([["network", 1], ["network", 0], ["network", 0]]);
    expect(failure(calls[1]!.answer)?.message).toBe("endpoint unreachable: 1 calls in a row got no answer (could not connect) from 127.0.0.1:8000; not asked again in this run");
  });
});
