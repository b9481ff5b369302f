// "Fork here", in a record's detail: asks the server (`POST /api/fork`) to fork the episode after
// the record's tick under a condition, then opens the compare view of the parent and its child.
import { useState } from "preact/hooks";
import { compareLink, getJson, html } from "./common.js";

export function ForkForm({ id, tick, conditions, current }) {
  const [condition, setCondition] = useState(conditions.find((c) => c !== current) ?? conditions[0] ?? "");
  const [state, setState] = useState({ busy: false, error: null });
  const submit = async (ev) => {
    ev.preventDefault();
    setState({ busy: true, error: null });
    try {
      const child = await getJson("/api/fork", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, atTick: tick, condition }) });
      location.hash = compareLink(id, child.id);
    } catch (error) {
      setState({ busy: false, error: error.message });
    }
  };
  return html`<form class="fork-form" onSubmit=${submit}>
    <label>condition <select name="condition" value=${condition} onChange=${(e) => setCondition(e.target.value)}>${conditions.map((c) => html`<option value=${c}>${c}</option>`)}</select></label>
    <button type="submit" class="fork-button" disabled=${state.busy}>${state.busy ? "forking…" : `Fork after tick ${tick}`}</button>
    ${state.error ? html`<p class="damage fork-error" role="alert">${state.error}</p>` : ""}
  </form>`;
}
