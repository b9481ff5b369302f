// An AURATown episode's scores for a sweep's paired report, from its log: how much the residents
// talked, reflected and had their private state change, per resident-day (so towns of different
// sizes and lengths compare), and the world's incidents per day.
import type { TownConfig } from "../../actors/auratown/config.ts";
import { ticksPerDay } from "../../actors/auratown/town.ts";
import type { LogRecord } from "../../events/record.ts";

export function townMetrics(records: readonly LogRecord[]): Readonly<Record<string, number>> {
  const header = records[0]?.payload as { actors: readonly string[]; config: TownConfig } | undefined;
  if (header === undefined) return {};
  const residents = Math.max(1, header.actors.filter((id) => id.startsWith("agent/")).length);
  const ticks = records.filter((r) => r.type === "tick.committed").length;
  const days = Math.max(1, ticks) / ticksPerDay(header.config.clock);
  const count = (type: string) => records.filter((r) => r.type === type).length;
  const perResidentDay = (n: number) => n / residents / days;
  return {
    conversations: perResidentDay(count("conversation.held")),
    reflections: perResidentDay(count("agent.reflected")),
    privateStateChanges: perResidentDay(count("private_state.changed")),
    incidents: count("world.incident") / days,
  };
}
