// Finished logs kept as JetStream objects (infra/jetStreamLogObjects.ts), by name: an object named
// `<name>/<path>` is the whole log of the episode a folder `<path>` below `<name>` would hold (a
// world's sweep over NATS keeps them so: see its docs). `verify --nats <url> <name>` verifies every
// object below a name (each one written to a temporary folder as its file, then the folder verified
// as `verify <folder>` does, in full, on every core); `export-logs` writes them out as files.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { LogObjects } from "../../infra/jetStreamLogObjects.ts";
import { FIRST_SEGMENT } from "../../infra/fileEventStore.ts";
import { shownNatsUrl } from "../../infra/nats.ts";
import { messageOf } from "../../events/errorMessage.ts";
import { verifyTree, treeReportText, type TreeEntry, type TreeReport } from "../kernel/verifyTree.ts";
import { UsageError } from "../kernel/usageError.ts";
import { withNats } from "../distributed/episodes.ts";
import { checkOutDir } from "./outputs.ts";

/** A path segment an object name may have (what kvKey leaves, without `.` and `..`). */
const SEGMENT = /^[-_=.A-Za-z0-9]+$/;
const isPathName = (name: string): boolean => name.split("/").every((s) => SEGMENT.test(s) && s !== "." && s !== "..");

/** The objects below `name` in the namespace's bucket; null when there is no bucket or no such object. */
export async function logObjectsUnder(nc: NatsConnection, namespace: string, name: string): Promise<{ readonly objects: LogObjects; readonly names: readonly string[] } | null> {
  const objects = await LogObjects.open(nc, namespace, false);
  if (objects === null) return null;
  const names = await objects.names(name);
  return names.length === 0 ? null : { objects, names };
}

/** An object that could not be written out as a log file: its name, and why. */
interface Unwritten {
  readonly name: string;
  readonly problem: string;
}

/**
 * Writes each object below `name` as `<root>/<its name, less the first `strip` segments>/log/000000000000.jsonl`
 * (all read in one pass: LogObjects.readAll); says those it could not write: unreadable as stored,
 * or a name that is no path.
 */
async function writeOut(objects: LogObjects, name: string, root: string, strip: number): Promise<Unwritten[]> {
  const problems: Unwritten[] = [];
  await objects.readAll(name, (object, text, error) => {
    if (!isPathName(object)) problems.push({ name: object, problem: "its name is not a folder path (segments of letters, digits, -_=. only), so it is no episode's log" });
    else if (text === null) problems.push({ name: object, problem: messageOf(error) });
    else {
      const dir = join(root, ...object.split("/").slice(strip));
      mkdirSync(join(dir, "log"), { recursive: true });
      writeFileSync(join(dir, "log", FIRST_SEGMENT), text);
    }
  });
  return problems.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Verifies every log object below `name` (see above): a TreeReport naming each episode as
 * `jetstream:<namespace>/<object>`, damaged objects (a broken chain, bytes that do not read back as
 * stored) exit 3. Null when the namespace holds no object below `name`.
 */
export async function verifyLogObjects(nc: NatsConnection, namespace: string, name: string, options: { readonly threads?: number; readonly chainOnly?: boolean; readonly onProgress?: (done: number, total: number) => void }): Promise<TreeReport | null> {
  const found = await logObjectsUnder(nc, namespace, name);
  if (found === null) return null;
  const started = performance.now();
  const root = mkdtempSync(join(tmpdir(), "probetown-log-objects-"));
  try {
    const problems = await writeOut(found.objects, name, root, 0);
    const written = found.names.length - problems.length;
    const tree = written === 0 ? null : await verifyTree(root, { chainOnly: options.chainOnly === true, ...(options.threads === undefined ? {} : { threads: options.threads }), ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }) });
    // Named as the objects, not the temporary files they were verified as.
    const where = `jetstream:${namespace}/`;
    const renamed = (text: string) => text.split(`${root}/`).join(where).split(root).join(where.slice(0, -1));
    const report = tree === null ? null : (JSON.parse(renamed(JSON.stringify(tree))) as TreeReport);
    const damaged: TreeEntry[] = problems.map((p) => ({ dir: `${where}${p.name}`, exitCode: 3, problem: `DAMAGED: ${p.problem}`, unfinished: null, notStarted: null, records: 0 }));
    const failures = [...(report?.failures ?? []), ...damaged].sort((a, b) => (a.dir < b.dir ? -1 : 1));
    return {
      root: `${where}${name}`,
      episodes: found.names.length,
      ok: report?.ok ?? 0,
      diverged: report?.diverged ?? 0,
      damaged: (report?.damaged ?? 0) + damaged.length,
      errors: report?.errors ?? 0,
      records: report?.records ?? 0,
      seconds: (performance.now() - started) / 1000,
      failures,
      unfinished: report?.unfinished ?? [],
      notStarted: report?.notStarted ?? [],
      exitCode: damaged.length > 0 && (report?.exitCode ?? 0) < 3 ? 3 : (report?.exitCode ?? 3),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The not-found message's part for log objects: what names the namespace's bucket has at its top. */
export async function logObjectNamesHeld(nc: NatsConnection, namespace: string): Promise<string | null> {
  const objects = await LogObjects.open(nc, namespace, false);
  if (objects === null) return null;
  const tops = [...new Set((await objects.names()).map((n) => n.split("/")[0]!))];
  return tops.length === 0 ? null : tops.slice(0, 8).join(", ") + (tops.length > 8 ? ", …" : "");
}

export interface ExportLogsFlags {
  readonly nats: string;
  readonly namespace: string;
  readonly out: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

/**
 * `probetown export-logs <name> --nats <url> --out <dir>`: every log object below `name`, written as
 * files: the object `<top>/<path>` to `<dir>/<path>/log/000000000000.jsonl`, the folder a run into
 * `--log <dir>` would have made (so `verify <dir>` and a world's reports read it). `--out` must be
 * new or empty. An object that cannot be read back as stored is named, and the export exits 3.
 */
export async function cmdExportLogs(name: string, flags: ExportLogsFlags): Promise<number> {
  const out = resolve(flags.out);
  checkOutDir(out, `--out ${flags.out}`, "the logs");
  if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${flags.out}: not empty; export-logs writes into a new or empty directory`);
  return withNats(flags.nats, { role: "export-logs", quiet: flags.quiet }, async (nc) => {
    const found = await logObjectsUnder(nc, flags.namespace, name);
    if (found === null) {
      const held = await logObjectNamesHeld(nc, flags.namespace);
      throw new UsageError(`no log objects below '${name}' in namespace ${flags.namespace} at ${shownNatsUrl(flags.nats)}: ${held === null ? "the namespace keeps none (check --namespace)" : `it keeps logs below ${held}`}`);
    }
    const started = performance.now();
    const problems = await writeOut(found.objects, name, out, 1);
    const written = found.names.length - problems.length;
    const seconds = (performance.now() - started) / 1000;
    if (flags.json) process.stdout.write(JSON.stringify({ name, namespace: flags.namespace, out, objects: found.names.length, written, unreadable: problems, seconds }, null, 2) + "\n");
    else {
      process.stdout.write(`${written} of ${found.names.length} logs below ${name} written to ${flags.out} in ${seconds.toFixed(1)} s${written > 0 ? ` (\`probetown verify ${flags.out}\` checks them)` : ""}\n`);
      for (const p of problems) process.stdout.write(`  not written: ${p.name}: ${p.problem}\n`);
    }
    return problems.length > 0 ? 3 : 0;
  });
}

export { treeReportText };
