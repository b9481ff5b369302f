// The committed household task pool (issue 23): it regenerates byte-identically from its seed,
// it is balanced as the issue asks, and every task in it passes the verifier; and the pool
// evaluation: attempts run with their logs written, summarised with exact Pass^k.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashOf } from "../events/canonical.ts";
import { generateTask } from "../actors/household/generator.ts";
import { generatePool, POOL_SEED, poolFileText, poolIndexOf, poolOptions } from "../actors/household/pool.ts";
import type { HouseholdTask } from "../actors/household/task.ts";
import { specOf } from "../actors/household/verifier/golden.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { resolveHouseholdConfig } from "../actors/household/world.ts";
import { POOL_DIR } from "../services/household/writePoolMain.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";
import { runPoolAttempts, summarisePool, type AttemptResult } from "../services/household/poolEval.ts";
import { runCli } from "./cliInProcess.ts";
import { logRecords } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "probetown-household-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const committed = (name: string) => readFileSync(join(POOL_DIR, name), "utf8");

describe("household task pool", () => {
  const tasks = generatePool(POOL_SEED);

  it("regenerates byte-identically from its seed: every task file and the index", () => {
    expect(readdirSync(POOL_DIR).filter((f) => f.endsWith(".json")).sort()).toEqual(["index.json", ...tasks.map((t) => `${t.task_id}.json`)].sort());
    for (const t of tasks) expect(committed(`${t.task_id}.json`), t.task_id).toBe(poolFileText(t));
    expect(committed("index.json")).toBe(poolFileText(poolIndexOf(POOL_SEED, tasks)));
  });

  it("has 300 tasks: 150 standard / 150 hard, 150 cooperative / 150 mixed, 100 at each K-depth, 25 per cell", () => {
    const files = tasks.map((t) => loadTaskFile(join(POOL_DIR, `${t.task_id}.json`)));
    const count = (key: (t: HouseholdTask) => string) => files.reduce<Record<string, number>>((acc, t) => ({ ...acc, [key(t)]: (acc[key(t)] ?? 0) + 1 }), {});
    expect(files.length).toBe(300);
    expect(count((t) => t.split!)).toEqual({ standard: 150, hard: 150 });
    expect(count((t) => t.category)).toEqual({ cooperative: 150, mixed: 150 });
    expect(count((t) => String(t.tom_level))).toEqual({ 1: 100, 2: 100, 3: 100 });
    expect(Object.values(count((t) => `${t.split} ${t.category} ${t.tom_level}`))).toEqual(Array(12).fill(25));
    expect(new Set(files.map((t) => t.task_id)).size).toBe(300);
  });

  it("every committed task passes the verifier at its depth, subgoal tension included, and its golden trajectory's spec hash is its own", () => {
    for (const o of poolOptions()) {
      const t = JSON.parse(committed(`gen-${o.category === "cooperative" ? "coop" : "mixed"}-d${o.depth}-${o.split}-s${o.seed}.json`)) as HouseholdTask;
      const v = verifyTask(t, { target: o.depth, subgoalTension: true });
      expect(v.failures, t.task_id).toEqual([]);
      // A mixed task's one owner (the actor) has an objective in tension; a cooperative task none.
      expect(v.report!.subgoalTension!.map((x) => [x.agent, x.tension !== null]), t.task_id).toEqual(o.category === "mixed" ? [["agent_1", true]] : []);
      expect(t.golden_trajectory!.spec_hash).toBe(hashOf(specOf(t)));
      expect(t.golden_trajectory).toEqual(v.report!.golden);
    }
  });

  it("a pool task's id names the same task in a run's config", () => {
    const t = tasks[137]!;
    expect(resolveHouseholdConfig({ task: t.task_id }).task).toEqual(t);
  });
});

describe("household pool evaluation", () => {
  const result = (taskId: string, attempt: number, success: boolean, extra: Partial<AttemptResult> = {}): AttemptResult => ({ taskId, split: "standard", category: "cooperative", depth: 1, policy: "competent", attempt, success, percentComplete: success ? 1 : 0.5, finalSuccess: success, turns: 9, messages: 2, literalScore: success ? 1 : 0, literalPass: success, ...extra });

  it("summarises exactly: Pass^k = C(c,k)/C(n,k) per task, Pass@k likewise, a missing attempt a failure", () => {
    const results = [
      result("a", 0, true), result("a", 1, true), result("a", 2, false),
      result("b", 0, true), result("b", 1, true), result("b", 2, true),
      // Task c's third attempt never ran: it counts as a failure.
      result("c", 0, true, { depth: 2 }), result("c", 1, true, { depth: 2 }),
    ];
    const rows = summarisePool(results, 3);
    const all = rows.find((r) => r.group.split === undefined && r.group.scope === undefined && r.group.depth === undefined)!;
    expect(all.tasks).toBe(3);
    expect(all.attempts).toBe(9);
    expect(all.avg).toBeCloseTo(7 / 9, 12);
    expect(all.se).toBeCloseTo(Math.sqrt((7 / 9) * (2 / 9) / 9), 12);
    // a and c: 2 of 3; b: 3 of 3.
    expect(all.passPower[0]).toBeCloseTo((2 / 3 + 1 + 2 / 3) / 3, 12);
    expect(all.passPower[1]).toBeCloseTo((1 / 3 + 1 + 1 / 3) / 3, 12);
    expect(all.passPower[2]).toBeCloseTo(1 / 3, 12);
    expect(all.passAt).toEqual([expect.closeTo(7 / 9, 12), 1, 1]);
    const d2 = rows.find((r) => r.group.depth === 2 && r.group.split === undefined)!;
    expect([d2.tasks, d2.passPower[2]]).toEqual([1, 0]);
  });

  it("runs pool tasks with every log written; the logs verify, and a same-condition fork reproduces the rest", async () => {
    const tasks = [0, 110, 299].map((i) => generateTask(poolOptions()[i]!));
    const results = await runPoolAttempts({ tasks, policies: ["competent", "naive"], attempts: 2, dir, snapshotEvery: 10 });
    expect(results.length).toBe(12);
    const rows = summarisePool(results, 2);
    const of = (policy: string) => rows.find((r) => r.policy === policy && r.group.split === undefined && r.group.scope === undefined && r.group.depth === undefined)!;
    expect(of("competent").passPower).toEqual([1, 1]);
    expect(of("naive").passPower).toEqual([0, 0]);
    // Attempts of a scripted agent repeat exactly.
    for (const t of tasks) expect(new Set(results.filter((r) => r.taskId === t.task_id && r.policy === "competent").map((r) => r.turns)).size).toBe(1);
    const run = join(dir, "competent", tasks[1]!.task_id, "a0");
    expect((await runCli(["verify", run])).code).toBe(0);
    const fork = join(dir, "fork");
    expect((await runCli(["fork", run, "--at", "3", "--condition", "competent", "--log", fork])).code).toBe(0);
    const after = (d: string) => logRecords(d).filter((x) => x.tick >= 4 && x.type !== "episode.forked").map((x) => [x.type, x.from, x.payload]);
    expect(after(fork)).toEqual(after(run));
    expect(after(run).length).toBeGreaterThan(0);
  });
});
