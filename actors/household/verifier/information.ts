// Information necessity (digest §8.6 step 6): a functional literal depends on information when
// its decisive id — the furniture (or room) it names, which the public layout lists among
// look-alikes — appears only in the secrets of agents who cannot achieve the literal alone, so it
// must travel by message to one who can. Who can is decided by a single-agent physical search.
import { show, type Literal } from "../pddl.ts";
import type { CompiledTask } from "../task.ts";
import { searchPlans } from "./physical.ts";
import { abstractFor } from "./relevance.ts";

export interface LiteralInformation {
  readonly literal: string;
  readonly decisive: string;
  /** Agents whose secrets name the decisive id. */
  readonly holders: readonly string[];
  /** Agents that can make the literal true acting alone. */
  readonly achievers: readonly string[];
  readonly dependent: boolean;
}

/** The id that must be known to act: the literal's furniture or room (the last such argument), else its first. */
export function decisiveId(c: CompiledTask, l: Literal): string {
  const { scene } = c.task;
  const places = l.args.filter((a) => scene.furniture[a] !== undefined || scene.rooms.includes(a));
  return places[places.length - 1] ?? l.args[0]!;
}

/** Whether a text names an id as a whole word. */
export const mentions = (text: string, id: string): boolean => text.split(/[^A-Za-z0-9_]+/).includes(id);

export function informationOf(c: CompiledTask, literals: readonly Literal[]): { literal: Literal; info: LiteralInformation }[] {
  return literals.map((l) => {
    const decisive = decisiveId(c, l);
    const holders = c.agentIds.filter((a) => (c.task.agent_secrets[a] ?? []).some((s) => mentions(s, decisive)));
    const abs = abstractFor(c, [l]);
    const achievers = c.agentIds.filter((a) => searchPlans(abs, [[l]], { actors: [a] }).plans[0] !== null);
    const dependent = holders.length > 0 && achievers.length > 0 && !holders.some((h) => achievers.includes(h));
    return { literal: l, info: { literal: show(l), decisive, holders, achievers, dependent } };
  });
}

