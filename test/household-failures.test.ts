// The failure taxonomy (services/household/failures.ts), read off the records and the task's
// mechanics: on hand-built logs for each functional tag, and on real naive and first-order episodes.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import type { LogRecord } from "../events/record.ts";
import { functionalFailures, literalFailures } from "../services/household/failures.ts";
import { loadTaskFile } from "../services/household/taskFile.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { loadWorlds } from "../services/worlds.ts";
import { logRecords, tempDir } from "./helpers.ts";

// agent_0 (1 message, may message agent_2 only) is barred from hallway_1, where cup_46 goes on
// table_43, and knows that agent_2 is barred too.
// The pool task as it was before mixed tasks' private objectives were drawn in tension (an
// independent objective, mug_47 to shelf_35), kept as a fixture so these expectations stand.
const task = loadTaskFile("test/fixtures/household/gen-mixed-d3-hard-s2310.json");
// The same task with agent_0 not knowing agent_2's ban.
const unaware = { ...task, agent_secrets: { ...task.agent_secrets, agent_0: task.agent_secrets.agent_0!.filter((s) => s !== "(is_restricted agent_2 hallway_1)") } };
const rec = (type: string, payload: unknown): LogRecord => ({ type, payload }) as unknown as LogRecord;
const header = rec("episode.started", { config: { task } });
const ended = (latched: string[]) => rec("household.ended", { turn: 31, reason: "turn_limit", success: false, percentComplete: 0, finalSuccess: false, finalPercentComplete: 0, latched, owned: {}, messagesSent: 0 });
const message = (from: string, to: string[], text: string, status: "queued" | "blocked") => rec("household.message", { turn: 0, from, to, text, status, reason: "" });

describe("functional failure taxonomy", () => {
  it("tags a needed fact no message carried, a budget, a target and a barred room", () => {
    expect(functionalFailures([header, ended([])])).toEqual(["never_communicated", "turn_limit"]);
    const records = [
      header,
      message("agent_0", ["agent_2"], "(goal (is_on_top cup_46 table_43))", "queued"),
      message("agent_0", ["agent_2"], "again", "blocked"),
      message("agent_1", ["agent_0"], "hello", "blocked"),
      rec("household.resolved", { turn: 1, agent: "agent_0", action: "Navigate[table_43]", ok: false, reason: "", effects: [] }),
      ended(["(is_open drawer_50)"]),
    ];
    expect(functionalFailures(records).sort()).toEqual(["message_budget_exhausted", "restricted_room", "told_not_achieved", "turn_limit", "wrong_target"]);
    expect(functionalFailures([header, { ...ended([]), payload: { ...(ended([]).payload as object), success: true } } as LogRecord])).toEqual([]);
  });
});

describe("on episodes", () => {
  const run = async (condition: string, t = task) => {
    await loadWorlds();
    const dir = join(tempDir(`hh-fail-${condition}`), "ep");
    await runEpisode({ world: "household", seed: 0, condition, config: { task: t }, dir, trace: { exporter: "none" }, fsync: "never" });
    return logRecords(dir);
  };

  it("naive: the target never leaves agent_0; the root probe's partner answer is unknown", async () => {
    const records = await run("naive");
    expect(functionalFailures(records)).toContain("never_communicated");
    expect(literalFailures(records)).toEqual(["partner_knowledge_unknown"]);
  });

  it("first-order, agent_0 unaware of agent_2's ban: functional success, literal failure by an unknown partner answer", async () => {
    const records = await run("first-order", unaware);
    expect(functionalFailures(records)).toEqual([]);
    expect(literalFailures(records)).toEqual(["partner_knowledge_unknown"]);
  });

  it("first-order, agent_0 aware of it: the target is never passed to the relay", async () => {
    const records = await run("first-order");
    expect(functionalFailures(records)).toEqual(["never_communicated", "turn_limit"]);
    expect(literalFailures(records)).toEqual(["partner_knowledge_unknown"]);
  });
});
