// docs/cli.md is generated from the commands' --help (services/cli/reference.ts): rendered here in
// process, it must equal the committed file, so a changed flag or description cannot leave it stale.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { REFERENCE_PATH, renderCliReference } from "../services/cli/reference.ts";

describe("docs/cli.md", () => {
  it("is the reference rendered from the CLI's --help texts", async () => {
    const committed = readFileSync(REFERENCE_PATH, "utf8");
    const rendered = await renderCliReference();
    if (committed !== rendered) {
      const a = committed.split("\n");
      const b = rendered.split("\n");
      const line = a.findIndex((text, i) => text !== b[i]);
      const at = line === -1 ? b.length : line;
      expect.fail(`docs/cli.md is out of date with the CLI's --help (first difference at line ${at + 1}: committed ${JSON.stringify(a[at] ?? "<end>")}, rendered ${JSON.stringify(b[at] ?? "<end>")}): run \`npm run docs:cli\` and commit docs/cli.md`);
    }
  });

  it("has a section for every command and subcommand, listed in its contents", async () => {
    const md = await renderCliReference();
    for (const path of ["probetown run", "probetown sweep", "probetown eval implicit", "probetown eval factual", "probetown worlds"]) {
      expect(md).toContain(`\n## ${path}\n`);
      expect(md).toContain(`(#${path.replace(/ /g, "-")})`);
    }
    // Examples (added after the help) are part of each command's section.
    expect(md).toContain("$ npx probetown run auratown --seed 7 --days 2 --log runs/day2");
  });

  it("does not depend on the terminal it is rendered in", async () => {
    const stdout = process.stdout as { columns?: number; isTTY?: boolean };
    const saved = { columns: stdout.columns, isTTY: stdout.isTTY };
    try {
      Object.assign(stdout, { columns: 40, isTTY: true });
      const narrow = await renderCliReference();
      Object.assign(stdout, { columns: 250, isTTY: true });
      expect(await renderCliReference()).toBe(narrow);
      Object.assign(stdout, saved);
      expect(await renderCliReference()).toBe(narrow);
    } finally {
      Object.assign(stdout, saved);
    }
  });
});
