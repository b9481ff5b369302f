import { describe, it, expect } from "vitest";
import { evaluatePrivateState, initialPrivateState, samePrivateState } from "../actors/auratown/privateState.ts";
import type { RuleInput } from "../actors/auratown/privateState.ts";
import { refreshBeliefs, recomputeBeliefsDigest, emptyBeliefsDigest } from "../actors/auratown/beliefs.ts";
import type { Belief, Observed } from "../actors/auratown/beliefs.ts";
import { RuleId } from "../actors/auratown/events.ts";
import type { RuleIdType } from "../actors/auratown/events.ts";

const CAFE = "Sunrise Cafe";

/** Lin Wei at her cafe by default, alone, mid-morning, quiet feed. */
function linWei(overrides: Partial<RuleInput>): RuleInput {
  return {
    action: "idle",
    location: CAFE,
    nearbyCount: 0,
    hour: 10,
    minute: 0,
    recentEvents: [],
    previousEmotion: "neutral",
    workplaces: [CAFE],
    openHours: [7, 17],
    ...overrides,
  };
}

/** Someone away from any workplace (on the town square), so the workplace rules cannot fire. */
function away(overrides: Partial<RuleInput>): RuleInput {
  return linWei({ location: "Town Square", ...overrides });
}

const LOADED_GOAL_90 = "wants to close out the current rush before the next break in 90 min";

describe("private-state rule table (the 14 cases)", () => {
  it("1: sleep beats every other rule", () => {
    // Every other rule's trigger is present at once: at work, 3 peers, busy + focus + relaxed words,
    // a stress event in the feed, inside opening hours, previous emotion tired-focused.
    const s = evaluatePrivateState(
      linWei({
        action: "sleeping after serving the rush and writing",
        nearbyCount: 3,
        recentEvents: ["An argument broke out at the square"],
        previousEmotion: "tired-focused",
      }),
    );
    expect(s).toEqual({ availability: "do_not_disturb", emotional_state: "resting", unspoken_goal: null, rule: "sleep" });
    // Plain "sleeping" at the workplace with 3 peers.
    expect(evaluatePrivateState(linWei({ action: "sleeping", nearbyCount: 3 })).rule).toBe("sleep");
    // An empty workplace inside opening hours would otherwise be lonely.
    expect(evaluatePrivateState(linWei({ action: "Sleep", nearbyCount: 0 })).rule).toBe("sleep");
  });

  it("2: loaded workplace → busy / tired-focused with the minutes to the next break", () => {
    const s = evaluatePrivateState(
      linWei({ action: "serving customers", nearbyCount: 3, hour: 10, minute: 30 }),
    );
    expect(s).toEqual({ availability: "busy", emotional_state: "tired-focused", unspoken_goal: LOADED_GOAL_90, rule: "workplace_loaded" });
    // 13:00 → next break is 18:00, 300 minutes away; at 12:00 exactly the break is "now".
    expect(evaluatePrivateState(linWei({ action: "serving customers", nearbyCount: 4, hour: 13, minute: 0 })).unspoken_goal).toBe(
      "wants to close out the current rush before the next break in 300 min",
    );
    expect(evaluatePrivateState(linWei({ action: "serving customers", nearbyCount: 3, hour: 12, minute: 0 })).unspoken_goal).toBe(
      "wants to close out the current rush before the next break in 0 min",
    );
  });

  it("3: the loaded-workplace goal after 18:00 is to clear the queue", () => {
    const s = evaluatePrivateState(linWei({ action: "serving customers", nearbyCount: 3, hour: 18, minute: 30 }));
    expect(s.rule).toBe("workplace_loaded");
    expect(s.availability).toBe("busy");
    expect(s.unspoken_goal).toBe("wants to clear the queue");
    expect(evaluatePrivateState(linWei({ action: "close up the cafe", nearbyCount: 5, hour: 21, minute: 0 })).unspoken_goal).toBe(
      "wants to clear the queue",
    );
  });

  it("4: loaded needs a busy keyword (chatting with 3 peers at the cafe is not loaded)", () => {
    const s = evaluatePrivateState(linWei({ action: "chatting", nearbyCount: 3, hour: 10, minute: 30 }));
    expect(s.rule).not.toBe("workplace_loaded");
    expect(s.availability).toBe("available");
    expect(s.rule).toBe("default");
  });

  it("5: loaded needs at least 3 peers (2 peers is not loaded)", () => {
    const two = evaluatePrivateState(linWei({ action: "serving customers", nearbyCount: 2, hour: 10, minute: 30 }));
    expect(two.rule).not.toBe("workplace_loaded");
    expect(two.rule).toBe("default");
    const three = evaluatePrivateState(linWei({ action: "serving customers", nearbyCount: 3, hour: 10, minute: 30 }));
    expect(three.rule).toBe("workplace_loaded");
    // And the peers must be at the workplace: 3 peers while serving elsewhere is not loaded.
    expect(evaluatePrivateState(away({ action: "serving customers", nearbyCount: 3 })).rule).toBe("default");
  });

  it("6: deep focus 'writing' → writing-milestone goal, do-not-disturb, creatively flowing", () => {
    const s = evaluatePrivateState(away({ action: "writing the next chapter" }));
    expect(s).toEqual({
      availability: "do_not_disturb",
      emotional_state: "creatively flowing",
      unspoken_goal: "wants to finish a writing milestone before sunset",
      rule: "deep_focus",
    });
    expect(evaluatePrivateState(away({ action: "draft revisions at the library" })).unspoken_goal).toBe(
      "wants to finish a writing milestone before sunset",
    );
  });

  it("7: 'studying' → syllabus goal, 'research' → reference goal, 'meditate' → quiet goal", () => {
    const study = evaluatePrivateState(away({ action: "studying for the exam" }));
    expect(study.rule).toBe("deep_focus");
    expect(study.unspoken_goal).toBe("trying to make progress on the current syllabus before the next class");
    const research = evaluatePrivateState(away({ action: "research local history" }));
    expect(research.rule).toBe("deep_focus");
    expect(research.unspoken_goal).toBe("tracking down a specific reference");
    const meditate = evaluatePrivateState(away({ action: "meditate at the temple" }));
    expect(meditate.rule).toBe("deep_focus");
    expect(meditate.availability).toBe("do_not_disturb");
    expect(meditate.unspoken_goal).toBe("wants undisturbed quiet to settle the mind");
  });

  it("8: empty workplace inside opening hours → available / lonely / hoping a regular drops by", () => {
    const s = evaluatePrivateState(linWei({ action: "wipe the counters", nearbyCount: 0, hour: 7, minute: 0 }));
    expect(s).toEqual({
      availability: "available",
      emotional_state: "lonely",
      unspoken_goal: "hoping a regular drops by for conversation",
      rule: "workplace_empty",
    });
    // The last open hour [16:00, 17:00) still counts.
    expect(evaluatePrivateState(linWei({ action: "wipe the counters", hour: 16, minute: 30 })).rule).toBe("workplace_empty");
    // One peer present: not empty.
    expect(evaluatePrivateState(linWei({ action: "wipe the counters", nearbyCount: 1 })).rule).toBe("default");
  });

  it("9: empty workplace outside opening hours falls through to the default", () => {
    // Opening hours [7, 17): 17:00 is already closed and 06:30 not yet open.
    for (const [hour, minute] of [[17, 0], [6, 30], [20, 0]] as const) {
      const s = evaluatePrivateState(linWei({ action: "wipe the counters", nearbyCount: 0, hour, minute }));
      expect(s).toEqual({ availability: "available", emotional_state: "neutral", unspoken_goal: null, rule: "default" });
    }
  });

  it("10: relaxed after tired-focused → recovering (also after stressed)", () => {
    const afterTired = evaluatePrivateState(away({ action: "take a walk in the park", previousEmotion: "tired-focused" }));
    expect(afterTired).toEqual({ availability: "available", emotional_state: "recovering", unspoken_goal: null, rule: "relaxed" });
    const afterStress = evaluatePrivateState(away({ action: "eat dinner at home", previousEmotion: "stressed" }));
    expect(afterStress.rule).toBe("relaxed");
    expect(afterStress.emotional_state).toBe("recovering");
  });

  it("11: relaxed after lonely stays lonely, otherwise calm", () => {
    expect(evaluatePrivateState(away({ action: "read a novel", previousEmotion: "lonely" })).emotional_state).toBe("lonely");
    for (const prev of ["neutral", "calm", "creatively flowing", "resting", "recovering"]) {
      const s = evaluatePrivateState(away({ action: "read a novel", previousEmotion: prev }));
      expect(s.rule).toBe("relaxed");
      expect(s.emotional_state).toBe("calm");
    }
  });

  it("12: a stress keyword in the last 8 events → stressed; only in the 9th-oldest it is ignored", () => {
    const quiet = (n: number): string[] => Array.from({ length: n }, (_, i) => `A quiet moment number ${i} at the park`);
    // Stress keyword somewhere in the last 8 (here the oldest of exactly 8, and the newest of 9).
    const eight = ["The oven failed at the bakery", ...quiet(7)];
    expect(eight).toHaveLength(8);
    expect(evaluatePrivateState(away({ action: "chatting", recentEvents: eight }))).toEqual({
      availability: "available",
      emotional_state: "stressed",
      unspoken_goal: null,
      rule: "recent_stress",
    });
    expect(evaluatePrivateState(away({ action: "chatting", recentEvents: [...quiet(8), "Someone is WORRIED about the storm"] })).rule).toBe(
      "recent_stress",
    );
    // Array of 9 with the only stress event first (the 9th-oldest): ignored.
    const nine = ["An argument broke out at the square", ...quiet(8)];
    expect(nine).toHaveLength(9);
    expect(evaluatePrivateState(away({ action: "chatting", recentEvents: nine })).rule).toBe("default");
    // Keywords are whole words: "brokers" and "emergencyroom" are not stress.
    expect(evaluatePrivateState(away({ action: "chatting", recentEvents: ["brokers meet", "the emergencyroom sign"] })).rule).toBe(
      "default",
    );
  });

  it("13: beliefs refresh only on co-location and persist (stale) after separation", () => {
    const beliefs: Record<string, Belief> = {};
    let digest = emptyBeliefsDigest;
    // Tick 1: A and B are both at the Sunrise Cafe.
    const bAtCafe: Observed = { agent: "agent/b", availability: "busy", emotional_state: "tired-focused" };
    digest = refreshBeliefs(beliefs, digest, "agent/a", CAFE, [{ agent: "agent/a", availability: "available", emotional_state: "calm" }, bAtCafe], 1);
    expect(beliefs["agent/b"]).toEqual({ location: CAFE, availability: "busy", emotional_state: "tired-focused", since: 1 });
    const digestAfterTick1 = digest;

    // Tick 2: B has moved to the park and its truth changed; A is at the Town Library with C only.
    const bTruthNow: Observed = { agent: "agent/b", availability: "available", emotional_state: "recovering" };
    expect(bTruthNow).not.toEqual(bAtCafe);
    digest = refreshBeliefs(
      beliefs,
      digest,
      "agent/a",
      "Town Library",
      [
        { agent: "agent/a", availability: "available", emotional_state: "calm" },
        { agent: "agent/c", availability: "do_not_disturb", emotional_state: "creatively flowing" },
      ],
      2,
    );
    // A's belief about B is stale: still the cafe, still busy, still since tick 1.
    expect(beliefs["agent/b"]).toEqual({ location: CAFE, availability: "busy", emotional_state: "tired-focused", since: 1 });
    // C was co-located and is now believed.
    expect(beliefs["agent/c"]).toEqual({ location: "Town Library", availability: "do_not_disturb", emotional_state: "creatively flowing", since: 2 });
    expect(digest).not.toBe(digestAfterTick1);
    expect(digest).toBe(recomputeBeliefsDigest(beliefs));

    // Tick 3: A alone at home: nothing changes at all.
    const before = structuredClone(beliefs);
    const digest3 = refreshBeliefs(beliefs, digest, "agent/a", "Lin Wei's Home", [{ agent: "agent/a", availability: "available", emotional_state: "calm" }], 3);
    expect(beliefs).toEqual(before);
    expect(digest3).toBe(digest);
  });

  it("14: no belief without co-location; the refresh uses this tick's values; `since` moves only on change", () => {
    const beliefs: Record<string, Belief> = {};
    let digest = emptyBeliefsDigest;
    // A never holds a belief about itself, nor about D who is never co-located.
    digest = refreshBeliefs(beliefs, digest, "agent/a", CAFE, [{ agent: "agent/a", availability: "available", emotional_state: "calm" }], 1);
    expect(Object.keys(beliefs)).toEqual([]);
    expect(digest).toBe(emptyBeliefsDigest);

    // Tick 2: B's post-update values of this tick are what A believes.
    digest = refreshBeliefs(beliefs, digest, "agent/a", CAFE, [{ agent: "agent/b", availability: "available", emotional_state: "lonely" }], 2);
    expect(beliefs["agent/b"]).toEqual({ location: CAFE, availability: "available", emotional_state: "lonely", since: 2 });
    // Tick 3: B re-observed with identical values → `since` stays 2 and the digest is unchanged.
    const digest2 = digest;
    digest = refreshBeliefs(beliefs, digest, "agent/a", CAFE, [{ agent: "agent/b", availability: "available", emotional_state: "lonely" }], 3);
    expect(beliefs["agent/b"]?.since).toBe(2);
    expect(digest).toBe(digest2);
    // Tick 4: B's new values (e.g. after it turned busy this tick) replace the old ones, since = 4.
    digest = refreshBeliefs(beliefs, digest, "agent/a", CAFE, [{ agent: "agent/b", availability: "busy", emotional_state: "tired-focused" }], 4);
    expect(beliefs["agent/b"]).toEqual({ location: CAFE, availability: "busy", emotional_state: "tired-focused", since: 4 });
    // Tick 5: same values but a different place → content changed, since = 5.
    digest = refreshBeliefs(beliefs, digest, "agent/a", "Town Square", [{ agent: "agent/b", availability: "busy", emotional_state: "tired-focused" }], 5);
    expect(beliefs["agent/b"]).toEqual({ location: "Town Square", availability: "busy", emotional_state: "tired-focused", since: 5 });
    expect(Object.keys(beliefs)).toEqual(["agent/b"]);
    expect(beliefs["agent/d"]).toBeUndefined();
    expect(digest).toBe(recomputeBeliefsDigest(beliefs));
  });
});

describe("word-form fixes (departures from the reference release)", () => {
  it("'restock the shelves' alone at work outside opening hours is not relaxed", () => {
    const chenMei = (hour: number, nearbyCount: number): RuleInput =>
      linWei({ action: "restock the shelves", location: "Chen's General Store", workplaces: ["Chen's General Store"], openHours: [8, 18], hour, nearbyCount });
    const closed = evaluatePrivateState(chenMei(19, 0));
    expect(closed.rule).not.toBe("relaxed");
    expect(closed.rule).toBe("default");
    // Inside opening hours alone it is the empty-workplace rule, with 3 peers it is loaded.
    expect(evaluatePrivateState(chenMei(9, 0)).rule).toBe("workplace_empty");
    expect(evaluatePrivateState(chenMei(9, 3)).rule).toBe("workplace_loaded");
  });

  it("'get ready' is not relaxed, while 'read' and 'reading' are", () => {
    expect(evaluatePrivateState(away({ action: "wake up and get ready for the day" })).rule).toBe("default");
    expect(evaluatePrivateState(away({ action: "ready the tables" })).rule).toBe("default");
    expect(evaluatePrivateState(away({ action: "read philosophy" })).rule).toBe("relaxed");
    expect(evaluatePrivateState(away({ action: "evening reading at home" })).rule).toBe("relaxed");
    expect(evaluatePrivateState(away({ action: "rest on a bench" })).rule).toBe("relaxed");
  });

  it("'afternoon cafe service' with 3 peers at work is loaded; 'serves' too", () => {
    const s = evaluatePrivateState(linWei({ action: "afternoon cafe service", nearbyCount: 3, hour: 14, minute: 0 }));
    expect(s.rule).toBe("workplace_loaded");
    expect(s.unspoken_goal).toBe("wants to close out the current rush before the next break in 240 min");
    expect(evaluatePrivateState(linWei({ action: "Lin Wei serves tea", nearbyCount: 3 })).rule).toBe("workplace_loaded");
    expect(evaluatePrivateState(linWei({ action: "bake pastries for the afternoon", nearbyCount: 3 })).rule).toBe("workplace_loaded");
  });

  it("'studies' is deep focus", () => {
    const s = evaluatePrivateState(away({ action: "she studies environmental science" }));
    expect(s.rule).toBe("deep_focus");
    expect(s.unspoken_goal).toBe("trying to make progress on the current syllabus before the next class");
  });
});

describe("multiple workplaces (Zhang Hao: home and Town Library)", () => {
  const zhangHao = (overrides: Partial<RuleInput>): RuleInput =>
    linWei({ workplaces: ["Zhang Hao's Home", "Town Library"], openHours: [8, 18], hour: 10, ...overrides });

  it("either workplace counts for the empty-workplace rule; other places do not", () => {
    expect(evaluatePrivateState(zhangHao({ action: "tidy the desk", location: "Town Library" })).rule).toBe("workplace_empty");
    expect(evaluatePrivateState(zhangHao({ action: "tidy the desk", location: "Zhang Hao's Home" })).rule).toBe("workplace_empty");
    expect(evaluatePrivateState(zhangHao({ action: "tidy the desk", location: CAFE })).rule).toBe("default");
    expect(evaluatePrivateState(zhangHao({ action: "tidy the desk", location: null })).rule).toBe("default");
    // The old single "Library" name matches neither real location.
    expect(evaluatePrivateState(zhangHao({ action: "tidy the desk", location: "Town Library", workplaces: ["Library"] })).rule).toBe("default");
  });

  it("either workplace counts for the loaded rule, and deep focus beats an empty workplace", () => {
    expect(evaluatePrivateState(zhangHao({ action: "research and restock the archive", location: "Town Library", nearbyCount: 3 })).rule).toBe(
      "workplace_loaded",
    );
    expect(evaluatePrivateState(zhangHao({ action: "write the next chapter at the library", location: "Town Library" })).rule).toBe("deep_focus");
    // Reading at home after hours is relaxed, not lonely.
    expect(evaluatePrivateState(zhangHao({ action: "read before bed", location: "Zhang Hao's Home", hour: 21 })).rule).toBe("relaxed");
  });
});

describe("rule coverage and helpers", () => {
  it("every one of the 7 rule ids is reachable", () => {
    const fired = new Map<RuleIdType, RuleInput>([
      ["sleep", away({ action: "sleep" })],
      ["workplace_loaded", linWei({ action: "serve the midday rush", nearbyCount: 3 })],
      ["deep_focus", away({ action: "study at the library" })],
      ["workplace_empty", linWei({ action: "open the Sunrise Cafe", nearbyCount: 0 })],
      ["relaxed", away({ action: "practice tai chi in the park" })],
      ["recent_stress", away({ action: "hang out", recentEvents: ["A water main broke near the store"] })],
      ["default", away({ action: "hang out" })],
    ]);
    const seen = new Set<RuleIdType>();
    for (const [expected, input] of fired) {
      const s = evaluatePrivateState(input);
      expect(s.rule).toBe(expected);
      seen.add(s.rule);
    }
    expect([...seen].sort()).toEqual([...RuleId.literals].sort());
    expect(seen.size).toBe(7);
  });

  it("samePrivateState compares all four fields", () => {
    expect(samePrivateState(initialPrivateState, evaluatePrivateState(away({ action: "hang out" })))).toBe(true);
    const lonely = evaluatePrivateState(linWei({ action: "open the cafe" }));
    expect(samePrivateState(initialPrivateState, lonely)).toBe(false);
    expect(samePrivateState(lonely, { ...lonely, unspoken_goal: null })).toBe(false);
    expect(samePrivateState(lonely, { ...lonely, rule: "default" })).toBe(false);
    expect(samePrivateState(lonely, { ...lonely })).toBe(true);
  });
});
