// The sweep report (`#/sweep?file=`): a sweep's results file as two tables — one row per condition
// (an EnvProbe cell, or a condition's metric means) and one per episode — each a page at a time,
// sorted by the server (`/api/sweep`), so a 21,780-episode grid sends only the rows shown.
import { useEffect, useState } from "preact/hooks";
import { ChartSections } from "./charts.js";
import { getJson, html } from "./common.js";

const PAGE = 100;

const shown = (v) => (v === null || v === undefined ? "–" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(3) : String(v));

function PagedTable({ file, table, title }) {
  const [state, setState] = useState({ offset: 0, sort: null, desc: false });
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stale = false;
    const params = new URLSearchParams({ file, table, offset: String(state.offset), limit: String(PAGE) });
    if (state.sort !== null) {
      params.set("sort", state.sort);
      params.set("desc", state.desc ? "1" : "0");
    }
    getJson(`/api/sweep?${params}`).then((p) => stale || setPage(p), (e) => setError(e.message));
    return () => { stale = true; };
  }, [file, table, state.offset, state.sort, state.desc]);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!page) return html`<p>Loading ${title}…</p>`;
  const sortBy = (column) => setState({ offset: 0, sort: column, desc: state.sort === column ? !state.desc : false });
  const last = Math.min(page.offset + page.rows.length, page.total);
  const arrow = (column) => (state.sort === column ? (state.desc ? " ▼" : " ▲") : "");
  return html`<div class="sweep-table" data-table=${table}>
    <h3>${title} <small class="sweep-rows">rows ${page.total === 0 ? 0 : page.offset + 1}–${last} of ${page.total}</small></h3>
    <div class="filters">
      <button disabled=${page.offset === 0} onClick=${() => setState({ ...state, offset: Math.max(0, state.offset - PAGE) })}>previous ${PAGE}</button>
      <button disabled=${last >= page.total} onClick=${() => setState({ ...state, offset: state.offset + PAGE })}>next ${PAGE}</button>
    </div>
    <div class="table-scroll" tabindex="0" role="region" aria-label=${title}>
      <table>
        <thead><tr>${page.columns.map((c) => html`<th aria-sort=${state.sort === c ? (state.desc ? "descending" : "ascending") : undefined}><button class="link" onClick=${() => sortBy(c)}>${c}${arrow(c)}</button></th>`)}</tr></thead>
        <tbody>${page.rows.map((r) => html`<tr>${page.columns.map((c) => html`<td>${shown(r[c])}</td>`)}</tr>`)}</tbody>
      </table>
    </div>
  </div>`;
}

/** The sweep's cells as charts (A_H against probes per world and regime), when its cells allow. */
function SweepCharts({ file }) {
  const [charts, setCharts] = useState(null);
  useEffect(() => {
    getJson(`/api/sweep-charts?file=${encodeURIComponent(file)}`).then(setCharts, () => setCharts(null));
  }, [file]);
  if (charts === null || charts.sections.length === 0) return "";
  return html`<div class="sweep-charts"><p class="chart-note">Hover a point for its values, click it (or a condition's button) to keep them below the chart; coinciding points are drawn side by side. Filled markers: on the Pareto front.</p><${ChartSections} sections=${charts.sections} /></div>`;
}

export function SweepView({ file }) {
  const [head, setHead] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    getJson(`/api/sweep?file=${encodeURIComponent(file)}&limit=0`).then(setHead, (e) => setError(e.message));
  }, [file]);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!head) return html`<p>Loading ${file}…</p>`;
  const facts = Object.entries(head.summary);
  return html`<section class="sweep-view">
    <h2>Sweep report <small>${file}${head.world ? ` · ${head.world}` : ""}</small></h2>
    <dl class="sweep-summary">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${shown(v)}</dd>`)}</dl>
    <${SweepCharts} file=${file} />
    <${PagedTable} file=${file} table="conditions" title="By condition" />
    <${PagedTable} file=${file} table="episodes" title="By episode" />
  </section>`;
}

/** The sweeps' results files found in the runs folder, for the episodes page. */
export function SweepList({ sweeps }) {
  if (!sweeps.length) return "";
  return html`<section class="sweeps"><h2>Sweep reports</h2><ul>${sweeps.map((s) => html`<li><a class="sweep-link" href=${`#/sweep?file=${encodeURIComponent(s.file)}`}>${s.file}</a> <small>${s.world ? `${s.world} · ` : ""}${s.conditions} conditions · ${s.episodes} episodes</small></li>`)}</ul></section>`;
}
