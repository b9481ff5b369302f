// The actor host's part digests and how it runs record-handler actors (services/distributed/
// actorHost.ts). A digest is computed again only for an actor whose state may have changed (a record
// was delivered to it, or its snapshot object is another), and then equals the from-scratch digest;
// record-handler actors run by the host itself behave as under XState's interpreter (same snapshots,
// emitted events, failures, persisted snapshots); AURATown's fast part text is the canonical JSON of
// each agent's hash view at every tick of a day.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { assign, createActor, setup } from "xstate";
import { recordActorLogic, type ActorDefinition, type Delivered, type Emitted, type WorldDefinition } from "../actors/actor.ts";
import type { TownEntries } from "../actors/auratown/events.ts";
import { auratownWorld } from "../actors/auratown/world.ts";
import { canonicalJson } from "../events/canonical.ts";
import { ActorFailed, ActorHost, partDigest } from "../services/distributed/actorHost.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { tempDir } from "./helpers.ts";
import { counterLogic } from "./counterActor.ts";


/** A state machine (XState's interpreter): its context is replaced, never mutated. */
const machine = setup({ types: { context: {} as { n: number }, events: {} as { type: "tick.phase" } | { type: "tick.started" } } }).createMachine({
  context: { n: 0 },
  on: { "tick.phase": { actions: assign(({ context }) => ({ n: context.n + 1 })) } },
});

const record = (type: string, seq: number, payload: unknown = null): Delivered => ({ type, payload, from: "episode", tick: 0, seq });

/** A world whose hash view counts its calls. */
function countingWorld(): { world: WorldDefinition; views: Map<string, number> } {
  const views = new Map<string, number>();
  const world = {
    name: "test",
    hashView: (id: string, context: unknown) => {
      views.set(id, (views.get(id) ?? 0) + 1);
      return context;
    },
  } as unknown as WorldDefinition;
  return { world, views };
}

const defs: ActorDefinition[] = [
  { id: "counter/a", logic: counterLogic, input: { start: 0 } },
  { id: "counter/b", logic: counterLogic, input: { start: 1 } },
  { id: "machine/m", logic: machine, input: undefined },
];

describe("part digests", () => {
  it("an actor delivered nothing since its last digest keeps it without being hashed again; a changed one gets a new digest equal to the from-scratch one", () => {
    const { world, views } = countingWorld();
    const host = new ActorHost(world, defs);
    const first = host.digests();
    expect([...views.values()]).toEqual([1, 1, 1]);

    // counter/a changes in place (same snapshot object): the delivery alone marks it changed.
    host.deliver(record("tick.started", 1, { tick: 3, clock: {} }), ["counter/a"]);
    const second = host.digests();
    expect(views.get("counter/a")).toBe(2);
    expect(views.get("counter/b")).toBe(1);
    expect(views.get("machine/m")).toBe(1);
    expect(second["counter/b"]).toBe(first["counter/b"]);
    expect(second["machine/m"]).toBe(first["machine/m"]);
    expect(second["counter/a"]).not.toBe(first["counter/a"]);
    // Digests from scratch: another host, hashing through an uncounted world of the same views.
    const scratch = countingWorld().world;
    const fresh = new ActorHost(scratch, defs);
    fresh.deliver(record("tick.started", 1, { tick: 3, clock: {} }), ["counter/a"]);
    // A host that never hashed before computes every digest from scratch.
    expect(second).toEqual(fresh.digests());
    expect(second["counter/a"]).toBe(partDigest(scratch, "counter/a", { context: { n: 3, seen: ["tick@1"] }, value: "small" }));

    // A machine's delivery replaces its snapshot: hashed again, and the digest follows the context.
    host.deliver(record("tick.phase", 2, { phase: "move" }), ["machine/m"]);
    const third = host.digests();
    expect(views.get("machine/m")).toBe(2);
    expect(third["machine/m"]).toBe(partDigest(scratch, "machine/m", { context: { n: 1 }, value: {} }));
    expect(third["counter/a"]).toBe(second["counter/a"]);

    // Asked again with nothing delivered: nothing is hashed.
    expect(host.digests()).toEqual(third);
    expect([...views.values()]).toEqual([2, 1, 2]);
  });

  it("a delivery that leaves the state as it was still gets a digest equal to the from-scratch one, and a restarted actor is hashed afresh", () => {
    const { world, views } = countingWorld();
    const host = new ActorHost(world, defs);
    const before = host.digests();
    host.deliver(record("unknown.type", 1), ["counter/b"]);
    expect(host.digests()["counter/b"]).toBe(before["counter/b"]);
    expect(views.get("counter/b")).toBe(2);
    host.deliver(record("tick.started", 2, { tick: 4, clock: {} }), ["counter/b"]);
    const changed = host.digests()["counter/b"];
    host.restart(["counter/b"]);
    expect(host.digests()["counter/b"]).toBe(before["counter/b"]);
    expect(changed).not.toBe(before["counter/b"]);
  });
});

describe("record-handler actors run by the host", () => {
  it("give the same replies, snapshots and persisted snapshots as the same logic under XState's interpreter", () => {
    const { world } = countingWorld();
    const host = new ActorHost(world, [defs[0]!]);
    const actor = createActor(counterLogic, { input: { start: 0 } });
    const emitted: Emitted[] = [];
    actor.on("*", (e: Emitted) => emitted.push(e));
    actor.start();
    const records = [record("tick.started", 1, { tick: 3, clock: {} }), record("unknown", 2), record("tick.phase", 3, { phase: "move" }), record("tick.started", 4, { tick: 7, clock: {} })];
    for (const r of records) {
      emitted.length = 0;
      const [replies] = host.deliver(r, ["counter/a"]);
      actor.send(r);
      expect(replies).toEqual(emitted);
      expect(JSON.stringify(host.snapshotTexts()["counter/a"])).toBe(JSON.stringify(JSON.stringify(actor.getPersistedSnapshot())));
    }
    expect(host.contextOf("counter/a")).toEqual({ n: 10, seen: ["tick@1", "tick@4"] });

    // A host started from that persisted snapshot goes on as the interpreter's actor does.
    const restored = new ActorHost(world, [defs[0]!], { restore: host.snapshots() });
    const next = record("tick.started", 5, { tick: 2, clock: {} });
    expect(restored.deliver(next, ["counter/a"])).toEqual(host.deliver(next, ["counter/a"]));
    expect(restored.snapshotTexts()).toEqual(host.snapshotTexts());
  });

  it("a handler that throws fails the delivery naming the actor and record, and the actor takes no more records", () => {
    const { world } = countingWorld();
    const host = new ActorHost(world, [defs[0]!]);
    expect(() => host.deliver(record("world.incident", 6, { location: "cafe", description: "a fire", stressful: true }), ["counter/a"])).toThrow(ActorFailed);
    expect(() => host.deliver(record("tick.started", 7, { tick: 2, clock: {} }), ["counter/a"])).toThrow("actor counter/a failed handling 'tick.started' (seq 7, tick 0): the handler broke");
  });
});

describe("delivery waves", () => {
  it("a wave gives every delivery's replies as the same records delivered one at a time, and the digests after it", () => {
    const { world } = countingWorld();
    const [one, many] = [new ActorHost(world, defs), new ActorHost(world, defs)];
    const records = [record("tick.started", 1, { tick: 2, clock: {} }), record("tick.phase", 2, { tick: 0, phase: "act" }), record("tick.started", 3, { tick: 3, clock: {} })];
    const recipients = [["counter/a", "counter/b"], ["counter/b", "machine/m"], ["counter/a"]];
    const expected = records.map((r, i) => one.deliver(r, recipients[i]!));
    const reply = many.wave({ deliveries: records.map((r, i) => ({ record: r, recipients: recipients[i]! })), digest: many.ids });
    expect(reply).toEqual({ replies: expected, parts: one.digests() });
  });

  it("a wave stops at an actor that fails, saying which; that record delivered to it again fails as it did without a wave", () => {
    const { world } = countingWorld();
    const [one, many] = [new ActorHost(world, defs), new ActorHost(world, defs)];
    const fire = record("world.incident", 2, { location: "cafe", description: "a fire", stressful: true });
    const records = [record("tick.started", 1, { tick: 2, clock: {} }), fire, record("tick.started", 3, { tick: 3, clock: {} })];
    const reply = many.wave({ deliveries: records.map((r) => ({ record: r, recipients: ["counter/a", "counter/b"] })), digest: many.ids });
    expect(reply).toEqual({ replies: [one.deliver(records[0]!, ["counter/a", "counter/b"])], failed: { delivery: 1, actor: "counter/a" } });
    let direct: unknown;
    try {
      one.deliver(fire, ["counter/a", "counter/b"]);
    } catch (error) {
      direct = error;
    }
    expect(direct).toBeInstanceOf(ActorFailed);
    expect(() => many.deliver(fire, ["counter/a"])).toThrow((direct as Error).message);
  });
});

describe("AURATown part text", () => {
  it("is the canonical JSON of every agent's hash view and state value at every tick of a day", async () => {
    let checked = 0;
    await runEpisode({
      world: "auratown",
      seed: 7,
      dir: join(tempDir("part-text"), "ep"),
      config: { extraAgents: 20 },
      trace: { exporter: "none" },
      snapshotEvery: 0,
      observer: {
        onTick: (_result, host) => {
          for (const id of host.ids) {
            const snapshot = { context: host.contextOf(id), value: id === "env/auratown" ? "running" : JSON.parse(host.snapshotTexts([id])[id]!).value };
            const text = auratownWorld.partText!(id, snapshot.context, snapshot.value);
            if (id === "env/auratown") expect(text).toBeNull();
            else expect(text).toBe(canonicalJson({ state: auratownWorld.hashView(id, snapshot.context), value: snapshot.value }));
            checked++;
          }
        },
      },
    });
    expect(checked).toBe(26 * 34);
  });

  it("falls back to serialising the view for a field of the wrong kind, which fails as before", () => {
    const host = new ActorHost(auratownWorld, auratownWorld.actors(auratownWorld.defaultConfig, 1));
    const id = host.ids[0]!;
    const context = { ...(host.contextOf(id) as object), x: Number.NaN };
    expect(auratownWorld.partText!(id, context, "asleep")).toBeNull();
    expect(() => partDigest(auratownWorld, id, { context, value: "asleep" })).toThrow("non-finite number NaN");
  });
});
