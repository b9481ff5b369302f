// `probetown worlds`: the worlds, their conditions and the model roles they declare.
import { registeredWorlds } from "../../kernel/worlds.ts";
import { EXIT } from "../exitCodes.ts";

export function cmdWorlds(): number {
  for (const { definition: world, models } of registeredWorlds()) {
    process.stdout.write(`${world.name}: ${world.description}\n  conditions:\n`);
    const width = Math.max(...Object.keys(world.conditions).map((c) => c.length));
    for (const [c, info] of Object.entries(world.conditions)) process.stdout.write(`    ${c.padEnd(width)}  ${info.description}${c === world.defaultCondition ? " (default)" : ""}\n`);
    if (models !== undefined) process.stdout.write(`  model roles (--model <role>=<model>): ${models.roles.join(", ")}${(models.otherRoles ?? []).length === 0 ? "" : `; its own commands also: ${models.otherRoles!.join(", ")}`}\n`);
  }
  return EXIT.ok;
}
