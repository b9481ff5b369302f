// Tiny episodes for the dashboard's tests: a 2-tick town, a fork of it under another condition, and
// a copy of the town with one line rewritten (damaged), in a runs folder beside a file that must
// never be served.
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forkEpisode, runEpisode } from "../services/kernel/episodes.ts";
import { makeLlmGateway } from "../services/llm/index.ts";
import { fakeServer } from "./fakeLlmServer.ts";
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

/** The model the household episode with model calls asks for. */
export const FIXTURE_MODEL = "fake-agent";

/**
 * A household episode whose agents ask a model (the fake OpenAI-compatible server, answering each
 * agent "wait" with 100 prompt and 20 completion tokens): an episode with model calls in the list.
 */
export async function modelCallsEpisode(dir: string): Promise<void> {
  const server = await fakeServer(() => ({ content: JSON.stringify({ thought: "t", action: "Wait[]" }) }));
  try {
    const gateway = makeLlmGateway({ baseURL: server.url, apiKey: null, models: { agent: FIXTURE_MODEL }, backoffMs: 5, timeoutMs: 3000, maxAttempts: 2 });
    await runEpisode({ world: "household", seed: 1, condition: "llm", ticks: 3, config: { task: "tea-for-two", llm: { agent: FIXTURE_MODEL } }, dir, trace: { exporter: "none" }, fsync: "never", llm: gateway.responder });
  } finally {
    await server.close();
  }
}
