// `probetown ask <episode> --tick <n> --agent <name> "question"`: put a question to the AURA
// controller on a recorded AURATown episode's state after tick n, as one of its residents.
// The parent log is only read (its committed prefix: a running episode's unfinished tick and a
// torn last line are left out); its state after tick n is rebuilt by replay, turned into a scene
// (public layer, private states, beliefs, plans, memories, recent events, the map) and the
// question runs as a one-tick `aura-scene` episode written elsewhere (default runs/ask/…), whose
// scene summary names the parent episode, tick and state hash; `ask.json` beside it records the
// same. The fork's log verifies and replays like any other; the parent stays byte-identical.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LogRecord } from "../../events/record.ts";
import type { AnswerGivenPayload, IntentInferredPayload, ProbeAnsweredPayload, ProbeDeniedPayload, ProbeRequestedPayload } from "../../actors/aura/events.ts";
import { scanLog } from "../../infra/fileEventStore.ts";
import type { AgentContext } from "../../actors/auratown/agent.ts";
import type { EnvContext } from "../../actors/auratown/environment.ts";
import { slugOf } from "../../actors/aura/scene.ts";
import { auraSceneWorld, IMPLICIT_CONDITIONS, SCENE_CONDITIONS, type SceneConfig } from "../../actors/aura/world.ts";
import { runEpisode } from "../kernel/episodes.ts";
import { layoutOf, replayRecords, resolveEpisodeDir, UsageError } from "../kernel/replay.ts";
import { sceneOfTown } from "./benchmarks/privacy.ts";
import { makeLlmGateway, type Accounting, type EndpointProblem, type LlmConfig, type LlmWaiting } from "../llm/index.ts";
import { sceneModelsOf } from "./factualEval.ts";
import { InternalError } from "../../events/internalError.ts";

export interface AskOptions {
  /** The AURATown episode directory (finished or still running). */
  readonly episode: string;
  readonly tick: number;
  /** Resident name ("Lin Wei") or slug ("lin-wei"). */
  readonly agent: string;
  readonly question: string;
  /** Default aura-intent (the 5 agent-state probes); factual conditions use the 8 environment tools. */
  readonly condition?: string;
  readonly maxSteps?: number;
  /** Where the fork goes (default runs/ask/<episode>-t<tick>-<agent>-<condition>, suffixed if taken). */
  readonly out?: string;
  /** The controller's roles on a model through the gateway (services/llm/index.ts); absent or null: deterministic. */
  readonly llm?: LlmConfig | null;
  /** Told while the model calls wait with no answer (the gateway's `onWaiting`). */
  readonly onLlmWaiting?: (waiting: LlmWaiting) => void;
}

export interface AskProbe {
  readonly call: number;
  readonly tool: string;
  readonly target: string | null;
  readonly args: Readonly<Record<string, string>>;
  readonly to: string;
  readonly budgetBefore: number;
  readonly outcome: "answered" | "denied";
  readonly result: unknown;
  readonly disclosure: number;
  readonly reason: string | null;
}

export interface AskResult {
  readonly parent: { readonly dir: string; readonly episode: string; readonly tick: number; readonly stateHash: string; readonly seq: number; readonly committedTicks: number; /** records past the last committed tick (a running or interrupted episode) were left out */ readonly uncommittedTail: boolean };
  readonly asker: string;
  readonly question: string;
  readonly condition: string;
  readonly registry: "agent-state" | "environment";
  readonly fork: string;
  readonly intent: IntentInferredPayload | null;
  readonly probes: readonly AskProbe[];
  readonly budget: { readonly ceiling: number; readonly used: number; readonly disclosure: number };
  readonly answer: AnswerGivenPayload;
  /** What the question asked of the LLM gateway, when the controller ran on a model. */
  /** `endpointProblems`: why calls fell back for the configuration's sake (the CLI exits 5 on any). */
  readonly llm?: { readonly baseURL: string; readonly models: Readonly<Record<string, string | null>>; readonly usage: Accounting; readonly endpointProblems: readonly EndpointProblem[] };
}

/** The log's committed prefix: every record up to the last `tick.committed` (none of a tick in progress). */
export function committedPrefix(records: readonly LogRecord[]): LogRecord[] {
  let end = 0;
  for (let i = 0; i < records.length; i++) if (records[i]!.type === "tick.committed") end = i + 1;
  return records.slice(0, end);
}

const freeDir = (base: string): string => {
  if (!existsSync(base)) return base;
  for (let k = 2; ; k++) if (!existsSync(`${base}-${k}`)) return `${base}-${k}`;
};

export async function askEpisode(o: AskOptions): Promise<AskResult> {
  const condition = o.condition ?? "aura-intent";
  if (SCENE_CONDITIONS[condition] === undefined) throw new UsageError(`--condition: unknown '${condition}' (known: ${Object.keys(SCENE_CONDITIONS).join(", ")})`);
  if (!Number.isSafeInteger(o.tick) || o.tick < 0) throw new UsageError(`--tick: expected an integer ≥ 0, got ${o.tick}`);
  if (o.question.trim() === "") throw new UsageError("the question is empty");
  const dir = resolveEpisodeDir(o.episode);
  const scan = scanLog(layoutOf(dir).log);
  const header = scan.records[0];
  if (header === undefined) throw new UsageError(`${o.episode}: the log is empty`);
  const world = (header.payload as { world?: string }).world;
  if (world !== "auratown") throw new UsageError(`${o.episode}: ask needs an AURATown episode (this one is '${world}')`);
  const prefix = committedPrefix(scan.records);
  const committed = prefix.filter((r) => r.type === "tick.committed");
  const at = committed.find((r) => r.tick === o.tick);
  if (at === undefined) {
    const ticks = committed.length === 0 ? "none yet" : `${committed[0]!.tick}–${committed.at(-1)!.tick}`;
    const forkedAt = header.type === "episode.forked" ? (header.payload as { atTick?: number }).atTick : undefined;
    const parent = forkedAt !== undefined && o.tick <= forkedAt ? `; it is a fork after its parent's tick ${forkedAt}: ask the parent about tick ${o.tick}` : "";
    throw new UsageError(`--tick ${o.tick}: not a committed tick of ${header.episode} (committed ticks: ${ticks}${parent})`);
  }
  const cut = prefix.slice(0, prefix.indexOf(at) + 1);
  let captured: { env: EnvContext; agents: AgentContext[] } | null = null;
  await replayRecords(dir, cut, {
    toTick: o.tick,
    onTick: (tick, host) => {
      if (tick !== o.tick) return;
      const copy = <T>(id: string) => JSON.parse(JSON.stringify(host.contextOf(id))) as T;
      captured = { env: copy<EnvContext>("env/auratown"), agents: host.ids.filter((id) => id.startsWith("agent/")).map((id) => copy<AgentContext>(id)) };
    },
  });
  if (captured === null) throw new InternalError(`${o.episode}: replay did not reach tick ${o.tick}`);
  const state = captured as { env: EnvContext; agents: AgentContext[] };
  const seed = (header.payload as { seed: number }).seed;
  const snap = sceneOfTown(seed, { ...state, tick: o.tick }, layoutOf(dir).log);
  const residents = snap.residents;
  const asker = residents.find((n) => n.toLowerCase() === o.agent.trim().toLowerCase() || slugOf(n) === slugOf(o.agent));
  if (asker === undefined) throw new UsageError(`--agent: no resident '${o.agent}' in ${header.episode} (residents: ${residents.join(", ")})`);
  const stateHash = (at.payload as { stateHash: string }).stateHash;
  const registry = (IMPLICIT_CONDITIONS as readonly string[]).includes(condition) ? "agent-state" : "environment";
  const scene = { ...snap.scene, name: `${header.episode}@t${o.tick}`, summary: `${snap.scene.summary} Forked from ${header.episode} after tick ${o.tick} (state ${stateHash.slice(0, 12)}); ${asker} is asking.` };
  const models = sceneModelsOf(o.llm);
  const base: SceneConfig = auraSceneWorld.resolveConfig({
    scene,
    queries: [{ id: "ask", text: o.question, asker }],
    order: ["ask"],
    labels: {},
    maxSteps: o.maxSteps ?? (registry === "environment" ? 5 : 3),
    registry,
    town: snap.town,
    policy: { allow: ["*"], deny: [] },
  });
  // The models are part of the fork's config (so its header), as for `run --llm`.
  const config: SceneConfig = models === null ? base : { ...base, llm: models };
  const gateway = models === null ? null : makeLlmGateway(o.llm!, o.onLlmWaiting === undefined ? {} : { onWaiting: o.onLlmWaiting });
  const fork = resolve(o.out ?? freeDir(join("runs", "ask", `${header.episode}-t${o.tick}-${slugOf(asker)}-${condition}`)));
  if (existsSync(layoutOf(fork).log)) throw new UsageError(`--out ${o.out}: already holds an episode; choose another directory`);
  mkdirSync(fork, { recursive: true });
  await runEpisode({ world: auraSceneWorld.name, seed, condition, config, dir: fork, trace: { exporter: "none" }, snapshotEvery: 0, fsync: "commit", ...(gateway === null ? {} : { llm: gateway.responder }) });
  const parent = { dir, episode: header.episode, tick: o.tick, stateHash, seq: at.seq, committedTicks: committed.length, uncommittedTail: scan.torn !== null || prefix.length < scan.records.length };
  writeFileSync(join(fork, "ask.json"), JSON.stringify({ parent, asker, question: o.question, condition }, null, 2) + "\n");
  return { ...readAsk(scanLog(layoutOf(fork).log).records), parent, asker, question: o.question, condition, registry, fork, ...(gateway === null ? {} : { llm: { baseURL: o.llm!.baseURL, models: { ...o.llm!.models }, usage: gateway.accounting(), endpointProblems: gateway.problems() } }) };
}

/** The controller's trace of one question, read back from the fork's log. */
export function readAsk(records: readonly LogRecord[]): Pick<AskResult, "intent" | "probes" | "budget" | "answer"> {
  const intent = (records.find((r) => r.type === "intent.inferred")?.payload as IntentInferredPayload | undefined) ?? null;
  const probes: AskProbe[] = records.filter((r) => r.type === "probe.requested").map((r) => {
    const p = r.payload as ProbeRequestedPayload;
    const reply = records.find((x) => (x.type === "probe.answered" || x.type === "probe.denied") && (x.payload as { call: number }).call === p.call);
    const answered = reply?.type === "probe.answered" ? (reply.payload as ProbeAnsweredPayload) : null;
    const denied = reply?.type === "probe.denied" ? (reply.payload as ProbeDeniedPayload) : null;
    const probe: AskProbe = { call: p.call, tool: p.tool, target: p.target, args: p.args, to: Array.isArray(r.to) ? r.to.join(",") : String(r.to ?? ""), budgetBefore: p.budgetBefore, outcome: answered !== null ? "answered" : "denied", result: answered?.result ?? null, disclosure: answered?.disclosure ?? 0, reason: denied?.reason ?? null };
    return probe;
  });
  const answer = records.find((r) => r.type === "answer.given")?.payload as AnswerGivenPayload | undefined;
  if (answer === undefined) throw new InternalError("the fork's log has no answer.given");
  const ceiling = intent?.maxSteps ?? Math.max(0, ...probes.map((p) => p.budgetBefore));
  return { intent, probes, budget: { ceiling, used: probes.length, disclosure: answer.disclosure }, answer };
}
