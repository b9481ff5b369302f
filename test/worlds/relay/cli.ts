// The relay world's part of the command line (services/cli/worldCli.ts): one command of its own,
// `relay-total`, and a note on `run`, added by its registration line alone.
import { defineWorldCli, option } from "../../../services/cli/worldCli.ts";

export default defineWorldCli({
  world: "relay",
  heading: "Relay (a test world):",
  commands: [
    {
      name: "relay-total",
      description: "the tally's total and the mean value relayed, from a relay episode's log",
      arguments: [{ name: "<log>", description: "relay episode directory" }],
      options: () => [option("--json", "print them as JSON")],
      action: async () => (await import("./total.ts")).cmdRelayTotal,
    },
  ],
  notes: { run: ["its counters relay one seeded step a tick; `relay-total <log>` sums them"] },
  configExample: `{"counters": 3}`,
});
