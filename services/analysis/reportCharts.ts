// SVG charts for the experiment report, as plain markup strings.
//
// Why d3-scale and hand-written markup rather than vega-lite's headless toSVG(): the charts are two
// fixed shapes (a scatter with a Pareto front, grouped bars), and what is worth not writing by
// hand is the scale arithmetic — "nice" domains and round tick values — which d3-scale does in a
// few small dependency-free ESM packages. vega + vega-lite would bring a compiler, a dataflow
// runtime and a canvas fallback into an otherwise small CLI for the same two pictures. Building the
// markup ourselves also keeps the output byte-stable (fixed rounding, no ids or timestamps), so a
// regenerated report is identical to the first.
import { scaleBand, scaleLinear } from "d3-scale";

/** Tableau 10: distinguishable, colour-blind-aware categorical colours. */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"] as const;
export const colourOf = (i: number): string => PALETTE[i % PALETTE.length]!;

/** Marker shapes: with the palette, every point of a chart has its own shape × colour (up to 40 points). */
export const MARKERS = ["circle", "square", "triangle", "diamond", "triangle-down", "plus", "hexagon", "bowtie"] as const;
export type Marker = (typeof MARKERS)[number];
export const markerOf = (i: number): Marker => MARKERS[i % MARKERS.length]!;

/** A marker as one path centred on (cx, cy), about `size` across. */
export function markerPath(marker: Marker, cx: number, cy: number, size: number): string {
  const h = size / 2;
  const poly = (pts: ReadonlyArray<readonly [number, number]>) => `M${pts.map(([x, y]) => `${r(cx + x)},${r(cy + y)}`).join("L")}Z`;
  switch (marker) {
    case "circle":
      return `M${r(cx - h)},${r(cy)}A${r(h)},${r(h)} 0 1,0 ${r(cx + h)},${r(cy)}A${r(h)},${r(h)} 0 1,0 ${r(cx - h)},${r(cy)}Z`;
    case "square":
      return poly([[-h * 0.9, -h * 0.9], [h * 0.9, -h * 0.9], [h * 0.9, h * 0.9], [-h * 0.9, h * 0.9]]);
    case "triangle":
      return poly([[0, -h * 1.1], [h, h * 0.8], [-h, h * 0.8]]);
    case "triangle-down":
      return poly([[0, h * 1.1], [h, -h * 0.8], [-h, -h * 0.8]]);
    case "diamond":
      return poly([[0, -h * 1.2], [h, 0], [0, h * 1.2], [-h, 0]]);
    case "plus": {
      const t = h * 0.4;
      return poly([[-t, -h], [t, -h], [t, -t], [h, -t], [h, t], [t, t], [t, h], [-t, h], [-t, t], [-h, t], [-h, -t], [-t, -t]]);
    }
    case "hexagon":
      return poly([0, 1, 2, 3, 4, 5].map((k) => [h * Math.cos((Math.PI / 3) * k), h * Math.sin((Math.PI / 3) * k)] as const));
    case "bowtie":
      return poly([[-h, -h], [h, h], [h, -h], [-h, h]]);
  }
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** Coordinates rounded to 0.01 px: smaller files, and identical output across runs. */
const r = (x: number): string => String(Math.round(x * 100) / 100);

const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', sans-serif"`;

function frame(width: number, height: number, title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" ${FONT} font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${r(width / 2)}" y="20" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(title)}</text>`,
    ...body,
    `</svg>`,
    "",
  ].join("\n");
}

function tickLabel(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
}

/** Gridlines and tick labels of a linear y axis, plus its title. */
function yAxis(y: ReturnType<typeof scaleLinear<number>>, left: number, right: number, label: string, top: number, bottom: number): string[] {
  const out = [`<g class="y-axis" font-size="11" fill="#333">`];
  for (const t of y.ticks(5)) {
    out.push(`<line x1="${r(left)}" x2="${r(right)}" y1="${r(y(t))}" y2="${r(y(t))}" stroke="#e6e6e6"/>`);
    out.push(`<text x="${r(left - 6)}" y="${r(y(t) + 4)}" text-anchor="end">${tickLabel(t)}</text>`);
  }
  out.push(`<line x1="${r(left)}" x2="${r(left)}" y1="${r(top)}" y2="${r(bottom)}" stroke="#333"/>`);
  const mid = (top + bottom) / 2;
  out.push(`<text transform="translate(${r(left - 42)},${r(mid)}) rotate(-90)" text-anchor="middle" font-size="12">${escapeXml(label)}</text>`);
  out.push(`</g>`);
  return out;
}

const MARKER_SIZE = 12;

/**
 * The x at which to draw each marker so that markers which would overlap (centres closer than a
 * marker in both directions: conditions with the same results, common with deterministic
 * backends) stand side by side, a marker and a half apart around where they belong, in the
 * order given, inside `bounds` (the plot's left and right edges) when the group fits. Deterministic:
 * the same points give the same picture.
 */
export function spreadCoinciding(centres: ReadonlyArray<{ readonly cx: number; readonly cy: number }>, size: number, bounds: readonly [number, number] = [-Infinity, Infinity]): number[] {
  const groups: number[][] = [];
  centres.forEach((c, i) => {
    const group = groups.find((g) => g.some((j) => Math.abs(centres[j]!.cx - c.cx) < size && Math.abs(centres[j]!.cy - c.cy) < size));
    if (group === undefined) groups.push([i]);
    else group.push(i);
  });
  const shown = centres.map((c) => c.cx);
  for (const g of groups) {
    if (g.length < 2) continue;
    const step = size * 1.5;
    const half = ((g.length - 1) / 2) * step;
    // Centred on where they belong, but kept inside the plot (a group at the axis's end shifts in).
    const wanted = g.reduce((sum, j) => sum + centres[j]!.cx, 0) / g.length;
    const mid = Math.min(Math.max(wanted, bounds[0] + half + size / 2), bounds[1] - half - size / 2);
    g.forEach((j, k) => (shown[j] = mid - half + k * step));
  }
  return shown;
}

export interface ParetoPoint {
  readonly label: string;
  readonly x: number;
  readonly y: number;
  /** confidence interval of y, drawn as a vertical bar when finite */
  readonly yLo?: number;
  readonly yHi?: number;
  readonly front: boolean;
}

/**
 * Score against a cost (probes per query, private items disclosed beyond the need …), one point per
 * condition, each with its own marker shape and colour. Filled points are on the Pareto front (no
 * other condition scores at least as well at no more cost, better in one of the two); the front is
 * joined by a dashed step line. `xUnit` names the cost in each point's tooltip.
 */
export function paretoChart(spec: { title: string; xLabel: string; yLabel: string; xUnit?: string; points: readonly ParetoPoint[] }): string {
  const unit = spec.xUnit ?? spec.xLabel;
  // The legend's column is as wide as its longest label needs (about 6.2 px a character at 11 px).
  const right = Math.max(180, Math.ceil(36 + Math.max(0, ...spec.points.map((p) => p.label.length)) * 6.2));
  const width = 540 + right;
  const height = 440;
  const m = { top: 36, right, bottom: 52, left: 64 };
  const pts = spec.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xMax = Math.max(1, ...pts.map((p) => p.x));
  const yValues = pts.flatMap((p) => [p.y, p.yLo ?? p.y, p.yHi ?? p.y]).filter(Number.isFinite);
  const yMax = Math.max(1, ...yValues);
  const yMin = Math.min(0, ...yValues);
  const x = scaleLinear().domain([0, xMax * 1.05]).nice().range([m.left, width - m.right]);
  const y = scaleLinear().domain([yMin, yMax]).nice().range([height - m.bottom, m.top]);
  const body: string[] = [];
  body.push(...yAxis(y, m.left, width - m.right, spec.yLabel, m.top, height - m.bottom));
  body.push(`<g class="x-axis" font-size="11" fill="#333">`);
  for (const t of x.ticks(6)) {
    body.push(`<line x1="${r(x(t))}" x2="${r(x(t))}" y1="${r(height - m.bottom)}" y2="${r(height - m.bottom + 5)}" stroke="#333"/>`);
    body.push(`<text x="${r(x(t))}" y="${r(height - m.bottom + 18)}" text-anchor="middle">${tickLabel(t)}</text>`);
  }
  body.push(`<line x1="${r(m.left)}" x2="${r(width - m.right)}" y1="${r(height - m.bottom)}" y2="${r(height - m.bottom)}" stroke="#333"/>`);
  body.push(`<text x="${r((m.left + width - m.right) / 2)}" y="${r(height - 12)}" text-anchor="middle" font-size="12">${escapeXml(spec.xLabel)}</text>`);
  body.push(`</g>`);

  const front = pts.filter((p) => p.front).sort((a, b) => a.x - b.x || b.y - a.y);
  if (front.length > 1) {
    // Step line: from each front point go right at its score, then up to the next one.
    const path = front.map((p, i) => (i === 0 ? `M${r(x(p.x))},${r(y(p.y))}` : `H${r(x(p.x))}V${r(y(p.y))}`)).join("");
    body.push(`<path class="pareto-front" d="${path}" fill="none" stroke="#555" stroke-dasharray="4 3"/>`);
  }
  body.push(`<g class="points">`);
  const shownX = spreadCoinciding(pts.map((p) => ({ cx: x(p.x), cy: y(p.y) })), MARKER_SIZE, [m.left, width - m.right]);
  pts.forEach((p, k) => {
    const i = spec.points.indexOf(p);
    const colour = colourOf(i);
    const cx = shownX[k]!;
    const cy = y(p.y);
    const moved = cx !== x(p.x) ? " — drawn beside a condition with the same values" : "";
    if (p.yLo !== undefined && p.yHi !== undefined && Number.isFinite(p.yLo) && Number.isFinite(p.yHi)) {
      body.push(`<line x1="${r(cx)}" x2="${r(cx)}" y1="${r(y(p.yLo))}" y2="${r(y(p.yHi))}" stroke="${colour}" stroke-width="1.5"/>`);
    }
    body.push(
      `<path class="marker" data-marker="${markerOf(i)}" data-cx="${r(cx)}" data-cy="${r(cy)}" d="${markerPath(markerOf(i), cx, cy, MARKER_SIZE)}" fill="${p.front ? colour : "#ffffff"}" stroke="${colour}" stroke-width="2"><title>${escapeXml(`${p.label}: ${spec.yLabel} ${p.y.toFixed(3)} at ${p.x.toFixed(2)} ${unit}${p.front ? " (Pareto front)" : ""}${moved}`)}</title></path>`,
    );
  });
  body.push(`</g>`);
  // Legend instead of labels beside points: conditions often sit on top of each other.
  body.push(`<g class="legend" font-size="11">`);
  spec.points.forEach((p, i) => {
    const ly = m.top + 8 + i * 18;
    const lx = width - m.right + 16;
    body.push(`<path d="${markerPath(markerOf(i), lx, ly, 10)}" fill="${p.front ? colourOf(i) : "#ffffff"}" stroke="${colourOf(i)}" stroke-width="2"/>`);
    body.push(`<text x="${r(lx + 10)}" y="${r(ly + 4)}">${escapeXml(p.label)}</text>`);
  });
  const noteY = m.top + 8 + spec.points.length * 18 + 10;
  body.push(`<text x="${r(width - m.right + 10)}" y="${r(noteY)}" fill="#555">filled: Pareto front</text>`);
  if (shownX.some((cx, k) => cx !== x(pts[k]!.x))) body.push(`<text x="${r(width - m.right + 10)}" y="${r(noteY + 16)}" fill="#555">side by side: same values</text>`);
  body.push(`</g>`);
  return frame(width, height, spec.title, body);
}

/** Bars per group (e.g. subcategory), one bar per series (condition); null values leave a gap. */
export function groupedBarChart(spec: { title: string; yLabel: string; groups: readonly string[]; series: ReadonlyArray<{ label: string; values: ReadonlyArray<number | null> }> }): string {
  const width = Math.max(640, 120 + spec.groups.length * Math.max(90, spec.series.length * 16));
  const longestSeries = Math.max(0, ...spec.series.map((x) => x.label.length));
  const legendWidth = Math.max(170, Math.ceil(24 + longestSeries * 6.2));
  const perRow = Math.max(1, Math.floor((width - 64) / legendWidth));
  const legendRows = Math.ceil(spec.series.length / perRow);
  // Group labels wider than their band are slanted, and the chart grows below to hold them.
  const band = scaleBand().domain(spec.groups).range([64, width - 20]).paddingInner(0.2).paddingOuter(0.1).bandwidth();
  const longestGroup = Math.max(0, ...spec.groups.map((g) => g.length)) * 6.2;
  const slanted = longestGroup > band;
  const labelDepth = slanted ? Math.ceil(longestGroup * 0.5) : 0;
  const m = { top: 36, right: 20, bottom: 44 + labelDepth + legendRows * 16, left: 64 };
  const height = 300 + m.bottom;
  const values = spec.series.flatMap((s) => s.values).filter((v): v is number => v !== null && Number.isFinite(v));
  const y = scaleLinear().domain([Math.min(0, ...values), Math.max(1, ...values)]).nice().range([height - m.bottom, m.top]);
  const x0 = scaleBand().domain(spec.groups).range([m.left, width - m.right]).paddingInner(0.2).paddingOuter(0.1);
  const x1 = scaleBand().domain(spec.series.map((_, i) => String(i))).range([0, x0.bandwidth()]).padding(0.08);
  const body: string[] = [];
  body.push(...yAxis(y, m.left, width - m.right, spec.yLabel, m.top, height - m.bottom));
  body.push(`<g class="bars">`);
  spec.groups.forEach((g, gi) => {
    const gx = x0(g)!;
    spec.series.forEach((s, si) => {
      const v = s.values[gi];
      if (v === null || v === undefined || !Number.isFinite(v)) return;
      const bx = gx + x1(String(si))!;
      const top = y(Math.max(0, v));
      const h = Math.abs(y(v) - y(0));
      body.push(`<rect x="${r(bx)}" y="${r(top)}" width="${r(x1.bandwidth())}" height="${r(h)}" fill="${colourOf(si)}"><title>${escapeXml(`${s.label} · ${g}: ${v.toFixed(3)}`)}</title></rect>`);
    });
  });
  body.push(`</g>`);
  body.push(`<g class="x-axis" font-size="11" fill="#333">`);
  body.push(`<line x1="${r(m.left)}" x2="${r(width - m.right)}" y1="${r(y(0))}" y2="${r(y(0))}" stroke="#333"/>`);
  for (const g of spec.groups) {
    const gx = x0(g)! + x0.bandwidth() / 2;
    const gy = height - m.bottom + 16;
    body.push(slanted ? `<text transform="translate(${r(gx)},${r(gy)}) rotate(-30)" text-anchor="end">${escapeXml(g)}</text>` : `<text x="${r(gx)}" y="${r(gy)}" text-anchor="middle">${escapeXml(g)}</text>`);
  }
  body.push(`</g>`);
  body.push(`<g class="legend" font-size="11">`);
  spec.series.forEach((s, i) => {
    const lx = m.left + (i % perRow) * legendWidth;
    const ly = height - m.bottom + 40 + labelDepth + Math.floor(i / perRow) * 16;
    body.push(`<rect x="${r(lx)}" y="${r(ly - 9)}" width="10" height="10" fill="${colourOf(i)}"/>`);
    body.push(`<text x="${r(lx + 14)}" y="${r(ly)}">${escapeXml(s.label)}</text>`);
  });
  body.push(`</g>`);
  return frame(width, height, spec.title, body);
}
