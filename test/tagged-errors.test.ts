// One error system (events/taggedError.ts): every error services/ throws is one of ours, with a
// `_tag` and an `exitCode`, and the command line's table (services/cli/exitCodes.ts) has its tag.
// Checked on the source, without running it: each `throw … new X(` in services/, its class X found
// among the declarations of services/, infra/, events/ and actors/, its `extends` walked down to
// our TaggedError (or Data.TaggedError, which only the LLM gateway's call failures inside its
// Effect retries use). Rethrowing a caught value (`throw error`) is not checked.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_BY_TAG } from "../services/cli/exitCodes.ts";
import { loadWorldClis } from "../services/worlds.ts";
import { repoRoot } from "./helpers.ts";

/** The bases an error of ours comes down from: our own, and Effect's Data.TaggedError for the gateway's call failures (services/llm/errors.ts). */
const BASES: ReadonlySet<string> = new Set(["TaggedError", "Data.TaggedError"]);

interface Source {
  readonly file: string;
  readonly text: string;
}

interface ClassDeclaration {
  readonly file: string;
  readonly parent: string;
  /** The tags it declares: an Effect class's in its `extends`, ours in a `_tag` member (a union lists several). */
  readonly tags: readonly string[];
  readonly declaresExitCode: boolean;
}

const tsFiles = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(repoRoot, join(e.parentPath, e.name)));

const sourcesUnder = (dirs: readonly string[]): Source[] => dirs.flatMap(tsFiles).map((file) => ({ file, text: readFileSync(join(repoRoot, file), "utf8") }));

const DECLARATION = /^(?:export )?(?:abstract )?class (\w+) extends ([\w.]+)(?:<\w+>\(\)\("(\w+)"|\("(\w+)"\))?/gm;

/** Every class declared in `sources` that extends something, by name (a name declared twice keeps both). */
function declarations(sources: readonly Source[]): Map<string, ClassDeclaration[]> {
  const found = new Map<string, ClassDeclaration[]>();
  for (const { file, text } of sources) {
    for (const m of text.matchAll(DECLARATION)) {
      // The class body: up to the first line that is a top-level block's closing brace alone.
      const end = /\n\}(?:\n|$)/.exec(text.slice(m.index));
      const body = text.slice(m.index, end === null ? undefined : m.index + end.index);
      const effectTag = m[3] ?? m[4];
      const tagLine = /^\s+(?:override )?readonly _tag\b.*$/m.exec(body)?.[0] ?? "";
      const tags = effectTag !== undefined ? [effectTag] : [...tagLine.matchAll(/"(\w+)"/g)].map((t) => t[1]!);
      const declaration: ClassDeclaration = { file, parent: m[2]!, tags, declaresExitCode: /^\s+(?:readonly exitCode\b|get exitCode\(\))/m.test(body) };
      found.set(m[1]!, [...(found.get(m[1]!) ?? []), declaration]);
    }
  }
  return found;
}

/** The classes `throw … new X(` constructs in `sources`, with where. */
function thrown(sources: readonly Source[]): Array<{ readonly name: string; readonly at: string }> {
  const out: Array<{ name: string; at: string }> = [];
  for (const { file, text } of sources) {
    text.split("\n").forEach((line, i) => {
      const at = line.search(/\bthrow\s/);
      if (at < 0 || line.trimStart().startsWith("//") || line.trimStart().startsWith("*")) return;
      for (const m of line.slice(at).matchAll(/\bnew (\w+)\(/g)) out.push({ name: m[1]!, at: `${file}:${i + 1}` });
    });
  }
  return out;
}

/** What is wrong with the errors `throwing` throws, given the classes of `declared` and the exit code table's tags. */
function violations(throwing: readonly Source[], declared: readonly Source[], tableTags: ReadonlySet<string>): string[] {
  const classes = declarations(declared);
  const problems = new Set<string>();
  for (const { name, at } of thrown(throwing)) {
    let tags: readonly string[] = [];
    let exitCode = false;
    let current = name;
    for (let depth = 0; !BASES.has(current); depth++) {
      const found = classes.get(current) ?? [];
      if (found.length !== 1 || depth > 10) {
        problems.add(`${at}: throws ${name}, which comes down from ${current}: ${found.length === 0 ? "not a tagged error of ours (events/taggedError.ts)" : `declared ${found.length} times (${found.map((d) => d.file).join(", ")})`}`);
        break;
      }
      const declaration = found[0]!;
      if (tags.length === 0) tags = declaration.tags;
      exitCode ||= declaration.declaresExitCode;
      current = declaration.parent;
    }
    if (!BASES.has(current)) continue;
    if (tags.length === 0) problems.add(`${at}: throws ${name}, which declares no _tag`);
    if (!exitCode) problems.add(`${at}: throws ${name}, which declares no exitCode`);
    for (const tag of tags) if (!tableTags.has(tag)) problems.add(`${at}: throws ${name}, whose tag ${tag} is not in services/cli/exitCodes.ts EXIT_BY_TAG`);
  }
  return [...problems];
}

/** Whether `name` is a class of ours (it comes down from one of BASES among `classes`). */
function isOurError(name: string, classes: ReadonlyMap<string, readonly ClassDeclaration[]>): boolean {
  let current = name;
  for (let depth = 0; depth <= 10; depth++) {
    if (BASES.has(current)) return true;
    const found = classes.get(current);
    if (found?.length !== 1) return false;
    current = found[0]!.parent;
  }
  return false;
}

/**
 * Where `sources` construct an error of ours from words (services/kernel/errors.ts): a string or
 * template literal as its first argument, or as its second after a literal first one
 * (`new InputRejected("world", \`…\`)`). Thrown or not: a watcher hands its error on.
 */
function wordedErrors(sources: readonly Source[], declared: readonly Source[]): string[] {
  const classes = declarations(declared);
  const found: string[] = [];
  for (const { file, text } of sources) {
    for (const m of text.matchAll(/\bnew (\w+)\(/g)) {
      const args = text.slice(m.index + m[0].length, m.index + m[0].length + 200);
      if (!/^\s*(?:(?:"[^"]*"|'[^']*')\s*,\s*)?["'`]/.test(args) || !isOurError(m[1]!, classes)) continue;
      const line = text.slice(0, m.index).split("\n").length;
      found.push(`${file}:${line}: new ${m[1]}(…) from a message`);
    }
  }
  return found;
}

/** Where the services raise data, which the command line words (services/cli/messages.ts). */
const RAISING_DATA = ["services/kernel", "services/distributed"];

// The worlds' own error tags are in their manifests (services/cli/worldCli.ts `errors`).
const TABLE_TAGS: ReadonlySet<string> = new Set([...Object.keys(EXIT_BY_TAG), ...(await loadWorldClis()).flatMap((w) => Object.keys(w.errors ?? {}))]);
const DECLARED = sourcesUnder(["services", "infra", "events", "actors"]);

describe("one error system: tagged errors carrying exit codes", () => {
  it("every error services/ throws is a tagged error of ours with an exit code, and the exit code table has its tag", () => {
    const services = DECLARED.filter((s) => s.file.startsWith("services/"));
    // The scan sees what it checks (a scan that found nothing would pass).
    expect(thrown(services).length).toBeGreaterThan(200);
    expect(violations(services, DECLARED, TABLE_TAGS)).toEqual([]);
  });

  it("fails on a plain Error, a class off the base, a tag the table lacks, and a class without an exit code", () => {
    const planted: Source = {
      file: "services/planted.ts",
      text: [
        `import { ExitCode, TaggedError } from "../events/taggedError.ts";`,
        `export class Stray extends Error {}`,
        `export class Untabled extends TaggedError {`,
        `  readonly _tag = "Untabled";`,
        `  readonly exitCode = ExitCode.internal;`,
        `}`,
        `export class Codeless extends TaggedError {`,
        `  readonly _tag = "InternalError";`,
        `}`,
        `export function f(n: number): void {`,
        `  if (n === 0) throw new Error("plain");`,
        `  if (n === 1) throw new Stray("off the base");`,
        `  if (n === 2) throw n > 1 ? new Untabled("not in the table") : new UsageError("fine");`,
        `  if (n === 3) throw new Codeless("no exit code");`,
        `}`,
      ].join("\n"),
    };
    const found = violations([planted], [...DECLARED, planted], TABLE_TAGS);
    expect(found).toEqual([
      "services/planted.ts:11: throws Error, which comes down from Error: not a tagged error of ours (events/taggedError.ts)",
      "services/planted.ts:12: throws Stray, which comes down from Error: not a tagged error of ours (events/taggedError.ts)",
      "services/planted.ts:13: throws Untabled, whose tag Untabled is not in services/cli/exitCodes.ts EXIT_BY_TAG",
      "services/planted.ts:14: throws Codeless, which declares no exitCode",
    ]);
  });

  it("services/kernel and services/distributed construct no error from a message: they raise typed fields", () => {
    const raising = DECLARED.filter((s) => RAISING_DATA.some((dir) => s.file.startsWith(`${dir}/`)));
    expect(raising.length).toBeGreaterThan(15);
    expect(wordedErrors(raising, DECLARED)).toEqual([]);
  });

  it("the message scan finds a template, a string and a string after a literal, and passes fields and others' classes", () => {
    const planted: Source = {
      file: "services/kernel/planted.ts",
      text: [
        "throw new UsageError(`${path}: no such episode directory`);",
        `throw new InternalError("no state");`,
        "throw new InputRejected(\"world\", `unknown world ${name}`);",
        "throw new InternalError(",
        "  `spread over lines`,",
        ");",
        `throw new NotAnEpisode({ path, reason: "missing" });`,
        "const url = new URL(`./x.ts`, import.meta.url);",
      ].join("\n"),
    };
    expect(wordedErrors([planted], DECLARED)).toEqual([
      "services/kernel/planted.ts:1: new UsageError(…) from a message",
      "services/kernel/planted.ts:2: new InternalError(…) from a message",
      "services/kernel/planted.ts:3: new InputRejected(…) from a message",
      "services/kernel/planted.ts:4: new InternalError(…) from a message",
    ]);
  });

  it("the exit code table lists only tags some class declares", () => {
    const declared = new Set([...declarations(DECLARED).values()].flat().flatMap((d) => d.tags));
    expect([...TABLE_TAGS].filter((tag) => !declared.has(tag))).toEqual([]);
  });
});
