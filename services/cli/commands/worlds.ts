// `probetown worlds`: the worlds and their conditions.
import { registeredWorlds } from "../../kernel/worlds.ts";
import { EXIT } from "../exitCodes.ts";

export function cmdWorlds(): number {
  for (const { definition: world } of registeredWorlds()) {
    process.stdout.write(`${world.name}: ${world.description}\n  conditions:\n`);
    const width = Math.max(...Object.keys(world.conditions).map((c) => c.length));
    for (const [c, info] of Object.entries(world.conditions)) process.stdout.write(`    ${c.padEnd(width)}  ${info.description}${c === world.defaultCondition ? " (default)" : ""}\n`);
  }
  return EXIT.ok;
}
