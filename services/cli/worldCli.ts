// A world's part of the command line (issue 22, "worlds as modules"): the manifest a world's
// services/<world>/cli.ts exports by default, named in services/worlds.ts beside its module. The
// program (main.ts) is built from the manifests, so a world adds commands, options of the shared
// commands, help notes, examples and its fidelity section without an edit here.
//
// A manifest is read to build the program, for --help and --version too: it imports commander and
// small constants only. Everything a command does is behind `action`, loaded when it runs.
import { Option } from "commander";

/** The shared commands a world may add options, notes and examples to. */
export const SHARED_COMMANDS = ["run", "fork", "verify", "replay", "inspect", "diff", "sweep"] as const;
export type SharedCommand = (typeof SHARED_COMMANDS)[number];

/** A command's action: commander's arguments in (positional ones, then the flags), the exit code out. */
export type CommandAction = (...args: any[]) => Promise<number> | number;

export interface WorldArgument {
  /** As commander writes it: `<spec>`, `[file]`. */
  readonly name: string;
  readonly description: string;
}

export interface WorldCommand {
  readonly name: string;
  readonly description: string;
  readonly arguments?: readonly WorldArgument[];
  /** Its options, in help order: made afresh for each program (commander changes an option it adds). */
  readonly options?: () => readonly Option[];
  /** Subcommands (`eval implicit`): a command with them has no action of its own. */
  readonly subcommands?: readonly WorldCommand[];
  /** Shown at the end of its --help; each runs as shown (test/help-examples.test.ts); a `#` line is a note. */
  readonly examples?: readonly string[];
  /** Its action, loaded when the command runs. */
  readonly action?: () => Promise<CommandAction>;
}

/** The flags of `probetown fidelity` each section is given (its own options' values among them). */
export interface FidelityRun {
  /** Scratch directory for episode logs, removed afterwards. */
  readonly out: string;
  readonly flags: Readonly<Record<string, unknown>>;
  readonly onProgress?: (message: string) => void;
}

/** A world's section of docs/fidelity.md, written by the shared `probetown fidelity`. */
export interface WorldFidelity {
  /** What it measures, for the command's description (`EnvProbe Tables 1-3, 5, 7`). */
  readonly summary: string;
  /** Options of `fidelity` for this section (`--envprobe-seeds`). */
  readonly options?: () => readonly Option[];
  /** Examples of `fidelity` for this section. */
  readonly examples?: readonly string[];
  /** Writes the section (Markdown), loaded when `fidelity` runs. */
  readonly section: () => Promise<(run: FidelityRun) => Promise<string>>;
}

export interface WorldCli {
  /** The world it belongs to (a registered world's name). */
  readonly world: string;
  /** The heading its commands are listed under in --help (`AURA commands:`). */
  readonly heading?: string;
  readonly commands?: readonly WorldCommand[];
  /**
   * Options it adds to shared commands, listed under their own heading. On `run` and `sweep` (which
   * name their world) one given for another world is refused; the world's hooks read the values.
   */
  readonly options?: Partial<Record<SharedCommand, () => readonly Option[]>>;
  /** Lines added to a shared command's --help, under "Notes:". */
  readonly notes?: Partial<Record<SharedCommand, readonly string[]>>;
  /** A `--config` override shown in run's help (`{"speed": 2}`). */
  readonly configExample?: string;
  /** Examples of shared commands, shown in their --help before the kernel's own. */
  readonly examples?: Partial<Record<SharedCommand, readonly string[]>>;
  readonly fidelity?: WorldFidelity;
  /**
   * The exit codes of the world's own error tags (each class carries its code; this lists them
   * beside services/cli/exitCodes.ts's table, so the checks on that table cover them).
   */
  readonly errors?: Readonly<Record<string, number>>;
}

/** Identity, for a manifest's type to be checked where it is written. */
export const defineWorldCli = (cli: WorldCli): WorldCli => cli;

/**
 * An option as commander's `.option(flags, description, parse, default)` makes it (`required`:
 * as `.requiredOption`), for a manifest's option lists.
 */
export function option<T>(flags: string, description: string, parse?: (value: string, previous: T) => T, defaultValue?: T, required = false): Option {
  const made = new Option(flags, description);
  if (parse !== undefined) made.argParser(parse);
  if (defaultValue !== undefined) made.default(defaultValue);
  return required ? made.makeOptionMandatory() : made;
}

/** A required option (`.requiredOption`). */
export const requiredOption = <T>(flags: string, description: string, parse?: (value: string, previous: T) => T, defaultValue?: T): Option => option(flags, description, parse, defaultValue, true);
