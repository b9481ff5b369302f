// `probetown eval …`: the command group and its flags; each subcommand's action (commands/eval.ts:
// benchmark runs with the deterministic backends and the rule judge, or with the controller on a
// model and/or the paper's LLM judges) is loaded when it runs. The stable scriptable entry is
//   probetown eval implicit --file <queries.json> --condition <name> [--seeds 42,123,456] --json
import { Command } from "commander";
import { SEED_RULE } from "../../actors/rng.ts";
import { FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS } from "../../actors/aura/conditions.ts";
import { DEFAULT_SEEDS, JUDGES, type JudgeMode } from "../aura/evalDefaults.ts";
import type { FactualFlags, ImplicitFlags, PrivacyFlags } from "./commands/eval.ts";
import { addLlmOptions } from "./llmOptions.ts";
import { FlagInvalid } from "../kernel/usageError.ts";

const parseJudge = (value: string): JudgeMode => {
  if (!(JUDGES as readonly string[]).includes(value)) throw new FlagInvalid(`--judge expects one of ${JUDGES.join(", ")}, got '${value}'`);
  return value as JudgeMode;
};
const JUDGE_HELP = "rule (default: offline, on the structured facts), llm (the paper's LLM judge through the gateway, role judge; its calls are recorded in each cell's judge.jsonl and served from there on reruns) or both";

export function integerAtLeast(flag: string, min: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min) throw new FlagInvalid(`${flag} expects an integer ≥ ${min}, got '${value}'`);
    return Number(value);
  };
}

/** An eval subcommand with the options every benchmark takes: its file, conditions, seeds and output folder. */
function benchmarkCommand(group: Command, name: string, description: string, fileHelp: string, conditions: readonly string[], severalFiles = false): Command {
  const command = group.command(name).description(description);
  const withFile = severalFiles
    ? command.requiredOption("--file <queries.json>", `${fileHelp}; several (splits, reported apart): a comma-separated list or a repeated --file`, (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    : command.requiredOption("--file <queries.json>", fileHelp);
  return withFile
    .requiredOption("--condition <names>", `condition, or a comma-separated list (${conditions.join(", ")})`)
    .option("--seeds <list>", `seeds: lists and ranges like 42,123,456 or 1-10 (each ${SEED_RULE}, as run --seed)`, DEFAULT_SEEDS.join(","))
    .option("--out <dir>", "where episode logs and results JSONL go", "runs/eval");
}

/** The options of the benchmarks asked on AURATown snapshots: GapRouted's budget and the town's warm-up. */
const townSnapshotOptions = (command: Command, warmupHelp: string): Command =>
  command
    .option("--max-steps <n>", "AURA GapRouted's budget ceiling (default 5, as the release's RQ2 run)", integerAtLeast("--max-steps", 0))
    .option("--warmup <ticks>", warmupHelp, integerAtLeast("--warmup", 1));

/** The options every benchmark ends with: how its summary is printed, and the LLM endpoint. */
const withSummaryOptions = (command: Command): Command =>
  addLlmOptions(command.option("--json", "print the summary as JSON on stdout").option("-q, --quiet", "no progress on stderr"));

/** Adds the `eval` command group to the program. */
export function registerEval(program: Command, exit: (code: number) => void): void {
  const group = program.command("eval").description("run a benchmark (deterministic backends and the rule judge unless --llm / --judge llm) and print coverage, probes and violations");
  const implicit = benchmarkCommand(
    group,
    "implicit",
    "implicit-intent benchmark: each scene × seed × condition is an aura-scene episode (log under --out, verifiable); " +
      "prints literal/implicit coverage, probes and disclosure per query, gold-tool recall and forbidden-tool violations, " +
      "overall and per scene, subcategory and seed; private items disclosed beyond each query's need; several files are reported per file, then pooled",
    "benchmark file in the implicit-intent schema (scenes + queries)",
    IMPLICIT_CONDITIONS,
    true,
  )
    .option("--max-steps <n>", "probe budget ceiling (default 3, as the paper for implicit intent)", integerAtLeast("--max-steps", 0))
    .option("--allow <globs>", "probe policy allow list (tool or tool:agent globs), enforced by the answering actor")
    .option("--deny <globs>", "probe policy deny list (deny wins), e.g. get_agent_private_state:wang-jun")
    .option("--scene <names>", "only these scenes of the file")
    .option("--fresh", "rerun episodes whose logs already exist under --out (default: judge the existing log when it is the same episode)")
    .option("--trace <exporter>", "trace each episode: none (default) | jsonl (a trace.jsonl beside each log) | console | otlp[:<url>]; spans include `probe <tool>`")
    .option("--judge <judge>", JUDGE_HELP, parseJudge);
  // Each action is loaded when its subcommand runs (as main.ts loads the others).
  withSummaryOptions(implicit).action(async (flags: ImplicitFlags) => (await import("./commands/eval.ts")).cmdImplicit(flags, exit));

  const privacy = townSnapshotOptions(benchmarkCommand(
    group,
    "privacy",
    "privacy-distractor slice on paired AURATown snapshots (the town runs --warmup ticks from each seed; the asker rotates over residents): " +
      "prints probes and disclosure per query and forbidden-tool violations per condition and category",
    "privacy slice file (queries with allowed_tools and forbidden_tools)",
    FACTUAL_CONDITIONS,
  ),
    "AURATown ticks before the snapshot (default 12)",
  )
    .option("--fresh", "rerun cells whose logs already exist (default: judge an existing, intact log of the same cell; one made with other settings is refused)")
    .option("--judge <judge>", "rule (default) or llm / both: adds the paper's §7.1 factual-accuracy LLM judge on each answer (recorded in judge.jsonl beside each log, served from there on reruns)", parseJudge);
  withSummaryOptions(privacy).action(async (flags: PrivacyFlags) => (await import("./commands/eval.ts")).cmdPrivacy(flags, exit));

  const factual = townSnapshotOptions(benchmarkCommand(
    group,
    "factual",
    "RQ2 factual grounding on paired AURATown snapshots (warm-up, then query i on the town after warm-up + i ticks, asked by resident i mod 5): " +
      "every condition answers from the same snapshot; a rule judge scores accuracy = 0.7·precision + 0.3·completeness, StrictP, claim recall, hallucination",
    "factual benchmark file (queries with id, category, query, requires)",
    FACTUAL_CONDITIONS,
  ),
    "AURATown ticks before query 0's snapshot (default 10)",
  )
    .option("--fresh", "rerun cells whose logs already exist (default: judge an existing, intact log of the same cell; one made with other settings is refused)")
    .option("--judge <judge>", JUDGE_HELP, parseJudge);
  withSummaryOptions(factual).action(async (flags: FactualFlags) => (await import("./commands/eval.ts")).cmdFactual(flags, exit));
}
