// Issue 22 item 7: tracing starts through NodeSDK, so the standard OTEL_* variables work, and every
// span reaches one local OTLP/HTTP collector (test/otlpCollector.ts): a run's, and a traced sweep's
// over two workers, one trace per episode.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostname } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import type { LogRecord } from "../events/record.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { logRecords, startCli, tempDir, withoutMetaLine } from "./helpers.ts";
import { natsForSuite } from "./natsServer.ts";
import { NO_OTEL_ENV, startOtlpCollector, type CollectedSpan, type OtlpCollector } from "./otlpCollector.ts";

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
const PRODUCER = 4;

let collector: OtlpCollector;
beforeAll(async () => {
  collector = await startOtlpCollector();
});
afterAll(() => collector.close());

/** The spans received since `from` (a count of spans seen before). */
const since = (from: number): CollectedSpan[] => collector.spans().slice(from);

describe("run --trace otlp with the OTEL_* variables", () => {
  it("OTEL_EXPORTER_OTLP_ENDPOINT: every span reaches the collector, deliver spans carry their record's seq and hash, the resource says service, version, host and OTEL_RESOURCE_ATTRIBUTES; no header value in any span", async () => {
    const before = collector.spans().length;
    const dir = join(tempDir("otel-run"), "ep");
    const r = await startCli(["run", "auratown", "--seed", "5", "--ticks", "2", "--log", dir, "--trace", "otlp", "--json"], {
      ...NO_OTEL_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,probetown.test.run=otel",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer sekrit-collector-token",
    }).done;
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/could not be delivered/);
    const spans = since(before);
    const records = logRecords(dir);
    // One trace, all of it here: the episode span, a span per tick and one per pumped record.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(spans.filter((s) => s.name === "episode auratown-s5-baseline")).toHaveLength(1);
    const deliveries = spans.filter((s) => s.name.startsWith("deliver ") && s.kind === PRODUCER);
    const pumped = records.filter((r) => r.type !== "episode.started" && r.type !== "tick.committed");
    expect(deliveries).toHaveLength(pumped.length);
    // A span joins its log line: seq and hash, and the span the record's meta names.
    const bySeq = new Map(deliveries.map((s) => [s.attributes["probetown.seq"] as number, s]));
    for (const record of pumped) {
      const span = bySeq.get(record.seq)!;
      expect(span.attributes["probetown.hash"]).toBe(record.hash);
      expect(span.name).toBe(`deliver ${record.type}`);
      expect(record.meta?.traceparent).toBe(`00-${span.traceId}-${span.spanId}-01`);
    }
    expect(deliveries.some((s) => (s.attributes["probetown.recipient_ids"] as string[]).includes("env/auratown"))).toBe(true);
    // The resource: probetown's defaults, the host detector's and OTEL_RESOURCE_ATTRIBUTES'.
    expect(spans[0]!.resource).toMatchObject({
      "service.name": "probetown",
      "service.version": VERSION,
      "host.name": hostname(),
      "telemetry.sdk.language": "nodejs",
      "deployment.environment.name": "test",
      "probetown.test.run": "otel",
    });
    // The collector's header was sent to it, and went nowhere else.
    const posts = collector.requests().filter((q) => q.path === "/v1/traces");
    expect(posts.at(-1)!.headers.authorization).toBe("Bearer sekrit-collector-token");
    expect(JSON.stringify(spans)).not.toContain("sekrit");
    expect(readFileSync(join(dir, "log", "000000000000.jsonl"), "utf8")).not.toContain("sekrit");
  });

  it("OTEL_SERVICE_NAME names the service and OTEL_TRACES_SAMPLER decides what is sampled; the log's records are the same either way", async () => {
    const work = tempDir("otel-sampler");
    const before = collector.spans().length;
    const named = await startCli(["run", "auratown", "--seed", "6", "--ticks", "1", "--log", join(work, "named"), "--trace", "otlp", "-q"], {
      ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_SERVICE_NAME: "town-under-test", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1",
    }).done;
    expect(named.code, named.err).toBe(0);
    const spans = since(before);
    expect(spans.length).toBeGreaterThan(3);
    expect(new Set(spans.map((s) => s.resource["service.name"]))).toEqual(new Set(["town-under-test"]));

    const between = collector.spans().length;
    const off = await startCli(["run", "auratown", "--seed", "6", "--ticks", "1", "--log", join(work, "off"), "--trace", "otlp", "-q"], {
      ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_SAMPLER: "always_off",
    }).done;
    expect(off.code, off.err).toBe(0);
    expect(since(between)).toEqual([]);
    const sampledOut = logRecords(join(work, "off"));
    // Nothing sampled, no traceparent; the records themselves are the sampled run's.
    expect(sampledOut.some((r) => r.meta?.traceparent !== undefined)).toBe(false);
    expect(sampledOut.map(withoutMetaLine)).toEqual(logRecords(join(work, "named")).map(withoutMetaLine));
  });

  it("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf sends protobuf to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SDK_DISABLED turns tracing off", async () => {
    const work = tempDir("otel-proto");
    const before = collector.requests().length;
    // grpc is refused before anything runs, and names no endpoint of this collector: it runs beside proto (a process start less to wait for).
    const [proto, grpc] = await Promise.all([
      startCli(["run", "auratown", "--seed", "7", "--ticks", "1", "--log", join(work, "proto"), "--trace", "otlp"], {
        ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.endpoint}/v1/traces`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      }).done,
      startCli(["run", "auratown", "--seed", "7", "--ticks", "1", "--log", join(work, "grpc"), "--trace", "otlp"], { ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }).done,
    ]);
    expect(proto.code, proto.err).toBe(0);
    expect(proto.out).toMatch(/traces → OTLP http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(http\/protobuf\)/);
    const posts = collector.requests().slice(before).filter((q) => q.path === "/v1/traces");
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((q) => q.headers["content-type"] === "application/x-protobuf")).toBe(true);
    expect(posts.some((q) => q.body.includes(Buffer.from("episode auratown-s7-baseline")))).toBe(true);

    expect(grpc.code).toBe(2);
    expect(grpc.err).toContain("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: probetown exports traces over OTLP/HTTP only; use http/json or http/protobuf");

    const beforeDisabled = collector.requests().length;
    const disabled = await startCli(["run", "auratown", "--seed", "7", "--ticks", "1", "--log", join(work, "disabled"), "--trace", "otlp"], { ...NO_OTEL_ENV, OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }).done;
    expect(disabled.code, disabled.err).toBe(0);
    expect(disabled.out).toMatch(/trace: +tracing off \(OTEL_SDK_DISABLED\)/);
    expect(collector.requests()).toHaveLength(beforeDisabled);
  });
});

const suite = natsForSuite();

describe("sweep --trace otlp over NATS", () => {
  it("two local workers: one trace per episode, each rooted at the sweep's span for its job, every span in one collector", async () => {
    const before = collector.spans().length;
    const ns = suite.nats.namespace("otel-sweep");
    const s = await startCli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "2", "--nats", suite.nats.url, "--namespace", ns, "--workers", "2", "--trace", "otlp", "--json"], {
      ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    }).done;
    expect(s.code, s.err).toBe(0);
    expect(JSON.parse(s.out)).toMatchObject({ episodes: 2, ok: 2 });
    expect(s.err).not.toMatch(/could not be delivered/);
    const spans = since(before);
    const episodes = ["auratown-s1-baseline", "auratown-s2-baseline"];
    const traces = new Map<string, CollectedSpan[]>();
    for (const span of spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span]);
    expect(traces.size).toBe(episodes.length);
    for (const episode of episodes) {
      const job = spans.find((x) => x.name === `sweep job ${episode}`)!;
      expect(job.parentSpanId).toBeNull();
      expect(job.resource["service.name"]).toBe("probetown-sweep");
      expect(job.attributes).toMatchObject({ "probetown.job.id": episode, "probetown.job.ok": true });
      const trace = traces.get(job.traceId)!;
      // The worker's episode span continues the job's: the traceparent went with the job.
      const root = trace.filter((x) => x.name === `episode ${episode}`);
      expect(root).toHaveLength(1);
      expect(root[0]!.parentSpanId).toBe(job.spanId);
      expect(root[0]!.resource["service.name"]).toBe("probetown-worker");
      // Its whole episode is in this trace, joined to its log lines by seq and hash.
      const log: LogRecord[] = await distributedBackend(suite.nc, ns).eventStores.read(episode);
      const deliveries = trace.filter((x) => x.name.startsWith("deliver ") && x.kind === PRODUCER);
      expect(deliveries.length).toBe(log.filter((r) => r.type !== "episode.started" && r.type !== "tick.committed").length);
      const hashes = new Map(log.map((r) => [r.seq, r.hash]));
      for (const d of deliveries) expect(d.attributes["probetown.hash"]).toBe(hashes.get(d.attributes["probetown.seq"] as number));
      expect(trace.filter((x) => x.name.startsWith("tick "))).toHaveLength(2);
    }
  });
});

describe("sweep envprobe --trace otlp over NATS", () => {
  it("a worker's chunk span continues its job's trace, with a span per episode naming its outcome", async () => {
    const before = collector.spans().length;
    const ns = suite.nats.namespace("otel-envprobe");
    const s = await startCli(["sweep", "envprobe", "--worlds", "tooldag", "--policies", "no-probe,envprobe-simple", "--regimes", "medium", "--seeds", "0-2", "--nats", suite.nats.url, "--namespace", ns, "--workers", "1", "--trace", "otlp", "--json"], {
      ...NO_OTEL_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    }).done;
    expect(s.code, s.err).toBe(0);
    const summary = JSON.parse(s.out) as { episodes: number; nats: { jobs: number } };
    const spans = since(before);
    const jobs = spans.filter((x) => x.name.startsWith("sweep job "));
    expect(jobs).toHaveLength(summary.nats.jobs);
    for (const job of jobs) {
      const chunk = spans.find((x) => x.name === `envprobe chunk ${job.attributes["probetown.job.id"] as string}`)!;
      expect(chunk.traceId).toBe(job.traceId);
      expect(chunk.parentSpanId).toBe(job.spanId);
      const episodes = spans.filter((x) => x.parentSpanId === chunk.spanId);
      expect(episodes).toHaveLength(3);
      for (const e of episodes) expect(Object.keys(e.attributes)).toEqual(expect.arrayContaining(["probetown.seed", "probetown.envprobe.success", "probetown.envprobe.accuracy", "probetown.envprobe.probes"]));
    }
    expect(spans.filter((x) => x.name.startsWith("envprobe episode "))).toHaveLength(summary.episodes);
  });
});

describe("sweep --trace without a collector", () => {
  it("embedded, into one JSONL file: one trace per episode, rooted at its job's span; a bare jsonl puts each episode's trace beside its log", async () => {
    const work = tempDir("otel-embedded-sweep");
    const file = join(work, "sweep.jsonl");
    const s = await startCli(["sweep", "auratown", "--seeds", "3-4", "--ticks", "1", "--log", join(work, "one"), "--trace", `jsonl:${file}`, "--json"], NO_OTEL_ENV).done;
    expect(s.code, s.err).toBe(0);
    const spans = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; traceId: string; spanId: string; parentSpanId: string | null });
    expect(new Set(spans.map((x) => x.traceId)).size).toBe(2);
    for (const episode of ["auratown-s3-baseline", "auratown-s4-baseline"]) {
      const job = spans.find((x) => x.name === `sweep job ${episode}`)!;
      expect(spans.find((x) => x.name === `episode ${episode}`)!.parentSpanId).toBe(job.spanId);
    }

    const beside = await startCli(["sweep", "auratown", "--seeds", "3-4", "--ticks", "1", "--log", join(work, "beside"), "--trace", "jsonl", "--json"], NO_OTEL_ENV).done;
    expect(beside.code, beside.err).toBe(0);
    for (const episode of ["auratown-s3-baseline", "auratown-s4-baseline"]) {
      const own = readFileSync(join(work, "beside", episode, "trace.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; traceId: string; parentSpanId: string | null });
      expect(new Set(own.map((x) => x.traceId)).size).toBe(1);
      expect(own.find((x) => x.name === `episode ${episode}`)!.parentSpanId).toBeNull();
    }
  });

  it("what cannot be traced is refused before anything runs", async () => {
    const dead = "nats://127.0.0.1:9";
    // Two processes at once: neither runs anything.
    const [bare, embedded] = await Promise.all([
      startCli(["sweep", "auratown", "--seeds", "1", "--nats", dead, "--trace", "jsonl"], NO_OTEL_ENV).done,
      startCli(["sweep", "envprobe", "--seeds", "0", "--trace", "otlp"], NO_OTEL_ENV).done,
    ]);
    expect(bare.code).toBe(2);
    expect(bare.err).toContain("--trace jsonl: a sweep over NATS keeps its logs in JetStream, with no directory to put traces beside; name the file: --trace jsonl:<file>");
    expect(embedded.code).toBe(2);
    expect(embedded.err).toContain("--trace: the embedded `sweep envprobe` runs its episodes on worker threads without telemetry");
  });
});
