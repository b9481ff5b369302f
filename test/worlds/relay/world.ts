// A world written only to show that a world is a module: counters draw a seeded step each tick and
// relay their value to a tally. It touches nothing outside test/worlds/relay/ but its registration.
import { Schema } from "effect";
import { recordActorLogic, type ActorDefinition, type PhaseStep, type WorldDefinition } from "../../../actors/actor.ts";
import { Draws, deriveStream, type StreamState } from "../../../actors/rng.ts";
import { InputRejected } from "../../../events/inputRejected.ts";
import { relayEvents, type RelayEntries } from "./events.ts";

const RelayConfigSchema = Schema.Struct({ counters: Schema.Int, steps: Schema.Int });
export type RelayConfig = typeof RelayConfigSchema.Type & { readonly scale: number };

interface CounterContext {
  index: number;
  scale: number;
  value: number;
  rng: StreamState;
}

interface TallyContext {
  total: number;
  heard: number;
}

const counterLogic = recordActorLogic<CounterContext, { index: number; scale: number; seed: number }, RelayEntries, "tick.started">({
  context: ({ index, scale, seed }) => ({ index, scale, value: 0, rng: deriveStream(seed, `relay/counter/${index}`) }),
  handlers: {
    "tick.started": (context) => {
      const draws = new Draws(context.rng);
      context.value += context.scale * draws.int(1, 6);
      context.rng = draws.state;
      return [{ type: "relay.counted", to: "tally", payload: { counter: context.index, value: context.value } }];
    },
  },
  valueOf: () => "counting",
});

const tallyLogic = recordActorLogic<TallyContext, undefined, RelayEntries, "relay.counted">({
  context: () => ({ total: 0, heard: 0 }),
  handlers: {
    "relay.counted": (context, event) => {
      context.total += event.payload.value;
      context.heard++;
      return [];
    },
  },
  valueOf: () => "listening",
});

const conditions = { baseline: { description: "each counter steps 1–6 a tick" }, double: { description: "each counter steps 2–12 a tick" } };

export const relayWorld: WorldDefinition<RelayConfig> = {
  name: "relay",
  events: relayEvents,
  description: "Relay: counters relay seeded steps to a tally (a test world)",
  defaultConfig: { counters: 3, steps: 4, scale: 1 },
  conditions,
  defaultCondition: "baseline",
  resolveConfig(raw) {
    const { scale, ...fields }: Record<string, unknown> = { counters: 3, steps: 4, ...((raw ?? {}) as object) };
    const config = Schema.decodeUnknownSync(RelayConfigSchema)(fields);
    if (config.counters < 1) throw new InputRejected("config", "invalid relay config: counters must be 1 or more");
    return { ...config, scale: typeof scale === "number" ? scale : 1 };
  },
  applyCondition(config, condition) {
    if (!(condition in conditions)) throw new InputRejected("condition", `unknown condition '${condition}' for relay (known: ${Object.keys(conditions).join(", ")})`);
    return { ...config, scale: condition === "double" ? 2 : 1 };
  },
  defaultTicks: (config) => config.steps,
  actors(config, seed): ActorDefinition[] {
    const counters = Array.from({ length: config.counters }, (_, index) => ({ id: `counter/${index}`, logic: counterLogic, input: { index, scale: config.scale, seed } }));
    return [...counters, { id: "tally", logic: tallyLogic, input: undefined }];
  },
  tickPlan(config, tick): PhaseStep[] {
    return [{ type: "tick.started", to: Array.from({ length: config.counters }, (_, i) => `counter/${i}`), payload: { tick, clock: {} } }];
  },
  hashView: (_actorId, context) => context,
  // A fork under another condition: its counters step at the new scale from the fork on.
  reconfigure: (actorId, context, config) => (actorId.startsWith("counter/") ? { ...(context as CounterContext), scale: config.scale } : context),
};
