import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { ESLint } from "eslint";

const root = join(import.meta.dirname, "..");

describe("determinism lint (DESIGN §4)", () => {
  const eslint = new ESLint({ cwd: root });
  const lint = async (file: string, code: string) => (await eslint.lintText(code, { filePath: join(root, file) }))[0]!.messages;

  it("fails on wall clock, Math.random and random ids in actors/ and events/", async () => {
    const code = [
      "export const a = Math.random();",
      "export const b = Date.now();",
      "export const c = new Date();",
      "export const d = performance.now();",
      "export const e = crypto.randomUUID();",
      'import { randomUUID } from "node:crypto";',
      "export const f = randomUUID;",
    ].join("\n");
    for (const file of ["actors/auratown/sample.ts", "events/sample.ts"]) {
      const messages = await lint(file, code);
      expect(messages.filter((m) => m.severity === 2).map((m) => m.line).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    }
  });

  it("keeps actors/ from importing infra/ or services/", async () => {
    const messages = await lint("actors/auratown/sample.ts", 'import { x } from "../../infra/transport.ts";\nexport const y = x;');
    expect(messages.some((m) => /must not depend on infra/.test(m.message))).toBe(true);
  });

  it("allows the same calls in services/, where wall-clock time goes to telemetry and meta", async () => {
    expect(await lint("services/sample.ts", "export const t = Date.now();")).toEqual([]);
  });
});
