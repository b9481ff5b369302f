// ToolDAGWorld (paper §4, reference/envprobe.md §2.4): tools t_0 … t_(n-1), tool t_i produces
// variable v_i and needs its inputs (earlier variables, hidden unless probed); the goal is the
// last variable.
import type { Draws } from "../../rng.ts";
import { answered, refused } from "./answers.ts";
import { pick3, sample } from "./generation.ts";
import { indexOfName } from "./grammar.ts";
import type { Answer, Field, Layout, MutationTargets, Observation, Outcome, Parsed, Sizes, WorldKind, WorldSpec } from "./types.ts";
import { UNKNOWN } from "./values.ts";

/** Field indices (the order fixed by generation). */
export const DAG = {
  v: (l: Layout, i: number) => i,
  done: (l: Layout, i: number) => l.size + i,
  dep: (l: Layout, i: number) => 2 * l.size + i,
};

/** A tool's inputs as a field value: `v_0+v_3`, or `-` for none. */
export const depValue = (inputs: readonly number[]): string => (inputs.length === 0 ? "-" : inputs.map((i) => `v_${i}`).join("+"));
export const parseDeps = (value: string): number[] | null => (value === UNKNOWN ? null : value === "-" ? [] : value.split("+").map((v) => Number(v.slice(2))));

function generate(sizes: Sizes, draws: Draws): WorldSpec {
  const n = pick3(sizes.cardinality, [5, 9, 16]);
  const per = pick3(sizes.density, [1, 2, 3]);
  const deps: number[][] = [[]];
  for (let i = 1; i < n; i++) deps.push(sample(draws, Array.from({ length: i }, (_, j) => j), Math.min(i, per)).sort((a, b) => a - b));
  const fields: Field[] = [];
  for (let i = 0; i < n; i++) fields.push({ name: `var:v_${i}`, type: "procedural", weight: i === n - 1 ? 1 : 0.6, probe: `check_variable_exists(v_${i})` });
  for (let i = 0; i < n; i++) fields.push({ name: `done:t_${i}`, type: "procedural", weight: 0.4, probe: `check_tool_status(t_${i})` });
  for (let i = 0; i < n; i++) fields.push({ name: `dep:t_${i}`, type: "procedural", weight: 0.8, probe: `inspect_tool_schema(t_${i})` });
  const initial = [...Array.from({ length: 2 * n }, () => "0"), ...deps.map(depValue)];
  return { layout: { kind: "tooldag", fields, goal: `v_${n - 1}`, size: n, objects: [], edges: [] }, hidden: { lockKey: [], deps }, initial };
}

function act(spec: WorldSpec, values: string[], p: Parsed): Outcome {
  const l = spec.layout;
  if (p.verb !== "call_tool") return { valid: false, reason: "unknown_action" };
  const i = indexOfName("t_", p.args[0], l.size);
  if (i < 0) return { valid: false, reason: "unknown_tool" };
  if (values[DAG.done(l, i)] === "1") return { valid: false, reason: "already_completed" };
  for (const d of spec.hidden.deps[i]!) if (values[DAG.v(l, d)] !== "1") return { valid: false, reason: "missing_inputs" };
  values[DAG.v(l, i)] = "1";
  values[DAG.done(l, i)] = "1";
  return { valid: true, reason: "ok" };
}

const isSuccess = (layout: Layout, values: readonly string[]): boolean => values[DAG.v(layout, layout.size - 1)] === "1";

function probe(spec: WorldSpec, values: readonly string[], p: Parsed): Answer {
  const l = spec.layout;
  const t = indexOfName("t_", p.args[0], l.size);
  const v = indexOfName("v_", p.args[0], l.size);
  switch (p.verb) {
    case "inspect_tool_schema":
      return t < 0 ? refused("unknown_tool") : answered([[DAG.dep(l, t), depValue(spec.hidden.deps[t]!)]], { produces: `v_${t}` });
    case "check_required_inputs":
    case "check_tool_dependency": {
      if (t < 0) return refused("unknown_tool");
      const pairs: [number, string][] = [[DAG.dep(l, t), depValue(spec.hidden.deps[t]!)]];
      for (const d of spec.hidden.deps[t]!) pairs.push([DAG.v(l, d), values[DAG.v(l, d)]!]);
      return answered(pairs);
    }
    case "check_variable_exists":
    case "validate_tool_output":
      return v < 0 ? refused("unknown_variable") : answered([[DAG.v(l, v), values[DAG.v(l, v)]!]]);
    case "check_tool_status":
      return t < 0 ? refused("unknown_tool") : answered([[DAG.done(l, t), values[DAG.done(l, t)]!]]);
    case "validate_argument":
      return answered([], { valid: "false" });
    default:
      return refused("unknown_probe");
  }
}

/** No field pairs: the available variables (sorted; partial noise hides the last), then the completed tools. */
function observe(spec: WorldSpec, values: readonly string[], dropLast: boolean): Observation {
  const l = spec.layout;
  const pairs: [number, string][] = [];
  const vars: string[] = [];
  for (let i = 0; i < l.size; i++) if (values[DAG.v(l, i)] === "1") vars.push(`v_${i}`);
  vars.sort();
  if (dropLast) vars.pop();
  const seen = vars;
  for (let i = 0; i < l.size; i++) if (values[DAG.done(l, i)] === "1") seen.push(`t_${i}`);
  return { pairs, seen };
}

/** Each tool draws a unit: a hit makes its variable (not the goal's) disappear and the tool not done, under either targets. */
function mutate(spec: WorldSpec, values: readonly string[], rate: number, _targets: MutationTargets, draws: Draws, set: (field: number, value: string) => void): void {
  const l = spec.layout;
  for (let i = 0; i < l.size; i++) {
    const hit = draws.unit() < rate;
    if (hit && i !== l.size - 1 && values[DAG.v(l, i)] === "1") {
      set(DAG.v(l, i), "0");
      set(DAG.done(l, i), "0");
    }
  }
}

/** The goal's tool and everything it needs, transitively: one call each. */
function shortestPlan(spec: WorldSpec): number | null {
  const need = new Set<number>();
  const visit = (i: number) => {
    if (need.has(i)) return;
    need.add(i);
    for (const d of spec.hidden.deps[i]!) visit(d);
  };
  visit(spec.layout.size - 1);
  return need.size;
}

export const toolDag: WorldKind<"tooldag"> = { kind: "tooldag", generate, act, isSuccess, probe, observe, mutate, shortestPlan };
