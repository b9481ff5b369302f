// The action of `probetown fidelity` (cli/fidelity.ts defines the command): regenerates
// docs/fidelity.md (services/fidelity/document.ts) from the worlds' sections, in their order.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fidelityDocument } from "../../fidelity/document.ts";
import { UsageError } from "../../kernel/usageError.ts";
import type { WorldFidelity } from "../worldCli.ts";

export interface FidelityFlags {
  readonly out: string;
  readonly quiet?: boolean;
  /** The sections' own options. */
  readonly [flag: string]: unknown;
}

export async function cmdFidelity(flags: FidelityFlags, sections: readonly WorldFidelity[]): Promise<number> {
  if (existsSync(flags.out) && statSync(flags.out).isDirectory()) throw new UsageError(`--out ${flags.out}: is a directory; expected the Markdown file to write`);
  if (!existsSync(dirname(resolve(flags.out)))) throw new UsageError(`--out ${flags.out}: its directory does not exist`);
  const scratch = mkdtempSync(join(tmpdir(), "probetown-fidelity-"));
  try {
    const started = performance.now();
    const onProgress = flags.quiet ? {} : { onProgress: (m: string) => void process.stderr.write(`${m}\n`) };
    const texts: string[] = [];
    for (const section of sections) texts.push(await (await section.section())({ out: scratch, flags, ...onProgress }));
    writeFileSync(flags.out, fidelityDocument(texts));
    if (!flags.quiet) process.stderr.write(`wrote ${flags.out} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
