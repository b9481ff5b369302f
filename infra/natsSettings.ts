// What the command line knows of NATS before it connects: the server URL (from a flag or the
// environment) and how it is shown, the default namespace, the shortest writer-lock ttl, and the
// errors of bad input. Apart from infra/nats.ts so that reading flags loads no NATS client.
import { ExitCode, TaggedError } from "../events/taggedError.ts";

/** `--nats env` reads the server URL (credentials included) from this variable instead of the command line. */
export const NATS_URL_ENV = "PROBETOWN_NATS_URL";
export const NATS_URL_FROM_ENV = "env";

export const DEFAULT_NAMESPACE = "default";

/** A name (an episode id, a namespace) that cannot be part of a NATS subject: bad input, not a fault (exit 2). */
export class InvalidSubjectToken extends TaggedError {
  readonly _tag = "InvalidSubjectToken";
  readonly exitCode = ExitCode.usage;
}

/**
 * A server URL in its parts: `scheme://` (or ""), the `user:pass` before the last `@` (or null),
 * and the rest. The last: a host has no `@`, and a password typed as it is may hold one, or a `/`
 * (`nats://u:p@ss@host`, `nats://u:pa/ss@host`), all of it to be kept out of sight.
 */
export function splitNatsUrl(url: string): { readonly scheme: string; readonly credentials: string | null; readonly rest: string } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)?(?:(.*)@)?([^@]*)$/is.exec(url)!;
  return { scheme: m[1] ?? "", credentials: m[2] ?? null, rest: m[3]! };
}

/** A server URL as shown to people: credentials in it (`nats://user:pass@host`) are never printed. */
export function shownNatsUrl(url: string): string {
  const { scheme, credentials, rest } = splitNatsUrl(url);
  return credentials === null ? url : `${scheme}…@${rest}`;
}

/**
 * `--nats …` for a command printed as a hint (start workers with …, check: npx probetown verify …),
 * runnable as it is printed. A URL without credentials is itself. One with credentials is never
 * printed, and the URL shown instead (`nats://…@host`) would not log in: the hint says `--nats env`,
 * which reads the URL from PROBETOWN_NATS_URL (the way credentials stay out of `ps` and shell
 * history), and `after` (to follow the command) says what to export there, the server's URL with
 * placeholders for its credentials — nothing when the variable holds this URL already (the command
 * was given `--nats env`).
 */
export function natsFlagHint(url: string): { readonly flag: string; readonly after: string } {
  const { scheme, credentials, rest } = splitNatsUrl(url);
  if (credentials === null) return { flag: `--nats ${url}`, after: "" };
  const flag = `--nats ${NATS_URL_FROM_ENV}`;
  if (process.env[NATS_URL_ENV]?.trim() === url) return { flag, after: "" };
  const [placeholder, what] = credentials.includes(":") ? ["<user>:<password>", "user and password"] : ["<token>", "token"];
  return { flag, after: ` (first \`export ${NATS_URL_ENV}='${scheme}${placeholder}@${rest}'\`, the server's ${what} in place of ${placeholder})` };
}

export class NatsUnavailable extends TaggedError {
  readonly _tag = "NatsUnavailable";
  /** The server's trouble, not the program's: the same command succeeds once it answers. */
  readonly exitCode = ExitCode.usage;
  constructor(url: string, cause: unknown, what = "cannot connect to a NATS server", hint = "is nats-server running with JetStream (-js)?") {
    super(`--nats ${shownNatsUrl(url)}: ${what} (${(cause as Error)?.message ?? String(cause)}); ${hint}`);
  }
}

/**
 * The shortest writer-lock ttl a namespace may be given. Writers renew their locks every third of
 * it, whatever their bucket's ttl, so a bucket's ttl can be lowered (down to this) under writers
 * that hold locks: renewing at a third of the ttl each read when it opened the bucket, a lock
 * could expire between renewals once the ttl was lowered, and a second sequencer take its episode.
 */
export const MIN_LOCK_TTL_MS = 1000;

/** `--nats-outage <s>` may come from this variable instead (workers a sweep starts get it so). */
export const NATS_OUTAGE_ENV = "PROBETOWN_NATS_OUTAGE";
/** How long a NATS server may stay away (or hang) before a command gives up on it, by default (s). */
export const DEFAULT_NATS_OUTAGE_S = 15;
/** The shortest and longest outage window one may ask for (s). */
export const NATS_OUTAGE_RANGE_S = { min: 1, max: 3600 } as const;

/** An outage window in seconds as given (flag or variable), or null when it is not one: a whole number in NATS_OUTAGE_RANGE_S. */
export function parseNatsOutage(value: string): number | null {
  if (!/^\d+$/.test(value.trim())) return null;
  const s = Number(value.trim());
  return s >= NATS_OUTAGE_RANGE_S.min && s <= NATS_OUTAGE_RANGE_S.max ? s : null;
}

let outageSeconds: number | null = null;

/**
 * Sets this process's outage window (the command line does, from `--nats-outage` or
 * PROBETOWN_NATS_OUTAGE, before each command; null: back to the variable or the default).
 */
export function setNatsOutage(seconds: number | null): void {
  outageSeconds = seconds;
}

/**
 * The outage window in seconds: what `setNatsOutage` set, else PROBETOWN_NATS_OUTAGE when it holds
 * one (the command line refuses one that does not), else DEFAULT_NATS_OUTAGE_S. Everything that
 * waits for a server that went away waits this long (docs/distributed.md): the first connect, a
 * log publish, a snapshot put, a read.
 */
export function natsOutageSeconds(): number {
  if (outageSeconds !== null) return outageSeconds;
  const env = process.env[NATS_OUTAGE_ENV];
  return (env === undefined ? null : parseNatsOutage(env)) ?? DEFAULT_NATS_OUTAGE_S;
}

/** The window as a command says it: `the 15 s NATS outage window (--nats-outage)`. */
export const outageWindowText = (ms: number): string => `the ${+(ms / 1000).toFixed(1)} s NATS outage window (--nats-outage)`;

/**
 * How many servers of a JetStream cluster keep each stream and bucket probetown creates (its log,
 * lock, snapshot, job and result streams): `--nats-replicas <n>`, or this variable (which the
 * workers a sweep starts inherit). Unset, they are created with one replica and existing ones are
 * used as they are.
 */
export const NATS_REPLICAS_ENV = "PROBETOWN_NATS_REPLICAS";
/** JetStream keeps a stream on at most 5 servers. */
export const MAX_REPLICAS = 5;

/** A replica count that is not 1–5: bad input (exit 2). */
export class NatsReplicasInvalid extends TaggedError {
  readonly _tag = "NatsReplicasInvalid";
  readonly exitCode = ExitCode.usage;
}

/** A replica count as given (`--nats-replicas`, PROBETOWN_NATS_REPLICAS): an integer from 1 to MAX_REPLICAS. */
export function parseReplicas(value: string, what: string): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_REPLICAS)) throw new NatsReplicasInvalid(`${what}: expected a replica count from 1 to ${MAX_REPLICAS} (servers of the JetStream cluster that keep each stream), got '${value}'`);
  return n;
}

/** What the running command's `--nats-replicas` asked for (set for each command, before its action). */
let flagReplicas: number | undefined;

/** The command line's `--nats-replicas` (undefined: not given), for the command about to run. */
export function askReplicas(replicas: number | undefined): void {
  flagReplicas = replicas;
}

/**
 * The replica count asked for: the command's `--nats-replicas`, else PROBETOWN_NATS_REPLICAS;
 * undefined when neither is set (or the variable is empty).
 */
export function replicasFromSettings(): number | undefined {
  if (flagReplicas !== undefined) return flagReplicas;
  const value = process.env[NATS_REPLICAS_ENV];
  return value === undefined || value.trim() === "" ? undefined : parseReplicas(value, NATS_REPLICAS_ENV);
}
