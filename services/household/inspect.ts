// `inspect` of a household episode, turn by turn as the replay makes each one: what every agent
// did and said, what latched, where everyone and everything is (the house's state), and who knows
// what (each agent's knowledge: where it believes the goal objects are, the goals it knows, and
// which partners it knows know each goal fact — what the literal probes ask); then the probes.
import type { HouseholdDecidedPayload, HouseholdEndedPayload, HouseholdLatchedPayload, HouseholdMessagePayload, HouseholdProbeAnsweredPayload, HouseholdProbeScoredPayload, HouseholdResolvedPayload } from "../../actors/household/events.ts";
import type { AgentContext } from "../../actors/household/agent.ts";
import type { HouseContext } from "../../actors/household/environment.ts";
import { show } from "../../actors/household/pddl.ts";
import { knowsNested } from "../../actors/household/probes.ts";
import type { Loc } from "../../actors/household/rules.ts";
import type { LogRecord } from "../../events/record.ts";
import type { ActorHost } from "../distributed/actorHost.ts";
import type { InspectFlags, WorldInspection } from "../kernel/worldModule.ts";

export interface AgentKnowledge {
  readonly agent: string;
  readonly room: string;
  readonly holding: string | null;
  /** Goal conjuncts it knows (shared and its own). */
  readonly goals: readonly string[];
  /** Where it believes each goal object is. */
  readonly believes: Readonly<Record<string, string>>;
  /** Per goal fact, the partners it knows know it. */
  readonly knowsWhoKnows: Readonly<Record<string, readonly string[]>>;
  readonly messagesLeft: number | null;
}

export interface TurnView {
  readonly turn: number;
  readonly actions: readonly { readonly agent: string; readonly action: string; readonly ok: boolean; readonly reason: string; readonly why: string }[];
  readonly messages: readonly { readonly from: string; readonly to: readonly string[]; readonly text: string; readonly status: string }[];
  readonly latched: readonly string[];
  readonly rooms: Readonly<Record<string, readonly string[]>>;
  readonly objects: Readonly<Record<string, string>>;
  readonly knowledge: readonly AgentKnowledge[];
  readonly ended?: HouseholdEndedPayload;
  readonly probes?: { readonly answers: readonly HouseholdProbeAnsweredPayload[]; readonly scored: HouseholdProbeScoredPayload | null };
}

const place = (l: Loc): string => ("on" in l ? `on ${l.on}` : "inside" in l ? `inside ${l.inside}` : `held by ${l.heldBy}`);
const of = <T>(records: readonly LogRecord[], type: string): T[] => records.filter((r) => r.type === type).map((r) => r.payload as T);

export function turnView(tick: number, host: ActorHost, records: readonly LogRecord[]): TurnView | null {
  if (!records.some((r) => r.type.startsWith("household.") && r.type !== "household.resolve")) return null;
  const house = host.contextOf("env/household") as HouseContext;
  const c = house.static.compiled;
  const decided = of<HouseholdDecidedPayload>(records, "household.decided");
  const actions = of<HouseholdResolvedPayload>(records, "household.resolved").map((r) => ({ agent: r.agent, action: r.action, ok: r.ok, reason: r.reason, why: decided.find((d) => d.agent === r.agent)?.why ?? "" }));
  const rooms: Record<string, string[]> = {};
  for (const [agent, s] of Object.entries(house.state.agents)) (rooms[s.room] ??= []).push(s.holding === null ? agent : `${agent} (holding ${s.holding})`);
  const goalObjects = [...new Set([...c.functional, ...Object.values(c.owned).flat()].map((l) => l.args[0]!).filter((id) => c.task.scene.objects[id] !== undefined))];
  const objects = Object.fromEntries(Object.entries(house.state.objects).map(([o, l]) => [o, place(l)]));
  const facts = c.functional.map(show);
  const knowledge = c.agentIds.map((agent): AgentKnowledge => {
    const kb = (host.contextOf(`agent/${agent}`) as AgentContext).kb;
    const partners = c.agentIds.filter((a) => a !== agent);
    return {
      agent,
      room: kb.room,
      holding: kb.holding,
      goals: [...kb.goals, ...kb.own],
      believes: Object.fromEntries(goalObjects.filter((o) => kb.loc[o] !== undefined).map((o) => [o, place(kb.loc[o]!)])),
      knowsWhoKnows: Object.fromEntries(facts.map((f) => [f, partners.filter((p) => knowsNested(kb, [p], f))])),
      messagesLeft: kb.msgLimit === null ? null : kb.msgLimit - kb.sent,
    };
  });
  const ended = of<HouseholdEndedPayload>(records, "household.ended")[0];
  const answers = of<HouseholdProbeAnsweredPayload>(records, "household.probeAnswered");
  const scored = of<HouseholdProbeScoredPayload>(records, "household.probeScored")[0] ?? null;
  return {
    turn: tick,
    actions,
    messages: of<HouseholdMessagePayload>(records, "household.message").map((m) => ({ from: m.from, to: m.to, text: m.text, status: m.status })),
    latched: of<HouseholdLatchedPayload>(records, "household.latched").map((l) => l.conjunct),
    rooms,
    objects,
    knowledge,
    ...(ended === undefined ? {} : { ended }),
    ...(answers.length === 0 && scored === null ? {} : { probes: { answers, scored } }),
  };
}

export function turnText(v: TurnView, agent?: string): string {
  const mine = <T extends { agent: string }>(xs: readonly T[]) => xs.filter((x) => agent === undefined || x.agent === agent);
  const lines = [`turn ${v.turn}`];
  for (const a of mine(v.actions)) lines.push(`  ${a.agent}: ${a.action} ${a.ok ? "ok" : `FAILED (${a.reason})`}${a.why === "" ? "" : `  — ${a.why}`}`);
  for (const m of v.messages) if (agent === undefined || m.from === agent || m.to.includes(agent)) lines.push(`  message ${m.from} → ${m.to.join(", ")} (${m.status}): ${m.text}`);
  for (const l of v.latched) lines.push(`  latched ${l}`);
  lines.push(`  rooms: ${Object.entries(v.rooms).map(([r, who]) => `${r}: ${who.join(", ")}`).join("; ")}`);
  lines.push(`  objects: ${Object.entries(v.objects).map(([o, p]) => `${o} ${p}`).join("; ")}`);
  for (const k of mine(v.knowledge)) {
    const believes = Object.entries(k.believes).map(([o, p]) => `${o} ${p}`).join(", ") || "nothing of the goal objects";
    const who = Object.entries(k.knowsWhoKnows).filter(([, ps]) => ps.length > 0).map(([f, ps]) => `${ps.join(", ")} know${ps.length === 1 ? "s" : ""} ${f}`);
    lines.push(`  ${k.agent} knows: ${k.goals.length} goal(s); believes ${believes}${who.length === 0 ? "" : `; knows ${who.join("; ")}`}${k.messagesLeft === null ? "" : `; ${k.messagesLeft} message(s) left`}`);
  }
  if (v.ended !== undefined) lines.push(`  episode ended (${v.ended.reason.replace("_", " ")}): ${v.ended.success ? "SUCCESS" : "failure"}, ${Math.round(v.ended.percentComplete * 100)}% complete`);
  if (v.probes !== undefined) {
    // The LLM agent's answers say whose they are: the model's, or the knowledge base's after a fallback.
    const source = (a: HouseholdProbeAnsweredPayload, id: string) => {
      if (a.llm === undefined) return "";
      const fell = a.llm.fallbacks.find((f) => f.probeId === id);
      return fell === undefined ? `  — llm:${a.llm.model}` : `  — knowledge base (fallback: ${fell.reason})`;
    };
    for (const a of v.probes.answers) for (const x of a.answers) if (agent === undefined || a.agent === agent) lines.push(`  probe ${x.probeId} → ${a.agent}: ${x.predicate === "unknown" ? "unknown" : `(${x.predicate} ${x.args.join(" ")}) ${x.holds === true ? "holds" : "does not hold"}`}${source(a, x.probeId)}`);
    const s = v.probes.scored;
    if (s !== null) lines.push(`  literal probes: ${s.passedRoots}/${s.roots} root(s) pass (${s.probes.map((p) => `${p.probeId} ${p.passed ? "pass" : "fail"} by ${p.basis}${p.root ? ", root" : ""}`).join("; ")})`);
  }
  return lines.join("\n");
}

export function householdInspection(flags: InspectFlags, write: (chunk: string) => void, beforeOutput: () => void = () => {}): WorldInspection {
  let active = false;
  let begun = false;
  const turns: TurnView[] = [];
  const begin = (text: string) => {
    if (!begun) beforeOutput();
    begun = true;
    if (!flags.json) write(text);
  };
  let title = "";
  return {
    options: {
      onHeader: (h) => {
        active = true;
        const task = (h.config as { task?: { task_id: string; category: string; tom_level?: number } }).task;
        title = `${h.episode} · household · seed ${h.seed} · condition ${h.condition} · task ${task?.task_id ?? "?"} (${task?.category ?? "?"}, K-depth ${task?.tom_level ?? "?"})\n`;
      },
      onTick: (tick, host, records) => {
        if ((flags.from !== undefined && tick < flags.from) || (flags.to !== undefined && tick > flags.to)) return;
        const v = turnView(tick, host, records);
        if (v === null) return;
        if (flags.json) turns.push(v);
        else begin(`${begun ? "" : title}${turnText(v, flags.agent)}\n`);
      },
    },
    active: () => active,
    finish: () => {
      if (flags.json) {
        begin("");
        write(`${JSON.stringify({ turns }, null, 2)}\n`);
      } else if (!begun) begin(`${title}(no turns in range)\n`);
    },
    flush: () => {},
  };
}
