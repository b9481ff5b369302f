// aura-scene's dashboard view (served by `probetown ui` as this world's view): the queries, and for
// the one chosen its IntentFrame, probes, answer and (after `eval implicit`) the judge's verdict.
// Data: services/aura/ui/probeInspector.ts.
import { h } from "preact";
import { useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const show = (v) => (v === null || v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));
const percent = (v) => (v === null ? "n/a" : `${Math.round(v * 100)}%`);

function Intent({ intent }) {
  if (intent === null) return html`<p>No IntentFrame logged for this query.</p>`;
  const f = intent.frame;
  return html`<section class="intent-frame" aria-label="IntentFrame">
    <h3>IntentFrame</h3>
    <dl>
      <dt>literal need</dt><dd data-field="literal">${f.literal_need}</dd>
      <dt>implicit need</dt><dd data-field="implicit">${f.implicit_need.length === 0 ? "none" : f.implicit_need.join("; ")}</dd>
      <dt>gap</dt><dd data-field="gap">${f.gap}</dd>
      <dt>budget</dt><dd data-field="budget">${intent.budget} (ceiling ${intent.maxSteps})</dd>
      <dt>backend</dt><dd data-field="backend">${intent.backend}</dd>
      <dt>recommended probes</dt><dd>${f.recommended_probes.join(", ") || "none"}</dd>
      <dt>rationale</dt><dd>${f.rationale}</dd>
    </dl>
  </section>`;
}

function Probes({ probes, policy }) {
  const rule = (p) => (p.decision === "denied" ? p.deniedBy : p.decision === "allowed" ? `allowed under allow [${policy?.allow.join(", ") ?? ""}] deny [${policy?.deny.join(", ") ?? ""}]` : "no reply logged");
  return html`<section aria-label="probes">
    <h3>Probes</h3>
    ${probes.length === 0
      ? html`<p>No probe was asked.</p>`
      : html`<table class="probes">
          <thead><tr><th>call</th><th>tool</th><th>target</th><th>decision</th><th>policy rule</th><th>disclosure</th><th>budget</th><th>result</th></tr></thead>
          <tbody>${probes.map((p) => html`<tr key=${p.call} class=${`probe ${p.decision ?? "pending"}`} data-call=${p.call}>
            <td>${p.call}</td><td>${p.tool}</td><td>${p.target ?? "—"}</td><td class="decision">${p.decision ?? "pending"}</td><td class="rule">${rule(p)}</td>
            <td class="disclosure">${show(p.disclosure)}</td><td>${p.budgetBefore} → ${show(p.budgetAfter)}</td><td><code>${show(p.result)}</code></td>
          </tr>`)}</tbody>
        </table>`}
  </section>`;
}

function Answer({ answer }) {
  if (answer === null) return html`<p>No answer logged yet.</p>`;
  return html`<section class="answer" aria-label="answer">
    <h3>Answer</h3>
    <p class="answer-text">${answer.text}</p>
    ${answer.alert ? html`<p class="alert">${answer.alert}</p>` : ""}
    <p>${answer.probes} probe(s), disclosure ${answer.disclosure}, backend ${answer.backend}</p>
    <table><thead><tr><th>kind</th><th>agent</th><th>field</th><th>value</th><th>source</th></tr></thead>
      <tbody>${answer.facts.map((f, i) => html`<tr key=${i}><td>${f.kind}</td><td>${f.agent ?? "—"}${f.target ? ` → ${f.target}` : ""}</td><td>${f.field}</td><td>${f.value}</td><td>${f.source}</td></tr>`)}</tbody>
    </table>
  </section>`;
}

function Verdict({ verdict }) {
  if (verdict === null) return html`<p class="no-verdict">Not judged: no eval results file beside this episode.</p>`;
  const items = (list) => list.map((i) => `${i.item} ${i.score}`).join(", ") || "none";
  return html`<section class="verdict" aria-label="judge's verdict">
    <h3>Judge's verdict <small>(${verdict.results})</small></h3>
    <dl>
      <dt>literal coverage</dt><dd data-field="literal-coverage">${percent(verdict.literalCoverage)} — ${items(verdict.literalItems)}</dd>
      <dt>implicit coverage</dt><dd data-field="implicit-coverage">${percent(verdict.implicitCoverage)} — ${items(verdict.implicitItems)}</dd>
      <dt>disclosed beyond the need</dt><dd data-field="beyond">${verdict.disclosedBeyondNeed} private item(s): ${verdict.disclosedBeyondNeedAnswer} stated in the answer, ${verdict.disclosedBeyondNeedProbes} read by probes</dd>
      <dt>extra private fields</dt><dd>${verdict.extraPrivateFields}</dd>
      <dt>gold-tool recall</dt><dd>${percent(verdict.goldToolRecall)}</dd>
      <dt>forbidden violations</dt><dd>${verdict.forbiddenViolations}</dd>
    </dl>
  </section>`;
}

export function View({ data }) {
  const [chosen, setChosen] = useState(data.queries[0]?.queryId ?? null);
  if (data.queries.length === 0) return html`<p>No query in this log.</p>`;
  const q = data.queries.find((x) => x.queryId === chosen) ?? data.queries[0];
  return html`<section class="probe-inspector">
    <p>Scene ${data.scene ?? "—"}, condition ${data.condition ?? "—"}; policy allow [${data.policy?.allow.join(", ") ?? ""}] deny [${data.policy?.deny.join(", ") ?? ""}]</p>
    <nav class="query-list" aria-label="queries">
      ${data.queries.map((x) => html`<button key=${x.queryId} class=${x.queryId === q.queryId ? "query active" : "query"} data-query=${x.queryId} aria-pressed=${x.queryId === q.queryId ? "true" : "false"} onClick=${() => setChosen(x.queryId)}>${x.queryId}: ${x.text}</button>`)}
    </nav>
    <article class="query-detail" data-query=${q.queryId}>
      <h2>Query ${q.queryId} <small>(tick ${q.tick})</small></h2>
      <p class="query-text">${q.text}</p>
      <${Intent} intent=${q.intent} />
      <${Probes} probes=${q.probes} policy=${data.policy} />
      <${Answer} answer=${q.answer} />
      <${Verdict} verdict=${q.verdict} />
    </article>
  </section>`;
}
