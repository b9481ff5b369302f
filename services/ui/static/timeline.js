// The timeline: one lane per actor (the records it sent), each record a mark at its tick, coloured
// by kind. Drawn as plain SVG: marks and lanes need no charting library.
import { h } from "preact";
import htm from "htm";

const html = htm.bind(h);

/** A record's kind, from its type's words alone (the dashboard names no world). */
export function kindOf(type) {
  if (type.startsWith("llm.")) return "model";
  if (/probe/.test(type)) return "probe";
  if (/message|said|say|convers|utter|chat|answer|ask/.test(type)) return "message";
  if (type.startsWith("tick.") || type.startsWith("episode.")) return "kernel";
  return "other";
}

export const KINDS = [
  ["model", "#d9480f", "model calls"],
  ["probe", "#7048e8", "probes"],
  ["message", "#1c7ed6", "messages"],
  ["kernel", "#adb5bd", "ticks and episode"],
  ["other", "#2b8a3e", "other records"],
];
const colour = Object.fromEntries(KINDS.map(([k, c]) => [k, c]));

const LANE = 24;
const LABEL = 150;
const MARK = 8;
const PER_ROW = 6;

export function Timeline({ records, actors, selected, onSelect }) {
  if (records.length === 0) return html`<p class="empty-timeline">No records match the filters.</p>`;
  const lanes = actors.filter((a) => records.some((r) => r.from === a));
  const laneOf = new Map(lanes.map((a, i) => [a, i]));
  const first = records[0].tick;
  const last = records[records.length - 1].tick;
  // Marks of one actor in one tick are laid side by side, then in rows, so none hides another.
  const perCell = new Map();
  let widest = 1;
  for (const r of records) {
    const key = `${r.from} ${r.tick}`;
    const n = (perCell.get(key) ?? 0) + 1;
    perCell.set(key, n);
    widest = Math.max(widest, Math.min(n, PER_ROW));
  }
  const tickWidth = Math.max(18, widest * (MARK + 1) + 6);
  const rows = Math.max(1, Math.ceil(Math.max(...perCell.values()) / PER_ROW));
  const laneHeight = Math.max(LANE, rows * (MARK + 1) + 8);
  const width = LABEL + (last - first + 1) * tickWidth + 10;
  const height = 20 + lanes.length * laneHeight;
  const placed = new Map();
  const marks = records.map((r) => {
    const key = `${r.from} ${r.tick}`;
    const k = placed.get(key) ?? 0;
    placed.set(key, k + 1);
    const x = LABEL + (r.tick - first) * tickWidth + 3 + (k % PER_ROW) * (MARK + 1);
    const y = 20 + laneOf.get(r.from) * laneHeight + 4 + Math.floor(k / PER_ROW) * (MARK + 1);
    const kind = kindOf(r.type);
    return html`<rect class=${`mark kind-${kind}${selected === r.seq ? " selected" : ""}`} data-seq=${r.seq} data-type=${r.type} x=${x} y=${y} width=${MARK} height=${MARK} fill=${colour[kind]} onClick=${() => onSelect(r.seq)}><title>${`#${r.seq} ${r.type} · tick ${r.tick} · from ${r.from}`}</title></rect>`;
  });
  const step = Math.max(1, Math.ceil(40 / tickWidth));
  const ticks = [];
  for (let t = first; t <= last; t += step) ticks.push(html`<text x=${LABEL + (t - first) * tickWidth + 2} y="12">${t}</text>`);
  return html`<svg width=${width} height=${height} role="img" aria-label="records by actor and tick">
    ${ticks}
    ${lanes.map((a, i) => html`<g><rect x="0" y=${20 + i * laneHeight} width=${width} height=${laneHeight} fill=${i % 2 ? "#f7f7f9" : "#fff"} /><text class="lane-label" x="4" y=${20 + i * laneHeight + 14}>${a.length > 22 ? a.slice(0, 21) + "…" : a}</text></g>`)}
    ${marks}
  </svg>`;
}
