// The episodes list's model-call and duration columns and its live updates, in process: the server
// on a free port over a town (no model calls) and a household episode whose agents asked the fake
// OpenAI-compatible server. The counts are checked against services/llm/usage.ts over the whole log.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageFromRecords } from "../services/llm/usage.ts";
import { summarise } from "../services/ui/catalogue.ts";
import { openFileEventStoreForAppend } from "../infra/fileEventStore.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { firstSegment, logRecords, runCli, tempDir } from "./helpers.ts";
import { FIXTURE_MODEL, modelCallsEpisode, uiFixture, type UiFixture } from "./uiFixtures.ts";
import { openSse, type SseStream } from "./uiLive.ts";

let fixture: UiFixture;
let server: UiServer;
const streams: SseStream[] = [];

beforeAll(async () => {
  fixture = await uiFixture();
  await modelCallsEpisode(join(fixture.runs, "household"));
  // A sweep's --log of four jobs, caught midway: one not begun, one interrupted, two finished.
  // Version-1 logs: one is cut below as an interrupted run leaves it (a compact log cut short is damage).
  const sweep = await runCli(["sweep", "envprobe", "--seeds", "0-1", "--regimes", "low", "--worlds", "graphnav", "--policies", "oracle,no-probe", "--log", join(fixture.runs, "grid-log"), "--log-format", "1", "-q"]);
  expect(sweep.code).toBe(0);
  rmSync(join(fixture.runs, "grid-log", "graphnav-low", "no-probe", "s1"), { recursive: true });
  const cut = firstSegment(join(fixture.runs, "grid-log", "graphnav-low", "no-probe", "s0"));
  writeFileSync(cut, readFileSync(cut, "utf8").split("\n").slice(0, -2).join("\n") + "\n");
  server = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1" });
}, 180_000);

afterAll(async () => {
  for (const s of streams) s.close();
  await server?.close();
}, 60_000);

interface Row {
  id: string;
  status: string;
  verify: { state: string };
  shownStatus: string;
  modelCalls: { models: string[]; calls: number; tokens: number } | null;
  durationMs: number | null;
}

const rows = async (): Promise<Row[]> => ((await (await fetch(`${server.url}/api/episodes`)).json()) as { episodes: Row[] }).episodes;

const spent = (dir: string) => {
  const { total } = usageFromRecords(logRecords(dir));
  return { calls: total.calls, tokens: total.promptTokens + total.completionTokens };
};

describe("probetown ui: the list's models, tokens and duration", () => {
  it("counts an episode's model calls as usage.ts does, and none for a town without them", async () => {
    const list = await rows();
    const household = list.find((r) => r.id === "household")!;
    const expected = spent(join(fixture.runs, "household"));
    expect(expected.calls).toBeGreaterThan(0);
    expect(household.modelCalls).toEqual({ models: [FIXTURE_MODEL], ...expected });
    expect(list.find((r) => r.id === "town")!.modelCalls).toEqual({ models: [], calls: 0, tokens: 0 });
  });

  it("lays out a model call in a record's detail: the prompt, the completion, the usage, and that it was asked live", async () => {
    const records = logRecords(join(fixture.runs, "household"));
    const answer = records.find((r) => r.type === "llm.completed")!;
    const request = records.find((r) => r.seq === answer.cause)!;
    expect(request.type).toBe("llm.requested");
    const detail = async (seq: number) => ((await (await fetch(`${server.url}/api/record?id=household&seq=${seq}`)).json()) as { modelCall: Record<string, unknown> | null }).modelCall;
    const q = request.payload as { role: string; model: string; messages: { role: string; content: string }[] };
    const a = answer.payload as { content: string; usage: { promptTokens: number; completionTokens: number }; model: string };
    const expected = {
      request: { seq: request.seq, role: q.role, model: FIXTURE_MODEL, messages: q.messages },
      answer: { seq: answer.seq, type: "llm.completed", content: a.content, usage: a.usage, model: a.model, error: null },
      source: "live",
    };
    expect(q.messages.length).toBeGreaterThan(0);
    // The same call from either of its records.
    expect(await detail(answer.seq)).toMatchObject(expected);
    expect(await detail(request.seq)).toMatchObject(expected);
    // Another record is no model call.
    expect(await detail(records.find((r) => !r.type.startsWith("llm."))!.seq)).toBeNull();
  });

  it("takes the duration from the first and last records' wall-clock stamps (meta.ts)", async () => {
    const records = logRecords(join(fixture.runs, "household"));
    const expected = Date.parse(records.at(-1)!.meta!.ts!) - Date.parse(records[0]!.meta!.ts!);
    expect((await rows()).find((r) => r.id === "household")!.durationMs).toBe(expected);
  });

  it("reads only what a log gained since the last ask, and counts the same as a whole read", () => {
    const root = tempDir("ui-list-grow");
    const source = join(fixture.runs, "household");
    const dir = join(root, "growing");
    mkdirSync(join(dir, "log"), { recursive: true });
    const text = readFileSync(firstSegment(source), "utf8");
    const segment = join(dir, "log", "000000000000.jsonl");
    // Cut mid-line: the part line is left for the next read.
    const cut = text.indexOf('"type":"llm.completed"') + 5;
    writeFileSync(segment, text.slice(0, cut));
    const before = summarise(root, dir).modelCalls!;
    expect(before.calls).toBe(0);
    writeFileSync(segment, text);
    expect(summarise(root, dir).modelCalls).toEqual({ models: [FIXTURE_MODEL], ...spent(source) });
    // Asked again unchanged: the same counts.
    expect(summarise(root, dir).modelCalls).toEqual({ models: [FIXTURE_MODEL], ...spent(source) });
  });
});

describe("probetown ui: a sweep's progress", () => {
  it("counts a sweep's finished jobs against its spec, and per worker from its progress file", async () => {
    const body = (await (await fetch(`${server.url}/api/episodes`)).json()) as { sweepProgress: unknown[] };
    // The sweep ran its 4 episodes in one chunk on one thread (the logs were cut afterwards).
    expect(body.sweepProgress).toEqual([{ id: "grid-log", total: 4, done: 2, started: 1, workers: { finished: true, updated: expect.any(String), done: 4, total: 4, workers: [{ worker: expect.stringMatching(/^thread \d+$/), done: 4, kept: 0 }] } }]);
  });
});

describe("probetown ui: the list, live", () => {
  it("tells a listening browser of a new episode under the runs folder, which the list then holds", async () => {
    const stream = await openSse(`${server.url}/api/episodes/live`);
    streams.push(stream);
    expect(stream.status).toBe(200);
    await stream.next("ready");
    expect((await rows()).some((r) => r.id === "later/town")).toBe(false);
    mkdirSync(join(fixture.runs, "later"));
    cpSync(join(fixture.runs, "town"), join(fixture.runs, "later", "town"), { recursive: true });
    // The wait the live tests use for a busy machine; the change comes within a second or so.
    for (let seen = 0; ; seen++) {
      const event = await stream.next("changed", seen, 30_000);
      if ((event.data as { added: string[] }).added.includes("later/town")) break;
    }
    const added = (await rows()).find((r) => r.id === "later/town")!;
    expect(added).toBeDefined();
    await server.verification.settled();
    expect((await rows()).find((r) => r.id === "later/town")!.shownStatus).toBe("finished");
  });

  it("verifies a run found unfinished again once its log reaches its last tick", async () => {
    const stream = await openSse(`${server.url}/api/episodes/live`);
    streams.push(stream);
    await stream.next("ready");
    const dir = join(fixture.runs, "running", "town");
    mkdirSync(join(dir, "log"), { recursive: true });
    const text = readFileSync(firstSegment(join(fixture.runs, "town")), "utf8");
    const segment = join(dir, "log", "000000000000.jsonl");
    // The run as it stands midway: its first tick committed.
    const lines = text.split("\n");
    writeFileSync(segment, lines.slice(0, lines.findIndex((l) => l.includes('"type":"tick.committed"')) + 1).join("\n") + "\n");
    const seen = async (what: (c: { added: string[]; changed: string[] }) => boolean) => {
      for (let skip = stream.events.filter((e) => e.event === "changed").length; ; skip++) if (what((await stream.next("changed", skip, 30_000)).data as { added: string[]; changed: string[] })) return;
    };
    await seen((c) => c.added.includes("running/town"));
    await server.verification.settled();
    expect((await rows()).find((r) => r.id === "running/town")).toMatchObject({ status: "interrupted", verify: { state: "unfinished" } });
    writeFileSync(segment, text);
    await seen((c) => c.changed.includes("running/town"));
    await server.verification.settled();
    expect((await rows()).find((r) => r.id === "running/town")).toMatchObject({ status: "finished", verify: { state: "ok" } });
  });

  it("shows a run under way as live while its writer holds the log's lock, interrupted once it lets go", async () => {
    const root = fixture.runs;
    const dir = join(root, "underway");
    mkdirSync(join(dir, "log"), { recursive: true });
    const lines = readFileSync(firstSegment(join(root, "town")), "utf8").split("\n");
    writeFileSync(join(dir, "log", "000000000000.jsonl"), lines.slice(0, lines.findIndex((l) => l.includes('"type":"tick.committed"')) + 1).join("\n") + "\n");
    expect(summarise(root, dir).status).toBe("interrupted");
    // Its writer (this process, as a run holds it) takes the lock to append.
    const { store, records } = openFileEventStoreForAppend(join(dir, "log"), { episode: logRecords(join(root, "town"))[0]!.episode, fsync: "never" });
    try {
      expect(records.length).toBeGreaterThan(0);
      expect(summarise(root, dir).status).toBe("live");
    } finally {
      await store.close();
    }
    expect(summarise(root, dir).status).toBe("interrupted");
    // A finished log stays finished whoever holds it.
    const town = openFileEventStoreForAppend(join(root, "town", "log"), { episode: logRecords(join(root, "town"))[0]!.episode, fsync: "never" });
    try {
      expect(summarise(root, join(root, "town")).status).toBe("finished");
    } finally {
      await town.store.close();
    }
  });

  it("refuses parameters on the list's stream", async () => {
    const response = await fetch(`${server.url}/api/episodes/live?x=1`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("'x'");
  });
});
