// The examples a command's --help ends with. test/help-examples.test.ts runs every one of them, in
// this order, from a scratch directory holding a copy of the repository's data/ and experiments/
// (each reads what the ones before it wrote), so they stay runnable as shown; a `#` line is a note.
import type { Command } from "commander";

export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  run: [
    "npx probetown run auratown --seed 7 --days 2 --log runs/day2",
    `npx probetown run envprobe --seed 3 --condition envprobe-simple --config '{"world": "tooldag", "regime": "medium"}'`,
  ],
  verify: ["npx probetown verify runs/day2", "npx probetown verify runs    # every episode below runs/, on every core"],
  replay: ["npx probetown replay runs/day2 --to-tick 20 --state --agent lin-wei"],
  fork: ["npx probetown fork runs/day2 --at 20 --condition no-conversation"],
  diff: [
    "npx probetown diff runs/day2 runs/auratown-s7-baseline~t20-no-conversation    # what the condition changed, from tick 21 on",
    "# in a script: npx probetown diff <a> <b> --exit-code (exit 1 when they differ)",
  ],
  inspect: [
    "npx probetown inspect runs/day2 --from 10 --to 14 --agent lin-wei",
    "npx probetown inspect runs/envprobe-s3-envprobe-simple --from 3 --to 3    # an EnvProbe log: every record by tick",
  ],
  sweep: [
    "npx probetown sweep auratown --seeds 1-20 --conditions baseline,no-conversation --ticks 12 --log runs/sweep",
    "npx probetown sweep envprobe --worlds objectstate,tooldag,graphnav --policies envprobe-simple,periodic --regimes medium --seeds 0-219 --log runs/envprobe",
    "# the paper's grid, low and high on held-out seeds (21,780 episodes):",
    "#   npx probetown sweep envprobe --seeds 0-219 --held-out 1000-1219 --log runs/paper",
  ],
  "report-envprobe": ["npx probetown report-envprobe runs/envprobe --out report/envprobe"],
  "eval implicit": ["npx probetown eval implicit --file data/aura/implicit_intent_scene_a.json --condition aura-intent,no-intent --seeds 42,123,456"],
  fidelity: ["# npm run fidelity    # the same as: npx probetown fidelity --out docs/fidelity.md (about a minute)", "# npx probetown fidelity --out /tmp/fidelity.md --envprobe-seeds 40    # a quicker look"],
  "eval privacy": ["npx probetown eval privacy --file data/aura/privacy_queries.json --condition aura-gap-routed,fixed-probe"],
  "eval factual": ["npx probetown eval factual --file data/aura/factual_queries.json --condition fixed-probe,aura-gap-routed --seeds 42,123,456"],
  experiment: [
    "npx probetown experiment experiments/privacy-slice.yaml",
    "npx probetown experiment experiments/privacy-slice.yaml --report-only    # results and report again from the logs",
    "# the RQ2 factual matrix (1,350 cells): npx probetown experiment experiments/factual-rq2.yaml",
  ],
  report: [
    "npx probetown report runs/experiments/privacy-slice/results.jsonl --out report/privacy --reference fixed-probe --metric recall",
    "npx probetown report runs/eval/factual_queries/results-fixed-probe+aura-gap-routed.jsonl --out report/eval    # an eval's results",
  ],
};

/** Ends each command's --help with its examples (`HELP_EXAMPLES`, keyed by the command's path). */
export function addHelpExamples(program: Command): void {
  const visit = (command: Command, path: string): void => {
    const lines = HELP_EXAMPLES[path];
    if (lines !== undefined) command.addHelpText("after", `\nExamples:\n${lines.map((line) => (line.startsWith("#") ? `  ${line}` : `  $ ${line}`)).join("\n")}`);
    for (const sub of command.commands) visit(sub, path === "" ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, "");
}
