// `probetown diff <a> <b>`: what differs between two episodes of one world, read from their logs
// (services/kernel/episodeDiff.ts): files by default, JetStream with --nats.
import { distributedBackend } from "../../infra/natsBackend.ts";
import { jetStreamWhere, withNats } from "../distributed/episodes.ts";
import { diffEpisodes, diffText, type EpisodeDiff } from "../kernel/episodeDiff.ts";
import { peekInNats } from "./distributed.ts";

export interface DiffFlags {
  readonly json?: boolean;
  readonly exitCode?: boolean;
  readonly nats?: string;
  readonly namespace: string;
}

export async function cmdDiff(a: string, b: string, flags: DiffFlags): Promise<number> {
  const nats = flags.nats;
  const diff: EpisodeDiff =
    nats === undefined
      ? await diffEpisodes(a, b)
      : await withNats(nats, "diff", async (nc) => {
          // An unknown id is named with what the namespace holds, before anything is read.
          await peekInNats(nc, nats, flags.namespace, a);
          await peekInNats(nc, nats, flags.namespace, b);
          return diffEpisodes(a, b, distributedBackend(nc, flags.namespace), jetStreamWhere(flags.namespace));
        });
  process.stdout.write(flags.json ? `${JSON.stringify(diff, null, 2)}\n` : `${diffText(diff)}\n`);
  // Like `git diff --exit-code`: 1 when they differ (or have no tick in common to compare).
  return flags.exitCode && !diff.identical ? 1 : 0;
}
