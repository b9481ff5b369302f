// The scores a report can compare conditions on, apart from services/analysis/report.ts so that the command
// line lists them (`report --metric`) without loading the report's statistics.

export const METRICS = ["implicit", "literal", "correct", "accuracy", "recall", "llm-implicit", "llm-literal", "llm-accuracy"] as const;
export type Metric = (typeof METRICS)[number];
