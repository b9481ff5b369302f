// Interactive charts (Chart.js on a canvas) for the report and sweep views: a Pareto scatter, paired
// differences with their intervals, grouped bars. Each condition keeps one colour and one marker
// shape across a report's charts; points that coincide are spread sideways (jitter) so every
// condition stays visible, while tooltips and the selection panel show the exact values. Clicking a
// point (or a condition's button, for the keyboard) selects it; the panel below the chart says what
// it is.
import { Chart, registerables } from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "./common.js";

Chart.register(...registerables);

/** Tableau 10, as the static report charts use. */
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
const MARKERS = ["circle", "rect", "triangle", "rectRot", "star", "crossRot", "rectRounded", "cross"];
const MARKER_NAMES = { circle: "circle", rect: "square", triangle: "triangle", rectRot: "diamond", star: "star", crossRot: "x", rectRounded: "rounded square", cross: "plus" };

/** A condition's colour and marker, by its place in the report's list of conditions. */
export function styleOf(conditions, condition) {
  const i = Math.max(0, conditions.indexOf(condition));
  return { colour: PALETTE[i % PALETTE.length], marker: MARKERS[i % MARKERS.length] };
}

export const fmt = (v, digits = 3) => (v === null || v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(digits));

/**
 * Points that coincide (within 1% of each axis's span) spread horizontally around their true x by
 * 3% of the x span apiece (of 1 when every x is 0), in the order given (deterministic).
 */
export function jittered(points) {
  const span = (vs) => Math.max(Math.max(...vs) - Math.min(...vs), Math.abs(Math.max(...vs))) || 1;
  const xSpan = span(points.map((p) => p.x));
  const ySpan = span(points.map((p) => p.y));
  const groups = new Map();
  points.forEach((p, i) => {
    const key = `${Math.round((p.x / xSpan) * 100)}|${Math.round((p.y / ySpan) * 100)}`;
    (groups.get(key) ?? groups.set(key, []).get(key)).push(i);
  });
  const dx = new Array(points.length).fill(0);
  for (const members of groups.values()) members.forEach((i, k) => (dx[i] = (k - (members.length - 1) / 2) * 0.03 * xSpan));
  return points.map((p, i) => ({ ...p, shownX: p.x + dx[i], jittered: dx[i] !== 0 }));
}

/** Draws the vertical interval of each point of a scatter (its `lo`–`hi`). */
const intervals = {
  id: "intervals",
  afterDatasetsDraw(chart) {
    const { ctx, scales } = chart;
    chart.data.datasets.forEach((ds, di) => {
      if (ds.type === "line" || chart.getDatasetMeta(di).hidden) return;
      ds.data.forEach((p) => {
        if (p.lo === null || p.hi === null) return;
        const x = scales.x.getPixelForValue(p.x);
        ctx.save();
        ctx.strokeStyle = ds.borderColor;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(x, scales.y.getPixelForValue(p.lo));
        ctx.lineTo(x, scales.y.getPixelForValue(p.hi));
        ctx.stroke();
        ctx.restore();
      });
    });
  },
};

/** Marks each interval bar's estimate with a dark tick, and zero with a line. */
const estimates = {
  id: "estimates",
  afterDatasetsDraw(chart) {
    const { ctx, scales } = chart;
    const rows = chart.config.options.rows ?? [];
    const meta = chart.getDatasetMeta(0);
    ctx.save();
    ctx.strokeStyle = "#222";
    ctx.lineWidth = 3;
    meta.data.forEach((bar, i) => {
      const x = scales.x.getPixelForValue(rows[i].estimate);
      ctx.beginPath();
      ctx.moveTo(x, bar.y - 9);
      ctx.lineTo(x, bar.y + 9);
      ctx.stroke();
    });
    ctx.strokeStyle = "#555";
    ctx.lineWidth = 1;
    ctx.setLineDash([4, 3]);
    const zero = scales.x.getPixelForValue(0);
    ctx.beginPath();
    ctx.moveTo(zero, scales.y.top);
    ctx.lineTo(zero, scales.y.bottom);
    ctx.stroke();
    ctx.restore();
  },
};

/** A chart on a canvas, made once per `config` and destroyed with the component. */
function useChart(makeConfig, deps) {
  const canvas = useRef(null);
  const chart = useRef(null);
  useEffect(() => {
    chart.current = new Chart(canvas.current, makeConfig());
    return () => chart.current?.destroy();
  }, deps);
  return { canvas, chart };
}

function Selected({ lines }) {
  if (lines === null) return html`<p class="chart-selected chart-hint">Click a point or a condition to see its values.</p>`;
  return html`<dl class="chart-selected" aria-live="polite">${lines.map(([k, v]) => html`<dt>${k}</dt><dd data-field=${k}>${v}</dd>`)}</dl>`;
}

function ConditionButtons({ conditions, shown, selected, onSelect }) {
  return html`<div class="chart-conditions" role="group" aria-label="conditions">${shown.map((c) => {
    const { colour, marker } = styleOf(conditions, c);
    return html`<button class="chart-condition" data-condition=${c} aria-pressed=${selected === c ? "true" : "false"} onClick=${() => onSelect(c)}><span class="swatch" style=${`border-color:${colour}`}>${MARKER_NAMES[marker]}</span> ${c}</button>`;
  })}</div>`;
}

const pointLines = (chart, p) => [
  ["condition", p.condition],
  [chart.xLabel, fmt(p.x)],
  [chart.yLabel, fmt(p.y)],
  ["interval", p.lo === null ? "–" : `[${fmt(p.lo)}, ${fmt(p.hi)}]`],
  ["Pareto front", p.front ? "yes" : "no"],
  ...(p.jittered ? [["drawn", "moved sideways: it coincides with another condition's point"]] : []),
];

/** Score against a cost, one point per condition; filled on the front, joined by a dashed step line. */
export function ScatterChart({ chart: spec, conditions }) {
  const [selected, setSelected] = useState(null);
  const points = jittered(spec.points);
  const { canvas, chart } = useChart(() => {
    const front = points.filter((p) => p.front).sort((a, b) => a.x - b.x);
    return {
      type: "scatter",
      data: {
        datasets: [
          ...points.map((p) => {
            const { colour, marker } = styleOf(conditions, p.condition);
            return {
              label: p.condition,
              data: [{ ...p, trueX: p.x, x: p.shownX }],
              pointStyle: marker,
              pointRadius: 7,
              pointHoverRadius: 10,
              pointBorderWidth: 2,
              borderColor: colour,
              backgroundColor: p.front ? colour : "#ffffff",
            };
          }),
          ...(front.length > 1 ? [{ type: "line", label: "Pareto front", data: front.map((p) => ({ x: p.x, y: p.y })), stepped: "before", borderDash: [4, 3], borderColor: "#555", borderWidth: 1, pointRadius: 0, fill: false }] : []),
        ],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { title: { display: true, text: spec.xLabel }, grace: "5%" }, y: { title: { display: true, text: spec.yLabel }, grace: "5%" } },
        plugins: {
          legend: { labels: { usePointStyle: true, filter: (item) => item.text !== "Pareto front" } },
          tooltip: { filter: (item) => item.dataset.type !== "line", callbacks: { label: (item) => `${item.raw.condition}: ${spec.yLabel} ${fmt(item.raw.y)} at ${fmt(item.raw.trueX)} ${spec.xLabel}` } },
        },
        onClick: (_event, elements) => {
          const hit = elements.find((e) => chart.current.data.datasets[e.datasetIndex].type !== "line");
          if (hit) setSelected(points[hit.datasetIndex].condition);
        },
      },
      plugins: [intervals],
    };
  }, [spec]);
  const select = (condition) => {
    setSelected(condition);
    const i = points.findIndex((p) => p.condition === condition);
    chart.current?.setActiveElements([{ datasetIndex: i, index: 0 }]);
    chart.current?.tooltip.setActiveElements([{ datasetIndex: i, index: 0 }], { x: 0, y: 0 });
    chart.current?.update();
  };
  const point = points.find((p) => p.condition === selected) ?? null;
  return html`<figure class="chart scatter" data-chart=${spec.id}>
    <figcaption>${spec.title}</figcaption>
    <div class="chart-canvas"><canvas ref=${canvas} role="img" aria-label=${`${spec.title}: ${spec.points.map((p) => `${p.condition} ${fmt(p.y)} at ${fmt(p.x)}`).join("; ")}`}></canvas></div>
    <${ConditionButtons} conditions=${conditions} shown=${points.map((p) => p.condition)} selected=${selected} onSelect=${select} />
    <${Selected} lines=${point === null ? null : pointLines(spec, point)} />
  </figure>`;
}

/** Paired differences: one interval bar per comparison, its estimate marked, zero dashed. */
export function DifferencesChart({ chart: spec }) {
  const [selected, setSelected] = useState(null);
  const unit = spec.unit ? ` ${spec.unit}` : "";
  const { canvas } = useChart(
    () => ({
      type: "bar",
      data: { labels: spec.rows.map((r) => r.label), datasets: [{ label: `interval${unit}`, data: spec.rows.map((r) => [r.lo, r.hi]), backgroundColor: spec.rows.map((r) => (r.lo > 0 || r.hi < 0 ? "#4e79a7aa" : "#bab0acaa")), borderColor: "#333", borderWidth: 1, barThickness: 14 }] },
      options: {
        rows: spec.rows,
        indexAxis: "y",
        animation: false,
        maintainAspectRatio: false,
        scales: { x: { title: { display: true, text: `Δ${unit}` }, grace: "5%" } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: (item) => { const r = spec.rows[item.dataIndex]; return `Δ ${fmt(r.estimate)}${unit} [${fmt(r.lo)}, ${fmt(r.hi)}] n ${r.n}`; } } } },
        onClick: (_event, elements) => elements[0] && setSelected(elements[0].index),
      },
      plugins: [estimates],
    }),
    [spec],
  );
  const r = selected === null ? null : spec.rows[selected];
  const lines = r === null ? null : [["comparison", r.label], ["Δ", `${fmt(r.estimate)}${unit}`], ["interval", `[${fmt(r.lo)}, ${fmt(r.hi)}]${unit}`], ["n", String(r.n)], ["p", fmt(r.p)], ["p adjusted", fmt(r.pAdjusted)]];
  return html`<figure class="chart differences" data-chart=${spec.id}>
    <figcaption>${spec.title} <small>${spec.method}</small></figcaption>
    <div class="chart-canvas" style=${`height:${80 + spec.rows.length * 34}px`}><canvas ref=${canvas} role="img" aria-label=${`${spec.title}: ${spec.rows.map((x) => `${x.label} ${fmt(x.estimate)} [${fmt(x.lo)}, ${fmt(x.hi)}]`).join("; ")}`}></canvas></div>
    <div class="chart-conditions" role="group" aria-label="comparisons">${spec.rows.map((x, i) => html`<button class="chart-comparison" data-comparison=${x.label} aria-pressed=${selected === i ? "true" : "false"} onClick=${() => setSelected(i)}>${x.label}</button>`)}</div>
    <${Selected} lines=${lines} />
  </figure>`;
}

/** Bars per group (subcategory), one bar per condition in its colour. */
export function BarsChart({ chart: spec, conditions }) {
  const [selected, setSelected] = useState(null);
  const { canvas } = useChart(
    () => ({
      type: "bar",
      data: { labels: spec.groups, datasets: spec.series.map((s) => ({ label: s.condition, data: s.values, backgroundColor: styleOf(conditions, s.condition).colour })) },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: { y: { title: { display: true, text: spec.yLabel }, beginAtZero: true } },
        onClick: (_event, elements) => elements[0] && setSelected({ series: elements[0].datasetIndex, group: elements[0].index }),
      },
    }),
    [spec],
  );
  const lines = selected === null ? null : [["condition", spec.series[selected.series].condition], ["subcategory", spec.groups[selected.group]], [spec.yLabel, fmt(spec.series[selected.series].values[selected.group])]];
  return html`<figure class="chart bars" data-chart=${spec.id}>
    <figcaption>${spec.title}</figcaption>
    <div class="chart-canvas"><canvas ref=${canvas} role="img" aria-label=${spec.title}></canvas></div>
    <${Selected} lines=${lines} />
  </figure>`;
}

/** The conditions of a set of chart sections, in first-appearance order: their colours and markers. */
export function conditionsOf(sections) {
  const seen = [];
  const add = (c) => seen.includes(c) || seen.push(c);
  for (const s of sections) {
    for (const sc of s.scatters) sc.points.forEach((p) => add(p.condition));
    for (const b of s.bars) b.series.forEach((x) => add(x.condition));
  }
  return seen;
}

export function ChartSections({ sections }) {
  const conditions = conditionsOf(sections);
  return sections.map((s) => html`<section class="chart-section">
    <h3>${s.title}</h3>
    <div class="chart-grid">
      ${s.scatters.map((c) => html`<${ScatterChart} key=${c.id} chart=${c} conditions=${conditions} />`)}
      ${s.differences.map((c) => html`<${DifferencesChart} key=${c.id} chart=${c} />`)}
      ${s.bars.map((c) => html`<${BarsChart} key=${c.id} chart=${c} conditions=${conditions} />`)}
    </div>
  </section>`);
}
