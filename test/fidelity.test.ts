// docs/fidelity.md's AURA section: every paper row of Tables 2, 3, 4 and 12 appears beside ours
// with a verdict, and each finding's evidence is computed from the runs (not written in).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { auraFidelitySection } from "../services/aura/fidelity.ts";
import { tempDir } from "./helpers.ts";

const paper = JSON.parse(readFileSync(join(import.meta.dirname, "..", "data", "aura", "paper-tables.json"), "utf8")) as Record<string, { rows: Array<{ label?: string; subcategory?: string }> }>;

describe("fidelity: AURA section", () => {
  it("sets every paper row beside a measured one, with a verdict and the kind of result", async () => {
    // Three splits keep the test's run short; `npm run fidelity` runs every one.
    const md = await auraFidelitySection({ out: tempDir("fidelity-aura"), splits: ["dev (E, F)", "test (G, H)"] });
    for (const table of ["table2", "table3", "table12"]) for (const row of paper[table]!.rows) expect(md, `${table} ${row.label}`).toContain(`| ${row.label} |`);
    for (const row of paper.table4!.rows) expect(md).toContain(`| ${row.subcategory} |`);
    expect(md).toMatch(/\*\*deterministic\*\*/);
    // Findings carry a test statistic from the runs and a verdict.
    const findings = md.split("\n").filter((l) => l.startsWith("| AURA Intent > NoIntent"));
    // One per split: scene A, the dev splits and the test split.
    expect(findings.length).toBeGreaterThanOrEqual(3);
    for (const f of findings) expect(f).toMatch(/\| (reproduced|\*\*not reproduced\*\*) \| Δ [+-]\d\.\d{3} \(query-level paired t, n = \d+, p = /);
    expect(md).not.toMatch(/NaN|undefined/);
  }, 120_000);
});
