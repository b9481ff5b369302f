// `sweep envprobe --nats <url> --log-store jetstream`: each episode's log kept in JetStream, in the
// namespace's log-object bucket (infra/jetStreamLogObjects.ts), instead of a shared --log folder,
// so workers on other machines need nothing but the NATS URL.
//
// Names. A sweep's logs are the objects `<sweep>/<world>-<regime>/<policy>/s<seed>`, the folders
// of a --log directory below a sweep name: `envprobe-` and twelve hex digits of the hash of the
// sweep's config overrides (`--config`, `--horizon`, the agent's model). An episode's log depends on
// nothing else than its world, regime, policy, seed and those, so two sweeps of one config share
// their episodes' objects (they would be the same bytes), and sweeps of other configs never meet.
//
// Keep or run. A worker runs a chunk's episodes through the direct driver, keeping each log's text
// in memory, and puts it once the episode is complete: a worker killed mid-job leaves no partial
// object (an object appears whole, infra/jetStreamLogObjects.ts). Every job (a redelivered one; one
// of another sweep of this config in the namespace, whose episodes overlap) first looks its episodes
// up (one request for a missing object): one whose object is
// there, complete, intact (its whole chain recomputed) and this episode's under this config is kept,
// its metrics read from it, as services/envprobe/keep.ts keeps a file; the others run and replace it.
// The job's outcome (the metrics) is returned only after every put is acknowledged.
import { canonicalJson, sha256Hex } from "../../events/canonical.ts";
import type { LogObjects } from "../../infra/jetStreamLogObjects.ts";
import { runDirect, type LogFormat } from "./direct.ts";
import { expectedConfig, keptMetricsOfText } from "./keep.ts";
import type { EpisodeMetrics } from "./metrics.ts";
import { episodeNameOf, sweepKeyOf, type EnvprobeJob } from "./sweep.ts";

/** `--log-store`'s value that keeps the logs in JetStream. */
export const JETSTREAM_LOG_STORE = "jetstream";

/** The sweep's name in the bucket: `envprobe-` and a hash of its config overrides. */
export const sweepLogName = (config: Readonly<Record<string, unknown>>): string => `envprobe-${sha256Hex(canonicalJson(config)).slice(0, 12)}`;

/** An episode's object: `<sweep>/<world>-<regime>/<policy>/s<seed>`. */
export const logObjectOf = (sweep: string, j: EnvprobeJob): string => `${sweep}/${sweepKeyOf(j)}`;

/** Is this a name of a sweep's logs or of some of them (`envprobe-<hash>` then `/…`)? */
export const isSweepLogName = (name: string): boolean => /^envprobe-[0-9a-f]{12}(\/|$)/.test(name);

/** Where a log object is, as messages name it: `jetstream:<bucket>/<object>`. */
export const objectWhere = (objects: LogObjects, name: string): string => `jetstream:${objects.bucket}/${name}`;

/** Episodes looked up, and puts in flight, at once. */
const AT_ONCE = 16;

/** Runs `f` over `items`, `limit` at once, results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  }));
  return out;
}

/** A chunk's episodes, kept from their objects or run and put (above). */
export class JetStreamKeeper {
  private readonly objects: LogObjects;
  private readonly sweep: string;
  private readonly config: Readonly<Record<string, unknown>>;
  private readonly logFormat: LogFormat | undefined;
  private readonly kept: ReadonlyMap<string, EpisodeMetrics>;
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown = null;

  private constructor(objects: LogObjects, sweep: string, config: Readonly<Record<string, unknown>>, logFormat: LogFormat | undefined, kept: ReadonlyMap<string, EpisodeMetrics>) {
    this.objects = objects;
    this.sweep = sweep;
    this.config = config;
    this.logFormat = logFormat;
    this.kept = kept;
  }

  /** Looks up the objects of `jobs`, and reads and checks those that are there. */
  static async open(objects: LogObjects, sweep: string, jobs: readonly EnvprobeJob[], config: Readonly<Record<string, unknown>>, logFormat?: LogFormat): Promise<JetStreamKeeper> {
    const kept = new Map<string, EpisodeMetrics>();
    await mapLimit(jobs, AT_ONCE, async (j) => {
      const name = logObjectOf(sweep, j);
      let text: string | null;
      try {
        text = await objects.get(name);
      } catch {
        // Unreadable as stored (LogObjectUnreadable): run again and replaced, as a damaged file is.
        return;
      }
      if (text === null) return;
      const metrics = keptMetricsOfText(text, { episode: episodeNameOf(j), seed: j.seed, policy: j.policy, config: expectedConfig(config, j) }, objectWhere(objects, name), objectWhere(objects, name));
      if (metrics !== null) kept.set(name, metrics);
    });
    return new JetStreamKeeper(objects, sweep, config, logFormat, kept);
  }

  /** One episode: its kept object's metrics, or run now with its log put (in the background: `flush` waits for it). */
  async keepOrRun(j: EnvprobeJob): Promise<{ readonly metrics: EpisodeMetrics; readonly kept: boolean }> {
    if (this.failure !== null) throw this.failure;
    const name = logObjectOf(this.sweep, j);
    const kept = this.kept.get(name);
    if (kept !== undefined) return { metrics: kept, kept: true };
    const r = runDirect({ config: { ...this.config, world: j.world, regime: j.regime }, policy: j.policy, seed: j.seed, episode: episodeNameOf(j), toText: true, ...(this.logFormat === undefined ? {} : { logFormat: this.logFormat }) });
    while (this.inFlight.size >= AT_ONCE) await Promise.race(this.inFlight);
    const put: Promise<void> = this.objects.put(name, r.text!).then(
      () => void this.inFlight.delete(put),
      (error: unknown) => {
        this.inFlight.delete(put);
        this.failure ??= error;
      },
    );
    this.inFlight.add(put);
    return { metrics: r.metrics, kept: false };
  }

  /** Waits for every put; the first that failed fails the job (its redelivery runs those episodes again). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
    if (this.failure !== null) throw this.failure;
  }
}
