// The episodes of one JetStream namespace (`probetown ui --nats`): listed from the namespace's log
// stream, summarised from each log's two ends (peekJetStreamLog: two requests however long the
// log), its model calls counted as it grows (each message read once), read through the store's own
// chain-checking reader, and followed live with the store's follow (an ordered consumer that
// outlives server restarts).
import type { NatsConnection } from "@nats-io/transport-node";
import { followJetStreamLog, jetStreamEpisodes, lastJetStreamRecord, peekJetStreamLog } from "../../infra/jetStreamEventStore.ts";
import { ChainReader } from "../../infra/jetstream/chain.ts";
import { readSubject } from "../../infra/jetstream/read.ts";
import { contextOf, managerOf, whereOf } from "../../infra/jetstream/streams.ts";
import { ApiCode, isApiError } from "../../infra/jetstream/errors.ts";
import { subjects } from "../../infra/nats.ts";
import { messageOf } from "../../events/errorMessage.ts";
import { summaryFromEnds } from "./catalogue.ts";
import { countModelCallText, emptyTally, modelCallsOfTally, type ModelCalls } from "./modelCalls.ts";
import { recordOrNull } from "../../infra/fileEventStore.ts";
import { writerOf } from "../../infra/jetstream/lock.ts";
import type { EpisodeSource } from "./episodeSource.ts";
import type { LiveBatch } from "./fileFollow.ts";
import type { LoadedLog } from "./records.ts";

/** An episode's id in the API: apart from any path below the runs folder (which never has a colon at its start). */
export const jetStreamId = (namespace: string, episode: string): string => `jetstream:${namespace}/${episode}`;

/** The whole log, checked; on damage, the records before it and the damage's message. */
async function readJetStream(nc: NatsConnection, namespace: string, episode: string): Promise<LoadedLog> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, episode);
  const reader = new ChainReader(whereOf(ctx.stream, subject), true);
  try {
    await readSubject(ctx, subject, (text, streamSeq) => {
      reader.acceptMessage(text, streamSeq);
    });
    return { records: reader.records, damage: null, firstSeq: reader.records[0]?.seq ?? 0 };
  } catch (error) {
    return { records: reader.records, damage: messageOf(error), firstSeq: reader.records[0]?.seq ?? 0 };
  }
}

async function* followBatches(nc: NatsConnection, namespace: string, episode: string, after: number, signal: AbortSignal): AsyncIterable<LiveBatch> {
  try {
    for await (const record of followJetStreamLog(nc, namespace, episode, after + 1, { signal })) yield { records: [record], damage: null };
  } catch (error) {
    if (!signal.aborted) yield { records: [], damage: messageOf(error) };
  }
}

/**
 * The model calls of a JetStream log for the list, counted as a file log's are (modelCalls.ts):
 * each message is read once while the server runs — the first ask reads the log from its start,
 * later ones only the messages after the last one read, and only when the log's last record
 * (which the row's peek has already fetched) lies past the last one counted. Only the lines of a
 * model-call record are parsed. Null when the read fails (the list shows `?`); one read at a time.
 */
function modelCallCounter(nc: NatsConnection, namespace: string, episode: string): (lastSeq: number | null) => Promise<ModelCalls | null> {
  const ctx = contextOf(nc, namespace);
  const subject = subjects.log(namespace, episode);
  const tally = emptyTally();
  /** The stream sequence of the last message counted, and the seq of the last record in it. */
  let readTo = 0;
  let countedTo = -1;
  let reading: Promise<void> | null = null;
  const readOn = async (): Promise<void> => {
    let lastText: string | null = null;
    await readSubject(ctx, subject, (text, streamSeq) => {
      countModelCallText(text, tally);
      readTo = streamSeq;
      lastText = text;
    }, undefined, readTo + 1);
    if (lastText !== null) {
      const text = (lastText as string).trimEnd();
      const seq = recordOrNull(text.slice(text.lastIndexOf("\n") + 1))?.seq;
      if (typeof seq === "number") countedTo = seq;
    }
  };
  return async (lastSeq) => {
    if (lastSeq === null) return modelCallsOfTally(tally);
    if (lastSeq < countedTo && reading === null) {
      // The log ends before what was counted: its tail was cut (a resume), so count it again.
      Object.assign(tally, emptyTally());
      readTo = 0;
      countedTo = -1;
    }
    try {
      while (lastSeq > countedTo) {
        const before = readTo;
        reading ??= readOn().finally(() => { reading = null; });
        await reading;
        if (readTo === before) break; // nothing more to read now (the peek saw a record not yet readable)
      }
      return modelCallsOfTally(tally);
    } catch {
      return null;
    }
  };
}

export function jetStreamEpisode(nc: NatsConnection, namespace: string, episode: string, siblings: ReadonlySet<string>): EpisodeSource {
  let cached: { last: number | null; log: LoadedLog } | null = null;
  const id = jetStreamId(namespace, episode);
  const modelCalls = modelCallCounter(nc, namespace, episode);
  return {
    id,
    dir: null,
    summary: async () => {
      const ends = await peekJetStreamLog(nc, namespace, episode);
      const calls = await modelCalls(ends.last?.seq ?? null);
      const summary = summaryFromEnds(id, ends, (header) => (header.parent !== undefined && siblings.has(header.parent) ? jetStreamId(namespace, header.parent) : null), calls);
      // Unfinished while a writer holds its lock (one request, for unfinished logs only): under way.
      if (summary.status === "finished") return summary;
      const writer = await writerOf(nc, namespace, episode).catch(() => null);
      return writer === null ? summary : { ...summary, status: "live" };
    },
    load: async () => {
      // One request says whether the log has grown since it was read.
      // An unreadable last message is read again every time (the full read says what is wrong).
      const last = await lastJetStreamRecord(nc, namespace, episode).then((r) => r?.seq ?? null, () => undefined);
      if (cached !== null && last !== undefined && cached.last === last) return cached.log;
      const log = await readJetStream(nc, namespace, episode);
      cached = last === undefined ? null : { last, log };
      return log;
    },
    follow: (after, signal) => followBatches(nc, namespace, episode, after, signal),
  };
}

/** How often a listened-to list looks at the namespace for new episodes and grown logs. */
export const JETSTREAM_LOOK_MS = 2000;

/** Messages per episode log in the namespace: one stream-info request for all of them. */
async function messagesPerEpisode(nc: NatsConnection, namespace: string): Promise<Map<string, number>> {
  const ctx = contextOf(nc, namespace);
  const jsm = await managerOf(ctx);
  const prefix = subjects.log(namespace, "_").slice(0, -1);
  try {
    const info = await jsm.streams.info(ctx.stream, { subjects_filter: `${prefix}>` });
    return new Map(Object.entries(info.state.subjects ?? {}).map(([subject, n]) => [subject.slice(prefix.length), n]));
  } catch (error) {
    if (isApiError(error, ApiCode.StreamNotFound)) return new Map();
    throw error;
  }
}

/**
 * A JetStream namespace's episodes, kept up to date while the list is listened to (the runs
 * folder's watch does this for files): `catalogue()` lists them (once, at start); `watch` looks
 * every JETSTREAM_LOOK_MS — one stream-info request, which gives every log's message count — and
 * reports the episodes that appeared (as sources, to be served) and the known ones whose logs
 * gained messages (a run appending at its fsync points).
 */
export function jetStreamNamespace(nc: NatsConnection, namespace: string) {
  const sources = new Map<string, EpisodeSource>();
  const names = new Set<string>();
  const adopt = (episode: string): EpisodeSource | null => {
    if (sources.has(episode)) return null;
    names.add(episode);
    const source = jetStreamEpisode(nc, namespace, episode, names);
    sources.set(episode, source);
    return source;
  };
  return {
    async catalogue(): Promise<EpisodeSource[]> {
      for (const episode of await jetStreamEpisodes(nc, namespace)) adopt(episode);
      return [...sources.values()];
    },
    watch(onChange: (added: readonly EpisodeSource[], changed: readonly string[]) => void, everyMs = JETSTREAM_LOOK_MS): () => void {
      let last: Map<string, number> | null = null;
      let busy = false;
      const look = async (): Promise<void> => {
        if (busy) return;
        busy = true;
        try {
          const now = await messagesPerEpisode(nc, namespace);
          const added = [...now.keys()].map(adopt).filter((x): x is EpisodeSource => x !== null);
          const before = last;
          const changed = before === null ? [] : [...now].filter(([episode, n]) => before.has(episode) && before.get(episode) !== n).map(([episode]) => jetStreamId(namespace, episode));
          last = now;
          if (added.length > 0 || changed.length > 0) onChange(added, changed);
        } catch {
          // The server is away: the next look tries again.
        } finally {
          busy = false;
        }
      };
      void look();
      const timer = setInterval(() => void look(), everyMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

export type JetStreamNamespace = ReturnType<typeof jetStreamNamespace>;
