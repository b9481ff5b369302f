// `probetown ui`: the dashboard's HTTP server (Hono on Node's http server). A JSON API over the
// episodes under one runs folder, and the front end's files. It reads logs and never writes one;
// it serves only the episodes it found under the folder and its own fixed list of files.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { serve, type ServerType } from "@hono/node-server";
import { Hono } from "hono";
import { UsageError } from "../kernel/usageError.ts";
import { isRegisteredWorld, worldModuleNamed } from "../kernel/worlds.ts";
import { catalogue, type EpisodeSummary } from "./catalogue.ts";
import { parseRecordQuery, parseSeq } from "./query.ts";
import { facets, loadLog, queryRecords, recordDetail } from "./records.ts";
import { BackgroundVerification, type VerifyStatus } from "./verification.ts";

export interface UiOptions {
  readonly runs: string;
  readonly port: number;
  readonly host: string;
  /** Threads verifying in the background (default 1: the dashboard shares the machine). */
  readonly verifyThreads?: number;
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
  return new Map([
    ["/", { file: join(here, "static", "index.html"), type: "text/html; charset=utf-8" }],
    ["/app.js", { file: join(here, "static", "app.js"), type: js }],
    ["/timeline.js", { file: join(here, "static", "timeline.js"), type: js }],
    ["/style.css", { file: join(here, "static", "style.css"), type: "text/css; charset=utf-8" }],
    ["/vendor/preact.mjs", { file: join(packageDir("preact"), "dist", "preact.mjs"), type: js }],
    ["/vendor/hooks.mjs", { file: join(packageDir("preact"), "hooks", "dist", "hooks.mjs"), type: js }],
    ["/vendor/htm.mjs", { file: join(packageDir("htm"), "dist", "htm.mjs"), type: js }],
  ]);
}

/** A registered world's dashboard view, or null (an unknown world, or one without a view). */
const worldUi = (world: string | null) => (world !== null && isRegisteredWorld(world) ? (worldModuleNamed(world).ui ?? null) : null);

export type EpisodeRow = EpisodeSummary & { readonly verify: VerifyStatus; readonly shownStatus: string };

export function createApp(runs: string, verifyThreads = 1): { app: Hono; verification: BackgroundVerification } {
  const root = resolve(runs);
  // Found once, at start: the set of episodes the API may read. A folder added later needs a restart.
  const episodes = catalogue(root);
  const verification = new BackgroundVerification(new Map([...episodes].map(([id, e]) => [id, e.dir])), verifyThreads);
  const files = staticFiles();
  const app = new Hono();

  const row = (summary: EpisodeSummary): EpisodeRow => {
    const verify = verification.status(summary.id);
    // verify's verdict outranks what the log's ends suggested.
    const shownStatus = verify.state === "damaged" ? "damaged" : verify.state === "diverged" ? "diverged" : summary.status;
    return { ...summary, verify, shownStatus };
  };

  app.get("/api/episodes", (c) => c.json({ runs: root, episodes: [...episodes.values()].map((e) => row(e.summary)) }));

  // An episode id is a path below the runs folder; it is looked up among the episodes found, never
  // joined to a path, so `..` or an absolute path cannot reach a file.
  const episodeOf = (id: string) => episodes.get(id) ?? null;
  const notFound = (id: string) => ({ error: `no episode '${id}' under the runs folder` });

  app.get("/api/episode", (c) => {
    const id = c.req.query("id") ?? "";
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const log = loadLog(found.dir);
    return c.json({ ...row(found.summary), damage: log.damage, facets: facets(log), worldView: worldUi(found.summary.world)?.label ?? null });
  });

  // A world's own view (its `ui` hook): the data from the log, and its script from the module.
  app.get("/api/world-view", (c) => {
    const id = c.req.query("id") ?? "";
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const ui = worldUi(found.summary.world);
    if (ui === null) return c.json({ error: `the world of '${id}' has no view of its own` }, 404);
    return c.json({ label: ui.label, data: ui.data(loadLog(found.dir).records) });
  });

  app.get("/world/:file", (c) => {
    const world = c.req.param("file").replace(/\.js$/, "");
    const ui = worldUi(world);
    if (ui === null) return c.json({ error: `no view for '${world}'` }, 404);
    return c.body(readFileSync(ui.script), 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" });
  });

  app.get("/api/records", (c) => {
    const { id = "", ...rest } = c.req.query();
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const query = parseRecordQuery(rest);
    if (!query.ok) return c.json({ error: query.message }, 400);
    const log = loadLog(found.dir);
    return c.json({ ...queryRecords(log, query.value), damage: log.damage });
  });

  app.get("/api/record", (c) => {
    const { id = "", seq = "", ...rest } = c.req.query();
    if (Object.keys(rest).length > 0) return c.json({ error: `unknown parameter ${Object.keys(rest).map((k) => `'${k}'`).join(", ")}; this endpoint takes id, seq` }, 400);
    const found = episodeOf(id);
    if (found === null) return c.json(notFound(id), 404);
    const parsed = parseSeq(seq);
    if (!parsed.ok) return c.json({ error: parsed.message }, 400);
    const detail = recordDetail(loadLog(found.dir), parsed.value);
    if (detail === null) return c.json({ error: `episode '${id}' holds no readable record with seq ${parsed.value}` }, 404);
    return c.json(detail);
  });

  app.get("*", (c) => {
    const entry = files.get(c.req.path);
    if (entry === undefined) return c.json({ error: `not found: ${c.req.path}` }, 404);
    return c.body(readFileSync(entry.file), 200, { "content-type": entry.type, "cache-control": "no-cache" });
  });
  return { app, verification };
}

/** The port is taken, or the host is not this machine's: the same command works with another. */
export class UiListenFailed extends UsageError {}

export function startUi(options: UiOptions): Promise<UiServer> {
  const { app, verification } = createApp(options.runs, options.verifyThreads);
  return new Promise((resolveStarted, rejectStart) => {
    const server: ServerType = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      const host = info.address.includes(":") ? `[${info.address}]` : info.address;
      resolveStarted({
        url: `http://${host}:${info.port}`,
        verification,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
    server.once("error", (error: NodeJS.ErrnoException) => rejectStart(new UiListenFailed(`cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`)));
  });
}
