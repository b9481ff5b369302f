// The worlds' own dashboard views in a real browser (Debian's Chromium, playwright-core): the
// aura-scene probe inspector, on a plain run and on an `eval implicit` episode whose results file
// sits beside it (a deny rule in force, so some probes are refused), and the household view on an
// example task; and the town replay's resident panel on a short AURATown day. Each view: open it, choose a query or a turn, check what it shows against the
// records, axe-core check and screenshot (artefacts/ui/). Every step waits for what it expects.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HouseholdObservedPayload, HouseholdProbeScoredPayload } from "../actors/household/events.ts";
import type { ProbeDeniedPayload } from "../actors/aura/events.ts";
import type { AgentPlanned, LocationObservedPayload, PrivateStateChangedPayload } from "../actors/auratown/events.ts";
import type { LogRecord } from "../events/record.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";
import { checkView, findChromium, launchChromium, openPage } from "./uiBrowser.ts";

const executablePath = findChromium();
const WAIT = { timeout: 60_000 };
const EVAL_SPLIT = "eval/dev2";

let runs: string;
let evalEpisode: string;
let server: UiServer | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (executablePath === null) return;
  runs = join(tempDir("ui-worlds"), "runs");
  expect((await runCli(["run", "aura-scene", "--seed", "1", "--log", join(runs, "scene")])).code).toBe(0);
  expect((await runCli(["eval", "implicit", "--file", "data/aura/implicit/dev2.json", "--condition", "aura-intent", "--seeds", "1", "--scene", "I_leisure_centre_gala", "--deny", "get_agent_plan", "--out", join(runs, "eval")])).code).toBe(0);
  evalEpisode = readdirSync(join(runs, EVAL_SPLIT)).find((name) => name.endsWith("-s1-aura-intent"))!;
  expect((await runCli(["run", "household", "--seed", "1", "--task", "tea-for-two", "--log", join(runs, "house")])).code).toBe(0);
  expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "12", "--log", join(runs, "town")])).code).toBe(0);
  server = await startUi({ runs, port: 0, host: "127.0.0.1" });
  await server.verification.settled();
  browser = await launchChromium(executablePath);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The episode's page with its world's view open. */
async function openWorldView(id: string, ready: string): Promise<Page> {
  const page = await openPage(browser!);
  await page.goto(`${server!.url}/#/episode?id=${encodeURIComponent(id)}`);
  await page.click('button[data-tab="world"]');
  await page.waitForSelector(ready, WAIT);
  return page;
}

describe("the worlds' views in Chromium", () => {
  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "probe inspector: a run's query with its IntentFrame, probes and answer, not judged",
    async () => {
      const page = await openWorldView("scene", ".probe-inspector .query-detail");
      expect(await page.locator('.tabs button[data-tab="world"]').innerText()).toBe("Probe inspector");
      expect(await page.locator(".query-detail .query-text").innerText()).toBe("Is Ben around?");
      expect(await page.locator('.intent-frame dd[data-field="literal"]').innerText()).toBe("action of Ben");
      expect(await page.locator('.intent-frame dd[data-field="backend"]').innerText()).toBe("deterministic");
      const probe = page.locator('tr.probe[data-call="1"]');
      expect(await probe.locator(".decision").innerText()).toBe("allowed");
      expect(await probe.locator(".disclosure").innerText()).toBe("3");
      expect(await page.locator(".answer .answer-text").innerText()).not.toBe("");
      expect(await page.locator(".no-verdict").count()).toBe(1);
      await checkView(page, "probe-inspector");
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "probe inspector: an eval episode's refused probe, its rule, and the judge's verdict",
    async () => {
      const dir = join(runs, EVAL_SPLIT, evalEpisode);
      const denied = logRecords(dir).find((r) => r.type === "probe.denied")!.payload as ProbeDeniedPayload;
      const [results] = readdirSync(join(runs, EVAL_SPLIT)).filter((n) => n.startsWith("results-"));
      const row = readFileSync(join(runs, EVAL_SPLIT, results!), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { queryId: string; implicitCoverage: number | null; disclosedBeyondNeed: number; disclosedBeyondNeedAnswer: number; disclosedBeyondNeedProbes: number }).find((r) => r.queryId === denied.queryId)!;

      const page = await openWorldView(`${EVAL_SPLIT}/${evalEpisode}`, ".probe-inspector .query-detail");
      await page.click(`.query-list button[data-query="${denied.queryId}"]`);
      await page.waitForSelector(`.query-detail[data-query="${denied.queryId}"]`, WAIT);
      const probe = page.locator(`tr.probe[data-call="${denied.call}"]`);
      expect(await probe.locator(".decision").innerText()).toBe("denied");
      expect(await probe.locator(".rule").innerText()).toBe("denied by policy pattern 'get_agent_plan'");
      expect(await probe.locator(".disclosure").innerText()).toBe("0");
      expect(await page.locator('.verdict dd[data-field="implicit-coverage"]').innerText()).toMatch(new RegExp(`^${row.implicitCoverage === null ? "n/a" : `${Math.round(row.implicitCoverage * 100)}%`} — `));
      expect(await page.locator('.verdict dd[data-field="beyond"]').innerText()).toBe(`${row.disclosedBeyondNeed} private item(s): ${row.disclosedBeyondNeedAnswer} stated in the answer, ${row.disclosedBeyondNeedProbes} read by probes`);
      await checkView(page, "probe-inspector-eval");
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "household: a turn's messages reach the agent's knowledge; the K-goal tree with its answers",
    async () => {
      const records = logRecords(join(runs, "house"));
      const told = records.find((r) => r.type === "household.observed" && (r.payload as HouseholdObservedPayload).messages.length > 0)!.payload as HouseholdObservedPayload;
      const scored = records.find((r) => r.type === "household.probeScored")!.payload as HouseholdProbeScoredPayload;
      const turns = [...new Set(records.filter((r) => r.type === "household.observed").map((r) => (r.payload as HouseholdObservedPayload).turn))].sort((a, b) => a - b);

      const page = await openWorldView("house", ".household-view");
      expect(await page.locator(".household-turn").innerText()).toBe(`turn ${turns[0]}`);
      await page.selectOption(".turn-select", String(turns.indexOf(told.turn)));
      await page.waitForFunction(`document.querySelector(".household-turn")?.textContent === "turn ${told.turn}"`, undefined, WAIT);
      expect(await page.locator(`.knowledge[data-agent="${told.agent}"] .told`).innerText()).toContain(told.messages[0]!.text);
      expect(await page.locator(`.knowledge[data-agent="${told.agent}"] .room[data-room="${told.room}"]`).count()).toBe(1);
      // A turn on: what was told is still known, and a room an agent no longer sees is marked with when it last saw it.
      const next = turns[turns.indexOf(told.turn) + 1]!;
      const seenAt = (turn: number) => records.filter((r) => r.type === "household.observed" && (r.payload as HouseholdObservedPayload).turn === turn).map((r) => r.payload as HouseholdObservedPayload);
      const stale = seenAt(told.turn).flatMap((o) => o.rooms.filter((v) => !seenAt(next).some((n) => n.agent === o.agent && n.rooms.some((w) => w.room === v.room))).map((v) => ({ agent: o.agent, room: v.room })));
      expect(stale.length).toBeGreaterThan(0);
      await page.click('button[aria-label="next turn"]');
      await page.waitForFunction(`document.querySelector(".household-turn")?.textContent === "turn ${next}"`, undefined, WAIT);
      expect(await page.locator(`.knowledge[data-agent="${told.agent}"] .told`).innerText()).toContain(told.messages[0]!.text);
      for (const { agent, room } of stale) expect(await page.locator(`.knowledge[data-agent="${agent}"] .room[data-room="${room}"] small.stale`).innerText()).toBe(`last seen turn ${told.turn}`);
      // The K-goal tree: every scored probe is drawn, roots at the top, each with its score.
      for (const p of scored.probes) {
        const node = page.locator(`.k-node[data-probe="${p.probeId}"]`).first();
        expect(await node.locator(":scope > .k-score").innerText()).toBe(`${p.passed ? "passed" : "failed"} (against the ${p.basis})`);
      }
      expect(await page.locator(".k-goals > ul > .k-node").count()).toBe(scored.roots);
      expect(await page.locator(".k-total").innerText()).toBe(`${scored.passedRoots} of ${scored.roots} root(s) passed (${scored.pass ? "pass" : "fail"})`);
      await checkView(page, "household");
      await page.close();
    },
    300_000,
  );

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "town replay: a resident's panel with its plan, private state and rule, and a stale belief marked",
    async () => {
      const records = logRecords(join(runs, "town"));
      const ticks = [...new Set(records.filter((r) => r.type === "location.occupancy").map((r) => r.tick))].sort((a, b) => a - b);
      const lastBy = (agent: string, tick: number, type: string): LogRecord | undefined => records.filter((r) => r.type === type && r.from === agent && r.tick <= tick).at(-1);
      // The oracle: the first tick where what a resident last saw of another no longer matches the other's private state.
      const stale = ticks.flatMap((tick) => {
        const seen = new Map<string, { observer: string; about: string; availability: string; emotional_state: string }>();
        for (const r of records.filter((x) => x.type === "location.observed" && x.tick <= tick))
          for (const observer of r.to as readonly string[]) for (const o of (r.payload as LocationObservedPayload).occupants) if (o.agent !== observer) seen.set(`${observer} ${o.agent}`, { observer, about: o.agent, availability: o.availability, emotional_state: o.emotional_state });
        return [...seen.values()].filter((b) => {
          const truth = lastBy(b.about, tick, "private_state.changed")?.payload as PrivateStateChangedPayload | undefined;
          return truth !== undefined && (truth.availability !== b.availability || truth.emotional_state !== b.emotional_state);
        }).map((b) => ({ tick, ...b }));
      })[0]!;
      expect(stale).toBeDefined();
      const state = lastBy(stale.observer, stale.tick, "private_state.changed")!.payload as PrivateStateChangedPayload;
      const plan = lastBy(stale.observer, stale.tick, "agent.planned")!.payload as typeof AgentPlanned.Type;

      const page = await openWorldView("town", ".town-view g.resident");
      await page.locator('input[aria-label="tick"]').fill(String(ticks.indexOf(stale.tick)));
      await page.waitForFunction(`document.querySelector(".town-tick")?.textContent === "tick ${stale.tick}"`, undefined, WAIT);
      await page.click(`tr[data-agent="${stale.observer}"] button.resident-link`);
      const panel = page.locator(`.resident-panel[data-agent="${stale.observer}"]`);
      await panel.waitFor(WAIT);
      expect(await panel.locator(".rule").innerText()).toBe(state.rule);
      expect(await panel.locator(".plan li").first().innerText()).toBe(`${plan.plan[0]!.at} ${plan.plan[0]!.activity} (${plan.plan[0]!.location})`);
      expect(await panel.locator(`tr.belief[data-about="${stale.about}"] .belief-mark`).innerText()).toBe("stale");
      await checkView(page, "town-resident");
      await page.close();
    },
    300_000,
  );
});
