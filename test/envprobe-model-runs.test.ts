// EnvProbe model rows of docs/fidelity.md: a record made from an LLM agent's sweep --log folder
// takes its grid from the sweep's own spec, counts the model calls per role (valid at once, valid
// after the repair turn, failed) and the steps whose beliefs the model wrote or that fell back, and
// renders them marked [model] beside the scripted agent's figures for the same cell. The model is the
// fake OpenAI-compatible server.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fieldNamesOfRequest } from "../actors/envprobe/llm.ts";
import { deterministicCells, envprobeModelRunRecord, envprobeModelRunsSection, readEnvprobeModelRuns } from "../services/envprobe/modelRuns.ts";
import { runSweep, sweepSpecOf } from "../services/envprobe/sweep.ts";
import { makeLlmGateway } from "../services/llm/index.ts";
import { fakeServer, type ChatBody } from "./fakeLlmServer.ts";
import { tempDir } from "./helpers.ts";

const MODEL = "fake-belief";

describe("EnvProbe model-run records for the fidelity report", () => {
  it("counts calls, repairs, fallbacks and belief steps from the logs and renders them beside the deterministic cell", async () => {
    // Horizon 3, two seeds, one policy, one at a time: six belief calls in a known order. The first
    // answer is not JSON (its repair turn answers); the 4th call's answer and its repair are not JSON
    // either, so that step falls back to the scripted update. Every other answer is an empty update.
    let first = 0;
    const server = await fakeServer((b: ChatBody) => {
      const repairTurn = b.messages.length > 2;
      if (!repairTurn) first++;
      expect(fieldNamesOfRequest({ messages: b.messages.map((m) => ({ role: m.role as "user", content: m.content })) })).not.toBeNull();
      if ((!repairTurn && first === 1) || first === 4) return { content: "not json" };
      return { content: JSON.stringify({ updates: [] }) };
    });
    try {
      const dir = tempDir("envprobe-model-runs");
      const log = join(dir, "grid");
      const config = { horizon: 3, llm: { belief: MODEL } };
      const spec = sweepSpecOf({ worlds: "objectstate", regimes: "medium", policies: "envprobe-simple", seeds: "1-2", log, config, workers: 1 });
      const gateway = makeLlmGateway({ baseURL: server.url, apiKey: null, models: { belief: MODEL }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 1 });
      await runSweep(spec, undefined, gateway.responder);

      const record = envprobeModelRunRecord(log, { label: "fake", model: MODEL, size: "0 B, Q4_K_M", measured: "2026-11-29", command: "sweep envprobe --llm fake", commit: "abc1234", load: "3–5", notes: ["a note"] });
      expect(record).toMatchObject({ worlds: ["objectstate"], regimes: ["medium"], policies: ["envprobe-simple"], seeds: [1, 2], config: { horizon: 3 }, roles: { belief: MODEL } });
      expect(record.llm).toMatchObject({ requested: 6, validFirst: 4, repaired: 1, failed: 1, byRole: { belief: { requested: 6, validFirst: 4, repaired: 1, failed: 1 } } });
      expect(record.llm.promptTokens).toBeGreaterThan(0);
      expect(record.cells).toHaveLength(1);
      expect(record.cells[0]).toMatchObject({ world: "objectstate", regime: "medium", policy: "envprobe-simple", n: 2, beliefSteps: { model: 5, fallback: 1 } });

      // The deterministic counterpart is the same cell without the model: the scripted agent's.
      const det = await deterministicCells(record);
      const scripted = await runSweep(sweepSpecOf({ worlds: "objectstate", regimes: "medium", policies: "envprobe-simple", seeds: "1-2", config: { horizon: 3 }, workers: 1 }));
      expect(det).toHaveLength(1);
      expect(det[0]!.accuracy).toBe(scripted.cells[0]!.accuracy);
      expect(det[0]!.beliefSteps).toEqual({ model: 0, fallback: 0 });

      const records = join(dir, "records");
      mkdirSync(records);
      writeFileSync(join(records, "fake.json"), JSON.stringify(record));
      const md = (await envprobeModelRunsSection(readEnvprobeModelRuns(records))).join("\n");
      expect(md).toContain("### Model runs (LLM agent) [model]");
      expect(md).toContain("**[model] fake** — model `fake-belief` (0 B, Q4_K_M), roles belief=fake-belief, seeds 1, 2, config {\"horizon\":3}, commit abc1234, measured 2026-11-29, load 3–5:");
      expect(md).toContain("Model calls: 6 requested, 4 valid at once, 1 valid after repair, 1 failed (fell back)");
      const acc = (x: number) => x.toFixed(3);
      expect(md).toContain(`| objectstate | medium | envprobe-simple | 2 | ${acc(record.cells[0]!.accuracy)} |`);
      expect(md).toContain(`| 5 / 1 |`);
      expect(md).toMatch(new RegExp(`\\| ${acc(det[0]!.accuracy).replace(".", "\\.")} \\| \\d+% \\| [0-9.]+ \\| [0-9.]+ \\| \\d+ of \\d+ \\|$`, "m"));
      expect(md).toContain("- a note");
    } finally {
      await server.close();
    }
  });

  it("names the flag and what was expected when the folder is no sweep's", () => {
    const dir = tempDir("envprobe-model-runs-bad");
    expect(() => envprobeModelRunRecord(dir, { label: "", model: "", size: "", measured: "", command: "", notes: [] })).toThrow(/--log: .* holds no \.envprobe-sweep\.json/);
  });
});
