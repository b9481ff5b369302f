// A tick's span tree in the dashboard, from an episode's trace file (`--trace jsonl`): the API nests
// the tick's spans under its tick span and joins each delivery span to its record by seq; with
// `--jaeger` it links the trace there. In Chromium, a record's detail lists its tick's spans with
// its own marked (axe, screenshot).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";
import { ARTEFACTS, checkView, findChromium, launchChromium, openPage } from "./uiBrowser.ts";

const executablePath = findChromium();
const JAEGER = "http://jaeger.example:16686/";
let runs: string;
let server: UiServer;
let browser: Browser | undefined;

beforeAll(async () => {
  runs = join(tempDir("ui-trace"), "runs");
  mkdirSync(runs, { recursive: true });
  expect((await runCli(["run", "auratown", "--seed", "3", "--ticks", "2", "--trace", "jsonl", "--log", join(runs, "town"), "--no-summary"])).code).toBe(0);
  expect((await runCli(["run", "auratown", "--seed", "4", "--ticks", "1", "--trace", "none", "--log", join(runs, "untraced"), "--no-summary"])).code).toBe(0);
  server = await startUi({ runs, port: 0, host: "127.0.0.1", jaeger: JAEGER });
  if (executablePath !== null) browser = await launchChromium(executablePath);
  mkdirSync(ARTEFACTS, { recursive: true });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Spans {
  traceId: string;
  tick: number;
  jaeger: string | null;
  spans: Array<{ spanId: string; parentSpanId: string | null; name: string; seq: number | null; depth: number; offsetMs: number | null }>;
}

const get = async (path: string) => {
  const response = await fetch(server.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe("a tick's spans in the dashboard", () => {
  it("nests the tick's spans under its tick span and joins each to its record by seq", async () => {
    const { status, body } = await get("/api/trace?id=town&tick=1");
    expect(status).toBe(200);
    const trace = body as unknown as Spans;
    expect(trace.spans[0]).toMatchObject({ name: "tick 1", depth: 0, offsetMs: 0 });
    const delivered = trace.spans.slice(1);
    expect(delivered.every((s) => s.depth === 1 && s.parentSpanId === trace.spans[0]!.spanId)).toBe(true);
    // Every record of tick 1 has its delivery span, and each span's name is its record's type.
    const records = logRecords(join(runs, "town")).filter((r) => r.tick === 1 && r.type !== "tick.committed");
    const bySeq = new Map(delivered.map((s) => [s.seq, s.name]));
    for (const r of records) expect(bySeq.get(r.seq)).toBe(`deliver ${r.type}`);
    expect(trace.jaeger).toBe(`http://jaeger.example:16686/trace/${trace.traceId}`);
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("says why when there is no trace file, and refuses a bad tick", async () => {
    const none = await get("/api/trace?id=untraced&tick=0");
    expect(none.status).toBe(404);
    expect(none.body.error).toContain("--trace jsonl");
    expect((await get("/api/trace?id=town&tick=x")).status).toBe(400);
    expect((await get("/api/trace?id=town&tick=1&x=1")).status).toBe(400);
    expect((await get("/api/trace?id=nowhere&tick=1")).status).toBe(404);
  });

  it("the command refuses a --jaeger that is not an http(s) address (exit 2)", async () => {
    const result = await runCli(["ui", "--runs", runs, "--jaeger", "jaeger:16686"]);
    expect(result.code).toBe(2);
    expect(result.err).toContain("--jaeger");
  });

  it.skipIf(executablePath === null)(
    executablePath === null ? "SKIPPED: no chromium found" : "a record's detail lists its tick's spans, its own marked, and links the trace to Jaeger",
    async () => {
      const record = logRecords(join(runs, "town")).find((r) => r.tick === 1 && r.type === "location.occupancy")!;
      const page = await openPage(browser!);
      await page.goto(`${server.url}/#/episode?id=town&seq=${record.seq}`);
      await page.waitForSelector(".spans li.span-own");
      expect(await page.locator(".spans li.span-own").getAttribute("data-seq")).toBe(String(record.seq));
      expect(await page.locator(".spans li.span-own").innerText()).toContain(`deliver ${record.type}`);
      const trace = (await get("/api/trace?id=town&tick=1")).body as unknown as Spans;
      expect(await page.locator("a.jaeger-link").getAttribute("href")).toBe(trace.jaeger);
      // Another span's record opens from the tree.
      const other = trace.spans.find((s) => s.seq !== null && s.seq !== record.seq)!;
      await page.click(`.spans li[data-seq="${other.seq}"] button`);
      await page.waitForSelector(`.detail[data-seq="${other.seq}"] .spans li.span-own[data-seq="${other.seq}"]`);
      await checkView(page, "record-spans");
      await page.close();
    },
    300_000,
  );
});
