// Deep links into a Jaeger UI (`probetown ui --jaeger <url>`): a tick's span tree links to its trace
// at `<base>/trace/<trace id>`. The base may carry a path (a Jaeger UI served under a prefix, its
// `--query.base-path`) with or without a trailing slash; a query, fragment or credentials are
// refused, since the trace's path is joined to the base's. A trace id is linked only in the form
// Jaeger looks it up by: 32 hex digits (W3C, OpenTelemetry) or 16 (Jaeger's 64-bit ids), not all
// zeros (OpenTelemetry's invalid id), lower case.
import { UsageError } from "../kernel/usageError.ts";

/** Why `text` is not a Jaeger UI's address, or null when it is one. */
export function jaegerBaseProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} is not http(s)`;
  if (url.hostname === "") return "no host";
  if (url.username !== "" || url.password !== "") return "credentials in the address would be shown in every link";
  if (url.search !== "" || url.hash !== "") return "a query or fragment cannot be joined to the trace's path";
  return null;
}

/** The base address as links are built on: checked, ending in one slash. */
export function jaegerBase(text: string): string {
  const problem = jaegerBaseProblem(text);
  if (problem !== null) throw new UsageError(`--jaeger ${text}: ${problem}; expected the Jaeger UI's http(s) address, e.g. http://localhost:16686`);
  const url = new URL(text);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/`;
  return url.href;
}

/** A trace id as Jaeger finds it (lower-case hex, 32 or 16 digits, not all zeros), or null. */
export function jaegerTraceId(traceId: string): string | null {
  const id = traceId.trim().toLowerCase();
  return /^(?:[0-9a-f]{32}|[0-9a-f]{16})$/.test(id) && /[1-9a-f]/.test(id) ? id : null;
}

/** The trace's page in the Jaeger UI at `base` (as `jaegerBase` gives it), or null for an id Jaeger would not find. */
export function jaegerTraceUrl(base: string, traceId: string): string | null {
  const id = jaegerTraceId(traceId);
  return id === null ? null : new URL(`trace/${encodeURIComponent(id)}`, base).href;
}
