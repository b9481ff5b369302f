// A child process of `npm run bench`: runs AURATown mornings embedded (file log never fsynced, in-process actors,
// no NATS), the sweep row's episodes, so 1 vs 2 such processes measure how far this machine's
// cores scale the same work with nothing shared. Prints `{"seconds": …, "cpu": …}` as its last line.
// Usage: node bench/mornings.ts <first seed> <count> <dir> <warm-up count>
import { join } from "node:path";
import { runEpisode } from "../services/kernel/episodes.ts";
import { loadWorlds } from "../services/worlds.ts";

await loadWorlds();

const [first, count, dir, warmUp] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]!, Number(process.argv[5] ?? 0)];
const morning = (seed: number, label: string) =>
  runEpisode({ world: "auratown", seed, dir: join(dir, `${label}-${seed}`), ticks: 12, snapshotEvery: 4, fsync: "never", trace: { exporter: "none" } });

// Warm, as the sweep row's workers are: V8 compiles the code before the timed part.
for (let i = 0; i < warmUp; i++) await morning(1_000_000 + first + i, "warm");
// Start together: the parent releases every process at once through stdin.
process.stdout.write("ready\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
const cpu0 = process.cpuUsage();
const started = performance.now();
for (let i = 0; i < count; i++) await morning(first + i, "timed");
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, cpu: (cpu.user + cpu.system) / 1e6 })}\n`);
process.exit(0);
