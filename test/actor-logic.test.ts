// Record-handler actors (actors/actor.ts `recordActorLogic`): XState actors whose logic is their
// record handlers. What the host relies on: handlers run in delivery order and their emitted events
// reach it in order, the state value follows the context, a handler that throws fails the delivery
// naming the actor and record, and persisted snapshots (theirs, or a machine's) restore. Handler
// tables are typed from the event catalogue: the typecheck (which covers test/) holds the
// `@ts-expect-error` lines below to a handler for the wrong record type being refused.
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { recordActorLogic, type ActorDefinition, type Delivered, type Emitted, type HandlerTable, type RecordIn, type WorldDefinition } from "../actors/actor.ts";
import type { KernelEntries } from "../events/catalogue.ts";
import { counterLogic, type Counter } from "./counterActor.ts";
import { ActorFailed, ActorHost } from "../services/distributed/actorHost.ts";


const record = (type: string, seq: number, payload: unknown = null): Delivered => ({ type, payload, from: "episode", tick: 0, seq });

describe("record-handler actor logic", () => {
  it("runs each record's handler in order, emits what it returns in order, ignores types it has no handler for, and derives its value", () => {
    const actor = createActor(counterLogic, { input: { start: 1 } });
    const emitted: Emitted[] = [];
    actor.on("*", (e: Emitted) => emitted.push(e));
    actor.start();
    expect(actor.getSnapshot().value).toBe("small");
    actor.send(record("tick.started", 1, { tick: 3, clock: {} }));
    actor.send(record("unknown", 2));
    actor.send(record("tick.phase", 3, { phase: "move" }));
    actor.send(record("tick.started", 4, { tick: 6, clock: {} }));
    expect(actor.getSnapshot().context).toEqual({ n: 10, seen: ["tick@1", "tick@4"] });
    expect(actor.getSnapshot().value).toBe("big");
    expect(emitted.map((e) => [e.type, e.payload])).toEqual([
      ["even", 4],
      ["first", 3],
      ["second", 4],
      ["even", 10],
    ]);
  });

  it("restores from its own persisted snapshot and from a machine's (same context and value)", () => {
    const actor = createActor(counterLogic, { input: { start: 8 } }).start();
    actor.send(record("tick.started", 1, { tick: 4, clock: {} }));
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { status: string; value: string; context: Counter };
    expect(Object.keys(persisted).sort()).toEqual(["context", "status", "value"]);
    const machineShaped = { status: "active", value: persisted.value, historyValue: {}, context: structuredClone(persisted.context), children: {} };
    // Each restore gets its own copy, as each read of a snapshot file does: contexts change in place.
    for (const snapshot of [persisted, machineShaped]) {
      const restored = createActor(counterLogic, { input: { start: 0 }, snapshot: snapshot as never }).start();
      expect(restored.getSnapshot().value).toBe("big");
      restored.send(record("tick.started", 2, { tick: 1, clock: {} }));
      expect(restored.getSnapshot().context).toEqual({ n: 13, seen: ["tick@1", "tick@2"] });
    }
  });

  it("a handler that throws fails the delivery, naming the actor and the record", () => {
    const world = { name: "test", hashView: (_id: string, context: unknown) => context } as unknown as WorldDefinition;
    const defs: ActorDefinition[] = [{ id: "counter/a", logic: counterLogic, input: { start: 0 } }];
    const host = new ActorHost(world, defs);
    expect(host.deliver(record("tick.started", 5, { tick: 2, clock: {} }), ["counter/a"])).toEqual([[{ type: "even", to: "other", payload: 2 }]]);
    let failure: unknown;
    try {
      host.deliver(record("world.incident", 6, { location: "cafe", description: "a fire", stressful: true }), ["counter/a"]);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ActorFailed);
    expect((failure as Error).message).toBe("actor counter/a failed handling 'world.incident' (seq 6, tick 0): the handler broke");
  });
});

describe("handler tables typed from the catalogue", () => {
  const onPhase = (context: Counter, event: RecordIn<KernelEntries, "tick.phase">): Emitted[] => {
    context.seen.push(event.payload.phase);
    return [];
  };

  it("take each record type's handler, and refuse (at compile time) a handler for another type or a type the catalogue lacks", () => {
    const table: HandlerTable<Counter, KernelEntries, "tick.phase"> = { "tick.phase": onPhase };
    // @ts-expect-error: a `tick.phase` handler cannot take `tick.started` records (their payload has no `phase`).
    const wrongType: HandlerTable<Counter, KernelEntries, "tick.started"> = { "tick.started": onPhase };
    // @ts-expect-error: `no.such.type` is not among the record types.
    const notCatalogued: HandlerTable<Counter, KernelEntries, "no.such.type"> = { "no.such.type": () => [] };
    const logic = recordActorLogic<Counter, undefined, KernelEntries, "tick.phase" | "tick.started" | "tick.committed">({
      context: (): Counter => ({ n: 0, seen: [] }),
      handlers: {
        "tick.phase": onPhase,
        // @ts-expect-error: recordActorLogic's table is typed too: a `tick.phase` handler under `tick.started`.
        "tick.started": onPhase,
        // @ts-expect-error: an inline handler's payload is its type's (`tick.committed` has `stateHash` and `parts`, no `phase`).
        "tick.committed": (context, event) => (context.seen.push(event.payload.phase), []),
      },
      valueOf: () => "running",
    });
    const actor = createActor(logic).start();
    actor.send(record("tick.phase", 1, { phase: "move" }));
    expect(actor.getSnapshot().context.seen).toEqual(["move"]);
    expect([table, wrongType, notCatalogued].map((t) => Object.keys(t))).toEqual([["tick.phase"], ["tick.started"], ["no.such.type"]]);
  });
});
