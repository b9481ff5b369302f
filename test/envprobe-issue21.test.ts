// Issue 21: the paper's definitions by default. b₀ = g₀ (Algorithm 1), the options that are not
// the paper's off by default, p_cw computed both ways on a hand-computed case, the paper's Oracle
// (any known mismatch, not only fields the plan depends on), and the calibration model.
import { describe, expect, it } from "vitest";
import { initialAgentContext } from "../actors/envprobe/agent.ts";
import { defaultConfig, LEGACY_CALIBRATION, NON_PAPER_OPTIONS, reportedConfidence, SOURCE, defaultCalibration } from "../actors/envprobe/config.ts";
import { decide, type Inputs } from "../actors/envprobe/policies.ts";
import { envprobeWorld, inputsOf } from "../actors/envprobe/world.ts";
import { runDirect } from "../services/envprobe/direct.ts";
import { cellOf, EpisodeAccumulator } from "../services/envprobe/metrics.ts";
import { KINDS } from "../actors/envprobe/kinds/index.ts";

const configOf = (raw: object, policy = "no-probe") => envprobeWorld.applyCondition(envprobeWorld.resolveConfig(raw), policy);

describe("issue 21: the paper's defaults", () => {
  it("the agent starts from the world's values (b₀ = g₀) in every world; option initialBeliefs \"guess\" keeps the guessed priors", () => {
    for (const world of KINDS) {
      for (let seed = 0; seed < 5; seed++) {
        const { agent, env } = inputsOf(configOf({ world, regime: "medium" }), seed);
        const ctx = initialAgentContext(agent);
        expect(ctx.values).toEqual(env.spec.initial);
        // … so A_0 = 1: the first scored step can only be wrong through that step's change or noise.
        const guess = initialAgentContext(inputsOf(configOf({ world, regime: "medium", initialBeliefs: "guess" }), seed).agent);
        if (world !== "graphnav") expect(guess.values).not.toEqual(env.spec.initial);
      }
    }
  });

  it("every option that is not the paper's is off by default", () => {
    for (const [key, o] of Object.entries(NON_PAPER_OPTIONS)) expect((defaultConfig as Record<string, unknown>)[key]).toBe(o.paper);
    expect(defaultConfig.initialBeliefs).toBe("gold");
    expect(defaultConfig.skipFresh).toBe(false);
    expect(defaultConfig.oracleNeedsDependency).toBe(false);
    expect(defaultConfig.writeBack).toBe(true);
    // The default grid has no LLM Judge (it needs a model); its deterministic stand-in is named as one.
    expect(() => configOf({ world: "tooldag" }, "envprobe-judge")).toThrow(/model critic .*envprobe-judge-standin, the deterministic stand-in/);
    expect(envprobeWorld.conditions["envprobe-judge-standin"]!.description).toMatch(/^DETERMINISTIC STAND-IN/);
  });

  it("confidence follows the stated model: calibrated about drift by default, the legacy constants as an option", () => {
    // conf = base · (1 − driftScale·μ̄)^ŝ − decay·ŝ: with μ̄ = 0.1, 3 steps unchecked → 0.9³ = 0.729.
    expect(reportedConfidence(SOURCE.observed, 3, defaultCalibration, 0.1)).toBe(0.73);
    expect(reportedConfidence(SOURCE.observed, 7, defaultCalibration, 0.1)).toBe(0.48);
    expect(reportedConfidence(SOURCE.unknown, 0, defaultCalibration, 0.1)).toBe(0);
    // Overconfident: it believes the world drifts at half the rate.
    expect(reportedConfidence(SOURCE.observed, 7, { ...defaultCalibration, driftScale: 0.5 }, 0.1)).toBe(0.7);
    // Legacy: 0.95 − 0.01·ŝ, whatever the regime's drift.
    expect(reportedConfidence(SOURCE.observed, 3, LEGACY_CALIBRATION, 0.3)).toBe(0.92);
  });

  it("p_cw both ways on a hand-computed case: Pr(wrong | conf ≥ α) and Proposition 5.5's Pr(conf ≥ α | wrong)", () => {
    const acc = new EpisodeAccumulator();
    acc.add("episode.started", { seed: 1, condition: "self-uncertainty", config: { world: "graphnav", regime: "medium" }, ticks: 2 });
    // Step 1: 10 fields, 4 wrong; 6 reported ≥ α, 3 of them wrong.  Step 2: 2 wrong; 5 confident, 1 of them wrong.
    acc.add("envprobe.stepped", { t: 1, kind: "act", valid: true, useful: false, success: false });
    acc.add("envprobe.scored", { t: 1, w: [1, 3], n: [2, 8], hc: 6, cw: 3 });
    acc.add("envprobe.stepped", { t: 2, kind: "act", valid: true, useful: false, success: false });
    acc.add("envprobe.scored", { t: 2, w: [0, 2], n: [2, 8], hc: 5, cw: 1 });
    const m = acc.result();
    expect(m).toMatchObject({ highConfidence: 11, confidentWrong: 4, wrongBeliefs: 6 });
    const cell = cellOf([m]);
    expect(cell.pcw.p).toBeCloseTo(4 / 11); // Pr(wrong | conf ≥ α)
    expect(cell.pcw.pGivenWrong).toBeCloseTo(4 / 6); // Pr(conf ≥ α | wrong) = |C_t| / |E_t|
    expect(cell.pcw.ciGivenWrong![0]).toBeLessThan(4 / 6);
    expect(cell.pcw.ciGivenWrong![1]).toBeGreaterThan(4 / 6);
    // More confident-wrong beliefs than wrong ones is no log the referee writes: refused.
    const bad = new EpisodeAccumulator();
    bad.add("episode.started", { seed: 1, condition: "no-probe", config: { world: "graphnav", regime: "medium" }, ticks: 1 });
    expect(() => bad.add("envprobe.scored", { t: 1, w: [0, 1], n: [2, 8], hc: 5, cw: 2 })).toThrow(/2 confident-wrong beliefs do not fit 5 confident and 1 wrong/);
  });

  it("the Oracle probes a known mismatched field, also one the plan does not depend on; option oracleNeedsDependency restricts it", () => {
    const table = { values: ["a", "b", "c"], verified: [0, 0, 0], source: [1, 1, 1], stale: [0, 0, 0], conf: [1, 1, 1] };
    const x: Inputs = {
      policy: "oracle", t: 2, horizon: 30, budget: 7, used: 0, lastProbe: 0, lastAct: 1, table, c: [1, 1, 1], d: [0, 0, 1], rhoThreshold: 1.5,
      stalenessDivisor: 10, alpha: 0.5, wrong: [0, 2], weights: [0.5, 0.5, 0.8], draws: null, skipFresh: false, oracleNeedsDependency: false,
    };
    expect(decide(x)).toEqual({ field: 0, why: "mismatch" });
    expect(decide({ ...x, oracleNeedsDependency: true })?.field).toBe(2);
    expect(decide({ ...x, oracleNeedsDependency: true, wrong: [0] })).toBeNull();
    expect(decide({ ...x, wrong: [] })).toBeNull();
    // On a spatial world the paper's Oracle corrects more than No-Probe over whole episodes.
    let oracle = 0;
    let none = 0;
    for (let seed = 0; seed < 20; seed++) {
      oracle += runDirect({ config: { world: "graphnav", regime: "medium" }, policy: "oracle", seed }).metrics.accuracy;
      none += runDirect({ config: { world: "graphnav", regime: "medium" }, policy: "no-probe", seed }).metrics.accuracy;
    }
    expect(oracle).toBeGreaterThan(none);
  });

  it("fields verified since the last action are candidates (Algorithm 1); option skipFresh skips them", () => {
    const table = { values: ["a", "b"], verified: [2, 0], source: [2, 1], stale: [0, 2], conf: [1, 0.81] };
    const x: Inputs = {
      policy: "envprobe-simple", t: 3, horizon: 30, budget: 7, used: 1, lastProbe: 2, lastAct: 1, table, c: [1, 0.5], d: [1, 0], rhoThreshold: 1.5,
      stalenessDivisor: 10, alpha: 0.5, wrong: null, weights: [1, 0.5], draws: null, skipFresh: false, oracleNeedsDependency: false,
    };
    expect(decide(x)?.field).toBe(0); // ρ₀ = 1 + 0 + 0 + 1 = 2 ≥ 1.5
    expect(decide({ ...x, skipFresh: true })).toBeNull(); // ρ₁ = 0.5 + 0.2 + 0.19 + 0 < 1.5
  });
});
