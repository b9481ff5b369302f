// What the AURA controller knows (its input, its context, the query in progress) and the helpers
// every stage shares: the seeded visiting order, who answers a call, the step policy's view and
// Algorithm 1's next call. Which stage a query is in is the machine's state (machine.ts), not data.
import type { RecordIn } from "../../actor.ts";
import type { IntentFramePayload } from "../events.ts";
import { deriveStream, Draws, type StreamState } from "../../rng.ts";
import type { PerceivedScene, QueryAnalysis } from "../intent.ts";
import { agentIdOf, SCENE_ENV_ID } from "../scene.ts";
import { callKey, candidates, envCandidates, type PlannedCall, type QueryLabels, type StrategyConfig } from "../strategies.ts";
import type { MemoryItem, Retrieved } from "../memory.ts";
import type { FactualAnalysis } from "../factual.ts";
import { ALL_TOOLS } from "../tools.ts";
import type { Observation, SceneLlmModels } from "../llm.ts";
import type { SceneEntries } from "../events.ts";

export interface ControllerInput {
  readonly condition: string;
  readonly strategy: StrategyConfig;
  readonly scene: PerceivedScene;
  /** The registry offered to the controller (tool names). */
  readonly tools: readonly string[];
  /** Benchmark labels by query id, only for the conditions that use them (fixed-private, oracle-intent). */
  readonly labels: Readonly<Record<string, QueryLabels>>;
  readonly seed: number;
  /** Which registry the condition probes: the 5 agent-state probes, or the 8 environment tools. */
  readonly registry: "agent-state" | "environment";
  /** Who asks each query (environment registry: questions about the asker's own place or plan). */
  readonly askers: Readonly<Record<string, string>>;
  /** Known places and their types (environment registry: "is there a park"). */
  readonly places: Readonly<Record<string, string>>;
  /** The model of each LLM role (through the gateway), or absent/null: deterministic backends. */
  readonly llm?: SceneLlmModels | null;
}

/**
 * The records the controller takes: a query, a probe's answer or refusal, a model's answer. It is
 * also sent each `tick.started`, which it ignores (as any record its state has no transition for).
 */
export type ControllerEvent = RecordIn<SceneEntries, "user.query" | "probe.answered" | "probe.denied" | "llm.completed" | "llm.failed" | "tick.started">;

/** A model's answer to the controller's request (`llm.completed` or `llm.failed`). */
export type ModelAnswer = RecordIn<SceneEntries, "llm.completed" | "llm.failed">;

export interface Reading {
  readonly tool: string;
  readonly target: string | null;
  readonly args: Readonly<Record<string, string>>;
  readonly ok: boolean;
  readonly result: unknown;
  readonly source: string;
}

/** The query in progress, from its `user.query` to its `answer.given`. */
export interface Working {
  readonly queryId: string;
  readonly asker: string | null;
  readonly factual: FactualAnalysis | null;
  readonly text: string;
  readonly analysis: QueryAnalysis;
  readonly frame: IntentFramePayload | null;
  readonly budget: number;
  readonly order: readonly string[];
  /** The calls a plan-once strategy fixed in the planning stage (null: chosen step by step). */
  plan: readonly PlannedCall[] | null;
  readonly readings: Reading[];
  readonly tried: string[];
  /** The probe in flight (probing.awaitingProbe). */
  pending: PlannedCall | null;
  calls: number;
  disclosure: number;
  /** The controller clock: this query's 1-based index (the Memory stage's time). */
  readonly clock: number;
  /** What the Memory stage retrieved for this query (≤ 5, best first). */
  readonly recalled: readonly Retrieved[];
  /** The LLM stages of this query (absent on the deterministic backends). */
  llm?: LlmWork;
}

/** What the LLM stages of a query hold between a request and its answer. */
export interface LlmWork {
  /** The request in flight (a stage's awaitingModel state says which stage asked it). */
  awaiting: { readonly requestHash: string; readonly model: string } | null;
  /** Per role: `llm:<model>`, or the deterministic fallback and why. */
  readonly backends: Record<string, string>;
  /** What each probe returned (or why it was refused), for the planner's next step. */
  readonly observations: Observation[];
  plannerFallback: boolean;
  answerText: string | null;
}

export interface ControllerContext {
  readonly static: ControllerInput;
  /** Probe answers kept for later queries (reuse, aura-intent-reuse only), by call key. */
  memory: Record<string, Reading>;
  /** The Memory stage's store (memory.ts): queries asked and probe answers read, when the strategy has one. */
  recall: MemoryItem[];
  rng: StreamState;
  current: Working | null;
  queries: number;
}

export function initialController(input: ControllerInput): ControllerContext {
  return { static: input, memory: {}, recall: [], rng: deriveStream(input.seed, `condition/${input.condition}/tiebreak`), current: null, queries: 0 };
}

/** The query in progress (every stage after idle has one). */
export function working(ctx: ControllerContext): Working {
  if (ctx.current === null) throw new Error("the AURA controller has no query in progress");
  return ctx.current;
}

/** Fisher–Yates with the condition's own stream: a group's visiting order differs by seed. */
export function shuffled(ctx: ControllerContext, items: readonly string[]): string[] {
  const out = [...items];
  const draws = new Draws(ctx.rng);
  for (let i = out.length - 1; i > 0; i--) {
    const j = draws.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  ctx.rng = draws.state;
  return out;
}

/**
 * Who answers a call: the agent whose state it reads, else the environment. A tool outside the
 * offered registry, or an agent tool naming nobody in the scene (a planner's invention), goes to
 * the environment, which refuses it: it is logged as `probe.denied` and never executed.
 */
export const ownerOf = (ctx: ControllerContext, call: PlannedCall): string =>
  ctx.static.tools.includes(call.tool) && ALL_TOOLS[call.tool]?.owner === "agent" && call.target !== null && ctx.static.scene.public[call.target] !== undefined ? agentIdOf(call.target) : SCENE_ENV_ID;

export function view(ctx: ControllerContext, w: Working, withKnown: boolean) {
  const known = new Set<string>();
  if (withKnown) {
    for (const r of w.readings) if (r.ok) known.add(callKey(r));
    if (ctx.static.strategy.reuse) for (const [k, r] of Object.entries(ctx.memory)) if (r.ok) known.add(k);
  }
  return {
    text: w.text, analysis: w.analysis, labels: ctx.static.labels[w.queryId] ?? null, publicState: ctx.static.scene.public,
    focus: ctx.static.scene.focus, order: w.order, known, tried: new Set(w.tried),
  };
}

export function listFor(ctx: ControllerContext, w: Working, withKnown: boolean): PlannedCall[] {
  const kind = ctx.static.strategy.kind;
  if (w.factual !== null) return envCandidates(kind, { analysis: w.factual, asker: w.asker ?? "", made: w.calls });
  return candidates(kind, view(ctx, w, withKnown));
}

/** Algorithm 1's step: the next probe, or null to stop (budget spent, or nothing left to learn). */
export function nextCall(ctx: ControllerContext, w: Working): PlannedCall | null {
  if (w.calls >= w.budget) return null;
  const list = w.plan ?? listFor(ctx, w, true);
  return list.find((c) => !w.tried.includes(callKey(c))) ?? null;
}

/** What the Memory stage retrieved, for `intent.inferred` (absent when the strategy has no Memory stage). */
export function memoriesOf(ctx: ControllerContext, w: Working): { memories?: Array<{ content: string; importance: number; kind: string; score: number; t: number }> } {
  if (!ctx.static.strategy.memory) return {};
  return { memories: w.recalled.map((m) => ({ content: m.content, importance: m.importance, kind: m.kind, score: m.score, t: m.t })) };
}
