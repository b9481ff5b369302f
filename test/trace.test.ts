import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runEpisode } from "../services/episodes.ts";
import { logRecords, tempDir } from "./helpers.ts";

describe("episode tracing", () => {
  it("one trace per episode: an episode span, a span per tick and per delivered event, linked from record meta", async () => {
    const dir = join(tempDir("trace"), "ep");
    const file = join(dir, "trace.jsonl");
    const result = await runEpisode({ world: "auratown", seed: 3, ticks: 6, dir, trace: { exporter: "jsonl", file } });
    const spans = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const episode = spans.filter((s) => s.name.startsWith("episode "));
    const ticks = spans.filter((s) => s.name.startsWith("tick "));
    const deliveries = spans.filter((s) => s.name.startsWith("deliver "));
    expect(episode).toHaveLength(1);
    expect(ticks).toHaveLength(6);
    expect(ticks.every((t) => t.parentSpanId === episode[0].spanId)).toBe(true);
    const records = logRecords(result.dir);
    const pumped = records.filter((r) => r.type !== "episode.started" && r.type !== "tick.committed");
    expect(deliveries).toHaveLength(pumped.length);
    const tickIds = new Set(ticks.map((t) => t.spanId));
    expect(deliveries.every((d) => tickIds.has(d.parentSpanId) && d.kind === "PRODUCER")).toBe(true);
    const bySpan = new Map(deliveries.map((d) => [d.spanId, d]));
    for (const r of pumped) {
      const [, traceId, spanId] = String(r.meta?.traceparent).split("-");
      expect(traceId).toBe(episode[0].traceId);
      expect(bySpan.get(spanId)?.name).toBe(`deliver ${r.type}`);
      expect(bySpan.get(spanId)?.attributes["probetown.tick"]).toBe(r.tick);
    }
  });
});
