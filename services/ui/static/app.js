// The dashboard's front end: Preact components written with htm (tagged templates), loaded as ES
// modules straight from the server — no build step.
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { compareLink, episodeLink, getJson, html } from "./common.js";
import { CompareView } from "./compare.js";
import { ForkForm } from "./fork.js";
import { ReportList, ReportView } from "./report.js";
import { TickSpans } from "./spans.js";
import { SweepList, SweepView } from "./sweep.js";
import { KINDS, Timeline } from "./timeline.js";

function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}


/** The list's columns that sort, each with the value it sorts by (null last, whichever the direction). */
const SORTS = {
  episode: (e) => e.id,
  world: (e) => e.world,
  seed: (e) => e.seed,
  condition: (e) => e.condition,
  status: (e) => e.shownStatus,
  ticks: (e) => (e.lastTick === null ? null : e.lastTick + 1),
  records: (e) => e.records,
  models: (e) => (e.modelCalls && e.modelCalls.calls > 0 ? e.modelCalls.models.join(", ") : null),
  tokens: (e) => (e.modelCalls && e.modelCalls.calls > 0 ? e.modelCalls.tokens : null),
  duration: (e) => e.durationMs,
  verify: (e) => e.verify.state,
};

function compareBy(sort) {
  if (!sort) return null;
  const key = SORTS[sort.column];
  return (a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
    return sort.desc ? -order : order;
  };
}

/** "1.2 s", "3 min 4 s", "1 h 2 min": a run's wall-clock duration. */
function durationText(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 100) / 10;
  if (s < 60) return `${s} s`;
  const whole = Math.round(ms / 1000);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
}

const hasCalls = (e) => e.modelCalls !== null && e.modelCalls.calls > 0;
/** The models cell: "—" for an episode without model calls, "?" where they could not be counted (a JetStream read that failed). */
const modelsText = (e) => (e.modelCalls === null ? "?" : hasCalls(e) ? e.modelCalls.models.join(", ") || "(unnamed)" : "—");
const tokensText = (e) => (e.modelCalls === null ? "?" : hasCalls(e) ? e.modelCalls.tokens.toLocaleString("en-US") : "—");
const NOT_COUNTED = "model calls are not counted for a JetStream log";

/** Rows in fork-tree order: each episode followed by its forks, indented; `sort` orders the roots and each parent's forks. */
function forkTree(episodes, sort) {
  const byId = new Map(episodes.map((e) => [e.id, e]));
  const children = new Map();
  const roots = [];
  for (const e of episodes) {
    const parent = e.fork?.parentId;
    if (parent && byId.has(parent)) children.set(parent, [...(children.get(parent) ?? []), e]);
    else roots.push(e);
  }
  const rows = [];
  const walk = (e, depth) => {
    rows.push({ e, depth });
    for (const c of children.get(e.id) ?? []) walk(c, depth + 1);
  };
  const by = compareBy(sort);
  if (by) {
    roots.sort(by);
    for (const list of children.values()) list.sort(by);
  }
  roots.forEach((e) => walk(e, 0));
  return rows;
}

function matches(e, f) {
  if (f.world && e.world !== f.world) return false;
  if (f.status && e.shownStatus !== f.status) return false;
  if (f.model === "(none)" && hasCalls(e)) return false;
  if (f.model && f.model !== "(none)" && !(e.modelCalls?.models ?? []).includes(f.model)) return false;
  const q = f.search.trim().toLowerCase();
  if (q && ![e.id, e.episode, e.world, e.condition, String(e.seed), ...(e.modelCalls?.models ?? [])].some((v) => (v ?? "").toLowerCase().includes(q))) return false;
  return true;
}

const LIST_COALESCE_MS = 1000;

/**
 * Sweeps logging into the runs folder (`sweep --log`): jobs finished of those the sweep's spec holds,
 * updated with the list; below, the episodes each worker finished, from the sweep's progress file.
 */
function SweepProgress({ sweeps }) {
  if (!sweeps?.length) return "";
  return html`<section class="sweep-progress" aria-label="sweep progress"><h3>Sweep progress</h3>
    <ul>${sweeps.map((s) => html`<li data-sweep=${s.id}>
      <strong>${s.id}</strong> <progress max=${s.total} value=${s.done} aria-label=${`${s.id}: episodes finished`}></progress>
      <span class="sweep-done">${s.done} / ${s.total} episodes finished</span>${s.started ? html` <small>(${s.started} begun, not finished)</small>` : ""}
      <${SweepWorkers} sweep=${s} />
    </li>`)}</ul>
  </section>`;
}

const clock = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
};

/** One row per worker (thread, LLM lane or NATS worker) of the sweep's latest run, with its share. */
function SweepWorkers({ sweep }) {
  const w = sweep.workers;
  if (w === null) return html`<p class="chart-note sweep-workers-none">No progress per worker: this sweep wrote no progress file (run before it was recorded).</p>`;
  const state = w.finished ? "ended" : `running, or stopped (last heard from at ${clock(w.updated)})`;
  return html`<table class="sweep-workers" aria-label=${`${sweep.id}: episodes per worker`}>
    <caption>By worker: ${w.workers.length} ${w.workers.length === 1 ? "worker" : "workers"}, ${w.done} / ${w.total} episodes this run — <span class="sweep-run-state">${state}</span></caption>
    <thead><tr><th scope="col">worker</th><th scope="col">episodes</th><th scope="col">kept</th><th scope="col">share</th></tr></thead>
    <tbody>${w.workers.map((x) => html`<tr data-worker=${x.worker}><td>${x.worker}</td><td class="worker-done">${x.done}</td><td class="worker-kept">${x.kept}</td><td><progress max=${w.total} value=${x.done} aria-label=${`${x.worker}: episodes finished of the sweep's ${w.total}`}></progress></td></tr>`)}</tbody>
  </table>`;
}

function EpisodeList() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [filter, setFilter] = useState({ search: "", world: "", status: "", model: "" });
  const [sort, setSort] = useState(null);
  const [sweeps, setSweeps] = useState([]);
  const [reports, setReports] = useState([]);
  useEffect(() => {
    getJson("/api/sweeps").then((d) => setSweeps(d.sweeps), () => setSweeps([]));
    getJson("/api/reports").then((d) => setReports(d.reports), () => setReports([]));
  }, []);
  useEffect(() => {
    let stop = false;
    let timer;
    const load = () =>
      getJson("/api/episodes").then(
        (d) => {
          if (stop) return;
          setData(d);
          // Verification runs in the background: ask again until every episode has its result.
          if (d.episodes.some((e) => e.verify.state === "pending")) timer = setTimeout(load, 1500);
        },
        (e) => setError(e.message),
      );
    load();
    // Live: the server says when an episode appears or a log changes under the runs folder; the list
    // is read again, at most once per LIST_COALESCE_MS however busy the folder.
    const source = new EventSource("/api/episodes/live");
    let again = null;
    source.addEventListener("changed", () => {
      if (again === null) again = setTimeout(() => { again = null; clearTimeout(timer); load(); }, LIST_COALESCE_MS);
    });
    return () => {
      stop = true;
      clearTimeout(timer);
      clearTimeout(again);
      source.close();
    };
  }, []);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!data) return html`<p>Loading episodes…</p>`;
  const worlds = [...new Set(data.episodes.map((e) => e.world).filter(Boolean))].sort();
  const statuses = [...new Set(data.episodes.map((e) => e.shownStatus))].sort();
  const models = [...new Set(data.episodes.flatMap((e) => e.modelCalls?.models ?? []))].sort();
  const rows = forkTree(data.episodes, sort);
  const shown = rows.filter(({ e }) => matches(e, filter));
  const set = (key) => (ev) => setFilter({ ...filter, [key]: ev.target.value });
  const sortBy = (column) => setSort(sort?.column === column ? { column, desc: !sort.desc } : { column, desc: false });
  const th = (column) => html`<th aria-sort=${sort?.column === column ? (sort.desc ? "descending" : "ascending") : undefined}><button class="link sort" data-sort=${column} onClick=${() => sortBy(column)}>${column}${sort?.column === column ? (sort.desc ? " ▼" : " ▲") : ""}</button></th>`;
  return html`<section>
    <h2>Episodes <small>under ${data.runs}</small></h2>
    <div class="filters">
      <input type="search" placeholder="search id, condition, seed" aria-label="search episodes" value=${filter.search} onInput=${set("search")} />
      <label>world <select name="world" value=${filter.world} onChange=${set("world")}><option value="">all</option>${worlds.map((w) => html`<option value=${w}>${w}</option>`)}</select></label>
      <label>status <select name="status" value=${filter.status} onChange=${set("status")}><option value="">all</option>${statuses.map((s) => html`<option value=${s}>${s}</option>`)}</select></label>
      <label>model <select name="model" value=${filter.model} onChange=${set("model")}><option value="">all</option><option value="(none)">no model calls</option>${models.map((m) => html`<option value=${m}>${m}</option>`)}</select></label>
      <span class="count">${shown.length} of ${rows.length} episodes</span>
    </div>
    <${SweepProgress} sweeps=${data.sweepProgress} />
    <table class="episodes">
      <thead><tr>${Object.keys(SORTS).map(th)}</tr></thead>
      <tbody>
        ${shown.map(
          ({ e, depth }) => html`<tr class="episode" data-id=${e.id} onClick=${() => (location.hash = episodeLink(e.id))}>
            <td><span class="fork-indent">${depth > 0 ? "\u00a0\u00a0".repeat(depth) + "└ " : ""}</span><a href=${episodeLink(e.id)}>${e.id}</a>${e.fork ? html` <small>fork of ${e.fork.parentId ?? e.fork.parentEpisode} at tick ${e.fork.atTick}</small>` : ""}${e.fork?.parentId ? html` <a class="compare-parent" href=${compareLink(e.fork.parentId, e.id)} onClick=${(ev) => ev.stopPropagation()}>compare with parent</a>` : ""}</td>
            <td>${e.world ?? "?"}</td><td>${e.seed ?? "?"}</td><td>${e.condition ?? "?"}</td>
            <td><span class=${`status status-${e.shownStatus}`}>${e.shownStatus}</span></td>
            <td>${e.lastTick === null ? "–" : `${e.lastTick + 1}${e.plannedTicks !== null ? ` / ${e.plannedTicks}` : ""}`}</td>
            <td>${e.records}</td>
            <td class="models" title=${e.modelCalls === null ? NOT_COUNTED : hasCalls(e) ? `${e.modelCalls.calls} model calls` : "no model calls"}>${modelsText(e)}</td>
            <td class="tokens" title=${e.modelCalls === null ? NOT_COUNTED : "prompt + completion tokens this log spent"}>${tokensText(e)}</td>
            <td class="duration" title="wall-clock time from the first record to the last (their meta.ts)">${durationText(e.durationMs)}</td>
            <td class=${`verify verify-${e.verify.state}`} title=${e.verify.message ?? ""}>${e.verify.state}${e.verify.message && e.verify.state !== "ok" ? html`<div class="verify-message">${e.verify.message.split("\n")[0]}</div>` : ""}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <${SweepList} sweeps=${sweeps} />
    <${ReportList} reports=${reports} />
  </section>`;
}

function CheckList({ name, items, chosen, onChange }) {
  const toggle = (item) => onChange(chosen.includes(item) ? chosen.filter((x) => x !== item) : [...chosen, item]);
  return html`<fieldset class="filter-list" tabindex="0" data-filter=${name}><legend>${name} ${chosen.length ? html`<button class="link" onClick=${() => onChange([])}>all</button>` : "(all)"}</legend>
    ${items.map(([item, label]) => html`<label><input type="checkbox" value=${item} checked=${chosen.includes(item)} onChange=${() => toggle(item)} /> ${label}</label>`)}
  </fieldset>`;
}

function RecordDetail({ id, seq, onSelect, episode }) {
  const [detail, setDetail] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    setDetail(null);
    setError(null);
    getJson(`/api/record?id=${encodeURIComponent(id)}&seq=${seq}`).then(setDetail, (e) => setError(e.message));
  }, [id, seq]);
  if (error) return html`<div class="detail" tabindex="0" role="region" aria-label="record detail"><p class="damage">${error}</p></div>`;
  if (!detail) return html`<div class="detail" tabindex="0" role="region" aria-label="record detail"><p>Loading record ${seq}…</p></div>`;
  const r = detail.record;
  const ref = (c) => html`<li><button class="link" onClick=${() => onSelect(c.seq)}>#${c.seq} ${c.type}</button> <small>tick ${c.tick} · ${c.from}</small></li>`;
  return html`<div class="detail" tabindex="0" role="region" aria-label="record detail" data-seq=${r.seq}>
    <h3 class="detail-title">#${r.seq} ${r.type}</h3>
    <dl>
      <dt>tick</dt><dd>${r.tick}</dd>
      <dt>from</dt><dd class="detail-from">${r.from}</dd>
      <dt>to</dt><dd>${JSON.stringify(r.to)}</dd>
      <dt>hash</dt><dd><code class="detail-hash">${r.hash}</code></dd>
    </dl>
    ${episode.forkable ? html`<${ForkForm} key=${r.seq} id=${id} tick=${r.tick} conditions=${episode.conditions} current=${episode.condition} />` : ""}
    ${detail.modelCall ? html`<${ModelCall} call=${detail.modelCall} seq=${r.seq} onSelect=${onSelect} />` : ""}
    <h4>payload</h4>
    <pre class="detail-payload">${JSON.stringify(r.payload, null, 2)}</pre>
    <h4>cause chain</h4>
    ${detail.causes.length ? html`<ol class="causes">${detail.causes.map(ref)}</ol>` : html`<p>none (a root record)</p>`}
    <h4>caused</h4>
    ${detail.effects.length ? html`<ul class="effects">${detail.effects.map(ref)}</ul>` : html`<p>nothing</p>`}
    <${TickSpans} id=${id} tick=${r.tick} seq=${r.seq} onSelect=${onSelect} />
  </div>`;
}

const SOURCE_TEXT = {
  recorded: "recorded: served from a recording (the cache, or a fork's parent's answer), the endpoint not asked",
  live: "live: asked of the endpoint in this run",
};

/** A model call laid out: the prompt's messages, the completion (or the failure), usage, and where the answer came from. */
function ModelCall({ call, seq, onSelect }) {
  const { request, answer, source } = call;
  const link = (at, label) => (at === seq ? html`<span>${label} (this record)</span>` : html`<button class="link" onClick=${() => onSelect(at)}>${label}</button>`);
  return html`<section class="model-call" aria-label="model call">
    <h4>model call <span class=${`call-source call-${source ?? "pending"}`}>${source === null ? "no answer logged yet" : SOURCE_TEXT[source]}</span></h4>
    ${request === null ? html`<p>The request is not in this log (a fork's answer to its parent's request).</p>` : html`<div class="call-request">
      <p>${link(request.seq, `#${request.seq} request`)} · role <code>${request.role}</code> · model <code class="call-model">${request.model}</code>${request.queryId ? html` · query <code>${request.queryId}</code>` : ""}</p>
      <p><small>params ${JSON.stringify(request.params)}</small></p>
      <ol class="call-prompt">${request.messages.map((m, i) => html`<li key=${i}><strong>${m.role}</strong><pre class="call-message" tabindex="0">${m.content}</pre></li>`)}</ol>
    </div>`}
    ${answer === null ? "" : html`<div class="call-answer">
      <p>${link(answer.seq, `#${answer.seq} ${answer.type === "llm.completed" ? "completion" : "failure"}`)}${answer.model ? html` · answered by <code>${answer.model}</code>` : ""}${answer.backend ? ` via ${answer.backend}` : ""}${answer.attempts !== null ? ` · ${answer.attempts} HTTP ${answer.attempts === 1 ? "request" : "requests"}` : ""}${answer.repaired ? " · repaired" : ""}</p>
      ${answer.error ? html`<p class="call-error">${answer.error}: ${answer.message} — fallback: ${answer.fallback}</p>` : ""}
      ${answer.content !== null ? html`<pre class="call-completion" tabindex="0">${answer.content}</pre>` : ""}
      <p class="call-usage">${answer.usage === null ? "no usage reported" : `${answer.usage.promptTokens} prompt + ${answer.usage.completionTokens} completion = ${answer.usage.promptTokens + answer.usage.completionTokens} tokens${source === "recorded" ? " (spent when recorded, not in this run)" : ""}`}</p>
    </div>`}
  </section>`;
}

/**
 * The episode's world's own view (its `ui` hook): its module is loaded when the tab is opened. The
 * view gets its data and `part(params, {signal})`, which fetches a part of it (a tick's frame, a
 * panel; the signal, optional, aborts the fetch).
 */
function WorldView({ id, world }) {
  const [view, setView] = useState(null);
  const [error, setError] = useState(null);
  // `init` may carry an AbortSignal: a view cancels a part it no longer wants (a scrubbed-past tick).
  const part = useMemo(() => (params, init) => getJson(`/api/world-view?${new URLSearchParams({ id, ...params })}`, init).then((body) => body.data), [id]);
  useEffect(() => {
    Promise.all([import(`/world/${encodeURIComponent(world)}.js`), getJson(`/api/world-view?id=${encodeURIComponent(id)}`)]).then(
      ([module, body]) => setView({ View: module.View, data: body.data }),
      (e) => setError(e.message),
    );
  }, [id, world]);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!view) return html`<p>Loading the view…</p>`;
  return html`<${view.View} data=${view.data} part=${part} />`;
}

/**
 * Live mode: the server's event stream of the records appended after those first shown. Each batch
 * asks the view to read the episode again; batches that come close together are read once, at
 * most every LIVE_COALESCE_MS, so a fast writer does not flood the server with reads.
 */
const LIVE_COALESCE_MS = 150;

const LIVE_BADGE = { connecting: "connecting…", live: "● live", reconnecting: "reconnecting…", damaged: "following stopped: the log is damaged" };

function useLive(id, after, onChange) {
  const [live, setLive] = useState({ state: "connecting", last: after });
  useEffect(() => {
    if (after === undefined) return undefined;
    const source = new EventSource(`/api/live?id=${encodeURIComponent(id)}&after=${after}`);
    let timer = null;
    const changed = () => {
      if (timer === null) timer = setTimeout(() => { timer = null; onChange(); }, LIVE_COALESCE_MS);
    };
    source.addEventListener("ready", () => setLive((l) => ({ ...l, state: "live" })));
    source.addEventListener("records", (event) => {
      const { records } = JSON.parse(event.data);
      setLive({ state: "live", last: records[records.length - 1].seq });
      changed();
    });
    source.addEventListener("damage", () => {
      setLive((l) => ({ ...l, state: "damaged" }));
      source.close();
      changed();
    });
    // EventSource reconnects by itself; the view says so meanwhile.
    source.onerror = () => setLive((l) => (l.state === "damaged" ? l : { ...l, state: "reconnecting" }));
    return () => {
      source.close();
      clearTimeout(timer);
    };
  }, [id, after]);
  return live;
}

function EpisodeView({ id, seq, view }) {
  // `&view=world` opens the world's own view (what `probetown run` prints to open the day it ran).
  const [tab, setTab] = useState(view === "world" ? "world" : "timeline");
  const [episode, setEpisode] = useState(null);
  const [error, setError] = useState(null);
  const [types, setTypes] = useState([]);
  const [actors, setActors] = useState([]);
  const [page, setPage] = useState(null);
  const [selected, setSelected] = useState(seq ?? null);
  // Bumped by live mode: the episode and its records are read again.
  const [version, setVersion] = useState(0);
  // The last record when the view opened: live mode follows from there.
  const [after, setAfter] = useState(undefined);
  useEffect(() => {
    let stale = false;
    getJson(`/api/episode?id=${encodeURIComponent(id)}`).then((e) => {
      if (stale) return;
      setEpisode(e);
      setAfter((a) => (a === undefined ? e.lastSeq ?? -1 : a));
    }, (e) => setError(e.message));
    return () => { stale = true; };
  }, [id, version]);
  useEffect(() => {
    let stale = false;
    const params = new URLSearchParams({ id, limit: "5000" });
    if (types.length) params.set("type", types.join(","));
    if (actors.length) params.set("actor", actors.join(","));
    getJson(`/api/records?${params}`).then((p) => stale || setPage(p), (e) => setError(e.message));
    return () => { stale = true; };
  }, [id, types.join(","), actors.join(","), version]);
  const live = useLive(id, after, () => setVersion((v) => v + 1));
  const typeItems = useMemo(() => (episode ? Object.entries(episode.facets.types).sort().map(([t, n]) => [t, `${t} (${n})`]) : []), [episode]);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!episode || !page) return html`<p>Loading ${id}…</p>`;
  return html`<section class="episode-view">
    <h2>${id} <small>${episode.world} · seed ${episode.seed} · ${episode.condition} · <span class=${`status status-${episode.shownStatus}`}>${episode.shownStatus}</span></small>
      <span class=${`live live-${live.state}`} role="status" data-last-seq=${live.last}>${LIVE_BADGE[live.state]}</span></h2>
    ${episode.damage ? html`<div class="damage"><div>Damaged log: ${episode.damage}</div><div>Shown: the intact records before the damage.</div></div>` : ""}
    ${episode.verify.message && episode.verify.state !== "ok" ? html`<div class="damage">verify (${episode.verify.state}): ${episode.verify.message}</div>` : ""}
    ${episode.worldView ? html`<nav class="tabs"><button class=${tab === "timeline" ? "tab active" : "tab"} onClick=${() => setTab("timeline")}>Timeline</button><button class=${tab === "world" ? "tab active" : "tab"} data-tab="world" onClick=${() => setTab("world")}>${episode.worldView}</button></nav>` : ""}
    ${tab === "world" && episode.worldView ? html`<${WorldView} id=${id} world=${episode.world} />` : html`<div>
    <div class="legend">${KINDS.map(([k, c, label]) => html`<span><i style=${`background:${c}`}></i>${label}</span>`)}</div>
    <div class="filters">
      <${CheckList} name="type" items=${typeItems} chosen=${types} onChange=${setTypes} />
      <${CheckList} name="actor" items=${episode.facets.actors.map((a) => [a, a])} chosen=${actors} onChange=${setActors} />
      <span class="count">${page.total} records${page.total > page.records.length ? ` (first ${page.records.length} shown)` : ""}</span>
    </div>
    <div class="layout">
      <div class="timeline" tabindex="0" role="region" aria-label="timeline"><${Timeline} records=${page.records} actors=${episode.facets.actors} selected=${selected} onSelect=${setSelected} /></div>
      ${selected === null ? html`<div class="detail" tabindex="0" role="region" aria-label="record detail"><p>Click a mark for its record.</p></div>` : html`<${RecordDetail} id=${id} seq=${selected} onSelect=${setSelected} episode=${episode} />`}
    </div></div>`}
  </section>`;
}

/** Each episode gets a view of its own (keyed by id): its tab, filters and live stream start afresh. */
function App() {
  const hash = useHash();
  const [path, query = ""] = hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const seq = params.get("seq");
  const view =
    path === "/episode" && params.get("id") !== null ? html`<${EpisodeView} key=${hash} id=${params.get("id")} seq=${seq === null ? null : Number(seq)} view=${params.get("view")} />`
    : path === "/compare" ? html`<${CompareView} a=${params.get("a") ?? ""} b=${params.get("b") ?? ""} />`
    : path === "/sweep" && params.get("file") !== null ? html`<${SweepView} key=${hash} file=${params.get("file")} />`
    : path === "/report" && params.get("file") !== null ? html`<${ReportView} key=${hash} file=${params.get("file")} />`
    : html`<${EpisodeList} />`;
  return html`<header><strong>probetown</strong> <a href="#/">episodes</a> <a href="#/compare">compare</a></header>
    <main>${view}</main>`;
}

render(html`<${App} />`, document.body);
