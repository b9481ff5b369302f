import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { runEpisode } from "../services/kernel/episodes.ts";
import { collectRow, staleRuns, summarize, type TickRow } from "../services/auratown/views.ts";
import { logRecords, tempDir } from "./helpers.ts";

describe("one default AURATown day, seed 42", async () => {
  const rows: TickRow[] = [];
  const result = await runEpisode({
    world: "auratown",
    seed: 42,
    dir: join(tempDir("day"), "ep"),
    trace: { exporter: "none" },
    observer: { onTick: (r, host) => rows.push(collectRow(r.tick, host)) },
  });
  const records = logRecords(result.dir);
  const summary = summarize(records, rows);

  it("runs 06:00 to 22:30 in 34 ticks", () => {
    expect(rows).toHaveLength(34);
    expect(rows[0]!.clock).toEqual({ day: 1, hour: 6, minute: 0 });
    expect(rows[33]!.clock).toEqual({ day: 1, hour: 22, minute: 30 });
  });

  it("fires every one of the seven private-state rules", () => {
    for (const rule of ["sleep", "workplace_loaded", "deep_focus", "workplace_empty", "relaxed", "recent_stress", "default"]) {
      expect(summary.ruleTicks[rule] ?? 0, rule).toBeGreaterThan(0);
    }
    const changes = records.filter((r) => r.type === "private_state.changed").map((r) => (r.payload as { rule: string }).rule);
    expect(new Set(changes).size).toBe(7);
  });

  it("holds at least three conversations, only at non-home places and respecting the cooldown", () => {
    const talks = records.filter((r) => r.type === "conversation.held");
    expect(talks.length).toBeGreaterThanOrEqual(3);
    const last = new Map<string, number>();
    for (const t of talks) {
      const p = t.payload as { participants: string[]; location: string };
      expect(p.location).not.toMatch(/Home$/);
      for (const who of p.participants) {
        const before = last.get(who);
        if (before !== undefined) expect(t.tick - before).toBeGreaterThanOrEqual(2);
        last.set(who, t.tick);
      }
    }
  });

  it("leaves at least one belief stale for several ticks", () => {
    const runs = staleRuns(rows);
    expect(runs.length).toBeGreaterThan(0);
    expect(runs[0]!.to - runs[0]!.from + 1).toBeGreaterThanOrEqual(4);
  });

  it("sends everyone to the places their routine names (no keyword misrouting)", () => {
    const wangJun = summary.itineraries["Wang Jun"]!.map((s) => s.place);
    expect(wangJun).toContain("Temple");
    // The release sent him to the library at breakfast ("read the news" → library keyword).
    const at8 = rows.find((r) => r.clock.hour === 8 && r.clock.minute === 0)!;
    expect(at8.agents.find((a) => a.id === "agent/wang-jun")!.location).toBe("Wang Jun's Home");
    const linWeiEvening = rows.filter((r) => r.clock.hour >= 20).map((r) => r.agents.find((a) => a.id === "agent/lin-wei")!.location);
    expect(new Set(linWeiEvening)).toEqual(new Set(["Lin Wei's Home"]));
  });
});
