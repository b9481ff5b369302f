// The turn estimate (digest §8.6 step 7): T_min is the golden trajectory's parallel turns plus one
// turn per message of the epistemic plan (a message goes out in its sender's turn and is read the
// next). With no model baseline to calibrate against, T_max = 2 × max(T_min, 6).
import type { Message } from "./epistemic.ts";

export interface TurnEstimate {
  readonly physicalTurns: number;
  readonly messageTurns: number;
  readonly tMin: number;
  readonly tMax: number;
}

export function estimateTurns(physicalTurns: number, messages: readonly Message[]): TurnEstimate {
  const tMin = physicalTurns + messages.length;
  return { physicalTurns, messageTurns: messages.length, tMin, tMax: 2 * Math.max(tMin, 6) };
}
