// Every test file starts with this build's worlds registered, as the command line does before a
// command runs (services/worlds.ts).
import { loadWorlds } from "../services/worlds.ts";

await loadWorlds();
