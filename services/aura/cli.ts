// aura-scene's part of the command line (services/cli/worldCli.ts): the AURA controller's
// benchmarks (`eval`), experiment specs, questions put to a town episode (`ask`) and the report
// of an experiment's results. Declarations only; each action (services/aura/commands/) is loaded
// when its command runs.
import type { Option } from "commander";
import { FACTUAL_CONDITIONS, IMPLICIT_CONDITIONS, SCENE_CONDITIONS } from "../../actors/aura/conditions.ts";
import { SEED_RULE } from "../../actors/rng.ts";
import { MAX_BOOTSTRAP_ITERATIONS, METRICS } from "../analysis/reportMetrics.ts";
import { EXIT } from "../cli/exitCodes.ts";
import { integer } from "../cli/flags.ts";
import { checkInputFileSize } from "../kernel/inputFile.ts";
import { llmOptions } from "../cli/llmOptions.ts";
import { defineWorldCli, option, requiredOption, type WorldCommand } from "../cli/worldCli.ts";
import { FlagInvalid } from "../kernel/usageError.ts";
import { DEFAULT_SEEDS, JUDGES, type JudgeMode } from "./evalDefaults.ts";

const parseJudge = (value: string): JudgeMode => {
  if (!(JUDGES as readonly string[]).includes(value)) throw new FlagInvalid(`--judge expects one of ${JUDGES.join(", ")}, got '${value}'`);
  return value as JudgeMode;
};
const JUDGE_HELP = "rule (default: offline, on the structured facts), llm (the paper's LLM judge through the gateway, role judge; its calls are recorded in each cell's judge.jsonl and served from there on reruns) or both";

function integerAtLeast(flag: string, min: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min) throw new FlagInvalid(`${flag} expects an integer ≥ ${min}, got '${value}'`);
    return Number(value);
  };
}

/** A benchmark file over the dataset limit is refused while the flags are parsed, before the action loads. */
const datasetFlag = (value: string): string => {
  for (const path of value.split(",")) checkInputFileSize(path.trim(), "dataset", `--file ${path.trim()}`);
  return value;
};

/** The options every benchmark takes: its file, conditions, seeds and output folder. */
const benchmarkOptions = (fileHelp: string, conditions: readonly string[], severalFiles = false): Option[] => [
  severalFiles
    ? requiredOption("--file <queries.json>", `${fileHelp}; several (splits, reported apart): a comma-separated list or a repeated --file`, (value: string, previous: string[] | undefined) => [...(previous ?? []), datasetFlag(value)])
    : requiredOption("--file <queries.json>", fileHelp, datasetFlag),
  requiredOption("--condition <names>", `condition, or a comma-separated list (${conditions.join(", ")})`),
  option("--seeds <list>", `seeds: lists and ranges like 42,123,456 or 1-10 (each ${SEED_RULE}, as run --seed)`, undefined, DEFAULT_SEEDS.join(",")),
  option("--out <dir>", "where episode logs and results JSONL go", undefined, "runs/eval"),
];

/** The options of the benchmarks asked on AURATown snapshots: GapRouted's budget and the town's warm-up. */
const townSnapshotOptions = (warmupHelp: string): Option[] => [
  option("--max-steps <n>", "AURA GapRouted's budget ceiling (default 5, as the release's RQ2 run)", integerAtLeast("--max-steps", 0)),
  option("--warmup <ticks>", warmupHelp, integerAtLeast("--warmup", 1)),
];

/** The options every benchmark ends with: how its summary is printed, and the LLM endpoint. */
const summaryOptions = (): Option[] => [option("--json", "print the summary as JSON on stdout"), option("-q, --quiet", "no progress on stderr"), ...llmOptions()];

const FRESH_CELLS = "rerun cells whose logs already exist (default: judge an existing, intact log of the same cell; one made with other settings is refused)";

const evalCommand: WorldCommand = {
  name: "eval",
  description: "run a benchmark (deterministic backends and the rule judge unless --llm / --judge llm) and print coverage, probes and violations",
  subcommands: [
    {
      name: "implicit",
      description:
        "implicit-intent benchmark: each scene × seed × condition is an aura-scene episode (log under --out, verifiable); " +
        "prints literal/implicit coverage, probes and disclosure per query, gold-tool recall and forbidden-tool violations, " +
        "overall and per scene, subcategory and seed; private items disclosed beyond each query's need; several files are reported per file, then pooled",
      options: () => [
        ...benchmarkOptions("benchmark file in the implicit-intent schema (scenes + queries)", IMPLICIT_CONDITIONS, true),
        option("--max-steps <n>", "probe budget ceiling (default 3, as the paper for implicit intent)", integerAtLeast("--max-steps", 0)),
        option("--allow <globs>", "probe policy allow list (tool or tool:agent globs), enforced by the answering actor"),
        option("--deny <globs>", "probe policy deny list (deny wins), e.g. get_agent_private_state:wang-jun"),
        option("--scene <names>", "only these scenes of the file"),
        option("--fresh", "rerun episodes whose logs already exist under --out (default: judge the existing log when it is the same episode)"),
        option("--trace <exporter>", "trace each episode: none (default) | jsonl (a trace.jsonl beside each log) | console | otlp[:<url>]; spans include `probe <tool>`"),
        option("--judge <judge>", JUDGE_HELP, parseJudge),
        ...summaryOptions(),
      ],
      examples: ["npx probetown eval implicit --file data/aura/implicit_intent_scene_a.json --condition aura-intent,no-intent --seeds 42,123,456"],
      action: async () => (await import("./commands/eval.ts")).cmdImplicit,
    },
    {
      name: "privacy",
      description:
        "privacy-distractor slice on paired AURATown snapshots (the town runs --warmup ticks from each seed; the asker rotates over residents): " +
        "prints probes and disclosure per query and forbidden-tool violations per condition and category",
      options: () => [
        ...benchmarkOptions("privacy slice file (queries with allowed_tools and forbidden_tools)", FACTUAL_CONDITIONS),
        ...townSnapshotOptions("AURATown ticks before the snapshot (default 12)"),
        option("--fresh", FRESH_CELLS),
        option("--judge <judge>", "rule (default) or llm / both: adds the paper's §7.1 factual-accuracy LLM judge on each answer (recorded in judge.jsonl beside each log, served from there on reruns)", parseJudge),
        ...summaryOptions(),
      ],
      examples: ["npx probetown eval privacy --file data/aura/privacy_queries.json --condition aura-gap-routed,fixed-probe"],
      action: async () => (await import("./commands/eval.ts")).cmdPrivacy,
    },
    {
      name: "factual",
      description:
        "RQ2 factual grounding on paired AURATown snapshots (warm-up, then query i on the town after warm-up + i ticks, asked by resident i mod 5): " +
        "every condition answers from the same snapshot; a rule judge scores accuracy = 0.7·precision + 0.3·completeness, StrictP, claim recall, hallucination",
      options: () => [
        ...benchmarkOptions("factual benchmark file (queries with id, category, query, requires)", FACTUAL_CONDITIONS),
        ...townSnapshotOptions("AURATown ticks before query 0's snapshot (default 10)"),
        option("--fresh", FRESH_CELLS),
        option("--judge <judge>", JUDGE_HELP, parseJudge),
        ...summaryOptions(),
      ],
      examples: ["npx probetown eval factual --file data/aura/factual_queries.json --condition fixed-probe,aura-gap-routed --seeds 42,123,456"],
      action: async () => (await import("./commands/eval.ts")).cmdFactual,
    },
  ],
};

const experimentCommand: WorldCommand = {
  name: "experiment",
  description:
    "run an experiment spec (JSON or YAML: name, world, benchmark + file, seeds, conditions, forks.warmup, judges [rule, llm], llm, maxSteps, policy, out, report): " +
    "expands the job matrix, runs every cell without a finished log as an episode (others are served from their logs), " +
    "derives the results JSONL from the logs and writes the report; rerunning a finished experiment runs nothing. " +
    "A cell whose log was made with other settings, and an out directory holding another experiment, are refused",
  arguments: [{ name: "<spec>", description: "experiment spec (.json, .yaml or .yml); relative paths in it are relative to the spec's directory (the default out, runs/experiments/<name>, is relative to the current directory)" }],
  options: () => [
    option("--report-only", "regenerate results and report from the logs; fails (naming the cells) if a cell has no finished log"),
    option("--fresh", "rerun every cell even if its log exists (also one made with other settings); not with --report-only"),
    option("--verify", "replay every existing log before serving it (as `verify` does); one that diverges is rerun"),
    option("--json", "print the summary as JSON on stdout"),
    option("-q, --quiet", "no progress on stderr"),
  ],
  examples: [
    "npx probetown experiment experiments/privacy-slice.yaml",
    "npx probetown experiment experiments/privacy-slice.yaml --report-only    # results and report again from the logs",
    "# the RQ2 factual matrix (1,350 cells): npx probetown experiment experiments/factual-rq2.yaml",
  ],
  action: async () => (await import("./commands/experiment.ts")).cmdExperiment,
};

/** ask's own integer flags: ≥ 0, said so. */
function natural(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim())) throw new FlagInvalid(`${flag} expects an integer ≥ 0, got '${value}'`);
    return Number(value);
  };
}

const askCommand: WorldCommand = {
  name: "ask",
  description:
    "put a question to the AURA controller as a resident of a recorded (or running) AURATown episode, on its state after --tick: " +
    "prints the IntentFrame, each probe and its result, the budget used and the answer; the fork's log goes to --out " +
    "(default runs/ask/…), the episode itself is only read",
  arguments: [
    { name: "<episode>", description: "AURATown episode directory (a running one: its committed ticks are read)" },
    { name: "<question>", description: "the question, quoted" },
  ],
  options: () => [
    requiredOption("--tick <n>", "a committed tick of the episode: the state after it is asked", natural("--tick")),
    requiredOption("--agent <name>", "the resident asking (name or slug, e.g. 'Lin Wei' or lin-wei)"),
    option("--condition <name>", `aura-intent (default; agent-state probes), aura-gap-routed (environment tools), or any of ${Object.keys(SCENE_CONDITIONS).filter((c) => c !== "aura-intent" && c !== "aura-gap-routed").join(", ")}`),
    option("--max-steps <n>", "probe budget ceiling (default 3 on the agent-state probes, 5 on the environment tools)", natural("--max-steps")),
    option("--out <dir>", "where the fork's episode goes (default runs/ask/<episode>-t<tick>-<agent>-<condition>)"),
    option("--json", "print the result as JSON"),
    ...llmOptions(),
    option("-q, --quiet", "no note on stderr about the backends, nor about model calls waiting for an answer"),
  ],
  action: async () => (await import("./commands/ask.ts")).cmdAsk,
};

const reportCommand: WorldCommand = {
  name: "report",
  description: "write the experiment report (markdown, JSON, SVG charts) from a results JSONL file; no episode is rerun",
  arguments: [{ name: "<results>", description: "results JSONL, one row per query × seed × condition (schema: services/analysis/results.ts)" }],
  options: () => [
    requiredOption("--out <dir>", "directory for report.md, report.json and the charts"),
    option("--reference <condition>", "condition the others are compared with (default: the first in the file); comma-separate one per benchmark"),
    option("--metric <name>", "score used for comparisons, blocks and charts (default: the first the rows have of implicit, accuracy, correct, literal, recall; privacy rows: recall)").choices([...METRICS]),
    option("--bootstrap <n>", `bootstrap resamples, 100 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")}`, integer("--bootstrap", 100, MAX_BOOTSTRAP_ITERATIONS, " (resamples per comparison)"), 5000),
    option("--seed <n>", "bootstrap seed (a named RNG stream per comparison)", integer("--seed", 0), 0),
    option("--title <text>", "report title"),
    option("--json", "print where the files went as JSON"),
  ],
  examples: [
    "npx probetown report runs/experiments/privacy-slice/results.jsonl --out report/privacy --reference fixed-probe --metric recall",
    "npx probetown report runs/eval/factual_queries/results-fixed-probe+aura-gap-routed.jsonl --out report/eval    # an eval's results",
  ],
  action: async () => (await import("./commands/report.ts")).cmdReport,
};

export default defineWorldCli({
  world: "aura-scene",
  heading: "AURA (aura-scene; benchmarks on scenes and AURATown snapshots):",
  commands: [evalCommand, experimentCommand, askCommand, reportCommand],
  fidelity: {
    summary: "AURA Tables 2-4, 12 deterministic",
    section: async () => {
      const { auraFidelitySection } = await import("./fidelity.ts");
      return ({ out, onProgress }) => auraFidelitySection({ out, ...(onProgress === undefined ? {} : { onProgress }) });
    },
  },
  // An experiment whose report needs the LLM judge's scores, the judge's endpoint refused or unreachable (experiment.ts).
  errors: { ReportNeedsModel: EXIT.endpoint },
});
