// The town replay's API on a crowded town, in process: the view's first answer, a tick's frame and
// a resident's panel each stay bounded by the town's size, where the view sent whole paired every
// occupant of a place with every other (what a 1,000-resident day's answer grew past V8's longest
// string with). Sizes are asserted, not timings.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocationObservedPayload } from "../actors/auratown/events.ts";
import type { LogRecord } from "../events/record.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, tempDir } from "./helpers.ts";

const RESIDENTS = 400;
const TICKS = 2;
const ATTENTION = 12;

let runs: string;
let records: LogRecord[];
let server: UiServer;

beforeAll(async () => {
  runs = join(tempDir("ui-world-view"), "runs");
  await runEpisode({ world: "auratown", seed: 42, ticks: TICKS, dir: join(runs, "crowd"), config: { extraAgents: RESIDENTS - 5 }, trace: { exporter: "none" }, fsync: "never" });
  records = logRecords(join(runs, "crowd"));
  server = await startUi({ runs, port: 0, host: "127.0.0.1" });
}, 300_000);

afterAll(async () => {
  await server?.close();
});

/** The answer's status, its body's length in characters, and its data. */
async function ask(path: string): Promise<{ status: number; chars: number; data: Record<string, unknown> }> {
  const response = await fetch(server.url + path);
  const text = await response.text();
  return { status: response.status, chars: text.length, data: (JSON.parse(text) as { data: Record<string, unknown> }).data };
}

describe("the town replay's API on a crowded town", () => {
  it("answers the view, a tick and a resident each within a bound of the town's size", async () => {
    // What the view sent whole held: one entry per observer and other occupant of each observation
    // (each at least ~60 characters as JSON): over 3 MB for this town's two ticks.
    const observed = records.filter((r) => r.type === "location.observed");
    const pairs = observed.reduce((n, r) => n + (r.to as string[]).length * ((r.payload as LocationObservedPayload).occupants.length - 1), 0);
    expect(pairs * 60).toBeGreaterThan(3_000_000);

    const view = await ask("/api/world-view?id=crowd");
    expect(view.status).toBe(200);
    expect(view.data.ticks).toEqual([0, 1]);
    expect(view.data.residents).toBe(RESIDENTS);
    expect(view.chars).toBeLessThan(16_000);

    // A frame: each resident once, ~100 characters each.
    const frame = await ask("/api/world-view?id=crowd&tick=1");
    expect(frame.status).toBe(200);
    expect((frame.data.residents as unknown[]).length).toBe(RESIDENTS);
    expect(frame.chars).toBeLessThan(RESIDENTS * 250);

    // A panel: the resident in the most crowded place noticed at most ATTENTION others a tick.
    const crowded = observed.filter((r) => r.tick === 1).sort((a, b) => (b.to as string[]).length - (a.to as string[]).length)[0]!;
    const agent = (crowded.to as string[])[0]!;
    expect((crowded.to as string[]).length).toBeGreaterThan(ATTENTION + 1);
    const panel = await ask(`/api/world-view?id=crowd&resident=${encodeURIComponent(agent)}&tick=1`);
    expect(panel.status).toBe(200);
    const beliefs = panel.data.beliefs as { about: string; tick: number }[];
    expect(beliefs.length).toBeGreaterThan(0);
    expect(beliefs.length).toBeLessThanOrEqual(ATTENTION * TICKS);
    expect(panel.chars).toBeLessThan(64_000);
    // Those it noticed at tick 1: the next ATTENTION occupants after itself, wrapping (as the agent does).
    const occupants = (crowded.payload as LocationObservedPayload).occupants.map((o) => o.agent);
    const self = occupants.indexOf(agent);
    const noticed = Array.from({ length: ATTENTION }, (_, k) => occupants[(self + k + 1) % occupants.length]);
    expect(beliefs.filter((b) => b.tick === 1).map((b) => b.about).sort()).toEqual(noticed.sort());
  }, 120_000);
});
