// The distributed services' errors (sweeps' job specs and flags, actor hosts), each a class with
// typed fields and no message of its own making: the command line words them
// (services/cli/messages.ts), and the message an error carries is that wording, made from its
// fields when it is raised. Tests and callers read the class and fields, never the message.
import { InternalError } from "../../events/internalError.ts";
import { ExitCode, TaggedError } from "../../events/taggedError.ts";
import { wordingOf } from "../cli/messages.ts";
import { UsageError } from "../kernel/usageError.ts";

/** The fields of each distributed error, by its `kind` (the class name). */
export interface DistributedErrorFields {
  /** `--conditions` empty, or naming one the world has not (`unknown`). */
  ConditionsInvalid: { readonly world: string; readonly known: readonly string[]; readonly unknown?: string };
  /** `--config` the world refuses (`detail`: the world's own words). */
  ConfigInvalid: { readonly detail: string };
  /** A part of `--seeds` out of form, not a seed, running backwards or too long (`count`, `max`: for too long). */
  SeedsInvalid: { readonly part: string; readonly reason: "form" | "not-a-seed" | "backwards" | "too-many"; readonly count?: number; readonly max?: number };
  /** A job whose spec is not an episode's, or whose id is not its episode id (`expectedId`). */
  JobSpecInvalid: { readonly job: string; readonly reason: "shape" | "id"; readonly expectedId?: string };
  /** `actor-host` for a fork. */
  ForkNotHostable: { readonly episode: string };
  /** `actor-host --actors` naming actors the episode has not. */
  HostActorsUnknown: { readonly episode: string; readonly unknown: readonly string[]; readonly actors: readonly string[] };
  /** An actor host's episode stopped before its log began (exit 4). */
  LogNeverBegan: { readonly episode: string };
  /** A restore whose snapshot is absent, of another episode (`owner`), or unreachable (no store) (exit 4). */
  HostSnapshotUnavailable: { readonly key: string; readonly reason: "missing" | "other-episode" | "no-store"; readonly episode?: string; readonly owner?: string };
  /** A sweep's local workers all ended before it finished (`ends`: how each ended, in order). */
  LocalWorkersEnded: { readonly workers: number; readonly ends: readonly WorkerEnd[] };
  /** An actor a snapshot or request names that this host does not hold (exit 4). */
  ActorNotHosted: { readonly actor: string; readonly reason: "not-hosted" | "not-in-snapshot" };
}

/** How a worker process ended: its exit code, or the signal that killed it. */
export type WorkerEnd = { readonly code: number } | { readonly signal: string };

export type DistributedErrorKind = keyof DistributedErrorFields;

export class ConditionsInvalid extends UsageError {
  readonly kind = "ConditionsInvalid";
  readonly fields: DistributedErrorFields["ConditionsInvalid"];
  constructor(fields: DistributedErrorFields["ConditionsInvalid"]) {
    super(wordingOf("ConditionsInvalid", fields));
    this.fields = fields;
  }
}
export class ConfigInvalid extends UsageError {
  readonly kind = "ConfigInvalid";
  readonly fields: DistributedErrorFields["ConfigInvalid"];
  constructor(fields: DistributedErrorFields["ConfigInvalid"]) {
    super(wordingOf("ConfigInvalid", fields));
    this.fields = fields;
  }
}
export class SeedsInvalid extends UsageError {
  readonly kind = "SeedsInvalid";
  readonly fields: DistributedErrorFields["SeedsInvalid"];
  constructor(fields: DistributedErrorFields["SeedsInvalid"]) {
    super(wordingOf("SeedsInvalid", fields));
    this.fields = fields;
  }
}
export class JobSpecInvalid extends UsageError {
  readonly kind = "JobSpecInvalid";
  readonly fields: DistributedErrorFields["JobSpecInvalid"];
  constructor(fields: DistributedErrorFields["JobSpecInvalid"]) {
    super(wordingOf("JobSpecInvalid", fields));
    this.fields = fields;
  }
}
export class ForkNotHostable extends UsageError {
  readonly kind = "ForkNotHostable";
  readonly fields: DistributedErrorFields["ForkNotHostable"];
  constructor(fields: DistributedErrorFields["ForkNotHostable"]) {
    super(wordingOf("ForkNotHostable", fields));
    this.fields = fields;
  }
}
export class HostActorsUnknown extends UsageError {
  readonly kind = "HostActorsUnknown";
  readonly fields: DistributedErrorFields["HostActorsUnknown"];
  constructor(fields: DistributedErrorFields["HostActorsUnknown"]) {
    super(wordingOf("HostActorsUnknown", fields));
    this.fields = fields;
  }
}
export class LogNeverBegan extends InternalError {
  readonly kind = "LogNeverBegan";
  readonly fields: DistributedErrorFields["LogNeverBegan"];
  constructor(fields: DistributedErrorFields["LogNeverBegan"]) {
    super(wordingOf("LogNeverBegan", fields));
    this.fields = fields;
  }
}
export class HostSnapshotUnavailable extends InternalError {
  readonly kind = "HostSnapshotUnavailable";
  readonly fields: DistributedErrorFields["HostSnapshotUnavailable"];
  constructor(fields: DistributedErrorFields["HostSnapshotUnavailable"]) {
    super(wordingOf("HostSnapshotUnavailable", fields));
    this.fields = fields;
  }
}
export class ActorNotHosted extends InternalError {
  readonly kind = "ActorNotHosted";
  readonly fields: DistributedErrorFields["ActorNotHosted"];
  constructor(fields: DistributedErrorFields["ActorNotHosted"]) {
    super(wordingOf("ActorNotHosted", fields));
    this.fields = fields;
  }
}

/** The local workers of a sweep all exited before it ended: nothing it knows of takes its jobs any more. */
export class LocalWorkersGone extends TaggedError {
  /** A worker ended with an internal error (exit 4): the sweep says so with the same code, under its own tag. */
  readonly internal: boolean;
  readonly _tag: "LocalWorkersGone" | "LocalWorkersFailed";
  readonly exitCode: typeof ExitCode.usage | typeof ExitCode.internal;
  /** `message`: the command line's words (services/cli/distributed.ts adds what the sweep leaves queued). */
  constructor(message: string, internal: boolean) {
    super(message);
    this.internal = internal;
    this._tag = internal ? "LocalWorkersFailed" : "LocalWorkersGone";
    this.exitCode = internal ? ExitCode.internal : ExitCode.usage;
  }
}

/** The local workers' end as the sweep's watcher sees it, worded by the command line. */
export class LocalWorkersEnded extends LocalWorkersGone {
  readonly kind = "LocalWorkersEnded";
  readonly fields: DistributedErrorFields["LocalWorkersEnded"];
  constructor(fields: DistributedErrorFields["LocalWorkersEnded"], internal: boolean) {
    super(wordingOf("LocalWorkersEnded", fields), internal);
    this.fields = fields;
  }
}
