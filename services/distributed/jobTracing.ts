// A traced sweep's side of its trace: one root span per job, whose W3C traceparent the job carries
// to whichever worker runs it, so each episode's trace starts at its job (one trace per episode,
// the queue wait included), and the `--trace` its local workers are started with. Tracing only:
// what a job runs and its outcome never depend on it.
import { resolve } from "node:path";
import { SpanKind, SpanStatusCode, type Attributes, type Span } from "@opentelemetry/api";
import { createTelemetry, traceparentOf, type Telemetry, type TelemetryConfig } from "../../infra/telemetry.ts";
import type { Job, JobOutcome, Submitted } from "../../infra/jobQueue.ts";

export class JobSpans {
  readonly telemetry: Telemetry;
  private readonly spans = new Map<string, Span>();
  private readonly attributesOf: (job: Job) => Attributes;

  constructor(telemetry: Telemetry, attributesOf: (job: Job) => Attributes = () => ({})) {
    this.telemetry = telemetry;
    this.attributesOf = attributesOf;
  }

  /** The jobs, each with the traceparent of a new root span of its own (the jobs as they are when tracing is off). */
  tag<S>(jobs: readonly Job<S>[]): Job<S>[] {
    if (!this.telemetry.enabled) return [...jobs];
    return jobs.map((job) => {
      const span = this.telemetry.tracer.startSpan(`sweep job ${job.id}`, { kind: SpanKind.PRODUCER, root: true, attributes: { "probetown.job.id": job.id, ...this.attributesOf(job as Job) } });
      this.spans.set(job.id, span);
      const traceparent = traceparentOf(span);
      return traceparent === undefined ? job : { ...job, traceparent };
    });
  }

  /** What the submit did: a job already finished (its recorded outcome serves) or already queued by an earlier submit is said on its span. */
  submitted(s: Submitted): void {
    for (const id of s.finished) this.spans.get(id)?.setAttribute("probetown.job.already_finished", true);
    // Its queued message carries the earlier submit's traceparent (or none): its run is not under this span.
    for (const id of s.pending) this.spans.get(id)?.setAttribute("probetown.job.already_queued", true);
  }

  /** Ends the job's span with its outcome. */
  settle(outcome: JobOutcome): void {
    const span = this.spans.get(outcome.id);
    if (span === undefined) return;
    this.spans.delete(outcome.id);
    span.setAttributes({ "probetown.job.worker": outcome.worker, "probetown.job.attempt": outcome.attempt, "probetown.job.ok": outcome.ok });
    if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.error === undefined ? {} : { message: outcome.error.slice(0, 300) }) });
    span.end();
  }

  private closed: Promise<{ readonly spans: number; readonly error: string } | null> | undefined;

  /**
   * Ends the spans of jobs without an outcome (a stopped or failed sweep), then flushes and shuts
   * down; what never arrived, or null. Later calls return the first call's answer.
   */
  close(): Promise<{ readonly spans: number; readonly error: string } | null> {
    this.closed ??= (async () => {
      for (const span of this.spans.values()) {
        span.setAttribute("probetown.job.unfinished", true);
        span.end();
      }
      this.spans.clear();
      await this.telemetry.shutdown().catch(() => undefined);
      return this.telemetry.undelivered();
    })();
    return this.closed;
  }
}

/** A sweep's job spans under `config` (none: tracing off, the jobs go untagged). */
export function jobSpans(config: TelemetryConfig | null, attributesOf?: (job: Job) => Attributes): JobSpans {
  return new JobSpans(createTelemetry({ ...(config ?? { exporter: "none" }), serviceName: "probetown-sweep" }), attributesOf);
}

/**
 * The `--trace` of a sweep's local `probetown worker` processes, so their spans go where the
 * sweep's go: the same JSONL file (by absolute path: they may start elsewhere), the console (their
 * stderr is the sweep's), or the same OTLP endpoint. An endpoint given on the command line goes to
 * them in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, not in their arguments, where `ps` would show any
 * credentials in it; the OTEL_* variables of the sweep's environment are theirs already.
 */
export function workerTrace(config: TelemetryConfig | null): { readonly args: readonly string[]; readonly env: Readonly<Record<string, string>> } {
  if (config === null) return { args: [], env: {} };
  switch (config.exporter) {
    case "none":
      return { args: [], env: {} };
    case "console":
      return { args: ["--trace", "console"], env: {} };
    case "jsonl":
      return { args: ["--trace", `jsonl:${resolve(config.file ?? "trace.jsonl")}`], env: {} };
    case "otlp":
      return { args: ["--trace", "otlp"], env: config.otlpUrl === undefined ? {} : { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: config.otlpUrl } };
  }
}
