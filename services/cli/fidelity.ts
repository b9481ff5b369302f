// `probetown fidelity`: the command and its flags; its action (commands/fidelity.ts, which
// regenerates docs/fidelity.md) is loaded when it runs.
import type { Command } from "commander";
import type { FidelityFlags } from "./commands/fidelity.ts";
import { integerAtLeast } from "./eval.ts";

export function registerFidelity(program: Command, exit: (code: number) => void): void {
  program
    .command("fidelity")
    .description("run the papers' headline measurements here (AURA Tables 2-4, 12 deterministic; EnvProbe Tables 1-3, 5, 7) and write them beside the papers' numbers, row by row")
    .option("--out <file>", "where the Markdown goes", "docs/fidelity.md")
    .option("--envprobe-seeds <n>", "EnvProbe seeds 0…n−1 (default 220, the paper's n)", integerAtLeast("--envprobe-seeds", 1))
    .option("-q, --quiet", "no progress on stderr")
    .action(async (flags: FidelityFlags) => (await import("./commands/fidelity.ts")).cmdFidelity(flags, exit));
}
