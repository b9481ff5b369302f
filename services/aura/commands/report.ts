// `probetown report <results.jsonl> --out <dir>`: the experiment report from results rows alone
// (no episode is rerun). Bad rows and unknown flags' values are usage errors (exit 2) naming the
// file, line and field, or the flag.
import { ResultsInvalid } from "../../analysis/results.ts";
import { METRICS, ReportOptionInvalid, writeReport, type Metric } from "../../analysis/report.ts";
import { UsageError } from "../../kernel/replay.ts";
import { checkOutDir } from "../../cli/outputs.ts";
import { shownPath } from "../../views/text.ts";

export const REPORT_METRICS = METRICS;

export interface ReportFlags {
  out: string;
  reference?: string;
  metric?: string;
  bootstrap?: number;
  seed?: number;
  title?: string;
  json?: boolean;
}

export function cmdReport(rowsFile: string, flags: ReportFlags): number {
  checkOutDir(flags.out, `--out ${flags.out}`, "the report");
  if (flags.metric !== undefined && !(METRICS as readonly string[]).includes(flags.metric)) {
    throw new UsageError(`--metric: expected one of ${METRICS.join(", ")}, got '${flags.metric}'`);
  }
  const reference = flags.reference?.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (reference !== undefined && reference.length === 0) throw new UsageError(`--reference: expected a condition name, got '${flags.reference}'`);
  let written;
  try {
    written = writeReport(rowsFile, flags.out, {
      ...(reference === undefined ? {} : { reference }),
      ...(flags.metric === undefined ? {} : { metric: flags.metric as Metric }),
      ...(flags.bootstrap === undefined ? {} : { bootstrapIterations: flags.bootstrap }),
      ...(flags.seed === undefined ? {} : { bootstrapSeed: flags.seed }),
      ...(flags.title === undefined ? {} : { title: flags.title }),
    });
  } catch (error) {
    // Both are problems with what the user gave us, not internal errors: exit 2 with their message.
    if (error instanceof ResultsInvalid || error instanceof ReportOptionInvalid) throw new UsageError(error.message);
    throw error;
  }
  if (flags.json) {
    process.stdout.write(JSON.stringify({ report: written.report, json: written.json, charts: written.charts }, null, 2) + "\n");
    return 0;
  }
  const lines = written.analysis.benchmarks.map((b) => {
    // Without comparisons, say why here too, not only in report.md.
    const cmp = b.comparisons.length === 0 ? `no paired comparisons${b.noComparisons === null ? "" : ` (${b.noComparisons})`}` : `${b.comparisons.length} paired comparison${b.comparisons.length === 1 ? "" : "s"} against ${b.reference}`;
    return `  ${b.benchmark}: ${b.rows} cells, ${b.arms.length} conditions, ${cmp}`;
  });
  process.stdout.write(`${written.analysis.rows} rows from ${shownPath(rowsFile)}\n${lines.join("\n")}\nreport: ${shownPath(written.report)}\ndata:   ${shownPath(written.json)}\ncharts: ${written.charts.map((p) => shownPath(p)).join(", ") || "none"}\n`);
  return 0;
}
