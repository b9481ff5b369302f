// Runs the scripted agents on the committed household pool and prints the Table-2-shaped summary
// and the wall time (the issue's throughput figure: 300 tasks × 3 attempts, logs written).
// Run: node services/household/evalPoolMain.ts [--policies competent,naive] [--attempts 3]
//        [--tasks n] [--log dir] [--snapshot-every n] [--json]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PoolIndex } from "../../actors/household/pool.ts";
import type { Policy } from "../../actors/household/policy.ts";
import { UsageError } from "../kernel/usageError.ts";
import { loadWorlds } from "../worlds.ts";
import { poolTable, runPoolAttempts, summarisePool } from "./poolEval.ts";
import { loadTaskFile } from "./taskFile.ts";
import { POOL_DIR } from "./writePoolMain.ts";

function flag(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args[at + 1];
}

export async function main(args: readonly string[]): Promise<void> {
  const policies = (flag(args, "--policies") ?? "competent,naive").split(",") as Policy[];
  for (const p of policies) if (p !== "competent" && p !== "first-order" && p !== "naive") throw new UsageError(`--policies: unknown policy '${p}' (competent, first-order, naive)`);
  const attempts = Number(flag(args, "--attempts") ?? "3");
  if (!Number.isSafeInteger(attempts) || attempts < 1) throw new UsageError(`--attempts: expected a positive integer`);
  const index = JSON.parse(readFileSync(join(POOL_DIR, "index.json"), "utf8")) as PoolIndex;
  const limit = Number(flag(args, "--tasks") ?? String(index.tasks.length));
  const tasks = index.tasks.slice(0, limit).map((id) => loadTaskFile(join(POOL_DIR, `${id}.json`)));
  const given = flag(args, "--log");
  // A snapshot every 10 turns, not every turn: the log is complete either way, and a fork or
  // replay between snapshots replays from the one before (2.3× the episodes per second).
  const snapshotEvery = Number(flag(args, "--snapshot-every") ?? "10");
  if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) throw new UsageError(`--snapshot-every: expected an integer ≥ 0`);
  const dir = given ?? mkdtempSync(join(tmpdir(), "probetown-household-pool-"));
  const timings: Record<string, number> = {};
  const results = [];
  try {
    for (const policy of policies) {
      const started = performance.now();
      results.push(...(await runPoolAttempts({ tasks, policies: [policy], attempts, dir, snapshotEvery })));
      timings[policy] = (performance.now() - started) / 1000;
    }
  } finally {
    if (given === undefined) rmSync(dir, { recursive: true, force: true });
  }
  const rows = summarisePool(results, attempts);
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ tasks: tasks.length, attempts, seconds: timings, rows }, null, 2)}\n`);
  else {
    process.stdout.write(`${poolTable(rows)}\n\n`);
    for (const [p, s] of Object.entries(timings)) process.stdout.write(`${p}: ${tasks.length} tasks × ${attempts} attempts in ${s.toFixed(1)} s (${((tasks.length * attempts) / s).toFixed(1)} episodes/s), logs written${given === undefined ? " (to a temporary directory, then removed)" : ` to ${given}`}\n`);
  }
}

if (import.meta.main) {
  await loadWorlds();
  await main(process.argv.slice(2));
}
