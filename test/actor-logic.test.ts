// Record-handler actors (actors/actor.ts `recordActorLogic`): XState actors whose logic is their
// record handlers. What the host relies on: handlers run in delivery order and their emitted events
// reach it in order, the state value follows the context, a handler that throws fails the delivery
// naming the actor and record, and persisted snapshots (theirs, or a machine's) restore.
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { recordActorLogic, type ActorDefinition, type Delivered, type Emitted, type WorldDefinition } from "../actors/actor.ts";
import { ActorFailed, ActorHost } from "../services/distributed/actorHost.ts";

interface Counter {
  n: number;
  seen: string[];
}

const counterLogic = recordActorLogic<Counter, { start: number }>({
  context: (input) => ({ n: input.start, seen: [] }),
  handlers: {
    add: (context, event: Delivered<never>) => {
      context.n += event.payload as number;
      context.seen.push(`add@${event.seq}`);
      return context.n % 2 === 0 ? [{ type: "even", to: "other", payload: context.n }] : [];
    },
    echo: (context, event: Delivered<never>) => [
      { type: "first", to: null, payload: event.seq },
      { type: "second", to: null, payload: context.n },
    ],
    boom: () => {
      throw new Error("the handler broke");
    },
  },
  valueOf: (context) => (context.n >= 10 ? "big" : "small"),
});

const record = (type: string, seq: number, payload: unknown = null): Delivered => ({ type, payload, from: "episode", tick: 0, seq });

describe("record-handler actor logic", () => {
  it("runs each record's handler in order, emits what it returns in order, ignores types it has no handler for, and derives its value", () => {
    const actor = createActor(counterLogic, { input: { start: 1 } });
    const emitted: Emitted[] = [];
    actor.on("*", (e: Emitted) => emitted.push(e));
    actor.start();
    expect(actor.getSnapshot().value).toBe("small");
    actor.send(record("add", 1, 3));
    actor.send(record("unknown", 2));
    actor.send(record("echo", 3));
    actor.send(record("add", 4, 6));
    expect(actor.getSnapshot().context).toEqual({ n: 10, seen: ["add@1", "add@4"] });
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
    actor.send(record("add", 1, 4));
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { status: string; value: string; context: Counter };
    expect(Object.keys(persisted).sort()).toEqual(["context", "status", "value"]);
    const machineShaped = { status: "active", value: persisted.value, historyValue: {}, context: structuredClone(persisted.context), children: {} };
    // Each restore gets its own copy, as each read of a snapshot file does: contexts change in place.
    for (const snapshot of [persisted, machineShaped]) {
      const restored = createActor(counterLogic, { input: { start: 0 }, snapshot: snapshot as never }).start();
      expect(restored.getSnapshot().value).toBe("big");
      restored.send(record("add", 2, 1));
      expect(restored.getSnapshot().context).toEqual({ n: 13, seen: ["add@1", "add@2"] });
    }
  });

  it("a handler that throws fails the delivery, naming the actor and the record", () => {
    const world = { name: "test", hashView: (_id: string, context: unknown) => context } as unknown as WorldDefinition;
    const defs: ActorDefinition[] = [{ id: "counter/a", logic: counterLogic, input: { start: 0 } }];
    const host = new ActorHost(world, defs);
    expect(host.deliver(record("add", 5, 2), ["counter/a"])).toEqual([[{ type: "even", to: "other", payload: 2 }]]);
    let failure: unknown;
    try {
      host.deliver(record("boom", 6), ["counter/a"]);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ActorFailed);
    expect((failure as Error).message).toBe("actor counter/a failed handling 'boom' (seq 6, tick 0): the handler broke");
  });
});
