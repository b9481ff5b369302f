import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { SpanKind, context, trace } from "@opentelemetry/api";
import { createTelemetry, parseTraceFlag, traceparentOf } from "../infra/telemetry.ts";
import type { JsonlSpan } from "../infra/telemetry.ts";
import { asleepWatch } from "./timing.ts";

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/;

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "probetown-telemetry-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("jsonl exporter", () => {
  it("writes one line per span with parent links, kinds and attributes", async () => {
    await withTempDir(async (dir) => {
      const file = join(dir, "nested", "run", "trace.jsonl");
      const telemetry = createTelemetry({ exporter: "jsonl", file, serviceName: "probetown-test" });
      expect(telemetry.enabled).toBe(true);
      expect(telemetry.description).toContain(file);

      const { tracer } = telemetry;
      const parent = tracer.startSpan("tick", { attributes: { tick: 7 } });
      const ctx = trace.setSpan(context.active(), parent);
      const produce = tracer.startSpan("publish", { kind: SpanKind.PRODUCER, attributes: { "actor.id": "alice", n: 3 } }, ctx);
      const consume = tracer.startSpan(
        "handle",
        { kind: SpanKind.CONSUMER, attributes: { "actor.id": "bob", ok: true, tags: ["a", "b"] }, links: [{ context: produce.spanContext() }] },
        ctx,
      );
      produce.end();
      consume.end();
      parent.end();
      await telemetry.shutdown();
      await telemetry.shutdown(); // idempotent

      const lines = (await readFile(file, "utf8")).split("\n").filter((l) => l !== "");
      expect(lines).toHaveLength(3);
      const spans = lines.map((l) => JSON.parse(l) as JsonlSpan);
      const byName = new Map(spans.map((s) => [s.name, s]));
      const p = byName.get("tick");
      const a = byName.get("publish");
      const b = byName.get("handle");
      if (p === undefined || a === undefined || b === undefined) throw new Error(`missing spans: ${lines.join("\n")}`);

      expect(p.parentSpanId).toBeNull();
      expect(p.spanId).toBe(parent.spanContext().spanId);
      expect(p.traceId).toBe(parent.spanContext().traceId);
      for (const child of [a, b]) {
        expect(child.parentSpanId).toBe(p.spanId);
        expect(child.traceId).toBe(p.traceId);
        expect(child.spanId).not.toBe(p.spanId);
      }
      expect(a.spanId).not.toBe(b.spanId);

      expect(p.kind).toBe("INTERNAL");
      expect(a.kind).toBe("PRODUCER");
      expect(b.kind).toBe("CONSUMER");
      expect(p.attributes).toEqual({ tick: 7 });
      expect(a.attributes).toEqual({ "actor.id": "alice", n: 3 });
      expect(b.attributes).toEqual({ "actor.id": "bob", ok: true, tags: ["a", "b"] });
      expect(b.links).toEqual([{ traceId: a.traceId, spanId: a.spanId }]);
      expect(a.links).toEqual([]);
      expect(p.resource).toEqual({ "service.name": "probetown-test" });
      expect(p.status).toEqual({ code: "UNSET" });

      for (const s of spans) {
        expect(s.startTimeUnixNano).toMatch(/^\d+$/);
        expect(s.endTimeUnixNano).toMatch(/^\d+$/);
        expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)).toBe(true);
        expect(typeof s.durationMs).toBe("number");
        expect(s.durationMs).toBeGreaterThanOrEqual(0);
      }
    });
  });

  it("requires a file", () => {
    expect(() => createTelemetry({ exporter: "jsonl" })).toThrow(/file/);
  });
});

describe("several telemetries in one process (one SDK, a pipeline each)", () => {
  it("each gets only the spans its own tracer started, under its own service name, and shuts down on its own", async () => {
    await withTempDir(async (dir) => {
      const a = createTelemetry({ exporter: "jsonl", file: join(dir, "a.jsonl"), serviceName: "probetown-a" });
      const b = createTelemetry({ exporter: "jsonl", file: join(dir, "b.jsonl") });
      const rootA = a.tracer.startSpan("a-root");
      a.tracer.startSpan("a-child", {}, trace.setSpan(context.active(), rootA)).end();
      // b's span under a's: b's pipeline gets it, in a's trace.
      b.tracer.startSpan("b-under-a", {}, trace.setSpan(context.active(), rootA)).end();
      const active = b.tracer.startActiveSpan("b-active", (span) => {
        const inner = b.tracer.startSpan("b-inner");
        inner.end();
        span.end();
        return inner.spanContext().traceId === span.spanContext().traceId;
      });
      expect(active).toBe(true);
      rootA.end();
      await a.shutdown();
      // a is shut down: b goes on.
      b.tracer.startSpan("b-after").end();
      a.tracer.startSpan("a-after").end();
      await b.shutdown();
      const read = (f: string) => (readFileSync(join(dir, f), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as JsonlSpan);
      const spansA = read("a.jsonl");
      const spansB = read("b.jsonl");
      expect(spansA.map((s) => s.name).sort()).toEqual(["a-child", "a-root"]);
      expect(spansB.map((s) => s.name).sort()).toEqual(["b-active", "b-after", "b-inner", "b-under-a"]);
      expect(spansA.every((s) => s.resource["service.name"] === "probetown-a")).toBe(true);
      expect(spansB.every((s) => s.resource["service.name"] === "probetown")).toBe(true);
      expect(spansB.find((s) => s.name === "b-under-a")!.traceId).toBe(rootA.spanContext().traceId);
      expect(spansB.find((s) => s.name === "b-inner")!.parentSpanId).toBe(spansB.find((s) => s.name === "b-active")!.spanId);
    });
  });
});

describe("traceparentOf", () => {
  it("formats a recording span and returns undefined for a no-op span", async () => {
    await withTempDir(async (dir) => {
      const on = createTelemetry({ exporter: "jsonl", file: join(dir, "t.jsonl") });
      const span = on.tracer.startSpan("x");
      const tp = traceparentOf(span);
      expect(tp).toMatch(TRACEPARENT);
      expect(tp).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      span.end();
      await on.shutdown();

      const off = createTelemetry({ exporter: "none" });
      expect(traceparentOf(off.tracer.startSpan("y"))).toBeUndefined();
    });
  });
});

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** An OTLP URL on a port where nothing listens (it was free a moment ago). */
async function deadCollectorUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1/traces`;
}

/** A local OTLP/HTTP endpoint whose answer `respond` decides; `spans()` counts the spans of the JSON bodies it received. */
async function recordingCollector(respond: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string; spans: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const doc = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
      for (const rs of doc.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) count += ss.spans?.length ?? 0;
      respond(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/v1/traces`, spans: () => count };
}

describe("otlp exporter", () => {
  it("delivers every span of a 5,000-span burst to the collector", async () => {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/v1/traces") {
          received.push({ headers: req.headers, body: Buffer.concat(chunks) });
          res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } else {
          res.writeHead(404).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/v1/traces`;
      const telemetry = createTelemetry({ exporter: "otlp", otlpUrl: url });
      expect(telemetry.enabled).toBe(true);
      expect(telemetry.description).toContain(url);

      const N = 5_000;
      for (let i = 0; i < N; i++) {
        telemetry.tracer.startSpan("burst", { attributes: { i } }).end();
      }
      await telemetry.shutdown();
      expect(telemetry.undelivered()).toBeNull();

      expect(received.length).toBeGreaterThan(0);
      const contentType = String(received[0]?.headers["content-type"] ?? "");
      if (contentType.includes("json")) {
        const ids = new Set<string>();
        const indices = new Set<number>();
        let total = 0;
        for (const r of received) {
          const raw = r.headers["content-encoding"] === "gzip" ? gunzipSync(r.body) : r.body;
          const doc = JSON.parse(raw.toString("utf8")) as {
            resourceSpans?: { scopeSpans?: { spans?: { spanId: string; attributes?: { key: string; value: { intValue?: string | number } }[] }[] }[] }[];
          };
          for (const rs of doc.resourceSpans ?? []) {
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                total++;
                ids.add(s.spanId);
                const attr = s.attributes?.find((a) => a.key === "i");
                if (attr?.value.intValue !== undefined) indices.add(Number(attr.value.intValue));
              }
            }
          }
        }
        expect(total).toBe(N);
        expect(ids.size).toBe(N);
        expect(indices.size).toBe(N);
      } else {
        // Protobuf: can't decode without extra deps; at least every batch must have arrived.
        const bytes = received.reduce((sum, r) => sum + r.body.length, 0);
        expect(received.length).toBeGreaterThanOrEqual(Math.ceil(N / 1024));
        expect(bytes).toBeGreaterThan(N * 20);
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("counts the spans an unreachable collector never got, with the error (the SDK would only tell its silent logger)", async () => {
    const t = createTelemetry({ exporter: "otlp", otlpUrl: await deadCollectorUrl() });
    for (let i = 0; i < 10; i++) t.tracer.startSpan("lost").end();
    await expect(t.flush()).rejects.toThrow(/span export failed/);
    expect(t.undelivered()).toMatchObject({ spans: 10, error: expect.stringMatching(/ECONNREFUSED/) });
    await t.shutdown().catch(() => undefined);
  });

  it("gives up on an absent collector at once instead of retrying every batch with back-off", async () => {
    const t = createTelemetry({ exporter: "otlp", otlpUrl: await deadCollectorUrl() });
    for (let i = 0; i < 3000; i++) t.tracer.startSpan("lost").end(); // three batches
    const waited = asleepWatch();
    await expect(t.flush()).rejects.toThrow(/ECONNREFUSED/);
    // Not a speed figure: the exporter's own retry schedule waits at least 0.8 s (1 s ± 20% jitter)
    // before its first retry, so any retry at all lands above this bound; counted is the time
    // waited, not the time a busy machine took to export (test/timing.ts).
    expect(waited.asleepMs()).toBeLessThan(750);
    expect(t.undelivered()).toMatchObject({ spans: 3000 });
    await t.shutdown().catch(() => undefined);
  });

  it("delivers to a collector that answered while the run kept the event loop busy past the probe's timeout", async () => {
    const { server, url, spans } = await recordingCollector((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    try {
      const t = createTelemetry({ exporter: "otlp", otlpUrl: url });
      // A large town is built synchronously: the probe's 1 s timer and its completed connect are
      // both due when the loop comes back; the collector answered and must get the spans.
      const until = performance.now() + 1500;
      while (performance.now() < until);
      for (let i = 0; i < 10; i++) t.tracer.startSpan("busy").end();
      await t.shutdown();
      expect(t.undelivered()).toBeNull();
      expect(spans()).toBe(10);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("counts every span a collector that never answers did not get, and waits for it once only", async () => {
    // Takes the connection and the request, never replies.
    const { server, url } = await recordingCollector(() => undefined);
    try {
      const t = createTelemetry({ exporter: "otlp", otlpUrl: url });
      // The first batch goes out on the processor's own (timer or size) path while the run goes on,
      // the rest at the end: all of them count, the one in flight included.
      for (let i = 0; i < 1500; i++) t.tracer.startSpan("early").end();
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (let i = 0; i < 2500; i++) t.tracer.startSpan("late").end();
      const waited = asleepWatch();
      await t.flush().catch(() => undefined);
      expect(t.undelivered()).toMatchObject({ spans: 4000, error: expect.stringMatching(/timed out/i) });
      // One export timeout (5 s), not one per batch (the time waited: test/timing.ts).
      expect(waited.asleepMs()).toBeLessThan(8000);
      await t.shutdown().catch(() => undefined);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 20_000);

  it("does not print credentials or query strings of the URL", () => {
    const t = createTelemetry({ exporter: "otlp", otlpUrl: "http://user:secret@127.0.0.1:1/v1/traces?token=abc" });
    expect(t.description).not.toContain("secret");
    expect(t.description).not.toContain("abc");
    expect(t.description).toContain("127.0.0.1:1/v1/traces");
    return t.shutdown();
  });
});

describe("none", () => {
  it("is disabled, non-recording, and flushes/shuts down cleanly", async () => {
    const t = createTelemetry({ exporter: "none" });
    expect(t.enabled).toBe(false);
    expect(t.description).toBe("tracing off");
    const span = t.tracer.startSpan("x", { attributes: { a: 1 } });
    expect(span.isRecording()).toBe(false);
    const child = t.tracer.startSpan("y", {}, trace.setSpan(context.active(), span));
    expect(child.isRecording()).toBe(false);
    child.end();
    span.end();
    await expect(t.flush()).resolves.toBeUndefined();
    await expect(t.shutdown()).resolves.toBeUndefined();
    await expect(t.shutdown()).resolves.toBeUndefined();
  });
});

describe("parseTraceFlag", () => {
  const def = "runs/x/trace.jsonl";
  it("accepts every documented form", () => {
    expect(parseTraceFlag("none", def)).toEqual({ exporter: "none" });
    expect(parseTraceFlag("console", def)).toEqual({ exporter: "console" });
    expect(parseTraceFlag("jsonl", def)).toEqual({ exporter: "jsonl", file: def });
    expect(parseTraceFlag("jsonl:/tmp/t.jsonl", def)).toEqual({ exporter: "jsonl", file: "/tmp/t.jsonl" });
    expect(parseTraceFlag("otlp", def)).toEqual({ exporter: "otlp" }); // the endpoint: OTEL_EXPORTER_OTLP_* or the local collector
    expect(parseTraceFlag("otlp:http://collector:4318/v1/traces", def)).toEqual({
      exporter: "otlp",
      otlpUrl: "http://collector:4318/v1/traces",
    });
  });
  it("rejects bad input naming the flag and the accepted forms", () => {
    expect(() => parseTraceFlag("bogus", def)).toThrow(/--trace/);
    expect(() => parseTraceFlag("bogus", def)).toThrow(/jsonl:<path>/);
    expect(() => parseTraceFlag("jsonl:", def)).toThrow(/--trace/);
    expect(() => parseTraceFlag("otlp:not a url", def)).toThrow(/--trace/);
    expect(() => parseTraceFlag("otlp:ftp://x/y", def)).toThrow(/--trace/);
    expect(() => parseTraceFlag("none:x", def)).toThrow(/--trace/);
    expect(() => parseTraceFlag("otlp:http://u:secret@[bad/v1/traces", def)).toThrow(/^(?!.*secret)/s);
  });
});
