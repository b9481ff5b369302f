// Probing policies (paper §3.3 and §5.2): given the belief table, the plan and the budget, probe a
// field or act. c_i and d_i come from the task structure (field weights, the plan's dependency
// roles); s_i and u_i from the agent's own reports. Every field is a candidate every step, as in
// Algorithm 1 (the option skipFresh, off by default, skips fields verified since the last action).
import type { Draws } from "../rng.ts";
import type { Policy } from "./config.ts";
import { SOURCE } from "./config.ts";

export interface Table {
  readonly values: readonly string[];
  readonly verified: readonly number[];
  readonly source: readonly number[];
  readonly stale: readonly number[];
  readonly conf: readonly number[];
}

export interface Inputs {
  readonly policy: Policy;
  readonly t: number;
  readonly horizon: number;
  readonly budget: number;
  readonly used: number;
  readonly lastProbe: number;
  /** The last step the agent acted (0 before its first action). */
  readonly lastAct: number;
  readonly table: Table;
  /** c_i = w_i / max w. */
  readonly c: readonly number[];
  /** d_i ∈ {0, 0.5, 1}: unrelated, transitive, direct blocker of the next action. */
  readonly d: readonly number[];
  readonly rhoThreshold: number;
  readonly stalenessDivisor: number;
  readonly alpha: number;
  /** Privileged policies only: the fields whose belief differs from the world now. */
  readonly wrong: readonly number[] | null;
  readonly weights: readonly number[];
  /** The policy's own stream (Random); always consumed the same way per step. */
  readonly draws: Draws | null;
  /** Option (not the paper's): fields verified since the agent last acted are not candidates. */
  readonly skipFresh: boolean;
  /** Option (not the paper's): the Oracle probes only mismatched fields the plan depends on. */
  readonly oracleNeedsDependency: boolean;
  /** Logs written before 7596a13: envprobe-judge is the fixed critic (the stand-in's rule, probes logged `judge:rho=…`). */
  readonly preB0Judge?: boolean;
}

export interface Candidate {
  readonly field: number;
  readonly c: number;
  readonly s: number;
  readonly u: number;
  readonly d: number;
  readonly rho: number;
}

/** EnvProbe-Simple's top-k candidates by ρ = c + s + u + d (ties: the first field), as the Judge sees them. */
export function judgeCandidates(x: Inputs, k = 3): Candidate[] {
  const out: Candidate[] = [];
  for (let i = 0; i < x.table.values.length; i++) {
    if (x.skipFresh && isFresh(x, i)) continue;
    const c = x.c[i]!;
    const s = Math.min(1, x.table.stale[i]! / x.stalenessDivisor);
    const u = Math.max(0, 1 - x.table.conf[i]!);
    const d = x.d[i]!;
    out.push({ field: i, c, s, u, d, rho: c + s + u + d });
  }
  out.sort((a, b) => b.rho - a.rho || a.field - b.field);
  return out.slice(0, k);
}

/** Verified since the agent last acted (its answer or observation is already in the table). */
const isFresh = (x: Inputs, i: number): boolean =>
  x.table.verified[i]! >= Math.min(x.t - 1, x.lastAct) && x.table.source[i] !== SOURCE.prior && x.table.source[i] !== SOURCE.unknown;

export interface Decision {
  readonly field: number;
  readonly why: string;
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** Returns the field to probe, or null to act. */
export function decide(x: Inputs): Decision | null {
  const n = x.table.values.length;
  // Random draws first, every step, so its stream never shifts with the budget.
  const coin = x.draws === null ? 1 : x.draws.unit();
  const randomField = x.draws === null ? 0 : x.draws.int(0, n - 1);
  if (x.used >= x.budget || x.policy === "no-probe" || x.policy === "oracle-beliefs") return null;
  // Option skipFresh (not the paper's): fields verified since the agent last acted are skipped.
  const fresh = (i: number) => x.skipFresh && isFresh(x, i);
  const s = (i: number) => Math.min(1, x.table.stale[i]! / x.stalenessDivisor);
  const u = (i: number) => Math.max(0, 1 - x.table.conf[i]!);
  const argmax = (score: (i: number) => number, eligible: (i: number) => boolean = () => true): [number, number] => {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < n; i++) {
      if (fresh(i) || !eligible(i)) continue;
      const v = score(i);
      if (v > bestScore) (best = i, bestScore = v);
    }
    return [best, bestScore];
  };
  const threshold = (score: (i: number) => number, limit: number, label: string): Decision | null => {
    const [i, v] = argmax(score);
    return i >= 0 && v >= limit - 1e-9 ? { field: i, why: `${label}=${r2(v)}` } : null;
  };
  const scaled = x.rhoThreshold * 0.75;
  // DETERMINISTIC STAND-IN for the Judge (not the paper's): the critic sees Simple's three best candidates and approves the first one the plan
  // depends on that is not a fresh observation (unverified, or reported stale ≥ 2).
  const standin = (label: string): Decision | null => {
    const rho = (i: number) => x.c[i]! + s(i) + u(i) + x.d[i]!;
    const ranked: number[] = [];
    for (let i = 0; i < n; i++) if (!fresh(i)) ranked.push(i);
    ranked.sort((a, b) => rho(b) - rho(a) || a - b);
    for (const i of ranked.slice(0, 3)) {
      const unverified = x.table.source[i] === SOURCE.prior || x.table.source[i] === SOURCE.unknown;
      if (x.d[i]! > 0 && rho(i) >= 1 && (unverified || x.table.stale[i]! >= 2)) return { field: i, why: `${label}:rho=${r2(rho(i))}` };
    }
    return null;
  };
  switch (x.policy) {
    case "random":
      return coin < x.budget / x.horizon ? { field: randomField, why: "random" } : null;
    case "periodic": {
      const period = Math.max(1, Math.floor(x.horizon / x.budget));
      if (x.t - x.lastProbe < period) return null;
      const [i] = argmax((j) => x.table.stale[j]!);
      return i < 0 ? null : { field: i, why: `period=${period}` };
    }
    case "self-uncertainty": {
      const [i, v] = argmax((j) => -x.table.conf[j]!);
      return i >= 0 && -v < x.alpha ? { field: i, why: `conf=${r2(-v)}` } : null;
    }
    case "envprobe-simple":
      return threshold((i) => x.c[i]! + s(i) + u(i) + x.d[i]!, x.rhoThreshold, "rho");
    case "envprobe-cd":
      return threshold((i) => x.c[i]! + x.d[i]!, x.rhoThreshold / 2, "c+d");
    case "envprobe-minus-c":
      return threshold((i) => s(i) + u(i) + x.d[i]!, scaled, "s+u+d");
    case "envprobe-minus-d":
      return threshold((i) => x.c[i]! + s(i) + u(i), scaled, "c+s+u");
    case "envprobe-minus-s":
      return threshold((i) => x.c[i]! + u(i) + x.d[i]!, scaled, "c+u+d");
    case "envprobe-minus-u":
      return threshold((i) => x.c[i]! + s(i) + x.d[i]!, scaled, "c+s+d");
    case "envprobe-judge":
      // The LLM Judge is asked by the agent (agent.ts); without a model it is never decided here,
      // but under the pre-b0 semantics (config legacy) it is that code's fixed critic, `standin` above.
      return x.preB0Judge === true ? standin("judge") : null;
    case "envprobe-judge-standin":
      return standin("standin");
    case "oracle": {
      if (x.wrong === null || x.wrong.length === 0) return null;
      // The paper's Oracle-Probe: "probes a known mismatched field" — every mismatch counts 1 (exact
      // per-field comparison), ties go to the first field (the release's stable sort).
      if (!x.oracleNeedsDependency) return { field: x.wrong[0]!, why: "mismatch" };
      let best = -1;
      for (const i of x.wrong) if (x.d[i]! > 0 && (best < 0 || x.d[i]! > x.d[best]! || (x.d[i] === x.d[best] && x.weights[i]! > x.weights[best]!))) best = i;
      return best < 0 ? null : { field: best, why: `mismatch d=${x.d[best]}` };
    }
    case "oracle-tw": {
      if (x.wrong === null || x.wrong.length === 0) return null;
      let best = x.wrong[0]!;
      for (const i of x.wrong) if (x.weights[i]! > x.weights[best]!) best = i;
      return { field: best, why: `w=${x.weights[best]}` };
    }
  }
  return null;
}
