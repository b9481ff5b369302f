// AURATown's dashboard view (served by `probetown ui` as this world's view): the map, residents at
// the chosen tick, and a scrubber with play, pause and step. Data: services/auratown/ui/townView.ts.
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const SCALE = 11;
const FILL = { home: "#fde2c8", cafe: "#f9d0d0", park: "#d3f0d0", shop: "#dde4ff" };
/** The table's rows are drawn only where it is scrolled to (a 1,000-resident town redrew 1,000 rows per tick). */
const ROW = 28;
const SHOWN = 20;

function ResidentTable({ residents }) {
  const [top, setTop] = useState(0);
  const first = Math.max(0, Math.floor(top / ROW) - 5);
  const last = Math.min(residents.length, first + SHOWN + 10);
  const spacer = (rows) => (rows > 0 ? html`<tr class="spacer" aria-hidden="true" style=${`height:${rows * ROW}px`}></tr>` : "");
  return html`<div class="residents-scroll" tabindex="0" role="region" aria-label="residents" style=${`max-height:${ROW * (SHOWN + 1)}px`} onScroll=${(e) => setTop(e.currentTarget.scrollTop)}>
    <table class="residents"><thead><tr><th>resident</th><th>place</th><th>doing</th></tr></thead>
      <tbody>${spacer(first)}${residents.slice(first, last).map((r) => html`<tr key=${r.agent} data-agent=${r.agent}><td>${r.name}</td><td>${r.place ?? "on the way"}</td><td>${r.action}</td></tr>`)}${spacer(residents.length - last)}</tbody>
    </table>
  </div>`;
}

export function View({ data }) {
  const [index, setIndex] = useState(0);
  const [playing, setPlaying] = useState(false);
  const last = data.frames.length - 1;
  useEffect(() => {
    if (!playing) return undefined;
    const timer = setInterval(() => setIndex((i) => (i >= last ? (setPlaying(false), i) : i + 1)), 600);
    return () => clearInterval(timer);
  }, [playing, last]);
  if (last < 0) return html`<p>No resident positions in this log.</p>`;
  const frame = data.frames[Math.min(index, last)];
  return html`<section class="town-view">
    <div class="filters scrubber">
      <button onClick=${() => setIndex(Math.max(0, index - 1))} aria-label="step back">◀</button>
      <button class="play" onClick=${() => setPlaying(!playing)}>${playing ? "pause" : "play"}</button>
      <button onClick=${() => setIndex(Math.min(last, index + 1))} aria-label="step forward">▶</button>
      <input type="range" min="0" max=${last} value=${index} aria-label="tick" onInput=${(e) => setIndex(Number(e.target.value))} />
      <span class="town-tick">tick ${frame.tick}</span>
    </div>
    <svg width=${data.width * SCALE} height=${data.height * SCALE} role="img" aria-label="town map">
      <rect width="100%" height="100%" fill="#f4f1ea" />
      ${data.places.map((p) => html`<g class="place"><rect x=${p.x * SCALE} y=${p.y * SCALE} width=${p.width * SCALE} height=${p.height * SCALE} fill=${FILL[p.type] ?? "#e6e6e6"} stroke="#999" /><text x=${p.x * SCALE + 2} y=${p.y * SCALE - 2} font-size="9">${p.name}</text></g>`)}
      ${frame.residents.map((r) => html`<g class="resident" data-agent=${r.agent}><circle cx=${r.x * SCALE + SCALE / 2} cy=${r.y * SCALE + SCALE / 2} r="5" fill="#d9480f" stroke="#fff" /><title>${`${r.name}: ${r.action}${r.place ? ` at ${r.place}` : ""}`}</title></g>`)}
    </svg>
    <${ResidentTable} residents=${frame.residents} />
  </section>`;
}
