// The action of `probetown ask <episode> --tick <n> --agent <name> "question"` (services/aura/cli.ts
// defines the command): the AURA controller answers a resident's question on a recorded (or running)
// AURATown episode's state after tick n; prints the IntentFrame, each probe with its result, the
// budget and the answer.
import { askEpisode, type AskResult } from "../ask.ts";
import { endpointExit, resolveLlmFlags, waitingNotice, type LlmCliFlags } from "../../cli/llm.ts";
import { compactJson, shownPath } from "../../views/text.ts";

export interface AskFlags extends LlmCliFlags {
  tick: number;
  agent: string;
  condition?: string;
  maxSteps?: number;
  out?: string;
  json?: boolean;
}

export function renderAsk(r: AskResult): string {
  const p = r.parent;
  const out = [
    `ask · ${p.episode} after tick ${p.tick} (state ${p.stateHash.slice(0, 12)}${p.uncommittedTail ? "; uncommitted tail of a running episode left out" : ""}) · as ${r.asker} · ${r.condition} (${r.registry} registry)`,
    `question: ${r.question}`,
  ];
  if (r.intent !== null) {
    const f = r.intent.frame;
    out.push(
      `IntentFrame (${r.intent.backend}): gap ${f.gap.toFixed(2)} → B(gap) ${r.intent.budget}, budget ${r.intent.maxSteps}${r.intent.maxSteps < r.intent.budget ? " (B capped by the max steps)" : ""}`,
      `  literal need:  ${f.literal_need}`,
      `  implicit need: ${f.implicit_need.length === 0 ? "—" : f.implicit_need.join("; ")}`,
      `  recommended:   ${f.recommended_probes.join(", ") || "—"}`,
      `  alert: ${f.should_alert} · confidence ${f.confidence.toFixed(2)}${r.intent.fromMemory.length === 0 ? "" : ` · from memory: ${r.intent.fromMemory.join(", ")}`}`,
      `  rationale: ${f.rationale}`,
    );
  } else out.push(`no IntentFrame (${r.condition} does not infer one)`);
  for (const pr of r.probes) {
    const args = Object.entries(pr.args).map(([k, v]) => `${k}=${v}`).join(", ");
    out.push(`probe ${pr.call}: ${pr.tool}(${args}) → ${pr.to} · budget ${pr.budgetBefore}→${pr.budgetBefore - 1}`);
    out.push(pr.outcome === "answered" ? `  answered (disclosure ${pr.disclosure}): ${compactJson(pr.result)}` : `  denied: ${pr.reason}`);
  }
  out.push(`budget: ${r.budget.used} probe${r.budget.used === 1 ? "" : "s"} of ${r.budget.ceiling} · disclosure ${r.budget.disclosure}`);
  out.push(`answer: ${r.answer.text}`);
  if (r.llm !== undefined) {
    const t = r.llm.usage.total;
    // As eval's line: the cost too when the config prices the model (it was left out).
    out.push(`backend: ${r.answer.backend}`, `llm: ${r.llm.baseURL} · ${t.calls} calls (${t.failed} failed) · ${t.promptTokens} prompt + ${t.completionTokens} completion tokens${t.costUsd > 0 ? ` · $${t.costUsd.toFixed(4)}` : ""}`);
  }
  out.push(`log: ${shownPath(r.fork)} (verify it with: probetown verify ${shownPath(r.fork)})`);
  return out.join("\n") + "\n";
}

export async function cmdAsk(episode: string, question: string, flags: AskFlags): Promise<number> {
  const llm = resolveLlmFlags(flags, "ask");
  const onLlmWaiting = waitingNotice("ask", flags);
  const result = await askEpisode({
    ...(llm === null ? {} : { llm }),
    ...(onLlmWaiting === undefined ? {} : { onLlmWaiting }),
    episode, question, tick: flags.tick, agent: flags.agent,
    ...(flags.condition === undefined ? {} : { condition: flags.condition }),
    ...(flags.maxSteps === undefined ? {} : { maxSteps: flags.maxSteps }),
    ...(flags.out === undefined ? {} : { out: flags.out }),
  });
  process.stdout.write(flags.json ? JSON.stringify(result, null, 2) + "\n" : renderAsk(result));
  const t = result.llm?.usage.total;
  return result.llm === undefined ? 0 : endpointExit("ask", result.llm.endpointProblems, { baseURL: result.llm.baseURL, calls: t!.calls, failed: t!.failed, logsAre: "the fork's log is" });
}
