// `probetown ui`: serves the dashboard over the episodes under a runs folder until interrupted.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../kernel/usageError.ts";
import { shownPath } from "../../views/text.ts";
import { shownNatsUrl } from "../../../infra/natsSettings.ts";

export async function cmdUi(flags: { runs: string; port: number; host: string; nats?: string; namespace: string; jaeger?: string }): Promise<number> {
  const runs = resolve(flags.runs);
  if (!existsSync(runs) || !statSync(runs).isDirectory()) throw new UsageError(`--runs ${shownPath(runs)}: no such folder (the episodes the dashboard shows are the episode directories below it)`);
  const { startUi } = await import("../../ui/server.ts");
  // The server checks --jaeger (services/ui/jaeger.ts) before it listens: a usage error, exit 2.
  const server = await startUi({ runs, port: flags.port, host: flags.host, ...(flags.nats === undefined ? {} : { nats: { url: flags.nats, namespace: flags.namespace } }), ...(flags.jaeger === undefined ? {} : { jaeger: flags.jaeger }) });
  const also = flags.nats === undefined ? "" : ` and in JetStream namespace ${flags.namespace} at ${shownNatsUrl(flags.nats)}`;
  process.stdout.write(`probetown ui: ${server.url} (episodes under ${shownPath(runs)}${also}; read only). Ctrl-C stops it.\n`);
  await new Promise<void>((done) => {
    const stop = (): void => {
      void server.close().then(done);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
