// How much of its transcript the LLM household agent's prompt carries. Kept apart from llm.ts so the
// command line can name the bounds without loading the model-call code (and Effect) at start-up.

/** The turns of its transcript an LLM agent's prompt carries when the config does not say (`history`). */
export const DEFAULT_HISTORY_TURNS = 8;
/** The most turns of transcript a config may ask for. */
export const MAX_HISTORY_TURNS = 100;
