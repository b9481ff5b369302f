// The household world's part of the command line (services/cli/worldCli.ts): `tasks
// generate|verify|show`, `eval enacttom` (beside the other worlds' benchmarks under `eval`) and
// `run household --task`. Declarations only; the actions are loaded when their commands run.
import { integer } from "../cli/flags.ts";
import { llmOptions } from "../cli/llmOptions.ts";
import { defineWorldCli, option, requiredOption } from "../cli/worldCli.ts";
import { FlagInvalid } from "../kernel/usageError.ts";
import { DEFAULT_HISTORY_TURNS, MAX_HISTORY_TURNS } from "../../actors/household/historyLimits.ts";

/** `tasks generate --count` at most: 33 times the shipped pool (300 tasks); a billion generated without end. */
const MAX_GENERATED_TASKS = 10_000;
/** `eval enacttom --runs` at most: Pass@k past k = 100 says nothing more, and each run is every task again. */
const MAX_RUNS_PER_TASK = 100;

const oneOf =
  <T extends string>(flag: string, values: readonly T[]) =>
  (value: string): T => {
    if (!(values as readonly string[]).includes(value)) throw new FlagInvalid(`${flag} expects one of ${values.join(", ")}, got '${value}'`);
    return value as T;
  };

/** The scripted agents `eval enacttom` runs by default (the world's conditions), and the LLM agent it may run. */
const AGENTS = ["competent", "first-order", "naive"] as const;
const ALL_AGENTS = [...AGENTS, "llm"] as const;
const agentList = (value: string): string[] => {
  const agents = value.split(",").map((a) => a.trim());
  for (const a of agents) if (!(ALL_AGENTS as readonly string[]).includes(a)) throw new FlagInvalid(`--agents expects a comma-separated list of ${ALL_AGENTS.join(", ")}, got '${a}'`);
  return [...new Set(agents)];
};
const depth = (value: string): number => {
  if (!["1", "2", "3"].includes(value.trim())) throw new FlagInvalid(`--depth expects 1, 2 or 3, got '${value}'`);
  return Number(value);
};

/** The LLM agent's transcript: how many of its last turns each prompt carries (the config's `history`). */
const historyOption = () => option("--history <n>", `condition llm: how many of its last turns (action, result, what it saw, messages received) the LLM agent's prompt carries, 0 to ${MAX_HISTORY_TURNS} (default ${DEFAULT_HISTORY_TURNS}); goes into the config as "history"`, integer("--history", 0, MAX_HISTORY_TURNS, " (turns)"));

export default defineWorldCli({
  world: "household",
  heading: "EnactToM households (household):",
  options: {
    run: () => [
      option("--task <id|file>", "the task: a task file, a pool id (data/household/pool/<id>.json), an example (tea-for-two, pantry-switch, laundry-day) or a generated id (gen-coop-d2-standard-s7); it goes into the config inline"),
      historyOption(),
    ],
  },
  examples: {
    run: ["npx probetown run household --seed 1 --task gen-coop-d2-standard-s2301 --log runs/household/d2    # a pool task; prints who did what"],
    inspect: ["npx probetown inspect runs/household/d2 --from 0 --to 2    # a household log: actions, messages, rooms and who knows what, by turn"],
  },
  commands: [
    {
      name: "tasks",
      description: "household tasks (EnactToM): generate them from a seed, verify them check by check, show one",
      subcommands: [
        {
          name: "generate",
          description: "generate verified tasks from a seed (task i: seed + i; depths 1, 2, 3 and categories in turn unless given); every task it writes has passed the verifier",
          options: () => [
            requiredOption("--seed <n>", "the generator's seed", integer("--seed", 0)),
            option("--split <split>", "standard (message limits 2) or hard (limits 1, relay chains)", oneOf("--split", ["standard", "hard"] as const), "standard"),
            option("--count <n>", `how many tasks (at most ${MAX_GENERATED_TASKS.toLocaleString("en-US")})`, integer("--count", 1, MAX_GENERATED_TASKS, " (tasks)"), 1),
            option("--depth <d>", "K-depth of every task (default: 1, 2, 3 in turn)", depth),
            option("--category <c>", "cooperative or mixed (default: three of each in turn)", oneOf("--category", ["cooperative", "mixed"] as const)),
            option("--out <file|dir>", "a .json file (one task) or a directory of <task_id>.json (default: print the JSON)"),
            option("--json", "print what was written as JSON"),
          ],
          examples: ["npx probetown tasks generate --seed 7 --split hard --count 3 --out runs/tasks"],
          action: async () => (await import("./commands/tasks.ts")).cmdTasksGenerate,
        },
        {
          name: "verify",
          description: "run the task verifier (no external planner) on a task file or a directory of them: each check's verdict, its reason and its time. Exit 2 when a file does not load (naming file and field), 1 when a task fails a check",
          arguments: [{ name: "<path>", description: "a task file, or a directory (a pool: every *.json but index.json)" }],
          options: () => [
            option("--no-subgoal-tension", "skip the subgoal-tension check (on by default: each private objective of a mixed task must pull against the shared goal — they cannot both hold, or it names an object or furniture of the shared goal — as the paper's judge asks)"),
            option("--brief", "one line per passing task (failing checks in full)"),
            option("--json", "print the verdicts as JSON"),
            option("-q, --quiet", "no progress on stderr"),
          ],
          examples: ["npx probetown tasks verify data/household/laundry-day.json", "npx probetown tasks verify data/household/pool --brief    # the committed 300-task pool"],
          action: async () => (await import("./commands/tasks.ts")).cmdTasksVerify,
        },
        {
          name: "show",
          description: "show a task: rooms with furniture and objects, agents with their bans, budgets and contacts, mechanics, secrets, the goal with its K nodes (probe ids) and private objectives",
          arguments: [{ name: "<task>", description: "a pool id, an example id, a generated id, or a task file" }],
          options: () => [option("--json", "print the task's JSON")],
          examples: ["npx probetown tasks show gen-mixed-d3-hard-s2310"],
          action: async () => (await import("./commands/tasks.ts")).cmdTasksShow,
        },
      ],
    },
    {
      name: "eval",
      description: "run a benchmark",
      subcommands: [
        {
          name: "enacttom",
          description:
            "EnactToM on the committed household pool: every task of the split × agent × run is an embedded episode with its log under --out; " +
            "prints a Table-2-shaped summary per agent, overall, by scope, by K-depth and by scope × K-depth: functional Avg ± binomial SE, Pass@k, exact Pass^k and percent complete; " +
            "the literal probes' mean score, Avg ± SE and Pass^k; and the failure taxonomy read from the logs",
          options: () => [
            option("--split <split>", "standard or hard (150 tasks each)", oneOf("--split", ["standard", "hard"] as const), "standard"),
            option("--mode <mode>", "standard (private secrets, own room seen), baseline (every secret revealed, every room seen, ReadAgentTrajectory; logs under <out>/baseline) or both: each agent in both modes, and a standard-vs-baseline table per scope and K-depth", oneOf("--mode", ["standard", "baseline", "both"] as const), "standard"),
            option("--agents <list>", `scripted agents, comma-separated: competent (tells partners what they need, and who knows what), first-order (shares facts, models no one's knowledge of others), naive (never messages), llm (the model picks each action, role agent; needs --llm; falls back to competent on an invalid answer)`, agentList).default([...AGENTS], AGENTS.join(",")),
            option("--runs <n>", `runs (attempts) per task: Pass@k and Pass^k for k = 1…runs (at most ${MAX_RUNS_PER_TASK})`, integer("--runs", 1, MAX_RUNS_PER_TASK, " (runs per task)"), 3),
            option("--out <dir>", "where the logs go: <dir>/<agent>/<task>/a<run>", undefined, "runs/enacttom"),
            option("--pool <dir>", "the task pool (with index.json)", undefined, "data/household/pool"),
            option("--per-cell <n>", "only the first n tasks of each scope × K-depth cell (25 in the pool)", integer("--per-cell", 1)),
            option("--fresh", "replace the logs of these agents already under --out"),
            option("--json", "print the summary as JSON"),
            option("-q, --quiet", "no progress on stderr"),
            historyOption(),
            ...llmOptions(),
          ],
          examples: [
            "# the LLM agent on the local model (minutes on a CPU): npx probetown eval enacttom --split standard --agents llm,competent --runs 1 --per-cell 1 --llm local --out runs/enacttom-llm",
            "npx probetown eval enacttom --split standard --agents competent,naive --runs 3 --per-cell 2 --out runs/enacttom-quick",
            "npx probetown eval enacttom --mode both --agents first-order --runs 1 --per-cell 2 --out runs/enacttom-modes    # standard vs baseline, per scope and K-depth",
            "# the whole split (150 tasks × 3 agents × 3 runs, about 10 s): npx probetown eval enacttom --split hard --runs 3 --json --out runs/enacttom-hard",
          ],
          action: async () => (await import("./commands/evalEnacttom.ts")).cmdEvalEnacttom,
        },
      ],
    },
  ],
});
