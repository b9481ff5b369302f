// The scores a report can compare conditions on, apart from services/analysis/report.ts so that the command
// line lists them (`report --metric`) without loading the report's statistics.

export const METRICS = ["implicit", "literal", "correct", "accuracy", "recall", "llm-implicit", "llm-literal", "llm-accuracy"] as const;
export type Metric = (typeof METRICS)[number];

/**
 * The most bootstrap resamples a report draws per comparison (`report --bootstrap`, a spec's
 * report.bootstrap): each keeps a float per resample, and a trillion failed allocating them (exit
 * 4). 100 times the default of 5,000; EnvProbe's tables use 10,000.
 */
export const MAX_BOOTSTRAP_ITERATIONS = 500_000;
