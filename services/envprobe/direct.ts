// A direct embedded driver for EnvProbe episodes, for sweeps of tens of thousands of them.
// It runs the same pure record handlers as the XState actors (agentHandlers, envHandlers) through
// the sequencer's own tick pump (services/kernel/tickPump.ts: append a round, deliver each record in
// log order, append the replies in canonical recipient order, then `tick.committed` with the part
// digests), as its synchronous port: handlers called in place, every record sealed with the same
// hash chain in memory. So its log is record-for-record the log `runEpisode` writes (except
// `meta`, which is never hashed); a test checks this, and `verify` replays its logs through the real
// actors. What it leaves out is per-episode overhead: no Effect layers, transport, XState
// interpreter, telemetry or snapshot store (about 7 ms an episode).
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { handlersByType, type Emitted, type HandlerLookup } from "../../actors/actor.ts";
import { AGENT_ID, agentHandlers, ENV_ID, initialAgentContext, type AgentContext, type AgentInput } from "../../actors/envprobe/agent.ts";
import { initialEnvContext, envHandlers, type EnvContext, type EnvInput } from "../../actors/envprobe/environment.ts";
import { asksModel, horizonOf, type EnvprobeConfig } from "../../actors/envprobe/config.ts";
import { envprobeWorld } from "../../actors/envprobe/world.ts";
import { versionOf } from "../../events/catalogue.ts";
import { FIRST_SEGMENT } from "../../infra/fileEventStore.ts";
import { actorIndexOf, GENESIS_HASH, seal, type Draft, type LogRecord } from "../../events/record.ts";
import { CompactCodec, compactHeaderMeta, COMPACT_LOG, payloadText, withWholeHash } from "../../events/compactLog.ts";
import { partDigest } from "../distributed/actorHost.ts";
import { episodeIdOf, PROBETOWN_VERSION } from "../kernel/episodes.ts";
import { noBackendAnswer, runTickSync, SEQUENCER_ID, type Replies, type TickPort } from "../kernel/tickPump.ts";
import { EpisodeAccumulator, type EpisodeMetrics } from "./metrics.ts";
import { InternalError } from "../../events/internalError.ts";

export interface DirectRun {
  /** Base config (before the condition), as `run --config` would give it. */
  readonly config: unknown;
  readonly policy: string;
  readonly seed: number;
  /** Episode directory to write (log/000000000000.jsonl); none: keep nothing. */
  readonly dir?: string;
  /** Episode id (default: `envprobe-s<seed>-<policy>`, as `run` names it). */
  readonly episode?: string;
  /**
   * The log format written (default 2, compact: events/compactLog.ts); 1 writes each record as the
   * sequencer's file store does. Both hold the same records and hash chain.
   */
  readonly logFormat?: LogFormat;
  /** Returns the log's text (what `dir` would get) in the result's `text` instead of writing it (a log kept elsewhere: JetStream). */
  readonly toText?: boolean;
}

/** The log formats the direct driver writes: 1 (a sealed JSON record a line) or 2 (compact). */
export type LogFormat = 1 | 2;
export const LOG_FORMATS: readonly LogFormat[] = [1, COMPACT_LOG];

export interface DirectResult {
  readonly episode: string;
  readonly records: number;
  readonly stateHash: string;
  readonly metrics: EpisodeMetrics;
  /** The records' sealed version-1 JSONL lines (with format 2, the header's meta says `"log":2`; what was written is their compact encoding). */
  readonly lines: readonly string[];
  /** With `toText`: the log's text, in the format asked for, as its file would hold it. */
  readonly text?: string;
}

const STATE_VALUE = "running";
const NO_REPLIES: Replies = [];

export function runDirect(o: DirectRun): DirectResult {
  const world = envprobeWorld;
  const base = world.resolveConfig(o.config);
  const config: EnvprobeConfig = world.applyCondition(base, o.policy);
  // No gateway here: an LLM agent's every `llm.requested` would fail (`no_backend`). Its episodes
  // run through runEpisode (the sequencer answers model calls; see runSweep).
  if (asksModel(config)) throw new InternalError("runDirect: an episode that asks a model (config llm.belief, or the LLM Judge's llm.judge) runs through runEpisode, which has the LLM gateway");
  const ticks = horizonOf(config);
  const episode = o.episode ?? episodeIdOf(world.name, o.seed, o.policy);
  const defs = world.actors(config, o.seed);
  const agent = initialAgentContext(defs.find((d) => d.id === AGENT_ID)!.input as AgentInput);
  const env = initialEnvContext(defs.find((d) => d.id === ENV_ID)!.input as EnvInput);
  const actors = actorIndexOf([AGENT_ID, ENV_ID]);
  const contexts: Record<string, unknown> = { [AGENT_ID]: agent, [ENV_ID]: env };
  // Keyed alike: each actor's handlers are only ever called with its own context (hence `as never` there).
  const handlers: Record<string, HandlerLookup<never>> = { [AGENT_ID]: handlersByType(agentHandlers), [ENV_ID]: handlersByType(envHandlers) };
  const lines: string[] = [];
  // Nothing is encoded for a run that writes no log (a sweep without --log).
  const keeping = o.dir !== undefined || o.toText === true;
  const compact = keeping && (o.logFormat ?? COMPACT_LOG) === COMPACT_LOG;
  // Format 2: the header's line as version 1 seals it, then each record's compact line.
  const written: string[] = [];
  let codec: CompactCodec | null = null;
  const metrics = new EpisodeAccumulator();
  let seq = 0;
  let hash = GENESIS_HASH;
  const append = (d: Draft, meta?: Record<string, unknown>): number => {
    const text = codec === null ? undefined : payloadText(d.type, d.tick, d.payload);
    const sealed = seal(hash, episode, seq, d, versionOf(d.type), meta, text?.json);
    hash = sealed.record.hash;
    lines.push(sealed.line);
    if (codec !== null) written.push(codec.encode(sealed.record, false, text));
    metrics.add(d.type, d.payload);
    return seq++;
  };
  const header = { probetown: PROBETOWN_VERSION };
  append(
    { type: "episode.started", from: SEQUENCER_ID, to: null, tick: 0, cause: null, payload: { world: world.name, seed: o.seed, condition: o.policy, config: base, actors: actors.ids, ticks } },
    compact ? compactHeaderMeta(header) : header,
  );
  if (compact) {
    written.push(lines[0]!.slice(0, -1));
    codec = new CompactCodec(JSON.parse(lines[0]!) as LogRecord);
  }
  let stateHash = "";
  let parts: Readonly<Record<string, string>> | null = null;
  // After the episode ends, a tick only delivers `tick.started` to the agent, which returns at
  // once without touching its context (nor is the environment sent anything): both part digests
  // are the previous tick's. Reusing them is exact; it is checked (no record may be emitted).
  let idle = false;
  let tickStart = 0;
  const port: TickPort<true> = {
    append: (drafts) => {
      const first = seq;
      for (const d of drafts) append(d);
      return first;
    },
    // Unreachable while runDirect refuses configs that ask a model; were one asked, it would be
    // answered as the sequencer answers without a gateway.
    ask: () => undefined,
    answer: (_index, request) => noBackendAnswer(request.payload),
    deliver: (_index, record, recipients) => {
      if (recipients.length === 0) return NO_REPLIES;
      const replies: (readonly Emitted[] | undefined)[] = [];
      for (const id of recipients) {
        const handler = handlers[id]![record.type];
        replies.push(handler === undefined ? undefined : handler(contexts[id] as never, record));
      }
      return replies;
    },
    parts: () => {
      if (!idle || seq - tickStart !== 1 || parts === null) {
        const fresh: Record<string, string> = {};
        for (const id of actors.ids) fresh[id] = partDigest(world, id, { value: STATE_VALUE, context: contexts[id] });
        parts = fresh;
      }
      return parts;
    },
    commit: (d) => append(d),
  };
  for (let tick = 0; tick < ticks; tick++) {
    idle = agent.done && parts !== null;
    tickStart = seq;
    stateHash = runTickSync(port, world.tickPlan(config, tick), tick, actors).stateHash;
  }
  let text: string | undefined;
  if (keeping) {
    if (compact) {
      // The last line keeps the whole chain hash (events/compactLog.ts), which covers every record.
      if (written.length > 1) written[written.length - 1] = withWholeHash(written.at(-1)!, hash);
      text = `${written.join("\n")}\n`;
    } else text = lines.join("");
    if (o.dir !== undefined) writeLogWhole(o.dir, text);
  }
  return { episode, records: seq, stateHash, metrics: metrics.result(), lines, ...(o.toText === true ? { text } : {}) };
}

/**
 * Writes an episode's whole log at `<dir>/log/000000000000.jsonl`, replacing any log there. It is
 * written beside `log/` first and renamed into it, so a process killed mid-write leaves no torn log
 * (at most a `.log.partial` file, which no reader takes for an episode), and a log it replaces (an
 * interrupted earlier run's) is either all the old one or all the new one: never a mix of both.
 */
export function writeLogWhole(dir: string, text: string): void {
  const partial = join(dir, ".log.partial");
  const logDir = join(dir, "log");
  mkdirSync(dir, { recursive: true });
  writeFileSync(partial, text);
  // mkdirSync says undefined when log/ was there already: whatever else it holds (another segment,
  // a stray file) is not this log's and goes, before the one segment is put in place.
  if (mkdirSync(logDir, { recursive: true }) === undefined) {
    for (const name of readdirSync(logDir)) if (name !== FIRST_SEGMENT) rmSync(join(logDir, name), { recursive: true, force: true });
  }
  renameSync(partial, join(logDir, FIRST_SEGMENT));
}


export type { AgentContext, EnvContext };
