// The episodes list in a real browser (Debian's Chromium through playwright-core): the models,
// tokens and duration columns for an episode whose agents asked a model (the fake OpenAI-compatible
// server) and for towns without model calls; filtering by model and sorting by a column; and a new
// episode under the runs folder appearing in the open list without a reload. Checked with axe-core.
// Every step waits for what it expects (no timings).
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageFromRecords } from "../services/llm/usage.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { SWEEP_PROGRESS_FILE } from "../services/kernel/sweepProgressFile.ts";
import { logRecords, runCli } from "./helpers.ts";
import { ARTEFACTS, checkView, findChromium, openDashboard, openPage } from "./uiBrowser.ts";
import { FIXTURE_MODEL, modelCallsEpisode, uiFixture, type UiFixture } from "./uiFixtures.ts";

const executablePath = findChromium();
const WAIT = { timeout: 60_000 };

let fixture: UiFixture;
let server: UiServer | undefined;
let browser: Browser | undefined;
let ui: Awaited<ReturnType<typeof openDashboard>> | undefined;

beforeAll(async () => {
  if (executablePath === null) return;
  fixture = await uiFixture();
  await modelCallsEpisode(join(fixture.runs, "household"));
  ui = await openDashboard(executablePath, fixture.runs);
  ({ server, browser } = ui);
  await ui.server.verification.settled();
}, 300_000);

afterAll(async () => {
  await ui?.close();
});

const cell = (page: Page, id: string, column: string) => page.locator(`tr.episode[data-id="${id}"] td.${column}`).innerText();
const ids = (page: Page) => page.locator("tr.episode").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id")));

describe("probetown ui in Chromium: the episodes list", () => {
  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found (apt-get install chromium, or set CHROMIUM_PATH)" : "shows models, tokens and duration, filters by model and sorts by a column",
    async () => {
      const page = await openPage(browser!);
      await page.goto(server!.url);
      await page.waitForSelector('tr.episode[data-id="household"]', WAIT);
      const { total } = usageFromRecords(logRecords(join(fixture.runs, "household")));
      expect(await cell(page, "household", "models")).toBe(FIXTURE_MODEL);
      expect(await cell(page, "household", "tokens")).toBe((total.promptTokens + total.completionTokens).toLocaleString("en-US"));
      expect(await cell(page, "household", "duration")).toMatch(/^\d+(\.\d)? (ms|s)$/);
      // A town asks no model: a dash in both columns; its duration is there.
      expect(await cell(page, "town", "models")).toBe("—");
      expect(await cell(page, "town", "tokens")).toBe("—");
      expect(await cell(page, "town", "duration")).not.toBe("—");
      await checkView(page, "episodes-columns");

      await page.selectOption('select[name="model"]', FIXTURE_MODEL);
      await page.waitForFunction('document.querySelectorAll("tr.episode").length === 1', undefined, WAIT);
      expect(await ids(page)).toEqual(["household"]);
      await page.selectOption('select[name="model"]', "(none)");
      await page.waitForFunction('document.querySelectorAll("tr.episode").length === 3', undefined, WAIT);
      expect(await ids(page)).not.toContain("household");
      await page.selectOption('select[name="model"]', "");

      // Sorted by tokens, most first: the one episode with model calls leads (episodes without any
      // go last either way). By world: the towns first, each fork under its parent.
      await page.click('button[data-sort="tokens"]');
      await page.click('button[data-sort="tokens"]');
      await page.waitForSelector('th[aria-sort="descending"] button[data-sort="tokens"]', WAIT);
      expect((await ids(page))[0]).toBe("household");
      await page.click('button[data-sort="world"]');
      await page.waitForSelector('th[aria-sort="ascending"] button[data-sort="world"]', WAIT);
      expect(await ids(page)).toEqual(["broken", "town", "forks/town-no-reflection", "household"]);
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "lays out a model call in a record's detail: prompt, completion, usage, live or recorded",
    async () => {
      const records = logRecords(join(fixture.runs, "household"));
      const answer = records.find((r) => r.type === "llm.completed")!;
      const request = records.find((r) => r.seq === answer.cause)!;
      const q = request.payload as { messages: { role: string; content: string }[] };
      const a = answer.payload as { content: string; usage: { promptTokens: number; completionTokens: number } };
      const page = await openPage(browser!);
      await page.goto(`${server!.url}/#/episode?id=household&seq=${answer.seq}`);
      await page.waitForSelector(`.detail[data-seq="${answer.seq}"] .model-call`, WAIT);
      const call = page.locator(".model-call");
      expect(await call.locator(".call-source").innerText()).toContain("live: asked of the endpoint");
      expect(await call.locator(".call-model").innerText()).toBe(FIXTURE_MODEL);
      expect(await call.locator(".call-message").allInnerTexts()).toEqual(q.messages.map((m) => m.content));
      expect(await call.locator(".call-completion").innerText()).toBe(a.content);
      expect(await call.locator(".call-usage").innerText()).toBe(`${a.usage.promptTokens} prompt + ${a.usage.completionTokens} completion = ${a.usage.promptTokens + a.usage.completionTokens} tokens`);
      await checkView(page, "model-call");
      // The request's link opens the request's detail, which shows the same call.
      await call.locator(".call-request button.link").click();
      await page.waitForSelector(`.detail[data-seq="${request.seq}"] .model-call .call-completion`, WAIT);
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "shows a new episode in the open list without a reload (live)",
    async () => {
      const page = await openPage(browser!);
      await page.goto(server!.url);
      await page.waitForSelector('tr.episode[data-id="town"]', WAIT);
      expect(await ids(page)).not.toContain("later/town");
      mkdirSync(join(fixture.runs, "later"));
      cpSync(join(fixture.runs, "town"), join(fixture.runs, "later", "town"), { recursive: true });
      await page.waitForSelector('tr.episode[data-id="later/town"]', WAIT);
      // Verified in the background once found; the list shows its verdict when it arrives.
      await page.waitForSelector('tr.episode[data-id="later/town"] td.verify-ok', WAIT);
      // A sweep started into the runs folder: its progress shows, and reaches its end.
      const sweep = await runCli(["sweep", "envprobe", "--seeds", "0-1", "--regimes", "low", "--worlds", "graphnav", "--policies", "oracle,no-probe", "--log", join(fixture.runs, "grid-log"), "-q"]);
      expect(sweep.code).toBe(0);
      await page.waitForFunction(`document.querySelector('.sweep-progress li[data-sweep="grid-log"] .sweep-done')?.textContent === "4 / 4 episodes finished"`, undefined, WAIT);
      // Per worker, from the sweep's progress file: one chunk, so one thread ran all 4; the run ended.
      const workers = 'li[data-sweep="grid-log"] table.sweep-workers';
      await page.waitForFunction(`document.querySelector('${workers} .sweep-run-state')?.textContent === "ended"`, undefined, WAIT);
      const rows = page.locator(`${workers} tbody tr`);
      expect(await rows.count()).toBe(1);
      expect(await rows.first().getAttribute("data-worker")).toMatch(/^thread \d+$/);
      expect(await rows.first().locator(".worker-done").innerText()).toBe("4");
      // A run under way on two NATS workers (its file as the sweep writes it): shown live, per worker.
      writeFileSync(join(fixture.runs, "grid-log", SWEEP_PROGRESS_FILE), JSON.stringify({ total: 4, done: 3, finished: false, updated: "2026-11-29T12:00:00.000Z", workers: [{ worker: "worker-a", done: 2, kept: 0 }, { worker: "worker-b", done: 1, kept: 1 }] }));
      await page.waitForSelector(`${workers} tr[data-worker="worker-b"]`, WAIT);
      expect(await page.locator(`${workers} tr[data-worker="worker-a"] .worker-done`).innerText()).toBe("2");
      expect(await page.locator(`${workers} tr[data-worker="worker-b"] .worker-kept`).innerText()).toBe("1");
      expect(await page.locator(`${workers} caption`).innerText()).toContain("2 workers, 3 / 4 episodes this run");
      expect(await page.locator(`${workers} .sweep-run-state`).innerText()).toContain("running, or stopped");
      expect(await page.locator(`${workers} tr[data-worker="worker-a"] progress`).getAttribute("value")).toBe("2");
      await checkView(page, "episodes-live");
      await page.close();
    },
    300_000,
  );
});
