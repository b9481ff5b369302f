// An embedded sweep run again over its --log says which episodes were already finished and rates
// only the ones run now, as a sweep over NATS does (it said "6 ok in 0.0 s (135 episodes/s)" and
// alreadyFinished 0 for a sweep that ran nothing).
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers.ts";

describe("embedded sweep run again", () => {
  it("counts the episodes already finished and rates the rest", async () => {
    const cwd = tempDir("sweep-rerun");
    const args = (seeds: string) => ["sweep", "auratown", "--seeds", seeds, "--conditions", "baseline,no-conversation", "--ticks", "3", "--log", "sw"];
    const first = await runCli([...args("1-2"), "-q"], cwd);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(/^4 episodes: 4 ok, 0 failed in [\d.]+ s \([\d.]+ episodes\/s\)\n$/);
    const again = await runCli([...args("1-2"), "-q"], cwd);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/^4 episodes: 4 ok, 0 failed in [\d.]+ s \(all 4 already finished; none ran now\)\n$/);
    const more = await runCli([...args("1-3"), "--json"], cwd);
    expect(more.code, more.err).toBe(0);
    const report = JSON.parse(more.out) as { episodes: number; alreadyFinished: number; outcomes: { records: number }[] };
    expect(report).toMatchObject({ episodes: 6, alreadyFinished: 4 });
    expect(report.outcomes.filter((o) => o.records > 0)).toHaveLength(2);
    const text = await runCli([...args("1-4"), "-q"], cwd);
    expect(text.out).toMatch(/^8 episodes: 8 ok, 0 failed in [\d.]+ s \(6 already finished; 2 ran now: [\d.]+ episodes\/s\)\n$/);
  });
});
