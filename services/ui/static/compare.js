// The compare view (`#/compare?a=&b=`): two episodes through the kernel's diff (`/api/compare`, what
// `probetown diff` prints): how they are related, where they first part (the two records side by
// side), whether their state hashes agree tick by tick, record counts by type, and whose state differs.
import { useEffect, useState } from "preact/hooks";
import { compareLink, episodeLink, getJson, html } from "./common.js";

function Picker({ a, b, episodes }) {
  const [left, setLeft] = useState(a);
  const [right, setRight] = useState(b);
  const options = (chosen) => html`<option value="" disabled selected=${!chosen}>choose…</option>${episodes.map((e) => html`<option value=${e.id} selected=${e.id === chosen}>${e.id}</option>`)}`;
  const go = (ev) => {
    ev.preventDefault();
    if (left && right) location.hash = compareLink(left, right);
  };
  return html`<form class="filters compare-picker" onSubmit=${go}>
    <label>a <select name="a" onChange=${(e) => setLeft(e.target.value)}>${options(left)}</select></label>
    <label>b <select name="b" onChange=${(e) => setRight(e.target.value)}>${options(right)}</select></label>
    <button type="submit" disabled=${!left || !right}>compare</button>
  </form>`;
}

function RecordSide({ side, id, record, other }) {
  if (record === null) return html`<div class="compare-record" data-side=${side}><h4>${side}: ${id}</h4><p>no record here: ${other}'s tick goes on past ${side}'s</p></div>`;
  return html`<div class="compare-record" data-side=${side}>
    <h4>${side}: <a href=${episodeLink(id, record.seq)}>${id} #${record.seq}</a></h4>
    <dl><dt>type</dt><dd class="compare-type">${record.type}</dd><dt>from</dt><dd>${record.from}</dd><dt>to</dt><dd>${JSON.stringify(record.to)}</dd></dl>
    <pre>${JSON.stringify(record.payload, null, 2)}</pre>
  </div>`;
}

const TICK_STATE = (t) => (t.a === null ? "only-b" : t.b === null ? "only-a" : t.agree ? "agree" : "differ");
const TICK_WORDS = { agree: "same state", differ: "state differs", "only-a": "only in a", "only-b": "only in b" };

function TickStrip({ ticks }) {
  const count = (state) => ticks.filter((t) => TICK_STATE(t) === state).length;
  return html`<div class="tick-strip">
    <p class="tick-summary">state hash per tick: same at ${count("agree")}, different at ${count("differ")}, only in a at ${count("only-a")}, only in b at ${count("only-b")}</p>
    <ol class="ticks">${ticks.map((t) => html`<li class=${`tick tick-${TICK_STATE(t)}`} data-tick=${t.tick} data-state=${TICK_STATE(t)} title=${`tick ${t.tick}: ${TICK_WORDS[TICK_STATE(t)]}`}></li>`)}</ol>
    <div class="legend">${Object.entries(TICK_WORDS).map(([k, w]) => html`<span><i class=${`tick-${k}`}></i>${w}</span>`)}</div>
  </div>`;
}

export function CompareView({ a, b }) {
  const [episodes, setEpisodes] = useState([]);
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    getJson("/api/episodes").then((d) => setEpisodes(d.episodes), (e) => setError(e.message));
  }, []);
  useEffect(() => {
    setResult(null);
    setError(null);
    if (a && b) getJson(`/api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`).then(setResult, (e) => setError(e.message));
  }, [a, b]);
  const head = html`<h2>Compare</h2><${Picker} key=${`${a}|${b}|${episodes.length}`} a=${a} b=${b} episodes=${episodes} />`;
  if (error) return html`<section class="compare-view">${head}<p class="damage">${error}</p></section>`;
  if (!a || !b) return html`<section class="compare-view">${head}<p>Choose two episodes.</p></section>`;
  if (!result) return html`<section class="compare-view">${head}<p>Comparing ${a} and ${b}…</p></section>`;
  const d = result.diff;
  const f = d.firstDifference;
  const changed = d.types.filter((t) => t.a !== t.b);
  const range = d.compared === null ? "no tick in common" : d.compared.first === d.compared.last ? `tick ${d.compared.first} (the one both hold)` : `ticks ${d.compared.first}–${d.compared.last} (both hold them)`;
  return html`<section class="compare-view" data-identical=${String(d.identical)}>
    ${head}
    <p><a href=${episodeLink(a)}>open a: ${a}</a> · <a href=${episodeLink(b)}>open b: ${b}</a></p>
    <p class="compare-relation">${d.relation}; compared over ${range}:${" "}
      <strong class=${d.identical ? "verdict-same" : "verdict-differ"}>${d.identical ? "identical" : "different"}</strong></p>
    ${[result.damage.a && `a is damaged: ${result.damage.a}`, result.damage.b && `b is damaged: ${result.damage.b}`].filter(Boolean).map((t) => html`<div class="damage">${t} (compared as far as it is intact)</div>`)}
    ${d.notes.length ? html`<ul class="notes">${d.notes.map((n) => html`<li>${n}</li>`)}</ul>` : ""}
    ${f === null ? "" : html`<div class="first-difference" data-tick=${f.tick} data-index=${f.index}>
      <h3>First difference: tick ${f.tick}, record ${f.index + 1} of the tick${f.state ? ` (the state it commits; its other records are the same: ${f.state.slice(0, 8).join(", ")}${f.state.length > 8 ? " …" : ""})` : ""}</h3>
      <div class="side-by-side"><${RecordSide} side="a" id=${a} record=${f.a} other="b" /><${RecordSide} side="b" id=${b} record=${f.b} other="a" /></div>
    </div>`}
    <h3>State, tick by tick</h3>
    <${TickStrip} ticks=${result.ticks} />
    <p>${d.ticksDiffering} compared ticks with different state hashes; ${d.actors.length} actors' state differs, ${d.actorsEqual} equal throughout.</p>
    ${d.actors.length ? html`<table class="compare-actors"><thead><tr><th>actor</th><th>differs from tick</th><th>at ticks</th><th>at the last tick</th></tr></thead>
      <tbody>${d.actors.slice(0, 50).map((x) => html`<tr><td>${x.actor}</td><td>${x.firstTick}</td><td>${x.ticks}</td><td>${x.atLastTick ? "differs" : "equal again"}</td></tr>`)}</tbody></table>
      ${d.actors.length > 50 ? html`<p>… and ${d.actors.length - 50} more (<code>probetown diff --json</code> lists them all)</p>` : ""}` : ""}
    <h3>Records by type</h3>
    ${changed.length ? html`<table class="compare-types"><thead><tr><th>type</th><th>a</th><th>b</th></tr></thead>
      <tbody>${changed.map((t) => html`<tr><td>${t.type}</td><td>${t.a}</td><td>${t.b}</td></tr>`)}</tbody></table>
      <p>${d.types.length - changed.length} types with equal counts not shown.</p>` : html`<p>The same count of each type on both sides.</p>`}
  </section>`;
}
