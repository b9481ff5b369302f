// The household's dashboard view (served by `probetown ui` as this world's view): a turn picker;
// the turn's actions, messages and rooms; each agent's knowledge after it; the K-goal tree with the
// K-probe answers. Data: services/household/ui/householdView.ts.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const placeOf = (p) => ("on" in p ? `on ${p.on}` : `inside ${p.inside}`);

function Room({ view, note }) {
  const objects = Object.entries(view.objects);
  const open = Object.entries(view.open);
  const agents = Object.entries(view.agents);
  return html`<li class="room" data-room=${view.room}>
    <strong>${view.room}</strong> ${note ? html`<small class=${note.stale ? "stale" : ""}>${note.text}</small>` : ""}
    <ul>
      ${objects.map(([o, p]) => html`<li key=${o} class="object" data-object=${o}>${o} ${placeOf(p)}</li>`)}
      ${open.map(([f, isOpen]) => html`<li key=${f}>${f} ${isOpen ? "open" : "closed"}</li>`)}
      ${agents.map(([a, holding]) => html`<li key=${a}>${a} here${holding ? `, holding ${holding}` : ""}</li>`)}
    </ul>
  </li>`;
}

function Knowledge({ k, turn, secrets }) {
  return html`<section class="knowledge" data-agent=${k.agent} aria-label=${`what ${k.agent} knows`}>
    <h4>${k.agent}</h4>
    <p>in ${k.room ?? "—"}${k.holding ? `, holding ${k.holding}` : ""}</p>
    <p>secrets: ${(secrets[k.agent] ?? []).join(" ") || "none"}</p>
    <ul class="rooms">${k.rooms.map((v) => html`<${Room} key=${v.room} view=${v} note=${{ stale: v.seenAt < turn, text: v.seenAt < turn ? `last seen turn ${v.seenAt}` : "seen this turn" }} />`)}</ul>
    <p>told:</p>
    <ul class="told">${k.told.length === 0 ? html`<li>nothing</li>` : k.told.map((m, i) => html`<li key=${i}>turn ${m.turn}, ${m.from}: ${m.text}</li>`)}</ul>
  </section>`;
}

function KNode({ node }) {
  const answer = node.answer === null ? "no answer" : node.answer.holds === null ? "unknown" : `${node.answer.predicate}(${node.answer.args.join(", ")}) ${node.answer.holds ? "holds" : "does not hold"}`;
  const score = node.score === null ? "not scored" : `${node.score.passed ? "passed" : "failed"} (against the ${node.score.basis})`;
  return html`<li class=${`k-node ${node.score?.passed ? "passed" : "failed"}`} data-probe=${node.probeId}>
    <span>K ${node.agent}${node.subjects.map((s) => ` K ${s}`).join("")} ${node.fact}</span> — <span class="k-answer">${answer}</span>; <span class="k-score">${score}</span>
    ${node.children.length > 0 ? html`<ul>${node.children.map((c) => html`<${KNode} key=${c.probeId} node=${c} />`)}</ul>` : ""}
  </li>`;
}

export function View({ data }) {
  const [index, setIndex] = useState(0);
  const last = data.turns.length - 1;
  if (last < 0) return html`<p>No turn in this log.</p>`;
  const turn = data.turns[Math.min(index, last)];
  return html`<section class="household-view">
    <p>${data.title ?? "household"}: goal <code>${data.goal ?? "—"}</code></p>
    ${data.ended ? html`<p class="ended">Ended at turn ${data.ended.turn}: ${data.ended.reason}, ${Math.round(data.ended.percentComplete * 100)}% complete, ${data.ended.messagesSent} message(s)</p>` : ""}
    <div class="filters scrubber">
      <button onClick=${() => setIndex(Math.max(0, index - 1))} aria-label="previous turn">◀</button>
      <button onClick=${() => setIndex(Math.min(last, index + 1))} aria-label="next turn">▶</button>
      <label>turn <select class="turn-select" value=${index} onChange=${(e) => setIndex(Number(e.target.value))}>${data.turns.map((t, i) => html`<option key=${t.turn} value=${i}>${t.turn}</option>`)}</select></label>
      <span class="household-turn">turn ${turn.turn}</span>
    </div>
    <section aria-label="actions">
      <h3>Actions</h3>
      <table class="actions"><thead><tr><th>agent</th><th>action</th><th>result</th><th>why</th></tr></thead>
        <tbody>${turn.actions.map((a) => html`<tr key=${a.agent} data-agent=${a.agent}><td>${a.agent}</td><td><code>${a.action}</code></td><td>${a.ok === null ? "—" : a.ok ? "ok" : "failed"}: ${a.reason ?? ""}${a.effects.length ? ` (${a.effects.join(", ")})` : ""}</td><td>${a.why ?? ""}</td></tr>`)}</tbody>
      </table>
      ${turn.latched.length > 0 ? html`<p class="latched">Goal parts met: ${turn.latched.join(", ")}</p>` : ""}
    </section>
    <section aria-label="messages">
      <h3>Messages</h3>
      <ul class="messages">${turn.messages.length === 0 ? html`<li>none</li>` : turn.messages.map((m, i) => html`<li key=${i} class="message">${m.from} → ${m.to.join(", ")} (${m.status}): ${m.text}</li>`)}</ul>
    </section>
    <section aria-label="rooms this turn">
      <h3>Rooms and objects seen this turn</h3>
      <ul class="rooms">${turn.rooms.map((v) => html`<${Room} key=${v.room} view=${v} note=${{ stale: false, text: `seen by ${v.seenBy.join(", ")}` }} />`)}</ul>
    </section>
    <section aria-label="who knows what">
      <h3>Who knows what after turn ${turn.turn}</h3>
      <div class="knowledge-grid">${turn.knowledge.map((k) => html`<${Knowledge} key=${k.agent} k=${k} turn=${turn.turn} secrets=${data.secrets} />`)}</div>
    </section>
    <section class="k-goals" aria-label="K-goal tree">
      <h3>K-goal tree</h3>
      ${data.kScore ? html`<p class="k-total">${data.kScore.passedRoots} of ${data.kScore.roots} root(s) passed (${data.kScore.pass ? "pass" : "fail"})</p>` : html`<p>No K-probes in this log.</p>`}
      <ul>${data.kTree.map((n) => html`<${KNode} key=${n.probeId} node=${n} />`)}</ul>
    </section>
  </section>`;
}
