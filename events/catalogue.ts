// The event catalogue: every type that may enter a log, with its schema version. Reading a log
// checks each record against it, so an unknown type or a malformed payload is reported at its seq.
import { Schema } from "effect";
import { kernelEvents } from "./kernel.ts";
import { auratownEvents } from "./auratown.ts";

interface CatalogueEntry {
  readonly version: number;
  readonly payload: Schema.Top;
}

export const catalogue: Readonly<Record<string, CatalogueEntry>> = { ...kernelEvents, ...auratownEvents };

const decoders = new Map<string, (u: unknown) => unknown>(
  Object.entries(catalogue).map(([type, entry]) => [type, Schema.decodeUnknownSync(entry.payload as Schema.Codec<unknown, unknown>)]),
);

export function isKnownEventType(type: string): boolean {
  return decoders.has(type);
}

export function versionOf(type: string): number {
  const entry = catalogue[type];
  if (entry === undefined) throw new Error(`event type '${type}' is not in the catalogue (events/catalogue.ts)`);
  return entry.version;
}

/** Returns null when the payload is valid for its type, otherwise a one-line reason. */
export function payloadProblem(type: string, payload: unknown): string | null {
  const decode = decoders.get(type);
  if (decode === undefined) return `unknown event type '${type}'`;
  try {
    decode(payload);
    return null;
  } catch (error) {
    return String((error as Error).message).replace(/\s+/g, " ").trim();
  }
}
