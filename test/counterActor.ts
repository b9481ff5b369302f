// A counter actor written with `recordActorLogic`, shared by the tests of record-handler actors
// (test/actor-logic.test.ts) and of the host that runs them (test/actor-host-digests.test.ts).
import { recordActorLogic } from "../actors/actor.ts";
import type { TownEntries } from "../actors/auratown/events.ts";

export interface Counter {
  n: number;
  seen: string[];
}

export const counterLogic = recordActorLogic<Counter, { start: number }, TownEntries, "tick.started" | "tick.phase" | "world.incident">({
  context: (input) => ({ n: input.start, seen: [] }),
  handlers: {
    // The payloads are typed from the catalogue: `tick` is a number, no cast.
    "tick.started": (context, event) => {
      context.n += event.payload.tick;
      context.seen.push(`tick@${event.seq}`);
      return context.n % 2 === 0 ? [{ type: "even", to: "other", payload: context.n }] : [];
    },
    "tick.phase": (context, event) => [
      { type: "first", to: null, payload: event.seq },
      { type: "second", to: null, payload: context.n },
    ],
    "world.incident": () => {
      throw new Error("the handler broke");
    },
  },
  valueOf: (context) => (context.n >= 10 ? "big" : "small"),
});
