// The dashboard in a real browser: Debian's Chromium driven by playwright-core (nothing downloaded).
// Open the episodes list, open an episode, filter its timeline, click a record, check the detail.
// Every step waits for what it expects to appear (no timings), for a busy machine. Page-side checks
// are strings: the project's types have no DOM.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, repoRoot } from "./helpers.ts";
import { uiFixture } from "./uiFixtures.ts";

function findChromium(): string | null {
  for (const path of [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (path && existsSync(path)) return path;
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

const executablePath = findChromium();
const ARTEFACTS = join(repoRoot, "artefacts", "ui");
const WAIT = { timeout: 60_000 };

let server: UiServer | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("probetown ui in Chromium", () => {
  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)" : "lists episodes, opens one, filters its timeline and shows a record",
    async () => {
      const fixture = await uiFixture();
      server = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1" });
      await server.verification.settled();
      browser = await chromium.launch({ executablePath: executablePath!, headless: true, args: ["--headless", "--no-sandbox"], timeout: 120_000 });
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.setDefaultTimeout(60_000);

      // The list: three episodes, the fork under its parent, the damaged copy marked with verify's message.
      await page.goto(server.url);
      await page.waitForSelector('tr.episode[data-id="broken"]', WAIT);
      expect(await page.locator("tr.episode").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id")))).toEqual(["broken", "town", "forks/town-no-reflection"]);
      expect(await page.locator('tr.episode[data-id="forks/town-no-reflection"]').innerText()).toContain("fork of town at tick 0");
      const broken = await page.locator('tr.episode[data-id="broken"]').innerText();
      expect(broken).toContain("damaged");
      expect(broken).toContain("seq 4 (line 5)");
      await page.fill('input[type="search"]', "no-reflection");
      await page.waitForFunction('document.querySelectorAll("tr.episode").length === 1', undefined, WAIT);
      await page.fill('input[type="search"]', "");
      await page.waitForSelector('tr.episode[data-id="town"]', WAIT);

      // An episode: its timeline holds a mark per record.
      await page.click('tr.episode[data-id="town"]');
      await page.waitForSelector(".timeline svg rect.mark", WAIT);
      const records = logRecords(join(fixture.runs, "town"));
      expect(await page.locator("rect.mark").count()).toBe(records.length);

      // Filter by type: only the two tick commits remain.
      await page.check('fieldset[data-filter="type"] input[value="tick.committed"]');
      await page.waitForFunction('document.querySelectorAll("rect.mark").length === 2', undefined, WAIT);
      expect(await page.locator("rect.mark").evaluateAll((marks) => marks.map((m) => m.getAttribute("data-type")))).toEqual(["tick.committed", "tick.committed"]);

      // Click the second: its detail shows the record's seq, type and hash.
      const commit = records.filter((r) => r.type === "tick.committed")[1]!;
      await page.click(`rect.mark[data-seq="${commit.seq}"]`);
      await page.waitForSelector(`.detail[data-seq="${commit.seq}"]`, WAIT);
      expect(await page.locator(".detail-title").innerText()).toBe(`#${commit.seq} tick.committed`);
      expect(await page.locator(".detail-hash").innerText()).toBe(commit.hash);
      expect(await page.locator(".detail-payload").innerText()).toContain((commit.payload as { stateHash: string }).stateHash);

      // Filter by actor instead: every mark left is that actor's or addressed to it.
      await page.uncheck('fieldset[data-filter="type"] input[value="tick.committed"]');
      const actor = records.find((r) => r.from.startsWith("agent/"))!.from;
      await page.check(`fieldset[data-filter="actor"] input[value="${actor}"]`);
      const expected = records.filter((r) => r.from === actor || r.to === actor || (Array.isArray(r.to) && r.to.includes(actor))).length;
      await page.waitForFunction(`document.querySelectorAll("rect.mark").length === ${expected}`, undefined, WAIT);

      mkdirSync(ARTEFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTEFACTS, "timeline.png"), fullPage: true });

      // The town replay: the map with its residents, stepped to the next tick.
      await page.click('button[data-tab="world"]');
      await page.waitForSelector(".town-view g.resident", WAIT);
      expect(await page.locator(".town-view g.place").count()).toBe(20);
      expect(await page.locator(".town-tick").innerText()).toBe("tick 0");
      const residents = new Set(records.filter((r) => r.type === "location.occupancy" && r.tick === 0).flatMap((r) => (r.payload as { occupants: { agent: string }[] }).occupants.map((o) => o.agent)));
      expect(await page.locator(".town-view g.resident").count()).toBe(residents.size);
      await page.click('button[aria-label="step forward"]');
      await page.waitForFunction('document.querySelector(".town-tick")?.textContent === "tick 1"', undefined, WAIT);
      await page.screenshot({ path: join(ARTEFACTS, "town.png"), fullPage: true });
    },
    300_000,
  );
});
