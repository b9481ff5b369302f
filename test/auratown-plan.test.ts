import { describe, it, expect } from "vitest";
import { planDay } from "../actors/auratown/agent.ts";
import { defaultProfiles } from "../actors/auratown/config.ts";
import type { Profile } from "../actors/auratown/config.ts";
import { Draws, deriveStream } from "../actors/rng.ts";

const TICK = { tickMinutes: 30, startHour: 6, endHour: 23 };

function profile(id: string): Profile {
  const p = defaultProfiles.find((x) => x.id === id);
  if (p === undefined) throw new Error(`no profile ${id}`);
  return p;
}

const withoutAlternatives = (p: Profile): Profile => ({
  ...p,
  routine: p.routine.map((slot) => ({ at: slot.at, activity: slot.activity, location: slot.location })),
});

const withRoutine = (p: Profile, routine: Profile["routine"]): Profile => ({ ...p, routine });

describe("planDay", () => {
  it("with delayProbability 0 and no alternatives the plan is the routine", () => {
    for (const p of defaultProfiles.map(withoutAlternatives)) {
      for (const seed of [1, 2, 42]) {
        const plan = planDay(p, new Draws(deriveStream(seed, `agent/${p.id}/routine`)), 0, TICK);
        expect(plan).toEqual(p.routine.map((s) => ({ at: s.at, activity: s.activity, location: s.location })));
      }
    }
    // Spot check against the literal routine of Wang Jun.
    const wang = planDay(profile("wang-jun"), new Draws(deriveStream(5, "x")), 0, TICK);
    expect(wang[0]).toEqual({ at: "06:00", activity: "practice tai chi in the park", location: "Town Park" });
    expect(wang.at(-1)).toEqual({ at: "21:30", activity: "sleep", location: "Wang Jun's Home" });
  });

  it("with delayProbability 1 every slot starts one tick late", () => {
    const plan = planDay(withoutAlternatives(profile("lin-wei")), new Draws(deriveStream(3, "lin")), 1, TICK);
    expect(plan.map((p) => p.at)).toEqual(["06:30", "07:30", "08:30", "12:00", "14:30", "17:30", "18:30", "20:00", "21:30", "22:30"]);
    expect(plan.map((p) => p.activity)).toEqual(profile("lin-wei").routine.map((s) => s.activity));
  });

  it("with delayProbability 1 a slot stays put when the delay would reach the next slot's time", () => {
    const base = profile("liu-yang");
    const p = withRoutine(base, [
      { at: "08:00", activity: "wake up", location: "Liu Yang's Home" }, // 08:30 would reach the next slot
      { at: "08:30", activity: "study at the library", location: "Town Library" }, // 09:00 < 09:15
      { at: "09:15", activity: "take a break in the park", location: "Town Park" }, // 09:45 < 10:00
      { at: "10:00", activity: "lunch at the cafe", location: "Sunrise Cafe" }, // 10:30 would pass the next slot (10:20) → stays
      { at: "10:20", activity: "sleep", location: "Liu Yang's Home" }, // last slot: 10:50
    ]);
    const plan = planDay(p, new Draws(deriveStream(9, "custom")), 1, TICK);
    expect(plan.map((x) => x.at)).toEqual(["08:00", "09:00", "09:45", "10:00", "10:50"]);
    // With a 10-minute tick every slot fits its delay.
    const short = planDay(p, new Draws(deriveStream(9, "custom")), 1, { ...TICK, tickMinutes: 10 });
    expect(short.map((x) => x.at)).toEqual(["08:10", "08:40", "09:25", "10:10", "10:30"]);
  });

  it("never delays the last slot past the day's last tick (22:30 with 30-minute ticks)", () => {
    const zhang = planDay(withoutAlternatives(profile("zhang-hao")), new Draws(deriveStream(1, "z")), 1, TICK);
    expect(zhang.at(-1)).toEqual({ at: "22:30", activity: "sleep", location: "Zhang Hao's Home" });
    const late = withRoutine(profile("lin-wei"), [
      { at: "06:00", activity: "wake up", location: "Lin Wei's Home" },
      { at: "22:15", activity: "sleep", location: "Lin Wei's Home" },
    ]);
    expect(planDay(late, new Draws(deriveStream(1, "l")), 1, TICK).map((x) => x.at)).toEqual(["06:30", "22:15"]);
  });

  it("chooses alternatives only from the listed options, and both options occur", () => {
    for (const id of ["lin-wei", "zhang-hao", "chen-mei"]) {
      const p = profile(id);
      const seen = new Map<number, Set<string>>();
      for (let seed = 0; seed < 200; seed++) {
        const plan = planDay(p, new Draws(deriveStream(seed, `agent/${id}/routine`)), 0.25, TICK);
        expect(plan).toHaveLength(p.routine.length);
        p.routine.forEach((slot, i) => {
          const options = [{ activity: slot.activity, location: slot.location }, ...(slot.alternatives ?? [])];
          const chosen = { activity: plan[i]!.activity, location: plan[i]!.location };
          // The activity and its location come from the same option.
          expect(options).toContainEqual(chosen);
          const set = seen.get(i) ?? new Set<string>();
          set.add(`${chosen.activity}@${chosen.location}`);
          seen.set(i, set);
        });
      }
      p.routine.forEach((slot, i) => {
        expect(seen.get(i)!.size).toBe(1 + (slot.alternatives?.length ?? 0));
      });
    }
  });

  it("the same stream state gives the same plan and the same final state", () => {
    const p = profile("zhang-hao");
    const state = deriveStream(42, "agent/zhang-hao/routine");
    const d1 = new Draws(state);
    const d2 = new Draws(state);
    const plan1 = planDay(p, d1, 0.5, TICK);
    const plan2 = planDay(p, d2, 0.5, TICK);
    expect(plan2).toEqual(plan1);
    expect(d2.state).toEqual(d1.state);
    expect(d1.state).not.toEqual(state);
    // A different seed's stream gives a different day in at least one of a few tries.
    const others = [1, 2, 3, 4, 5].map((seed) => planDay(p, new Draws(deriveStream(seed, "agent/zhang-hao/routine")), 0.5, TICK));
    expect(others.some((o) => JSON.stringify(o) !== JSON.stringify(plan1))).toBe(true);
  });

  it("every slot consumes exactly two draws, whatever its alternatives", () => {
    for (const p of defaultProfiles) {
      const state = deriveStream(11, `agent/${p.id}/routine`);
      const withAlt = new Draws(state);
      const without = new Draws(state);
      planDay(p, withAlt, 0.25, TICK);
      planDay(withoutAlternatives(p), without, 0.25, TICK);
      expect(withAlt.state).toEqual(without.state);
      // And that is exactly two unit draws per slot.
      const manual = new Draws(state);
      for (let i = 0; i < 2 * p.routine.length; i++) manual.unit();
      expect(withAlt.state).toEqual(manual.state);
      // Neither delayProbability changes the count.
      const never = new Draws(state);
      const always = new Draws(state);
      planDay(p, never, 0, TICK);
      planDay(p, always, 1, TICK);
      expect(never.state).toEqual(manual.state);
      expect(always.state).toEqual(manual.state);
    }
  });
});
