// The kernel knows no world by name (issue 22, "worlds as modules"): adding a world touches only its
// own folders and one line of services/worlds.ts. So no built-in world's name appears in the code of
// services/cli, services/kernel, services/distributed or services/analysis: not as an identifier
// (`envprobeLlm`, `NotEnvProbeEpisode`), not in a string (an import path, a help text, a message).
// Comments may name worlds (why a limit is what it is: "an EnvProbe episode is ~0.7 ms"): they
// explain, they do not couple. Read with TypeScript's own parser, so a comment is told from code.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.ts";

const KERNEL_DIRS = ["services/cli", "services/kernel", "services/distributed", "services/analysis", "services/ui"];

/** A world's name in a string: whole words (`env/auratown`, `aura-scene`, "AURA's"), any case. */
const IN_TEXT = /(?<![a-z0-9])(auratown|aura-scene|envprobe|household|aura)(?![a-z0-9])/i;

/** An identifier's words (camelCase, snake_case) that name a world: `auraFidelity`, `isEnvprobeJob`, `ENVPROBE_X`. */
function namesWorldInIdentifier(name: string): boolean {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2").toLowerCase().split(/[\s_$]+/);
  const joined = words.join("");
  return words.includes("aura") || /auratown|envprobe|household/.test(joined);
}

/** Where code (not a comment) in `text` names a world: line and what. */
export function worldNamesIn(text: string): string[] {
  const found: string[] = [];
  const source = ts.createSourceFile("code.ts", text, ts.ScriptTarget.Latest, true);
  const at = (node: ts.Node) => `${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      if (IN_TEXT.test(node.text)) found.push(`${at(node)}: ${JSON.stringify(node.text)}`);
    } else if ((ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) && namesWorldInIdentifier(node.text)) found.push(`${at(node)}: ${node.text}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const tsFiles = (dir: string): string[] =>
  readdirSync(join(repoRoot, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(repoRoot, join(e.parentPath, e.name)));

describe("the kernel and the command line name no world", () => {
  it("in code: no identifier, import path, help text or message names a built-in world", () => {
    const problems = KERNEL_DIRS.flatMap(tsFiles).flatMap((file) => worldNamesIn(readFileSync(join(repoRoot, file), "utf8")).map((where) => `${file}:${where}`));
    expect(problems).toEqual([]);
  });

  it("finds a name in identifiers, strings and templates, and not in comments", () => {
    const planted = [
      `// an EnvProbe comment, and auratown's`,
      `/* aura-scene */ const x = 1;`,
      `import { a } from "../envprobe/commands.ts";`,
      "const help = `world ${x} or AURA's controller`;",
      "const t = `${x} in the household`;",
      `function isEnvprobeJob() {}`,
      `const auraFidelity = 2; const restaurant = "restaurant"; const ok = "env/<world>";`,
    ].join("\n");
    expect(worldNamesIn(planted)).toEqual([`3: "../envprobe/commands.ts"`, `4: " or AURA's controller"`, `5: " in the household"`, "6: isEnvprobeJob", "7: auraFidelity"]);
  });
});
