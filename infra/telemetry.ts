// Tracing setup (DESIGN: telemetry is infra, never part of replayed state). The OpenTelemetry SDK is
// started through `NodeSDK` (@opentelemetry/sdk-node) once per process, on the first traced run, so
// the standard OTEL_* variables apply: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env
// detector), OTEL_TRACES_SAMPLER (+ _ARG), span limits, and for the otlp exporter
// OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _PROTOCOL, _TIMEOUT, _COMPRESSION; OTEL_SDK_DISABLED
// turns tracing off. No metrics, logs or auto-instrumentations are started.
//
// Each Telemetry (a run, an actor host, a test) still has its own exporter pipeline: its tracer
// marks the context of every span it starts, and the SDK's one span processor hands the span to
// the pipeline that started it. So tests and forks may run several in one process, each flushed and
// shut down on its own. Exporters: none (the @opentelemetry/api no-op tracer; the SDK is not even
// loaded), console (JSON lines on stderr), jsonl (own exporter, one span per line) and otlp
// (OTLP/HTTP, JSON by default or protobuf). Batching processors use a large queue so bursts don't
// drop spans.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { dirname } from "node:path";
import { ProxyTracerProvider, SpanKind, SpanStatusCode, TraceFlags, context as otelContext, createContextKey, INVALID_SPANID, INVALID_TRACEID, trace } from "@opentelemetry/api";
import type { Attributes, Context, HrTime, Link, Span, SpanContext, SpanKind as SpanKindType, SpanOptions, Tracer } from "@opentelemetry/api";
import { ExportResultCode, getBooleanFromEnv, getNumberFromEnv, getStringFromEnv } from "@opentelemetry/core";
import type { ExportResult } from "@opentelemetry/core";
import { defaultResource, detectResources, envDetector, hostDetector, resourceFromAttributes } from "@opentelemetry/resources";
import type { Resource } from "@opentelemetry/resources";
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan, Sampler, SamplingResult, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import type { NodeSDK as NodeSdk } from "@opentelemetry/sdk-node";
import type { OTLPTraceExporter as OtlpProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { InputRejected } from "../events/inputRejected.ts";

// NodeSDK brings every OTLP exporter (gRPC too) and takes ~0.4 s to load: loaded on the first
// traced run only, so an untraced command starts as fast as before.
const require = createRequire(import.meta.url);

export type TraceExporterKind = "none" | "console" | "jsonl" | "otlp";

export interface TelemetryConfig {
  readonly exporter: TraceExporterKind;
  /** Required for "jsonl": path of the JSONL trace file (parent directories are created). */
  readonly file?: string;
  /**
   * For "otlp": full URL of the OTLP/HTTP traces endpoint (`--trace otlp:<url>`). Absent: from
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else
   * http://127.0.0.1:4318/v1/traces.
   */
  readonly otlpUrl?: string;
  /** Resource service.name unless OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) names another; default "probetown". */
  readonly serviceName?: string;
  /**
   * The run's actor count, when known: without OTEL_TRACES_SAMPLER, a run of more than
   * LARGE_RUN_ACTORS actors is sampled (LARGE_RUN_SAMPLER), a smaller one traced whole.
   */
  readonly actors?: number;
}

export interface Telemetry {
  /** false for "none". */
  readonly enabled: boolean;
  /** The @opentelemetry/api no-op tracer when disabled. */
  readonly tracer: Tracer;
  /** Where spans go, for humans: "traces → runs/x/trace.jsonl", "tracing off", … (with `sampling` when not null). */
  readonly description: string;
  /** How spans are sampled when not every one is (OTEL_TRACES_SAMPLER, a large run's default), for humans; null when all are. */
  readonly sampling?: string | null;
  flush(): Promise<void>;
  /** Flushes, then shuts down. Idempotent: later calls return the first call's promise. */
  shutdown(): Promise<void>;
  /** After flush() or shutdown(): spans that never reached the exporter's destination (an unreachable collector, a full queue), with the first error; null when all went. */
  undelivered(): { readonly spans: number; readonly error: string } | null;
}

/**
 * Counts what an exporter failed to deliver: the SDK only hands such failures to its (silent)
 * diagnostic logger, and a trace that never reached its collector must not pass for a sent one.
 *
 * Once the collector is known to be unreachable (the probe at start, or an export that failed on
 * the network or timed out), later batches fail at once instead of each retrying with back-off or
 * waiting out its timeout: an absent collector used to add ~9 s to every run's end, and one that
 * accepts connections but never answers cost 5 s per batch.
 *
 * Exports in flight are kept so `settled()` can wait for them: the batch processor's forceFlush
 * only exports what is still queued, not the batch its timer already handed over, and a count read
 * before that batch failed left it out.
 */
class DeliveryReportingExporter implements SpanExporter {
  /** Spans handed over that the exporter delivered. */
  delivered = 0;
  error: string | null = null;
  private readonly inner: SpanExporter;
  /** Settles with null when the collector answered the probe, or the reason it did not. */
  private readonly probe: Promise<string | null>;
  private unreachable: string | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  constructor(inner: SpanExporter, probe: Promise<string | null> = Promise.resolve(null)) {
    this.inner = inner;
    this.probe = probe;
  }
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    let settle!: () => void;
    const exported = new Promise<void>((resolve) => (settle = resolve));
    this.inFlight.add(exported);
    const done = (result: ExportResult) => {
      if (result.code === ExportResultCode.SUCCESS) this.delivered += spans.length;
      else {
        const message = result.error?.message ?? "export failed";
        if (NETWORK_FAILURE.test(message)) this.unreachable ??= message;
        this.error ??= message;
      }
      this.inFlight.delete(exported);
      settle();
      resultCallback(result);
    };
    const failed = (message: string) => done({ code: ExportResultCode.FAILED, error: new Error(message) });
    void this.probe.then((refused) => {
      const known = this.unreachable ?? refused;
      if (known !== null) return failed(known);
      try {
        this.inner.export(spans, done);
      } catch (error) {
        failed((error as Error).message);
      }
    });
  }
  /** Resolves when every export handed over so far has succeeded or failed. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * Counts the sampled spans that ended, ahead of the batch processor: the processor drops spans
 * silently when its queue is full (a collector slower than the run), so what was not delivered is
 * what ended less what the exporter delivered, not only what it saw fail.
 */
class EndedSpanCounter implements SpanProcessor {
  ended = 0;
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) this.ended++;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** Errors that mean nothing answers at the collector's address (not a rejected batch). */
// "Request timed out" is the OTLP exporter's own timeout: the collector took the connection and never answered.
const NETWORK_FAILURE = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ECONNRESET|ETIMEDOUT|timeout|timed out/i;

/** Opens (and closes) a TCP connection to the collector: null when it answers, else why not. */
function probeCollector(url: string, timeoutMs = 1000): Promise<string | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(null); // the exporter reports a bad URL itself
  }
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: string | null) => {
      socket.destroy();
      resolve(result);
    };
    // The verdict waits one turn of the event loop: a run that kept the loop busy past the timeout
    // (building a large town) sees the timer before the connect that completed meanwhile, and a
    // collector that answered at once was declared unreachable, every span of the run undelivered.
    socket.setTimeout(timeoutMs, () => setImmediate(() => done(`no answer from ${host}:${port} within ${timeoutMs} ms`)));
    socket.once("connect", () => done(null));
    socket.once("error", (error) => done(error.message));
  });
}

/** Bound on one batch's export, retries included (the exporter's default is 10 s). */
const OTLP_EXPORT_TIMEOUT_MS = 5000;

export const DEFAULT_OTLP_URL = "http://127.0.0.1:4318/v1/traces";
export const DEFAULT_SERVICE_NAME = "probetown";
const TRACER_NAME = "probetown";

/** Spans buffered before the batch processor drops (the SDK default, 2048, drops under bursts). */
const MAX_QUEUE_SIZE = 100_000;
// A batch is written as soon as it is full: small enough that its spans die young (a run's whole
// trace held to the end survived into the old generation, ~10% more CPU per span measured).
const JSONL_BATCH_SIZE = 512;
const OTLP_BATCH_SIZE = 1024;
/** forceFlush exports every queued batch at once; the OTLP exporter rejects beyond its concurrency limit (default 30). */
const OTLP_CONCURRENCY = Math.ceil(MAX_QUEUE_SIZE / OTLP_BATCH_SIZE) + 2;

// The real NoopTracer: a fresh ProxyTracerProvider has no delegate, so this never follows a
// globally registered provider. Cost per span is exactly the api no-op's.
const NOOP_TRACER: Tracer = new ProxyTracerProvider().getDelegate().getTracer(TRACER_NAME);

const KIND_NAMES: Readonly<Record<number, string>> = {
  [SpanKind.INTERNAL]: "INTERNAL",
  [SpanKind.SERVER]: "SERVER",
  [SpanKind.CLIENT]: "CLIENT",
  [SpanKind.PRODUCER]: "PRODUCER",
  [SpanKind.CONSUMER]: "CONSUMER",
};

const STATUS_NAMES: Readonly<Record<number, string>> = {
  [SpanStatusCode.UNSET]: "UNSET",
  [SpanStatusCode.OK]: "OK",
  [SpanStatusCode.ERROR]: "ERROR",
};

function hrTimeToNanoString(time: HrTime): string {
  return (BigInt(time[0]) * 1_000_000_000n + BigInt(time[1])).toString();
}

function hrTimeToMs(time: HrTime): number {
  return time[0] * 1e3 + time[1] / 1e6;
}

/** One line of a JSONL trace file. */
export interface JsonlSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: string;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly durationMs: number;
  readonly attributes: Attributes;
  readonly status: { readonly code: string; readonly message?: string };
  readonly events: readonly { readonly name: string; readonly timeUnixNano: string; readonly attributes: Attributes }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly resource: { readonly "service.name": unknown };
}

export function spanToJsonl(span: ReadableSpan): JsonlSpan {
  const ctx = span.spanContext();
  const status = span.status.message === undefined || span.status.message === ""
    ? { code: STATUS_NAMES[span.status.code] ?? String(span.status.code) }
    : { code: STATUS_NAMES[span.status.code] ?? String(span.status.code), message: span.status.message };
  return {
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    kind: KIND_NAMES[span.kind] ?? String(span.kind),
    startTimeUnixNano: hrTimeToNanoString(span.startTime),
    endTimeUnixNano: hrTimeToNanoString(span.endTime),
    durationMs: hrTimeToMs(span.duration),
    attributes: span.attributes,
    status,
    events: span.events.map((e) => ({ name: e.name, timeUnixNano: hrTimeToNanoString(e.time), attributes: e.attributes ?? {} })),
    links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
    resource: { "service.name": span.resource.attributes["service.name"] },
  };
}

/** Nanoseconds since the epoch as a decimal string, without BigInt (the SDK's times are [s, ns], ns < 1e9). */
function nanoString(time: HrTime): string {
  const [seconds, nanos] = time;
  if (seconds === 0) return String(nanos);
  const ns = String(nanos);
  return `${seconds}${"000000000".slice(ns.length)}${ns}`;
}

/** `"resource":{…}` of a resource's spans, once per resource. */
const resourceJson = new WeakMap<object, string>();

function resourceJsonOf(span: ReadableSpan): string {
  const resource = span.resource;
  let json = resourceJson.get(resource);
  if (json === undefined) {
    json = JSON.stringify({ "service.name": resource.attributes["service.name"] });
    resourceJson.set(resource, json);
  }
  return json;
}

/**
 * One JSONL line (no newline): the text of `JSON.stringify(spanToJsonl(span))`, built from the
 * span's fields directly. Ids are the SDK's lower-case hex (valid span contexts only), kinds and
 * status codes are fixed names, so only the name, attributes, status message, events and links go
 * through JSON.stringify. The exporters' per-span cost; test/telemetry.test.ts holds it to the same text.
 */
export function spanToJsonlLine(span: ReadableSpan): string {
  const ctx = span.spanContext();
  const parent = span.parentSpanContext?.spanId;
  const status = span.status;
  const code = STATUS_NAMES[status.code] ?? String(status.code);
  const statusJson = status.message === undefined || status.message === "" ? `{"code":${JSON.stringify(code)}}` : `{"code":${JSON.stringify(code)},"message":${JSON.stringify(status.message)}}`;
  const events = span.events.length === 0 ? "[]" : JSON.stringify(span.events.map((e) => ({ name: e.name, timeUnixNano: nanoString(e.time), attributes: e.attributes ?? {} })));
  const links = span.links.length === 0 ? "[]" : JSON.stringify(span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })));
  return (
    `{"traceId":"${ctx.traceId}","spanId":"${ctx.spanId}","parentSpanId":${parent === undefined ? "null" : `"${parent}"`},` +
    `"name":${JSON.stringify(span.name)},"kind":${JSON.stringify(KIND_NAMES[span.kind] ?? String(span.kind))},` +
    `"startTimeUnixNano":"${nanoString(span.startTime)}","endTimeUnixNano":"${nanoString(span.endTime)}","durationMs":${JSON.stringify(hrTimeToMs(span.duration))},` +
    `"attributes":${JSON.stringify(span.attributes)},"status":${statusJson},"events":${events},"links":${links},"resource":${resourceJsonOf(span)}}`
  );
}

/** Appends one JSON object per span per line (spanToJsonlLine); one synchronous write per export call (a batch). */
/**
 * The JSONL exporters' encoding buffer, one per process: an export runs to its end synchronously,
 * so no two use it at once, and a run does not allocate its own.
 */
let scratch = Buffer.allocUnsafe(1 << 20);

/** Writes `length` bytes of `buf` to `fd`, however many calls that takes. */
function writeAll(fd: number, buf: Buffer, length: number): void {
  let off = 0;
  while (off < length) off += writeSync(fd, buf, off, length - off);
}

export class JsonlSpanExporter implements SpanExporter {
  readonly file: string;
  #fd: number | undefined;

  constructor(file: string) {
    this.file = file;
    mkdirSync(dirname(file), { recursive: true });
    this.#fd = openSync(file, "a");
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const fd = this.#fd;
    if (fd === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error("JsonlSpanExporter: export after shutdown") });
      return;
    }
    try {
      // Each line is encoded into one reused buffer, written when full and at the batch's end:
      // concatenating a batch into one string first cost as much again, flattening it to encode.
      let buf = scratch;
      let used = 0;
      for (const span of spans) {
        const line = spanToJsonlLine(span) + "\n";
        const most = line.length * 3; // UTF-8 bytes of a UTF-16 code unit: at most 3
        if (used + most > buf.length) {
          writeAll(fd, buf, used);
          used = 0;
          if (most > buf.length) buf = scratch = Buffer.allocUnsafe(most);
        }
        used += buf.write(line, used);
      }
      writeAll(fd, buf, used);
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd !== undefined) {
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    return Promise.resolve();
  }
}

/**
 * The console exporter: one JSON line per span (the JSONL file's shape) on stderr. The SDK's
 * ConsoleSpanExporter writes to stdout, where it broke the output of `--json` for scripts.
 */
export class StderrSpanExporter implements SpanExporter {
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    let text = "";
    for (const span of spans) text += spanToJsonlLine(span) + "\n";
    process.stderr.write(text);
    resultCallback({ code: ExportResultCode.SUCCESS });
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The URL without credentials, query or fragment: safe to print. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "<invalid url>";
  }
}

/**
 * The JSONL exporter, or an error that names the trace file and the way out: the bare `EEXIST:
 * file already exists, mkdir …` of a parent that is a file said neither. The error's code is kept
 * (a path error: bad input, exit 2).
 */
function openJsonlExporter(file: string): JsonlSpanExporter {
  try {
    return new JsonlSpanExporter(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EEXIST" || code === "ENOTDIR" ? "a parent of it is a file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
    throw Object.assign(new Error(`trace file ${file}: cannot open it for writing (${why}); give another with --trace jsonl:<file>, or --trace none`, { cause: error }), { code });
  }
}

function disabledTelemetry(description = "tracing off"): Telemetry {
  return {
    enabled: false,
    tracer: NOOP_TRACER,
    description,
    sampling: null,
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
    undelivered: () => null,
  };
}

function flushError(errors: unknown): Error {
  const list = Array.isArray(errors) ? errors : [errors];
  const text = list.map((e) => (e instanceof Error ? e.message : String(e))).join("; ");
  return new Error(`telemetry: span export failed: ${text}`, { cause: errors });
}

/** probetown's version (package.json), the resource's service.version. */
const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * What the environment says of the resource: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (the
 * env detector) and the host (host.name, host.arch, host.id). Detected once per process. The
 * process detector is left out on purpose: its process.command_args would carry a command line's
 * URLs, credentials included (`--nats nats://user:pass@…`), into every exported span.
 */
let detected: Resource | undefined;

/**
 * The resource of a pipeline's spans: the SDK's defaults (telemetry.sdk.*), probetown's own
 * (service.name, service.version, the process id and runtime), then what the environment says,
 * which wins: OTEL_SERVICE_NAME names the service whatever `serviceName` says.
 */
function resourceFor(serviceName: string): Resource {
  const known = resources.get(serviceName);
  if (known !== undefined) return known;
  detected ??= detectResources({ detectors: [envDetector, hostDetector] });
  const resource = defaultResource()
    .merge(resourceFromAttributes({
      "service.name": serviceName,
      "service.version": VERSION,
      "process.pid": process.pid,
      "process.runtime.name": "nodejs",
      "process.runtime.version": process.versions.node,
    }))
    .merge(detected);
  resources.set(serviceName, resource);
  return resource;
}

/** One resource per service name: a pipeline whose resource is the SDK's exports its spans as they are. */
const resources = new Map<string, Resource>();

/** Marks the context of every span a pipeline's tracer starts; the router reads it. */
const PIPELINE = createContextKey("probetown telemetry pipeline");

/** One Telemetry's span processors, the resource its spans are exported with, and its sampler. */
class Pipeline {
  closed = false;
  readonly processors: readonly SpanProcessor[];
  readonly resource: Resource;
  readonly sampler: Sampler;
  constructor(processors: readonly SpanProcessor[], resource: Resource, sampler: Sampler) {
    this.processors = processors;
    this.resource = resource;
    this.sampler = sampler;
  }
  onStart(span: Parameters<SpanProcessor["onStart"]>[0], parentContext: Context): void {
    for (const p of this.processors) p.onStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    // The SDK's provider has one resource for the process; a pipeline's may name another service
    // (an actor host's, a test's). The span is read through an object that says this pipeline's.
    const own = span.resource === this.resource ? span : (Object.create(span, { resource: { value: this.resource } }) as ReadableSpan);
    for (const p of this.processors) p.onEnd(own);
  }
  async forceFlush(): Promise<void> {
    const results = await Promise.allSettled(this.processors.map((p) => p.forceFlush()));
    const errors = results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason as unknown);
    if (errors.length > 0) throw errors;
  }
  async shutdown(): Promise<void> {
    this.closed = true;
    await Promise.all(this.processors.map((p) => p.shutdown()));
  }
}

/**
 * The SDK's sampler: each span is sampled by the sampler of the pipeline whose tracer started it
 * (a run's, chosen by OTEL_TRACES_SAMPLER or its size), so runs in one process may differ.
 */
class RoutingSampler implements Sampler {
  shouldSample(context: Context, traceId: string, spanName: string, spanKind: SpanKindType, attributes: Attributes, links: Link[]): SamplingResult {
    const pipeline = context.getValue(PIPELINE) as Pipeline | undefined;
    return (pipeline?.sampler ?? DEFAULT_SAMPLER).shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }
  toString(): string {
    return "RoutingSampler";
  }
}

/** The SDK's span processor: each span goes to the pipeline whose tracer started it (others: nowhere). */
class RoutingSpanProcessor implements SpanProcessor {
  private readonly owners = new WeakMap<object, Pipeline>();
  onStart(span: Parameters<SpanProcessor["onStart"]>[0], parentContext: Context): void {
    const pipeline = parentContext.getValue(PIPELINE) as Pipeline | undefined;
    if (pipeline === undefined || pipeline.closed) return;
    this.owners.set(span, pipeline);
    pipeline.onStart(span, parentContext);
  }
  onEnd(span: ReadableSpan): void {
    const pipeline = this.owners.get(span);
    if (pipeline === undefined) return;
    this.owners.delete(span);
    if (!pipeline.closed) pipeline.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A pipeline's tracer: the SDK's, with the pipeline put in the context of every span it starts. */
class PipelineTracer implements Tracer {
  private readonly inner: Tracer;
  private readonly pipeline: Pipeline;
  /** The last context a span was started in, and it with the pipeline: a tick's spans share their parent's. */
  private lastParent: Context | undefined;
  private lastMarked: Context | undefined;
  constructor(inner: Tracer, pipeline: Pipeline) {
    this.inner = inner;
    this.pipeline = pipeline;
  }
  startSpan(name: string, options?: SpanOptions, context?: Context): Span {
    const parent = context ?? otelContext.active();
    if (parent !== this.lastParent) {
      this.lastParent = parent;
      this.lastMarked = parent.setValue(PIPELINE, this.pipeline);
    }
    return this.inner.startSpan(name, options, this.lastMarked);
  }
  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, context: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest.at(-1) as F;
    const options = (rest.length >= 2 ? rest[0] : undefined) as SpanOptions | undefined;
    const parent = (rest.length >= 3 ? rest[1] : undefined) as Context | undefined ?? otelContext.active();
    const span = this.startSpan(name, options, parent);
    return otelContext.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}

/** The process's SDK, started on the first traced run: its tracer (every span goes through its router). */
let sdkTracer: Tracer | undefined;

function startedSdk(): Tracer {
  if (sdkTracer !== undefined) return sdkTracer;
  const before = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate();
  const { NodeSDK } = require("@opentelemetry/sdk-node") as { NodeSDK: typeof NodeSdk };
  const sdk = new NodeSDK({
    resource: resourceFor(DEFAULT_SERVICE_NAME),
    autoDetectResources: false,
    spanProcessors: [new RoutingSpanProcessor()],
    // Each run's own (samplerOf); OTEL_TRACES_SAMPLER is read there, per run, not by the SDK.
    sampler: new RoutingSampler(),
    // Traces only: no metric reader or log processor is started (the SDK's env defaults would
    // export both to an OTLP endpoint every minute), and no instrumentation.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  // Span limits, the W3C propagator and the async-hooks context manager come from NodeSDK,
  // registered globally.
  sdk.start();
  const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate();
  if (provider === before) throw new Error("telemetry: another OpenTelemetry tracer provider is already registered in this process, so probetown's cannot be");
  sdkTracer = provider.getTracer(TRACER_NAME, VERSION);
  return sdkTracer;
}

/** A URL from --trace or the environment that the exporter can use, or an error naming where it came from. */
function checkedOtlpUrl(url: string, from: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputRejected("flag", `--trace otlp: ${from}: invalid OTLP URL ${JSON.stringify(redactUrl(url))}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new InputRejected("flag", `--trace otlp: ${from}: the OTLP URL must be http: or https:, got ${JSON.stringify(redactUrl(url))}`);
  return url;
}

/** The traces endpoint: `--trace otlp:<url>`, else the OTEL_EXPORTER_OTLP_* variables, else the local collector's. */
export function otlpTracesUrl(flagUrl: string | undefined): string {
  if (flagUrl !== undefined) return flagUrl;
  const traces = getStringFromEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces !== undefined) return checkedOtlpUrl(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = getStringFromEnv("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base !== undefined) return checkedOtlpUrl(`${base.endsWith("/") ? base : base + "/"}v1/traces`, "OTEL_EXPORTER_OTLP_ENDPOINT");
  return DEFAULT_OTLP_URL;
}

/** OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL: http/json (probetown's default) or http/protobuf; gRPC is not served. */
function otlpProtocol(): "http/json" | "http/protobuf" {
  const name = getStringFromEnv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const value = getStringFromEnv(name) ?? "http/json";
  if (value === "http/json" || value === "http/protobuf") return value;
  throw new InputRejected("flag", `--trace otlp: ${name}=${value}: probetown exports traces over OTLP/HTTP only; use http/json or http/protobuf`);
}

function otlpExporter(url: string, protocol: "http/json" | "http/protobuf"): SpanExporter {
  // Only the URL, the concurrency and (unless OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT says) the timeout
  // are set here; headers (OTEL_EXPORTER_OTLP_HEADERS) and compression come from the environment
  // through the exporter, and never reach a span.
  const timeoutSet = getNumberFromEnv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") !== undefined || getNumberFromEnv("OTEL_EXPORTER_OTLP_TIMEOUT") !== undefined;
  const options = { url, concurrencyLimit: OTLP_CONCURRENCY, ...(timeoutSet ? {} : { timeoutMillis: OTLP_EXPORT_TIMEOUT_MS }) };
  if (protocol === "http/json") return new OTLPTraceExporter(options);
  const { OTLPTraceExporter: ProtoExporter } = require("@opentelemetry/exporter-trace-otlp-proto") as { OTLPTraceExporter: typeof OtlpProtoTraceExporter };
  return new ProtoExporter(options);
}

export function createTelemetry(config: TelemetryConfig): Telemetry {
  if (config.exporter === "none") return disabledTelemetry();
  if (getBooleanFromEnv("OTEL_SDK_DISABLED")) return disabledTelemetry("tracing off (OTEL_SDK_DISABLED)");
  // Before any file or connection is opened: a bad OTEL_TRACES_SAMPLER is a usage error.
  const sampling = samplerOf(config.actors);

  let processor: SpanProcessor;
  let description: string;
  let reporting: DeliveryReportingExporter | null = null;
  switch (config.exporter) {
    case "console":
      // Batched too (one write per batch); the run's end flushes what is queued, also on failure.
      processor = new BatchSpanProcessor(new StderrSpanExporter(), { maxQueueSize: MAX_QUEUE_SIZE, maxExportBatchSize: JSONL_BATCH_SIZE, scheduledDelayMillis: 1000 });
      description = "traces → console (stderr)";
      break;
    case "jsonl": {
      if (config.file === undefined || config.file === "") {
        throw new Error('telemetry: the "jsonl" exporter needs a file path');
      }
      processor = new BatchSpanProcessor((reporting = new DeliveryReportingExporter(openJsonlExporter(config.file))), {
        maxQueueSize: MAX_QUEUE_SIZE,
        maxExportBatchSize: JSONL_BATCH_SIZE,
        scheduledDelayMillis: 1000,
      });
      description = `traces → ${config.file}`;
      break;
    }
    case "otlp": {
      const url = otlpTracesUrl(config.otlpUrl);
      const protocol = otlpProtocol();
      reporting = new DeliveryReportingExporter(otlpExporter(url, protocol), probeCollector(url));
      processor = new BatchSpanProcessor(reporting, {
        maxQueueSize: MAX_QUEUE_SIZE,
        maxExportBatchSize: OTLP_BATCH_SIZE,
      });
      description = `traces → OTLP ${redactUrl(url)}${protocol === "http/json" ? "" : ` (${protocol})`}`;
      break;
    }
    default: {
      const never: never = config.exporter;
      throw new Error(`telemetry: unknown exporter ${String(never)}`);
    }
  }

  const counter = new EndedSpanCounter();
  const pipeline = new Pipeline([counter, processor], resourceFor(config.serviceName ?? DEFAULT_SERVICE_NAME), sampling.sampler);
  if (sampling.label !== null) description += ` (sampled: ${sampling.label})`;
  let tracer: Tracer;
  try {
    tracer = new PipelineTracer(startedSdk(), pipeline);
  } catch (error) {
    void processor.shutdown().catch(() => undefined);
    throw error;
  }
  // Every batch handed to the exporter has come back (forceFlush alone leaves the timer's batch out).
  const settled = () => reporting?.settled() ?? Promise.resolve();

  let shutdownPromise: Promise<void> | undefined;
  const flush = async (): Promise<void> => {
    if (shutdownPromise !== undefined) return shutdownPromise.catch(() => undefined);
    try {
      await pipeline.forceFlush();
    } catch (errors) {
      throw flushError(errors);
    } finally {
      await settled();
    }
  };
  const shutdown = (): Promise<void> => {
    shutdownPromise ??= (async () => {
      let flushFailure: unknown;
      try {
        await pipeline.forceFlush();
      } catch (errors) {
        flushFailure = flushError(errors);
      }
      await pipeline.shutdown();
      await settled();
      if (flushFailure !== undefined) throw flushFailure;
    })();
    return shutdownPromise;
  };

  const undelivered = () => {
    if (reporting === null) return null;
    const lost = counter.ended - reporting.delivered;
    return lost <= 0 ? null : { spans: lost, error: reporting.error ?? "the export queue was full and spans were dropped" };
  };
  return { enabled: true, tracer, description, sampling: sampling.label, flush, shutdown, undelivered };
}

/** The sampler of a run that neither OTEL_TRACES_SAMPLER nor its size samples: every span of every trace. */
const DEFAULT_SAMPLER: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() });

/** Above this many actors, a run without OTEL_TRACES_SAMPLER is sampled by LARGE_RUN_SAMPLER. */
export const LARGE_RUN_ACTORS = 200;
/** The share of large runs' traces (episodes) kept by default: parentbased_traceidratio at this ratio. */
export const LARGE_RUN_RATIO = 0.1;

const SAMPLER_NAMES = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;

/** The ratio of a traceidratio sampler: OTEL_TRACES_SAMPLER_ARG, a number in [0, 1] (absent: 1). */
function samplerRatio(name: string): number {
  const text = getStringFromEnv("OTEL_TRACES_SAMPLER_ARG");
  if (text === undefined) return 1;
  const ratio = Number(text);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new InputRejected("flag", `OTEL_TRACES_SAMPLER_ARG=${text}: the ratio of OTEL_TRACES_SAMPLER=${name} must be a number from 0 to 1`);
  return ratio;
}

/**
 * A run's sampler and how it is described: OTEL_TRACES_SAMPLER (+ _ARG) when set, the SDK's
 * samplers for the standard names; else parent-based trace-id ratio (LARGE_RUN_RATIO) for a run of
 * more than LARGE_RUN_ACTORS actors, else every span (parent-based always on). A sampler decides
 * per trace (an episode), from its trace id: nothing an actor sees or the log hashes.
 */
export function samplerOf(actors: number | undefined): { readonly sampler: Sampler; readonly label: string | null } {
  const name = getStringFromEnv("OTEL_TRACES_SAMPLER");
  if (name === undefined) {
    if (actors === undefined || actors <= LARGE_RUN_ACTORS) return { sampler: DEFAULT_SAMPLER, label: null };
    return {
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(LARGE_RUN_RATIO) }),
      label: `parentbased_traceidratio ${LARGE_RUN_RATIO}: ${actors} actors > ${LARGE_RUN_ACTORS}; OTEL_TRACES_SAMPLER=always_on traces every run`,
    };
  }
  switch (name) {
    case "always_on":
      return { sampler: new AlwaysOnSampler(), label: null };
    case "always_off":
      return { sampler: new AlwaysOffSampler(), label: "always_off" };
    case "parentbased_always_on":
      return { sampler: DEFAULT_SAMPLER, label: null };
    case "parentbased_always_off":
      return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), label: name };
    case "traceidratio":
    case "parentbased_traceidratio": {
      const ratio = samplerRatio(name);
      const root = new TraceIdRatioBasedSampler(ratio);
      return { sampler: name === "traceidratio" ? root : new ParentBasedSampler({ root }), label: `${name} ${ratio}` };
    }
    default:
      throw new InputRejected("flag", `OTEL_TRACES_SAMPLER=${name}: probetown samples with ${SAMPLER_NAMES.join(", ")}`);
  }
}

/** The remote span a W3C `traceparent` names, or null when absent or malformed. */
function spanContextOfTraceparent(traceparent: string | undefined): SpanContext | null {
  const match = traceparent === undefined ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  return match === null ? null : { traceId: match[1]!, spanId: match[2]!, traceFlags: Number.parseInt(match[3]!, 16), isRemote: true };
}

/** The context a remote `traceparent` header continues (the active context when absent or malformed). */
export function contextOfTraceparent(traceparent: string | undefined): Context {
  const remote = spanContextOfTraceparent(traceparent);
  return remote === null ? otelContext.active() : trace.setSpanContext(otelContext.active(), remote);
}

/** A span link to the span a `traceparent` names (e.g. a fork's parent record), or undefined when malformed. */
export function linkOfTraceparent(traceparent: string): Link | undefined {
  const remote = spanContextOfTraceparent(traceparent);
  return remote === null ? undefined : { context: remote };
}

/** W3C traceparent header value of a span ("00-<traceId>-<spanId>-<flags>"), or undefined for a non-recording span. */
export function traceparentOf(span: Span): string | undefined {
  if (!span.isRecording()) return undefined;
  const ctx = span.spanContext();
  // A recording span is the SDK's, whose ids it generated or took from a valid parent: the
  // check is the cheap one (lengths, not all zeros), on the path of every delivered record.
  if (ctx.traceId.length !== 32 || ctx.spanId.length !== 16 || ctx.traceId === INVALID_TRACEID || ctx.spanId === INVALID_SPANID) return undefined;
  const flags = ctx.traceFlags & 0xff;
  return `00-${ctx.traceId}-${ctx.spanId}-${flags === TraceFlags.SAMPLED ? "01" : flags.toString(16).padStart(2, "0")}`;
}

const TRACE_FLAG_FORMS = '"none", "console", "jsonl", "jsonl:<path>", "otlp" or "otlp:<url>"';

function badTraceFlag(value: string, why?: string): Error {
  return new InputRejected("flag", `--trace: ${why === undefined ? "" : why + "; "}got ${JSON.stringify(value)}, expected ${TRACE_FLAG_FORMS}`);
}

/** Parses TelemetryConfig from a `--trace` flag value. `defaultFile` is used for bare "jsonl". */
export function parseTraceFlag(value: string, defaultFile: string): TelemetryConfig {
  const v = value.trim();
  const colon = v.indexOf(":");
  const head = colon === -1 ? v : v.slice(0, colon);
  const arg = colon === -1 ? undefined : v.slice(colon + 1);
  switch (head) {
    case "none":
    case "console":
      if (arg !== undefined) throw badTraceFlag(value, `"${head}" takes no argument`);
      return { exporter: head };
    case "jsonl":
      if (arg === undefined) return { exporter: "jsonl", file: defaultFile };
      if (arg === "") throw badTraceFlag(value, "empty path after jsonl:");
      return { exporter: "jsonl", file: arg };
    case "otlp": {
      // The endpoint of a bare "otlp" is the OTEL_EXPORTER_OTLP_* variables', read when tracing starts.
      if (arg === undefined) return { exporter: "otlp" };
      let url: URL;
      try {
        url = new URL(arg);
      } catch {
        throw badTraceFlag(redactFlag(value), "invalid OTLP URL");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw badTraceFlag(redactFlag(value), "the OTLP URL must be http: or https:");
      }
      return { exporter: "otlp", otlpUrl: arg };
    }
    default:
      throw badTraceFlag(value);
  }
}

/** Error messages may be logged: don't echo a URL's credentials or query back. */
function redactFlag(value: string): string {
  const colon = value.indexOf(":");
  return colon === -1 ? value : `${value.slice(0, colon + 1)}${redactUrl(value.slice(colon + 1).trim())}`;
}
