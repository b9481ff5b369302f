// Tracing's cheap path (issue 26): the JSONL line built from a span's fields is the generic
// conversion's text, OTEL_TRACES_SAMPLER decides per run (and a large run is sampled by default),
// and a run that fails still writes its spans. In process; no timing.
import { afterEach, describe, expect, it, vi } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import { createTelemetry, LARGE_RUN_ACTORS, LARGE_RUN_RATIO, spanToJsonl, spanToJsonlLine, type JsonlSpan } from "../infra/telemetry.ts";
import { InputRejected } from "../events/inputRejected.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { embeddedBackend, type Backend } from "../infra/backend.ts";
import { logRecords, tempDir, withoutMetaLine } from "./helpers.ts";

afterEach(() => {
  vi.unstubAllEnvs();
});

const spansIn = (file: string): JsonlSpan[] =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as JsonlSpan)
    : [];

/** Whether the SDK's trace-id ratio sampler keeps a trace. */
const kept = (ratio: number, traceId: string) => new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe("spanToJsonlLine", () => {
  it("is the text of JSON.stringify(spanToJsonl(span)) for every shape of span", async () => {
    const memory = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer("t");
    const root = tracer.startSpan("episode \"quoted\" é ✓", { attributes: { "probetown.episode": "e", n: 3, ok: true, ids: ["a", "b\n"], ratio: 0.25 } });
    const parent = trace.setSpan(context.active(), root);
    const child = tracer.startSpan("deliver agent.moved", { kind: SpanKind.PRODUCER, links: [{ context: root.spanContext() }] }, parent);
    child.addEvent("probe", { field: "x" });
    child.addEvent("bare");
    child.setStatus({ code: SpanStatusCode.ERROR, message: "it broke: \"x\"" });
    child.end();
    const early = tracer.startSpan("at the epoch", { kind: SpanKind.CONSUMER, startTime: [0, 5] }, parent);
    early.setStatus({ code: SpanStatusCode.OK });
    early.end([1, 7]);
    const remote = trace.setSpanContext(ROOT_CONTEXT, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true });
    tracer.startSpan("under a remote parent", { kind: SpanKind.SERVER, attributes: {} }, remote).end();
    root.end();
    const spans = memory.getFinishedSpans();
    expect(spans).toHaveLength(4);
    for (const span of spans) expect(spanToJsonlLine(span)).toBe(JSON.stringify(spanToJsonl(span)));
  });
});

describe("OTEL_TRACES_SAMPLER", () => {
  it("always_off: a traced run writes no span and its records carry no traceparent; the log is the traced run's", async () => {
    const work = tempDir("sampler-off");
    const traced = await runEpisode({ world: "auratown", seed: 5, ticks: 3, dir: join(work, "on"), trace: { exporter: "jsonl", file: join(work, "on", "trace.jsonl") } });
    vi.stubEnv("OTEL_TRACES_SAMPLER", "always_off");
    const off = await runEpisode({ world: "auratown", seed: 5, ticks: 3, dir: join(work, "off"), trace: { exporter: "jsonl", file: join(work, "off", "trace.jsonl") } });
    expect(spansIn(join(work, "on", "trace.jsonl")).length).toBeGreaterThan(3);
    expect(spansIn(join(work, "off", "trace.jsonl"))).toEqual([]);
    expect(off.traceDescription).toContain("sampled: always_off");
    expect(off.traceSampling).toBe("always_off");
    expect(traced.traceSampling).toBeUndefined();
    const records = logRecords(off.dir);
    expect(records.some((r) => r.meta?.traceparent !== undefined)).toBe(false);
    expect(records.map(withoutMetaLine)).toEqual(logRecords(traced.dir).map(withoutMetaLine));
  });

  it("traceidratio: exactly the traces the SDK's ratio sampler keeps are written; parentbased_traceidratio's children follow their root", async () => {
    const work = tempDir("sampler-ratio");
    for (const name of ["traceidratio", "parentbased_traceidratio"]) {
      vi.stubEnv("OTEL_TRACES_SAMPLER", name);
      vi.stubEnv("OTEL_TRACES_SAMPLER_ARG", "0.5");
      const file = join(work, `${name}.jsonl`);
      const telemetry = createTelemetry({ exporter: "jsonl", file });
      expect(telemetry.description).toContain(`sampled: ${name} 0.5`);
      const roots = Array.from({ length: 200 }, (_, i) => telemetry.tracer.startSpan(`root ${i}`, { root: true }));
      const recording = roots.map((r) => r.isRecording());
      for (const root of roots) {
        telemetry.tracer.startSpan("child", {}, trace.setSpan(context.active(), root)).end();
        root.end();
      }
      await telemetry.shutdown();
      const written = spansIn(file);
      const expected = roots.filter((r) => kept(0.5, r.spanContext().traceId));
      // Some kept, some not: the ratio was honoured, not all-or-nothing.
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(roots.length);
      expect(new Set(written.filter((s) => s.name.startsWith("root ")).map((s) => s.traceId))).toEqual(new Set(expected.map((r) => r.spanContext().traceId)));
      // A child shares its root's trace id, so both samplers keep it exactly when they keep its root.
      expect(written.filter((s) => s.name === "child").map((s) => s.traceId).sort()).toEqual(expected.map((r) => r.spanContext().traceId).sort());
      expect(roots.every((r, i) => recording[i] === kept(0.5, r.spanContext().traceId))).toBe(true);
    }
  });

  it("without the variable a small run is traced whole and a large one by parent-based trace-id ratio; the variable wins; a bad value is a usage error", async () => {
    const work = tempDir("sampler-default");
    const small = createTelemetry({ exporter: "jsonl", file: join(work, "small.jsonl"), actors: LARGE_RUN_ACTORS });
    const large = createTelemetry({ exporter: "jsonl", file: join(work, "large.jsonl"), actors: LARGE_RUN_ACTORS + 1 });
    expect(small.description).toBe(`traces → ${join(work, "small.jsonl")}`);
    expect(large.description).toContain(`sampled: parentbased_traceidratio ${LARGE_RUN_RATIO}`);
    const roots = Array.from({ length: 100 }, () => large.tracer.startSpan("episode", { root: true }));
    for (const root of roots) root.end();
    small.tracer.startSpan("episode").end();
    await Promise.all([small.shutdown(), large.shutdown()]);
    expect(spansIn(join(work, "small.jsonl"))).toHaveLength(1);
    expect(spansIn(join(work, "large.jsonl")).map((s) => s.traceId).sort()).toEqual(roots.filter((r) => kept(LARGE_RUN_RATIO, r.spanContext().traceId)).map((r) => r.spanContext().traceId).sort());

    vi.stubEnv("OTEL_TRACES_SAMPLER", "always_on");
    const forced = createTelemetry({ exporter: "jsonl", file: join(work, "forced.jsonl"), actors: 10_000 });
    expect(forced.description).toBe(`traces → ${join(work, "forced.jsonl")}`);
    await forced.shutdown();

    vi.stubEnv("OTEL_TRACES_SAMPLER", "jaeger_remote");
    expect(() => createTelemetry({ exporter: "jsonl", file: join(work, "bad.jsonl") })).toThrow(InputRejected);
    vi.stubEnv("OTEL_TRACES_SAMPLER", "traceidratio");
    vi.stubEnv("OTEL_TRACES_SAMPLER_ARG", "1.5");
    expect(() => createTelemetry({ exporter: "jsonl", file: join(work, "bad.jsonl") })).toThrow(InputRejected);
    expect(existsSync(join(work, "bad.jsonl"))).toBe(false);
  });
});

describe("a run that fails", () => {
  it("still writes its spans: the episode span and every tick it ran, each delivery under its tick", async () => {
    const work = tempDir("trace-failed");
    const file = join(work, "trace.jsonl");
    class Stop extends Error {}
    const failed = runEpisode({
      world: "auratown",
      seed: 5,
      ticks: 6,
      dir: join(work, "ep"),
      trace: { exporter: "jsonl", file },
      observer: {
        onTick: (result) => {
          if (result.tick === 2) throw new Stop("stopped after tick 2");
        },
      },
    });
    await expect(failed).rejects.toBeInstanceOf(Stop);
    const spans = spansIn(file);
    const episode = spans.filter((s) => s.name.startsWith("episode "));
    expect(episode).toHaveLength(1);
    expect(spans.filter((s) => s.name.startsWith("tick ")).map((s) => s.name).sort()).toEqual(["tick 0", "tick 1", "tick 2"]);
    const ticks = new Set(spans.filter((s) => s.name.startsWith("tick ")).map((s) => s.spanId));
    const deliveries = spans.filter((s) => s.name.startsWith("deliver "));
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.parentSpanId !== null && ticks.has(d.parentSpanId))).toBe(true);
    // Every record the run logged leads to a span in the file.
    const ids = new Set(spans.map((s) => s.spanId));
    const traced = logRecords(join(work, "ep")).filter((r) => r.meta?.traceparent !== undefined);
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.every((r) => ids.has(r.meta!.traceparent!.split("-")[2]!))).toBe(true);
  });

  it("that fails in the middle of a tick ends that tick's span and its open deliveries with an error status, and writes them", async () => {
    const work = tempDir("trace-failed-mid-tick");
    const file = join(work, "trace.jsonl");
    class HostGone extends Error {}
    let requests = 0;
    // The in-process transport, failing its 40th request (a delivery in the middle of a tick).
    const backend: Backend = {
      ...embeddedBackend,
      transports: {
        open: () => {
          const transport = embeddedBackend.transports.open();
          const request = transport.request.bind(transport);
          transport.request = ((...args: Parameters<typeof request>) => (++requests === 40 ? Promise.reject(new HostGone("host gone")) : request(...args))) as typeof request;
          return transport;
        },
      },
    };
    await expect(runEpisode({ world: "auratown", seed: 5, ticks: 6, dir: join(work, "ep"), trace: { exporter: "jsonl", file } }, backend)).rejects.toBeInstanceOf(HostGone);
    const spans = spansIn(file);
    const failedTicks = spans.filter((s) => s.name.startsWith("tick ") && s.status.code === "ERROR");
    expect(failedTicks).toHaveLength(1);
    expect(failedTicks[0]!.status.message).toBe("host gone");
    const failedDeliveries = spans.filter((s) => s.name.startsWith("deliver ") && s.status.code === "ERROR");
    expect(failedDeliveries.length).toBeGreaterThan(0);
    expect(failedDeliveries.every((d) => d.parentSpanId === failedTicks[0]!.spanId)).toBe(true);
    // Every record the run logged leads to a span in the file, the failed tick's too.
    const ids = new Set(spans.map((s) => s.spanId));
    const traced = logRecords(join(work, "ep")).filter((r) => r.meta?.traceparent !== undefined);
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.every((r) => ids.has(r.meta!.traceparent!.split("-")[2]!))).toBe(true);
  });
});
