// A tiny local OTLP/HTTP collector for tests: a node:http server on 127.0.0.1 (port 0) that takes
// POST /v1/traces with OTLP JSON bodies (the JSON exporter's, probetown's default; gzipped or not)
// and keeps every span with its resource's attributes. A protobuf body is kept undecoded.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** An OTLP attribute value as it is in the JSON encoding. */
interface AnyValue {
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly arrayValue?: { readonly values?: readonly AnyValue[] };
  readonly kvlistValue?: { readonly values?: readonly KeyValue[] };
}
interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

export interface CollectedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** null for a root span. */
  readonly parentSpanId: string | null;
  readonly name: string;
  /** OTLP's span kind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly resource: Readonly<Record<string, unknown>>;
}

export interface Collected {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body (gunzipped), for a protobuf one. */
  readonly body: Buffer;
}

const valueOf = (v: AnyValue): unknown => {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue !== undefined) return attributesOf(v.kvlistValue.values);
  return null;
};
const attributesOf = (kvs: readonly KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

export interface OtlpCollector {
  /** The base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it: http://127.0.0.1:<port>. */
  readonly endpoint: string;
  /** Every span received so far, in arrival order. */
  spans(): CollectedSpan[];
  /** Every request received so far. */
  requests(): Collected[];
  close(): Promise<void>;
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const requests: Collected[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
      requests.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.method !== "POST" || req.url !== "/v1/traces") return void res.writeHead(404).end();
      if (String(req.headers["content-type"]).includes("json")) {
        const doc = JSON.parse(body.toString("utf8")) as {
          resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }[] }[] }[];
        };
        for (const rs of doc.resourceSpans ?? []) {
          const resource = attributesOf(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? null : s.parentSpanId, name: s.name, kind: s.kind, attributes: attributesOf(s.attributes), resource });
            }
          }
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else {
        // An empty ExportTraceServiceResponse is an empty protobuf message.
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...spans],
    requests: () => [...requests],
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The OTEL_* variables a test sets itself, emptied (the SDK reads an empty one as unset), so a
 * developer's own environment cannot change what a test sees.
 */
export const NO_OTEL_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  [
    "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
  ].map((name) => [name, ""]),
);
