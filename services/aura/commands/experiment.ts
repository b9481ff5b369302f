// The action of `probetown experiment <spec.json|yaml> [--report-only | --fresh] [--verify] [--json]`
// (services/aura/cli.ts defines the command): spec → job matrix → episodes (cells with a finished log
// are served from it) → results JSONL → report. Progress is a bar on a TTY and plain lines
// otherwise, on stderr; the summary goes to stdout.
import cliProgress from "cli-progress";
import { loadSpec, ReportNeedsModel, runExperiment } from "../experiment.ts";
import { shownPath } from "../../views/text.ts";
import { factualTownTicks, keptNotice, resumeNote } from "./eval.ts";
import { checkTownWarmupFits } from "../../auratown/limits.ts";
import { checkOutDir } from "../../cli/outputs.ts";
import { endpointExit, waitingNotice } from "../../cli/llm.ts";

export interface ExperimentFlags {
  reportOnly?: boolean;
  verify?: boolean;
  fresh?: boolean;
  json?: boolean;
  quiet?: boolean;
}

export async function cmdExperiment(specFile: string, flags: ExperimentFlags): Promise<number> {
  const spec = loadSpec(specFile);
  checkOutDir(spec.out, `${specFile}: field 'out' ${spec.out}`, "the experiment's episodes, results and report");
  if (spec.warmup !== null) checkTownWarmupFits(spec.benchmark === "factual" ? factualTownTicks(spec.warmup, spec.queries) : spec.warmup, `${specFile}: field 'forks.warmup' ${spec.warmup}`, spec.out);
  const tty = process.stderr.isTTY === true && flags.quiet !== true && flags.json !== true;
  let bar: cliProgress.SingleBar | null = null;
  const notice = keptNotice("experiment", flags);
  const progress = (done: number, total: number, label: string) => {
    notice();
    if (flags.quiet === true) return;
    if (tty) {
      if (bar === null) {
        bar = new cliProgress.SingleBar({ format: `experiment ${spec.name} [{bar}] {value}/{total} · {label}`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
        bar.start(total, 0, { label });
      }
      bar.update(done, { label });
    } else if (done > 0) process.stderr.write(`experiment ${spec.name}: [${done}/${total}] ${label}\n`);
  };
  // The spec's llm section holds the timeouts (an experiment takes no --llm-config).
  const onLlmWaiting = waitingNotice("experiment", flags, `the llm section of ${spec.file}`);
  // An interrupted cell's resume that cuts a torn tail says so, as `run --resume` does.
  const onResumeNote = resumeNote(`experiment ${spec.name}`);
  let result;
  // What to fix at the endpoint, said as a finished run says it (exit 5).
  const endpointContext = (failed?: number) => ({ baseURL: spec.llm?.baseURL ?? "", ...(failed === undefined || failed === 0 ? {} : { failed }), logsAre: "the cells' logs are", modelFrom: `${spec.file}: llm.model / llm.models`, endpointFrom: `${spec.file}: llm.baseURL` });
  try {
    result = await runExperiment(spec, { ...(flags.reportOnly === true ? { reportOnly: true } : {}), ...(flags.fresh === true ? { fresh: true } : {}), ...(flags.verify === true ? { verify: true } : {}), progress, warn: (m: string) => void process.stderr.write(`experiment: warning: ${m}\n`), onResumeNote, ...(onLlmWaiting === undefined ? {} : { onLlmWaiting }) });
  } catch (error) {
    // No report (its metric is the judge's, which scored nothing): the endpoint's trouble, then the error (exit 5).
    if (error instanceof ReportNeedsModel) endpointExit(`experiment ${spec.name}`, error.problems, endpointContext());
    throw error;
  } finally {
    (bar as cliProgress.SingleBar | null)?.stop();
  }
  if (flags.json) {
    // The API key (from the environment) is never printed.
    const shown = { ...result.spec, llm: result.spec.llm === null ? null : { ...result.spec.llm, apiKey: result.spec.llm.apiKey === null ? null : "(from the environment)" } };
    process.stdout.write(JSON.stringify({ spec: shown, cells: result.cells, ran: result.ran, served: result.served, replaced: result.replaced, results: result.results, report: result.report.report, json: result.report.json, charts: result.report.charts }, null, 2) + "\n");
  } else {
    const b = result.report.analysis.benchmarks;
    const lines = [
      `experiment ${spec.name} · ${spec.benchmark} (${shownPath(spec.queries)}) on ${spec.world} · seeds ${spec.seeds.join(",")} · ${spec.conditions.length} conditions · judges ${spec.judges.join(",")}`,
      `cells: ${result.cells} (${result.ran} run now, ${result.served} served from their logs${flags.verify === true ? `, all replayed first; ${result.replaced} did not verify and were rerun` : ""})`,
      ...b.map((x) => `  ${x.benchmark}: ${x.rows} rows, ${x.arms.length} conditions${x.reference === null ? "" : `, reference ${x.reference}`}${x.metric === null ? "" : `, metric ${x.metric}`}`),
      `results: ${shownPath(result.results)}`,
      `report:  ${shownPath(result.report.report)}`,
      `charts:  ${result.report.charts.map((p) => shownPath(p)).join(", ") || "none"}`,
    ];
    process.stdout.write(lines.join("\n") + "\n");
  }
  // Exit 5 before the judge's 2: the refusal is what to fix (a judge refused the key scored nothing too).
  const endpoint = result.spec.llm === null ? 0 : endpointExit(`experiment ${spec.name}`, result.endpointProblems, endpointContext(result.fallbacks));
  const judge = result.llmJudge;
  if (judge !== null && judge.failed > 0) {
    // Said on stderr even with --json: a report whose LLM-judge columns are empty must not pass unnoticed.
    const all = judge.failed === judge.cells;
    process.stderr.write(
      `experiment ${spec.name}: ${all ? "the LLM judge scored no cell" : `the LLM judge could not score ${judge.failed} of ${judge.cells} cells`} (first error: ${judge.firstError}); ` +
        `${all ? `its columns are empty${spec.judges.includes("rule") ? " and only the rule judge's figures are in the report" : ": the report has no judge scores"}` : "they are left out of its means"}. Rerun to retry them (recorded answers are reused).\n`,
    );
    if (all && endpoint === 0) {
      return 2;
    }
  }
  return endpoint;
}
