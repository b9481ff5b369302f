import { expect } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { segmentFiles } from "../infra/fileEventStore.ts";
import { decodeCompactText, isCompactHeader } from "../events/compactLog.ts";

export const tempDir = (label: string): string => mkdtempSync(join(tmpdir(), `probetown-${label}-`));

export function logLines(episodeDir: string): string[] {
  return segmentFiles(join(episodeDir, "log")).flatMap((f) => readFileSync(f, "utf8").split("\n").filter((l) => l.length > 0));
}

/** A log's records as written: a compact log (format 2) decoded, its chain checked; a version-1 log's lines parsed. */
export function logRecords(episodeDir: string): LogRecord[] {
  const files = segmentFiles(join(episodeDir, "log"));
  if (files.length === 1) {
    const text = readFileSync(files[0]!, "utf8");
    const first = text.slice(0, Math.max(0, text.indexOf("\n")));
    if (first.includes('"meta":{"log":2,') && isCompactHeader(JSON.parse(first) as LogRecord)) return decodeCompactText(text, true);
  }
  return logLines(episodeDir).map((l) => JSON.parse(l) as LogRecord);
}

export const withoutMetaLine = (r: LogRecord) => {
  const { meta: _m, ...rest } = r;
  return rest;
};

export const firstSegment = (episodeDir: string): string => segmentFiles(join(episodeDir, "log"))[0]!;

export const repoRoot = join(import.meta.dirname, "..");
export const CLI = join(repoRoot, "services/cli/main.ts");

/**
 * `probetown …` run to completion in a process of its own (no colour), from `cwd` (the repository
 * by default): for what needs the process boundary (its heap limit, its user). Everything else runs
 * in this process with `runCli` (test/cliInProcess.ts), without ~2 s of Node start-up per call.
 */
export function spawnCli(args: string[], cwd = repoRoot, env: Readonly<Record<string, string>> = {}): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

export { runCli, runCliAsSpawned, type CliResult } from "./cliInProcess.ts";

export interface CliProcess {
  readonly child: ChildProcess;
  readonly done: Promise<{ code: number | null; out: string; err: string }>;
}

/** `probetown …` started in the background (workers, actor hosts), its output collected. */
export function startCli(args: string[], env: Readonly<Record<string, string>> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: "1", ...env } });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  // "close", not "exit": once stdout and stderr are read to their end. At "exit" the last of them
  // may still be on its way (a command's error message, on a loaded machine: an empty stderr).
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.once("close", (code) => resolve({ code, out, err })));
  return { child, done };
}

/**
 * Waits for a sweep and stops its workers; fails with the sweep's and workers' output unless it
 * exited 0 with every seed's AURATown episode finished once. Resolves with the sweep's JSON report.
 */
export async function sweepFinished<Report extends { ok: number; outcomes: readonly { id: string }[] }>(sweep: CliProcess, workers: readonly CliProcess[], seeds: readonly number[]): Promise<Report> {
  const s = await sweep.done;
  for (const w of workers) w.child.kill("SIGTERM");
  const ws = await Promise.all(workers.map((w) => w.done));
  if (s.code !== 0) console.error("SWEEP", s.out.slice(0, 4000), s.err.slice(0, 2000), ws.map((w) => w.err.slice(0, 3000)));
  expect(s.code).toBe(0);
  const report = JSON.parse(s.out) as Report;
  expect(report.outcomes.map((o) => o.id).sort()).toEqual(seeds.map((x) => `auratown-s${x}-baseline`));
  expect(report.ok).toBe(seeds.length);
  return report;
}

/**
 * Resolves once `check` holds, looking every 20 ms; fails naming `what` after `ms`. For what a test
 * waits to see happen (a fixed sleep guessed how long it takes, which a loaded machine overran).
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves once `check` holds, looked at while `processes` are frozen (SIGSTOP), and leaves them
 * frozen then (SIGCONT lets them go on): the test acts on what it saw before they can go past it
 * (a worker that finished its episode between the look and the kill failed a test held up on a
 * loaded machine). Fails naming `what` after `ms`.
 */
export async function frozenWhen(processes: readonly ChildProcess[], check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const p of processes) p.kill("SIGSTOP");
    for (const p of processes) await stopped(p.pid!);
    let seen: boolean;
    try {
      seen = await check();
    } catch (error) {
      for (const p of processes) p.kill("SIGCONT"); // not left stopped for ever by a failed test
      throw error;
    }
    if (seen) return;
    for (const p of processes) p.kill("SIGCONT");
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Resolves once process `pid`, sent SIGSTOP, has stopped (or has gone). kill() only sends the
 * signal: a process running on the other core goes on for a moment, and a server "paused" that way
 * still answered a request sent right after (a drain that was to hang on it finished in 3 ms).
 * Linux says so in /proc/<pid>/stat; elsewhere this waits 50 ms.
 */
export async function stopped(pid: number): Promise<void> {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync("/proc/self/stat")) return new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < 1000; i++) {
    let state: string | undefined;
    try {
      const text = readFileSync(stat, "utf8");
      state = text.slice(text.lastIndexOf(")") + 2, text.lastIndexOf(")") + 3);
    } catch {
      return; // gone
    }
    if (state === "T" || state === "t" || state === "Z" || state === "X") return;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`process ${pid} did not stop on SIGSTOP`);
}
