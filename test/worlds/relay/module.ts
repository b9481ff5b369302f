// The relay world as a module: its definition, a summary and its metrics.
import type { LogRecord } from "../../../events/record.ts";
import type { WorldModule } from "../../../services/kernel/worldModule.ts";
import { relayWorld, type RelayConfig } from "./world.ts";

/** The tally's total at the end, and the mean value a counter relayed. */
export function metrics(records: readonly LogRecord[]): Readonly<Record<string, number>> {
  const counted = records.filter((r) => r.type === "relay.counted").map((r) => (r.payload as { value: number }).value);
  return { total: counted.reduce((a, b) => a + b, 0), meanRelayed: counted.length === 0 ? 0 : counted.reduce((a, b) => a + b, 0) / counted.length };
}

const relay: WorldModule<RelayConfig> = {
  definition: relayWorld,
  summaries: { fromLog: ({ records }) => `relay: tally total ${metrics(records).total} over ${records.filter((r) => r.type === "relay.counted").length} relays` },
  metrics,
};

export default relay;
