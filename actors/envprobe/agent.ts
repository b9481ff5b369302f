// The EnvProbe agent: a belief table (field, type, value, last-verified step, source, reported
// staleness and confidence), a planner over it, and the probing policy of its condition. Each tick
// it decides (act or probe one field); when the world answers it writes probe answers back
// (paper Def. 3.1: b_{t+1} ← g_t), learns from the observation and from failed actions, and
// reports its belief changes. It never sees the world's state or its mutations — except the
// privileged oracle policies, which read the referee's list of wrong fields (logged).
//
// LLM mode (`params.beliefModel`, config `llm.belief`): the belief update of each step comes from a
// model through the gateway instead (role `belief`, actors/envprobe/llm.ts). After the world
// answers, the agent writes a probe answer back as always, works out its scripted update without
// applying it (the fallback), and emits `llm.requested`; the sequencer appends the model's
// `llm.completed` / `llm.failed` in the same tick. A valid answer's updates are applied (source
// `model`) with the model's staleness and confidence as the fields' reports; otherwise the scripted
// update is applied with its calibrated reports. `envprobe.believed` then says which backend
// produced the step's beliefs. Planning and the probing policy are the scripted agent's, unchanged.
import { recordActorLogic, type Emitted, type HandlerTable, type RecordIn } from "../actor.ts";
import type { EnvprobeSteppedPayload } from "./events.ts";
import { LLM_GATEWAY_ID } from "../../events/llm.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { modelStaleness, reportedConfidence, reportedStaleness, SOURCE, type Calibration, type ModelReport, type Policy } from "./config.ts";
import { beliefRequest, judgeRequest, parseBeliefUpdates, parseJudgeDecision } from "./llm.ts";
import { parseAction } from "./kinds/grammar.ts";
import { NAV, nodeName } from "./kinds/graphnav.ts";
import { OBJ } from "./kinds/objectstate.ts";
import { DAG, depValue, parseDeps } from "./kinds/tooldag.ts";
import type { Layout, Observation } from "./kinds/types.ts";
import { HELD, parseInventory, UNKNOWN } from "./kinds/values.ts";
import { plan, type Knowledge } from "./planner.ts";
import { decide, judgeCandidates } from "./policies.ts";
import type { EnvprobeEntries } from "./events.ts";

export const AGENT_ID = "agent/envprobe";
export const ENV_ID = "env/envprobe";

export interface AgentParams {
  readonly policy: Policy;
  readonly horizon: number;
  readonly budget: number;
  readonly calibration: Calibration;
  readonly rhoThreshold: number;
  readonly stalenessDivisor: number;
  readonly alpha: number;
  readonly writeBack: boolean;
  /** The regime's per-step mutation rate μ̄ (the calibration model's drift term). */
  readonly drift: number;
  /** Options that are not the paper's (off by default; config.ts NON_PAPER_OPTIONS). */
  readonly skipFresh: boolean;
  readonly oracleNeedsDependency: boolean;
  /** Option `tracking` (not the paper's): the imperfect-tracking model's lapse and persistence probabilities. */
  readonly tracking?: { readonly lapse: number; readonly persist: number };
  /** Condition envprobe-judge of a pre-b0 config (config.ts isPreB0Judge): the fixed critic of the code before 7596a13. */
  readonly preB0Judge?: true;
  /** LLM mode: the model of role `belief` (absent: the scripted agent). */
  readonly beliefModel?: string;
  /** The LLM Judge's model (role `judge`; policy envprobe-judge only). */
  readonly judgeModel?: string;
}

/** A belief change: (field, value, last-verified step, source), as `envprobe.believed` logs it. */
type Change = [number, string, number, number];

/** LLM mode's state: data only (no promise), so a snapshot between request and answer is plain. */
export interface LlmState {
  /** The step whose `belief` answer the agent waits for, what it already applied and its fallback. */
  awaiting: { readonly requestHash: string; readonly t: number; readonly kept: Change[]; readonly fallback: Change[]; readonly locked: number[] } | null;
  /** Per field: the model's standing report (staleness, confidence, step), or null (calibrated report). */
  reports: (ModelReport | null)[];
}

export interface AgentInput {
  readonly layout: Layout;
  readonly params: AgentParams;
  readonly seed: number;
  /** The first observation (step 0), before any action. */
  readonly first: Observation;
  /** The world's values at step 0: the belief table starts as them (b₀ = g₀, Algorithm 1); absent: guessed priors (option initialBeliefs "guess"). */
  readonly initial?: readonly string[];
}

export interface AgentContext {
  readonly static: { readonly layout: Layout; readonly params: AgentParams; readonly c: readonly number[]; readonly weights: readonly number[] };
  t: number;
  done: boolean;
  used: number;
  lastProbe: number;
  lastAct: number;
  values: string[];
  verified: number[];
  source: number[];
  stale: number[];
  conf: number[];
  know: Knowledge;
  /** Privileged policies: the referee's wrong fields after the last step. */
  wrong: number[] | null;
  rng: StreamState | null;
  /** LLM mode only. */
  llm?: LlmState;
  /** Option `tracking` only: its stream (`agent/tracking/<world>`) and which fields the last step did not take in (1). */
  tracking?: TrackingState;
  /** LLM Judge only: the decision the agent waits for (the request, Simple's proposal and candidates, the planned action). */
  judge?: JudgeWait | null;
}

export interface TrackingState {
  rng: StreamState;
  lapsed: number[];
}

export interface JudgeWait {
  readonly requestHash: string;
  readonly t: number;
  readonly action: string;
  readonly candidates: number[];
  /** Simple's own decision (the field it would probe, or -1 to act): what stands when the judge fails. */
  readonly proposal: number;
}

/** What an LLM would assume before looking: doors and edges open, tool schemas a simple chain, object places unknown. */
function priors(l: Layout): { values: string[]; source: number[] } {
  const values: string[] = [];
  const source: number[] = [];
  for (const f of l.fields) {
    const [kind, name = ""] = f.name.split(":");
    if (kind === "door" || kind === "edge") (values.push("open"), source.push(SOURCE.prior));
    else if (kind === "dep") {
      const i = Number(name.slice(2));
      values.push(depValue(i === 0 ? [] : [i - 1]));
      source.push(SOURCE.prior);
    } else if (kind === "var" || kind === "done") (values.push("0"), source.push(SOURCE.observed));
    else if (kind === "agent") (values.push(l.kind === "graphnav" ? nodeName(0) : "room_0"), source.push(SOURCE.observed));
    else if (kind === "inventory") (values.push("-"), source.push(SOURCE.observed));
    else (values.push(UNKNOWN), source.push(SOURCE.unknown));
  }
  return { values, source };
}

/** b₀ = g₀: every field starts as the world's value at step 0, verified at step 0. */
function goldPriors(initial: readonly string[]): { values: string[]; source: number[] } {
  return { values: [...initial], source: initial.map(() => SOURCE.observed) };
}

export function initialAgentContext(input: AgentInput): AgentContext {
  const l = input.layout;
  const { values, source } = input.initial === undefined ? priors(l) : goldPriors(input.initial);
  const maxW = Math.max(...l.fields.map((f) => f.weight));
  const locks = l.kind === "objectstate" ? l.size - 1 : l.kind === "graphnav" ? l.edges.length : 0;
  const ctx: AgentContext = {
    static: { layout: l, params: input.params, c: l.fields.map((f) => f.weight / maxW), weights: l.fields.map((f) => f.weight) },
    t: 0,
    done: false,
    used: 0,
    lastAct: 0,
    lastProbe: 0,
    values,
    verified: source.map((s) => (s === SOURCE.observed ? 0 : -1)),
    source,
    stale: values.map(() => 0),
    conf: values.map(() => 0),
    // Keys in sorted order: hashed every tick (canonical JSON's no-copy path).
    know: { failedWith: Array.from({ length: locks }, () => ""), lastSeen: Array.from({ length: l.size }, () => -1), lockKey: Array.from({ length: locks }, () => "?") },
    wrong: null,
    rng: input.params.policy === "random" ? deriveStream(input.seed, "policy/random") : null,
  };
  if (input.params.tracking !== undefined) ctx.tracking = { lapsed: values.map(() => 0), rng: deriveStream(input.seed, `agent/tracking/${l.kind}`) };
  if (input.params.beliefModel !== undefined) ctx.llm = { awaiting: null, reports: values.map(() => null) };
  if (input.params.judgeModel !== undefined && input.params.policy === "envprobe-judge") ctx.judge = null;
  const changes: [number, string, number, number][] = [];
  learnObservation(ctx, input.first.pairs, input.first.seen, 0, changes);
  report(ctx, 0);
  return ctx;
}

function setField(ctx: AgentContext, i: number, value: string, t: number, source: number, changes: [number, string, number, number][]): void {
  if (ctx.values[i] === value && ctx.verified[i] === t && ctx.source[i] === source) return;
  ctx.values[i] = value;
  ctx.verified[i] = t;
  ctx.source[i] = source;
  changes.push([i, value, t, source]);
}

const set = setField;

function report(ctx: AgentContext, t: number): void {
  const cal = ctx.static.params.calibration;
  const reports = ctx.llm?.reports;
  for (let i = 0; i < ctx.values.length; i++) {
    const model = reports?.[i];
    if (model != null) {
      ctx.stale[i] = modelStaleness(model, t);
      ctx.conf[i] = model[1];
      continue;
    }
    const stale = reportedStaleness(t - ctx.verified[i]!, cal);
    ctx.stale[i] = stale;
    ctx.conf[i] = reportedConfidence(ctx.source[i]!, stale, cal, ctx.static.params.drift);
  }
}

const idx = (prefix: string, v: string | undefined): number => (v !== undefined && v.startsWith(prefix) && /^\d+$/.test(v.slice(prefix.length)) ? Number(v.slice(prefix.length)) : -1);

function learnObservation(ctx: AgentContext, pairs: readonly (readonly [number, string])[], seen: readonly string[], t: number, changes: [number, string, number, number][], lapsed: readonly number[] | null = null): void {
  const l = ctx.static.layout;
  // Option tracking: a field the step did not take in keeps its entry.
  const set = (c: AgentContext, i: number, value: string, at: number, source: number, out: Change[]) => (lapsed?.[i] === 1 ? undefined : setField(c, i, value, at, source, out));
  for (const [i, v] of pairs) set(ctx, i, v, t, SOURCE.observed, changes);
  switch (l.kind) {
    case "objectstate": {
      const here = ctx.values[0]!;
      l.objects.forEach((o, i) => {
        if (ctx.values[OBJ.loc(l, i)] === here && !seen.includes(o)) set(ctx, OBJ.loc(l, i), UNKNOWN, t, SOURCE.unknown, changes);
      });
      const r = idx("room_", here);
      if (r >= 0) ctx.know.lastSeen[r] = t;
      break;
    }
    case "tooldag":
      for (let i = 0; i < l.size; i++) {
        const completed = seen.includes(`t_${i}`);
        set(ctx, DAG.v(l, i), completed || seen.includes(`v_${i}`) ? "1" : "0", t, SOURCE.observed, changes);
        set(ctx, DAG.done(l, i), completed ? "1" : "0", t, SOURCE.observed, changes);
      }
      break;
    case "graphnav": {
      const here = ctx.values[0]!;
      l.objects.forEach((_, k) => {
        if (ctx.values[NAV.key(l, k)] === here && !pairs.some(([i]) => i === NAV.key(l, k))) set(ctx, NAV.key(l, k), UNKNOWN, t, SOURCE.unknown, changes);
      });
      const n = idx("n_", here);
      if (n >= 0) ctx.know.lastSeen[n] = t;
      break;
    }
  }
}

/** Which door/edge a probe or an action names, or -1. */
function lockIndex(l: Layout, args: readonly string[]): number {
  if (l.kind === "objectstate") return idx("door_", args[0]) - 1;
  if (l.kind !== "graphnav") return -1;
  const a = idx("n_", args[0]);
  const b = idx("n_", args[1]);
  return l.edges.findIndex(([x, y]) => (x === a && y === b) || (x === b && y === a));
}

function learnOutcome(ctx: AgentContext, p: EnvprobeSteppedPayload, changes: [number, string, number, number][], lapsed: readonly number[] | null = null): void {
  const l = ctx.static.layout;
  // Option tracking: a field the step did not take in keeps its entry.
  const set = (c: AgentContext, i: number, value: string, at: number, source: number, out: Change[]) => (lapsed?.[i] === 1 ? undefined : setField(c, i, value, at, source, out));
  const t = p.t;
  const parsed = parseAction(p.action);
  if (parsed === null) return;
  const inv = ctx.values[l.fields.length - 1]!;
  const A = SOURCE.action;
  switch (l.kind) {
    case "objectstate": {
      const o = l.objects.indexOf(parsed.args[0] ?? "");
      if (parsed.verb === "move_to") {
        if (p.valid) set(ctx, 0, parsed.args[0]!, t, A, changes);
        else if (p.reason === "door_locked") {
          const to = idx("room_", parsed.args[0]);
          const here = idx("room_", ctx.values[0]);
          if (to >= 0 && here >= 0) set(ctx, OBJ.door(l, Math.max(to, here)), "locked", t, A, changes);
        }
      } else if (parsed.verb === "pick_up" && o >= 0) {
        if (p.valid) {
          set(ctx, OBJ.loc(l, o), HELD, t, A, changes);
          set(ctx, OBJ.inventory(l), [...parseInventory(inv), l.objects[o]!].sort().join(","), t, A, changes);
        } else if (p.reason === "not_here") set(ctx, OBJ.loc(l, o), UNKNOWN, t, SOURCE.unknown, changes);
      } else if (parsed.verb === "unlock") {
        const k = lockIndex(l, parsed.args);
        if (k < 0) return;
        if (p.valid) set(ctx, OBJ.door(l, k + 1), "open", t, A, changes);
        else if (p.reason === "missing_key") {
          ctx.know.failedWith[k] = inv;
          set(ctx, OBJ.door(l, k + 1), "locked", t, A, changes);
        }
      }
      break;
    }
    case "tooldag": {
      const i = idx("t_", parsed.args[0]);
      if (parsed.verb !== "call_tool" || i < 0) return;
      if (p.valid || p.reason === "already_completed") {
        set(ctx, DAG.v(l, i), "1", t, A, changes);
        set(ctx, DAG.done(l, i), "1", t, A, changes);
      } else if (p.reason === "missing_inputs") {
        // The believed schema was too small: guess one more (the latest earlier variable not in it).
        const believed = parseDeps(ctx.values[DAG.dep(l, i)]!) ?? [];
        let extra = -1;
        for (let j = i - 1; j >= 0; j--) if (!believed.includes(j)) { extra = j; break; }
        const guess = extra < 0 ? UNKNOWN : depValue([...believed, extra].sort((a, b) => a - b));
        set(ctx, DAG.dep(l, i), guess, -1, guess === UNKNOWN ? SOURCE.unknown : SOURCE.prior, changes);
      }
      break;
    }
    case "graphnav": {
      if (parsed.verb === "move_to") {
        if (p.valid) set(ctx, 0, parsed.args[0]!, t, A, changes);
        else if (p.reason === "edge_locked") {
          const e = lockIndex(l, [ctx.values[0]!, parsed.args[0]!]);
          if (e >= 0) {
            ctx.know.failedWith[e] = inv;
            set(ctx, NAV.edge(l, e), "locked", t, A, changes);
          }
        }
      } else if (parsed.verb === "collect_key") {
        const k = l.objects.indexOf(parsed.args[0] ?? "");
        if (k < 0) return;
        if (p.valid) {
          set(ctx, NAV.key(l, k), HELD, t, A, changes);
          set(ctx, NAV.inventory(l), [...parseInventory(inv), l.objects[k]!].sort().join(","), t, A, changes);
        } else set(ctx, NAV.key(l, k), UNKNOWN, t, SOURCE.unknown, changes);
      }
      break;
    }
  }
}

function onTick(ctx: AgentContext, event: RecordIn<EnvprobeEntries, "tick.started">): Emitted[] {
  if (ctx.done) return [];
  const t = event.payload.tick + 1;
  ctx.t = t;
  const s = ctx.static;
  const l = s.layout;
  const next = plan(l, ctx.values, ctx.know);
  const d = new Array<number>(ctx.values.length).fill(0);
  for (const i of next.transitive) d[i] = 0.5;
  for (const i of next.direct) d[i] = 1;
  const draws = ctx.rng === null ? null : new Draws(ctx.rng);
  const inputs = {
    policy: s.params.policy, t, horizon: s.params.horizon, budget: s.params.budget, used: ctx.used, lastProbe: ctx.lastProbe, lastAct: ctx.lastAct,
    table: ctx, c: s.c, d, rhoThreshold: s.params.rhoThreshold, stalenessDivisor: s.params.stalenessDivisor, alpha: s.params.alpha,
    wrong: ctx.wrong, weights: s.weights, draws, skipFresh: s.params.skipFresh, oracleNeedsDependency: s.params.oracleNeedsDependency,
    preB0Judge: s.params.preB0Judge === true,
  };
  if (ctx.judge !== undefined && ctx.used < s.params.budget) {
    // The LLM Judge (paper §4.2): the belief table and Simple's top candidates go to a model, which
    // approves a probe or overrides it (act). Its answer decides the step (onJudge, same tick).
    const candidates = judgeCandidates(inputs);
    const proposal = decide({ ...inputs, policy: "envprobe-simple" });
    const rows = ctx.values.map((value, i) => ({ value, stale: ctx.stale[i]!, conf: ctx.conf[i]! }));
    const request = judgeRequest(s.params.judgeModel!, l, { t, horizon: s.params.horizon, budget: s.params.budget, used: ctx.used, action: next.action, proposal: proposal?.field ?? -1, candidates: candidates.map((c) => ({ field: c.field, c: c.c, s: c.s, u: c.u, d: c.d, rho: c.rho })) }, rows);
    ctx.judge = { requestHash: request.requestHash, t, action: next.action, candidates: candidates.map((c) => c.field), proposal: proposal?.field ?? -1 };
    return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload: request }];
  }
  const choice = decide(inputs);
  if (draws !== null) ctx.rng = draws.state;
  if (choice === null) return [act(ctx, t, next.action)];
  return [probeOf(ctx, t, choice.field, choice.why)];
}

function act(ctx: AgentContext, t: number, action: string): Emitted {
  ctx.lastAct = t;
  return { type: "envprobe.decided", to: ENV_ID, payload: { action, field: -1, kind: "act", t, why: "plan" } };
}

function probeOf(ctx: AgentContext, t: number, field: number, why: string): Emitted {
  ctx.used++;
  ctx.lastProbe = t;
  return { type: "envprobe.decided", to: ENV_ID, payload: { action: ctx.static.layout.fields[field]!.probe, field, kind: "probe", t, why } };
}

/** The Judge's answer: a probe of one of the candidates, or act; when the call failed or the answer is unusable, Simple's own decision stands (logged in `why`). */
function onJudge(ctx: AgentContext, wait: JudgeWait, event: RecordIn<EnvprobeEntries, "llm.completed" | "llm.failed">): Emitted[] {
  ctx.judge = null;
  const names = ctx.static.layout.fields.map((f) => f.name);
  const parsed = event.type === "llm.completed" ? parseJudgeDecision(event.payload.content, names, wait.candidates) : null;
  if (parsed?.ok === true) {
    if (parsed.field < 0) return [act(ctx, wait.t, wait.action)];
    return [probeOf(ctx, wait.t, parsed.field, `judge:llm`)];
  }
  const error = event.type === "llm.failed" ? event.payload.error : "unusable output";
  if (wait.proposal < 0) {
    ctx.lastAct = wait.t;
    return [{ type: "envprobe.decided", to: ENV_ID, payload: { action: wait.action, field: -1, kind: "act", t: wait.t, why: `plan (judge failed: ${error}; Simple's decision)` } }];
  }
  return [probeOf(ctx, wait.t, wait.proposal, `simple (judge failed: ${error})`)];
}

function onStepped(ctx: AgentContext, event: RecordIn<EnvprobeEntries, "envprobe.stepped">): Emitted[] {
  if (ctx.llm !== undefined) return onSteppedLlm(ctx, ctx.llm, event.payload);
  const p = event.payload;
  const changes: [number, string, number, number][] = [];
  const lapsed = ctx.tracking === undefined ? null : drawLapses(ctx.tracking, ctx.static.params.tracking!);
  if (p.kind === "probe") {
    if (ctx.static.params.writeBack) {
      for (const [i, v] of p.answer) set(ctx, i, v, p.t, SOURCE.probed, changes);
      learnProbeExtra(ctx, p);
    }
  } else learnOutcome(ctx, p, changes, lapsed);
  learnObservation(ctx, p.obs, p.seen, p.t, changes, lapsed);
  if (p.gold !== undefined) p.gold.forEach((v, i) => set(ctx, i, v, p.t, SOURCE.probed, changes));
  ctx.done = p.done;
  report(ctx, p.t);
  return [{ type: "envprobe.believed", to: ENV_ID, payload: { set: changes, t: p.t } }];
}

/**
 * Option tracking: which fields this step does not take in. One unit per field per step, in field
 * order, whatever happens (the stream never shifts with the policy's choices): field i lapses when
 * its unit is below `persist` if it lapsed the step before, else below `lapse`. The lapse process is
 * exogenous — a function of (world, seed, step) only — so every policy sees the same lapses.
 */
function drawLapses(tr: TrackingState, p: { readonly lapse: number; readonly persist: number }): readonly number[] {
  const draws = new Draws(tr.rng);
  for (let i = 0; i < tr.lapsed.length; i++) tr.lapsed[i] = draws.unit() < (tr.lapsed[i] === 1 ? p.persist : p.lapse) ? 1 : 0;
  tr.rng = draws.state;
  return tr.lapsed;
}

/** What a probe answer teaches besides its fields: a door's or edge's key. */
function learnProbeExtra(ctx: AgentContext, p: EnvprobeSteppedPayload): void {
  const key = p.extra.required_key;
  const parsed = parseAction(p.action);
  if (key !== undefined && parsed !== null) {
    const k = lockIndex(ctx.static.layout, parsed.args);
    if (k >= 0) ctx.know.lockKey[k] = key;
  }
}

/**
 * LLM mode, after the world answered: the probe answer (and the oracle-belief reference's truth)
 * is written back now; the scripted update is worked out on a copy of the table as the fallback
 * (its planner knowledge — rooms seen, failed unlocks — is learned for real: it is not a belief);
 * then the model is asked for the step's belief updates.
 */
function onSteppedLlm(ctx: AgentContext, llm: LlmState, p: EnvprobeSteppedPayload): Emitted[] {
  const { layout: l, params } = ctx.static;
  const kept: Change[] = [];
  const locked: number[] = [];
  if (p.kind === "probe" && params.writeBack) {
    for (const [i, v] of p.answer) (set(ctx, i, v, p.t, SOURCE.probed, kept), locked.push(i));
    learnProbeExtra(ctx, p);
  }
  if (p.gold !== undefined) p.gold.forEach((v, i) => (set(ctx, i, v, p.t, SOURCE.probed, kept), locked.push(i)));
  for (const [i] of kept) llm.reports[i] = null;
  const shadow: AgentContext = { ...ctx, values: [...ctx.values], verified: [...ctx.verified], source: [...ctx.source] };
  const fallback: Change[] = [];
  if (p.kind !== "probe") learnOutcome(shadow, p, fallback);
  learnObservation(shadow, p.obs, p.seen, p.t, fallback);
  if (p.gold !== undefined) p.gold.forEach((v, i) => set(shadow, i, v, p.t, SOURCE.probed, fallback));
  ctx.done = p.done;
  report(ctx, p.t);
  const rows = ctx.values.map((value, i) => ({ value, stale: ctx.stale[i]!, conf: ctx.conf[i]! }));
  const request = beliefRequest(params.beliefModel!, l, p, params.horizon, params.budget, rows);
  llm.awaiting = { requestHash: request.requestHash, t: p.t, kept, fallback, locked: [...new Set(locked)].sort((a, b) => a - b) };
  return [{ type: "llm.requested", to: LLM_GATEWAY_ID, payload: request }];
}

/**
 * LLM mode, the model's answer (same tick): a valid answer's updates become beliefs (source
 * `model`, last verified t − staleness) with the model's staleness and confidence as reports — a
 * field answered by this step's probe keeps the answer; anything else falls back to the scripted
 * update. The log says which backend produced the step's beliefs.
 */
function onLlm(ctx: AgentContext, event: RecordIn<EnvprobeEntries, "llm.completed" | "llm.failed">): Emitted[] {
  if (ctx.judge != null && event.payload.requestHash === ctx.judge.requestHash) return onJudge(ctx, ctx.judge, event);
  const llm = ctx.llm;
  const waiting = llm?.awaiting;
  if (llm === undefined || waiting == null || event.payload.requestHash !== waiting.requestHash) return [];
  llm.awaiting = null;
  const { t, kept, fallback, locked } = waiting;
  const model = ctx.static.params.beliefModel!;
  const changes: Change[] = [...kept];
  const reports: [number, number, number][] = [];
  const parsed = event.type === "llm.completed" ? parseBeliefUpdates(event.payload.content, ctx.static.layout.fields.map((f) => f.name)) : null;
  let backend: string;
  if (parsed?.ok === true) {
    backend = `llm:${model}`;
    for (const u of parsed.updates) {
      if (locked.includes(u.field)) continue;
      set(ctx, u.field, u.value, Math.max(-1, t - u.staleness), SOURCE.model, changes);
      llm.reports[u.field] = [u.staleness, u.confidence, t];
      reports.push([u.field, u.staleness, u.confidence]);
    }
  } else {
    backend = `scripted (fallback from llm:${model}: ${event.type === "llm.failed" ? event.payload.error : "unusable output"})`;
    for (const [i, v, verified, source] of fallback) {
      const before = changes.length;
      set(ctx, i, v, verified, source, changes);
      if (changes.length > before) llm.reports[i] = null;
    }
  }
  report(ctx, t);
  return [{ type: "envprobe.believed", to: ENV_ID, payload: { backend, reports, set: changes, t } }];
}

function onScored(ctx: AgentContext, event: RecordIn<EnvprobeEntries, "envprobe.scored">): Emitted[] {
  ctx.wrong = [...event.payload.wrong];
  return [];
}

/** The agent's record handlers (services/envprobe/direct.ts delivers records to them too). */
export const agentHandlers: HandlerTable<AgentContext, EnvprobeEntries, "tick.started" | "envprobe.stepped" | "envprobe.scored" | "llm.completed" | "llm.failed"> = {
  "tick.started": onTick,
  "envprobe.stepped": onStepped,
  "envprobe.scored": onScored,
  "llm.completed": onLlm,
  "llm.failed": onLlm,
};

export const agentLogic = recordActorLogic({
  context: initialAgentContext,
  handlers: agentHandlers,
  valueOf: () => "running",
});

