// The examples a command's --help ends with: the kernel's own below, after those the worlds'
// manifests give their commands and the shared ones (services/cli/worldCli.ts).
// test/help-examples.test.ts runs every one of them, in this order (the shared commands, each
// world's examples of them first, then the worlds' own commands), from a scratch directory holding
// a copy of the repository's data/ and experiments/ (each reads what the ones before it wrote), so
// they stay runnable as shown; a `#` line is a note.
import type { Command } from "commander";
import { SHARED_COMMANDS, type WorldCli, type WorldCommand } from "./worldCli.ts";

/** The kernel's examples of the shared commands, after the worlds' (they read what those wrote). */
const KERNEL_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  verify: ["npx probetown verify runs    # every episode below runs/, on every core"],
  diff: ["# in a script: npx probetown diff <a> <b> --exit-code (exit 1 when they differ)"],
  fidelity: ["# npm run fidelity    # the same as: npx probetown fidelity --out docs/fidelity.md (about a minute)"],
};

/** Every command's examples by its path (`eval implicit`), in the order they run. */
export function helpExamplesOf(worlds: readonly WorldCli[]): Readonly<Record<string, readonly string[]>> {
  const examples: Record<string, string[]> = {};
  const add = (path: string, lines: readonly string[] | undefined): void => {
    if (lines !== undefined && lines.length > 0) (examples[path] ??= []).push(...lines);
  };
  for (const command of SHARED_COMMANDS) {
    for (const w of worlds) add(command, w.examples?.[command]);
    add(command, KERNEL_EXAMPLES[command]);
  }
  add("fidelity", KERNEL_EXAMPLES.fidelity);
  for (const w of worlds) add("fidelity", w.fidelity?.examples);
  const visit = (spec: WorldCommand, path: string): void => {
    add(path, spec.examples);
    for (const sub of spec.subcommands ?? []) visit(sub, `${path} ${sub.name}`);
  };
  for (const w of worlds) for (const spec of w.commands ?? []) visit(spec, spec.name);
  return examples;
}

/** Ends each command's --help with its examples (keyed by the command's path). */
export function addHelpExamples(program: Command, examples: Readonly<Record<string, readonly string[]>>): void {
  const visit = (command: Command, path: string): void => {
    const lines = examples[path];
    if (lines !== undefined) command.addHelpText("after", `\nExamples:\n${lines.map((line) => (line.startsWith("#") ? `  ${line}` : `  $ ${line}`)).join("\n")}`);
    for (const sub of command.commands) visit(sub, path === "" ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, "");
}
