// The wording of the kernel's and the distributed services' errors (services/kernel/errors.ts,
// services/distributed/errors.ts): one entry per error `kind`, from its typed fields to the line
// the command line prints after "probetown: error: ". The services raise data; the words are here.
// An error's own `message` is made from this table when it is raised (so a caller outside the
// command line reads the same text), which is why this module imports nothing of the command line
// and the error classes as types only. test/error-messages.test.ts snapshots a few entries.
import { SEED_RULE } from "../../actors/rng.ts";
import type { DistributedErrorFields } from "../distributed/errors.ts";
import type { KernelErrorFields } from "../kernel/errors.ts";

type ErrorFields = KernelErrorFields & DistributedErrorFields;
export type ErrorKind = keyof ErrorFields;

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 3 : 1)} MiB`;
const list = (items: readonly string[]): string => items.join(", ");
const logFlag = (dir: string, given: string | undefined): string => (given === undefined ? dir : `--log ${given}`);

export const MESSAGES: { readonly [K in ErrorKind]: (f: ErrorFields[K]) => string } = {
  NotAnEpisode: (f) =>
    f.reason === "missing" ? `${f.path}: no such episode directory`
    : f.reason === "no-log-folder" ? `${f.path}: not an episode directory (expected a log/ folder inside)`
    : `${f.path}: not an episode log (a log segment lies in an episode's log/ folder; a trace or results file is not one): give the episode directory, the folder holding log/${f.beside === undefined ? "" : ` (${f.beside} for the episode this file lies in)`}`,
  LogEmpty: (f) => `${f.file}: the log is empty (no records under that episode id in that namespace: check the id and --namespace)`,
  LogStartInvalid: (f) => `${f.file}: seq ${f.seq}: a log must begin with episode.started or episode.forked, found '${f.found}'`,
  ForkBaseMissing: (f) => `${f.snapshots}: the fork's base snapshot ${f.key.slice(0, 12)}… is missing${f.detail === undefined ? "" : `, and ${f.detail}`}`,
  ForkConditionFixed: (f) => `${f.world} cannot fork into another condition (its actors keep the parent's '${f.condition}'); fork with --condition ${f.condition}`,
  TickNotCommitted: (f) =>
    `no committed tick ${f.tick} in the log of ${f.episode}${f.forkBaseOf === undefined ? "" : `: tick ${f.tick} is the fork's base, the state of its parent ${f.forkBaseOf} after tick ${f.tick}: replay the parent with --to-tick ${f.tick} --snapshot`}`,
  ForkTickMissing: (f) =>
    `--at ${f.atTick}: the parent has no committed tick ${f.atTick} (committed ticks: ${f.committed === null ? "none" : `${f.committed.first}–${f.committed.last}`})${
      f.forkedFrom === undefined ? "" : `; it is a fork of ${f.forkedFrom.parent} after tick ${f.forkedFrom.atTick}, whose log holds the ticks up to ${f.forkedFrom.atTick}: fork ${f.forkedFrom.forkThis} --at ${f.atTick} instead`}`,
  EpisodeNotStarted: (f) => `${f.dir}: not started: ${f.why}; there is nothing to replay or inspect. ${f.how.charAt(0).toUpperCase()}${f.how.slice(1)}`,
  NoRecordsUnderId: (f) => `${f.dir}: no records under that episode id in that namespace (check the id and --namespace)`,
  LogDirUnusable: (f) =>
    f.reason === "empty" ? `--log: expected a directory, got '${f.given}'`
    : f.reason === "is-a-file" ? `--log ${f.given}: is a file; --log takes a directory (created when missing)`
    : `--log ${f.given}: already holds an episode log; choose another directory or remove it`,
  LogDirInEpisode: (f) =>
    `--log ${f.given}: ${f.isFolder ? `is the ${f.kind} folder` : `lies in ${f.folder}, the ${f.kind} folder`} of the episode in ${f.episode}; ${
      f.resumeHere ? `--log names the episode directory: --log ${f.episode}` : "its files would be mixed with that episode's: choose a directory outside it"}`,
  DirNotWritable: (f) =>
    `${logFlag(f.dir, f.given)}: cannot write to ${f.path} (${f.code}); ${
      f.resume ? "the log is left as it is: make it writable to continue it"
      : f.given === undefined ? "give --log a directory you can write to, or run from one" : "choose a directory you can write to"}`,
  TraceFileInEpisode: (f) =>
    `--trace jsonl:${f.file}: lies in ${f.folder}, the ${f.kind} folder of ${f.episode === undefined ? "this episode" : `the episode in ${f.episode}`}: a trace there is written among ${f.episode === undefined ? "its" : "that episode's"} files; name a file outside it`,
  RemoteActorsUnknown: (f) => `--remote: no actor ${list(f.unknown)} in this episode (actors: ${list(f.actors)})`,
  RemoteForkRefused: () => "--remote: a fork runs with all its actors in one process",
  ActorHostsAbsent: (f) =>
    `--remote: no actor host answered for ${list(f.missing)} within ${f.seconds} s (start them with \`probetown actor-host\`; the log so far is kept: then continue the episode with \`run --resume\` and the same flags)`,
  FlagValueInvalid: (f) => `${f.flag}: expected ${f.expected === "seed" ? SEED_RULE : "a positive integer"}, got ${f.got}`,
  TicksFixed: (f) => `--ticks ${f.asked}: ${f.why}`,
  ForkTicksTooFew: (f) =>
    f.asked
      ? `--ticks ${f.ticks}: the child's total ticks, counted from tick 0 as its parent's, so it would end at tick ${f.ticks - 1}; forked after tick ${f.atTick}, it must run past it: give --ticks ${f.atTick + 2} or more`
      : `--at ${f.atTick}: the parent runs ${f.ticks} ticks, so its child would have none left; fork earlier, or give the child --ticks n (n > ${f.atTick + 1})`,
  EpisodeWorldsDiffer: (f) => `${f.a} is an episode of world ${f.worldA} and ${f.b} one of ${f.worldB}: only episodes of one world can be compared`,
  EpisodeHeaderDiffers: (f) =>
    `episode ${f.episode}: the existing log was started with another header (${f.differences.length === 0 ? "it is not an episode.started record" : f.differences.join("; ")}); refusing to continue it`,
  WorldUnknown: (f) => `unknown world '${f.name}' (known: ${list(f.known) || "none registered"})`,
  WorldNameTaken: (f) => `a world named '${f.name}' is already registered`,
  InputFileTooLarge: (f) =>
    `${f.label}: ${f.size === null ? "not a regular file, and more than" : `${mib(f.size)}, more than`} the ${mib(f.limit)} an input ${f.kind} file may hold (docs/configuration.md, "Input files")`,
  InputKeyForbidden: (f) =>
    `${f.label}: key '${f.key}' (at ${f.at}) is refused in an input: it names an object's prototype; remove or rename it`,
  InputNestedTooDeep: (f) => `${f.label}: nested more than ${f.limit} objects or arrays deep (at ${f.at}); an input is refused past that depth`,
  EpisodeFolderRefused: (f) =>
    `${f.dir}: ${
      f.reason === "root" ? "the filesystem root"
      : f.reason === "entries" ? `more than ${(f.limit ?? 0).toLocaleString("en-US")} folders below it`
      : f.reason === "depth" ? `folders nested more than ${f.limit ?? 0} deep below it`
      : `cannot list ${f.path ?? f.dir} (${f.code ?? "?"}) below it`
    }, not a folder of episodes: give an episode directory, or the folder a sweep or an eval wrote its episodes to`,
  ActorStateMissing: (f) => `no actor host reported the ${f.what} of ${f.actor}`,

  ConditionsInvalid: (f) =>
    f.unknown === undefined
      ? `--conditions: expected at least one condition (known: ${list(f.known)})`
      : `--conditions: unknown condition '${f.unknown}' for ${f.world} (known: ${list(f.known)})`,
  ConfigInvalid: (f) => `--config: ${f.detail}`,
  SeedsInvalid: (f) =>
    f.reason === "form" ? `--seeds: expected integers and ranges like 1-200 or 1,5,9 (each seed ${SEED_RULE}), got '${f.part}'`
    : f.reason === "not-a-seed" ? `--seeds: '${f.part}': a seed is ${SEED_RULE}`
    : f.reason === "backwards" ? `--seeds: range '${f.part}' runs backwards`
    : `--seeds: range '${f.part}' has ${f.count} seeds; at most ${(f.max ?? 0).toLocaleString("en-US")} per sweep`,
  JobSpecInvalid: (f) =>
    f.reason === "shape" ? `job ${f.job}: spec must have world (string), seed (integer) and condition (string)` : `job ${f.job}: id must be the episode id ${f.expectedId}`,
  ForkNotHostable: (f) => `episode ${f.episode} is a fork; forks run with all their actors in one process`,
  HostActorsUnknown: (f) => `--actors: episode ${f.episode} has no actor ${list(f.unknown)} (actors: ${list(f.actors)})`,
  LogNeverBegan: (f) => `episode ${f.episode}: stopped before its log began`,
  HostSnapshotUnavailable: (f) =>
    f.reason === "no-store" ? `cannot restore snapshot ${f.key.slice(0, 12)}…: this host has no snapshot store`
    : f.reason === "missing" ? `episode ${f.episode}: snapshot ${f.key.slice(0, 12)}… is not in its snapshot store`
    : `snapshot ${f.key.slice(0, 12)}… is of episode ${f.owner}, not ${f.episode}`,
  LocalWorkersEnded: (f) =>
    `${f.workers === 1 ? "its local worker" : `all ${f.workers} of its local workers`} ended (${f.ends.map((e) => ("code" in e ? `exit ${e.code}` : `killed by ${e.signal}`)).join(", ")}) before the sweep finished`,
  ActorNotHosted: (f) => (f.reason === "not-in-snapshot" ? `snapshot has no state for actor ${f.actor}` : `actor ${f.actor} is not hosted here`),
};

/** The words for an error of `kind` with `fields`. */
export const wordingOf = <K extends ErrorKind>(kind: K, fields: ErrorFields[K]): string => MESSAGES[kind](fields);

/** What the command line prints for an error: a worded error's entry from its fields, else its own message. */
export function messageFor(error: unknown): string {
  if (typeof error === "object" && error !== null && "kind" in error && "fields" in error && typeof error.kind === "string" && Object.hasOwn(MESSAGES, error.kind)) {
    const kind = error.kind as ErrorKind;
    return (MESSAGES[kind] as (f: unknown) => string)(error.fields);
  }
  return error instanceof Error ? error.message : String(error);
}
