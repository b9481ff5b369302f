// `inspect`, `replay` and `fork` on large and odd episodes, as a researcher meets them: a town of
// more than 64 actors is summarised per tick (a 1,000-agent day was 75 MB of text) unless --agent or
// --all asks for agents' lines; a JSON document larger than one string holds is still written; a
// generated resident is found by the name the views show; flags a log's ends refute are refused
// before the replay; a fork of a fork asked for a tick before its fork point names the log that has
// it; replays report their progress.
import { beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { firstSegment, logRecords, runCli, tempDir } from "./helpers.ts";
import { GENESIS_HASH, seal } from "../events/record.ts";
import { namesActor, prettyJsonPieces, writePieces } from "../services/views/text.ts";
import { replayEpisode } from "../services/kernel/replay.ts";
import { townInspection } from "../services/auratown/inspect.ts";
import { collectRow, renderTimeline, summarize, type TickRow } from "../services/auratown/views.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";

const cli = runCli;


/** A short AURATown run and its no-conversation fork after tick `at`. */
async function runAndFork(label: string, seed: number, ticks: number, at: number): Promise<{ work: string; parent: string; child: string }> {
  const work = tempDir(label);
  const parent = join(work, "parent");
  expect((await cli(["run", "auratown", "--seed", String(seed), "--ticks", String(ticks), "--log", parent, "--trace", "none", "--quiet"])).code).toBe(0);
  const child = join(work, "child");
  expect((await cli(["fork", parent, "--at", String(at), "--condition", "no-conversation", "--log", child, "--trace", "none", "--quiet"])).code).toBe(0);
  return { work, parent, child };
}
describe("inspect of a large town", () => {
  const work = tempDir("inspect-large");
  const town = join(work, "town");
  // 70 agents: 71 actors with the town, past the 64 that `run` and `inspect` detail.
  let ran: Awaited<ReturnType<typeof cli>>;
  beforeAll(async () => {
    ran = await cli(["run", "auratown", "--seed", "3", "--agents", "70", "--ticks", "4", "--log", town, "--trace", "none", "--quiet"]);
  });

  it("is summarised per tick without --agent (counts, busiest places, stale beliefs), in full with --all", async () => {
    expect(ran.code, ran.err).toBe(0);
    const digest = await cli(["inspect", town]);
    expect(digest.code, digest.err).toBe(0);
    expect(digest.out).toContain("(70 agents: each tick is summarised for towns of more than 64 actors; --agent <id or name> shows one agent's events, state and beliefs, --all every agent's)");
    expect(digest.out).toMatch(/── tick 2 · Day 1 07:00 ─+\n {2}70 agents: \d+ decisions?, \d+ arrivals?, \d+ conversations?, \d+ private-state changes?( \([a-z_]+ \d+( · [a-z_]+ \d+)*\))?, \d+ reflections?\n {2}where: [^\n]+\n {2}beliefs about others: \d+ of \d+ stale/);
    expect(digest.out).not.toContain("believes ");
    expect(digest.out.split("\n").length).toBeLessThan(30);
    const all = await cli(["inspect", town, "--all"]);
    expect(all.code, all.err).toBe(0);
    expect(all.out).toContain("believes ");
    expect(all.out).not.toContain("each tick is summarised");
    expect(all.out.length).toBeGreaterThan(10 * digest.out.length);
    // The JSON is whole whatever the town's size (it is for programs).
    const json = JSON.parse((await cli(["inspect", town, "--json"])).out) as { ticks: { agents: unknown[] }[] };
    expect(json.ticks).toHaveLength(4);
    expect(json.ticks[0]!.agents).toHaveLength(70);
  });

  it("finds a generated resident by the name the views show (its id is zero-padded)", async () => {
    expect(ran.code, ran.err).toBe(0);
    const all = (await cli(["inspect", town, "--all", "--from", "1", "--to", "1"])).out;
    expect(all).toMatch(/Resident 50 @ /);
    const byName = await cli(["inspect", town, "--agent", "Resident 50"]);
    expect(byName.code, byName.err).toBe(0);
    expect(byName.out).toMatch(/Resident 50 @ /);
    expect(byName.out).not.toMatch(/Resident 51 @ /);
    for (const spelling of ["resident-50", "resident-0050", "agent/resident-0050"]) expect((await cli(["inspect", town, "--agent", spelling])).out).toBe(byName.out);
    expect(namesActor("agent/resident-0500", "Resident 500")).toBe(true);
    expect(namesActor("agent/resident-0500", "resident-50")).toBe(false);
    expect(namesActor("agent/lin-wei", "Lin Wei")).toBe(true);
  });

  it("replay --state --agent prints one actor's state (all 71 of them were every line), named as inspect names them", async () => {
    expect(ran.code, ran.err).toBe(0);
    const all = await cli(["replay", town, "--to-tick", "2", "--state", "--json"]);
    expect(all.code, all.err).toBe(0);
    const state = (JSON.parse(all.out) as { state: Record<string, unknown> }).state;
    expect(Object.keys(state)).toHaveLength(71);
    const one = await cli(["replay", town, "--to-tick", "2", "--state", "--agent", "Resident 50", "--json"]);
    expect(one.code, one.err).toBe(0);
    expect((JSON.parse(one.out) as { state: unknown }).state).toEqual({ "agent/resident-0050": state["agent/resident-0050"] });
    const text = await cli(["replay", town, "--to-tick", "2", "--state"]);
    expect(text.err).toContain("replay: the state of all 71 actors follows; --agent <id or name> prints one actor's");
    const bad = await cli(["replay", town, "--state", "--agent", "nobody"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--agent nobody: no actor of auratown-s3-baseline has that id or name/);
    const noState = await cli(["replay", town, "--agent", "lin-wei"]);
    expect(noState.code).toBe(2);
    expect(noState.err).toContain("--agent: chooses whose state --state prints; give --state too");
  });

  it("refuses --agent and --from that the log's ends refute before replaying it", async () => {
    expect(ran.code, ran.err).toBe(0);
    // A record in the middle altered: a replay stops there (exit 3), so an answer naming the flag
    // shows the flags were checked first (they waited out the whole replay of a large town).
    const copy = join(work, "damaged");
    const lines = readFileSync(firstSegment(town), "utf8").split("\n");
    mkdirSync(join(copy, "log"), { recursive: true });
    writeFileSync(join(copy, "log", "000000000000.jsonl"), lines.map((l, i) => (i === 40 ? l.replace('"tick":', '"tick":9') : l)).join("\n"));
    expect((await cli(["inspect", copy])).code).toBe(3);
    const agent = await cli(["inspect", copy, "--agent", "nobody"]);
    expect(agent.code).toBe(2);
    expect(agent.err).toMatch(/--agent nobody: no actor of auratown-s3-baseline has that id or name \(actors: agent\/chen-mei, .*, … \(71 in all\)\)/);
    const from = await cli(["inspect", copy, "--from", "50"]);
    expect(from.code).toBe(2);
    expect(from.err).toContain("--from 50: auratown-s3-baseline has no tick 50 (its log ends at tick 3)");
  });
});

describe("inspect and replay on odd logs", () => {
  it("inspect --to stops the replay there: a log that diverges later still shows its earlier ticks", async () => {
    const work = tempDir("inspect-to");
    const dir = join(work, "ep");
    expect((await cli(["run", "auratown", "--seed", "5", "--ticks", "6", "--log", dir, "--trace", "none", "--quiet"])).code).toBe(0);
    // Tick 4's committed state hash altered and the chain re-sealed: the log is intact, its replay diverges at tick 4.
    let previous = GENESIS_HASH;
    const lines = logRecords(dir).map((r) => {
      const payload = r.type === "tick.committed" && r.tick === 4 ? { ...(r.payload as object), stateHash: "0".repeat(64) } : r.payload;
      const sealed = seal(previous, r.episode, r.seq, { type: r.type, from: r.from, to: r.to, payload, tick: r.tick, cause: r.cause }, r.v, r.meta);
      previous = sealed.record.hash;
      return sealed.line;
    });
    writeFileSync(firstSegment(dir), lines.join(""));
    // Written as the replay goes: the ticks before the divergence, then the divergence (exit 1).
    const whole = await cli(["inspect", dir]);
    expect(whole.code).toBe(1);
    expect(whole.out).toContain("── tick 3 ·");
    expect(whole.out).not.toContain("── tick 4 ·");
    expect(whole.err).toMatch(/divergence at seq \d+ \(tick 4\)/);
    const early = await cli(["inspect", dir, "--from", "1", "--to", "3"]);
    expect(early.code, early.err).toBe(0);
    expect(early.out).toContain("── tick 3 ·");
    expect(early.out).not.toContain("── tick 4 ·");
  });

  it("a torn log (a crash mid-write) is refused with how to get past it: repair, or resume a run", async () => {
    const { work, parent: dir, child } = await runAndFork("inspect-torn", 6, 3, 0);
    for (const episode of [dir, child]) {
      const text = readFileSync(firstSegment(episode), "utf8");
      writeFileSync(firstSegment(episode), text.slice(0, text.length - 50));
    }
    const torn = await cli(["inspect", dir]);
    expect(torn.code).toBe(3);
    expect(torn.err).toContain(`\`probetown repair ${dir}\` cuts the log back to its last good record (the cut bytes are kept beside it); \`probetown run … --log ${dir} --resume\` continues the episode`);
    // A fork is not resumed: only the repair.
    const tornFork = await cli(["replay", child]);
    expect(tornFork.code).toBe(3);
    expect(tornFork.err).toContain(`\`probetown repair ${child}\` cuts the log back to its last good record (the cut bytes are kept beside it)\n`);
    expect((await cli(["repair", dir])).code).toBe(0);
    expect((await cli(["inspect", dir])).code).toBe(0);
  });

  it("inspect of a town whose log is damaged part-way writes the ticks before the damage, then the error (it wrote none: the log is read whole first)", async () => {
    const { parent: dir } = await runAndFork("inspect-damaged", 9, 8, 0);
    const lines = readFileSync(firstSegment(dir), "utf8").split("\n");
    const at = lines.findIndex((l) => l.includes('"type":"tick.started"') && l.includes('"tick":5,'));
    writeFileSync(firstSegment(dir), lines.map((l, i) => (i === at + 2 ? l.replace('"tick":', '"tick":9') : l)).join("\n"));
    const damaged = await cli(["inspect", dir]);
    expect(damaged.code).toBe(3);
    expect(damaged.err).toMatch(new RegExp(`^probetown: damaged log: .*000000000000\\.jsonl: seq ${at + 2} \\(line ${at + 3}\\): hash mismatch`));
    expect([...damaged.out.matchAll(/── tick (\d+) /g)].map((m) => Number(m[1]))).toEqual([0, 1, 2, 3, 4]);
    // A torn tail too, and with --to the ticks it asks for.
    writeFileSync(firstSegment(dir), lines.slice(0, at + 3).join("\n").slice(0, -20));
    const torn = await cli(["inspect", dir, "--to", "2"]);
    expect(torn.code).toBe(3);
    expect(torn.err).toMatch(/torn final record/);
    expect([...torn.out.matchAll(/── tick (\d+) /g)].map((m) => Number(m[1]))).toEqual([0, 1, 2]);
  });
});

describe("JSON in pieces", () => {
  it("writes exactly JSON.stringify(value, null, 2)", () => {
    const values: unknown[] = [
      { episode: "e", ticks: [{ tick: 0, agents: [{ id: "a", beliefs: {} }], skip: undefined }, { tick: 1, nested: { deep: [1, [2, { x: "line\nbreak" }]] } }], summary: { empty: [], none: null } },
      [1, undefined, "two", { a: undefined }],
      {},
      [],
      "text",
      7,
      null,
    ];
    for (const value of values) {
      let text = "";
      writePieces(prettyJsonPieces(value), (chunk) => (text += chunk));
      expect(text).toBe(JSON.stringify(value, null, 2));
    }
  });

  it("writes a list whose items come one at a time (an iterable, not an array) as JSON.stringify writes the array", () => {
    for (const items of [[], [1], [{ a: [1, { b: "x\ny" }] }, null, "s", undefined]]) {
      for (const depth of [0, 1, 2]) {
        let text = "";
        writePieces(prettyJsonPieces(items.values(), depth, depth + 1), (chunk) => (text += chunk));
        expect(text).toBe(JSON.stringify(items, null, 2).replaceAll("\n", `\n${"  ".repeat(depth)}`));
      }
      // Inside split objects too, and taken one item at a time: nothing draws the list before it is written.
      let drawn = 0;
      const lazily = (function* () {
        for (const item of items) {
          drawn++;
          yield item;
        }
      })();
      let text = "";
      const pieces = prettyJsonPieces({ summary: { beliefs: lazily, n: items.length } }, 0, 2);
      for (const piece of pieces) {
        if (text === "") expect(drawn).toBe(0);
        text += piece;
      }
      expect(text).toBe(JSON.stringify({ summary: { beliefs: items, n: items.length } }, null, 2));
    }
  });

  it("writes a document larger than one string can hold (inspect --json of a 1,000-agent town over three days crashed with exit 4)", () => {
    const row = { tick: 0, text: "x".repeat(2 ** 20) };
    const value = { episode: "big", ticks: Array.from({ length: 560 }, () => row) };
    expect(() => JSON.stringify(value, null, 2)).toThrow(RangeError);
    let bytes = 0;
    let chunks = 0;
    writePieces(prettyJsonPieces(value), (chunk) => {
      bytes += chunk.length;
      chunks++;
    });
    expect(bytes).toBeGreaterThan(2 ** 29);
    expect(chunks).toBeGreaterThan(500);
  }, 60_000);
});

describe("inspect of a town is written tick by tick", () => {
  it("writes each tick as the replay makes it, keeping no tick's rows, the same text as drawn from every row at the end", async () => {
    // 100 agents, --all: about 200 KB a tick, so its 1 MB chunks go out while the replay runs.
    const dir = join(tempDir("inspect-stream"), "town");
    expect((await cli(["run", "auratown", "--seed", "5", "--agents", "100", "--ticks", "12", "--log", dir, "--trace", "none", "--quiet"])).code).toBe(0);
    let ticksDone = 0;
    const writtenAt: number[] = [];
    let text = "";
    const inspection = townInspection({ all: true }, (chunk) => {
      writtenAt.push(ticksDone);
      text += chunk;
    });
    const result = await replayEpisode(dir, { ...inspection.options, onProgress: (done) => void (ticksDone = done) });
    result.host.stop();
    expect(inspection.active()).toBe(true);
    inspection.finish(result);
    // Written while the replay was still going: the first chunk went out ticks before the last tick.
    expect(writtenAt.length).toBeGreaterThan(1);
    expect(writtenAt[0]).toBeLessThan(10);
    // The bytes of the timeline drawn at the end from every tick's row, as inspect did.
    const rows: TickRow[] = [];
    const again = await replayEpisode(dir, { onTick: (tick, host) => void rows.push(collectRow(tick, host)) });
    again.host.stop();
    expect(text).toBe(`auratown-s5-baseline · auratown · seed 5 · condition baseline\n${renderTimeline(again.records, rows)}\n`);
  });

  it("--json is JSON.stringify of every tick and the summary, an interrupted run's part-written last tick included", async () => {
    const dir = join(tempDir("inspect-stream-json"), "town");
    expect((await cli(["run", "auratown", "--seed", "9", "--ticks", "30", "--log", dir, "--trace", "none", "--quiet"])).code).toBe(0);
    // Cut the log at a record boundary part-way through a tick, after a conversation the summary lists.
    const file = firstSegment(dir);
    const lines = readFileSync(file, "utf8").split("\n");
    const counted = lines.findLastIndex((l) => l.includes('"type":"conversation.held"'));
    expect(counted).toBeGreaterThan(0);
    writeFileSync(file, lines.slice(0, counted + 1).join("\n") + "\n");
    const rows: TickRow[] = [];
    const replayed = await replayEpisode(dir, { onTick: (tick, host) => void rows.push(collectRow(tick, host)) });
    replayed.host.stop();
    expect(replayed.incompleteTick).toBe(true);
    const records = logRecords(dir);
    const out = await cli(["inspect", dir, "--json"]);
    expect(out.code, out.err).toBe(0);
    expect(out.out).toBe(JSON.stringify({ episode: "auratown-s9-baseline", ticks: rows, summary: summarize(records, rows) }, null, 2) + "\n");
    const ranged = await cli(["inspect", dir, "--json", "--from", "3", "--to", "5"]);
    expect(ranged.out).toBe(JSON.stringify({ episode: "auratown-s9-baseline", ticks: rows.slice(3, 6), summary: summarize(records, rows) }, null, 2) + "\n");
  });
});

describe("fork and replay on odd episodes", () => {
  it("a fork of a fork at a tick before its fork point names the log that holds it", async () => {
    const { work, parent, child } = await runAndFork("fork-of-fork", 2, 8, 4);
    const early = await cli(["fork", child, "--at", "2", "--condition", "baseline", "--log", join(work, "never"), "--trace", "none"]);
    expect(early.code).toBe(2);
    expect(early.err).toContain(`--at 2: the parent has no committed tick 2 (committed ticks: 5–7); it is a fork of auratown-s2-baseline after tick 4, whose log holds the ticks up to 4: fork ${parent} --at 2 instead`);
    const grandchild = await cli(["fork", child, "--at", "5", "--condition", "baseline", "--log", join(work, "grandchild"), "--trace", "none", "--quiet"]);
    expect(grandchild.code, grandchild.err).toBe(0);
  });

  it("a replay reports its progress tick by tick, to --to-tick or the end", async () => {
    const work = tempDir("replay-progress");
    const dir = join(work, "ep");
    expect((await cli(["run", "auratown", "--seed", "4", "--ticks", "6", "--log", dir, "--trace", "none", "--quiet"])).code).toBe(0);
    const seen: [number, number][] = [];
    const whole = await replayEpisode(dir, { onProgress: (done, total) => void seen.push([done, total]) });
    whole.host.stop();
    expect(seen).toEqual([[1, 6], [2, 6], [3, 6], [4, 6], [5, 6], [6, 6]]);
    seen.length = 0;
    const part = await replayEpisode(dir, { toTick: 2, onProgress: (done, total) => void seen.push([done, total]) });
    part.host.stop();
    expect(seen).toEqual([[1, 3], [2, 3], [3, 3]]);
    // verify replays the whole episode, and says so as it goes (10 s for a 1,000-agent three-day town).
    seen.length = 0;
    expect((await verifyEpisode(dir, { onProgress: (done, total) => void seen.push([done, total]) })).exitCode).toBe(0);
    expect(seen).toEqual([[1, 6], [2, 6], [3, 6], [4, 6], [5, 6], [6, 6]]);
  });
});
