// The household environment: holds the true state, collects the turn's decisions, resolves them in
// ascending agent order by the rules (rules.ts), logs each resolution and message, latches goal
// conjuncts, and sends each agent what it observes; it ends the episode on success, when every
// agent is done, or at the turn limit, with the scores in the log; then it puts the literal probes
// to the agents (probes.ts) and scores their answers. One handler per record type.
import { recordActorLogic, type Delivered, type Emitted } from "../actor.ts";
import { agentActorId } from "./agent.ts";
import type { HouseholdDecidedPayload, HouseholdProbeAnsweredPayload, TrajectoryStepPayload } from "./events.ts";
import { show } from "./pddl.ts";
import { literalOf, probeQuestions, scoreProbes, type ProbeAnswer } from "./probes.ts";
import { formatAction, holds, parseAction, READ_TRAJECTORY, resolveTurn, roomsSeenBy, viewOfRoom, type Action, type HouseState } from "./rules.ts";
import type { CompiledTask } from "./task.ts";
import type { HouseholdEntries } from "./events.ts";

export interface HouseInput {
  readonly compiled: CompiledTask;
  readonly state: HouseState;
  readonly baseline: boolean;
  readonly maxTurns: number;
}

export interface HouseContext {
  readonly static: { readonly compiled: CompiledTask; readonly baseline: boolean; readonly maxTurns: number };
  state: HouseState;
  /** This turn's decisions so far, by agent. */
  pending: Record<string, string>;
  latched: boolean[];
  ended: boolean;
  messagesSent: number;
  /** After the end: the agents the probes were put to, and the answers in so far. */
  probes: { asked: string[]; answers: Record<string, ProbeAnswer[]> } | null;
  /**
   * Baseline mode only (absent in standard mode, so its state and hash are as before): each
   * agent's trajectory so far, what ReadAgentTrajectory answers from, and this turn's `why`s.
   */
  trajectories?: { steps: Record<string, TrajectoryStepPayload[]>; why: Record<string, string> };
}

function onDecided(ctx: HouseContext, event: Delivered<HouseholdDecidedPayload>): Emitted[] {
  if (!ctx.ended) ctx.pending[event.payload.agent] = event.payload.action;
  if (!ctx.ended && ctx.trajectories !== undefined) ctx.trajectories.why[event.payload.agent] = event.payload.why;
  return [];
}

/** A decision as the house takes it: ReadAgentTrajectory outside baseline mode is refused (the turn is spent). */
function decisionOf(raw: string, baseline: boolean): Action | { readonly error: string } {
  const a = parseAction(raw);
  return !("error" in a) && a.kind === "read" && !baseline ? { error: `${READ_TRAJECTORY} is a baseline-mode tool (config "mode": "baseline")` } : a;
}

function onResolve(ctx: HouseContext, event: Delivered<{ turn: number }>): Emitted[] {
  if (ctx.ended) return [];
  const { compiled: c, baseline, maxTurns } = ctx.static;
  const turn = event.payload.turn;
  // An agent that did not decide waits (there is none with the scripted agents).
  const raw: Record<string, string> = Object.fromEntries(c.agentIds.map((a) => [a, ctx.pending[a] ?? "Wait[]"]));
  const decisions = c.agentIds.filter((a) => !ctx.state.agents[a]!.done).map((a) => [a, decisionOf(raw[a]!, baseline)] as const);
  const { state, resolutions } = resolveTurn(c, ctx.state, decisions);
  ctx.state = state;
  ctx.pending = {};
  const out: Emitted[] = [];
  const inbox: Record<string, { from: string; text: string }[]> = {};
  const outcome: Record<string, { action: string; ok: boolean; reason: string }> = {};
  for (const [agent, r] of resolutions) {
    const action = decisions.find(([a]) => a === agent)![1];
    const actionText = "error" in action ? raw[agent]! : formatAction(action);
    outcome[agent] = { action: actionText, ok: r.ok, reason: r.reason };
    out.push({ type: "household.resolved", to: null, payload: { turn, agent, action: actionText, ok: r.ok, reason: r.reason, effects: [...r.effects] } });
    if (!("error" in action) && action.kind === "communicate") {
      if (r.message !== undefined) {
        ctx.messagesSent++;
        for (const to of r.message.to) (inbox[to] ??= []).push({ from: agent, text: r.message.text });
        out.push({ type: "household.message", to: null, payload: { turn, from: agent, to: [...r.message.to], text: r.message.text, status: "queued", reason: r.reason } });
      } else out.push({ type: "household.message", to: null, payload: { turn, from: agent, to: action.to === "all" ? ["all"] : [...action.to], text: action.text, status: "blocked", reason: r.reason } });
    }
  }
  c.functional.forEach((l, i) => {
    if (ctx.latched[i] !== true && holds(c, state, l)) {
      ctx.latched[i] = true;
      out.push({ type: "household.latched", to: null, payload: { turn, index: i, conjunct: show(l) } });
    }
  });
  // Baseline mode: a trajectory read answers from the steps of the turns before this one; then this turn's steps are added.
  const traj = ctx.trajectories;
  if (traj !== undefined) {
    for (const [agent, r] of resolutions) {
      const action = decisions.find(([a]) => a === agent)![1];
      if (!r.ok || "error" in action || action.kind !== "read") continue;
      const steps = (traj.steps[action.target] ?? []).map((st) => ({ ...st, heard: st.heard.map((h) => ({ ...h })) }));
      out.push({ type: "household.trajectory", to: agentActorId(agent), payload: { turn, agent, partner: action.target, upTo: turn - 1, steps } });
    }
    for (const [agent] of resolutions) {
      const o = outcome[agent]!;
      const me = state.agents[agent]!;
      (traj.steps[agent] ??= []).push({ turn, action: o.action, why: traj.why[agent] ?? "", ok: o.ok, reason: o.reason, room: me.room, holding: me.holding, heard: (inbox[agent] ?? []).map((m) => ({ ...m })) });
    }
    traj.why = {};
  }
  const success = ctx.latched.every((x) => x);
  const allDone = c.agentIds.every((a) => state.agents[a]!.done);
  const reason = success ? "success" : allDone ? "all_done" : turn >= maxTurns - 1 ? "turn_limit" : null;
  ctx.ended = reason !== null;
  for (const agent of c.agentIds) {
    const me = state.agents[agent]!;
    out.push({
      type: "household.observed",
      to: agentActorId(agent),
      payload: { turn, agent, outcome: outcome[agent] ?? null, room: me.room, holding: me.holding, rooms: roomsSeenBy(c, state, agent, baseline).map((r) => viewOfRoom(c, state, r)), messages: inbox[agent] ?? [], ended: ctx.ended },
    });
  }
  if (reason !== null) {
    const final = c.functional.map((l) => holds(c, state, l));
    const share = (xs: readonly boolean[]) => (xs.length === 0 ? 1 : xs.filter((x) => x).length / xs.length);
    out.push({
      type: "household.ended",
      to: null,
      payload: {
        turn, reason, success, percentComplete: share(c.functional.map((_, i) => ctx.latched[i] === true)), finalSuccess: final.every((x) => x), finalPercentComplete: share(final),
        latched: c.functional.filter((_, i) => ctx.latched[i] === true).map(show),
        owned: Object.fromEntries(Object.entries(c.owned).map(([a, ls]) => [a, ls.every((l) => holds(c, state, l))])),
        messagesSent: ctx.messagesSent,
      },
    });
    // The literal probes, asked after the episode (digest §5.3): each agent heading a K node gets its own.
    const questions = probeQuestions(c);
    ctx.probes = { asked: [...questions.keys()], answers: {} };
    for (const [agent, probes] of questions) out.push({ type: "household.probe", to: agentActorId(agent), payload: { turn, agent, probes } });
  }
  return out;
}

function onProbeAnswered(ctx: HouseContext, event: Delivered<HouseholdProbeAnsweredPayload>): Emitted[] {
  const p = ctx.probes;
  if (p === null || !p.asked.includes(event.payload.agent) || p.answers[event.payload.agent] !== undefined) return [];
  p.answers[event.payload.agent] = event.payload.answers.map((a) => ({ ...a, args: [...a.args] }));
  if (p.asked.some((a) => p.answers[a] === undefined)) return [];
  const c = ctx.static.compiled;
  const answers = new Map(Object.values(p.answers).flat().map((a) => [a.probeId, a]));
  const probes = scoreProbes(c.kNodes, answers, (l) => holds(c, ctx.state, l));
  return [{ type: "household.probeScored", to: null, payload: { turn: event.payload.turn, probes, ...literalOf(probes) } }];
}

export const houseLogic = recordActorLogic<HouseContext, HouseInput, HouseholdEntries, "household.decided" | "household.resolve" | "household.probeAnswered">({
  context: (input) => ({ static: { compiled: input.compiled, baseline: input.baseline, maxTurns: input.maxTurns }, state: input.state, pending: {}, latched: input.compiled.functional.map(() => false), ended: false, messagesSent: 0, probes: null, ...(input.baseline ? { trajectories: { steps: {}, why: {} } } : {}) }),
  handlers: {
    "household.decided": onDecided,
    "household.resolve": onResolve,
    "household.probeAnswered": onProbeAnswered,
  },
  valueOf: (ctx) => (ctx.ended ? "ended" : "running"),
});
