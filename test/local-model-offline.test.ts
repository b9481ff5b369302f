// The local model's parts that need no model (issue 24): `--llm local` with the model missing or
// corrupt exits 2 naming the path, the expected sha256 and how to install; replay never needs it;
// `llm serve`'s OpenAI-compatible routes over a stand-in client (response_format, usage, errors);
// the grammar schemas of each output name only values its validator takes.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatError, type ChatCall, type ChatClient } from "../infra/openaiClient.ts";
import { makeLlmGateway } from "../services/llm/index.ts";
import type { LocalChatClient } from "../infra/localModelClient.ts";
import { llmRequest } from "../events/llm.ts";
import { AURA_LLM_JSON_SCHEMAS, plannerPlanRequest, plannerStepRequest } from "../actors/aura/llm.ts";
import { ENVPROBE_LLM_JSON_SCHEMAS, BELIEF_OUTPUT } from "../actors/envprobe/llm.ts";
import { callSettings } from "../services/llm/config.ts";
import { MODEL_FILE, MODEL_SHA256 } from "../services/llm/localModel.ts";
import { serveLocalModel } from "../services/llm/serve.ts";
import { runCli, tempDir } from "./helpers.ts";

describe("--llm local without a usable model", () => {
  it("exits 2 naming the path, the expected sha256 and how to install when the model is missing", async () => {
    const cache = tempDir("llm-cache-empty");
    const r = await runCli(["run", "aura-scene", "--seed", "1", "--llm", "local", "--log", join(tempDir("llm-missing"), "ep")], undefined, { PROBETOWN_LLM_CACHE: cache });
    expect(r.code).toBe(2);
    expect(r.err).toContain(join(cache, "model", MODEL_FILE));
    expect(r.err).toContain(MODEL_SHA256);
    expect(r.err).toContain("llm install");
  });

  it("exits 2 naming both hashes when the model file is corrupt", async () => {
    const cache = tempDir("llm-cache-corrupt");
    mkdirSync(join(cache, "model"), { recursive: true });
    writeFileSync(join(cache, "model", MODEL_FILE), "GGUF but not the model");
    const r = await runCli(["run", "envprobe", "--seed", "1", "--llm", "local", "--log", join(tempDir("llm-corrupt"), "ep")], undefined, { PROBETOWN_LLM_CACHE: cache });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/corrupt: sha256 [0-9a-f]{64}, expected/);
    expect(r.err).toContain(MODEL_SHA256);
    expect(r.err).toContain("llm install");
  });

  it("exits 2 for a path of one's own that does not exist", async () => {
    const r = await runCli(["run", "envprobe", "--seed", "1", "--llm", "local:/nonexistent/model.gguf", "--log", join(tempDir("llm-own"), "ep")]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("/nonexistent/model.gguf");
  });

  it("runs one call at a time, waits longer and retries nothing by default", () => {
    const s = callSettings({ baseURL: "local:/x.gguf", apiKey: null, models: {}, concurrency: 8 });
    expect(s).toMatchObject({ concurrency: 1, maxAttempts: 1, timeoutMs: 600_000, backend: "local-llama-cpp" });
  });
});

/** A stand-in for the model: echoes what it was asked, with made-up token counts. */
function standIn(calls: ChatCall[]): LocalChatClient {
  return {
    server: { address: "local", port: 0 },
    stats: { loadMs: 0, calls: 0, promptTokens: 0, evaluatedPromptTokens: 0, completionTokens: 0, promptMs: 0, generationMs: 0 },
    chat: async (call) => {
      calls.push(call);
      if (call.messages.at(-1)?.content === "fail") throw new ChatError("timeout", "too slow", null);
      return { content: JSON.stringify({ schema: call.schema ?? null, json: call.json }), model: "m", usage: { promptTokens: 7, completionTokens: 3 } };
    },
    load: async () => {},
    close: async () => {},
  };
}

describe("llm serve's routes", () => {
  it("serves /v1/models and /v1/chat/completions with json_object, json_schema and usage", async () => {
    const calls: ChatCall[] = [];
    const server = await serveLocalModel(standIn(calls), { model: "m", port: 0 });
    try {
      const models = (await (await fetch(`${server.url}/models`)).json()) as { data: Array<{ id: string }> };
      expect(models.data.map((m) => m.id)).toEqual(["m"]);
      const post = (body: unknown) => fetch(`${server.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
      const r1 = await post({ model: "m", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "x", schema } }, max_tokens: 9, seed: 5, temperature: 0.5 });
      expect(r1.status).toBe(200);
      const b1 = (await r1.json()) as { choices: Array<{ message: { content: string } }>; usage: Record<string, number> };
      expect(JSON.parse(b1.choices[0]!.message.content)).toEqual({ schema, json: true });
      expect(b1.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
      expect(calls[0]).toMatchObject({ maxTokens: 9, seed: 5, temperature: 0.5 });
      const r2 = await post({ model: "m", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_object" } });
      expect(JSON.parse(((await r2.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content)).toEqual({ schema: null, json: true });
      expect((await post({ model: "other", messages: [{ role: "user", content: "hi" }] })).status).toBe(404);
      expect((await post({ model: "m", messages: [] })).status).toBe(400);
      expect((await post({ model: "m", messages: [{ role: "user", content: "fail" }] })).status).toBe(504);
      expect(server.totals).toMatchObject({ completions: 2, promptTokens: 14, completionTokens: 6 });
    } finally {
      await server.close();
    }
  });
});

describe("tokenBudget", () => {
  it("stops asking once a run has spent it: later calls fail as budget and fall back", async () => {
    const calls: ChatCall[] = [];
    const client: ChatClient = { server: { address: "local", port: 0 }, chat: async (call) => (calls.push(call), { content: '{"answer": "x"}', model: "m", usage: { promptTokens: 90, completionTokens: 10 } }) };
    const gateway = makeLlmGateway({ baseURL: "local:/x.gguf", apiKey: null, models: {}, tokenBudget: 150 }, { client });
    const ask = (i: number) => gateway.complete(llmRequest("answer", "m", [{ role: "user", content: `q${i}` }], { json: true, maxTokens: 9, output: "answer", temperature: 0 }, null), "probe/aura");
    const answers = [await ask(1), await ask(2), await ask(3)];
    expect(answers.map((a) => a.type)).toEqual(["llm.completed", "llm.completed", "llm.failed"]);
    expect(answers[2]!.payload).toMatchObject({ error: "budget", attempts: 0, fallback: "deterministic" });
    expect(calls.length).toBe(2);
    expect(gateway.problems()).toEqual([]);
  });
});

describe("grammar schemas", () => {
  it("list only the tools a request offers and the fields and values a belief request allows", () => {
    const intent = llmRequest("intent", "m", [{ role: "user", content: "USER QUERY: q\n\nAVAILABLE_TOOLS: get_agent_plan, get_time" }], { json: true, maxTokens: 9, output: "intent-frame", temperature: 0 }, null);
    const s = AURA_LLM_JSON_SCHEMAS["intent-frame"]!(intent) as { properties: { recommended_probes: { items: { enum: string[] } } } };
    expect(s.properties.recommended_probes.items.enum).toEqual(["get_agent_plan", "get_time"]);
    const belief = llmRequest("belief", "m", [{ role: "user", content: 'FIELDS: ["agent","door:door_1","loc:apple"]' }], { json: true, maxTokens: 9, output: BELIEF_OUTPUT, temperature: 0 }, null);
    const b = ENVPROBE_LLM_JSON_SCHEMAS[BELIEF_OUTPUT]!(belief) as { properties: { updates: { items: { oneOf: Array<{ properties: { field: { enum: string[] }; value: { enum: string[] } } }> } } } };
    const byField = Object.fromEntries(b.properties.updates.items.oneOf.flatMap((o) => o.properties.field.enum.map((f) => [f, o.properties.value.enum])));
    expect(byField["door:door_1"]).toEqual(["?", "open", "locked"]);
    expect(byField.agent).toEqual(["?", "room_0", "room_1"]);
    expect(byField["loc:apple"]).toEqual(["?", "inv", "room_0", "room_1"]);
  });

  it("admit a planner step or plan only of an offered tool, with its own arguments and the scene's people", () => {
    const scene = { summary: "Quay, 08:00.", time: "08:00", focus: "Quay", public: { "Ana Silva": { location: "Quay", action: "mending nets" }, "Rui Costa": { location: "Quay", action: "selling fish" } } };
    const step = plannerStepRequest("m", "react", "Is Ana free?", scene, null, ["get_agent_private_state", "get_time"], 3, [], "q1");
    type Shape = { properties: { action: { const: string }; tool?: { const: string }; arguments?: { properties: Record<string, { enum?: string[] }>; required: string[]; additionalProperties: boolean } } };
    const s = AURA_LLM_JSON_SCHEMAS["planner-step"]!(step) as { oneOf: Shape[] };
    const calls = s.oneOf.filter((o) => o.properties.action.const === "call_tool");
    expect(calls.map((o) => o.properties.tool!.const)).toEqual(["get_agent_private_state", "get_time"]);
    const privateState = calls[0]!.properties.arguments!;
    expect(privateState.required).toEqual(["agent_name"]);
    expect(privateState.properties.agent_name!.enum).toEqual(["Ana Silva", "Rui Costa"]);
    expect(privateState.additionalProperties).toBe(false);
    expect(calls[1]!.properties.arguments!.required).toEqual([]);
    const plan = plannerPlanRequest("m", "Is Ana free?", scene, null, ["get_agent_belief_about"], 3, "q1");
    const p = AURA_LLM_JSON_SCHEMAS["planner-plan"]!(plan) as { properties: { steps: { items: { oneOf: Array<{ properties: { tool: { const: string }; arguments: { required: string[] } } }> } } } };
    expect(p.properties.steps.items.oneOf.map((o) => [o.properties.tool.const, o.properties.arguments.required])).toEqual([["get_agent_belief_about", ["believer", "target"]]]);
  });
});
