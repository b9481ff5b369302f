// `npm run fidelity:envprobe-model-record -- --log <dir> --name <name> --label <text> --model <name>
//   --size <text> --measured <date> --command <text> [--commit <sha>] [--load <text>] [--note <text>]…`:
// writes data/envprobe/model-runs/<name>.json from a `sweep envprobe … --llm … --log <dir>` folder,
// for the EnvProbe model rows of docs/fidelity.md (modelRuns.ts).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../kernel/usageError.ts";
import { loadWorlds } from "../worlds.ts";
import { ENVPROBE_MODEL_RUNS, envprobeModelRunRecord } from "./modelRuns.ts";

/** The checkout's commit, short. */
function headCommit(): string {
  return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: import.meta.dirname, encoding: "utf8" }).trim();
}

function main(args: readonly string[]): void {
  const optional = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const one = (flag: string): string => {
    const v = optional(flag);
    if (v === undefined) throw new UsageError(`${flag} <value> is required`);
    return v;
  };
  const notes = args.flatMap((a, i) => (a === "--note" && args[i + 1] !== undefined ? [args[i + 1]!] : []));
  const name = one("--name");
  if (!/^[a-z0-9-]+$/.test(name)) throw new UsageError(`--name: '${name}' should be lower-case letters, digits and dashes (it names the file)`);
  const load = optional("--load");
  const record = envprobeModelRunRecord(one("--log"), { label: one("--label"), model: one("--model"), size: one("--size"), measured: one("--measured"), command: one("--command"), commit: optional("--commit") ?? headCommit(), ...(load === undefined ? {} : { load }), notes });
  mkdirSync(ENVPROBE_MODEL_RUNS, { recursive: true });
  const file = join(ENVPROBE_MODEL_RUNS, `${name}.json`);
  writeFileSync(file, JSON.stringify(record, null, 1) + "\n");
  const l = record.llm;
  process.stdout.write(`${file}: ${l.requested} model calls (${l.validFirst} valid, ${l.repaired} repaired, ${l.failed} failed), ${record.cells.length} cell(s)\n`);
}

try {
  // The logs hold the worlds' own event types: register them before reading.
  await loadWorlds();
  main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`fidelity:envprobe-model-record: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  throw e;
}
