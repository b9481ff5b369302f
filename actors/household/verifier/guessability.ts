// Non-guessability (digest §8.6 step 6): the decisive id of an information-dependent literal must
// not be guessable from public knowledge — the layout must show at least three look-alikes (same
// kind, same room) and the public task text must not name it. A task passes when one of its
// information-dependent literals is non-guessable.
import type { CompiledTask } from "../task.ts";
import { mentions, type LiteralInformation } from "./information.ts";

export const MIN_CANDIDATES = 3;

export interface Guessability {
  readonly literal: string;
  readonly decisive: string;
  readonly candidates: readonly string[];
  readonly leakedInText: boolean;
  readonly guessable: boolean;
}

export function guessability(c: CompiledTask, info: LiteralInformation): Guessability {
  const { furniture } = c.task.scene;
  const f = furniture[info.decisive];
  const candidates = f === undefined ? [info.decisive] : Object.keys(furniture).filter((id) => furniture[id]!.room === f.room && furniture[id]!.kind === f.kind && furniture[id]!.articulated === f.articulated).sort();
  const leakedInText = mentions(c.task.task, info.decisive) || mentions(c.task.title, info.decisive);
  return { literal: info.literal, decisive: info.decisive, candidates, leakedInText, guessable: leakedInText || candidates.length < MIN_CANDIDATES };
}
