// The dashboard's browser tests' shared parts: where Chromium is, and the check every view passes
// (axe-core finds no serious or critical violation; the page is saved as a screenshot).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect } from "vitest";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { repoRoot } from "./helpers.ts";

export function findChromium(): string | null {
  for (const path of [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (path && existsSync(path)) return path;
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

export const ARTEFACTS = join(repoRoot, "artefacts", "ui");
const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (axe.min.js from node_modules). */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.addScriptTag({ path: AXE });
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join("; ")})`);
}

/** A view passes axe and is saved as `name`.png. */
export async function checkView(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTEFACTS, `${name}.png`), fullPage: true });
  expect({ view: name, violations: await seriousViolations(page) }).toEqual({ view: name, violations: [] });
}


/** Debian's Chromium, headless, as every browser test launches it (playwright-core downloads none). */
export const launchChromium = (executablePath: string): Promise<Browser> => chromium.launch({ executablePath, headless: true, args: ["--headless", "--no-sandbox"], timeout: 120_000 });

/** A page of the tests' size, waiting on selectors long enough for a busy machine. */
export async function openPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(60_000);
  return page;
}

/** The dashboard on `runs` and a headless Chromium, as each browser test opens them; `close` ends both. */
export async function openDashboard(executablePath: string, runs: string): Promise<{ server: UiServer; browser: Browser; close: () => Promise<void> }> {
  const server = await startUi({ runs, port: 0, host: "127.0.0.1" });
  const browser = await launchChromium(executablePath);
  mkdirSync(ARTEFACTS, { recursive: true });
  return { server, browser, close: async () => { await browser.close(); await server.close(); } };
}
