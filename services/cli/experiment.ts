// `probetown experiment <spec.json|yaml> [--report-only | --fresh] [--verify] [--json]`: the command
// and its flags; its action (commands/experiment.ts) is loaded when it runs.
import type { Command } from "commander";
import type { ExperimentFlags } from "./commands/experiment.ts";

export function registerExperiment(program: Command, exit: (code: number) => void): void {
  program
    .command("experiment")
    .description(
      "run an experiment spec (JSON or YAML: name, world, benchmark + file, seeds, conditions, forks.warmup, judges [rule, llm], llm, maxSteps, policy, out, report): " +
        "expands the job matrix, runs every cell without a finished log as an episode (others are served from their logs), " +
        "derives the results JSONL from the logs and writes the report; rerunning a finished experiment runs nothing. " +
        "A cell whose log was made with other settings, and an out directory holding another experiment, are refused",
    )
    .argument("<spec>", "experiment spec (.json, .yaml or .yml); relative paths in it are relative to the spec's directory (the default out, runs/experiments/<name>, is relative to the current directory)")
    .option("--report-only", "regenerate results and report from the logs; fails (naming the cells) if a cell has no finished log")
    .option("--fresh", "rerun every cell even if its log exists (also one made with other settings); not with --report-only")
    .option("--verify", "replay every existing log before serving it (as `verify` does); one that diverges is rerun")
    .option("--json", "print the summary as JSON on stdout")
    .option("-q, --quiet", "no progress on stderr")
    .action(async (spec: string, flags: ExperimentFlags) => (await import("./commands/experiment.ts")).cmdExperiment(spec, flags, exit));
}
