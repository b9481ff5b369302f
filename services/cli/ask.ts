// `probetown ask <episode> --tick <n> --agent <name> "question" [--condition c] [--out dir] [--json]`:
// the command and its flags; its action (commands/ask.ts) is loaded when it runs.
import { Command } from "commander";
import { SCENE_CONDITIONS } from "../../actors/aura/conditions.ts";
import type { AskFlags } from "./commands/ask.ts";
import { addLlmOptions } from "./llmOptions.ts";
import { FlagInvalid } from "../kernel/usageError.ts";

function integer(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim())) throw new FlagInvalid(`${flag} expects an integer ≥ 0, got '${value}'`);
    return Number(value);
  };
}

export function registerAsk(program: Command, exit: (code: number) => void): void {
  program
    .command("ask")
    .description(
      "put a question to the AURA controller as a resident of a recorded (or running) AURATown episode, on its state after --tick: " +
        "prints the IntentFrame, each probe and its result, the budget used and the answer; the fork's log goes to --out " +
        "(default runs/ask/…), the episode itself is only read",
    )
    .argument("<episode>", "AURATown episode directory (a running one: its committed ticks are read)")
    .argument("<question>", "the question, quoted")
    .requiredOption("--tick <n>", "a committed tick of the episode: the state after it is asked", integer("--tick"))
    .requiredOption("--agent <name>", "the resident asking (name or slug, e.g. 'Lin Wei' or lin-wei)")
    .option("--condition <name>", `aura-intent (default; agent-state probes), aura-gap-routed (environment tools), or any of ${Object.keys(SCENE_CONDITIONS).filter((c) => c !== "aura-intent" && c !== "aura-gap-routed").join(", ")}`)
    .option("--max-steps <n>", "probe budget ceiling (default 3 on the agent-state probes, 5 on the environment tools)", integer("--max-steps"))
    .option("--out <dir>", "where the fork's episode goes (default runs/ask/<episode>-t<tick>-<agent>-<condition>)")
    .option("--json", "print the result as JSON");
  addLlmOptions(program.commands.at(-1)!)
    .option("-q, --quiet", "no note on stderr about the backends, nor about model calls waiting for an answer")
    .action(async (episode: string, question: string, flags: AskFlags) => (await import("./commands/ask.ts")).cmdAsk(episode, question, flags, exit));
}
