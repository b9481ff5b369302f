// Sealing a batch of drafts onto a log's hash chain, shared by the file and JetStream stores. Apart
// from eventStore.ts, whose errors the command line reads at start: this needs the event catalogue.
import { versionOf } from "../events/catalogue.ts";
import { seal, type Draft, type LogRecord } from "../events/record.ts";
import type { AppendOptions } from "./eventStore.ts";

/**
 * Seals drafts onto a chain that ends at (`lastSeq`, `lastHash`): each record, its line handed to
 * `line` in order, and the chain's new head. Every store seals this way; only where lines go differs.
 */
export function sealDrafts(episode: string, lastSeq: number, lastHash: string, drafts: readonly Draft[], options: AppendOptions, line: (text: string) => void): { sealed: LogRecord[]; hash: string } {
  const sealed: LogRecord[] = new Array(drafts.length);
  let seq = lastSeq;
  let hash = lastHash;
  for (let i = 0; i < drafts.length; i++) {
    const draft = drafts[i]!;
    seq++;
    const next = seal(hash, episode, seq, draft, draft.v ?? versionOf(draft.type), options.meta?.(draft, i));
    hash = next.record.hash;
    sealed[i] = next.record;
    line(next.line);
  }
  return { sealed, hash };
}
