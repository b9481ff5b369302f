// The kernel's errors of bad input (exit 2) and broken promises (exit 4), each a class with typed
// fields and no message of its own making: the command line words them (services/cli/messages.ts,
// one entry per `kind`), and the message an error carries is that wording, made from its fields
// when it is raised, so a caller outside the command line reads the same text. Tests and callers
// tell them apart by class (or `kind`) and read the fields, never the message.
import { InternalError } from "../../events/internalError.ts";
import { wordingOf } from "../cli/messages.ts";
import { InputRejected } from "../../events/inputRejected.ts";
import { EpisodeIdTaken, UsageError } from "./usageError.ts";

/** The fields of each kernel error, by its `kind` (the class name). */
export interface KernelErrorFields {
  /** A path given for an episode that is none: absent, without a log/ folder, or a JSONL file outside a log/ folder (`beside`: the folder of the episode it lies in). */
  NotAnEpisode: { readonly path: string; readonly reason: "missing" | "no-log-folder" | "not-a-log-segment"; readonly beside?: string };
  /** A JetStream episode id with no records (most often a typo, or another namespace). */
  LogEmpty: { readonly file: string; readonly hint: "check-id-and-namespace" };
  /** A log whose first record is neither episode.started nor episode.forked. */
  LogStartInvalid: { readonly file: string; readonly seq: number; readonly found: string };
  /** A fork's base snapshot absent from `snapshots` (`detail`: why its parent could not give it either). */
  ForkBaseMissing: { readonly snapshots: string; readonly key: string; readonly detail?: string };
  /** A world without `reconfigure` asked to fork into another condition than the parent's. */
  ForkConditionFixed: { readonly world: string; readonly condition: string };
  /** A replay ended on a tick with no tick.committed (`forkBaseOf`: the parent, when it is a fork's base tick). */
  TickNotCommitted: { readonly episode: string; readonly tick: number; readonly forkBaseOf?: string };
  /** `fork --at` a tick the parent never committed (`committed`: its first and last committed ticks; `forkedFrom`: the episode whose log holds it, when the parent is a fork). */
  ForkTickMissing: {
    readonly atTick: number;
    readonly committed: { readonly first: number; readonly last: number } | null;
    readonly forkedFrom?: { readonly parent: string; readonly atTick: number; readonly forkThis: string };
  };
  /** An episode whose run stopped before its first record (`why`, `how`: services/kernel/replay.ts notStarted). */
  EpisodeNotStarted: { readonly dir: string; readonly why: string; readonly how: string };
  /** `verify` of a JetStream episode id with no records. */
  NoRecordsUnderId: { readonly dir: string };
  /** An explicit `--log` that cannot be an episode directory. */
  LogDirUnusable: { readonly given: string; readonly reason: "empty" | "is-a-file" | "holds-a-log" };
  /** An explicit `--log` inside an episode's log or snapshot folder (`isFolder`: it is that folder itself; `resumeHere`: resuming, so name the episode instead). */
  LogDirInEpisode: { readonly given: string; readonly kind: "log" | "snapshot"; readonly folder: string; readonly episode: string; readonly isFolder: boolean; readonly resumeHere: boolean };
  /** An episode directory this process cannot write (`given`: the `--log` value, if one; `code`: Node's errno code). */
  DirNotWritable: { readonly dir: string; readonly given?: string; readonly path: string; readonly code: string; readonly resume: boolean };
  /** `--trace jsonl:` a file in an episode's log or snapshot folder (`episode`: undefined for this episode). */
  TraceFileInEpisode: { readonly file: string; readonly folder: string; readonly kind: "log" | "snapshot"; readonly episode?: string };
  /** `--remote` names actors the episode has not. */
  RemoteActorsUnknown: { readonly unknown: readonly string[]; readonly actors: readonly string[] };
  /** `--remote` on a fork. */
  RemoteForkRefused: Record<string, never>;
  /** Remote actor hosts that did not answer in time. */
  ActorHostsAbsent: { readonly missing: readonly string[]; readonly seconds: number };
  /** A flag value out of range: `--seed` (a seed) or `--ticks` (a positive integer). */
  FlagValueInvalid: { readonly flag: string; readonly expected: "seed" | "positive-integer"; readonly got: string };
  /** `fork --ticks` for a world whose length is fixed (`why`: the world's own words, world.lengthFixedBy). */
  TicksFixed: { readonly asked: number; readonly why: string };
  /** A fork that would have no tick after its fork tick (`asked`: --ticks was given). */
  ForkTicksTooFew: { readonly atTick: number; readonly ticks: number; readonly asked: boolean };
  /** `diff` of episodes of two worlds. */
  EpisodeWorldsDiffer: { readonly a: string; readonly b: string; readonly worldA: string; readonly worldB: string };
  /** A log under this episode id whose first record differs from the run's (`differences`: each field that differs, in words). */
  EpisodeHeaderDiffers: { readonly episode: string; readonly differences: readonly string[] };
  /** A world name no module registered (`known`: those registered). */
  WorldUnknown: { readonly name: string; readonly known: readonly string[] };
  /** A second world module under a registered name. */
  WorldNameTaken: { readonly name: string };
  /** An input file larger than its kind's limit (`size`: null for a device or pipe read past the limit; services/kernel/inputFile.ts). */
  InputFileTooLarge: { readonly label: string; readonly kind: string; readonly size: number | null; readonly limit: number };
  /** A parsed input with a key naming an object's prototype machinery (`at`: where, like `agents[0].__proto__`). */
  InputKeyForbidden: { readonly label: string; readonly key: string; readonly at: string };
  /** A parsed input nesting objects or arrays deeper than `limit` (`at`: where it passes it). */
  InputNestedTooDeep: { readonly label: string; readonly at: string; readonly limit: number };
  /** `verify` of a folder that cannot be a folder of episodes: the filesystem root, one too wide or deep (`limit`: the bound it passed), or with a folder it cannot list (`path`, `code`). */
  EpisodeFolderRefused: { readonly dir: string; readonly reason: "root" | "entries" | "depth" | "unreadable"; readonly limit?: number; readonly path?: string; readonly code?: string };
  /** An actor host's answer lacks an actor's state or snapshot (exit 4). */
  ActorStateMissing: { readonly actor: string; readonly what: "state" | "snapshot" };
}

export type KernelErrorKind = keyof KernelErrorFields;

export class NotAnEpisode extends UsageError {
  readonly kind = "NotAnEpisode";
  readonly fields: KernelErrorFields["NotAnEpisode"];
  constructor(fields: KernelErrorFields["NotAnEpisode"]) {
    super(wordingOf("NotAnEpisode", fields));
    this.fields = fields;
  }
}
export class LogEmpty extends UsageError {
  readonly kind = "LogEmpty";
  readonly fields: KernelErrorFields["LogEmpty"];
  constructor(fields: KernelErrorFields["LogEmpty"]) {
    super(wordingOf("LogEmpty", fields));
    this.fields = fields;
  }
}
export class LogStartInvalid extends UsageError {
  readonly kind = "LogStartInvalid";
  readonly fields: KernelErrorFields["LogStartInvalid"];
  constructor(fields: KernelErrorFields["LogStartInvalid"]) {
    super(wordingOf("LogStartInvalid", fields));
    this.fields = fields;
  }
}
export class ForkBaseMissing extends UsageError {
  readonly kind = "ForkBaseMissing";
  readonly fields: KernelErrorFields["ForkBaseMissing"];
  constructor(fields: KernelErrorFields["ForkBaseMissing"]) {
    super(wordingOf("ForkBaseMissing", fields));
    this.fields = fields;
  }
}
export class ForkConditionFixed extends UsageError {
  readonly kind = "ForkConditionFixed";
  readonly fields: KernelErrorFields["ForkConditionFixed"];
  constructor(fields: KernelErrorFields["ForkConditionFixed"]) {
    super(wordingOf("ForkConditionFixed", fields));
    this.fields = fields;
  }
}
export class TickNotCommitted extends UsageError {
  readonly kind = "TickNotCommitted";
  readonly fields: KernelErrorFields["TickNotCommitted"];
  constructor(fields: KernelErrorFields["TickNotCommitted"]) {
    super(wordingOf("TickNotCommitted", fields));
    this.fields = fields;
  }
}
export class ForkTickMissing extends UsageError {
  readonly kind = "ForkTickMissing";
  readonly fields: KernelErrorFields["ForkTickMissing"];
  constructor(fields: KernelErrorFields["ForkTickMissing"]) {
    super(wordingOf("ForkTickMissing", fields));
    this.fields = fields;
  }
}
export class EpisodeNotStarted extends UsageError {
  readonly kind = "EpisodeNotStarted";
  readonly fields: KernelErrorFields["EpisodeNotStarted"];
  constructor(fields: KernelErrorFields["EpisodeNotStarted"]) {
    super(wordingOf("EpisodeNotStarted", fields));
    this.fields = fields;
  }
}
export class NoRecordsUnderId extends UsageError {
  readonly kind = "NoRecordsUnderId";
  readonly fields: KernelErrorFields["NoRecordsUnderId"];
  constructor(fields: KernelErrorFields["NoRecordsUnderId"]) {
    super(wordingOf("NoRecordsUnderId", fields));
    this.fields = fields;
  }
}
export class LogDirUnusable extends UsageError {
  readonly kind = "LogDirUnusable";
  readonly fields: KernelErrorFields["LogDirUnusable"];
  constructor(fields: KernelErrorFields["LogDirUnusable"]) {
    super(wordingOf("LogDirUnusable", fields));
    this.fields = fields;
  }
}
export class LogDirInEpisode extends UsageError {
  readonly kind = "LogDirInEpisode";
  readonly fields: KernelErrorFields["LogDirInEpisode"];
  constructor(fields: KernelErrorFields["LogDirInEpisode"]) {
    super(wordingOf("LogDirInEpisode", fields));
    this.fields = fields;
  }
}
export class DirNotWritable extends UsageError {
  readonly kind = "DirNotWritable";
  readonly fields: KernelErrorFields["DirNotWritable"];
  constructor(fields: KernelErrorFields["DirNotWritable"]) {
    super(wordingOf("DirNotWritable", fields));
    this.fields = fields;
  }
}
export class TraceFileInEpisode extends UsageError {
  readonly kind = "TraceFileInEpisode";
  readonly fields: KernelErrorFields["TraceFileInEpisode"];
  constructor(fields: KernelErrorFields["TraceFileInEpisode"]) {
    super(wordingOf("TraceFileInEpisode", fields));
    this.fields = fields;
  }
}
export class RemoteActorsUnknown extends UsageError {
  readonly kind = "RemoteActorsUnknown";
  readonly fields: KernelErrorFields["RemoteActorsUnknown"];
  constructor(fields: KernelErrorFields["RemoteActorsUnknown"]) {
    super(wordingOf("RemoteActorsUnknown", fields));
    this.fields = fields;
  }
}
export class RemoteForkRefused extends UsageError {
  readonly kind = "RemoteForkRefused";
  readonly fields: KernelErrorFields["RemoteForkRefused"] = {};
  constructor() { super(wordingOf("RemoteForkRefused", {})); }
}
export class ActorHostsAbsent extends UsageError {
  readonly kind = "ActorHostsAbsent";
  readonly fields: KernelErrorFields["ActorHostsAbsent"];
  constructor(fields: KernelErrorFields["ActorHostsAbsent"]) {
    super(wordingOf("ActorHostsAbsent", fields));
    this.fields = fields;
  }
}
export class FlagValueInvalid extends UsageError {
  readonly kind = "FlagValueInvalid";
  readonly fields: KernelErrorFields["FlagValueInvalid"];
  constructor(fields: KernelErrorFields["FlagValueInvalid"]) {
    super(wordingOf("FlagValueInvalid", fields));
    this.fields = fields;
  }
}
export class TicksFixed extends UsageError {
  readonly kind = "TicksFixed";
  readonly fields: KernelErrorFields["TicksFixed"];
  constructor(fields: KernelErrorFields["TicksFixed"]) {
    super(wordingOf("TicksFixed", fields));
    this.fields = fields;
  }
}
export class ForkTicksTooFew extends UsageError {
  readonly kind = "ForkTicksTooFew";
  readonly fields: KernelErrorFields["ForkTicksTooFew"];
  constructor(fields: KernelErrorFields["ForkTicksTooFew"]) {
    super(wordingOf("ForkTicksTooFew", fields));
    this.fields = fields;
  }
}
export class EpisodeWorldsDiffer extends UsageError {
  readonly kind = "EpisodeWorldsDiffer";
  readonly fields: KernelErrorFields["EpisodeWorldsDiffer"];
  constructor(fields: KernelErrorFields["EpisodeWorldsDiffer"]) {
    super(wordingOf("EpisodeWorldsDiffer", fields));
    this.fields = fields;
  }
}
export class InputFileTooLarge extends UsageError {
  readonly kind = "InputFileTooLarge";
  readonly fields: KernelErrorFields["InputFileTooLarge"];
  constructor(fields: KernelErrorFields["InputFileTooLarge"]) {
    super(wordingOf("InputFileTooLarge", fields));
    this.fields = fields;
  }
}
export class InputKeyForbidden extends UsageError {
  readonly kind = "InputKeyForbidden";
  readonly fields: KernelErrorFields["InputKeyForbidden"];
  constructor(fields: KernelErrorFields["InputKeyForbidden"]) {
    super(wordingOf("InputKeyForbidden", fields));
    this.fields = fields;
  }
}
export class InputNestedTooDeep extends UsageError {
  readonly kind = "InputNestedTooDeep";
  readonly fields: KernelErrorFields["InputNestedTooDeep"];
  constructor(fields: KernelErrorFields["InputNestedTooDeep"]) {
    super(wordingOf("InputNestedTooDeep", fields));
    this.fields = fields;
  }
}
export class EpisodeFolderRefused extends UsageError {
  readonly kind = "EpisodeFolderRefused";
  readonly fields: KernelErrorFields["EpisodeFolderRefused"];
  constructor(fields: KernelErrorFields["EpisodeFolderRefused"]) {
    super(wordingOf("EpisodeFolderRefused", fields));
    this.fields = fields;
  }
}
export class ActorStateMissing extends InternalError {
  readonly kind = "ActorStateMissing";
  readonly fields: KernelErrorFields["ActorStateMissing"];
  constructor(fields: KernelErrorFields["ActorStateMissing"]) {
    super(wordingOf("ActorStateMissing", fields));
    this.fields = fields;
  }
}
export class EpisodeHeaderDiffers extends EpisodeIdTaken {
  readonly kind = "EpisodeHeaderDiffers";
  readonly fields: KernelErrorFields["EpisodeHeaderDiffers"];
  constructor(fields: KernelErrorFields["EpisodeHeaderDiffers"]) {
    super(wordingOf("EpisodeHeaderDiffers", fields));
    this.fields = fields;
  }
}
export class WorldUnknown extends InputRejected {
  readonly kind = "WorldUnknown";
  readonly fields: KernelErrorFields["WorldUnknown"];
  constructor(fields: KernelErrorFields["WorldUnknown"]) {
    super("world", wordingOf("WorldUnknown", fields));
    this.fields = fields;
  }
}
export class WorldNameTaken extends InputRejected {
  readonly kind = "WorldNameTaken";
  readonly fields: KernelErrorFields["WorldNameTaken"];
  constructor(fields: KernelErrorFields["WorldNameTaken"]) {
    super("world", wordingOf("WorldNameTaken", fields));
    this.fields = fields;
  }
}
