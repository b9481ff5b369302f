// Every example a command's --help shows runs as shown: read from the help output itself, run in
// order from a scratch directory holding the repository's data/ and experiments/, each exits 0.
import { describe, expect, it } from "vitest";
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { helpExamplesOf } from "../services/cli/examples.ts";
import { loadWorldClis } from "../services/worlds.ts";
import { repoRoot, runCli, tempDir } from "./helpers.ts";

/** The commands of one help text's Examples section, as argument lists (single quotes as a POSIX shell reads them). */
function examplesOf(help: string): string[][] {
  const section = help.split("\nExamples:\n")[1];
  if (section === undefined) return [];
  return section
    .split("\n")
    .filter((line) => line.startsWith("  $ npx probetown "))
    .map((line) => {
      const command = line.slice("  $ npx probetown ".length).replace(/\s{2,}#.*$/, "");
      const args: string[] = [];
      for (const m of command.matchAll(/'([^']*)'|(\S+)/g)) args.push(m[1] ?? m[2]!);
      return args;
    });
}

describe("--help examples", () => {
  it("every command with examples shows them, and each runs as shown, exit 0", async () => {
    const cwd = tempDir("help-examples");
    cpSync(join(repoRoot, "data"), join(cwd, "data"), { recursive: true });
    cpSync(join(repoRoot, "experiments"), join(cwd, "experiments"), { recursive: true });
    let ran = 0;
    for (const [path, lines] of Object.entries(helpExamplesOf(await loadWorldClis()))) {
      const help = await runCli([...path.split(" "), "--help"]);
      expect(help.code, path).toBe(0);
      const examples = examplesOf(help.out);
      expect(examples.length, `${path} --help shows its examples`).toBe(lines.filter((l) => !l.startsWith("#")).length);
      for (const args of examples) {
        expect(args.slice(0, path.split(" ").length).join(" "), `an example of ${path} runs ${path}`).toBe(path);
        const r = await runCli(args, cwd);
        expect(r.code, `${args.join(" ")}\n${r.err}`).toBe(0);
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(15);
    // What the examples say they write is there.
    for (const made of ["runs/day2/log", "runs/envprobe/tooldag-medium", "report/envprobe/report.md", "runs/experiments/privacy-slice/results.jsonl", "report/privacy/report.md", "report/eval/report.md"]) {
      expect(existsSync(join(cwd, made)), made).toBe(true);
    }
  }, 300_000);
});
