// `probetown ui`: the dashboard's HTTP server (Hono on Node's http server). A JSON API over the
// episodes under one runs folder, and the front end's files. It reads logs and never writes one —
// but for "fork here" (`POST /api/fork`), which creates a new episode below the folder's forks/;
// it serves only the episodes it found under the folder (or forked since) and its own list of files.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { connectNats } from "../../infra/nats.ts";
import { UsageError } from "../kernel/usageError.ts";
import { isRegisteredWorld, worldModuleNamed } from "../kernel/worlds.ts";
import { idOf, summarise, type EpisodeSummary } from "./catalogue.ts";
import { watchCatalogue, type CatalogueChange } from "./catalogueWatch.ts";
import { compareLoaded } from "./compare.ts";
import { fileEpisode, fileEpisodesUnder, type EpisodeSource } from "./episodeSource.ts";
import { checkAgainstLog, childDir, parseForkRequest, runFork } from "./fork.ts";
import { jetStreamNamespace, type JetStreamNamespace } from "./jetStreamSource.ts";
import { parseAfter, parseRecordQuery, parseSeq } from "./query.ts";
import { facets, queryRecords, recordDetail } from "./records.ts";
import { gridScatters, reportNamed, reportsIn } from "./reportCharts.ts";
import { tickSpans, traceFileOf } from "./traceSpans.ts";
import { sweepProgress } from "./sweepProgress.ts";
import { parseSweepQuery, sweepNamed, sweepPage, sweepsIn } from "./sweepReport.ts";
import { BackgroundVerification, type VerifyStatus } from "./verification.ts";
import { jaegerBase, jaegerTraceUrl } from "./jaeger.ts";

export interface UiOptions {
  readonly runs: string;
  readonly port: number;
  readonly host: string;
  /** Threads verifying in the background (default 1: the dashboard shares the machine). */
  readonly verifyThreads?: number;
  /** A JetStream namespace whose episodes are shown too. */
  readonly nats?: { readonly url: string; readonly namespace: string };
  /** A Jaeger UI's address: a tick's spans link to their trace there (`<url>/trace/<trace id>`). */
  readonly jaeger?: string;
}

export interface UiServer {
  readonly url: string;
  readonly verification: BackgroundVerification;
  close(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
/** A package's folder, from its main file (htm's exports do not include its package.json). */
function packageDir(name: string): string {
  const main = require.resolve(name);
  const marker = `${sep}node_modules${sep}${name}${sep}`;
  return main.slice(0, main.lastIndexOf(marker) + marker.length - 1);
}

/** Every file the server sends, by URL path: nothing else on disk is reachable. */
function staticFiles(): Map<string, { file: string; type: string }> {
  const js = "text/javascript; charset=utf-8";
  const chartDir = join(packageDir("chart.js"), "dist");
  return new Map([
    ["/", { file: join(here, "static", "index.html"), type: "text/html; charset=utf-8" }],
    ["/app.js", { file: join(here, "static", "app.js"), type: js }],
    ["/timeline.js", { file: join(here, "static", "timeline.js"), type: js }],
    ["/common.js", { file: join(here, "static", "common.js"), type: js }],
    ["/compare.js", { file: join(here, "static", "compare.js"), type: js }],
    ["/fork.js", { file: join(here, "static", "fork.js"), type: js }],
    ["/sweep.js", { file: join(here, "static", "sweep.js"), type: js }],
    ["/spans.js", { file: join(here, "static", "spans.js"), type: js }],
    ["/report.js", { file: join(here, "static", "report.js"), type: js }],
    ["/charts.js", { file: join(here, "static", "charts.js"), type: js }],
    ["/style.css", { file: join(here, "static", "style.css"), type: "text/css; charset=utf-8" }],
    ["/vendor/preact.mjs", { file: join(packageDir("preact"), "dist", "preact.mjs"), type: js }],
    ["/vendor/hooks.mjs", { file: join(packageDir("preact"), "hooks", "dist", "hooks.mjs"), type: js }],
    ["/vendor/htm.mjs", { file: join(packageDir("htm"), "dist", "htm.mjs"), type: js }],
    // Chart.js's ES module, its one shared chunk (imported relatively) and its colour library.
    ["/vendor/chart.js", { file: join(chartDir, "chart.js"), type: js }],
    ["/vendor/chunks/index.js", { file: join(chartDir, "chunks", "index.js"), type: js }],
    ["/vendor/color.esm.js", { file: join(packageDir("@kurkle/color"), "dist", "color.esm.js"), type: js }],
  ]);
}

/** A registered world's conditions (what a fork may take), or none for a world not registered here. */
const conditionsOf = (world: string | null): string[] => (world !== null && isRegisteredWorld(world) ? Object.keys(worldModuleNamed(world).definition.conditions) : []);

/** A registered world's dashboard view, or null (an unknown world, or one without a view). */
const worldUi = (world: string | null) => (world !== null && isRegisteredWorld(world) ? (worldModuleNamed(world).ui ?? null) : null);

export type EpisodeRow = EpisodeSummary & { readonly verify: VerifyStatus; readonly shownStatus: string };

/** A JetStream log is checked as it is read (its hash chain); its replay is `probetown verify --nats`'s. */
const NOT_REPLAYED: VerifyStatus = { state: "not-replayed", message: "a JetStream log: its hash chain is checked as it is read; replay it with `probetown verify <episode> --nats <url>`", records: null };

export interface App {
  readonly app: Hono;
  readonly verification: BackgroundVerification;
  /** Ends every live stream (the server cannot close while one is open). */
  endStreams(): void;
}

/**
 * The app over the episodes under `runs`, and `more` (a JetStream namespace's): found at start, the
 * set of episodes the API may read; while a browser listens to the list (`/api/episodes/live`), an
 * episode directory that appears under `runs` joins it, and with `watchMore` (the namespace's
 * looks) a JetStream episode that appears in the namespace.
 */
export function createApp(runs: string, options: { readonly verifyThreads?: number; readonly more?: readonly EpisodeSource[]; readonly jaeger?: string; readonly watchMore?: JetStreamNamespace["watch"] } = {}): App {
  const root = resolve(runs);
  // Checked before anything starts: a base the links could not be joined to is refused (exit 2).
  const jaegerAt = options.jaeger === undefined ? null : jaegerBase(options.jaeger);
  const episodes = new Map<string, EpisodeSource>();
  for (const source of [...fileEpisodesUnder(root), ...(options.more ?? [])]) episodes.set(source.id, source);
  const dirs = new Map([...episodes].flatMap(([id, e]) => (e.dir === null ? [] : [[id, e.dir] as const])));
  const verification = new BackgroundVerification(dirs, options.verifyThreads ?? 1);
  const files = staticFiles();
  const streams = new Set<AbortController>();
  const app = new Hono();

  // The list, live: the runs folder is watched while some browser listens.
  const listeners = new Set<(change: CatalogueChange) => void>();
  let stopWatching: (() => void) | null = null;
  /** How many records each episode's log held when it was last verified again. */
  const reverifiedAt = new Map<string, number>();
  const rescan = (): string[] => {
    let found: EpisodeSource[];
    try {
      found = fileEpisodesUnder(root);
    } catch {
      return []; // The folder cannot be walked now (removed, unreadable): the next look tries again.
    }
    const added = found.filter((source) => !episodes.has(source.id));
    for (const source of added) {
      episodes.set(source.id, source);
      verification.add(source.id, source.dir!);
    }
    return added.map((source) => source.id);
  };
  const reverifyFinished = (ids: readonly string[]): void => {
    for (const id of ids) {
      const dir = episodes.get(id)?.dir;
      if (dir === null || dir === undefined) continue;
      // Only a log that holds more than its verdict covered (not a file touched beside it), and
      // once per length, is verified again.
      const { status, records } = summarise(root, dir, false);
      const verdict = verification.status(id);
      if (status === "finished" && verdict.state !== "pending" && verdict.records !== records && reverifiedAt.get(id) !== records) {
        reverifiedAt.set(id, records);
        verification.add(id, dir);
      }
    }
  };
  const listen = (listener: (change: CatalogueChange) => void): (() => void) => {
    listeners.add(listener);
    if (stopWatching === null) {
      const stopFiles = watchCatalogue(root, {
        isEpisode: (id) => episodes.has(id),
        rescan,
        emit: (change) => {
          reverifyFinished(change.changed);
          for (const l of listeners) l(change);
        },
      });
      // A JetStream namespace's new episodes and grown logs (`--nats`), looked at while listened to.
      const stopMore = options.watchMore?.((added, changed) => {
        for (const source of added) episodes.set(source.id, source);
        const change: CatalogueChange = { added: added.map((source) => source.id), changed: [...changed] };
        for (const l of listeners) l(change);
      });
      stopWatching = () => {
        stopFiles();
        stopMore?.();
      };
    }
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) {
        stopWatching?.();
        stopWatching = null;
      }
    };
  };

  const row = async (source: EpisodeSource): Promise<EpisodeRow> => {
    const summary = await source.summary();
    const verify = source.dir === null ? NOT_REPLAYED : verification.status(source.id);
    // verify's verdict outranks what the log's ends suggested.
    const shownStatus = verify.state === "damaged" ? "damaged" : verify.state === "diverged" ? "diverged" : summary.status;
    return { ...summary, verify, shownStatus };
  };


  // An episode id is a path below the runs folder; it is looked up among the episodes found, never
  // joined to a path, so `..` or an absolute path cannot reach a file.
  const episodeOf = (id: string) => episodes.get(id) ?? null;
  const notFound = (id: string) => ({ error: `no episode '${id}' under the runs folder` });
  const unknown = (rest: Record<string, string>, takes: string) => `unknown parameter ${Object.keys(rest).map((k) => `'${k}'`).join(", ")}; this endpoint takes ${takes}`;

  app.get("/api/episodes", async (c) => {
    const params = c.req.query();
    if (Object.keys(params).length > 0) return c.json({ error: unknown(params, "no parameters") }, 400);
    const rows = await Promise.all([...episodes.values()].map(row));
    // Sweeps running into the runs folder, from the rows just read.
    const sweeps = await sweepProgress(root, rows.filter((r) => !r.id.startsWith("jetstream:")));
    return c.json({ runs: root, episodes: rows, sweepProgress: sweeps });
  });

  // The list's changes as server-sent events: `ready`, then `changed` {added, changed} (episode ids)
  // for each burst of changes under the runs folder; the browser asks for the list again.
  app.get("/api/episodes/live", (c) => {
    const params = c.req.query();
    if (Object.keys(params).length > 0) return c.json({ error: unknown(params, "no parameters") }, 400);
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      streams.add(stop);
      stream.onAbort(() => stop.abort());
      const pending: CatalogueChange[] = [];
      let wake: (() => void) | null = null;
      const unlisten = listen((change) => {
        pending.push(change);
        wake?.();
      });
      stop.signal.addEventListener("abort", () => wake?.(), { once: true });
      try {
        await stream.writeSSE({ event: "ready", data: "{}" });
        while (!stop.signal.aborted) {
          if (pending.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
          for (const change of pending.splice(0)) await stream.writeSSE({ event: "changed", data: JSON.stringify(change) });
        }
      } finally {
        unlisten();
        streams.delete(stop);
      }
    });
  });

  app.get("/api/episode", async (c) => {
    const { id = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "id") }, 400);
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const [shown, log] = await Promise.all([row(found), found.load()]);
    const lastSeq = log.records.at(-1)?.seq ?? null;
    return c.json({ ...shown, damage: log.damage, lastSeq, facets: facets(log), worldView: worldUi(shown.world)?.label ?? null, conditions: conditionsOf(shown.world), forkable: found.dir !== null });
  });

  // Compare: two episodes through the kernel's diff (what `probetown diff` prints), and their
  // state hashes tick by tick.
  app.get("/api/compare", async (c) => {
    const { a = "", b = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "a, b") }, 400);
    const left = episodeOf(a);
    if (left === null) return c.json({ error: `a: ${notFound(a).error}` }, 404);
    const right = episodeOf(b);
    if (right === null) return c.json({ error: `b: ${notFound(b).error}` }, 404);
    const [logA, logB] = await Promise.all([left.load(), right.load()]);
    const compared = compareLoaded({ id: a, log: logA }, { id: b, log: logB });
    if (!compared.ok) return c.json({ error: compared.message }, 400);
    return c.json({ a, b, ...compared.value });
  });

  // Fork here: the one request that writes. The child goes to forks/ below the runs folder (never
  // elsewhere), one fork at a time, and joins the episodes shown (and verified) at once.
  let forking = false;
  app.post("/api/fork", async (c) => {
    if (Object.keys(c.req.query()).length > 0) return c.json({ error: unknown(c.req.query(), "a JSON body {id, atTick, condition}, no query parameters") }, 400);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: "the body must be a JSON object {id, atTick, condition}" }, 400);
    }
    const request = parseForkRequest(body);
    if (!request.ok) return c.json({ error: request.message }, 400);
    const { id } = request.value;
    const parent = episodeOf(id);
    if (parent === null) return c.json({ error: `id: ${notFound(id).error}` }, 404);
    if (parent.dir === null) return c.json({ error: `id: '${id}' is a JetStream episode; fork it with \`probetown fork ${id.replace(/^jetstream:[^/]*\//, "")} --nats <url>\`` }, 400);
    if (forking) return c.json({ error: "a fork is running; ask again when it has finished" }, 409);
    forking = true;
    try {
      const header = checkAgainstLog(request.value, await parent.load(), parent.dir);
      if (!header.ok) return c.json({ error: header.message }, 400);
      const dir = childDir(root, header.value, request.value);
      if (!dir.ok) return c.json({ error: dir.message }, 400);
      const made = await runFork(parent.dir, request.value, dir.value);
      // Checked above, so a refusal here is rare (the log changed meanwhile); a usage error is the request's.
      if (!made.ok) return c.json({ error: made.message }, made.usage ? 400 : 500);
      const childId = idOf(root, made.dir);
      const child = fileEpisode(root, made.dir, childId);
      episodes.set(childId, child);
      verification.add(childId, made.dir);
      return c.json({ id: childId, episode: made.episode, parent: id, atTick: request.value.atTick, condition: request.value.condition, records: made.records }, 201);
    } finally {
      forking = false;
    }
  });

  // Sweep reports: the results files (`sweep --out`) directly in the runs folder.
  app.get("/api/sweeps", (c) => {
    const params = c.req.query();
    if (Object.keys(params).length > 0) return c.json({ error: unknown(params, "no parameters") }, 400);
    return c.json({ sweeps: sweepsIn(root).map((s) => ({ file: s.file, world: s.world, seconds: s.seconds, conditions: s.conditions.rows.length, episodes: s.episodes.rows.length })) });
  });

  app.get("/api/sweep", (c) => {
    const { file = "", ...rest } = c.req.query();
    const query = parseSweepQuery(rest);
    if (!query.ok) return c.json({ error: query.message }, 400);
    const sweep = sweepNamed(root, file);
    if (sweep === null) return c.json({ error: `file: no sweep results file '${file}' directly in the runs folder` }, 404);
    const page = sweepPage(sweep, query.value);
    if (!page.ok) return c.json({ error: page.message }, 400);
    return c.json({ file, world: sweep.world, summary: sweep.summary, table: query.value.table, offset: query.value.offset, ...page.value });
  });

  // A sweep's cells as charts (A_H against probes per world and regime), when it has such cells.
  app.get("/api/sweep-charts", (c) => {
    const { file = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "file") }, 400);
    const sweep = sweepNamed(root, file);
    if (sweep === null) return c.json({ error: `file: no sweep results file '${file}' directly in the runs folder` }, 404);
    return c.json({ file, sections: gridScatters(sweep.conditions.rows).map(({ regime, scatters }) => ({ title: `Regime ${regime}`, scatters, differences: [], bars: [] })) });
  });

  // Reports: a report's own report.json (in the runs folder or a folder directly below it), as charts.
  app.get("/api/reports", (c) => {
    const params = c.req.query();
    if (Object.keys(params).length > 0) return c.json({ error: unknown(params, "no parameters") }, 400);
    return c.json({ reports: reportsIn(root).map((r) => ({ file: r.file, kind: r.kind, title: r.title, sections: r.sections.length })) });
  });

  app.get("/api/report", (c) => {
    const { file = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "file") }, 400);
    const report = reportNamed(root, file);
    if (report === null) return c.json({ error: `file: no report.json '${file}' in the runs folder or a folder directly below it` }, 404);
    return c.json(report);
  });

  // A tick's span tree from the episode's trace file (`--trace jsonl`), joined to records by seq.
  app.get("/api/trace", (c) => {
    const { id = "", tick = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "id, tick") }, 400);
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    if (!/^\d+$/.test(tick)) return c.json({ error: `tick must be a whole number, got '${tick}'` }, 400);
    const file = found.dir === null ? null : traceFileOf(root, found.dir);
    if (file === null) return c.json({ error: `episode '${id}' has no trace file (run it with --trace jsonl to write one)` }, 404);
    const spans = tickSpans(file, Number(tick));
    const jaeger = jaegerAt === null || spans.traceId === null ? null : jaegerTraceUrl(jaegerAt, spans.traceId);
    return c.json({ ...spans, jaeger });
  });

  // A world's own view (its `ui` hook): the data from the log, and its script from the module; with
  // more parameters than `id`, a part of it (the hook's `part`), asked for as the view shows it.
  app.get("/api/world-view", async (c) => {
    const { id = "", ...rest } = c.req.query();
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const ui = worldUi((await found.summary()).world);
    if (ui === null) return c.json({ error: `the world of '${id}' has no view of its own` }, 404);
    const episode = { dir: found.dir };
    if (Object.keys(rest).length === 0) return c.json({ label: ui.label, data: ui.data((await found.load()).records, episode) });
    // A part of the view (a tick's frame, a resident's panel): the world says which parameters it takes.
    if (ui.part === undefined) return c.json({ error: unknown(rest, "id") }, 400);
    const part = ui.part((await found.load()).records, episode, rest);
    return part.ok ? c.json({ label: ui.label, data: part.data }) : c.json({ error: part.message }, 400);
  });

  app.get("/world/:file", (c) => {
    const world = c.req.param("file").replace(/\.js$/, "");
    const ui = worldUi(world);
    if (ui === null) return c.json({ error: `no view for '${world}'` }, 404);
    return c.body(readFileSync(ui.script), 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
  });

  app.get("/api/records", async (c) => {
    const { id = "", ...rest } = c.req.query();
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const query = parseRecordQuery(rest);
    if (!query.ok) return c.json({ error: query.message }, 400);
    const log = await found.load();
    return c.json({ ...queryRecords(log, query.value), damage: log.damage });
  });

  app.get("/api/record", async (c) => {
    const { id = "", seq = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "id, seq") }, 400);
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const parsed = parseSeq(seq);
    if (!parsed.ok) return c.json({ error: parsed.message }, 400);
    const detail = recordDetail(await found.load(), parsed.value);
    if (detail === null) return c.json({ error: `episode '${id}' holds no readable record with seq ${parsed.value}` }, 404);
    return c.json(detail);
  });

  // Live: server-sent events with the records appended after seq `after` (default: the last one
  // now), as they are appended: `ready` once following, then `records` batches, and `damage` (after
  // which the stream ends) when the log reads as damaged.
  app.get("/api/live", async (c) => {
    const { id = "", after, ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: unknown(rest, "id, after") }, 400);
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const parsedAfter = after === undefined ? null : parseAfter(after);
    if (parsedAfter !== null && !parsedAfter.ok) return c.json({ error: parsedAfter.message }, 400);
    const from = parsedAfter?.value ?? (await found.load()).records.at(-1)?.seq ?? -1;
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      streams.add(stop);
      stream.onAbort(() => stop.abort());
      try {
        await stream.writeSSE({ event: "ready", data: JSON.stringify({ after: from }) });
        for await (const batch of found.follow(from, stop.signal)) {
          if (batch.records.length > 0) await stream.writeSSE({ event: "records", data: JSON.stringify({ records: batch.records }) });
          if (batch.damage !== null) await stream.writeSSE({ event: "damage", data: JSON.stringify({ damage: batch.damage }) });
        }
      } finally {
        streams.delete(stop);
      }
    });
  });

  app.get("*", (c) => {
    const entry = files.get(c.req.path);
    if (entry === undefined) return c.json({ error: `not found: ${c.req.path}` }, 404);
    return c.body(readFileSync(entry.file), 200, { "content-type": entry.type, "cache-control": "no-cache" });
  });
  return {
    app,
    verification,
    endStreams: () => {
      for (const stop of streams) stop.abort();
      stopWatching?.();
      stopWatching = null;
    },
  };
}

/** The port is taken, or the host is not this machine's: the same command works with another. */
export class UiListenFailed extends UsageError {}

export async function startUi(options: UiOptions): Promise<UiServer> {
  if (options.jaeger !== undefined) jaegerBase(options.jaeger); // refused before NATS is dialled
  const nats = options.nats === undefined ? null : await connectNats(options.nats.url, { name: "probetown-ui" });
  const namespace = nats === null ? null : jetStreamNamespace(nats, options.nats!.namespace);
  const more = namespace === null ? [] : await namespace.catalogue();
  const { app, verification, endStreams } = createApp(options.runs, { verifyThreads: options.verifyThreads, more, ...(options.jaeger === undefined ? {} : { jaeger: options.jaeger }), ...(namespace === null ? {} : { watchMore: namespace.watch }) });
  return new Promise((resolveStarted, rejectStart) => {
    const server: ServerType = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      const host = info.address.includes(":") ? `[${info.address}]` : info.address;
      resolveStarted({
        url: `http://${host}:${info.port}`,
        verification,
        close: async () => {
          endStreams();
          const closed = new Promise<void>((done) => server.close(() => done()));
          // A browser's EventSource reconnects at once: no socket is left for it to come back on.
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          await closed;
          await nats?.close();
        },
      });
    });
    server.once("error", (error: NodeJS.ErrnoException) => {
      void nats?.close();
      rejectStart(new UiListenFailed(`cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`));
    });
  });
}
