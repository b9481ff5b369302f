// The household world's part of the command line (services/cli/worldCli.ts): it has no commands
// or options of its own; it runs, sweeps and inspects through the shared ones.
import { defineWorldCli } from "../cli/worldCli.ts";

export default defineWorldCli({ world: "household" });
