// Tiny episodes for the dashboard's tests: a 2-tick town, a fork of it under another condition, and
// a copy of the town with one line rewritten (damaged), in a runs folder beside a file that must
// never be served.
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { firstSegment, tempDir } from "./helpers.ts";

export interface UiFixture {
  readonly root: string;
  readonly runs: string;
  readonly secret: string;
}

export const SECRET_TEXT = "not-for-the-dashboard";

export async function uiFixture(): Promise<UiFixture> {
  const root = tempDir("ui");
  const runs = join(root, "runs");
  mkdirSync(runs);
  const secret = join(root, "secret.txt");
  writeFileSync(secret, SECRET_TEXT);
  const town = join(runs, "town");
  await runEpisode({ world: "auratown", seed: 3, ticks: 2, dir: town, trace: { exporter: "none" }, fsync: "never" });
  await forkEpisode({ parent: town, atTick: 0, condition: "no-reflection", dir: join(runs, "forks", "town-no-reflection"), trace: { exporter: "none" }, fsync: "never" });
  const broken = join(runs, "broken");
  cpSync(town, broken, { recursive: true });
  // Line 5 respaced: its record's hash still holds, but it is not the line its store wrote.
  const segment = firstSegment(broken);
  const lines = readFileSync(segment, "utf8").split("\n");
  lines[4] = lines[4]!.replace('"tick":', '"tick" :');
  writeFileSync(segment, lines.join("\n"));
  return { root, runs, secret };
}

/** Every file under `dir` with its bytes, to show a server changed none. */
export function filesUnder(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) found.set(name, readFileSync(path, "base64"));
  }
  return found;
}
