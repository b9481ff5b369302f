// A probe's answer, as every world kind builds it: read-only; the pairs are written back into
// beliefs.
import type { Answer } from "./types.ts";

export const answered = (pairs: [number, string][], extra: Record<string, string> = {}): Answer => ({ valid: true, reason: "ok", pairs, extra });
export const refused = (reason: string): Answer => ({ valid: false, reason, pairs: [], extra: {} });
