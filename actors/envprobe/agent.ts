// The EnvProbe agent: a belief table (field, type, value, last-verified step, source, reported
// staleness and confidence), a planner over it, and the probing policy of its condition. Each tick
// it decides (act or probe one field); when the world answers it writes probe answers back
// (paper Def. 3.1: b_{t+1} ← g_t), learns from the observation and from failed actions, and
// reports its belief changes. It never sees the world's state or its mutations — except the
// privileged oracle policies, which read the referee's list of wrong fields (logged).
import { setup } from "xstate";
import { handleRecords, type Delivered, type Emitted, type RecordHandler } from "../actor.ts";
import type { EnvprobeScoredPayload, EnvprobeSteppedPayload } from "../../events/envprobe.ts";
import { deriveStream, Draws, type StreamState } from "../rng.ts";
import { reportedConfidence, reportedStaleness, SOURCE, type Calibration, type Policy } from "./config.ts";
import { DAG, depValue, HELD, NAV, nodeName, OBJ, parseAction, parseDeps, parseInventory, UNKNOWN, type Layout, type Observation } from "./kinds.ts";
import { plan, type Knowledge } from "./planner.ts";
import { decide } from "./policies.ts";

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
}

export interface AgentInput {
  readonly layout: Layout;
  readonly params: AgentParams;
  readonly seed: number;
  /** The first observation (step 0), before any action. */
  readonly first: Observation;
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

export function initialAgentContext(input: AgentInput): AgentContext {
  const l = input.layout;
  const { values, source } = priors(l);
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
  const changes: [number, string, number, number][] = [];
  learnObservation(ctx, input.first.pairs, input.first.seen, 0, changes);
  report(ctx, 0);
  return ctx;
}

function set(ctx: AgentContext, i: number, value: string, t: number, source: number, changes: [number, string, number, number][]): void {
  if (ctx.values[i] === value && ctx.verified[i] === t && ctx.source[i] === source) return;
  ctx.values[i] = value;
  ctx.verified[i] = t;
  ctx.source[i] = source;
  changes.push([i, value, t, source]);
}

function report(ctx: AgentContext, t: number): void {
  const cal = ctx.static.params.calibration;
  for (let i = 0; i < ctx.values.length; i++) {
    const stale = reportedStaleness(t - ctx.verified[i]!, cal);
    ctx.stale[i] = stale;
    ctx.conf[i] = reportedConfidence(ctx.source[i]!, stale, cal);
  }
}

const idx = (prefix: string, v: string | undefined): number => (v !== undefined && v.startsWith(prefix) && /^\d+$/.test(v.slice(prefix.length)) ? Number(v.slice(prefix.length)) : -1);

function learnObservation(ctx: AgentContext, pairs: readonly (readonly [number, string])[], seen: readonly string[], t: number, changes: [number, string, number, number][]): void {
  const l = ctx.static.layout;
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

function learnOutcome(ctx: AgentContext, p: EnvprobeSteppedPayload, changes: [number, string, number, number][]): void {
  const l = ctx.static.layout;
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

function onTick(ctx: AgentContext, event: Delivered<{ tick: number }>): Emitted[] {
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
  const choice = decide({
    policy: s.params.policy, t, horizon: s.params.horizon, budget: s.params.budget, used: ctx.used, lastProbe: ctx.lastProbe, lastAct: ctx.lastAct,
    table: ctx, c: s.c, d, rhoThreshold: s.params.rhoThreshold, stalenessDivisor: s.params.stalenessDivisor, alpha: s.params.alpha,
    wrong: ctx.wrong, weights: s.weights, draws,
  });
  if (draws !== null) ctx.rng = draws.state;
  if (choice === null) {
    ctx.lastAct = t;
    return [{ type: "envprobe.decided", to: ENV_ID, payload: { action: next.action, field: -1, kind: "act", t, why: "plan" } }];
  }
  ctx.used++;
  ctx.lastProbe = t;
  return [{ type: "envprobe.decided", to: ENV_ID, payload: { action: l.fields[choice.field]!.probe, field: choice.field, kind: "probe", t, why: choice.why } }];
}

function onStepped(ctx: AgentContext, event: Delivered<EnvprobeSteppedPayload>): Emitted[] {
  const p = event.payload;
  const l = ctx.static.layout;
  const changes: [number, string, number, number][] = [];
  if (p.kind === "probe") {
    if (ctx.static.params.writeBack) {
      for (const [i, v] of p.answer) set(ctx, i, v, p.t, SOURCE.probed, changes);
      const key = p.extra.required_key;
      const parsed = parseAction(p.action);
      if (key !== undefined && parsed !== null) {
        const k = lockIndex(l, parsed.args);
        if (k >= 0) ctx.know.lockKey[k] = key;
      }
    }
  } else learnOutcome(ctx, p, changes);
  learnObservation(ctx, p.obs, p.seen, p.t, changes);
  if (p.gold !== undefined) p.gold.forEach((v, i) => set(ctx, i, v, p.t, SOURCE.probed, changes));
  ctx.done = p.done;
  report(ctx, p.t);
  return [{ type: "envprobe.believed", to: ENV_ID, payload: { set: changes, t: p.t } }];
}

function onScored(ctx: AgentContext, event: Delivered<EnvprobeScoredPayload>): Emitted[] {
  ctx.wrong = [...event.payload.wrong];
  return [];
}

export const agentHandlers: Record<string, RecordHandler<AgentContext>> = {
  "tick.started": onTick as RecordHandler<AgentContext>,
  "envprobe.stepped": onStepped as RecordHandler<AgentContext>,
  "envprobe.scored": onScored as RecordHandler<AgentContext>,
};

export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    input: {} as AgentInput,
    events: {} as Delivered & { type: string },
    emitted: {} as Emitted & { type: string },
  },
  actions: { handle: handleRecords(agentHandlers) },
}).createMachine({
  id: "envprobe-agent",
  context: ({ input }) => initialAgentContext(input),
  initial: "running",
  states: { running: { on: { "*": { actions: "handle" } } } },
});

