// `probetown repair <log>`: cut a torn final record back to the last good one.
import { accessSync, constants } from "node:fs";
import { isDamage, type TornTail } from "../../../events/errors.ts";
import { openFileEventStoreForAppend, scanLog } from "../../../infra/fileEventStore.ts";
import { layoutOf, resolveEpisodeDir } from "../../kernel/replay.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { shownPath } from "../../views/text.ts";
import { EXIT } from "../exitCodes.ts";

export async function cmdRepair(log: string): Promise<number> {
  const dir = resolveEpisodeDir(log);
  const logDir = layoutOf(dir).log;
  // Damage before the end is reported as the append would (exit 3), saying that repair leaves it;
  // an intact log needs no write, nor its writer lock (a read-only one failed with EACCES on the lock file).
  let scan: ReturnType<typeof scanLog>;
  try {
    scan = scanLog(logDir);
  } catch (error) {
    if (!isDamage(error)) throw error;
    process.stderr.write(`probetown: damaged log: ${error.message}\n  repair cuts only a torn final record (a crash mid-write); damage before the end is left as it is, nothing was changed\n`);
    return EXIT.damaged;
  }
  const episode = scan.records[0]?.episode;
  if (episode === undefined) throw new UsageError(`${shownPath(logDir)}: no complete record to keep; nothing to repair`);
  if (scan.torn === null) {
    process.stdout.write(`${shownPath(logDir)}: intact, nothing to repair\n`);
    return EXIT.ok;
  }
  try {
    accessSync(logDir, constants.W_OK);
    accessSync(scan.lastFile ?? logDir, constants.W_OK);
  } catch (error) {
    throw new UsageError(`${scan.torn.message}; cannot cut it: ${shownPath(logDir)} cannot be written (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the log is left as it is: make it writable and repair again`);
  }
  let cut: { torn: TornTail; kept: string } | null = null;
  const { store, records } = openFileEventStoreForAppend(logDir, { episode, onRecovered: (torn, kept) => (cut = { torn, kept }) });
  await store.close();
  const done = cut as { torn: TornTail; kept: string } | null;
  process.stdout.write(
    done === null
      ? `${shownPath(logDir)}: intact, nothing to repair\n`
      : `${done.torn.message}\ncut back to seq ${records.at(-1)?.seq}; the cut bytes are kept in ${shownPath(done.kept)}\n`,
  );
  return EXIT.ok;
}
