// What `run` and `fork` print for a household episode: the task, the outcome, and per agent what it
// did, what it achieved and what it said.
import type { HouseholdDecidedPayload, HouseholdLatchedPayload, HouseholdMessagePayload, HouseholdResolvedPayload } from "../../actors/household/events.ts";
import type { HouseholdConfig } from "../../actors/household/world.ts";
import type { LogRecord } from "../../events/record.ts";
import { endOf, llmProbesOf } from "./metrics.ts";

/** Who made a latched conjunct hold: an agent whose successful action that turn names one of its ids. */
export function achieverOf(records: readonly LogRecord[], latched: HouseholdLatchedPayload): string | null {
  const ids = latched.conjunct.replace(/[()]/g, "").split(/\s+/).slice(1);
  for (const r of records) {
    if (r.type !== "household.resolved") continue;
    const p = r.payload as HouseholdResolvedPayload;
    if (p.turn !== latched.turn || !p.ok) continue;
    if (ids.some((id) => p.action.includes(id) || p.effects.some((e) => e.includes(id)))) return p.agent;
  }
  return null;
}

export function householdSummary(records: readonly LogRecord[]): string {
  const header = records.find((r) => r.type === "episode.started" || r.type === "episode.forked");
  const config = (header?.payload as { config?: HouseholdConfig } | undefined)?.config;
  const task = config?.task;
  const end = endOf(records);
  const lines: string[] = [];
  const outcome = end === null ? "not finished" : `${end.payload.success ? "SUCCESS" : "failure"} after ${end.payload.turn + 1} turns (${end.payload.reason.replace("_", " ")}), ${Math.round(end.payload.percentComplete * 100)}% complete${end.payload.finalSuccess === end.payload.success ? "" : `, final state ${end.payload.finalSuccess ? "success" : "failure"}`}`;
  lines.push(`household: ${task?.task_id ?? "?"} (${task?.category ?? "?"}, tom_level ${task?.tom_level ?? "?"}, ${config?.mode ?? "standard"} mode): ${outcome}`);
  const agents = task === undefined ? [] : Object.keys(task.agents);
  const latched = records.filter((r) => r.type === "household.latched").map((r) => r.payload as HouseholdLatchedPayload);
  for (const agent of agents) {
    const acts = records.filter((r) => r.type === "household.resolved" && (r.payload as HouseholdResolvedPayload).agent === agent).map((r) => r.payload as HouseholdResolvedPayload);
    const said = records.filter((r) => r.type === "household.message" && (r.payload as HouseholdMessagePayload).from === agent).map((r) => r.payload as HouseholdMessagePayload);
    const achieved = latched.filter((l) => achieverOf(records, l) === agent).map((l) => `${l.conjunct} (turn ${l.turn})`);
    const blocked = said.filter((m) => m.status === "blocked").length;
    lines.push(`  ${agent}: ${acts.filter((a) => a.ok).length}/${acts.length} actions ok, ${said.length - blocked} message(s) sent${blocked > 0 ? `, ${blocked} blocked` : ""}; achieved ${achieved.length === 0 ? "nothing" : achieved.join(", ")}`);
  }
  // The LLM agent: how many of each agent's turns its model decided, and how many fell back.
  const condition = (header?.payload as { condition?: string } | undefined)?.condition;
  if (condition === "llm") {
    const decided = records.filter((r) => r.type === "household.decided").map((r) => r.payload as HouseholdDecidedPayload);
    const byAgent = agents.map((a) => {
      const mine = decided.filter((d) => d.agent === a);
      return `${a} ${mine.filter((d) => d.why.startsWith("llm:")).length}/${mine.length}`;
    });
    const fallbacks = decided.filter((d) => d.why.startsWith("scripted (fallback")).length;
    lines.push(`  llm agent (${config?.llm?.agent ?? "no model"}): turns decided by the model: ${byAgent.join(", ")}; ${fallbacks} fell back to the competent policy`);
    const probes = llmProbesOf(records);
    if (probes.answers > 0) lines.push(`  literal probes: ${probes.calls} model call(s); ${probes.answers - probes.fallbacks} of ${probes.answers} answers from the model, ${probes.fallbacks} fell back to the knowledge base`);
  }
  const owned = end?.payload.owned ?? {};
  for (const [agent, ok] of Object.entries(owned)) lines.push(`  ${agent}'s private objective: ${ok ? "met" : "not met"}`);
  return lines.join("\n");
}
