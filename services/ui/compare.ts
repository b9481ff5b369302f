// The compare view's data: two episodes' logs through the kernel's own diff (`compareLogs`, what
// `probetown diff` prints) and its tick-by-tick state-hash agreement, read from the logs as loaded.
import { compareLogs, stateAgreement, type EpisodeDiff, type TickAgreement } from "../kernel/episodeDiff.ts";
import { UsageError } from "../kernel/usageError.ts";
import type { LoadedLog } from "./records.ts";
import type { Checked } from "./fork.ts";

export interface Comparison {
  readonly diff: EpisodeDiff;
  readonly ticks: readonly TickAgreement[];
  /** Why a side was read only in part (its damage), or null. */
  readonly damage: { readonly a: string | null; readonly b: string | null };
}

/** Refusals from the logs (another world, no header) name the side; other errors are the server's. */
export function compareLoaded(a: { id: string; log: LoadedLog }, b: { id: string; log: LoadedLog }): Checked<Comparison> {
  try {
    const diff = compareLogs(a.log.records, b.log.records, a.id, b.id);
    const ticks = stateAgreement(a.log.records, b.log.records, a.id, b.id);
    return { ok: true, value: { diff, ticks, damage: { a: a.log.damage, b: b.log.damage } } };
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, message: `a, b: ${error.message}` };
    throw error;
  }
}
