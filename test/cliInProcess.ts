// `probetown …` run inside the test's own process: services/cli/main.ts's main(process.argv)
// called, so the real main() (its exit codes, its error lines, its repair hints) with
// process.argv, the working directory and the environment set as a spawned CLI would have them,
// and what it writes to stdout and stderr captured. main.ts and its imports stay loaded between
// calls, which is the point: a spawned CLI paid ~2 s (more on a busy machine) starting Node and
// loading them, for every one of some 450 calls in the tests. main() builds its program afresh
// each call (buildProgram), so nothing of one command's flags reaches the next; main.ts was once
// evaluated afresh for each call too (a new module id), which cost ~20 ms a call, 5× the call
// itself for a quick command (test/cli-fuzz.test.ts makes 2,000 calls), and kept every copy.
//
// Not for what needs a process boundary: signals, kill, a heap or file-size limit, several
// commands running at once (calls are serialised here, as they share the process's stdout).
import { join } from "node:path";

const repoRoot = join(import.meta.dirname, "..");
const CLI = join(repoRoot, "services/cli/main.ts");

export interface CliResult {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** main.ts, loaded by the first call (its EPIPE handlers, added as it is evaluated, are dropped as each call's are). */
let cliModule: Promise<{ main: (argv: string[]) => Promise<void> }> | undefined;
let last: Promise<unknown> = Promise.resolve();

type Write = typeof process.stdout.write;

/**
 * `probetown …` run to completion in this process (no colour), from `cwd` (the repository by
 * default), with `env` over the process's environment (undefined: unset).
 */
export function runCli(args: readonly string[], cwd = repoRoot, env: Readonly<Record<string, string | undefined>> = {}): Promise<CliResult> {
  const run = last.then(() => runOnce(args, cwd, { NO_COLOR: "1", ...env }));
  last = run.catch(() => {});
  return run;
}

async function runOnce(args: readonly string[], cwd: string, env: Readonly<Record<string, string | undefined>>): Promise<CliResult> {
  const saved = {
    argv: process.argv,
    cwd: process.cwd(),
    exitCode: process.exitCode,
    env: Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]])),
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    stdoutTTY: Object.getOwnPropertyDescriptor(process.stdout, "isTTY"),
    stderrTTY: Object.getOwnPropertyDescriptor(process.stderr, "isTTY"),
    listeners: {
      stdout: process.stdout.listeners("error"),
      stderr: process.stderr.listeners("error"),
      SIGINT: process.listeners("SIGINT"),
      SIGTERM: process.listeners("SIGTERM"),
    },
  };
  let out = "";
  let err = "";
  const capture = (append: (s: string) => void): Write =>
    ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), callback?: (e?: Error | null) => void): boolean => {
      append(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8"));
      const done = typeof encoding === "function" ? encoding : callback;
      if (done !== undefined) process.nextTick(done);
      return true;
    }) as Write;
  process.argv = [process.execPath, CLI, ...args];
  process.chdir(cwd);
  process.exitCode = undefined;
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  // As in a spawned CLI, whose stdout and stderr are pipes: no progress bars, no terminal width.
  Object.defineProperty(process.stdout, "isTTY", { value: false, configurable: true, writable: true });
  Object.defineProperty(process.stderr, "isTTY", { value: false, configurable: true, writable: true });
  process.stdout.write = capture((s) => (out += s));
  process.stderr.write = capture((s) => (err += s));
  let code: number | null;
  try {
    // Imported, main.ts does not run itself (it runs only as the entry point): call its main().
    cliModule ??= import(CLI) as Promise<{ main: (argv: string[]) => Promise<void> }>;
    const cli = await cliModule;
    await cli.main(process.argv);
    code = typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    // main() catches what a command throws; what escapes it is what would have killed the process.
    code = 1;
    err += `${(error as Error).stack ?? String(error)}\n`;
  } finally {
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    restoreProperty(process.stdout, "isTTY", saved.stdoutTTY);
    restoreProperty(process.stderr, "isTTY", saved.stderrTTY);
    process.argv = saved.argv;
    process.chdir(saved.cwd);
    process.exitCode = saved.exitCode;
    for (const [k, v] of Object.entries(saved.env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    // main.ts adds an EPIPE handler to stdout and stderr when it is evaluated (the first call).
    dropAdded(process.stdout, "error", saved.listeners.stdout);
    dropAdded(process.stderr, "error", saved.listeners.stderr);
    dropAdded(process, "SIGINT", saved.listeners.SIGINT);
    dropAdded(process, "SIGTERM", saved.listeners.SIGTERM);
  }
  return { code, out, err };
}

function restoreProperty(target: object, key: string, descriptor: PropertyDescriptor | undefined): void {
  if (descriptor === undefined) delete (target as Record<string, unknown>)[key];
  else Object.defineProperty(target, key, descriptor);
}

function dropAdded(emitter: NodeJS.EventEmitter, event: string, before: readonly unknown[]): void {
  for (const listener of emitter.listeners(event)) if (!before.includes(listener)) emitter.off(event, listener as (...a: unknown[]) => void);
}

/** runCli's result under spawnSync's names (status, stdout, stderr), for tests that read them so. */
export async function runCliAsSpawned(args: readonly string[], cwd = repoRoot, env: Readonly<Record<string, string | undefined>> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args, cwd, env);
  return { status: r.code, stdout: r.out, stderr: r.err };
}
