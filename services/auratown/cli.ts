// AURATown's part of the command line (services/cli/worldCli.ts): `run --agents` (the town's size;
// the module's newEpisode.withAgents reads it), `inspect --all` (its timeline's), a config
// override and the examples of the shared commands on a town episode.
import { integer } from "../cli/flags.ts";
import { defineWorldCli, option } from "../cli/worldCli.ts";
import { DETAILED_TOWN_ACTORS } from "./views.ts";

export default defineWorldCli({
  world: "auratown",
  options: {
    run: () => [option("--agents <n>", "town size: the 5 residents plus generated ones", integer("--agents", 1))],
    inspect: () => [option("--all", `every agent's events, state and beliefs by tick, also in a town of more than ${DETAILED_TOWN_ACTORS} actors (summarised per tick without it)`)],
  },
  configExample: `{"speed": 2}`,
  examples: {
    run: ["npx probetown run auratown --seed 7 --days 2 --log runs/day2"],
    verify: ["npx probetown verify runs/day2"],
    replay: ["npx probetown replay runs/day2 --to-tick 20 --state --agent lin-wei"],
    fork: ["npx probetown fork runs/day2 --at 20 --condition no-conversation"],
    diff: ["npx probetown diff runs/day2 runs/auratown-s7-baseline~t20-no-conversation    # what the condition changed, from tick 21 on"],
    inspect: ["npx probetown inspect runs/day2 --from 10 --to 14 --agent lin-wei"],
    sweep: ["npx probetown sweep auratown --seeds 1-20 --conditions baseline,no-conversation --ticks 12 --log runs/sweep"],
  },
});
