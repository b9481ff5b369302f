// `probetown run <world> --seed <n>`: a new episode, on files or in JetStream.
import { existsSync, readdirSync } from "node:fs";
import { resolveNewEpisodeConfig } from "../../../actors/actor.ts";
import type { LogRecord } from "../../../events/record.ts";
import { peekJetStreamLog, readJetStreamLog } from "../../../infra/jetStreamEventStore.ts";
import { natsFlagHint } from "../../../infra/natsSettings.ts";
import { distributedBackend } from "../../../infra/natsBackend.ts";
import { DEFAULT_NAMESPACE, jetStreamWhere, remotePlacement, withNats } from "../../distributed/episodes.ts";
import { episodeIdOf, filesWhere, resumeNotes, runEpisode, type EpisodeResult, type RunOptions } from "../../kernel/episodes.ts";
import { UsageError } from "../../kernel/usageError.ts";
import { isRegisteredWorld, registeredWorlds, worldModuleNamed } from "../../kernel/worlds.ts";
import { shownPath } from "../../views/text.ts";
import { listFlag, lockWaitNotice } from "../distributed.ts";
import { EXIT } from "../exitCodes.ts";
import { readConfigFile } from "../flags.ts";
import { gatewayExit, llmForRun, type LlmCliFlags } from "../llm.ts";
import { diskOf, episodeSession, hintIfExists, callsModels, verifyInNats, type EpisodeFlags, type NatsFlags } from "../session.ts";

/**
 * This command line with `--resume` (and the episode directory, when it was chosen for the run:
 * `run` without `--log` goes to runs/<episode>-2 when runs/<episode> is taken, which a `--resume`
 * without `--log` would not find), quoted for a POSIX shell.
 */
function resumeCommand(dir: string, addLog: boolean): string {
  const args = process.argv.slice(2).filter((a) => a !== "--resume");
  return [...args, ...(addLog ? ["--log", shownPath(dir)] : []), "--resume"].map(quoted).join(" ");
}

const quoted = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);

/**
 * This command line with `--resume`, for a run over NATS, in backquotes: its `--nats` as a printed
 * command gives it (natsFlagHint: a URL with credentials becomes `--nats env`, what to export said
 * after the command).
 */
function natsResumeCommand(url: string): string {
  const hint = natsFlagHint(url);
  const args: string[] = [];
  const given = process.argv.slice(2);
  for (let i = 0; i < given.length; i++) {
    const a = given[i]!;
    if (a === "--resume") continue;
    if (a === "--nats" || a.startsWith("--nats=")) {
      if (a === "--nats") i++;
      args.push(...hint.flag.split(" "));
      continue;
    }
    args.push(a);
  }
  return `\`probetown ${[...args, "--resume"].map(quoted).join(" ")}\`${hint.after}`;
}

export async function cmdRun(worldName: string, flags: EpisodeFlags & NatsFlags & LlmCliFlags & { seed: number; condition?: string; ticks?: number; days?: number; config?: string; agents?: number; remote?: string; resume?: boolean }): Promise<number> {
  if (!isRegisteredWorld(worldName)) throw new UsageError(`unknown world '${worldName}' (known: ${registeredWorlds().map((w) => w.definition.name).join(", ")})`);
  const module = worldModuleNamed(worldName);
  const world = module.definition;
  const fixedBy = world.lengthFixedBy;
  if (fixedBy !== undefined && (flags.ticks !== undefined || flags.days !== undefined)) {
    throw new UsageError(flags.ticks !== undefined ? `--ticks ${flags.ticks}: ${fixedBy(flags.ticks)}` : `--days ${flags.days}: ${fixedBy("n")}`);
  }
  let config: unknown = flags.config === undefined ? undefined : readConfigFile(flags.config);
  // The world's own run flags (its manifest's `options.run`) go into its config.
  const withRunFlags = module.newEpisode?.withRunFlags;
  if (withRunFlags !== undefined) config = withRunFlags(config, flags as unknown as Record<string, unknown>);
  const conditionKey = world.conditionConfigKey;
  if (conditionKey !== undefined && config !== undefined && conditionKey in (config as object)) {
    const named = (config as Record<string, unknown>)[conditionKey];
    throw new UsageError(`--config ${flags.config}: "${conditionKey}" is the ${worldName} condition, chosen by --condition, not the config (the config's ${JSON.stringify(named)} would be overridden by ${flags.condition === undefined ? `the default condition ${world.defaultCondition}` : `--condition ${flags.condition}`}); use --condition ${typeof named === "string" ? named : "<name>"} instead`);
  }
  const checks = module.newEpisode;
  if (flags.agents !== undefined) {
    const growable = registeredWorlds().filter((w) => w.newEpisode?.withAgents !== undefined).map((w) => w.definition.name);
    if (checks?.withAgents === undefined) throw new UsageError(`--agents: only ${growable.join(", ")} ${growable.length === 1 ? "has a roster" : "have rosters"} to grow (${worldName} sets its actors by its config)`);
    config = checks.withAgents(config, flags.agents, flags.config);
  }
  const llm = llmForRun(module, config, flags);
  config = llm.config;
  let resolved: unknown;
  try {
    resolved = resolveNewEpisodeConfig(world, config);
  } catch (error) {
    // Checked here, before anything runs, so the error can name the file it came from.
    throw new UsageError(`${flags.config === undefined ? "" : `--config ${flags.config}: `}${(error as Error).message}`);
  }
  const perDay = world.defaultTicks(resolved);
  if (flags.ticks !== undefined && flags.days !== undefined) throw new UsageError("--ticks and --days both say how long to run: give one of them");
  const ticks = flags.ticks ?? (flags.days === undefined ? undefined : flags.days * perDay);
  // The world and its length, before anything is built (a resumed run is checked as it was started).
  if (checks !== undefined) {
    const length = flags.days !== undefined ? { length: `--days ${flags.days}` } : flags.ticks !== undefined ? { length: `--ticks ${flags.ticks}` } : {};
    const named = { size: flags.agents !== undefined ? `--agents ${flags.agents}` : `--config ${flags.config}: extraAgents`, ...length };
    checks.checkHeap?.(resolved, ticks ?? perDay, named);
    // A resumed run's log is already there; a full disk stops it, and --resume continues it.
    if (flags.nats === undefined && flags.resume !== true) checks.checkDisk?.(resolved, ticks ?? perDay, named, diskOf(flags));
  }
  const condition = flags.condition ?? world.defaultCondition;
  const session = episodeSession(flags, worldName);
  const title = (episode: string) => `${worldName} · seed ${flags.seed} · condition ${condition} · episode ${episode}`;
  // A resume that cuts a damaged tail says what it cut and where the bytes were kept; one that does
  // not continue from the latest snapshot (one past a cut log's end) says which it used.
  const notes = resumeNotes((note) => void process.stderr.write(`run --resume: ${note}\n`), flags.nats === undefined ? "file" : "subject");
  const options: RunOptions = { ...session.options, world: worldName, seed: flags.seed, condition, config, ...(ticks === undefined ? {} : { ticks }), ...(flags.resume ? { resume: true, ...notes } : {}), ...(llm.llm === undefined ? {} : { llm: llm.llm }) };
  if (flags.nats === undefined) {
    if (flags.remote !== undefined) throw new UsageError("--remote: actors in other processes need --nats <url>");
    if (flags.resume && !flags.quiet) {
      // A typo in --log would otherwise start a fresh episode without a word.
      const { dir, log } = filesWhere(flags.log, true)(episodeIdOf(worldName, flags.seed, condition));
      if (!existsSync(log) || readdirSync(log).length === 0) process.stderr.write(`run --resume: no log at ${shownPath(dir)} yet; starting the episode there\n`);
    }
    let result: EpisodeResult;
    try {
      result = await runEpisode(options);
    } catch (error) {
      return session.interrupted(error, (dir) => `continue it with \`probetown ${resumeCommand(dir, flags.log === undefined)}\``);
    }
    const code = session.finish(result, title(episodeIdOf(worldName, flags.seed, condition)));
    return code === EXIT.ok ? gatewayExit("run", llm.gateway) : code;
  }
  if (flags.log !== undefined) throw new UsageError("--log: with --nats the log goes to JetStream; drop --log");
  const ns = flags.namespace;
  const remote = flags.remote;
  const url = flags.nats;
  const namespaceFlag = ns === DEFAULT_NAMESPACE ? "" : ` --namespace ${ns}`;
  // Hosts are often started after the sequencer: say what it waits for, and how to start them.
  const onWait = ({ episode, actors, timeoutMs }: { episode: string; actors: readonly string[]; timeoutMs: number }): void => {
    if (!flags.quiet) process.stderr.write(`run: waiting for actor hosts serving ${actors.join(", ")} of episode ${episode}, up to ${Math.round(timeoutMs / 1000)} s in all (start them with \`probetown actor-host ${episode} ${natsFlagHint(url).flag}${namespaceFlag} --actors ${actors.join(",")}\`${natsFlagHint(url).after})\n`);
  };
  const placement = remote === undefined ? {} : { placement: remotePlacement(ns, listFlag("--remote", remote), onWait) };
  // The model usage is counted from the episode's whole log, read back (a resumed run's earlier calls too).
  let logged = null as LogRecord[] | null;
  const result = await withNats(flags.nats, { role: "run", quiet: flags.quiet, resume: natsResumeCommand(url) }, async (nc) => {
    if (flags.resume && !flags.quiet) {
      // As for a file log: a typo in --namespace would otherwise start a fresh episode without a word.
      const episode = episodeIdOf(worldName, flags.seed, condition);
      const ends = await peekJetStreamLog(nc, ns, episode);
      if (ends.first === null && ends.last === null) process.stderr.write(`run --resume: no log of episode ${episode} in namespace ${ns} yet; starting the episode there\n`);
    }
    const ran = await runEpisode({ ...options, where: jetStreamWhere(ns), ...placement }, distributedBackend(nc, ns, { actors: flags.remote === undefined ? "in-process" : "nats", onLockWait: lockWaitNotice(flags.quiet) })).catch(
      hintIfExists("continue it with --resume, or choose another --namespace"),
    );
    // Read back for the model usage, and the summary (as the file path reads its log file).
    if (callsModels(ran.world) || session.wantsSummary(ran)) logged = await readJetStreamLog(nc, ns, ran.episode);
    return ran;
  });
  const code = session.finish(result, title(result.episode), verifyInNats(result.episode, flags.nats, ns), logged);
  return code === EXIT.ok ? gatewayExit("run", llm.gateway) : code;
}
