// aura-scene's view in `probetown ui`: each query's IntentFrame, its probes (allowed or denied, by
// which policy rule, at what disclosure cost) and its answer, as the controller and the answering
// actors logged them (actors/aura/events.ts); when the episode was run by `eval implicit`, the
// judge's verdict from the results JSONL the eval wrote beside it. Nothing is recomputed here.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { LogRecord } from "../../../events/record.ts";
import type { AnswerGivenPayload, IntentInferredPayload, ProbeAnsweredPayload, ProbeDeniedPayload, ProbeRequestedPayload, UserQueryPayload } from "../../../actors/aura/events.ts";
import type { WorldUi } from "../../kernel/worldModule.ts";

export interface InspectedProbe {
  readonly call: number;
  readonly tool: string;
  readonly target: string | null;
  readonly field: string | null;
  readonly args: Readonly<Record<string, string>>;
  readonly budgetBefore: number;
  /** null: asked, not yet answered (a live episode, or one cut short). */
  readonly decision: "allowed" | "denied" | null;
  /** The denial's reason as the actor logged it; null when allowed (the policy is shown beside). */
  readonly deniedBy: string | null;
  readonly disclosure: number | null;
  readonly ok: boolean | null;
  readonly result: unknown;
  readonly budgetAfter: number | null;
}

/** The judge's row for a query (services/aura/eval.ts writes these to results-*.jsonl). */
export interface JudgeVerdict {
  readonly results: string;
  readonly literalCoverage: number | null;
  readonly implicitCoverage: number | null;
  readonly literalItems: readonly { item: string; score: number }[];
  readonly implicitItems: readonly { item: string; score: number }[];
  readonly disclosedBeyondNeed: number;
  readonly disclosedBeyondNeedAnswer: number;
  readonly disclosedBeyondNeedProbes: number;
  readonly extraPrivateFields: number;
  readonly goldToolRecall: number | null;
  readonly forbiddenViolations: number;
}

export interface InspectedQuery {
  readonly queryId: string;
  readonly text: string;
  readonly tick: number;
  readonly intent: Omit<IntentInferredPayload, "queryId"> | null;
  readonly probes: readonly InspectedProbe[];
  readonly answer: Omit<AnswerGivenPayload, "queryId"> | null;
  readonly verdict: JudgeVerdict | null;
}

export interface ProbeInspectorData {
  readonly scene: string | null;
  readonly condition: string | null;
  readonly policy: { readonly allow: readonly string[]; readonly deny: readonly string[] } | null;
  readonly queries: readonly InspectedQuery[];
}

/**
 * The eval's rows for the episode in `dir`: `eval implicit` puts each episode in a folder under
 * --out/<split>/ and its results-<conditions>.jsonl in that split folder, one row per query with
 * the episode's folder as `log`.
 */
function verdictsBeside(dir: string | null): Map<string, JudgeVerdict> {
  const out = new Map<string, JudgeVerdict>();
  if (dir === null) return out;
  const split = dirname(dir);
  if (!existsSync(split)) return out;
  for (const name of readdirSync(split).filter((n) => /^results-.*\.jsonl$/.test(n)).sort()) {
    for (const line of readFileSync(join(split, name), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const row = JSON.parse(line) as JudgeVerdict & { log?: string; queryId?: string };
      // Matched by the episode's folder name: the row's path is where the eval ran, which may have moved since.
      if (typeof row.log !== "string" || basename(row.log) !== basename(dir) || typeof row.queryId !== "string") continue;
      out.set(row.queryId, {
        results: name,
        literalCoverage: row.literalCoverage,
        implicitCoverage: row.implicitCoverage,
        literalItems: row.literalItems,
        implicitItems: row.implicitItems,
        disclosedBeyondNeed: row.disclosedBeyondNeed,
        disclosedBeyondNeedAnswer: row.disclosedBeyondNeedAnswer,
        disclosedBeyondNeedProbes: row.disclosedBeyondNeedProbes,
        extraPrivateFields: row.extraPrivateFields,
        goldToolRecall: row.goldToolRecall,
        forbiddenViolations: row.forbiddenViolations,
      });
    }
  }
  return out;
}

export function probeInspectorData(records: readonly LogRecord[], episode: { readonly dir: string | null }): ProbeInspectorData {
  const header = records[0]?.payload as { condition?: string; config?: { scene?: { name?: string }; policy?: { allow: string[]; deny: string[] } } } | undefined;
  const verdicts = verdictsBeside(episode.dir);
  const queries = new Map<string, { queryId: string; text: string; tick: number; intent: InspectedQuery["intent"]; probes: Map<number, InspectedProbe>; answer: InspectedQuery["answer"] }>();
  const probe = (queryId: string, call: number) => queries.get(queryId)?.probes.get(call);
  for (const r of records) {
    switch (r.type) {
      case "user.query": {
        const p = r.payload as UserQueryPayload;
        queries.set(p.queryId, { queryId: p.queryId, text: p.text, tick: r.tick, intent: null, probes: new Map(), answer: null });
        break;
      }
      case "intent.inferred": {
        const { queryId, ...intent } = r.payload as IntentInferredPayload;
        const q = queries.get(queryId);
        if (q !== undefined) q.intent = intent;
        break;
      }
      case "probe.requested": {
        const p = r.payload as ProbeRequestedPayload;
        queries.get(p.queryId)?.probes.set(p.call, { call: p.call, tool: p.tool, target: p.target, field: p.field, args: p.args, budgetBefore: p.budgetBefore, decision: null, deniedBy: null, disclosure: null, ok: null, result: null, budgetAfter: null });
        break;
      }
      case "probe.answered": {
        const p = r.payload as ProbeAnsweredPayload;
        const asked = probe(p.queryId, p.call);
        if (asked !== undefined) queries.get(p.queryId)!.probes.set(p.call, { ...asked, decision: "allowed", disclosure: p.disclosure, ok: p.ok, result: p.result, budgetAfter: p.budgetAfter });
        break;
      }
      case "probe.denied": {
        const p = r.payload as ProbeDeniedPayload;
        const asked = probe(p.queryId, p.call);
        if (asked !== undefined) queries.get(p.queryId)!.probes.set(p.call, { ...asked, decision: "denied", deniedBy: p.reason, disclosure: 0, budgetAfter: p.budgetAfter });
        break;
      }
      case "answer.given": {
        const { queryId, ...answer } = r.payload as AnswerGivenPayload;
        const q = queries.get(queryId);
        if (q !== undefined) q.answer = answer;
        break;
      }
    }
  }
  return {
    scene: header?.config?.scene?.name ?? null,
    condition: header?.condition ?? null,
    policy: header?.config?.policy ?? null,
    queries: [...queries.values()].map((q) => ({ ...q, probes: [...q.probes.values()].sort((a, b) => a.call - b.call), verdict: verdicts.get(q.queryId) ?? null })),
  };
}

export const probeInspectorUi: WorldUi = {
  label: "Probe inspector",
  data: probeInspectorData,
  script: new URL("./probeInspector.js", import.meta.url),
};
