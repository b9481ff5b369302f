// The committed household task pool (issue 23): it regenerates byte-identically from its seed,
// it is balanced as the issue asks, and every task in it passes the verifier.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashOf } from "../events/canonical.ts";
import { generatePool, POOL_SEED, poolFileText, poolIndexOf, poolOptions } from "../actors/household/pool.ts";
import type { HouseholdTask } from "../actors/household/task.ts";
import { specOf } from "../actors/household/verifier/golden.ts";
import { verifyTask } from "../actors/household/verifier/verify.ts";
import { resolveHouseholdConfig } from "../actors/household/world.ts";
import { POOL_DIR } from "../services/household/writePoolMain.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";

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

  it("every committed task passes the verifier at its depth, and its golden trajectory's spec hash is its own", () => {
    for (const o of poolOptions()) {
      const t = JSON.parse(committed(`gen-${o.category === "cooperative" ? "coop" : "mixed"}-d${o.depth}-${o.split}-s${o.seed}.json`)) as HouseholdTask;
      const v = verifyTask(t, { target: o.depth });
      expect(v.failures, t.task_id).toEqual([]);
      expect(t.golden_trajectory!.spec_hash).toBe(hashOf(specOf(t)));
      expect(t.golden_trajectory).toEqual(v.report!.golden);
    }
  });

  it("a pool task's id names the same task in a run's config", () => {
    const t = tasks[137]!;
    expect(resolveHouseholdConfig({ task: t.task_id }).task).toEqual(t);
  });
});
