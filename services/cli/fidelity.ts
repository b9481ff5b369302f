// `probetown fidelity`: the command, assembled from the worlds' fidelity sections (their
// manifests' `fidelity`: what it measures, its options); its action (commands/fidelity.ts, which
// regenerates docs/fidelity.md) is loaded when it runs.
import type { Command } from "commander";
import type { CommandAction, WorldCli } from "./worldCli.ts";

export function registerFidelity(program: Command, worlds: readonly WorldCli[], lazy: (load: () => Promise<CommandAction>) => (...args: unknown[]) => Promise<void>): void {
  const sections = worlds.flatMap((w) => (w.fidelity === undefined ? [] : [{ world: w.world, fidelity: w.fidelity }]));
  const command = program
    .command("fidelity")
    .description(`run the papers' headline measurements here (${sections.map((s) => s.fidelity.summary).join("; ")}) and write them beside the papers' numbers, row by row`)
    .option("--out <file>", "where the Markdown goes", "docs/fidelity.md");
  for (const { world, fidelity } of sections) for (const option of fidelity.options?.() ?? []) command.addOption(option.helpGroup(`Options for ${world}:`));
  command.option("-q, --quiet", "no progress on stderr").action(
    lazy(async () => {
      const { cmdFidelity } = await import("./commands/fidelity.ts");
      return (flags: Parameters<typeof cmdFidelity>[0]) => cmdFidelity(flags, sections.map((s) => s.fidelity));
    }),
  );
}
