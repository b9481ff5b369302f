// What `eval` offers before it runs anything: its default seeds and its judges, apart from
// services/aura/eval.ts and services/aura/llmJudge.ts so that the command line shows them in --help without
// loading either.

export const DEFAULT_SEEDS = [42, 123, 456] as const;

export const JUDGES = ["rule", "llm", "both"] as const;
export type JudgeMode = (typeof JUDGES)[number];
