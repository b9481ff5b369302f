// The town replay in Chromium (Debian's, through playwright-core): the page `probetown run` prints
// for the day it ran opens that day's town replay; and a fast drag of the scrubber, while the
// server holds every frame back, leaves each frame it passed over aborted and draws the tick where
// it stopped (services/auratown/ui/townView.js, frameFetcher). Assertions hold however the drag's
// moves are timed: no frame is answered until the drag is over.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Request, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { runCli, tempDir } from "./helpers.ts";
import { ARTEFACTS, checkView, findChromium, openDashboard, openPage } from "./uiBrowser.ts";

const executablePath = findChromium();
const WAIT = { timeout: 60_000 };
const TICKS = 12;

let runs: string;
let printed: string;
let server: UiServer | undefined;
let browser: Browser | undefined;
let ui: Awaited<ReturnType<typeof openDashboard>> | undefined;

beforeAll(async () => {
  runs = join(tempDir("ui-town-replay"), "runs");
  mkdirSync(runs, { recursive: true });
  // `npm start`'s run, shorter.
  const run = await runCli(["run", "auratown", "--seed", "42", "--ticks", String(TICKS), "--log", join(runs, "auratown-s42-baseline"), "--trace", "none"]);
  expect(run.code).toBe(0);
  printed = run.out;
  if (executablePath === null) return;
  ui = await openDashboard(executablePath, runs);
  ({ server, browser } = ui);
}, 300_000);

afterAll(async () => {
  await ui?.close();
});

/** The page the run printed, on the test's server. */
const printedPage = (): { runs: string; url: URL } => {
  const line = printed.split("\n").find((l) => l.startsWith("view:"))!;
  const match = /npx probetown ui --runs (\S+) +then open (\S+)$/.exec(line);
  expect(match, line).not.toBeNull();
  return { runs: match![1]!, url: new URL(match![2]!) };
};

describe("the town replay", () => {
  it("`probetown run` prints the dashboard command and the page of the day it ran", () => {
    const { runs: shown, url } = printedPage();
    expect(join(shown)).toBe(runs);
    expect(url.origin).toBe("http://127.0.0.1:4173");
    expect(url.hash).toBe("#/episode?id=auratown-s42-baseline&view=world");
  });

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)" : "the printed page opens the town replay; a fast drag aborts the frames it passes over",
    async () => {
      const page = await openPage(browser!);
      await page.goto(`${server!.url}/${printedPage().url.hash}`);
      await page.waitForSelector(".town-view", WAIT);
      expect(await page.locator('button[data-tab="world"]').getAttribute("class")).toContain("active");
      await page.waitForFunction(`document.querySelector(".town-tick")?.textContent === "tick 0"`, undefined, WAIT);
      await checkView(page, "town-replay-opened");
      const last = Number(await page.locator('input[aria-label="tick"]').getAttribute("max"));
      expect(last).toBeGreaterThan(5);

      // From here the server answers no frame until the drag is over.
      const held: Route[] = [];
      await page.route((url) => url.pathname === "/api/world-view" && url.searchParams.has("tick"), (route) => void held.push(route));
      const asked: Request[] = [];
      const aborted = new Set<Request>();
      page.on("request", (r) => { if (r.url().includes("/api/world-view") && r.url().includes("tick=")) asked.push(r); });
      page.on("requestfailed", (r) => { if (r.failure()?.errorText.includes("ABORTED")) aborted.add(r); });
      // The drag: every position from 1 to the last, one per animation frame.
      await page.evaluate(`(async () => {
        const range = document.querySelector('input[aria-label="tick"]');
        for (let i = 1; i <= ${last}; i++) {
          range.value = String(i);
          range.dispatchEvent(new Event("input", { bubbles: true }));
          await new Promise((next) => requestAnimationFrame(next));
        }
      })()`);
      // Where it rests: the last tick and the one before are asked for (after the pause, if any is due).
      const tickOf = (r: Request) => Number(new URL(r.url()).searchParams.get("tick"));
      await page.waitForFunction(`document.querySelector(".town-loading")?.textContent?.includes("loading tick ${last}") === true`, undefined, WAIT);
      await expect.poll(() => asked.some((r) => tickOf(r) === last), WAIT).toBe(true);
      // Every other frame asked for during the drag was aborted, without an error shown.
      await expect.poll(() => asked.filter((r) => tickOf(r) < last - 1).every((r) => aborted.has(r)), WAIT).toBe(true);
      expect(asked.filter((r) => tickOf(r) < last - 1).length).toBeLessThan(last - 1);
      expect(await page.locator(".town-view .damage").count()).toBe(0);
      // Answered now: the tick where the drag stopped is drawn.
      await page.unroute(() => true);
      for (const route of held) await route.continue().catch(() => undefined);
      await page.waitForFunction(`document.querySelector(".town-tick")?.textContent === "tick ${last}"`, undefined, WAIT);
      expect(await page.locator(".town-loading").count()).toBe(0);
      await checkView(page, "town-replay-scrubbed");
      await page.close();
    },
    300_000,
  );
});
