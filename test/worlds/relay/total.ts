// `probetown relay-total <log>`: the relay world's own command, loaded when it runs.
import { readLog } from "../../../infra/fileEventStore.ts";
import { layoutOf, resolveEpisodeDir, UsageError } from "../../../services/kernel/replay.ts";
import { metrics } from "./module.ts";

export function cmdRelayTotal(log: string, flags: { json?: boolean }): number {
  const records = readLog(layoutOf(resolveEpisodeDir(log)).log);
  // The first record (episode.started or episode.forked) names the world.
  const world = (records[0]?.payload as { world?: string } | undefined)?.world;
  if (world !== "relay") throw new UsageError(`${log}: not a relay episode (its world is ${world ?? "unknown"})`);
  const { total, meanRelayed } = metrics(records);
  process.stdout.write(flags.json ? `${JSON.stringify({ total, meanRelayed })}\n` : `relay total ${total} (mean relayed ${(meanRelayed ?? 0).toFixed(2)})\n`);
  return 0;
}
