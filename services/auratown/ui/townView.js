// AURATown's dashboard view (served by `probetown ui` as this world's view): the map, residents at
// the chosen tick (above AGGREGATE_OVER, one marker per place with a count, expanded on click), the
// tick's conversations and incidents at their places, a scrubber with play, pause and step, and a panel for the resident chosen in the
// table (its records up to the tick). The view's data is the map and the list of ticks; each tick's
// frame and each panel are asked for (`part`) when shown, frames kept (FRAMES_KEPT) and the ticks
// beside the shown one fetched ahead; while the scrubber is dragged, fetches wait for it to rest
// and those of ticks passed over are aborted (frameFetcher). Data: services/auratown/ui/townView.ts.
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const SCALE = 11;
const FILL = { home: "#fde2c8", cafe: "#f9d0d0", park: "#d3f0d0", shop: "#dde4ff" };
/** The table's rows are drawn only where it is scrolled to (a 1,000-resident town redrew 1,000 rows per tick). */
const ROW = 28;
const SHOWN = 20;

/** Above this many residents the map shows one marker per place (with its count), expanded on click. */
const AGGREGATE_OVER = 40;

/** Frames kept in the page (a long, large town's every frame would not fit); the oldest goes first. */
const FRAMES_KEPT = 64;

/** The residents grouped where they are: by place, or by map cell for those on the way. */
function clustersOf(residents, places) {
  const byName = new Map(places.map((p) => [p.name, p]));
  const out = new Map();
  for (const r of residents) {
    const place = r.place === null ? undefined : byName.get(r.place);
    const key = place ? `place:${place.name}` : `cell:${r.x},${r.y}`;
    let c = out.get(key);
    if (!c) {
      c = place
        ? { key, label: place.name, cx: (place.x + place.width / 2) * SCALE, cy: (place.y + place.height / 2) * SCALE, box: place, residents: [] }
        : { key, label: `on the way (${r.x}, ${r.y})`, cx: r.x * SCALE + SCALE / 2, cy: r.y * SCALE + SCALE / 2, box: null, residents: [] };
      out.set(key, c);
    }
    c.residents.push(r);
  }
  return [...out.values()];
}

/** An expanded cluster's residents spread over its place (or around its cell), one marker each. */
function spread(c) {
  const n = c.residents.length;
  const cols = Math.ceil(Math.sqrt(n));
  const box = c.box ? { x: c.box.x * SCALE, y: c.box.y * SCALE, w: c.box.width * SCALE, h: c.box.height * SCALE } : { x: c.cx - 30, y: c.cy - 30, w: 60, h: 60 };
  const rows = Math.ceil(n / cols);
  return c.residents.map((r, i) => ({ r, x: box.x + ((i % cols) + 0.5) * (box.w / cols), y: box.y + (Math.floor(i / cols) + 0.5) * (box.h / rows) }));
}

const residentMark = (r, x, y) => html`<g class="resident" key=${r.agent} data-agent=${r.agent}><circle cx=${x} cy=${y} r="5" fill="#d9480f" stroke="#fff" /><title>${`${r.name}: ${r.action}${r.place ? ` at ${r.place}` : ""}`}</title></g>`;

function Markers({ residents, places, expanded, onExpand }) {
  if (residents.length <= AGGREGATE_OVER) return residents.map((r) => residentMark(r, r.x * SCALE + SCALE / 2, r.y * SCALE + SCALE / 2));
  return clustersOf(residents, places).map((c) => {
    if (c.key === expanded) return html`<g class="cluster-expanded" key=${c.key} data-cluster=${c.label}>${spread(c).map(({ r, x, y }) => residentMark(r, x, y))}</g>`;
    const radius = Math.min(18, 6 + 3 * Math.log2(c.residents.length));
    const toggle = () => onExpand(c.key);
    return html`<g class="cluster" key=${c.key} data-cluster=${c.label} data-count=${c.residents.length} role="button" tabindex="0" aria-label=${`${c.label}: ${c.residents.length} residents; show them`}
      onClick=${toggle} onKeyDown=${(e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), toggle())}>
      <circle cx=${c.cx} cy=${c.cy} r=${radius} fill="#d9480f" stroke="#fff" /><text x=${c.cx} y=${c.cy + 4} text-anchor="middle" font-size="11" fill="#fff">${c.residents.length}</text>
    </g>`;
  });
}

/** The tick's conversations and incidents, a mark at the corner of their place. */
function EventMarks({ events, places, tick }) {
  const byName = new Map(places.map((p) => [p.name, p]));
  const shown = new Map();
  for (const e of events) {
    if (e.tick !== tick || !byName.has(e.location)) continue;
    const key = `${e.kind}:${e.location}`;
    shown.set(key, [...(shown.get(key) ?? []), e]);
  }
  return [...shown.entries()].map(([key, list]) => {
    const p = byName.get(list[0].location);
    const incident = list[0].kind === "incident";
    const x = (p.x + p.width) * SCALE - (incident ? 8 : 20);
    const y = p.y * SCALE + 8;
    return html`<g class=${`town-event town-${list[0].kind}`} key=${key} data-location=${list[0].location}><circle cx=${x} cy=${y} r="6" fill=${incident ? "#b00020" : "#1a55c4"} stroke="#fff" /><text x=${x} y=${y + 3} text-anchor="middle" font-size="8" fill="#fff">${incident ? "!" : list.length}</text><title>${list.map((e) => e.text).join("\n")}</title></g>`;
  });
}

/**
 * One resident at `tick`, as the server folds it from its records (`part({resident, tick})`): its
 * plan, private state and the rule that set it, reflections, conversations, and its beliefs about
 * others (what it last observed of each) beside their private state at the tick; a belief that no
 * longer matches it is marked stale. While the next tick's panel loads, the last one stays.
 */
function ResidentPanel({ agent, tick, part, names }) {
  const [panel, setPanel] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    // A panel for a tick scrubbed past is no longer wanted: its fetch is aborted.
    const controller = new AbortController();
    setError(null);
    part({ resident: agent, tick: String(tick) }, { signal: controller.signal }).then((p) => controller.signal.aborted || setPanel(p), (e) => controller.signal.aborted || setError(e.message));
    return () => controller.abort();
  }, [agent, tick, part]);
  const nameOf = (a) => names.get(a) ?? a;
  if (error) return html`<p class="damage">${error}</p>`;
  if (panel === null || panel.agent !== agent) return html`<p class="resident-loading">Loading ${nameOf(agent)}…</p>`;
  const { plan, state, beliefs, reflections, conversations } = panel;
  return html`<section class="resident-panel" data-agent=${agent} data-tick=${panel.tick} aria-label=${`resident ${panel.name}`}>
    <h3>${panel.name} at tick ${panel.tick}</h3>
    <h4>Plan</h4>
    ${plan === null ? html`<p>No plan logged yet.</p>` : html`<ol class="plan">${plan.plan.map((p, i) => html`<li key=${i}>${p.at} ${p.activity} (${p.location})</li>`)}</ol>`}
    <h4>Private state</h4>
    ${state === null ? html`<p>No private state logged yet.</p>` : html`<p class="private-state">${state.availability}, ${state.emotional_state}${state.unspoken_goal ? `, goal: ${state.unspoken_goal}` : ""} — rule <code class="rule">${state.rule}</code> (tick ${state.tick})</p>`}
    <h4>Beliefs about others</h4>
    ${beliefs.length === 0 ? html`<p>Has observed no one yet.</p>` : html`<table class="beliefs"><thead><tr><th>about</th><th>believes</th><th>seen at</th><th>truth</th><th>mark</th></tr></thead><tbody>
      ${beliefs.map((b) => {
        const truth = b.truth;
        const stale = truth !== null && (truth.availability !== b.availability || truth.emotional_state !== b.emotional_state);
        return html`<tr key=${b.about} class=${stale ? "belief stale" : "belief"} data-about=${b.about}><td>${b.name}</td><td>${b.availability}, ${b.emotional_state}</td><td>tick ${b.tick}</td><td>${truth === null ? "—" : `${truth.availability}, ${truth.emotional_state}`}</td><td class="belief-mark">${stale ? "stale" : ""}</td></tr>`;
      })}</tbody></table>`}
    <h4>Reflections</h4>
    <ul class="reflections">${reflections.length === 0 ? html`<li>none yet</li>` : reflections.flatMap((r) => r.insights.map((text, i) => html`<li key=${`${r.tick}-${i}`}>tick ${r.tick}: ${text}</li>`))}</ul>
    <h4>Conversations</h4>
    <ul class="conversations">${conversations.length === 0 ? html`<li>none yet</li>` : conversations.map((c, i) => html`<li key=${i}>tick ${c.tick}, with ${c.with} at ${c.location}: ${c.lines.map((l) => `${nameOf(l.speaker)}: ${l.text}`).join(" / ")}</li>`)}</ul>
  </section>`;
}

/**
 * How long the scrubber must rest before the frames it passed over are asked for, while others are
 * still being fetched: a drag across the day makes a request when it starts and one where it stops,
 * not one per tick passed (those pile up on the server, and the frame shown last arrives last).
 */
export const SCRUB_DEBOUNCE_MS = 60;

/**
 * The frames, asked for by tick, without a view framework (so tests drive it with fake timers):
 * `want(tick, beside)` says which tick is shown and which ticks beside it to fetch ahead;
 * `frameAt(tick)` is a kept frame or undefined. A want while no frame is on its way fetches at
 * once (a step, a jump: no added wait); while some are, the fetch waits until no want has come for
 * `debounceMs` (a drag). Either way every fetch of a tick no longer wanted (neither the one shown
 * nor beside it) is aborted at once, so at most three are ever on their way. `onFrame(tick)` says
 * a frame came; `onError(message)` that one failed (an abort is no failure).
 */
export function frameFetcher(part, { onFrame, onError, debounceMs = SCRUB_DEBOUNCE_MS, keep = FRAMES_KEPT, setTimer = setTimeout, clearTimer = clearTimeout }) {
  const kept = new Map();
  const onTheWay = new Map();
  let timer = null;
  let wanted = [];
  const start = (tick) => {
    if (kept.has(tick) || onTheWay.has(tick)) return;
    const controller = new AbortController();
    onTheWay.set(tick, controller);
    part({ tick: String(tick) }, { signal: controller.signal }).then(
      (frame) => {
        if (onTheWay.get(tick) !== controller) return;
        onTheWay.delete(tick);
        kept.set(tick, frame);
        if (kept.size > keep) kept.delete(kept.keys().next().value);
        onFrame(tick);
      },
      (e) => {
        if (onTheWay.get(tick) === controller) onTheWay.delete(tick);
        if (!controller.signal.aborted) onError(e.message);
      },
    );
  };
  const fetchWanted = () => {
    timer = null;
    for (const tick of wanted) start(tick);
  };
  return {
    frameAt: (tick) => kept.get(tick),
    /** Ticks whose frames are being fetched now. */
    fetching: () => [...onTheWay.keys()],
    want(tick, beside = []) {
      wanted = [tick, ...beside].filter((t) => t !== undefined);
      for (const [t, controller] of onTheWay) {
        if (wanted.includes(t)) continue;
        controller.abort();
        onTheWay.delete(t);
      }
      const busy = timer !== null || onTheWay.size > 0;
      if (timer !== null) clearTimer(timer);
      if (busy) timer = setTimer(fetchWanted, debounceMs);
      else fetchWanted();
    },
    close() {
      if (timer !== null) clearTimer(timer);
      timer = null;
      for (const controller of onTheWay.values()) controller.abort();
      onTheWay.clear();
    },
  };
}

/** The view's frame fetcher, drawing the view again when a frame comes. */
function useFrames(part, onError) {
  const [, setArrived] = useState(0);
  const fetcher = useRef(null);
  if (fetcher.current === null) fetcher.current = frameFetcher(part, { onFrame: () => setArrived((n) => n + 1), onError });
  useEffect(() => () => fetcher.current.close(), []);
  return fetcher.current;
}

function ResidentTable({ residents, chosen, onChoose }) {
  const [top, setTop] = useState(0);
  const first = Math.max(0, Math.floor(top / ROW) - 5);
  const last = Math.min(residents.length, first + SHOWN + 10);
  const spacer = (rows) => (rows > 0 ? html`<tr class="spacer" aria-hidden="true" style=${`height:${rows * ROW}px`}></tr>` : "");
  return html`<div class="residents-scroll" tabindex="0" role="region" aria-label="residents" style=${`max-height:${ROW * (SHOWN + 1)}px`} onScroll=${(e) => setTop(e.currentTarget.scrollTop)}>
    <table class="residents"><thead><tr><th>resident</th><th>place</th><th>doing</th></tr></thead>
      <tbody>${spacer(first)}${residents.slice(first, last).map((r) => html`<tr key=${r.agent} data-agent=${r.agent}><td><button class="resident-link" aria-pressed=${r.agent === chosen ? "true" : "false"} onClick=${() => onChoose(r.agent)}>${r.name}</button></td><td>${r.place ?? "on the way"}</td><td>${r.action}</td></tr>`)}${spacer(residents.length - last)}</tbody>
    </table>
  </div>`;
}

export function View({ data, part }) {
  const [index, setIndex] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [chosen, setChosen] = useState(null);
  const [expanded, setExpanded] = useState(null);
  const [error, setError] = useState(null);
  const shown = useRef(null);
  const { frameAt, want } = useFrames(part, setError);
  const ticks = data.ticks;
  const last = ticks.length - 1;
  const wanted = ticks[Math.min(index, Math.max(last, 0))];
  useEffect(() => {
    // The ticks beside it, for the next step or play.
    if (wanted !== undefined) want(wanted, [ticks[index + 1], ticks[index - 1]]);
  }, [wanted]);
  useEffect(() => {
    if (!playing) return undefined;
    const timer = setInterval(() => setIndex((i) => (i >= last ? (setPlaying(false), i) : i + 1)), 600);
    return () => clearInterval(timer);
  }, [playing, last]);
  if (last < 0) return html`<p>No resident positions in this log.</p>`;
  if (error) return html`<p class="damage">${error}</p>`;
  // The wanted tick's frame once it is here; until then the one shown before (the label says which).
  const arrived = frameAt(wanted);
  if (arrived !== undefined) shown.current = arrived;
  const frame = shown.current;
  if (frame === null) return html`<p class="town-loading">Loading tick ${wanted}…</p>`;
  return html`<section class="town-view">
    <div class="filters scrubber">
      <button onClick=${() => setIndex(Math.max(0, index - 1))} aria-label="step back">◀</button>
      <button class="play" onClick=${() => setPlaying(!playing)}>${playing ? "pause" : "play"}</button>
      <button onClick=${() => setIndex(Math.min(last, index + 1))} aria-label="step forward">▶</button>
      <input type="range" min="0" max=${last} value=${index} aria-label="tick" onInput=${(e) => setIndex(Number(e.target.value))} />
      <span class="town-tick">tick ${frame.tick}</span>${frame.tick === wanted ? "" : html` <span class="town-loading">loading tick ${wanted}…</span>`}
    </div>
    <svg width=${data.width * SCALE} height=${data.height * SCALE} role="group" aria-label="town map">
      <rect width="100%" height="100%" fill="#f4f1ea" />
      ${data.places.map((p) => html`<g class="place"><rect x=${p.x * SCALE} y=${p.y * SCALE} width=${p.width * SCALE} height=${p.height * SCALE} fill=${FILL[p.type] ?? "#e6e6e6"} stroke="#999" /><text x=${p.x * SCALE + 2} y=${p.y * SCALE - 2} font-size="9">${p.name}</text></g>`)}
      <${Markers} residents=${frame.residents} places=${data.places} expanded=${expanded} onExpand=${(key) => setExpanded(key === expanded ? null : key)} />
      <${EventMarks} events=${frame.events} places=${data.places} tick=${frame.tick} />
    </svg>
    ${frame.residents.length > AGGREGATE_OVER ? html`<p class="chart-note town-note">${frame.residents.length} residents: one marker per place with its count; click one (or Enter on it) to show its residents.${expanded ? html` <button class="link" onClick=${() => setExpanded(null)}>gather them again</button>` : ""}</p>` : ""}
    <${ResidentTable} residents=${frame.residents} chosen=${chosen} onChoose=${setChosen} />
    ${chosen === null ? "" : html`<${ResidentPanel} agent=${chosen} tick=${frame.tick} part=${part} names=${new Map(frame.residents.map((r) => [r.agent, r.name]))} />`}
  </section>`;
}
