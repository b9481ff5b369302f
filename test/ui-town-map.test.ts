// The town replay's map for a large town, in a real browser (Debian's Chromium through
// playwright-core): above 40 residents the map shows one marker per place with its count (the
// counts add up to the residents), a click on one shows that place's residents one by one, and the
// tick's incidents and conversations are marked at their places. Checked with axe-core. Every step
// waits for what it expects (no timings).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runEpisode } from "../services/kernel/episodes.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, tempDir } from "./helpers.ts";
import { ARTEFACTS, checkView, findChromium, openDashboard, openPage } from "./uiBrowser.ts";

const executablePath = findChromium();
const WAIT = { timeout: 60_000 };
const RESIDENTS = 65;

let runs: string;
let server: UiServer | undefined;
let browser: Browser | undefined;
let ui: Awaited<ReturnType<typeof openDashboard>> | undefined;

beforeAll(async () => {
  if (executablePath === null) return;
  runs = join(tempDir("ui-town-map"), "runs");
  // Incidents every tick, so the first tick has one to mark.
  await runEpisode({ world: "auratown", seed: 5, ticks: 3, dir: join(runs, "big"), config: { extraAgents: RESIDENTS - 5, incidents: { rate: 1, stressfulShare: 0.5 } }, trace: { exporter: "none" }, fsync: "never" });
  ui = await openDashboard(executablePath, runs);
  ({ server, browser } = ui);
}, 300_000);

afterAll(async () => {
  await ui?.close();
});

describe("the town replay's map for a large town", () => {
  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)" : "aggregates residents per place, expands a place on click and marks the tick's incidents",
    async () => {
      const records = logRecords(join(runs, "big"));
      const page = await openPage(browser!);
      await page.goto(`${server!.url}/#/episode?id=big`);
      await page.click('button[data-tab="world"]');
      await page.waitForSelector(".town-view g.cluster", WAIT);
      const tick = Number((await page.locator(".town-tick").innerText()).replace("tick ", ""));
      // One marker per place, their counts adding up to the tick's residents; no single markers.
      const occupancy = new Map<string, string | null>();
      for (const r of records.filter((x) => x.type === "location.occupancy" && x.tick === tick)) {
        const p = r.payload as { location: string | null; occupants: { agent: string }[] };
        for (const o of p.occupants) occupancy.set(o.agent, p.location);
      }
      expect(occupancy.size).toBe(RESIDENTS);
      const counts = (await page.locator(".town-view g.cluster").evaluateAll((gs) => gs.map((g) => Number(g.getAttribute("data-count"))))) as number[];
      expect(counts.reduce((a, b) => a + b, 0)).toBe(RESIDENTS);
      expect(await page.locator(".town-view g.resident").count()).toBe(0);
      // The most crowded place, expanded: its residents one by one.
      const byPlace = new Map<string, number>();
      for (const place of occupancy.values()) if (place !== null) byPlace.set(place, (byPlace.get(place) ?? 0) + 1);
      const [place, n] = [...byPlace].sort((a, b) => b[1] - a[1])[0]!;
      await page.click(`.town-view g.cluster[data-cluster="${place}"]`);
      await page.waitForSelector(`.town-view g.cluster-expanded[data-cluster="${place}"] g.resident`, WAIT);
      expect(await page.locator(".town-view g.cluster-expanded g.resident").count()).toBe(n);
      // The tick's incident, marked at its place.
      const incident = records.find((r) => r.type === "world.incident" && r.tick === tick)!;
      expect(incident).toBeDefined();
      await page.waitForSelector(`.town-view g.town-incident[data-location="${(incident.payload as { location: string }).location}"]`, WAIT);
      await checkView(page, "town-aggregated");
      await page.close();
    },
    300_000,
  );
});
