import { describe, expect, it } from "vitest";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { existsSync, writeFileSync } from "node:fs";
import { firstSegment, logRecords, runCli, tempDir, withoutMetaLine } from "./helpers.ts";
import type { LogRecord } from "../events/record.ts";
import type { ProbeRequestedPayload } from "../actors/aura/events.ts";
import type { EnvprobeDecidedPayload, EnvprobeSteppedPayload } from "../actors/envprobe/events.ts";
import { envprobeWorld, worldSpecOf } from "../actors/envprobe/world.ts";

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}
const spansOf = (file: string): SpanLine[] => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as SpanLine);
/** The span id a record's meta.traceparent names. */
const spanIdOf = (r: LogRecord): string | undefined => r.meta?.traceparent?.split("-")[2];

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
      // The span joins its log line: the record's seq and hash, and whom it went to.
      expect(bySpan.get(spanId)?.attributes).toMatchObject({ "probetown.seq": r.seq, "probetown.hash": r.hash });
      const ids = bySpan.get(spanId)?.attributes["probetown.recipient_ids"] as string[];
      expect(ids).toHaveLength(bySpan.get(spanId)?.attributes["probetown.recipients"] as number);
      if (typeof r.to === "string" && r.to !== "*") expect(ids.every((id) => id === r.to)).toBe(true);
      if (Array.isArray(r.to)) expect(ids).toEqual([...r.to].sort());
    }
    expect(deliveries.some((d) => (d.attributes["probetown.recipient_ids"] as string[]).length > 1)).toBe(true);
    // The header leads to the trace too: its traceparent is the episode span's.
    expect(records[0]!.type).toBe("episode.started");
    expect(records[0]!.meta?.traceparent).toBe(`00-${episode[0].traceId}-${episode[0].spanId}-01`);
    expect(records[0]!.meta?.probetown).toBeTypeOf("string");
  });

  it("a fork's header leads to the child's trace, whose episode span links to the parent's record it forked after; a resumed run continues the episode's trace", async () => {
    const root = tempDir("trace-fork");
    const parentTrace = join(root, "parent.jsonl");
    const parent = await runEpisode({ world: "auratown", seed: 4, ticks: 4, dir: join(root, "parent"), trace: { exporter: "jsonl", file: parentTrace } });
    const committed = logRecords(parent.dir).find((r) => r.type === "tick.committed" && r.tick === 1)!;
    const childTrace = join(root, "child.jsonl");
    const child = await forkEpisode({ parent: parent.dir, atTick: 1, condition: "no-conversation", dir: join(root, "child"), trace: { exporter: "jsonl", file: childTrace } });
    const [header] = logRecords(child.dir);
    expect(header!.type).toBe("episode.forked");
    const childEpisode = spansOf(childTrace).filter((s) => s.name.startsWith("episode "));
    expect(childEpisode).toHaveLength(1);
    expect(spanIdOf(header!)).toBe(childEpisode[0]!.spanId);
    const tickSpan = spansOf(parentTrace).find((s) => s.spanId === spanIdOf(committed))!;
    expect(tickSpan.name).toBe("tick 1");
    expect(childEpisode[0]!.links).toEqual([{ traceId: tickSpan.traceId, spanId: tickSpan.spanId }]);

    // Resume: the log cut in tick 2 (the run died there), its snapshots gone; the resumed run's
    // spans join the first run's trace under its episode span, which the header names.
    const full = readFileSync(firstSegment(parent.dir), "utf8").trimEnd().split("\n");
    const cut = full.findIndex((l) => l.includes('"tick":2,'));
    writeFileSync(firstSegment(parent.dir), full.slice(0, cut + 3).join("\n") + "\n");
    rmSync(join(parent.dir, "snapshots"), { recursive: true, force: true });
    const resumedTrace = join(root, "resumed.jsonl");
    await runEpisode({ world: "auratown", seed: 4, ticks: 4, dir: parent.dir, resume: true, trace: { exporter: "jsonl", file: resumedTrace } });
    const first = spansOf(parentTrace).find((s) => s.name.startsWith("episode "))!;
    const resumed = spansOf(resumedTrace);
    const resumedEpisode = resumed.filter((s) => s.name.startsWith("episode "));
    expect(resumedEpisode).toHaveLength(1);
    expect(resumedEpisode[0]!.parentSpanId).toBe(first.spanId);
    expect(new Set(resumed.map((s) => s.traceId))).toEqual(new Set([first.traceId]));
    const records = logRecords(parent.dir);
    expect(spanIdOf(records[0]!)).toBe(first.spanId);
    expect(records.at(-1)!.meta?.traceparent?.split("-")[1]).toBe(first.traceId);
  });
});

describe("probe spans", () => {
  it("aura-scene: a `probe <tool>` span names the field, target and arguments its request named; the log's bytes are an untraced run's", async () => {
    const root = tempDir("trace-aura-probes");
    // A second-order question: its belief probe names a field (who the belief is about).
    const config = { queries: [{ id: "1", text: "Does Ana think Ben is free to chat?", asker: "Ana" }, { id: "2", text: "Is Ben around?", asker: "Ana" }], order: ["1", "2"] };
    const file = join(root, "trace.jsonl");
    const traced = await runEpisode({ world: "aura-scene", seed: 1, condition: "aura-intent", config, dir: join(root, "traced"), trace: { exporter: "jsonl", file } });
    const untraced = await runEpisode({ world: "aura-scene", seed: 1, condition: "aura-intent", config, dir: join(root, "untraced"), trace: { exporter: "none" } });
    const records = logRecords(traced.dir);
    expect(records.map(withoutMetaLine)).toEqual(logRecords(untraced.dir).map(withoutMetaLine));
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    const probes = spansOf(file).filter((s) => s.name.startsWith("probe "));
    const requested = records.filter((r) => r.type === "probe.requested");
    expect(probes).toHaveLength(requested.length);
    expect(requested.some((r) => (r.payload as ProbeRequestedPayload).field !== null)).toBe(true);
    for (const span of probes) {
      const answer = bySeq.get(span.attributes["probetown.seq"] as number)!;
      const request = bySeq.get(answer.cause!)! as LogRecord<ProbeRequestedPayload>;
      expect(request.type).toBe("probe.requested");
      const p = request.payload;
      expect(span.attributes).toMatchObject({
        "probetown.probe.tool": p.tool,
        "probetown.probe.target": p.target ?? "",
        "probetown.probe.call": p.call,
        "probetown.probe.budget_before": p.budgetBefore,
        ...Object.fromEntries(Object.entries(p.args).map(([k, v]) => [`probetown.probe.arg.${k}`, v])),
      });
      if (p.field === null) expect(span.attributes).not.toHaveProperty("probetown.probe.field");
      else expect(span.attributes["probetown.probe.field"]).toBe(p.field);
    }
    const belief = probes.find((s) => s.name === "probe get_agent_belief_about")!;
    expect(belief.attributes).toMatchObject({ "probetown.probe.target": "Ana", "probetown.probe.field": "Ben", "probetown.probe.arg.believer": "Ana", "probetown.probe.arg.target": "Ben" });
  });

  it("envprobe: a `probe <tool>` span names the probed field (by name), the entity, the fields answered and the budget left; the log's bytes are an untraced run's", async () => {
    const root = tempDir("trace-envprobe-probes");
    const file = join(root, "trace.jsonl");
    const traced = await runEpisode({ world: "envprobe", seed: 3, dir: join(root, "traced"), trace: { exporter: "jsonl", file } });
    const untraced = await runEpisode({ world: "envprobe", seed: 3, dir: join(root, "untraced"), trace: { exporter: "none" } });
    const records = logRecords(traced.dir);
    expect(records.map(withoutMetaLine)).toEqual(logRecords(untraced.dir).map(withoutMetaLine));
    const config = envprobeWorld.applyCondition(envprobeWorld.resolveConfig({}), "envprobe-simple");
    const names = worldSpecOf(config, 3).layout.fields.map((f) => f.name);
    const budget = 7; // the default regime (medium): H = 30, budget ⌊H/4⌋
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    const probes = spansOf(file).filter((s) => s.name.startsWith("probe "));
    const stepped = records.filter((r) => r.type === "envprobe.stepped" && (r.payload as EnvprobeSteppedPayload).kind === "probe");
    expect(probes.length).toBe(stepped.length);
    expect(probes.length).toBeGreaterThan(2);
    for (const span of probes) {
      const step = bySeq.get(span.attributes["probetown.seq"] as number)! as LogRecord<EnvprobeSteppedPayload>;
      const decided = bySeq.get(step.cause!)! as LogRecord<EnvprobeDecidedPayload>;
      expect(decided.type).toBe("envprobe.decided");
      expect(span.attributes).toMatchObject({
        "probetown.probe.action": step.payload.action,
        "probetown.probe.field": names[decided.payload.field],
        "probetown.probe.field_index": decided.payload.field,
        "probetown.probe.answered_fields": step.payload.answer.map(([i]) => names[i]),
        "probetown.probe.budget_after": budget - step.payload.probesUsed,
      });
    }
    // The first probe of this objectstate episode checks an object's location: the span names the
    // object as target and the field as the log's decision names it (which one depends on the policy).
    const first = bySeq.get(bySeq.get(probes[0]!.attributes["probetown.seq"] as number)!.cause!)! as LogRecord<EnvprobeDecidedPayload>;
    const field = names[first.payload.field]!;
    expect(field.startsWith("loc:")).toBe(true);
    expect(probes[0]!.attributes).toMatchObject({
      "probetown.probe.tool": "check_location", "probetown.probe.target": field.slice("loc:".length), "probetown.probe.field": field,
      "probetown.probe.budget_before": budget, "probetown.probe.budget_after": budget - 1,
    });
  });
});

describe("--trace on the command line", () => {
  it("console spans go to stderr: `--json` keeps stdout one JSON document", async () => {
    const dir = join(tempDir("trace-console"), "ep");
    const r = await runCli(["run", "auratown", "--seed", "1", "--ticks", "2", "--log", dir, "--trace", "console", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ episode: "auratown-s1-baseline", ticks: 2 });
    const spans = r.err.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { name: string; traceId: string });
    expect(spans.some((s) => s.name === "episode auratown-s1-baseline")).toBe(true);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
  });

  it("a trace file that cannot be written is a usage error naming it, before anything is logged", async () => {
    const work = tempDir("trace-unwritable");
    const file = join(work, "a-file");
    writeFileSync(file, "");
    for (const [trace, why] of [[`jsonl:${join(file, "t.jsonl")}`, "a parent of it is a file"], [`jsonl:${work}`, "it is a directory"]] as const) {
      const r = await runCli(["run", "auratown", "--seed", "1", "--ticks", "1", "--log", join(work, "ep"), "--trace", trace]);
      expect(r.code, trace).toBe(2);
      expect(r.err, trace).toContain(`trace file ${trace.slice("jsonl:".length)}: cannot open it for writing (${why}); give another with --trace jsonl:<file>, or --trace none`);
    }
    expect(existsSync(join(work, "ep"))).toBe(false);
  });
});
