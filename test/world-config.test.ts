// A world config with a field the world does not know is refused, naming the field's path, so a
// typo in a --config file ("sped", "memory.capasity") cannot silently run the defaults.
import { describe, expect, it } from "vitest";
import { worldNamed } from "../services/kernel/worlds.ts";
import { runCli } from "./helpers.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";

describe("world configs", () => {
  it("refuse unknown fields at any depth, in every world", () => {
    expect(() => worldNamed("auratown").resolveConfig({ sped: 3 })).toThrow(/excess property at \["sped"\]/);
    expect(() => worldNamed("auratown").resolveConfig({ memory: { capasity: 3 } })).toThrow(/excess property at \["memory"\]\["capasity"\]/);
    expect(() => worldNamed("envprobe").resolveConfig({ world: "tooldag", horizn: 10 })).toThrow(/excess property at \["horizn"\]/);
    expect(() => worldNamed("aura-scene").resolveConfig({ maxStep: 2 })).toThrow(/excess property at \["maxStep"\]/);
    // Known fields still merge over the defaults.
    expect(worldNamed("auratown").resolveConfig({ speed: 3 })).toMatchObject({ speed: 3 });
  });

  it("name the fields the misspelt one's object has, at any depth (array items and nullable objects too)", () => {
    expect(() => worldNamed("auratown").resolveConfig({ sped: 3 })).toThrow(/\["sped"\] \(the config has the fields: agents, clock, conversation, extraAgents, features, incidents, map, memory, perception, routineNoise, speed\)$/);
    expect(() => worldNamed("auratown").resolveConfig({ clock: { startHuor: 6 } })).toThrow(/\["clock"\]\["startHuor"\] \(config\["clock"\] has the fields: endHour, startHour, tickMinutes\)$/);
    expect(() => worldNamed("auratown").resolveConfig({ agents: [{ id: "a", nam: "x" }] })).toThrow(/\["agents"\]\[0\]\["nam"\] \(config\["agents"\]\[0\] has the fields: age, emoji, home, id, name, occupation, openHours, personality, relationships, routine, workplaces\)$/);
    expect(() => worldNamed("envprobe").resolveConfig({ calibration: { decy: 1 } })).toThrow(/config\["calibration"\] has the fields: .*\bdecay\b/);
    expect(() => worldNamed("aura-scene").resolveConfig({ strategy: { kind: "aura-intent", maxStep: 3 } })).toThrow(/config\["strategy"\] has the fields: inferrer, kind, maxSteps, memory, reuse\)$/);
    // A wrong type keeps Effect's own message: the field is known.
    expect(() => worldNamed("auratown").resolveConfig({ clock: { startHour: "x" } })).toThrow(/Expected number at \["clock"\]\["startHour"\]$/);
  });

  it("a --config file with a typo exits 2 before anything runs", async () => {
    const dir = tempDir("config-typo");
    writeFileSync(join(dir, "c.json"), JSON.stringify({ memory: { capasity: 3 } }));
    const r = await runCli(["run", "auratown", "--seed", "1", "--config", join(dir, "c.json"), "--log", join(dir, "never")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/invalid auratown config: .*\["memory"\]\["capasity"\]/);
  });

  it("an aura-scene factual condition on the agent-state registry is refused (it would probe nothing)", async () => {
    const scene = worldNamed("aura-scene");
    const agentState = scene.resolveConfig({});
    expect(() => scene.applyCondition(agentState, "fixed-probe")).toThrow(/condition 'fixed-probe': it probes the environment registry .* this config's registry is 'agent-state'/);
    expect(() => scene.applyCondition(agentState, "plan-and-solve")).not.toThrow();
    expect(() => scene.resolveConfig({ queries: [{ id: "1", text: "Is Ben around?", asker: "Nobody" }] })).toThrow(/query '1' is asked by 'Nobody', who is not in the scene \(residents: Ana, Ben\)/);
    const dir = tempDir("scene-factual");
    const r = await runCli(["run", "aura-scene", "--seed", "1", "--condition", "aura-gap-routed", "--log", join(dir, "never")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/invalid aura-scene config for condition 'aura-gap-routed'/);
  });
});
