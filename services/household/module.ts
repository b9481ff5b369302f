// The household world as a module: its definition (actors/household/), a summary of who achieved
// what, and the per-episode scores a sweep compares across conditions.
import type { HouseholdConfig } from "../../actors/household/world.ts";
import { householdWorld } from "../../actors/household/world.ts";
import type { WorldModule } from "../kernel/worldModule.ts";
import { householdInspection } from "./inspect.ts";
import { householdMetrics } from "./metrics.ts";
import { householdRunFlags } from "./runFlags.ts";
import { householdSummary } from "./summary.ts";
import { householdUi } from "./ui/householdView.ts";

const household: WorldModule<HouseholdConfig> = {
  definition: householdWorld,
  models: {
    roles: ["agent"],
    // The model goes into the config (the header, so replay knows it); it drives the agents under
    // condition `llm` only: the scripted conditions' logs are exactly as before.
    withModels: (config, models) => (models.agent === undefined || models.agent === null ? null : { ...(config as object | undefined), llm: { agent: models.agent } }),
  },
  summaries: { fromLog: ({ records }) => householdSummary(records) },
  metrics: householdMetrics,
  inspect: householdInspection,
  newEpisode: { withRunFlags: householdRunFlags },
  ui: householdUi,
};

export default household;
