// A record's tick as a span tree, from the episode's trace file (`/api/trace`): the tick's span and
// the spans below it, indented by depth, the record's own delivery span marked; a span that names
// a record links to it. With `probetown ui --jaeger <url>`, the trace opens in Jaeger.
import { useEffect, useState } from "preact/hooks";
import { getJson, html } from "./common.js";

const ms = (v) => (v === null ? "–" : `${v.toFixed(2)} ms`);

export function TickSpans({ id, tick, seq, onSelect }) {
  const [trace, setTrace] = useState(null);
  const [missing, setMissing] = useState(null);
  useEffect(() => {
    setTrace(null);
    setMissing(null);
    getJson(`/api/trace?id=${encodeURIComponent(id)}&tick=${tick}`).then(setTrace, (e) => setMissing(e.message));
  }, [id, tick]);
  if (missing !== null) return html`<h4>spans of tick ${tick}</h4><p class="spans-missing">${missing}</p>`;
  if (trace === null) return html`<h4>spans of tick ${tick}</h4><p>Loading spans…</p>`;
  return html`<h4>spans of tick ${tick}</h4>
    ${trace.jaeger ? html`<p><a class="jaeger-link" href=${trace.jaeger} target="_blank" rel="noopener">open trace ${trace.traceId} in Jaeger</a></p>` : trace.traceId ? html`<p><small>trace <code>${trace.traceId}</code></small></p>` : ""}
    ${trace.spans.length === 0 ? html`<p>The trace file has no spans for this tick.</p>` : html`<ul class="spans">${trace.spans.map((s) => html`<li class=${`span${s.seq === seq ? " span-own" : ""}`} data-span=${s.spanId} data-seq=${s.seq ?? ""} style=${`padding-left:${s.depth * 14}px`}>
      ${s.seq !== null && s.seq !== seq ? html`<button class="link" onClick=${() => onSelect(s.seq)}>${s.name}</button>` : html`<span>${s.name}</span>`}
      <small> ${s.seq !== null ? `#${s.seq} · ` : ""}+${ms(s.offsetMs)} · ${ms(s.durationMs)}${s.seq === seq ? " · this record" : ""}</small>
    </li>`)}</ul>`}`;
}
