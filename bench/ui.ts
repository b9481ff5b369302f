// The dashboard's speed in a real browser (Debian's Chromium through playwright-core), rows of
// `npm run bench` (or alone: `npm run bench -- --ui-only`, printed, docs untouched). Over a 1,000-
// agent AURATown day: the episode view's first paint (the timeline drawn), the town replay's first
// paint, and moving its scrubber to a far tick (one never shown, whose frame is fetched, and back); over the EnvProbe paper grid's results file (`sweep --out`):
// the sweep report's load. Each beside what the server alone takes for the same data (its API
// answer fetched from Node), measured in the same run. Waits are on the DOM, never on a clock.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { runEpisode } from "../services/kernel/episodes.ts";
import { startUi } from "../services/ui/server.ts";
import type { Row } from "./nats.ts";

const WAIT = { timeout: 300_000 };
const CLI = join(import.meta.dirname, "..", "services", "cli", "main.ts");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${Math.round(x).toLocaleString("en-US")} ms`;
const s = (x: number) => `${(x / 1000).toFixed(2)} s`;

function findChromium(): string | null {
  for (const path of [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (path && existsSync(path)) return path;
  return null;
}

/** Milliseconds from the start of `goto` until `selector` is in the page. */
async function timeToSelector(page: Page, url: string, selector: string): Promise<number> {
  await page.goto("about:blank");
  const started = performance.now();
  await page.goto(url);
  await page.waitForSelector(selector, WAIT);
  return performance.now() - started;
}

/** Milliseconds to fetch an API answer whole from Node (the server's share of a view's load). */
async function fetchTime(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return performance.now() - started;
}

/**
 * The scrubber moved to `index` in the page: from the input event to the tick label showing the
 * new tick, plus the next animation frame (the paint); measured in the page's own clock.
 */
const MOVE_SCRUBBER = `(index) => new Promise((done) => {
  const input = document.querySelector('.town-view input[type="range"]');
  const label = document.querySelector(".town-tick");
  const started = performance.now();
  const expected = () => label.textContent === "tick " + window.__frames[index];
  const finish = () => requestAnimationFrame(() => done(performance.now() - started));
  const observer = new MutationObserver(() => { if (expected()) { observer.disconnect(); finish(); } });
  observer.observe(label, { childList: true, characterData: true, subtree: true });
  input.value = String(index);
  input.dispatchEvent(new Event("input", { bubbles: true }));
})`;

export async function uiRows(work: string, quick: boolean, log: (s: string) => void): Promise<Row[]> {
  const executablePath = findChromium();
  if (executablePath === null) {
    log("  ui: no chromium (apt-get install chromium, or CHROMIUM_PATH), no rows");
    return [];
  }
  const runs = join(work, "ui-runs");
  mkdirSync(runs, { recursive: true });
  const agents = quick ? 100 : 1000;
  const dayStarted = performance.now();
  const day = await runEpisode({ world: "auratown", seed: 42, dir: join(runs, "day"), config: { extraAgents: agents - 5 }, trace: { exporter: "none" }, snapshotEvery: 0 });
  log(`  ui: ${agents}-agent day generated in ${s(performance.now() - dayStarted)} (${day.records} records, ${day.ticks} ticks)`);
  // The paper's grid (21,780 episodes), as the CLI writes its results; quick: 20 seeds.
  const seeds = quick ? ["--seeds", "0-19"] : ["--seeds", "0-219", "--held-out", "1000-1219"];
  const sweepStarted = performance.now();
  execFileSync(process.execPath, [CLI, "sweep", "envprobe", ...seeds, "--out", join(runs, "grid.json"), "-q"], { stdio: ["ignore", "ignore", "inherit"] });
  log(`  ui: sweep results generated in ${s(performance.now() - sweepStarted)}`);

  const server = await startUi({ runs, port: 0, host: "127.0.0.1" });
  // Background verification replays the day on a worker thread: measured after it, on a quiet machine.
  await server.verification.settled();
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--headless", "--no-sandbox"], timeout: 120_000 });
  const rows: Row[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(WAIT.timeout);

    // First paint of the episode view: the timeline's marks drawn. The first open reads the log
    // (the server keeps it read afterwards); then opens with the log already read.
    const episodeUrl = `${server.url}/#/episode?id=day`;
    const cold = await timeToSelector(page, episodeUrl, ".timeline svg rect.mark");
    const warm = median(await sequence(3, () => timeToSelector(page, episodeUrl, ".timeline svg rect.mark")));
    const api = median(await sequence(3, async () => (await fetchTime(`${server.url}/api/episode?id=day`)) + (await fetchTime(`${server.url}/api/records?id=day&limit=5000`))));
    log(`  ui: episode view first paint ${ms(cold)} (first open), ${ms(warm)} after; its API answers ${ms(api)}`);
    rows.push({
      figure: `Dashboard: episode view first paint (timeline drawn: ${day.records > 5000 ? `the first 5,000 of ${day.records.toLocaleString("en-US")} records` : `${day.records.toLocaleString("en-US")} records`}), ${agents}-agent day, Chromium`,
      measured: `${s(cold)} first open (log read by the server); ${s(warm)} once read`,
      ceiling: `its two API answers fetched from Node: ${s(api)}`,
      ratio: `${(warm / api).toFixed(1)}× the API (once read)`,
      target: "first paint ≤ 2 s",
      verdict: cold <= 2000 ? "met" : warm <= 2000 ? "**below target** on first open; met once read" : "**below target**",
    });

    // The town replay's first paint: from the tab's click to its map's markers drawn (the view's
    // module, its map and tick list, the first tick's frame). The first ask indexes the read log.
    // Above 40 residents the map shows a marker per place (a cluster) instead of one per resident.
    const markers = ".town-view g.resident, .town-view g.cluster";
    const openTown = async (): Promise<number> => {
      await page.goto("about:blank");
      await page.goto(episodeUrl);
      await page.waitForSelector('button[data-tab="world"]', WAIT);
      const started = performance.now();
      await page.click('button[data-tab="world"]');
      await page.waitForSelector(markers, WAIT);
      return performance.now() - started;
    };
    const townCold = await openTown();
    const townWarm = median(await sequence(3, openTown));
    const worldView = (await (await fetch(`${server.url}/api/world-view?id=day`)).json()) as { data: { ticks: number[] } };
    const frames = worldView.data.ticks;
    const townApi = median(await sequence(3, async () => (await fetchTime(`${server.url}/api/world-view?id=day`)) + (await fetchTime(`${server.url}/api/world-view?id=day&tick=${frames[0]}`))));
    log(`  ui: town replay first paint ${ms(townCold)} (first ask), ${ms(townWarm)} after; its API answers ${ms(townApi)}`);
    rows.push({
      figure: `Dashboard: town replay first paint (map drawn at tick ${frames[0]}, ${agents} residents), Chromium`,
      measured: `${s(townCold)} first ask (the server indexes the read log); ${s(townWarm)} after`,
      ceiling: `its two API answers (the view, a tick's frame) fetched from Node: ${ms(townApi)}`,
      ratio: `${(townWarm / townApi).toFixed(1)}× the API (after)`,
      target: "first paint ≤ 2 s",
      verdict: townCold <= 2000 ? "met" : "**below target**",
    });

    // The town replay's scrubber: to the last tick and back to the first, five times each way. Each
    // tick's frame is fetched when first shown: the first moves fetch, later ones find it kept.
    await page.evaluate(`window.__frames = ${JSON.stringify(frames)}`);
    const move = async (index: number) => (await page.evaluate(`(${MOVE_SCRUBBER})(${index})`)) as number;
    // A far tick never shown yet (its frame fetched, not kept), as a first scrub to it meets it.
    const fresh: number[] = [];
    for (const index of [Math.floor(frames.length / 2), frames.length - 2, Math.floor(frames.length / 3)]) {
      fresh.push(await move(index));
      await move(0);
    }
    const far: number[] = [];
    const steps: number[] = [];
    for (let i = 0; i < 5; i++) {
      far.push(await move(frames.length - 1));
      far.push(await move(0));
    }
    for (let i = 0; i < 5; i++) {
      steps.push(await move(1));
      await move(0);
    }
    const scrub = median(far);
    const step = median(steps);
    log(`  ui: scrubber to a far tick ${ms(scrub)} (max ${ms(Math.max(...far))}), to a tick not shown before ${ms(median(fresh))} (max ${ms(Math.max(...fresh))}), one step ${ms(step)}`);
    rows.push({
      figure: `Dashboard: town replay scrubber from tick ${frames[0]} to tick ${frames.at(-1)} and back (${agents} residents drawn), median of 10, Chromium`,
      measured: `${ms(scrub)} (slowest ${ms(Math.max(...far))}); to a tick not shown before (its frame fetched) ${ms(median(fresh))}, slowest ${ms(Math.max(...fresh))}`,
      ceiling: `one step (tick ${frames[0]} → ${frames[1]}): ${ms(step)}`,
      ratio: `${(scrub / step).toFixed(1)}× one step`,
      target: "≤ 200 ms",
      verdict: Math.max(scrub, ...fresh) <= 200 ? "met" : "**below target**",
    });

    // The sweep report: its first page of each table shown.
    const sweepUrl = `${server.url}/#/sweep?file=grid.json`;
    const selector = '.sweep-table[data-table="episodes"] tbody tr';
    const sweepCold = await timeToSelector(page, sweepUrl, selector);
    const sweepWarm = median(await sequence(3, () => timeToSelector(page, sweepUrl, selector)));
    // Asked only now: listing the sweeps reads the results file, which the first open above had to do.
    const sweeps = (await (await fetch(`${server.url}/api/sweeps`)).json()) as { sweeps: { episodes: number }[] };
    const sweepEpisodes = sweeps.sweeps[0]?.episodes ?? 0;
    const sweepApi = median(await sequence(3, () => fetchTime(`${server.url}/api/sweep?file=grid.json&table=episodes&limit=100`)));
    log(`  ui: sweep report ${ms(sweepCold)} (first open), ${ms(sweepWarm)} after; a page from the API ${ms(sweepApi)}`);
    rows.push({
      figure: `Dashboard: sweep report load (EnvProbe grid, ${sweepEpisodes.toLocaleString("en-US")} episodes; tables paged by 100), Chromium`,
      measured: `${s(sweepCold)} first open (results file parsed by the server); ${s(sweepWarm)} once read`,
      ceiling: `a page of the episodes table fetched from Node: ${ms(sweepApi)}`,
      ratio: `${(sweepWarm / sweepApi).toFixed(1)}× the API page (once read)`,
      target: "≤ 3 s",
      verdict: sweepCold <= 3000 ? "met" : "**below target**",
    });
  } finally {
    await browser.close();
    await server.close();
  }
  return rows;
}

async function sequence(n: number, f: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}
