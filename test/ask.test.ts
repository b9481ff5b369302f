// `probetown ask`: a resident's question on a recorded AURATown episode's state after tick n.
// The fork sees the state after that tick (checked against a replay to it), its log verifies, the
// parent stays byte-identical, a running episode's committed prefix is read (an unfinished tick
// and a torn line are left out), and the CLI prints the frame, probes, budget and answer.
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentContext } from "../actors/auratown/agent.ts";
import type { SceneConfig } from "../actors/aura/world.ts";
import { askEpisode, committedPrefix } from "../services/aura/ask.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { replayEpisode, UsageError } from "../services/kernel/replay.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { firstSegment, logRecords, runCliAsSpawned, startCli, tempDir } from "./helpers.ts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fakeServer } from "./fakeLlmServer.ts";
import { renderAsk } from "../services/aura/commands/ask.ts";


function digest(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p, `${createHash("sha256").update(readFileSync(p)).digest("hex")}:${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out;
}

async function town(ticks = 12): Promise<string> {
  const dir = join(tempDir("ask-town"), "town");
  await runEpisode({ world: "auratown", seed: 7, ticks, dir, trace: "default", snapshotEvery: 4, fsync: "never" });
  return dir;
}

describe("probetown ask", () => {
  it("with an LLM: the controller's calls go to the endpoint, the printout counts tokens and cost, never the key", async () => {
    const dir = await town(6);
    const key = "sk-ask-test-KEY-0123456789";
    const server = await fakeServer((b) => ({ content: b.messages[0]!.content.includes("Gap rubric") ? JSON.stringify({ literal_need: "mood", implicit_need: ["approachable"], gap: 0.5, recommended_probes: ["get_agent_private_state"], confidence: 0.7, rationale: "r" }) : JSON.stringify({ answer: "Wang Jun seems fine." }) }));
    try {
      const r = await askEpisode({ episode: dir, tick: 5, agent: "Liu Yang", question: "Is Wang Jun in a good mood?", out: join(dir, "..", "ask-llm"), llm: { baseURL: server.url, apiKey: key, models: { intent: "m", planner: null, answer: "m" }, prices: { m: { input: 150, output: 600 } } } });
      expect(server.requests).toBe(2);
      expect(r.answer.backend).toBe("llm:m");
      const text = renderAsk(r);
      // 2 calls of 100 + 20 tokens at $150 / $600 per million: 2 × (0.015 + 0.012).
      expect(text).toContain(`llm: ${server.url} · 2 calls (0 failed) · 200 prompt + 40 completion tokens · $0.0540\n`);
      expect(text).not.toContain(key);
      expect((await verifyEpisode(r.fork)).ok).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("answers as a resident on the state after tick n; the fork verifies and the episode is untouched", async () => {
    const dir = await town();
    const before = digest(dir);
    const out = join(tempDir("ask-fork"), "fork");
    const r = await askEpisode({ episode: dir, tick: 6, agent: "lin-wei", question: "Is Zhang Hao free to chat right now?", out });
    expect(r.asker).toBe("Lin Wei");
    expect(r.parent).toMatchObject({ episode: "auratown-s7-baseline", tick: 6, committedTicks: 12, uncommittedTail: false });
    expect(r.intent).not.toBeNull();
    expect(r.intent!.frame.recommended_probes).toContain("get_agent_private_state");
    expect(r.probes.length).toBeGreaterThan(0);
    expect(r.probes.length).toBeLessThanOrEqual(r.budget.ceiling);
    expect(r.budget.used).toBe(r.probes.length);
    const probe = r.probes.find((p) => p.tool === "get_agent_private_state")!;
    expect(probe).toMatchObject({ outcome: "answered", target: "Zhang Hao", to: "agent/zhang-hao" });
    expect(r.answer.text).toContain("Zhang Hao");

    // The fork read the town as it was after tick 6 (not at the end of the log).
    const replay = await replayEpisode(dir, { toTick: 6 });
    const zhang = replay.host.contextOf("agent/zhang-hao") as AgentContext;
    expect((probe.result as { availability: string }).availability).toBe(zhang.private.availability);
    const header = logRecords(out)[0]!.payload as { config: SceneConfig };
    expect(header.config.scene.public_state["Zhang Hao"]).toEqual({ location: zhang.location ?? "on the road", action: zhang.action });
    expect(header.config.scene.summary).toContain(`after tick 6 (state ${r.parent.stateHash.slice(0, 12)})`);
    expect(r.parent.stateHash).toBe(replay.stateHash);

    expect((await verifyEpisode(out)).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "ask.json"), "utf8"))).toMatchObject({ asker: "Lin Wei", condition: "aura-intent", parent: { tick: 6 } });
    expect(digest(dir)).toEqual(before);

    // The environment registry: GapRouted with the asker as "me".
    const env = await askEpisode({ episode: dir, tick: 11, agent: "Chen Mei", question: "Where am I right now?", condition: "aura-gap-routed", out: join(tempDir("ask-env"), "f") });
    expect(env.registry).toBe("environment");
    expect(env.answer.facts.some((f) => f.agent === "Chen Mei" && f.field === "location")).toBe(true);
    expect(digest(dir)).toEqual(before);
  }, 60_000);

  it("reads a running episode's committed prefix: a tick in progress and a torn line are left out", async () => {
    const src = await town(10);
    const dir = join(tempDir("ask-running"), "town");
    cpSync(src, dir, { recursive: true });
    const seg = firstSegment(dir);
    const lines = readFileSync(seg, "utf8").split("\n").filter((l) => l.length > 0);
    const records = lines.map((l) => JSON.parse(l) as { type: string; tick: number; payload: { stateHash?: string } });
    const commit8 = records.findIndex((r) => r.type === "tick.committed" && r.tick === 8);
    // Keep tick 9 half-written and a torn record after it, as a writer mid-tick would leave it.
    const partial = lines.slice(0, commit8 + 1 + 5);
    writeFileSync(seg, partial.join("\n") + "\n");
    appendFileSync(seg, lines[commit8 + 6]!.slice(0, 40));
    expect(committedPrefix(partial.map((l) => JSON.parse(l))).length).toBe(commit8 + 1);

    const r = await askEpisode({ episode: dir, tick: 8, agent: "Wang Jun", question: "Is Liu Yang busy?", out: join(tempDir("ask-running-fork"), "f") });
    expect(r.parent).toMatchObject({ tick: 8, committedTicks: 9, uncommittedTail: true, stateHash: records[commit8]!.payload.stateHash });
    await expect(askEpisode({ episode: dir, tick: 9, agent: "Wang Jun", question: "Is Liu Yang busy?" })).rejects.toThrow(/--tick 9: not a committed tick .*0–8/);
    await expect(askEpisode({ episode: dir, tick: 8, agent: "Nobody", question: "?" })).rejects.toThrow(UsageError);
  }, 60_000);

  it("CLI: prints frame, probes, budget and answer; the fork goes under runs/ask/ by default; usage errors exit 2", async () => {
    const dir = await town(8);
    const cwd = tempDir("ask-cli");
    const run = await runCliAsSpawned(["ask", dir, "--tick", "5", "--agent", "Liu Yang", "Is Wang Jun in a good mood?"], cwd);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/IntentFrame \(deterministic\): gap [\d.]+ → B\(gap\) \d, budget \d/);
    expect(run.stdout).toMatch(/probe 1: get_agent_private_state\(agent_name=Wang Jun\) → agent\/wang-jun/);
    expect(run.stdout).toMatch(/budget: 1 probe of \d · disclosure 3/);
    expect(run.stdout).toMatch(/answer: .*Wang Jun/s);
    expect(existsSync(join(cwd, "runs/ask/auratown-s7-baseline-t5-liu-yang-aura-intent/log"))).toBe(true);
    const json = await runCliAsSpawned(["ask", dir, "--tick", "5", "--agent", "liu-yang", "Is Wang Jun in a good mood?", "--json"], cwd);
    expect(json.status, json.stderr).toBe(0);
    const parsed = JSON.parse(json.stdout) as { fork: string; probes: unknown[]; answer: { text: string } };
    expect(parsed.fork).toBe(join(cwd, "runs/ask/auratown-s7-baseline-t5-liu-yang-aura-intent-2"));
    expect(parsed.probes).toHaveLength(1);

    const who = await runCliAsSpawned(["ask", dir, "--tick", "5", "--agent", "Ghost", "hi"], cwd);
    expect(who.status).toBe(2);
    expect(who.stderr).toContain("--agent: no resident 'Ghost'");
    const notTown = await runCliAsSpawned(["ask", parsed.fork, "--tick", "0", "--agent", "Liu Yang", "hi"], cwd);
    expect(notTown.status).toBe(2);
    expect(notTown.stderr).toContain("ask needs an AURATown episode");
  }, 60_000);

  it("CLI: model calls that wait with no answer (an endpoint that accepts and never replies) are said on stderr while they wait, not with --quiet", async () => {
    const dir = await town(6);
    const hung = createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    const host = `127.0.0.1:${(hung.address() as AddressInfo).port}`;
    try {
      const cfg = join(tempDir("ask-wait"), "llm.json");
      writeFileSync(cfg, JSON.stringify({ timeoutMs: 2000, maxAttempts: 1, unreachableAfter: 1, waitNoticeMs: 200 }));
      const args = (out: string) => ["ask", dir, "--tick", "5", "--agent", "Liu Yang", "Is Wang Jun in a good mood?", "--out", join(tempDir("ask-wait"), out), "--llm", `http://${host}/v1`, "--llm-config", cfg];
      const [loud, quiet] = await Promise.all([startCli(args("loud")).done, startCli([...args("quiet"), "--quiet"]).done]);
      expect(loud.code, loud.err).toBe(5);
      expect(loud.err).toMatch(new RegExp(`^ask: waiting for gpt-4o-mini at ${host.replace(/\./g, "\\.")}: 1 call in flight, for \\d+ m?s, no answer from it yet \\(each call times out after 2 s; the endpoint is given up after 1 call in a row without an answer; set timeoutMs / maxAttempts in --llm-config to wait less\\)$`, "m"));
      expect(quiet.code, quiet.err).toBe(5);
      expect(quiet.err).not.toContain("waiting for");
      // What to fix is said either way.
      expect(quiet.err).toContain(`unreachable: no answer from ${host}`);
    } finally {
      hung.closeAllConnections();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  }, 60_000);
});
