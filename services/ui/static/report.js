// The report view (`#/report?file=`): a report's own report.json (what `report` or a world's paired
// report writes) as interactive charts — Pareto scatters, paired differences with the report's
// intervals, per-subcategory bars. The server maps the file to chart data (`/api/report`) and
// copies the report's statistics; nothing is computed again here.
import { useEffect, useState } from "preact/hooks";
import { ChartSections } from "./charts.js";
import { getJson, html } from "./common.js";

export const reportLink = (file) => `#/report?file=${encodeURIComponent(file)}`;

export function ReportView({ file }) {
  const [report, setReport] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    getJson(`/api/report?file=${encodeURIComponent(file)}`).then(setReport, (e) => setError(e.message));
  }, [file]);
  if (error) return html`<p class="damage">${error}</p>`;
  if (!report) return html`<p>Loading ${file}…</p>`;
  return html`<section class="report-view">
    <h2>${report.title} <small>${file}</small></h2>
    <p class="chart-note">Hover a point for its values, click it (or a condition's button) to keep them below the chart. Points that coincide are drawn side by side; the values shown are the exact ones. Filled markers: on the Pareto front.</p>
    ${report.sections.length === 0 ? html`<p>This report has nothing to chart.</p>` : html`<${ChartSections} sections=${report.sections} />`}
  </section>`;
}

/** The reports found in the runs folder, for the episodes page. */
export function ReportList({ reports }) {
  if (!reports.length) return "";
  return html`<section class="reports"><h2>Reports</h2><ul>${reports.map((r) => html`<li><a class="report-link" href=${reportLink(r.file)}>${r.file}</a> <small>${r.title} · ${r.sections} ${r.sections === 1 ? "section" : "sections"}</small></li>`)}</ul></section>`;
}
