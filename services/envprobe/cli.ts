// EnvProbe's part of the command line (services/cli/worldCli.ts): its grid flags on `sweep`, what
// its own sweep does with the shared ones, `report-envprobe`, its fidelity section and examples.
// Declarations only; the actions are loaded when their commands run.
import { MAX_HORIZON } from "../../actors/envprobe/limits.ts";
import { MAX_BOOTSTRAP_ITERATIONS } from "../analysis/reportMetrics.ts";
import { integer } from "../cli/flags.ts";
import { EXIT } from "../cli/exitCodes.ts";
import { defineWorldCli, option, requiredOption } from "../cli/worldCli.ts";
import { FlagInvalid } from "../kernel/usageError.ts";
import { DEFAULT_CHUNK } from "./chunk.ts";

/** `--log-store`: files (a --log directory) or jetstream. */
function logStoreFlag(value: string): "files" | "jetstream" {
  if (value !== "files" && value !== "jetstream") throw new FlagInvalid(`--log-store expects files or jetstream, got '${value}'`);
  return value;
}

/** `fidelity --envprobe-seeds` at most: 45 times the paper's 220, each seed a grid of 99 episodes (`--envprobe-seeds 900000000` ran without end). */
const MAX_FIDELITY_SEEDS = 10_000;

export default defineWorldCli({
  world: "envprobe",
  heading: "EnvProbe (envprobe):",
  options: {
    sweep: () => [
      option("--worlds <list>", "objectstate,tooldag,graphnav (default: all)"),
      option("--regimes <list>", "low,medium,high or the release's S1,S2,S3 (default: low,medium,high)"),
      option("--policies <list>", "probing policies (default: the paper's grid; see `worlds`)"),
      option("--horizon <n>", "override the regime's horizon H", integer("--horizon", 1, MAX_HORIZON, " (the paper's horizons are 20, 30 and 40)")),
      option("--held-out <list>", "the paper's disjoint held-out seeds for the low and high regimes (medium keeps --seeds), e.g. --seeds 0-219 --held-out 1000-1219"),
      option("--log-format <n>", "with --log: the logs' format, 2 (compact, the default) or 1 (a sealed JSON record a line); both verify and replay alike (docs/episodes.md)", integer("--log-format", 1, 2)),
      option("--log-store <where>", "where each episode's log is kept: files (the default: under --log <dir>) or, with --nats, jetstream: in the namespace's log-object bucket, below the sweep's name (printed; `verify --nats <url> <name>` checks them, `export-logs` writes them to files), so workers need nothing but the NATS URL", logStoreFlag),
      option("--chunk <n>", `with --nats: seeds of one (world, regime, policy) cell per job (default ${DEFAULT_CHUNK})`, integer("--chunk", 1)),
    ],
  },
  notes: {
    sweep: [
      "runs its grid (worlds × regimes × policies × seeds) on its own driver; --conditions names policies, as --policies does",
      "--nats queues chunks of seeds per job; their logs go to --log on a filesystem the workers share, or with --log-store jetstream to JetStream",
      "without --nats, --workers is worker threads (0: every core; a grid of at most 64 episodes runs on one thread, without a worker), or with an LLM agent episodes at a time (0: 4; the gateway's concurrency caps the calls in flight)",
      "--log keeps every episode's log under that directory (default: not kept); --trace applies with --nats only",
    ],
  },
  configExample: `{"horizon": 60}`,
  examples: {
    run: [`npx probetown run envprobe --seed 3 --condition envprobe-simple --config '{"world": "tooldag", "regime": "medium"}'`],
    inspect: ["npx probetown inspect runs/envprobe-s3-envprobe-simple --from 3 --to 3    # an EnvProbe log: every record by tick"],
    sweep: [
      "npx probetown sweep envprobe --worlds objectstate,tooldag,graphnav --policies envprobe-simple,periodic --regimes medium --seeds 0-219 --log runs/envprobe",
      "# the paper's grid, low and high on held-out seeds (21,780 episodes):",
      "#   npx probetown sweep envprobe --seeds 0-219 --held-out 1000-1219 --log runs/paper",
    ],
  },
  commands: [
    {
      name: "report-envprobe",
      description: "EnvProbe paired report (Tables 1/2 layouts, paired bootstrap, McNemar, Bonferroni, Pareto SVG, confident-wrong audit) from a sweep's --log directory or --out metrics file",
      arguments: [{ name: "<source>", description: "a `sweep envprobe --log` directory, or its `--out` metrics JSON" }],
      options: () => [
        requiredOption("--out <dir>", "directory for report.md, report.json and the SVG"),
        option("--bootstrap <n>", `paired bootstrap resamples per comparison, 100 to ${MAX_BOOTSTRAP_ITERATIONS.toLocaleString("en-US")}`, integer("--bootstrap", 100, MAX_BOOTSTRAP_ITERATIONS, " (resamples per comparison)"), 10_000),
        option("--seed <n>", "bootstrap seed (a named RNG stream per comparison)", integer("--seed", 0), 0),
        option("--title <text>", "report title"),
        option("--json", "print where the files went as JSON"),
      ],
      examples: ["npx probetown report-envprobe runs/envprobe --out report/envprobe"],
      action: async () => (await import("./commands.ts")).cmdEnvprobeReport,
    },
  ],
  fidelity: {
    summary: "EnvProbe Tables 1-3, 5, 7",
    options: () => [option("--envprobe-seeds <n>", "EnvProbe seeds 0…n−1 (default 220, the paper's n)", integer("--envprobe-seeds", 1, MAX_FIDELITY_SEEDS, " (seeds: the paper's n is 220)"))],
    examples: ["# npx probetown fidelity --out /tmp/fidelity.md --envprobe-seeds 40    # a quicker look"],
    section: async () => {
      const { envprobeFidelitySection } = await import("./fidelity.ts");
      return ({ flags, onProgress }) => envprobeFidelitySection({ ...(typeof flags.envprobeSeeds === "number" ? { seeds: flags.envprobeSeeds } : {}), ...(onProgress === undefined ? {} : { onProgress }) });
    },
  },
  errors: { NotEnvProbeEpisode: EXIT.usage, EnvprobeSweepFailed: EXIT.internal },
});
