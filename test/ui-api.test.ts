// The dashboard's JSON API, in process: the server on a free port over tiny episodes run here.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, runCli } from "./helpers.ts";
import { filesUnder, SECRET_TEXT, uiFixture, type UiFixture } from "./uiFixtures.ts";
import { join } from "node:path";

let fixture: UiFixture;
let server: UiServer;
let before: Map<string, string>;

beforeAll(async () => {
  fixture = await uiFixture();
  before = filesUnder(fixture.runs);
  server = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1" });
  await server.verification.settled();
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const get = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(server.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** A request whose path is sent as written (fetch would resolve `..` first). */
const raw = (path: string): Promise<{ status: number; text: string }> =>
  new Promise((done, fail) => {
    const url = new URL(server.url);
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => done({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", fail);
    req.end();
  });

interface Row {
  id: string;
  world: string;
  seed: number;
  condition: string;
  records: number;
  status: string;
  shownStatus: string;
  lastTick: number;
  plannedTicks: number;
  fork: { parentId: string | null; atTick: number } | null;
  verify: { state: string; message: string | null };
}

describe("probetown ui: the API", () => {
  it("lists every episode with its world, seed, condition, status, ticks, records, fork parent and verify's verdict", async () => {
    const { status, body } = await get("/api/episodes");
    expect(status).toBe(200);
    const rows = body.episodes as Row[];
    expect(rows.map((r) => r.id).sort()).toEqual(["broken", "forks/town-no-reflection", "town"]);
    const town = rows.find((r) => r.id === "town")!;
    expect(town).toMatchObject({ world: "auratown", seed: 3, condition: "baseline", status: "finished", lastTick: 1, plannedTicks: 2, fork: null, verify: { state: "ok" } });
    expect(town.records).toBe(logRecords(join(fixture.runs, "town")).length);
    const fork = rows.find((r) => r.id === "forks/town-no-reflection")!;
    expect(fork).toMatchObject({ condition: "no-reflection", fork: { parentId: "town", atTick: 0 }, verify: { state: "ok" } });
  });

  it("shows a damaged log as damaged, with verify's message, while the others still load", async () => {
    const rows = (await get("/api/episodes")).body.episodes as Row[];
    const broken = rows.find((r) => r.id === "broken")!;
    expect(broken.shownStatus).toBe("damaged");
    expect(broken.verify.state).toBe("damaged");
    expect(broken.verify.message).toContain("seq 4 (line 5)");
    const episode = await get("/api/episode?id=broken");
    expect(episode.status).toBe(200);
    expect(episode.body.damage).toContain("seq 4 (line 5)");
    // The records before the damage are there.
    const records = await get("/api/records?id=broken");
    expect((records.body.records as { seq: number }[]).map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    expect((await get("/api/records?id=town")).body.total).toBe(logRecords(join(fixture.runs, "town")).length);
  });

  it("pages records and filters them by tick range, type and actor", async () => {
    const all = logRecords(join(fixture.runs, "town"));
    const page = await get("/api/records?id=town&offset=5&limit=7");
    expect((page.body.records as { seq: number }[]).map((r) => r.seq)).toEqual(all.slice(5, 12).map((r) => r.seq));
    expect(page.body.total).toBe(all.length);
    const commits = await get("/api/records?id=town&type=tick.committed");
    expect((commits.body.records as { tick: number; type: string }[]).map((r) => [r.type, r.tick])).toEqual([["tick.committed", 0], ["tick.committed", 1]]);
    const tick1 = (await get("/api/records?id=town&from=1&to=1")).body.records as { tick: number }[];
    expect(tick1.length).toBe(all.filter((r) => r.tick === 1).length);
    expect(tick1.every((r) => r.tick === 1)).toBe(true);
    const actor = all.find((r) => r.from.startsWith("agent/"))!.from;
    const byActor = (await get(`/api/records?id=town&actor=${encodeURIComponent(actor)}`)).body.records as { from: string; to: unknown }[];
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((r) => r.from === actor || r.to === actor || (Array.isArray(r.to) && r.to.includes(actor)))).toBe(true);
  });

  it("gives one record's payload, hash and cause chain, and the records it caused", async () => {
    const all = logRecords(join(fixture.runs, "town"));
    const caused = all.find((r) => r.cause !== null && all[r.cause]!.cause !== null)!;
    const { status, body } = await get(`/api/record?id=town&seq=${caused.seq}`);
    expect(status).toBe(200);
    const record = body.record as { hash: string; payload: unknown };
    expect(record.hash).toBe(caused.hash);
    expect(record.payload).toEqual(caused.payload);
    const causes = body.causes as { seq: number }[];
    expect(causes[0]!.seq).toBe(caused.cause);
    expect(causes[1]!.seq).toBe(all[caused.cause!]!.cause);
    expect((body.effects as { seq: number }[]).map((r) => r.seq)).toEqual(all.filter((r) => r.cause === caused.seq).map((r) => r.seq));
    expect((await get(`/api/record?id=town&seq=${all.length + 10}`)).status).toBe(404);
  });

  it("gives a world's own view from its hook: the town's map and ticks, then a tick's residents on demand", async () => {
    const episode = await get("/api/episode?id=town");
    expect(episode.body.worldView).toBe("Town replay");
    const { status, body } = await get("/api/world-view?id=town");
    expect(status).toBe(200);
    const data = body.data as { width: number; places: { name: string }[]; ticks: number[]; residents: number };
    expect(data.width).toBe(60);
    expect(data.places).toHaveLength(20);
    expect(data.ticks).toEqual([0, 1]);
    expect(data.residents).toBe(5);
    // Each resident where the tick's last occupancy record put it.
    const frame = await get("/api/world-view?id=town&tick=1");
    expect(frame.status).toBe(200);
    const residents = (frame.body.data as { tick: number; residents: { agent: string; x: number; y: number }[] }).residents;
    const occupancy = logRecords(join(fixture.runs, "town")).filter((r) => r.type === "location.occupancy" && r.tick === 1);
    const last = new Map<string, { x: number; y: number }>();
    for (const r of occupancy) for (const o of (r.payload as { occupants: { agent: string; x: number; y: number }[] }).occupants) last.set(o.agent, { x: o.x, y: o.y });
    expect(residents.map((r) => [r.agent, r.x, r.y])).toEqual([...last].sort(([a], [b]) => (a < b ? -1 : 1)).map(([a, p]) => [a, p.x, p.y]));
    // A resident's panel at a tick: its plan and private state as the log has them up to it.
    const agent = residents[0]!.agent;
    const panel = await get(`/api/world-view?id=town&resident=${encodeURIComponent(agent)}&tick=1`);
    expect(panel.status).toBe(200);
    const planned = logRecords(join(fixture.runs, "town")).filter((r) => r.type === "agent.planned" && r.from === agent && r.tick <= 1).at(-1)!;
    expect(panel.body.data).toMatchObject({ agent, tick: 1, plan: { tick: planned.tick, plan: (planned.payload as { plan: unknown }).plan } });
    const script = await raw("/world/auratown.js");
    expect(script.status).toBe(200);
    expect(script.text).toContain("export function View");
    expect((await raw("/world/nowhere.js")).status).toBe(404);
  });

  it("refuses bad query parameters with 400 and a message", async () => {
    const cases: [string, string][] = [
      ["/api/records?id=town&limit=x", "limit must be a whole number"],
      ["/api/records?id=town&limit=999999", "limit must be a whole number from 0 to 5000"],
      ["/api/records?id=town&from=-1", "from must be a whole number"],
      ["/api/records?id=town&from=3&to=1", "from (3) is after to (1)"],
      ["/api/records?id=town&tick=1", "unknown parameter 'tick'"],
      ["/api/record?id=town&seq=abc", "a record's seq is a whole number"],
      ["/api/record?id=town&seq=1&x=2", "unknown parameter 'x'"],
      ["/api/world-view?id=town&tick=x", "tick must be a whole number, got 'x'"],
      ["/api/world-view?id=town&tick=-1", "tick must be a whole number, got '-1'"],
      ["/api/world-view?id=town&tick=7", "tick 7 has no resident positions in this log (its ticks: 0–1)"],
      ["/api/world-view?id=town&tick=1&x=2", "unknown parameter 'x'; the town replay takes id, tick and resident"],
      ["/api/world-view?id=town&resident=agent%2Flin-wei", "tick is required with resident"],
      ["/api/world-view?id=town&resident=agent%2Fnobody&tick=1", "resident 'agent/nobody' is not in this town"],
      ["/api/world-view?id=town&resident=agent%2Flin-wei&tick=9", "tick 9 is past the log's last (its ticks: 0–1)"],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await get(path);
      expect({ path, status }).toEqual({ path, status: 400 });
      expect(body.error).toContain(message);
    }
  });

  it("serves no file outside the runs folder and its own list", async () => {
    for (const id of ["..", "../secret.txt", "town/../..", fixture.root, "/etc", "town/log"]) {
      const { status, body } = await get(`/api/records?id=${encodeURIComponent(id)}`);
      expect({ id, status }).toEqual({ id, status: 404 });
      expect(JSON.stringify(body)).not.toContain(SECRET_TEXT);
    }
    for (const path of ["/../secret.txt", "/%2e%2e/secret.txt", "/vendor/../../secret.txt", "/..%2f..%2fsecret.txt", "/static/../../../package.json", "/town/log/000000000000.jsonl"]) {
      const { status, text } = await raw(path);
      expect({ path, status }).toEqual({ path, status: 404 });
      expect(text).not.toContain(SECRET_TEXT);
      expect(text).not.toContain('"hash"');
    }
    const app = await raw("/");
    expect(app.status).toBe(200);
    expect(app.text).toContain("/app.js");
  });

  it("changes no file under the runs folder", async () => {
    await get("/api/records?id=broken");
    await get("/api/record?id=town&seq=3");
    expect(filesUnder(fixture.runs)).toEqual(before);
  });

  it("the command refuses a --runs that is no folder and a port out of range (exit 2)", async () => {
    const missing = await runCli(["ui", "--runs", join(fixture.root, "nowhere")]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("no such folder");
    const port = await runCli(["ui", "--runs", fixture.runs, "--port", "70000"]);
    expect(port.code).toBe(2);
    expect(port.err).toContain("--port expects an integer ≤ 65535");
  });
});
