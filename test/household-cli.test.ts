// The household commands (services/household/cli.ts) run in process: `tasks generate|verify|show`,
// `run household --task` and `eval enacttom`, with their real outputs, files and exit codes.
import { describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateTask } from "../actors/household/generator.ts";
import { logRecords, runCli, tempDir } from "./helpers.ts";

const POOL_TASK = "data/household/pool/gen-coop-d2-standard-s2301.json";
const poolTask = () => JSON.parse(readFileSync(POOL_TASK, "utf8")) as Record<string, unknown>;

describe("tasks generate", () => {
  it("writes verified tasks that regenerate byte for byte, and verify passes them", async () => {
    const dir = join(tempDir("hh-gen"), "tasks");
    const r = await runCli(["tasks", "generate", "--seed", "40", "--split", "hard", "--count", "4", "--out", dir]);
    expect(r.code, r.err).toBe(0);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(["gen-coop-d1-hard-s40.json", "gen-coop-d2-hard-s41.json", "gen-coop-d3-hard-s42.json", "gen-mixed-d1-hard-s43.json"]);
    expect(readFileSync(join(dir, "gen-coop-d3-hard-s42.json"), "utf8")).toBe(`${JSON.stringify(generateTask({ seed: 42, depth: 3, category: "cooperative", split: "hard" }), null, 2)}\n`);
    const v = await runCli(["tasks", "verify", dir, "--brief"]);
    expect(v.code, v.err).toBe(0);
    expect(v.out).toMatch(/^4\/4 task\(s\) pass; verifier median [\d.]+ ms/m);
    const one = join(tempDir("hh-gen1"), "t.json");
    expect((await runCli(["tasks", "generate", "--seed", "3", "--depth", "2", "--category", "mixed", "--out", one])).code).toBe(0);
    expect(JSON.parse(readFileSync(one, "utf8")).task_id).toBe("gen-mixed-d2-standard-s3");
    const bad = await runCli(["tasks", "generate", "--seed", "3", "--depth", "4"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--depth expects 1, 2 or 3, got '4'/);
  });
});

describe("tasks verify", () => {
  it("prints each check's verdict, reason and time", async () => {
    const r = await runCli(["tasks", "verify", "data/household/laundry-day.json"]);
    expect(r.code, r.err).toBe(0);
    for (const check of ["validation", "depth and inflated K", "physical search", "private objectives", "information and non-guessability", "epistemic search", "communication necessity", "agent necessity", "golden trajectory and turns"]) {
      expect(r.out).toMatch(new RegExp(`ok {3}${check} +[\\d.]+ ms  \\S`));
    }
    expect(r.out).toContain("K-depth 3");
    expect(r.out).toContain("agent_0: epistemic, agent_1: physical+epistemic, agent_2: epistemic");
  });

  it("exits 2 naming the file and field of a task that does not load", async () => {
    const dir = tempDir("hh-bad");
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...poolTask(), goal: "(is_on_top teapot_9 shelf_56)" }, /unknown\.json: goal: .*teapot_9/],
      [{ ...poolTask(), goal: "(K agent_0 (K agent_1 (K agent_0 (K agent_1 (is_open fridge_65)))))", tom_level: 4 }, /deep\.json: (goal|tom_level): .*depth/],
      [{ ...poolTask(), mechanic_bindings: [] }, /flat\.json: mechanic_bindings: .*asymmetry/],
    ];
    const names = ["unknown.json", "deep.json", "flat.json"];
    for (const [i, [task, message]] of cases.entries()) {
      const file = join(dir, names[i]!);
      writeFileSync(file, JSON.stringify(task));
      const r = await runCli(["tasks", "verify", file]);
      expect(r.code, r.out + r.err).toBe(2);
      expect(r.err).toMatch(message);
    }
    // In a directory the others are still verified; the exit is 2.
    const r = await runCli(["tasks", "verify", dir]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/0\/3 task\(s\) pass/);
  });

  it("exits 1 with the failing check's reason when a task fails verification", async () => {
    const dir = tempDir("hh-fail");
    writeFileSync(join(dir, "short.json"), JSON.stringify({ ...poolTask(), max_turns: 2 }));
    const golden = poolTask().golden_trajectory as Record<string, unknown>;
    writeFileSync(join(dir, "tampered.json"), JSON.stringify({ ...poolTask(), golden_trajectory: { ...golden, trajectory_hash: "0".repeat(64) } }));
    const r = await runCli(["tasks", "verify", dir, "--brief"]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/FAIL golden trajectory and turns +[\d.]+ ms {2}max_turns 2 is below T_min \d+/);
    expect(r.out).toMatch(/FAIL golden trajectory and turns .*differs from the file's/);
    const json = JSON.parse((await runCli(["tasks", "verify", join(dir, "short.json"), "--json"])).out);
    expect(json.passed).toBe(0);
    expect(json.verdicts[0].checks.find((c: { check: string }) => c.check === "physical search").ok).toBe(true);
  });
});

describe("tasks show", () => {
  it("renders rooms, furniture, objects, agents, secrets and goals", async () => {
    const r = await runCli(["tasks", "show", "gen-mixed-d3-hard-s2310"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("gen-mixed-d3-hard-s2310: Cup for the hallway (data/household/pool/gen-mixed-d3-hard-s2310.json)");
    expect(r.out).toContain("  hallway_1 (barred to agent_0, agent_2, agent_3)");
    expect(r.out).toContain("    fridge_40 (fridge, container) [closed]: cup_46 inside, plate_48 inside");
    expect(r.out).toContain("  agent_0: starts in bathroom_1; barred from hallway_1, storage_room_1; 1 message(s); may message agent_2");
    expect(r.out).toContain("  agent_3: starts in office_1; barred from hallway_1, storage_room_1; 2 message(s); may message agent_2, agent_1");
    // What agent_0 knows of its only contact: it cannot enter the target room either.
    expect(r.out).toContain("    - agent_2 cannot enter hallway_1.    (is_restricted agent_2 hallway_1)");
    expect(r.out).toContain("    - By the end: cup_46 is on table_43.    (goal (is_on_top cup_46 table_43))");
    expect(r.out).toContain("  k_probe_0: agent_0 knows that agent_2 knows that agent_3 knows (is_on_top cup_46 table_43) (depth 3)");
    // A private objective in tension with the shared goal (the cup, elsewhere).
    expect(r.out).toContain("  agent_1's private objective: (is_on_top cup_46 counter_39)");
    expect((await runCli(["tasks", "show", "tea-for-two"])).out).toMatch(/^tea-for-two: /);
    const missing = await runCli(["tasks", "show", "no-such-task"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/task 'no-such-task': not a task file, a pool id/);
  });
});

describe("run household --task", () => {
  it("runs a pool task by id, inline in the header; refuses two tasks and other worlds", async () => {
    const dir = join(tempDir("hh-run"), "ep");
    const r = await runCli(["run", "household", "--seed", "1", "--task", "gen-coop-d2-standard-s2301", "--log", dir]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("household: gen-coop-d2-standard-s2301 (cooperative, tom_level 2, standard mode): SUCCESS");
    const header = logRecords(dir)[0]!;
    expect((header.payload as { config: { task: unknown } }).config.task).toEqual(poolTask());
    const twice = await runCli(["run", "household", "--seed", "1", "--task", "tea-for-two", "--config", '{"task": "pantry-switch"}', "--log", join(dir, "x")]);
    expect(twice.code).toBe(2);
    expect(twice.err).toMatch(/--task tea-for-two: the --config names a task too/);
    const other = await runCli(["run", "envprobe", "--seed", "1", "--task", "tea-for-two", "--log", join(dir, "y")]);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/--task is for `run household` only/);
  });
});

describe("eval enacttom", () => {
  it("prints a Table-2-shaped summary from episodes whose logs are under --out", async () => {
    const out = join(tempDir("hh-eval"), "ev");
    const r = await runCli(["eval", "enacttom", "--split", "standard", "--agents", "competent,first-order,naive", "--runs", "2", "--per-cell", "1", "--out", out, "--json", "-q"]);
    expect(r.code, r.err).toBe(0);
    const s = JSON.parse(r.out);
    expect(s.episodes).toBe(6 * 3 * 2);
    const row = (policy: string, label: string) => s.rows.find((x: { policy: string; label: string }) => x.policy === policy && x.label === label);
    expect(row("competent", "all")).toMatchObject({ tasks: 6, avg: 1, passAt: [1, 1], passPower: [1, 1], percentComplete: 1 });
    expect(row("naive", "all")).toMatchObject({ tasks: 6, avg: 0, passPower: [0, 0], literal: { score: 0 } });
    // The first tasks of the depth-2 and depth-3 cells tell agent_0 that its only contact cannot
    // enter the target room: the first-order agent, which hands a goal only to a teammate it
    // believes can act, keeps it. At depth 1 the contact is the actor, and it succeeds.
    expect(row("first-order", "d1")).toMatchObject({ tasks: 2, avg: 1, literal: { score: 1 } });
    expect(row("first-order", "d2")).toMatchObject({ tasks: 2, avg: 0, passPower: [0, 0] });
    expect(row("first-order", "d3")).toMatchObject({ tasks: 2, avg: 0, literal: { score: 0, avg: 0 } });
    expect(row("first-order", "mixed d1")).toMatchObject({ tasks: 1, avg: 1 });
    expect(row("competent", "d3")).toMatchObject({ tasks: 2, avg: 1, literal: { score: 1, avg: 1, passPower: [1, 1] } });
    expect(row("competent", "cooperative d3")).toMatchObject({ tasks: 1, avg: 1 });
    expect(s.failures.naive).toMatchObject({ functionalFailed: 12, functional: { never_communicated: 12 } });
    expect(s.failures["first-order"]).toMatchObject({ functionalFailed: 8, functional: { never_communicated: 8 }, literalFailed: 8, literal: { partner_knowledge_unknown: 8 } });
    expect(s.failures.competent).toMatchObject({ functionalFailed: 0, literalFailed: 0 });
    expect(s.rows.filter((x: { policy: string }) => x.policy === "competent").map((x: { label: string }) => x.label)).toEqual(["all", "cooperative", "mixed", "d1", "d2", "d3", "cooperative d1", "cooperative d2", "cooperative d3", "mixed d1", "mixed d2", "mixed d3"]);
    expect(readdirSync(join(out, "naive")).length).toBe(6);
    expect(existsSync(join(out, "competent", "gen-mixed-d3-standard-s2300", "a1", "log"))).toBe(true);
    const again = await runCli(["eval", "enacttom", "--per-cell", "1", "--runs", "1", "--out", out, "-q"]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/already holds logs of competent, first-order, naive; .* --fresh/);
    const table = await runCli(["eval", "enacttom", "--agents", "naive", "--per-cell", "1", "--runs", "1", "--out", out, "--fresh", "-q"]);
    expect(table.code, table.err).toBe(0);
    expect(table.out).toContain("\nnaive  d3              2      0.0 ± 0.0  0.0     0.0     25.0        0.0      0.0 ± 0.0     0.0\n");
    expect(table.out).toContain("\nnaive  cooperative d3  1      0.0 ± 0.0  0.0     0.0     50.0        0.0      0.0 ± 0.0     0.0\n");
    const bad = await runCli(["eval", "enacttom", "--agents", "psychic"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--agents expects a comma-separated list of competent, first-order, naive, llm, got 'psychic'/);
  });
});
