// The action of `probetown fidelity` (cli/fidelity.ts defines the command): regenerates
// docs/fidelity.md (services/fidelity/document.ts).
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fidelityDocument } from "../../fidelity/document.ts";
import { UsageError } from "../../kernel/usageError.ts";

export interface FidelityFlags {
  out: string;
  envprobeSeeds?: number;
  quiet?: boolean;
}

export async function cmdFidelity(flags: FidelityFlags, exit: (code: number) => void): Promise<void> {
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
}
