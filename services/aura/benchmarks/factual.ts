// The RQ2 factual-grounding benchmark (paper §5.1, Tables 1/10/11; reference/aura.md §6.1, §7.1)
// with a deterministic rule judge in place of the paper's LLM judge.
//
// Ground truth is what §7.1 shows the judge, read from the cell's own log header (the scene the
// episode was configured with): the time, the asker's place and action, who is near the asker,
// every agent's {name, location, action}, the last 10 town events, the asker's 10 most recent
// memories and the asker's plan — plus the town's places and their types (the public map, which
// the release's scene summary also shows). No private state.
//
// Claims are the answer's structured facts (`answer.given.facts`), each checked against that truth:
// CORRECT, CONTRADICTED, or UNVERIFIABLE (the truth does not hold that kind of fact: private state,
// someone else's plan, an event older than the last 10). Completeness comes from the query's
// `requires` items: each item names a kind of fact (a clock, a place, the asker's company, a named
// person, everyone, events, memories, a plan) by the words of its tag; an item is answered when
// the answer states such a fact. Items whose fact the snapshot cannot hold at all (an occupation,
// a personality, distances) are "unsupported": any grounded answer meets them only partially.
//   precision    = correct / (correct + contradicted), 0.5 when nothing is verifiable
//   completeness = 1 (every item answered), 0.5 (some, or only partially), 0 (none: a deflection)
//   accuracy     = 0.7 · precision + 0.3 · completeness
//   StrictP      = precision without the 0.5 default (null when nothing is verifiable)
//   claim recall = correct / claims (null without claims); hallucination = ≥ 1 contradicted claim
import { Schema } from "effect";
import type { AnswerFactPayload, AnswerGivenPayload, ProbeAnsweredPayload, ProbeRequestedPayload } from "../../../actors/aura/events.ts";
import type { LogRecord } from "../../../events/record.ts";
import { mentionedLocation, mentionedNames, normalise, planOf, sceneTimeOf, type Scene } from "../../../actors/aura/scene.ts";
import type { SceneConfig } from "../../../actors/aura/world.ts";
import { UsageError } from "../../kernel/replay.ts";
import { readInputFile, checkParsedInput } from "../../kernel/inputFile.ts";
import { otherBenchmark } from "./implicit.ts";
import { InternalError } from "../../../events/internalError.ts";

/** A factual benchmark file that cannot be used; names the file and, per problem, the query and field. */
export class FactualBenchmarkInvalid extends UsageError {
  readonly file: string;
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`${file}: invalid factual benchmark:\n  - ${problems.slice(0, 20).join("\n  - ")}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ""}`);
    this.file = file;
    this.problems = problems;
  }
}

const FactualQuerySchema = Schema.Struct({
  id: Schema.Union([Schema.Int, Schema.String]),
  category: Schema.String,
  query: Schema.String,
  requires: Schema.Array(Schema.String),
});

export interface FactualQuery {
  readonly id: string;
  readonly category: string;
  readonly text: string;
  readonly requires: readonly string[];
}

export function loadFactualBenchmark(file: string): FactualQuery[] {
  let raw: { queries?: unknown };
  try {
    raw = JSON.parse(readInputFile(file, "dataset", `--file ${file}`)) as { queries?: unknown };
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--file ${file}: ${(e as NodeJS.ErrnoException).code === undefined ? `not valid JSON (${(e as Error).message})` : `cannot read (${(e as NodeJS.ErrnoException).code})`}`);
  }
  checkParsedInput(raw, `--file ${file}`);
  if (raw === null || typeof raw !== "object" || !Array.isArray(raw.queries)) throw new FactualBenchmarkInvalid(file, [otherBenchmark(raw, "factual") ?? "queries: expected an array of queries"]);
  const problems: string[] = [];
  const out: FactualQuery[] = [];
  const seen = new Set<string>();
  raw.queries.forEach((value, i) => {
    const label = `query ${String((value as { id?: unknown } | null)?.id ?? `#${i}`)}`;
    try {
      const q = Schema.decodeUnknownSync(FactualQuerySchema)(value);
      const id = String(q.id);
      if (seen.has(id)) problems.push(`${label}: id: duplicate id '${id}'`);
      seen.add(id);
      if (q.query.trim() === "") problems.push(`${label}: query: empty`);
      out.push({ id, category: q.category, text: q.query, requires: q.requires });
    } catch (e) {
      problems.push(`${label}: ${String((e as Error).message).replace(/\s*\n\s*/g, " ")}`);
    }
  });
  if (out.length === 0 && problems.length === 0) problems.push("queries: empty");
  if (problems.length > 0) throw new FactualBenchmarkInvalid(file, [otherBenchmark(raw, "factual") ?? problems].flat());
  return out;
}

// ---- Ground truth ---------------------------------------------------------------------------

export interface FactualTruth {
  readonly time: string | null;
  readonly asker: string;
  readonly askerLocation: string | null;
  readonly askerAction: string | null;
  /** Others at the asker's place. */
  readonly nearby: readonly string[];
  readonly agents: readonly { readonly name: string; readonly location: string; readonly action: string }[];
  readonly events: readonly string[];
  readonly memories: readonly string[];
  readonly plan: readonly string[];
  /** Every place of the town and its type. */
  readonly places: Readonly<Record<string, string>>;
}

/** The judge's ground truth for one query, from the scene config its episode ran with (§7.1). */
export function factualTruth(config: SceneConfig, queryId: string): FactualTruth {
  const q = config.queries.find((x) => x.id === queryId);
  if (q === undefined) throw new InternalError(`no query '${queryId}' in the episode's config`);
  const scene = config.scene as Scene;
  const asker = q.asker ?? "";
  const agents = Object.keys(scene.public_state).sort().map((name) => ({ name, ...scene.public_state[name]! }));
  const here = scene.public_state[asker]?.location ?? null;
  return {
    time: sceneTimeOf(scene),
    asker,
    askerLocation: here,
    askerAction: scene.public_state[asker]?.action ?? null,
    nearby: agents.filter((a) => a.name !== asker && a.location === here).map((a) => a.name),
    agents,
    events: (config.town?.events ?? []).slice(-10),
    memories: (config.town?.memories[asker] ?? []).slice(-10),
    plan: scene.plans?.[asker] !== undefined ? planOf(scene, asker) : [],
    places: config.town?.places ?? {},
  };
}

// ---- Claims ---------------------------------------------------------------------------------

export type Verdict = "correct" | "contradicted" | "unverifiable";

const peopleAt = (t: FactualTruth, place: string, except: string | null = null): string => {
  const names = t.agents.filter((a) => a.location.toLowerCase() === place.toLowerCase() && a.name !== except).map((a) => a.name).sort();
  return names.length === 0 ? "nobody" : names.join(", ");
};

const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** One claim (a structured fact of the answer) against the truth. */
export function verdictOf(f: AnswerFactPayload, t: FactualTruth): Verdict {
  switch (f.kind) {
    case "time":
      return t.time === null ? "unverifiable" : same(f.value, t.time) ? "correct" : "contradicted";
    case "public": {
      const row = t.agents.find((a) => f.agent !== null && same(a.name, f.agent));
      if (row === undefined) return "unverifiable";
      if (f.field === "location") return same(row.location, f.value) ? "correct" : "contradicted";
      if (f.field === "action") return same(row.action, f.value) ? "correct" : "contradicted";
      return "unverifiable";
    }
    case "plan":
      if (f.agent === null || !same(f.agent, t.asker) || t.plan.length === 0) return "unverifiable";
      return same(f.value, t.plan.join("; ")) ? "correct" : "contradicted";
    case "event":
      return t.events.some((e) => same(e, f.value)) ? "correct" : "unverifiable";
    case "memory":
      return f.agent !== null && same(f.agent, t.asker) && t.memories.some((m) => same(m, f.value)) ? "correct" : "unverifiable";
    case "place": {
      if (f.field === "others") {
        const row = t.agents.find((a) => f.agent !== null && same(a.name, f.agent));
        return row === undefined ? "unverifiable" : same(peopleAt(t, row.location, row.name), f.value) ? "correct" : "contradicted";
      }
      if (f.target === null) return "unverifiable";
      const known = Object.keys(t.places).find((p) => same(p, f.target!));
      if (f.field === "type") return known === undefined ? "contradicted" : same(t.places[known]!, f.value) ? "correct" : "contradicted";
      if (f.field === "people") return same(peopleAt(t, f.target), f.value) ? "correct" : "contradicted";
      return "unverifiable";
    }
    default:
      // Private state and beliefs are not in the factual ground truth (§7.1).
      return "unverifiable";
  }
}

// ---- Requirements ---------------------------------------------------------------------------

export type Need =
  | { readonly kind: "clock" }
  | { readonly kind: "self-place" }
  | { readonly kind: "place-type"; readonly place: string | null }
  | { readonly kind: "company" }
  | { readonly kind: "agent"; readonly name: string; readonly field: "location" | "action" | null }
  | { readonly kind: "everyone" }
  | { readonly kind: "place"; readonly place: string }
  | { readonly kind: "events"; readonly latest: boolean }
  | { readonly kind: "memories" }
  | { readonly kind: "plan" }
  | { readonly kind: "any"; readonly of: readonly Need[] }
  | { readonly kind: "unsupported"; readonly why: string; readonly unrecognised?: true };

/** A place the words name: by (a distinctive word of) its name, or by its type ("a park"). */
export function placeNamed(words: string, places: Readonly<Record<string, string>>): string | null {
  const names = Object.keys(places).sort();
  const byName = mentionedLocation(words, names);
  if (byName !== null) return byName;
  const t = normalise(words);
  const byType = names.filter((p) => places[p] !== "" && new RegExp(` ${places[p]}s? `).test(t));
  return byType[0] ?? null;
}

const PLACE_WORDS = new Set(["location", "locations", "place", "places", "position", "existence", "list", "spatial", "awareness", "distance", "description", "type", "kind", "nearby", "recommendations", "situational", "analysis"]);

/**
 * What a `requires` tag asks the answer to contain, read from the words of the tag (snake_case
 * vocabulary: subject words — agent, location, time, event, memory, plan … — and qualifiers —
 * specific, nearby, list, latest, type …); the query text resolves the person or place it names.
 */
export function needsOf(tag: string, query: string, t: FactualTruth): Need[] {
  const w = new Set(tag.toLowerCase().split(/[^a-z]+/).filter((x) => x.length > 0));
  const any = (...xs: string[]) => xs.some((x) => w.has(x));
  const named = mentionedNames(query, t.agents.map((a) => a.name));
  const place = placeNamed(query, t.places);
  if (any("memory", "memories", "history", "reflections", "insights", "knowledge", "important", "interaction", "experiences")) return [{ kind: "memories" }];
  if (any("conversation", "conversations", "talk", "talks")) return [{ kind: "any", of: [{ kind: "events", latest: false }, { kind: "memories" }] }];
  if (any("event", "events", "happenings", "news")) return [{ kind: "events", latest: any("latest", "last", "newest") }];
  if (any("plan", "plans", "schedule", "progress", "optimization", "agenda", "todo")) return [{ kind: "plan" }];
  if (any("time", "day", "period", "clock", "hour", "date")) return [{ kind: "clock" }, ...(any("location", "place") ? [{ kind: "self-place" } as const] : [])];
  if (any("agent", "agents", "people", "person", "social", "residents")) {
    if (any("occupation", "personality", "job", "profession", "relationship", "relationships", "age", "background")) return [{ kind: "unsupported", why: tag }];
    if (any("specific")) {
      const field = any("location") ? "location" : any("action", "activity") ? "action" : null;
      return named.length === 0 ? [{ kind: "unsupported", why: `${tag}: the query names nobody` }] : named.map((name) => ({ kind: "agent", name, field }));
    }
    if (any("nearby")) return [{ kind: "company" }];
    // agents_at_location: who is at the place the query names; agent_location: where the asker is.
    if (any("at", "in") && any("location", "place") && place !== null) return [{ kind: "place", place }];
    if (any("location")) return [{ kind: "self-place" }];
    if (any("recommendations", "obligations", "opportunities", "suggestions")) return [{ kind: "any", of: [{ kind: "company" }, { kind: "everyone" }] }];
    return [{ kind: "everyone" }];
  }
  if (any("situational", "surroundings")) return [{ kind: "self-place" }, { kind: "company" }];
  if (any("location", "locations", "place", "places", "spatial", "position", "existence")) {
    if (any("nearby", "distance", "route", "directions")) return [{ kind: "unsupported", why: `${tag}: the snapshot holds no distances` }];
    if (any("type", "description", "kind")) return [{ kind: "place-type", place }];
    // "<place>_location": the tag itself names the place (library_location).
    const own = [...w].filter((x) => !PLACE_WORDS.has(x)).join(" ");
    const tagged = own === "" ? null : placeNamed(own, t.places);
    if (tagged !== null) return [{ kind: "place", place: tagged }];
    if (any("existence", "position", "list") && place !== null) return [{ kind: "place", place }];
    if (any("recommendations", "suggestions")) return [{ kind: "any", of: [{ kind: "self-place" }, { kind: "plan" }] }];
    if (any("spatial", "awareness")) return [{ kind: place === null ? "self-place" : "place", ...(place === null ? {} : { place }) } as Need];
    return [{ kind: "unsupported", why: `${tag}: no place named` }];
  }
  // Known to ask for what no snapshot holds (the release's creative_suggestions): unsupported, on purpose.
  if (any("creative")) return [{ kind: "unsupported", why: tag }];
  return [{ kind: "unsupported", why: tag, unrecognised: true }];
}

const NO_TRUTH: FactualTruth = { time: null, asker: "", askerLocation: null, askerAction: null, nearby: [], agents: [], events: [], memories: [], plan: [], places: {} };

/**
 * `requires` tags none of whose words names a kind of fact (a typo, or a vocabulary this scorer
 * does not know): scored as unsupported needs like the release's uncheckable tags, which silently
 * lowered a query's score. Said before a run, with the query ids.
 */
export function unrecognisedTags(queries: readonly FactualQuery[]): { readonly tag: string; readonly queries: readonly string[] }[] {
  const byTag = new Map<string, string[]>();
  for (const q of queries) {
    for (const tag of q.requires) {
      if (!needsOf(tag, q.text, NO_TRUTH).some((n) => n.kind === "unsupported" && n.unrecognised === true)) continue;
      byTag.set(tag, [...(byTag.get(tag) ?? []), q.id]);
    }
  }
  return [...byTag].map(([tag, ids]) => ({ tag, queries: ids }));
}

/** Whether the answer's facts meet one need (unsupported needs are never fully met). */
export function met(n: Need, facts: readonly AnswerFactPayload[], t: FactualTruth): boolean {
  const pub = (name: string, field: string | null) => facts.some((f) => f.kind === "public" && f.agent !== null && same(f.agent, name) && (field === null || f.field === field));
  const placeFact = (p: string, field: string | null = null) => facts.some((f) => f.kind === "place" && f.target !== null && same(f.target, p) && (field === null || f.field === field));
  switch (n.kind) {
    case "clock":
      return facts.some((f) => f.kind === "time");
    case "self-place":
      return pub(t.asker, "location") || (t.askerLocation !== null && placeFact(t.askerLocation));
    case "place-type": {
      const p = n.place ?? t.askerLocation;
      return p !== null && placeFact(p, "type");
    }
    case "company":
      return facts.some((f) => f.kind === "place" && f.field === "others" && f.agent !== null && same(f.agent, t.asker))
        || (t.askerLocation !== null && placeFact(t.askerLocation, "people"))
        || (t.nearby.length > 0 && t.nearby.every((n2) => pub(n2, null)));
    case "agent":
      return pub(n.name, n.field);
    case "everyone":
      return t.agents.every((a) => pub(a.name, null));
    case "place":
      return placeFact(n.place) || facts.some((f) => f.kind === "public" && f.field === "location" && same(f.value, n.place));
    case "events":
      return n.latest ? t.events.length > 0 && facts.some((f) => f.kind === "event" && same(f.value, t.events.at(-1)!)) : facts.some((f) => f.kind === "event");
    case "memories":
      return facts.some((f) => f.kind === "memory");
    case "plan":
      return facts.some((f) => f.kind === "plan" && f.agent !== null && same(f.agent, t.asker));
    case "any":
      return n.of.some((x) => met(x, facts, t));
    case "unsupported":
      return false;
  }
}

// ---- The judge ------------------------------------------------------------------------------

export interface FactualJudged {
  readonly queryId: string;
  readonly category: string;
  readonly asker: string;
  readonly claims: number;
  readonly correctClaims: number;
  readonly contradictedClaims: number;
  readonly unverifiableClaims: number;
  readonly precision: number;
  /** precision without the 0.5 default; null when no claim is verifiable */
  readonly strictPrecision: number | null;
  readonly completeness: 0 | 0.5 | 1;
  readonly accuracy: number;
  /** correct / claims; null without claims */
  readonly claimRecall: number | null;
  readonly hallucination: boolean;
  /** no contradicted claim and at least one correct one */
  readonly perfect: boolean;
  readonly requirements: readonly { readonly item: string; readonly met: boolean; readonly supported: boolean }[];
  readonly contradictions: readonly string[];
  readonly probes: number;
  readonly disclosure: number;
  readonly toolsFired: readonly string[];
  readonly gap: number | null;
  readonly backend: string;
}

export function judgeFactual(q: FactualQuery, truth: FactualTruth, records: readonly LogRecord[]): FactualJudged {
  const answer = records.find((r) => r.type === "answer.given")?.payload as AnswerGivenPayload | undefined;
  const requested = records.filter((r) => r.type === "probe.requested").map((r) => r.payload as ProbeRequestedPayload);
  const answered = records.filter((r) => r.type === "probe.answered").map((r) => r.payload as ProbeAnsweredPayload);
  const facts = answer?.facts ?? [];
  const verdicts = facts.map((f) => ({ f, v: verdictOf(f, truth) }));
  const correct = verdicts.filter((x) => x.v === "correct").length;
  const contradicted = verdicts.filter((x) => x.v === "contradicted").length;
  const precision = correct + contradicted === 0 ? 0.5 : correct / (correct + contradicted);
  const requirements = q.requires.map((item) => {
    const needs = needsOf(item, q.text, truth);
    const supported = needs.every((n) => n.kind !== "unsupported");
    return { item, supported, met: supported && needs.every((n) => met(n, facts, truth)) };
  });
  // Full, partial (some items, or a grounded answer to an item the snapshot cannot hold), or none.
  const scores: number[] = requirements.map((r) => (r.met ? 1 : !r.supported && correct > 0 ? 0.5 : 0));
  const mean = scores.length === 0 ? (correct > 0 ? 1 : 0) : scores.reduce((a, b) => a + b, 0) / scores.length;
  const completeness: 0 | 0.5 | 1 = mean >= 1 ? 1 : mean <= 0 ? (correct > 0 && scores.length === 0 ? 0.5 : 0) : 0.5;
  const gap = (records.find((r) => r.type === "intent.inferred")?.payload as { frame?: { gap: number } } | undefined)?.frame?.gap ?? null;
  return {
    queryId: q.id,
    category: q.category,
    asker: truth.asker,
    claims: facts.length,
    correctClaims: correct,
    contradictedClaims: contradicted,
    unverifiableClaims: facts.length - correct - contradicted,
    precision,
    strictPrecision: correct + contradicted === 0 ? null : correct / (correct + contradicted),
    completeness,
    accuracy: 0.7 * precision + 0.3 * completeness,
    claimRecall: facts.length === 0 ? null : correct / facts.length,
    hallucination: contradicted > 0,
    perfect: contradicted === 0 && correct > 0,
    requirements,
    contradictions: verdicts.filter((x) => x.v === "contradicted").map((x) => `${x.f.kind} ${x.f.agent ?? x.f.target ?? ""} ${x.f.field}=${x.f.value}`),
    probes: requested.length,
    disclosure: answered.reduce((s, a) => s + a.disclosure, 0),
    toolsFired: answered.map((a) => a.tool),
    gap,
    backend: answer?.backend ?? "none",
  };
}
