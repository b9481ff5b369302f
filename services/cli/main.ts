// The `probetown` command line. Exit codes (stable, for scripts):
//   0 success · 1 verification failed (the log is intact but replay diverges from it)
//   2 bad usage or input (flags, config, unknown world/condition) · 3 the log is damaged
//   (corrupt, torn, unknown event type, malformed payload) · 4 unexpected internal error
//   5 finished, but the model endpoint refused (key, model, URL), could not be reached or answered
//   every call to a model with an error, so its calls fell back to the deterministic backends (the
//   log is complete and valid)
//
// This module defines the program (flags, help) and maps errors to exit codes; each command's action
// lives in commands/ (or the module named at it) and is loaded when that command runs, so --version,
// --help and a mistyped flag load no NATS, OpenTelemetry, model client, Effect or actors
// (test/cli-startup.test.ts checks). The worlds' commands, and what they add to the shared ones,
// come from their command-line manifests (worldCli.ts), named in services/worlds.ts: nothing here
// names a world (test/world-names.test.ts checks).
import { resolve } from "node:path";
import { Command, Option } from "commander";
import { loadWorldClis, loadWorlds, worldNames } from "../worlds.ts";
import { SEED_RULE } from "../../actors/rng.ts";
import { askReplicas, DEFAULT_NAMESPACE, DEFAULT_NATS_OUTAGE_S, MAX_REPLICAS, MIN_LOCK_TTL_MS, NATS_OUTAGE_ENV, NATS_OUTAGE_RANGE_S, NATS_REPLICAS_ENV, NATS_URL_ENV, NATS_URL_FROM_ENV, parseNatsOutage, parseReplicas, replicasFromSettings, setNatsOutage, shownNatsUrl, splitNatsUrl } from "../../infra/natsSettings.ts";
import { FlagInvalid, UsageError } from "../kernel/usageError.ts";
import { PROBETOWN_VERSION } from "../kernel/version.ts";
import { shownPath } from "../views/text.ts";
import { addHelpExamples, helpExamplesOf } from "./examples.ts";
import { EXIT, exitCodeFor, isDivergence, tagOf } from "./exitCodes.ts";
import { messageFor } from "./messages.ts";
import { registerFidelity } from "./fidelity.ts";
import { registerLlm } from "./llmCommand.ts";
import { configFlag, integer, MAX_TICKS, MAX_WORKERS, WORKERS_PER_CORE } from "./flags.ts";
import { addLlmOptions } from "./llmOptions.ts";
import { type CommandAction, type SharedCommand, type WorldCli, type WorldCommand } from "./worldCli.ts";

export { EXIT, exitCodeFor };

/** `--nats <url>` (what it does for this command) and its `--namespace <ns>`. */
const natsOption = (help: string) => new Option("--nats <url>", `${help}; \`--nats ${NATS_URL_FROM_ENV}\` reads the URL from ${NATS_URL_ENV} (credentials stay out of ps)`);

/**
 * `--nats-outage <s>`, beside every `--nats`: how long a server that went away (or hangs) is waited
 * for. No commander default: unset, PROBETOWN_NATS_OUTAGE or the default applies (see the hook).
 */
const natsOutageOption = () =>
  new Option("--nats-outage <s>", `with --nats: ride out a NATS server outage (down, restarting, hung, not up yet at the start) of up to this many seconds: the first connect is retried, and log publishes, snapshot writes, reads, requests to actor hosts and follow wait for the server, this long; past it the command stops with exit 2 (a run says the --resume command that continues it) (default: ${NATS_OUTAGE_ENV}, else ${DEFAULT_NATS_OUTAGE_S})`).argParser((value: string) => {
    const s = parseNatsOutage(value);
    if (s === null) throw new FlagInvalid(`expected whole seconds from ${NATS_OUTAGE_RANGE_S.min} to ${NATS_OUTAGE_RANGE_S.max}, got '${value}'`);
    return s;
  });

/**
 * `--nats env`: the URL (with any credentials) comes from PROBETOWN_NATS_URL, so it stays out of
 * `ps`, shell history and the command lines of the workers `sweep --workers` starts.
 */
function natsUrlFromEnv(): string {
  const url = process.env[NATS_URL_ENV];
  if (url === undefined || url.trim() === "") throw new UsageError(`--nats env: reads the server URL from ${NATS_URL_ENV}, which is not set`);
  return url.trim();
}

/** Checks a --nats URL as it is read: nats.js would take an http:// or tls:// URL and fail later, or connect without TLS. */
function checkNatsUrl(value: string): void {
  const { scheme, credentials, rest } = splitNatsUrl(value);
  const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?\/?$/.exec(rest);
  // Said by us, not commander, whose message would repeat the value with any password in it. A
  // list of servers (`nats://a:4222,nats://b:4222`) is not taken either.
  if ((scheme !== "" && scheme.toLowerCase() !== "nats://") || m === null || Number(m[2] ?? 4222) > 65535 || credentials?.includes("://") === true) throw new UsageError(`--nats: expected a NATS server URL like nats://127.0.0.1:4222 (host and port; TLS is not configured by probetown), got '${shownNatsUrl(value)}'`);
}
const namespaceOption = () =>
  new Option("--namespace <ns>", "JetStream namespace (stream, queue and bucket names) with --nats").default(DEFAULT_NAMESPACE).argParser((value: string) => {
    // It becomes a subject token and part of stream names (at most 255 characters with their prefixes).
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(value)) throw new FlagInvalid(`expected 1–200 letters, digits, '-' or '_' (it names NATS subjects and streams), got '${value}'`);
    return value;
  });

/** `--nats-replicas <n>` on the commands that create JetStream streams and buckets. */
const replicasOption = () =>
  new Option(
    "--nats-replicas <n>",
    `with --nats: servers of a JetStream cluster that keep each stream and bucket created (1–${MAX_REPLICAS}; default: ${NATS_REPLICAS_ENV}, else 1); an existing one with another count is refused (exit 2), one left unset is taken as it is`,
  ).argParser((value: string) => {
    try {
      return parseReplicas(value, "--nats-replicas");
    } catch {
      throw new FlagInvalid(`expected an integer from 1 to ${MAX_REPLICAS}, got '${value}'`);
    }
  });

function episodeOptions(cmd: Command): Command {
  return cmd
    .option("--log <dir>", "episode directory to create (default: runs/<episode>, suffixed if taken)")
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: jsonl beside the log)")
    .option("--snapshot-every <n>", "keep a snapshot every n ticks; 0 keeps only the last (default: by the log's growth and the run's time, see --snapshot-log-bytes and --snapshot-seconds; always the last tick)", integer("--snapshot-every", 0))
    .addOption(new Option("--snapshot-log-bytes <n>", "without --snapshot-every: keep a snapshot once the log has grown by n bytes since the last one (default: 10× the last snapshot's size, or 400 KB an actor before the first, at least 1 MiB: snapshots stay near a tenth of the log)").argParser(integer("--snapshot-log-bytes", 1)).conflicts("snapshotEvery"))
    .addOption(new Option("--snapshot-seconds <s>", "without --snapshot-every: also keep one once s seconds of run time have passed since the last one (default: 60); never sooner than 9× the last one's cost after it").argParser(integer("--snapshot-seconds", 1)).conflicts("snapshotEvery"))
    .addOption(new Option("--fsync <policy>", "when the log is made durable: every append, every tick commit, at snapshots only (a crash loses the ticks since, which `run --resume` re-runs), or never forced").choices(["always", "commit", "snapshot", "never"]).default("commit"))
    .option("--no-summary", "skip the readable summary")
    .option("--json", "print a machine-readable result")
    .option("-q, --quiet", "print only where the log and trace went");
}

/** The options the worlds add to a shared command, each world's under its own heading in --help; returns whose each is. */
function addWorldOptions(command: Command, name: SharedCommand, worlds: readonly WorldCli[]): { readonly world: string; readonly option: Option }[] {
  return worlds.flatMap((w) =>
    (w.options?.[name]?.() ?? []).map((option) => {
      command.addOption(option.helpGroup(`Options for ${w.world}:`));
      return { world: w.world, option };
    }),
  );
}

/**
 * On a command that names its world (`run <world>`, `sweep <world>`), an option another world
 * added is refused: it would be ignored.
 */
function refuseOtherWorldsOptions(command: Command, name: SharedCommand, owned: readonly { readonly world: string; readonly option: Option }[]): void {
  command.hook("preAction", (_program, action) => {
    const world = action.args[0];
    for (const { world: owner, option } of owned) {
      if (owner !== world && action.getOptionValueSource(option.attributeName()) === "cli") throw new UsageError(`${option.long} is for \`${name} ${owner}\` only`);
    }
  });
}

/** Words wrapped to lines of at most `width` characters (the first's indent not counted), each line after the first indented by `indent`. */
function wrapped(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line].join("\n");
}

/** The worlds' notes on a shared command, at the end of its --help (before its examples), wrapped at 80 columns. */
function addWorldNotes(command: Command, name: SharedCommand, worlds: readonly WorldCli[]): void {
  const blocks = worlds.flatMap((w) => {
    const notes = w.notes?.[name] ?? [];
    return notes.length === 0 ? [] : [`  ${w.world}:`, ...notes.map((note) => `    - ${wrapped(note, 74, "      ")}`)];
  });
  if (blocks.length > 0) command.addHelpText("after", `\nNotes:\n${blocks.join("\n")}`);
}

export async function buildProgram(exit: (code: number) => void): Promise<Command> {
  const worlds = await loadWorldClis();
  const names = worldNames();
  const program = new Command()
    .name("probetown")
    .version(PROBETOWN_VERSION, "-V, --version", "print probetown's version")
    .description("Event-sourced multi-agent simulation: run, replay, verify, fork and inspect episodes.\nExit codes: 0 ok · 1 verification failed · 2 bad usage/input · 3 damaged log or snapshot · 4 internal error · 5 finished, but the model endpoint refused (key, model, URL), could not be reached or answered every call to a model with an error: its calls fell back to the deterministic backends (the log is complete and valid)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .hook("preAction", (_program, command) => {
      const given = command.opts().nats as string | undefined;
      const nats = given === NATS_URL_FROM_ENV ? natsUrlFromEnv() : given;
      if (nats !== given) command.setOptionValue("nats", nats);
      if (nats !== undefined) checkNatsUrl(nats);
      // The outage window: the flag, else the variable (refused when it holds no window), else the default.
      const outage = command.opts().natsOutage as number | undefined;
      const fromEnv = process.env[NATS_OUTAGE_ENV];
      if (outage === undefined && nats !== undefined && fromEnv !== undefined && fromEnv.trim() !== "" && parseNatsOutage(fromEnv) === null) {
        throw new UsageError(`${NATS_OUTAGE_ENV}='${fromEnv}': expected whole seconds from ${NATS_OUTAGE_RANGE_S.min} to ${NATS_OUTAGE_RANGE_S.max} (the NATS outage window, as --nats-outage)`);
      }
      if (outage !== undefined && nats === undefined) throw new UsageError(`--nats-outage ${outage}: the outage window applies with --nats <url>`);
      setNatsOutage(outage ?? null);
      // A namespace only means something in JetStream: given without --nats it would be ignored.
      if (command.getOptionValueSource("namespace") === "cli" && command.opts().nats === undefined) {
        throw new UsageError(`--namespace ${String(command.opts().namespace)}: a namespace applies with --nats <url> (without it everything stays in files)`);
      }
      const replicas = command.opts().natsReplicas as number | undefined;
      if (replicas !== undefined && command.opts().nats === undefined) {
        throw new UsageError(`--nats-replicas ${replicas}: a replica count applies with --nats <url> (without it everything stays in files)`);
      }
      askReplicas(replicas);
      // A bad PROBETOWN_NATS_REPLICAS is said before the command starts, not when it first creates a stream.
      if (command.opts().nats !== undefined) replicasFromSettings();
    })
    // Every command may read a log or run an episode: the worlds' record types and modules, once its flags are checked.
    .hook("preAction", () => loadWorlds())
    // A command run in this process after this one (the tests run many) does not inherit its count.
    .hook("postAction", () => askReplicas(undefined));
  const wrap =
    <A extends unknown[]>(fn: (...args: A) => Promise<number> | number) =>
    async (...args: A) =>
      exit(await fn(...args));
  /** An action whose module is loaded when its command runs (`load` returns the action). */
  const lazy = <A extends unknown[]>(load: () => Promise<(...args: A) => Promise<number> | number>) => wrap(async (...args: A) => (await load())(...args));
  /** A world's command (and its subcommands), its action loaded when it runs. */
  const addWorldCommand = (parent: Command, spec: WorldCommand, heading?: string): void => {
    // Two worlds may put subcommands under one command (`eval implicit`, `eval enacttom`): the
    // second adds its own to the command the first made.
    const existing = spec.action === undefined ? parent.commands.find((c) => c.name() === spec.name) : undefined;
    if (existing !== undefined) {
      for (const sub of spec.subcommands ?? []) addWorldCommand(existing, sub);
      return;
    }
    const command = parent.command(spec.name).description(spec.description);
    if (heading !== undefined) command.helpGroup(heading);
    for (const argument of spec.arguments ?? []) command.argument(argument.name, argument.description);
    for (const option of spec.options?.() ?? []) command.addOption(option);
    for (const sub of spec.subcommands ?? []) addWorldCommand(command, sub);
    const action = spec.action;
    if (action !== undefined) command.action(lazy<unknown[]>(async () => (await action()) as CommandAction));
  };

  /** The shared command just defined, with what the worlds add to it: options, notes, and a check that a world's option goes with that world. */
  const shared = (name: SharedCommand): Command => {
    const command = program.commands.at(-1)!;
    const owned = addWorldOptions(command, name, worlds);
    if (name === "run" || name === "sweep") refuseOtherWorldsOptions(command, name, owned);
    addWorldNotes(command, name, worlds);
    return command;
  };
  const configExamples = worlds.flatMap((w) => (w.configExample === undefined ? [] : [`'${w.configExample}' (${w.world})`])).join(", ");

  program.commandsGroup("Episodes:");

  episodeOptions(
    program
      .command("run")
      .description("run an episode on the embedded default (file log, in-process actors) and print where the log went")
      .argument("<world>", `world to run (${names.join(", ")})`)
      .requiredOption("--seed <n>", `episode seed (required): ${SEED_RULE}, as in sweep --seeds and eval --seeds`, integer("--seed", 0))
      .option("--condition <name>", "named condition (default: the world's, marked in `probetown worlds`)")
      .option("--ticks <n>", "ticks to run (default: one day)", integer("--ticks", 1, MAX_TICKS, " (ticks per episode)"))
      .option("--days <n>", "days to run (34 ticks each by default)", integer("--days", 1))
      .option("--config <file|json>", `world config overrides, merged over the defaults: a JSON file, or the object inline${configExamples === "" ? "" : `: ${configExamples}`}`, configFlag)
      .addOption(natsOption("distributed: log and snapshots in JetStream, actors reachable over NATS (e.g. nats://127.0.0.1:4222)"))
      .addOption(natsOutageOption())
      .addOption(namespaceOption())
      .addOption(replicasOption())
      .option("--remote <ids>", "with --nats: actors served by `probetown actor-host` processes (comma-separated ids, or 'all')")
      .option("--resume", "continue an interrupted episode with the same settings (its --log directory, default runs/<episode>, or its JetStream log): restore the latest snapshot the log reaches (one past a cut log's end is kept, not used), check the logged tail, append the rest (with --remote, the actor hosts restore it too)"),
  );
  addLlmOptions(program.commands.at(-1)!);
  shared("run").action(lazy(async () => (await import("./commands/run.ts")).cmdRun));

  episodeOptions(
    program
      .command("fork")
      .description("start a child episode from a parent's state after tick <t>, under a condition")
      .argument("<log>", "parent episode directory (with --nats: the parent's episode id)")
      .addOption(natsOption("the parent's log is in JetStream, and the child's goes there too"))
      .addOption(natsOutageOption())
      .addOption(namespaceOption())
      .addOption(replicasOption())
      .requiredOption("--at <tick>", "fork after this committed tick", integer("--at", 0))
      .requiredOption("--condition <name>", "the child's condition")
      .option("--ticks <n>", "total ticks of the child (default: the parent's)", integer("--ticks", 1, MAX_TICKS, " (ticks per episode)"))
      .option("--reuse-llm", "serve the parent's recorded LLM answers for identical requests (no HTTP); others go to --llm, or fall back"),
  );
  addLlmOptions(program.commands.at(-1)!, { fork: true });
  shared("fork").action(lazy(async () => (await import("./commands/fork.ts")).cmdFork));

  program
    .command("verify")
    .description("check the hash chain, replay every actor and recompute every tick's state hash; exit 0 when the log holds")
    .argument("<log>", "episode directory (with --nats: the episode id, or a name of log objects, as a sweep keeping its logs in JetStream prints it: every log below it), or a folder of episodes (a sweep's --log, an eval's --out): every episode below it is verified, on every core")
    .option("--json", "machine-readable report")
    .option("--snapshots", "also check every stored snapshot hashes to its key (exit 3 naming each damaged one)")
    .option("--chain-only", "check the log's integrity without replaying any actor, reading it record by record: hash chain, record envelopes, catalogue, header, fork link and tick sequence (each tick opened by its tick.started, closed by a tick.committed whose state hash is the hash of its recorded parts); exit 3 for damage, 1 for a record that breaks the tick sequence (as the full verify's replay reports it); several times faster, but it does not recompute any state")
    .option("--threads <n>", "threads in all: an episode directory with snapshots inside its log is replayed in spans between them, the spans on worker threads while this one checks the chain (a small log, or one without snapshots, on one thread; failures are reported as on one thread); a folder: episodes verified at once (default: every core; a folder of under 1 MiB of logs on this thread, sooner than worker threads start)", integer("--threads", 1, 256))
    .option("-q, --quiet", "no progress bar (shown on a terminal, for one episode or a folder of them)")
    .addOption(natsOption("verify a log kept in JetStream"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption());
  shared("verify").action(lazy(async () => (await import("./commands/verify.ts")).cmdVerify));

  program
    .command("export-logs")
    .helpGroup("Distributed (NATS):")
    .description("write the finished logs a sweep kept in JetStream (its log objects, below the name it printed) to files: the object <sweep>/<path> to <out>/<path>/log/000000000000.jsonl, the folder a sweep's --log <out> would hold (verify and the world's reports read it); exit 3 naming an object that cannot be read back as stored")
    .argument("<name>", "the sweep's name in the namespace's log objects (its summary's log, jetstream:<namespace>/<name>), or a name below it")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .requiredOption("--out <dir>", "a new or empty directory for the logs")
    .option("--json", "print what was written as JSON")
    .option("-q, --quiet", "no notes about the connection")
    .action(lazy(async () => (await import("./logObjects.ts")).cmdExportLogs));

  program
    .command("actor-host")
    .helpGroup("Distributed (NATS):")
    .description("host some actors of an episode in this process, for a sequencer run with --nats --remote; exits when the episode ends (its sequencer releases them, or its last tick is committed; at once for a finished episode), or with exit 2 when its sequencer has gone quiet (--idle-timeout)")
    .argument("<episode>", "episode id (<world>-s<seed>-<condition>, as `run` prints it)")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .requiredOption("--actors <ids>", "comma-separated actor ids (as `replay --state` lists them: agent/<name>, env/<world>) or 'all'")
    .option("--idle-timeout <seconds>", "while serving, stop (exit 2) when the sequencer has asked nothing for this long: it has gone (default 300)", integer("--idle-timeout", 1))
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none; a bare jsonl writes actor-host-<pid>.trace.jsonl in the current directory)")
    .option("-q, --quiet", "print nothing")
    .action(lazy(async () => (await import("./distributed.ts")).cmdActorHost));

  program
    .command("worker")
    .helpGroup("Distributed (NATS):")
    .description("take jobs from the JetStream work queue and run them: episodes of `sweep <world> --nats` (a redelivered job resumes its partial log) and the jobs of a world's own sweep (see `sweep --help`; an LLM agent's jobs call its endpoint with this process's PROBETOWN_LLM_API_KEY or OPENAI_API_KEY); Ctrl-C stops after the running jobs, saying what it did; a second Ctrl-C stops at once, leaving them to the queue (redelivered after its ack wait, continued from their logs)")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .addOption(replicasOption())
    .option("--concurrency <n>", "episodes run at once by this worker", integer("--concurrency", 1), 1)
    .option("--name <name>", "worker name shown in outcomes")
    // No commander defaults: only a flag actually given changes a namespace that already has a queue or lock bucket.
    .option("--ack-wait <ms>", "a job is redelivered when its worker is silent this long (default: 30000 for a new namespace, else the namespace's; given, it updates the namespace's queue)", integer("--ack-wait", 1000))
    .option("--lock-ttl <ms>", "an episode's writer lock expires this long after its writer died (default: 10000 for a new namespace, else the namespace's; given, it sets the namespace's, higher or lower)", integer("--lock-ttl", MIN_LOCK_TTL_MS))
    .addOption(new Option("--fsync <policy>", "when an episode's log is published: every tick commit, or at snapshots and the end (a redelivered job re-runs the ticks since)").choices(["commit", "snapshot"]).default("snapshot"))
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none; a bare jsonl writes worker-<pid>.trace.jsonl in the current directory): each episode continues its job's trace (a traced sweep's), a job of a world's own sweep is a span with one per episode")
    .option("--notes-only", "print only what concerns a job's log: what a redelivered job's resume cut or passed over, and waits for another writer's lock (not the jobs taken and done; a sweep's local workers run so)")
    .option("-q, --quiet", "print nothing but what a redelivered job's resume cut or passed over, as run --resume -q")
    .action(lazy(async () => (await import("./distributed.ts")).cmdWorker));

  program
    .command("follow")
    .helpGroup("Distributed (NATS):")
    .description("print an episode's JetStream log live: the records already written, then each new one as it is appended; stops after its last tick is committed (Ctrl-C stops earlier)")
    .argument("<episode>", "episode id (<world>-s<seed>-<condition>, as `run` prints it); it may not have started yet")
    .addOption(natsOption("NATS server with JetStream").makeOptionMandatory())
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .option("--from-seq <n>", "start at this record seq (default: the first)", integer("--from-seq", 0))
    .option("--json", "one record per line as JSON (the log's records, meta included)")
    .option("-q, --quiet", "no status lines on stderr")
    .action(lazy(async () => (await import("./distributed.ts")).cmdFollow));

  program
    .command("sweep")
    .description("run a matrix of episodes (seeds × conditions): in this process, or queued for workers with --nats; prints a summary and, for a world with metrics, each condition's means and a paired-by-seed comparison with the first condition")
    .argument("<world>", `world to run (${names.join(", ")})`)
    .requiredOption("--seeds <list>", `seeds: ranges and lists like 1-200 or 1,5,9 (each ${SEED_RULE}, as run --seed)`)
    .option("--conditions <list>", "comma-separated conditions (default: the world's, see `probetown worlds`)")
    .option("--ticks <n>", "ticks per episode (default: one day)", integer("--ticks", 1, MAX_TICKS, " (ticks per episode)"))
    .option("--config <file|json>", "world config overrides: a JSON file, or the object inline", configFlag)
    .option("--snapshot-every <n>", "keep a snapshot every n ticks; 0 keeps only the last (default: as run, by the log's growth and the run's time; a resumed job restarts from the latest)", integer("--snapshot-every", 0))
    .addOption(natsOption("queue the episodes in JetStream for `probetown worker` processes (a world's own sweep queues its jobs: see Notes)"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .addOption(replicasOption())
    .option("--workers <n>", `with --nats: start n local worker processes for this sweep (0: use workers started elsewhere); a world's own sweep may take it without --nats (see Notes); at most ${WORKERS_PER_CORE} per core without --many-workers`, integer("--workers", 0, MAX_WORKERS), 0)
    .option("--many-workers", `allow --workers above ${WORKERS_PER_CORE} per core (up to ${MAX_WORKERS}): for workers that mostly wait on a model endpoint`)
    .option("--out <file>", "write every outcome as JSON")
    .option("--json", "print the outcomes as JSON")
    .option("-q, --quiet", "print only the summary, and what an episode's resume cut or passed over (as run --resume -q)")
    .option("--log <dir>", "where the episodes go: <dir>/<episode id> (default runs/<episode id>; an existing one of the same episode is resumed, or kept when finished)")
    .option("--trace <exporter>", "trace export: none | console | jsonl[:<file>] | otlp[:<url>] (default: none): a span per job, whose trace its episode continues (one trace per episode; workers started by --workers trace alike); a bare jsonl writes each episode's trace beside its log, without job spans");
  addLlmOptions(program.commands.at(-1)!);
  shared("sweep").action(lazy(async () => (await import("./commands/sweep.ts")).cmdSweep));

  program
    .command("replay")
    .description("rebuild an episode's state from its log (no model calls) and print its state hash")
    .argument("<log>", "episode directory (with --nats: the episode id)")
    .option("--to-tick <t>", "stop after this tick", integer("--to-tick", 0))
    .option("--state", "print every actor's state at that tick")
    .option("--agent <id>", "with --state: only this actor's state (id like lin-wei, or name)")
    .option("--snapshot", "keep a snapshot of that tick in the episode's snapshots/, or with --nats in its JetStream snapshot store (any committed tick)")
    .option("--json", "machine-readable result")
    .addOption(natsOption("replay a log kept in JetStream"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption());
  shared("replay").action(lazy(async () => (await import("./commands/replay.ts")).cmdReplay));

  program
    .command("inspect")
    .description("readable timeline: who did what where, and each agent's private state and beliefs by tick")
    .argument("<log>", "episode directory (with --nats: the episode id)")
    .option("--from <tick>", "first tick to show", integer("--from", 0))
    .option("--to <tick>", "last tick to show", integer("--to", 0))
    .option("--agent <id>", "only this agent (id like lin-wei, or name)")
    .option("--json", "per-tick state as JSON")
    .addOption(natsOption("inspect a log kept in JetStream"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption());
  shared("inspect").action(lazy(async () => (await import("./commands/inspect.ts")).cmdInspect));

  program
    .command("diff")
    .description("what differs between two episodes of one world (a fork and its parent, two forks, two runs), from their logs alone: the first differing record, record counts by type, and whose state differs from which tick, over the ticks both hold")
    .argument("<a>", "episode directory (with --nats: the episode id)")
    .argument("<b>", "episode directory (with --nats: the episode id)")
    .option("--exit-code", "exit 1 when the two differ over the ticks both hold (or hold none in common), 0 when identical")
    .option("--json", "machine-readable result")
    .addOption(natsOption("compare logs kept in JetStream (both in --namespace)"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption());
  shared("diff").action(lazy(async () => (await import("./diff.ts")).cmdDiff));

  program
    .command("repair")
    .description("cut a torn final record (a crash mid-write) back to the last good record; the cut bytes are kept beside the log")
    .argument("<log>", "episode directory")
    .action(lazy(async () => (await import("./commands/repair.ts")).cmdRepair));

  program
    .command("ui")
    .description("serve the dashboard (episodes, fork tree, timeline, record detail, new records live, compare, fork here, sweep and report charts, a tick's spans) over the episodes under a folder; reads logs, and writes only the forks asked for, below the folder")
    .option("--runs <dir>", "folder whose episode directories (and those below) are shown", "runs")
    .option("--port <n>", "port to listen on (0: any free one)", integer("--port", 0, 65535), 4173)
    .option("--host <host>", "address to listen on (another than loopback shows the logs to the network)", "127.0.0.1")
    .addOption(natsOption("also show the episodes whose logs a JetStream namespace holds (live, as for files)"))
    .addOption(natsOutageOption())
    .addOption(namespaceOption())
    .option("--jaeger <url>", "a Jaeger UI's address: a tick's span tree links to its trace there")
    .action(lazy(async () => (await import("./commands/ui.ts")).cmdUi));

  program.command("worlds").description("list worlds and their conditions").action(lazy(async () => (await import("./commands/worlds.ts")).cmdWorlds));

  program.commandsGroup("Measurements:");
  registerFidelity(program, worlds, lazy);
  program.commandsGroup("Local model:");
  registerLlm(program, exit);
  for (const w of worlds) for (const spec of w.commands ?? []) addWorldCommand(program, spec, w.heading ?? `Commands of ${w.world}:`);
  // Commander marks no option as required in the help: `report --help` showed --out like any other.
  const markRequired = (command: Command): void => {
    for (const option of command.options) if (option.mandatory && !option.description.includes("(required)")) option.description += " (required)";
    command.commands.forEach(markRequired);
  };
  markRequired(program);
  addHelpExamples(program, helpExamplesOf(worlds));
  return program;
}

export async function main(argv: string[]): Promise<void> {
  let code: number = EXIT.ok;
  let program: Command;
  try {
    program = await buildProgram((c) => (code = c));
  } catch (error) {
    // A world's manifest that does not load is this build's fault.
    process.stderr.write(`probetown: error: ${(error as Error).message}\n`);
    process.exitCode = EXIT.internal;
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const e = error as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === "string" && e.code.startsWith("commander.")) {
      code = e.code === "commander.helpDisplayed" || e.code === "commander.version" || e.code === "commander.help" ? EXIT.ok : EXIT.usage;
    } else {
      code = exitCodeFor(error);
      const label = tagOf(error) === "SnapshotDamaged" ? "damaged snapshot" : code === EXIT.damaged ? "damaged log" : code === EXIT.diverged ? "divergence" : "error";
      process.stderr.write(`probetown: ${label}: ${messageFor(error)}\n`);
      if (isDivergence(error)) for (const line of error.details) process.stderr.write(`  ${line}\n`);
      // A torn tail (events/errors.ts TornTail) is what a crash mid-write leaves: say how to get past it (commands that read a log refuse it as it is).
      const torn = tagOf(error) === "TornTail" ? (error as { readonly file: string }) : null;
      if (torn !== null && torn.file.endsWith(".jsonl")) {
        const dir = shownPath(resolve(torn.file, "..", ".."));
        const { peekLog } = await import("../../infra/fileEventStore.ts");
        const fork = peekLog(resolve(torn.file, "..")).first?.type === "episode.forked";
        process.stderr.write(`  \`probetown repair ${dir}\` cuts the log back to its last good record (the cut bytes are kept beside it)${fork ? "" : `; \`probetown run … --log ${dir} --resume\` continues the episode`}\n`);
      }
      if (code === EXIT.internal && process.env.PROBETOWN_DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
    }
  }
  process.exitCode = code;
}

// A reader that stops early (`probetown inspect … | head`) closes the pipe: stop quietly, as Unix
// tools do, instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(typeof process.exitCode === "number" ? process.exitCode : EXIT.ok);
  });
}

// Run as the CLI (`node services/cli/main.ts`; bin/probetown.js calls main itself), not when imported
// for buildProgram (services/cli/reference.ts renders docs/cli.md from it).
if (import.meta.main) await main(process.argv);
