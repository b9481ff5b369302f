// `probetown fidelity`: regenerates docs/fidelity.md (services/fidelity/document.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { fidelityDocument } from "../fidelity/document.ts";
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UsageError } from "../replay.ts";
import { integerAtLeast } from "./eval.ts";

export function registerFidelity(program: Command, exit: (code: number) => void): void {
  program
    .command("fidelity")
    .description("run the papers' headline measurements here (AURA Tables 2-4, 12 deterministic; EnvProbe Tables 1-3, 5, 7) and write them beside the papers' numbers, row by row")
    .option("--out <file>", "where the Markdown goes", "docs/fidelity.md")
    .option("--envprobe-seeds <n>", "EnvProbe seeds 0…n−1 (default 220, the paper's n)", integerAtLeast("--envprobe-seeds", 1))
    .option("-q, --quiet", "no progress on stderr")
    .action(async (flags: { out: string; envprobeSeeds?: number; quiet?: boolean }) => {
      if (existsSync(flags.out) && statSync(flags.out).isDirectory()) throw new UsageError(`--out ${flags.out}: is a directory; expected the Markdown file to write`);
      if (!existsSync(dirname(resolve(flags.out)))) throw new UsageError(`--out ${flags.out}: its directory does not exist`);
      const scratch = mkdtempSync(join(tmpdir(), "probetown-fidelity-"));
      try {
        const started = performance.now();
        const doc = await fidelityDocument({ out: scratch, ...(flags.envprobeSeeds === undefined ? {} : { envprobeSeeds: flags.envprobeSeeds }), ...(flags.quiet ? {} : { onProgress: (m: string) => process.stderr.write(`${m}\n`) }) });
        writeFileSync(flags.out, doc);
        if (!flags.quiet) process.stderr.write(`wrote ${flags.out} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
        exit(0);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    });
}
