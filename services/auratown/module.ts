// AURATown as a world module: the town (actors/auratown/), its summaries, timeline and metrics,
// `--agents`, and the heap and disk a town run needs, checked before it starts.
import type { TownConfig } from "../../actors/auratown/config.ts";
import { auratownWorld } from "../../actors/auratown/world.ts";
import { UsageError } from "../kernel/usageError.ts";
import type { LiveSummary, WorldModule } from "../kernel/worldModule.ts";
import { townInspection } from "./inspect.ts";
import { checkTownRunDisk, checkTownRunFits } from "./limits.ts";
import { townMetrics } from "./metrics.ts";
import { townUi } from "./ui/townView.ts";
import { collectRow, DETAILED_TOWN_ACTORS, renderRecordSummary, renderSummary, summarize, type TickRow } from "./views.ts";

/** The named residents every town has (`--agents` adds generated ones). */
const RESIDENTS = auratownWorld.defaultConfig.agents.length;

function withAgents(config: unknown, agents: number, configFile: string | undefined): unknown {
  if (agents < RESIDENTS) throw new UsageError(`--agents: the town has ${RESIDENTS} residents; expected ${RESIDENTS} or more, got ${agents}`);
  // As --ticks with --days: two sizes, one of them silently dropped (--agents won).
  const extra = (config as { extraAgents?: unknown } | undefined)?.extraAgents;
  if (extra !== undefined && extra !== agents - RESIDENTS) {
    throw new UsageError(`--agents ${agents} and --config ${configFile}: "extraAgents": ${JSON.stringify(extra)} both say how large the town is (${agents} residents, or ${RESIDENTS} + ${JSON.stringify(extra)}): give one of them`);
  }
  return { ...(config as object | undefined), extraAgents: agents - RESIDENTS };
}

/** A small town's rows, collected tick by tick from its actors' states while it runs. */
function liveSummary(): LiveSummary {
  const rows: TickRow[] = [];
  return {
    onTick: (result, host) => void (host.ids.length <= DETAILED_TOWN_ACTORS && host.ids.includes("env/auratown") && rows.push(collectRow(result.tick, host))),
    text: (records) => (rows.length === 0 ? null : renderSummary(summarize(records, rows))),
    json: (records) => (rows.length === 0 ? null : summarize(records, rows)),
  };
}

const auratown: WorldModule<TownConfig> = {
  definition: auratownWorld,
  summaries: { fromLog: ({ records, actors }) => renderRecordSummary(records, actors), live: liveSummary },
  inspect: townInspection,
  newEpisode: {
    withAgents,
    checkHeap: (config, ticks, flags) => checkTownRunFits(config, ticks, { town: flags.size, ...(flags.length === undefined ? {} : { length: flags.length }) }),
    checkDisk: (config, ticks, flags, disk) => checkTownRunDisk(config, ticks, { town: flags.size, ...(flags.length === undefined ? {} : { length: flags.length }) }, disk),
  },
  metrics: townMetrics,
  ui: townUi,
};

export default auratown;
