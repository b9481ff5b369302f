// `npm run fidelity:model-record -- --eval-json <file> --runs <dir> --name <name> --label <text>
//   --model <name> --size <text> --measured <date> --command <text> [--commit <sha>] [--load <text>]
//   [--split <file>] [--note <text>]…`: writes
// data/aura/model-runs/<name>.json from an `eval implicit … --llm … --json` output and its logs,
// for the model rows of docs/fidelity.md (modelRuns.ts). `--split`: the eval ran a subset file cut
// from this split (some of its queries): the record names the split and the queries that ran, so
// the deterministic columns are the split's figures on those queries.
import { execFileSync } from "node:child_process";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { MODEL_RUNS, modelRunRecord } from "./modelRuns.ts";
import { UsageError } from "../kernel/usageError.ts";
import { loadWorlds } from "../worlds.ts";

/** The checkout's commit, short (the run's, when recorded from the tree it ran in). */
function headCommit(): string {
  return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: import.meta.dirname, encoding: "utf8" }).trim();
}

function main(args: readonly string[]): void {
  const one = (flag: string): string => {
    const i = args.indexOf(flag);
    const v = i < 0 ? undefined : args[i + 1];
    if (v === undefined) throw new UsageError(`${flag} <value> is required`);
    return v;
  };
  const optional = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const notes = args.flatMap((a, i) => (a === "--note" && args[i + 1] !== undefined ? [args[i + 1]!] : []));
  const name = one("--name");
  if (!/^[a-z0-9-]+$/.test(name)) throw new UsageError(`--name: '${name}' should be lower-case letters, digits and dashes (it names the file)`);
  const record = modelRunRecord(one("--eval-json"), one("--runs"), { label: one("--label"), model: one("--model"), size: one("--size"), measured: one("--measured"), command: one("--command"), commit: optional("--commit") ?? headCommit(), ...((load) => (load === undefined ? {} : { load }))(optional("--load")), notes }, optional("--split"));
  mkdirSync(MODEL_RUNS, { recursive: true });
  const file = join(MODEL_RUNS, `${name}.json`);
  writeFileSync(file, JSON.stringify(record, null, 1) + "\n");
  process.stdout.write(`${file}: ${record.llm.requested} model calls (${record.llm.validFirst} valid, ${record.llm.repaired} repaired, ${record.llm.failed} failed)\n`);
}

try {
  // The logs hold the worlds' own event types: register them before reading.
  await loadWorlds();
  main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`fidelity:model-record: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  throw e;
}
