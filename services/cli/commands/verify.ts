// `probetown verify <log>`: the hash chain and every tick's state hash, of one episode (files or
// JetStream) or of every episode in a folder.
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import cliProgress from "cli-progress";
import { verifyEpisode } from "../../kernel/verify.ts";
import { treeReportText, verifyTree } from "../../kernel/verifyTree.ts";
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

async function cmdVerifyTree(root: string, flags: VerifyFlags): Promise<number> {
  const bar = !flags.json && !flags.quiet && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: "verify [{bar}] {value}/{total} episodes · {eta_formatted} left", stream: process.stderr, hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
    : null;
  const report = await verifyTree(resolve(root), {
    snapshots: flags.snapshots === true,
    chainOnly: flags.chainOnly === true,
    ...(flags.threads === undefined ? {} : { threads: flags.threads }),
    onProgress: (done, total) => {
      if (done === 1) bar?.start(total, 0);
      bar?.update(done);
    },
  });
  bar?.stop();
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(treeReportText(report) + "\n");
  return report.episodes === 0 ? 2 : report.exitCode;
}

export async function cmdVerify(log: string, flags: VerifyFlags & NatsFlags): Promise<number> {
  if (flags.nats === undefined && isEpisodeTree(log)) return cmdVerifyTree(log, flags);
  // --chain-only replays no tick: no progress bar to draw.
  const bar = progressBar(!flags.json && !flags.quiet && flags.chainOnly !== true, "verify");
  const options = { onProgress: bar.update, snapshots: flags.snapshots === true, chainOnly: flags.chainOnly === true, ...(flags.threads === undefined ? {} : { threads: flags.threads }) };
  // The NATS client is loaded only for a log in JetStream: a file's verify starts without it.
  const nats = flags.nats;
  const report = await (nats === undefined ? verifyEpisode(log, options) : import("../distributed.ts").then((m) => m.verifyFromNats(log, nats, flags.namespace, options))).finally(bar.stop);
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  else process.stdout.write(report.text + "\n");
  return report.exitCode;
}
