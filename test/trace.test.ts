import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runEpisode } from "../services/episodes.ts";
import { existsSync, writeFileSync } from "node:fs";
import { logRecords, runCli, tempDir } from "./helpers.ts";

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

describe("--trace on the command line", () => {
  it("console spans go to stderr: `--json` keeps stdout one JSON document", () => {
    const dir = join(tempDir("trace-console"), "ep");
    const r = runCli(["run", "auratown", "--seed", "1", "--ticks", "2", "--log", dir, "--trace", "console", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ episode: "auratown-s1-baseline", ticks: 2 });
    const spans = r.err.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { name: string; traceId: string });
    expect(spans.some((s) => s.name === "episode auratown-s1-baseline")).toBe(true);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  });

  it("a trace file that cannot be written is a usage error naming it, before anything is logged", () => {
    const work = tempDir("trace-unwritable");
    const file = join(work, "a-file");
    writeFileSync(file, "");
    for (const [trace, why] of [[`jsonl:${join(file, "t.jsonl")}`, "a parent of it is a file"], [`jsonl:${work}`, "it is a directory"]] as const) {
      const r = runCli(["run", "auratown", "--seed", "1", "--ticks", "1", "--log", join(work, "ep"), "--trace", trace]);
      expect(r.code, trace).toBe(2);
      expect(r.err, trace).toContain(`trace file ${trace.slice("jsonl:".length)}: cannot open it for writing (${why}); give another with --trace jsonl:<file>, or --trace none`);
    }
    expect(existsSync(join(work, "ep"))).toBe(false);
  });
});
