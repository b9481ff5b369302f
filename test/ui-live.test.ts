// The dashboard's live mode, in process: a record appended to a running episode reaches the
// server's event stream (server-sent events) within a second, for a file log (watched, read again
// through the checked reader) and for a JetStream log (the store's follow). Also: a damaged log's
// stream says so with verify's message and ends; bad parameters are refused naming them; the
// server binds loopback by default; symlinks out of the runs folder reach nothing.
import { cpSync, mkdirSync, symlinkSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Draft, LogRecord } from "../events/record.ts";
import type { EventStore } from "../infra/eventStore.ts";
import { openFileEventStoreForAppend } from "../infra/fileEventStore.ts";
import { createJetStreamEventStore } from "../infra/jetStreamEventStore.ts";
import { connectNats } from "../infra/nats.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { jetStreamId } from "../services/ui/jetStreamSource.ts";
import { firstSegment, logRecords, startCli, until } from "./helpers.ts";
import { startTestNats, type TestNats } from "./natsServer.ts";
import { FIXTURE_MODEL, modelCallsEpisode, SECRET_TEXT, uiFixture, type UiFixture } from "./uiFixtures.ts";
import { usageFromRecords } from "../services/llm/usage.ts";
import { openSse, type SseStream } from "./uiLive.ts";

/** The acceptance bound: an appended record shows within this long. */
const LIVE_MS = 1000;

let fixture: UiFixture;
let server: UiServer;
let nats: TestNats;
let nc: NatsConnection;
let namespace: string;
let jsStore: EventStore;
let callsStore: EventStore;
let callsLast: LogRecord;
const streams: SseStream[] = [];
const fileStores: EventStore[] = [];

const phase = (tick: number, name: string): Draft => ({ type: "tick.phase", from: "episode", to: "*", payload: { phase: name }, tick, cause: null });

beforeAll(async () => {
  fixture = await uiFixture();
  cpSync(join(fixture.runs, "town"), join(fixture.runs, "live"), { recursive: true });
  // Symlinks: a log folder and a segment pointing out of the runs folder, one pointing inside.
  const outside = join(fixture.root, "outside");
  cpSync(join(fixture.runs, "town"), outside, { recursive: true });
  mkdirSync(join(fixture.runs, "linked-log"));
  symlinkSync(join(outside, "log"), join(fixture.runs, "linked-log", "log"));
  mkdirSync(join(fixture.runs, "linked-segment", "log"), { recursive: true });
  symlinkSync(firstSegment(outside), join(fixture.runs, "linked-segment", "log", "000000000000.jsonl"));
  symlinkSync(outside, join(fixture.runs, "linked-dir"));
  mkdirSync(join(fixture.runs, "alias"));
  symlinkSync(join(fixture.runs, "town", "log"), join(fixture.runs, "alias", "log"));
  mkdirSync(join(fixture.runs, "secret-log", "log"), { recursive: true });
  symlinkSync(fixture.secret, join(fixture.runs, "secret-log", "log", "000000000000.jsonl"));

  nats = await startTestNats();
  nc = await connectNats(nats.url, { name: "ui-live-test" });
  namespace = nats.namespace("ui-live");
  jsStore = await createJetStreamEventStore(nc, namespace, "ep", { episode: "ep" });
  await jsStore.append([phase(0, "a"), phase(0, "b")], { expectedSeq: -1 });
  // A JetStream store publishes what it was given when it is flushed (a run: at its fsync points).
  await jsStore.flush();
  // A JetStream log with model calls: a household episode's records, appended as drafts.
  await modelCallsEpisode(join(fixture.root, "calls-source"));
  callsStore = await createJetStreamEventStore(nc, namespace, "calls", { episode: "calls" });
  const drafts = logRecords(join(fixture.root, "calls-source")).map((r): Draft => ({ type: r.type, from: r.from, to: r.to, payload: r.payload, tick: r.tick, cause: r.cause }));
  callsLast = (await callsStore.append(drafts, { expectedSeq: -1 })).at(-1)!;
  await callsStore.flush();
  server = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1", nats: { url: nats.url, namespace } });
}, 180_000);

afterAll(async () => {
  for (const s of streams) s.close();
  for (const s of fileStores) await s.close();
  await jsStore?.close();
  await callsStore?.close();
  await server?.close();
  await nc?.close();
}, 60_000);

const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(server.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const live = async (path: string): Promise<SseStream> => {
  const stream = await openSse(server.url + path);
  streams.push(stream);
  return stream;
};

describe("probetown ui: live episodes", () => {
  it("streams a record appended to a file log within a second, as the log holds it", async () => {
    const dir = join(fixture.runs, "live");
    const before = logRecords(dir);
    const last = before.at(-1)!;
    const stream = await live(`/api/live?id=live&after=${last.seq}`);
    expect(stream.status).toBe(200);
    expect((await stream.next("ready")).data).toEqual({ after: last.seq });
    // Appended as a running episode appends: through its store, holding the writer lock, and
    // committed (the file store writes a tick's records at its commit).
    const { store } = openFileEventStoreForAppend(join(dir, "log"), { episode: last.episode, fsync: "never" });
    fileStores.push(store);
    const appendedAt = performance.now();
    const [appended] = await store.append([phase(last.tick, "live")], { expectedSeq: last.seq });
    await store.commit();
    const event = await stream.next("records");
    const latency = event.at - appendedAt;
    console.log(`file log: record seen on the live stream ${latency.toFixed(0)} ms after its append`);
    expect(latency).toBeLessThan(LIVE_MS);
    expect((event.data as { records: LogRecord[] }).records).toEqual([appended]);
    // The other endpoints read it too: the episode's row and its records moved on.
    expect((await get("/api/episode?id=live")).body.lastSeq).toBe(appended!.seq);
    expect((await get("/api/records?id=live")).body.total).toBe(before.length + 1);
    // Two more in one append: one batch (or more), in order, nothing twice.
    await store.append([phase(last.tick, "x"), phase(last.tick, "y")], { expectedSeq: appended!.seq });
    await store.commit();
    await until(() => stream.events.filter((e) => e.event === "records").flatMap((e) => (e.data as { records: LogRecord[] }).records).length === 3, "the next two records on the stream");
    expect(stream.events.filter((e) => e.event === "records").flatMap((e) => (e.data as { records: LogRecord[] }).records.map((r) => r.seq))).toEqual([1, 2, 3].map((k) => last.seq + k));
  });

  it("counts a JetStream log's models and tokens as a file log's, reading only what it gained since", async () => {
    const id = jetStreamId(namespace, "calls");
    const rowOf = async () => ((await get("/api/episodes")).body.episodes as { id: string; modelCalls: unknown; durationMs: unknown }[]).find((r) => r.id === id)!;
    const { total } = usageFromRecords(logRecords(join(fixture.root, "calls-source")));
    expect(total.calls).toBeGreaterThan(0);
    expect((await rowOf()).modelCalls).toEqual({ models: [FIXTURE_MODEL], calls: total.calls, tokens: total.promptTokens + total.completionTokens });
    // Asked again without growth: the same, nothing read.
    expect((await rowOf()).modelCalls).toEqual({ models: [FIXTURE_MODEL], calls: total.calls, tokens: total.promptTokens + total.completionTokens });
    // One more call, by another model: added to the count.
    const requested = { type: "llm.requested", from: "env/llm", to: "env/llm", payload: { model: "other-model" }, tick: callsLast.tick, cause: null };
    const [req] = await callsStore.append([requested], { expectedSeq: callsLast.seq });
    await callsStore.append([{ type: "llm.completed", from: "env/llm", to: "env/llm", payload: { usage: { promptTokens: 5, completionTokens: 7 } }, tick: callsLast.tick, cause: req!.seq }], { expectedSeq: req!.seq });
    await callsStore.flush();
    expect((await rowOf()).modelCalls).toEqual({ models: [FIXTURE_MODEL, "other-model"].sort(), calls: total.calls + 1, tokens: total.promptTokens + total.completionTokens + 12 });
  });

  it("tells a listening list of a JetStream episode that appears, and of one whose log grows", async () => {
    const stream = await live("/api/episodes/live");
    await stream.next("ready");
    const later = await createJetStreamEventStore(nc, namespace, "later", { episode: "later" });
    try {
      const [first] = await later.append([phase(0, "a")], { expectedSeq: -1 });
      await later.flush();
      const id = jetStreamId(namespace, "later");
      const changes = async (what: (c: { added: string[]; changed: string[] }) => boolean) => {
        for (let skip = 0; ; skip++) if (what((await stream.next("changed", skip, 30_000)).data as { added: string[]; changed: string[] })) return;
      };
      await changes((c) => c.added.includes(id));
      const row = async () => ((await get("/api/episodes")).body.episodes as { id: string; records: number; status: string }[]).find((r) => r.id === id);
      // Listed and readable; its writer still holds it: live.
      expect(await row()).toMatchObject({ records: 1, status: "live" });
      expect((await get(`/api/records?id=${encodeURIComponent(id)}`)).body.total).toBe(1);
      await later.append([phase(0, "b")], { expectedSeq: first!.seq });
      await later.flush();
      await changes((c) => c.changed.includes(id));
      expect((await row())!.records).toBe(2);
    } finally {
      await later.close();
    }
  });

  it("streams a record appended to a JetStream log within a second", async () => {
    const id = jetStreamId(namespace, "ep");
    const rows = (await get("/api/episodes")).body.episodes as { id: string; records: number; verify: { state: string } }[];
    expect(rows.find((r) => r.id === id)).toMatchObject({ records: 2, verify: { state: "not-replayed" } });
    const stream = await live(`/api/live?id=${encodeURIComponent(id)}&after=1`);
    await stream.next("ready");
    const appendedAt = performance.now();
    const [appended] = await jsStore.append([phase(1, "live")], { expectedSeq: 1 });
    await jsStore.flush();
    const event = await stream.next("records");
    const latency = event.at - appendedAt;
    console.log(`JetStream log: record seen on the live stream ${latency.toFixed(0)} ms after its append`);
    expect(latency).toBeLessThan(LIVE_MS);
    expect((event.data as { records: LogRecord[] }).records).toEqual([appended]);
    const records = (await get(`/api/records?id=${encodeURIComponent(id)}`)).body;
    expect((records.records as LogRecord[]).map((r) => r.seq)).toEqual([0, 1, 2]);
    expect((await get(`/api/episode?id=${encodeURIComponent(id)}`)).body).toMatchObject({ lastSeq: 2, damage: null, records: 3 });
  });

  it("from after=-1 sends every record first, then goes on live", async () => {
    const all = logRecords(join(fixture.runs, "town"));
    const stream = await live("/api/live?id=town&after=-1");
    const first = await stream.next("records");
    expect((first.data as { records: LogRecord[] }).records.map((r) => r.hash)).toEqual(all.map((r) => r.hash));
  });

  it("says a damaged log is damaged, with verify's message, and ends the stream", async () => {
    const stream = await live("/api/live?id=broken&after=3");
    const damage = await stream.next("damage");
    expect((damage.data as { damage: string }).damage).toContain("seq 4 (line 5)");
    await stream.ended;
    expect(stream.events.map((e) => e.event)).toEqual(["ready", "damage"]);
    // The other episodes still load.
    expect((await get("/api/episode?id=town")).status).toBe(200);
  });

  it("refuses bad parameters with 400 and a message naming the parameter", async () => {
    const cases: [string, string][] = [
      ["/api/live?id=live&after=x", "after must be a record's seq"],
      ["/api/live?id=live&after=-2", "after must be a record's seq"],
      ["/api/live?id=live&since=3", "unknown parameter 'since'"],
      ["/api/episode?id=town&tick=3", "unknown parameter 'tick'"],
      ["/api/episodes?world=auratown", "unknown parameter 'world'"],
      ["/api/world-view?id=town&day=1", "unknown parameter 'day'"],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await get(path);
      expect({ path, status }).toEqual({ path, status: 400 });
      expect(body.error).toContain(message);
    }
    expect((await get("/api/live?id=nowhere")).status).toBe(404);
  });

  it("reads no log through a symlink out of the runs folder (one inside is read)", async () => {
    const ids = ((await get("/api/episodes")).body.episodes as { id: string }[]).map((r) => r.id);
    for (const id of ["linked-log", "linked-segment", "linked-dir", "secret-log"]) {
      expect(ids).not.toContain(id);
      for (const path of [`/api/records?id=${id}`, `/api/episode?id=${id}`, `/api/live?id=${id}&after=-1`]) {
        const response = await fetch(server.url + path);
        const text = await response.text();
        expect({ path, status: response.status }).toEqual({ path, status: 404 });
        expect(text).not.toContain(SECRET_TEXT);
      }
    }
    expect(ids).toContain("alias");
    expect((await get("/api/records?id=alias")).body.total).toBe(logRecords(join(fixture.runs, "town")).length);
    expect(readFileSync(fixture.secret, "utf8")).toBe(SECRET_TEXT);
  });

  it("closing the server ends its open live streams", async () => {
    const other = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1" });
    const stream = await openSse(`${other.url}/api/live?id=town`);
    streams.push(stream);
    await stream.next("ready");
    await other.close();
    await stream.ended;
    expect(stream.events.map((e) => e.event)).toEqual(["ready"]);
  });

  it("the command listens on 127.0.0.1 unless --host says otherwise", async () => {
    const cli = startCli(["ui", "--runs", fixture.runs, "--port", "0"]);
    let out = "";
    cli.child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await until(() => out.includes("probetown ui: http://"), "the ui command's address line", 60_000);
      expect(out).toMatch(/probetown ui: http:\/\/127\.0\.0\.1:\d+ /);
    } finally {
      cli.child.kill("SIGTERM");
      await cli.done;
    }
  }, 90_000);
});
