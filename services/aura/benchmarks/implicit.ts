// Loader for the implicit-intent benchmark schema (paper A14; reference/aura.md §6.4): any file
// with `scenes{name: {summary, public_state, private_state, beliefs_about_others, plans?}}` and
// `queries[{id, scene, subcategory, agent_subject, target?, query, literal_requires,
// implicit_requires, implicit_need, gold_required_tools, forbidden_tools}]`. Validated with Effect
// Schema, then with the release's consistency rules; every error names the file, the query id
// (or scene) and the field.
import { Schema } from "effect";
import { SceneSchema } from "../../../actors/aura/world.ts";
import { rosterOf, type Scene } from "../../../actors/aura/scene.ts";
import { AGENT_STATE_TOOLS } from "../../../actors/aura/tools.ts";
import { UsageError } from "../../kernel/replay.ts";
import { readInputFile, checkParsedInput } from "../../kernel/inputFile.ts";
import { goldPrivate, LITERAL_ITEMS } from "./judge.ts";

export class BenchmarkInvalid extends UsageError {
  readonly file: string;
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[], kind = "implicit-intent") {
    super(`${file}: invalid ${kind} benchmark:\n  - ${problems.slice(0, 20).join("\n  - ")}${problems.length > 20 ? `\n  … and ${problems.length - 20} more` : ""}`);
    this.file = file;
    this.problems = problems;
  }
}

type BenchmarkKind = "implicit" | "privacy" | "factual";
const KIND_NAME: Record<BenchmarkKind, string> = { implicit: "an implicit-intent", privacy: "a privacy", factual: "a factual" };
const KIND_SHAPE: Record<BenchmarkKind, string> = { implicit: "scenes, and queries with gold_required_tools", privacy: "queries with allowed_tools and forbidden_tools", factual: "queries with requires, no scenes" };

/** Which benchmark a query file's shape is (by fields only that schema has); null when none. */
function benchmarkKindOf(raw: unknown): BenchmarkKind | null {
  if (raw === null || typeof raw !== "object") return null;
  const { scenes, queries } = raw as { scenes?: unknown; queries?: unknown };
  if (scenes !== null && typeof scenes === "object" && !Array.isArray(scenes)) return "implicit";
  const q: unknown = Array.isArray(queries) ? queries[0] : undefined;
  if (q === null || typeof q !== "object") return null;
  if ("allowed_tools" in q) return "privacy";
  if ("gold_required_tools" in q) return "implicit";
  if ("requires" in q) return "factual";
  return null;
}

/**
 * The one problem of a file of another benchmark given to `eval <expected>` (which listed each
 * query's missing fields, 20 lines of them, without saying the file was the wrong one); null when
 * it is not one.
 */
export function otherBenchmark(raw: unknown, expected: BenchmarkKind): string | null {
  const kind = benchmarkKindOf(raw);
  if (kind === null || kind === expected) return null;
  return `this is ${KIND_NAME[kind]} benchmark file (${KIND_SHAPE[kind]}), not ${KIND_NAME[expected]} one: \`probetown eval ${kind} --file …\` reads it`;
}

const Str = Schema.String;
const StrList = Schema.Array(Str);

export const ImplicitQuerySchema = Schema.Struct({
  id: Schema.Union([Schema.Int, Str]),
  scene: Str,
  subcategory: Str,
  agent_subject: Schema.NullOr(Str),
  target: Schema.optional(Schema.NullOr(Str)),
  query: Str,
  literal_requires: StrList,
  implicit_requires: StrList,
  implicit_need: Str,
  gold_required_tools: StrList,
  forbidden_tools: StrList,
});

const FileSchema = Schema.Struct({
  description: Schema.optional(Str),
  version: Schema.optional(Str),
  category: Schema.optional(Str),
  subcategories: Schema.optional(StrList),
  scenes: Schema.Record(Str, Schema.Unknown),
  queries: Schema.Array(Schema.Unknown),
});

export interface ImplicitQuery {
  readonly id: string;
  readonly scene: string;
  readonly subcategory: string;
  readonly subject: string | null;
  readonly target: string | null;
  readonly text: string;
  readonly literalRequires: readonly string[];
  readonly implicitRequires: readonly string[];
  readonly implicitNeed: string;
  readonly gold: readonly string[];
  readonly forbidden: readonly string[];
}

export interface ImplicitBenchmark {
  readonly file: string;
  readonly version: string | null;
  readonly scenes: Readonly<Record<string, Scene>>;
  readonly queries: readonly ImplicitQuery[];
}

const oneLine = (e: unknown) => String((e as Error).message).replace(/\s*\n\s*/g, " ");

/** Parses and checks a benchmark held in memory; `file` names it in errors. */
export function parseImplicitBenchmark(raw: unknown, file: string): ImplicitBenchmark {
  let top: typeof FileSchema.Type;
  try {
    top = Schema.decodeUnknownSync(FileSchema)(raw);
  } catch (e) {
    throw new BenchmarkInvalid(file, [otherBenchmark(raw, "implicit") ?? `top level: ${oneLine(e)}`]);
  }
  const problems: string[] = [];
  const scenes: Record<string, Scene> = {};
  for (const [name, value] of Object.entries(top.scenes)) {
    try {
      const s = Schema.decodeUnknownSync(SceneSchema)({ name, ...(value as object) });
      scenes[name] = s as Scene;
    } catch (e) {
      problems.push(`scene ${name}: ${oneLine(e)}`);
    }
  }
  for (const [name, s] of Object.entries(scenes)) {
    const roster = rosterOf(s);
    const privateNames = Object.keys(s.private_state);
    if (roster.length === 0) problems.push(`scene ${name}: public_state is empty`);
    for (const n of roster) if (!privateNames.includes(n)) problems.push(`scene ${name}: private_state has no entry for '${n}' (public_state names them)`);
    for (const n of privateNames) if (!roster.includes(n)) problems.push(`scene ${name}: private_state names '${n}', who is not in public_state`);
    for (const [b, targets] of Object.entries(s.beliefs_about_others)) {
      if (!roster.includes(b)) problems.push(`scene ${name}: beliefs_about_others: believer '${b}' is not in the roster`);
      for (const t of Object.keys(targets)) if (!roster.includes(t)) problems.push(`scene ${name}: beliefs_about_others.${b}: target '${t}' is not in the roster`);
    }
  }
  const queries: ImplicitQuery[] = [];
  const seen = new Set<string>();
  top.queries.forEach((value, index) => {
    const label = `query ${String((value as { id?: unknown })?.id ?? `#${index}`)}`;
    let q: typeof ImplicitQuerySchema.Type;
    try {
      q = Schema.decodeUnknownSync(ImplicitQuerySchema)(value);
    } catch (e) {
      problems.push(`${label}: ${oneLine(e)}`);
      return;
    }
    const id = String(q.id);
    if (seen.has(id)) problems.push(`${label}: id: duplicate id`);
    seen.add(id);
    const scene = scenes[q.scene];
    if (scene === undefined) {
      if (top.scenes[q.scene] === undefined) problems.push(`${label}: scene: no scene named '${q.scene}' (scenes: ${Object.keys(top.scenes).join(", ")})`);
      return;
    }
    const roster = rosterOf(scene);
    if (q.agent_subject !== null && !roster.includes(q.agent_subject)) problems.push(`${label}: agent_subject: '${q.agent_subject}' is not in scene ${q.scene} (${roster.join(", ")})`);
    const target = q.target ?? null;
    if (target !== null && !roster.includes(target)) problems.push(`${label}: target: '${target}' is not in scene ${q.scene}`);
    for (const field of ["gold_required_tools", "forbidden_tools"] as const) {
      for (const t of q[field]) if (AGENT_STATE_TOOLS[t] === undefined) problems.push(`${label}: ${field}: unknown tool '${t}' (known: ${Object.keys(AGENT_STATE_TOOLS).join(", ")})`);
    }
    if (q.subcategory === "second_order") {
      if (q.agent_subject === null) problems.push(`${label}: agent_subject: a second_order query needs the believer`);
      if (target === null) problems.push(`${label}: target: a second_order query needs a target`);
      if (!q.gold_required_tools.includes("get_agent_belief_about")) problems.push(`${label}: gold_required_tools: a second_order query must require get_agent_belief_about`);
      if (!q.forbidden_tools.includes("get_agent_private_state")) problems.push(`${label}: forbidden_tools: a second_order query must forbid get_agent_private_state`);
    }
    // An item the judge has no gold for is left out of the query's score: a typo ('availabilty',
    // 'agent_locaton') silently changed a coverage. The literal vocabulary is the release's; an
    // implicit item must be a private field (or its alias) someone in the scene has.
    for (const item of q.literal_requires) if (!LITERAL_ITEMS.includes(item)) problems.push(`${label}: literal_requires: unknown item '${item}' (known: ${LITERAL_ITEMS.join(", ")})`);
    for (const req of q.implicit_requires) {
      const m = /^beliefs_about_others\.(.+)\.([a-z_]+)$/.exec(req);
      if (m !== null && !roster.includes(m[1]!)) problems.push(`${label}: implicit_requires: '${req}' names '${m[1]}', who is not in scene ${q.scene}`);
      if (m === null && roster.every((n) => goldPrivate(scene, n, req) === null)) {
        const fields = [...new Set(roster.flatMap((n) => Object.keys(scene.private_state[n] ?? {})))].sort();
        problems.push(`${label}: implicit_requires: '${req}' is a private field of no one in scene ${q.scene} (fields: ${fields.join(", ")}; or beliefs_about_others.<name>.<field>)`);
      }
    }
    queries.push({
      id, scene: q.scene, subcategory: q.subcategory, subject: q.agent_subject, target, text: q.query,
      literalRequires: q.literal_requires, implicitRequires: q.implicit_requires, implicitNeed: q.implicit_need,
      gold: q.gold_required_tools, forbidden: q.forbidden_tools,
    });
  });
  if (top.queries.length === 0) problems.push("queries: the file has no queries");
  if (problems.length > 0) throw new BenchmarkInvalid(file, [otherBenchmark(raw, "implicit") ?? problems].flat());
  return { file, version: top.version ?? null, scenes, queries };
}

export function loadImplicitBenchmark(file: string): ImplicitBenchmark {
  let text: string;
  try {
    text = readInputFile(file, "dataset", `--file ${file}`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--file ${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--file ${file}: not valid JSON (${(e as Error).message})`);
  }
  checkParsedInput(raw, `--file ${file}`);
  return parseImplicitBenchmark(raw, file);
}
