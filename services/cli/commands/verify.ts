// `probetown verify <log>`: the hash chain and every tick's state hash, of one episode (files or
// JetStream) or of every episode in a folder.
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import cliProgress from "cli-progress";
import { verifyEpisode, type VerifyReport } from "../../kernel/verify.ts";
import { treeReportText, verifyTree, type TreeReport } from "../../kernel/verifyTree.ts";
import { progressBar } from "../progress.ts";
import type { NatsFlags } from "../session.ts";

/** A folder that is not itself an episode (no log/, not a log path) but holds episodes below it. */
function isEpisodeTree(path: string): boolean {
  if (!existsSync(path) || !statSync(path).isDirectory() || existsSync(join(path, "log"))) return false;
  return !/[\\/]log[\\/]?$/.test(path);
}

interface VerifyFlags {
  json?: boolean;
  quiet?: boolean;
  snapshots?: boolean;
  chainOnly?: boolean;
  threads?: number;
}

/** A bar of episodes for a folder of them (on a terminal, unless --json or --quiet). */
function treeBar(flags: VerifyFlags): { readonly onProgress: (done: number, total: number) => void; readonly stop: () => void } {
  const bar = !flags.json && !flags.quiet && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: "verify [{bar}] {value}/{total} episodes · {eta_formatted} left", stream: process.stderr, hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
    : null;
  return {
    onProgress: (done, total) => {
      if (done === 1) bar?.start(total, 0);
      bar?.update(done);
    },
    stop: () => bar?.stop(),
  };
}

function printTree(report: TreeReport, flags: VerifyFlags): number {
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(treeReportText(report) + "\n");
  return report.episodes === 0 ? 2 : report.exitCode;
}

async function cmdVerifyTree(root: string, flags: VerifyFlags): Promise<number> {
  const bar = treeBar(flags);
  const report = await verifyTree(resolve(root), {
    snapshots: flags.snapshots === true,
    chainOnly: flags.chainOnly === true,
    ...(flags.threads === undefined ? {} : { threads: flags.threads }),
    onProgress: bar.onProgress,
  }).finally(bar.stop);
  return printTree(report, flags);
}

export async function cmdVerify(log: string, flags: VerifyFlags & NatsFlags): Promise<number> {
  if (flags.nats === undefined && isEpisodeTree(log)) return cmdVerifyTree(log, flags);
  // --chain-only replays no tick: no progress bar to draw.
  const bar = progressBar(!flags.json && !flags.quiet && flags.chainOnly !== true, "verify");
  const options = { onProgress: bar.update, snapshots: flags.snapshots === true, chainOnly: flags.chainOnly === true, ...(flags.threads === undefined ? {} : { threads: flags.threads }) };
  // The NATS client is loaded only for a log in JetStream: a file's verify starts without it.
  const nats = flags.nats;
  let report: VerifyReport;
  if (nats === undefined) report = await verifyEpisode(log, options).finally(bar.stop);
  else {
    // An episode's log, or a world's log objects below a name (a sweep's): those are verified as a folder is.
    const objectsBar = treeBar(flags);
    const found = await import("../distributed.ts").then((m) => m.verifyInNats(log, nats, flags.namespace, { ...options, onTreeProgress: objectsBar.onProgress })).finally(() => {
      bar.stop();
      objectsBar.stop();
    });
    if ("objects" in found) return printTree(found.objects, flags);
    report = found.episode;
  }
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(report.text + "\n");
  return report.exitCode;
}
