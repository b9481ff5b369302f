// `probetown ui`: serves the dashboard over the episodes under a runs folder until interrupted.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../kernel/usageError.ts";
import { shownPath } from "../../views/text.ts";

export async function cmdUi(flags: { runs: string; port: number; host: string }): Promise<number> {
  const runs = resolve(flags.runs);
  if (!existsSync(runs) || !statSync(runs).isDirectory()) throw new UsageError(`--runs ${shownPath(runs)}: no such folder (the episodes the dashboard shows are the episode directories below it)`);
  const { startUi } = await import("../../ui/server.ts");
  const server = await startUi({ runs, port: flags.port, host: flags.host });
  process.stdout.write(`probetown ui: ${server.url} (episodes under ${shownPath(runs)}; read only). Ctrl-C stops it.\n`);
  await new Promise<void>((done) => {
    const stop = (): void => {
      void server.close().then(done);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
