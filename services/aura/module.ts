// aura-scene as a world module: a hand-written or snapshot scene where the AURA controller (or a
// baseline) answers queries by probing its residents; its roles can run on models.
import { auraSceneWorld, type SceneConfig } from "../../actors/aura/world.ts";
import type { WorldModule } from "../kernel/worldModule.ts";
import { renderSceneSummary } from "../views/records.ts";
import { probeInspectorUi } from "./ui/probeInspector.ts";

const auraScene: WorldModule<SceneConfig> = {
  definition: auraSceneWorld,
  models: {
    roles: ["intent", "planner", "answer"],
    // The paper's LLM judges (`eval --judge llm`, an experiment's judges).
    otherRoles: ["judge"],
    withModels: (config, models) => ({ ...(config as object | undefined), llm: { intent: models.intent ?? null, planner: models.planner ?? null, answer: models.answer ?? null } }),
  },
  summaries: { callsModels: true, fromLog: ({ records }) => renderSceneSummary(records) },
  ui: probeInspectorUi,
};

export default auraScene;
