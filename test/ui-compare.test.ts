// The dashboard's compare, fork and sweep report endpoints, in process: the server on a free port
// over the tiny episodes of uiFixture, and a small EnvProbe sweep's results file in its runs folder.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareLogs, stateAgreement } from "../services/kernel/episodeDiff.ts";
import { startUi, type UiServer } from "../services/ui/server.ts";
import { logRecords, runCli } from "./helpers.ts";
import { filesUnder, uiFixture, type UiFixture } from "./uiFixtures.ts";

let fixture: UiFixture;
let server: UiServer;

beforeAll(async () => {
  fixture = await uiFixture();
  const sweep = await runCli(["sweep", "envprobe", "--seeds", "0-2", "--regimes", "low", "--policies", "no-probe,periodic", "--out", join(fixture.runs, "grid.json"), "-q"]);
  expect(sweep.code).toBe(0);
  // A world's sweep (outcomes and per-condition means), its logs outside the runs folder.
  const town = await runCli(["sweep", "auratown", "--seeds", "1-2", "--conditions", "baseline,no-conversation", "--ticks", "2", "--log", join(fixture.root, "sweep-logs"), "--out", join(fixture.runs, "town-sweep.json"), "-q"]);
  expect(town.code).toBe(0);
  // An episode of another world: not comparable with the town.
  expect((await runCli(["run", "envprobe", "--seed", "1", "--log", join(fixture.runs, "probe"), "--trace", "none", "-q"])).code).toBe(0);
  server = await startUi({ runs: fixture.runs, port: 0, host: "127.0.0.1" });
  await server.verification.settled();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

const get = async (path: string): Promise<{ status: number; body: Record<string, any> }> => {
  const response = await fetch(server.url + path);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

const fork = async (body: unknown, query = ""): Promise<{ status: number; body: Record<string, any> }> => {
  const response = await fetch(`${server.url}/api/fork${query}`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe("probetown ui: compare, fork here, sweep reports", () => {
  it("compares a fork with its parent through the kernel's diff, with the state hashes tick by tick", async () => {
    const { status, body } = await get("/api/compare?a=town&b=forks/town-no-reflection");
    expect(status).toBe(200);
    const a = logRecords(join(fixture.runs, "town"));
    const b = logRecords(join(fixture.runs, "forks", "town-no-reflection"));
    // What `probetown diff` computes, unchanged.
    expect(body.diff).toEqual(JSON.parse(JSON.stringify(compareLogs(a, b, "town", "forks/town-no-reflection"))));
    expect(body.diff.relation).toBe("b forks a after tick 0");
    expect(body.diff.firstDifference.tick).toBe(1);
    // Tick 0 is only in the parent's log; tick 1 is in both, with different states.
    expect(body.ticks.map((t: { tick: number; agree: boolean; b: string | null }) => [t.tick, t.agree, t.b === null])).toEqual([
      [0, false, true],
      [1, false, false],
    ]);
    // An episode compared with itself agrees at every tick.
    const same = await get("/api/compare?a=town&b=town");
    expect(same.body.diff.identical).toBe(true);
    expect(same.body.ticks.every((t: { agree: boolean }) => t.agree)).toBe(true);
    expect(stateAgreement(a, a, "a", "a")).toHaveLength(2);
  });

  it("refuses a compare of unknown episodes or with unknown parameters, naming them", async () => {
    expect(await get("/api/compare?a=town&b=nowhere")).toEqual({ status: 404, body: { error: "b: no episode 'nowhere' under the runs folder" } });
    expect(await get("/api/compare?a=../x&b=town")).toMatchObject({ status: 404 });
    const worlds = await get("/api/compare?a=probe&b=town");
    expect(worlds.status).toBe(400);
    expect(worlds.body.error).toContain("only episodes of one world can be compared");
    const extra = await get("/api/compare?a=town&b=town&c=1");
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContain("'c'");
  });

  it("refuses a bad fork with 400 naming the parameter, and writes nothing", async () => {
    const before = filesUnder(fixture.runs);
    const cases: [unknown, string][] = [
      [{ id: "town", atTick: "x", condition: "no-conversation" }, "atTick:"],
      [{ id: "town", atTick: -1, condition: "no-conversation" }, "atTick:"],
      [{ id: "town", atTick: 1.5, condition: "no-conversation" }, "atTick:"],
      [{ id: "town", atTick: 7, condition: "no-conversation" }, "atTick: 'town' has no committed tick 7"],
      // The last tick leaves the child no tick to run.
      [{ id: "town", atTick: 1, condition: "no-conversation" }, "atTick 1"],
      [{ id: "town", atTick: 0, condition: "no-such" }, "condition: auratown has no condition 'no-such'"],
      [{ id: "town", atTick: 0 }, "condition:"],
      [{ atTick: 0, condition: "no-conversation" }, "id:"],
      [{ id: "town", atTick: 0, condition: "no-conversation", dir: "/tmp" }, "unknown parameter 'dir'"],
      [{ id: "broken", atTick: 0, condition: "no-conversation" }, "id: 'broken' has a damaged log"],
      // A fork's own log starts after its fork tick: earlier ticks are its parent's.
      [{ id: "forks/town-no-reflection", atTick: 0, condition: "no-conversation" }, "fork the parent there"],
      ["not json", "the body must be a JSON object"],
      [[1, 2], "the body must be a JSON object"],
    ];
    for (const [body, message] of cases) {
      const answer = await fork(body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.body.error).toContain(message);
    }
    expect(await fork({ id: "../town", atTick: 0, condition: "no-conversation" })).toMatchObject({ status: 404 });
    expect((await fork({ id: "town", atTick: 0, condition: "no-conversation" }, "?dir=x")).status).toBe(400);
    expect(filesUnder(fixture.runs)).toEqual(before);
  });

  it("forks an episode after a tick into forks/ below the runs folder, lists, verifies and compares the child", async () => {
    const made = await fork({ id: "town", atTick: 0, condition: "no-conversation" });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ id: "forks/auratown-s3-baseline~t0-no-conversation", parent: "town", atTick: 0, condition: "no-conversation" });
    expect(existsSync(join(fixture.runs, made.body.id, "log"))).toBe(true);
    // The same fork again gets a directory of its own.
    const again = await fork({ id: "town", atTick: 0, condition: "no-conversation" });
    expect(again.body.id).toBe("forks/auratown-s3-baseline~t0-no-conversation-2");

    const rows = (await get("/api/episodes")).body.episodes as { id: string; fork: { parentId: string; atTick: number } | null }[];
    expect(rows.find((r) => r.id === made.body.id)?.fork).toMatchObject({ parentId: "town", atTick: 0 });
    await server.verification.settled();
    expect((await get(`/api/episode?id=${encodeURIComponent(made.body.id)}`)).body).toMatchObject({ condition: "no-conversation", verify: { state: "ok" }, forkable: true });

    const compared = await get(`/api/compare?a=town&b=${encodeURIComponent(made.body.id)}`);
    expect(compared.body.diff.relation).toBe("b forks a after tick 0");
    expect(compared.body.diff.firstDifference.tick).toBe(1);
    expect(compared.body.diff.identical).toBe(false);
  });

  it("lists a sweep's results file and serves its tables a sorted page at a time", async () => {
    const { body } = await get("/api/sweeps");
    // Three worlds × one regime × two policies, three seeds each.
    // A grid's file names its kinds of world, not the sweep's world.
    expect(body.sweeps).toEqual([
      { file: "grid.json", world: null, seconds: expect.any(Number), conditions: 6, episodes: 18 },
      { file: "town-sweep.json", world: "auratown", seconds: expect.any(Number), conditions: 2, episodes: 4 },
    ]);
    const town = await get("/api/sweep?file=town-sweep.json&table=conditions&sort=condition");
    expect(town.body.rows.map((r: { condition: string; n: number }) => [r.condition, r.n])).toEqual([["baseline", 2], ["no-conversation", 2]]);
    expect(town.body.columns).toEqual(expect.arrayContaining(["conversations.mean", "conversations.ci"]));
    const outcomes = await get("/api/sweep?file=town-sweep.json&table=episodes&sort=spec.seed");
    expect(outcomes.body.rows.map((r: Record<string, unknown>) => r["spec.seed"])).toEqual([1, 1, 2, 2]);
    expect(outcomes.body.rows.map((r: Record<string, unknown>) => `${String(r["spec.seed"])} ${String(r["spec.condition"])} ${String(r.ok)}`).sort()).toEqual(["1 baseline true", "1 no-conversation true", "2 baseline true", "2 no-conversation true"]);
    const cells = await get("/api/sweep?file=grid.json&table=conditions");
    expect(cells.body.total).toBe(6);
    expect(cells.body.columns).toEqual(expect.arrayContaining(["world", "regime", "policy", "n", "accuracy", "pcw.p"]));
    const page = await get("/api/sweep?file=grid.json&table=episodes&offset=5&limit=4&sort=seed&desc=1");
    expect(page.body.total).toBe(18);
    // Six episodes per seed: the sixth is the last of seed 2.
    expect(page.body.rows.map((r: { seed: number }) => r.seed)).toEqual([2, 1, 1, 1]);
    const first = await get("/api/sweep?file=grid.json&table=episodes&limit=6&sort=seed&desc=1");
    expect(first.body.rows.every((r: { seed: number }) => r.seed === 2)).toBe(true);
    for (const [query, message] of [
      ["file=grid.json&table=x", "table"],
      ["file=grid.json&limit=5000", "limit"],
      ["file=grid.json&sort=nope", "sort:"],
      ["file=grid.json&desc=yes", "desc"],
      ["file=grid.json&page=2", "'page'"],
    ] as const) {
      const answer = await get(`/api/sweep?${query}`);
      expect({ query, status: answer.status }).toEqual({ query, status: 400 });
      expect(answer.body.error).toContain(message);
    }
    expect((await get("/api/sweep?file=../secret.txt")).status).toBe(404);
    expect((await get("/api/sweep?file=town")).status).toBe(404);
  });
});
