// Logs written by earlier builds must stay verifiable: a change to a world's rules, to its hash
// views or to how records and states are hashed would make every stored log diverge. These are the
// chain heads (last record hash) and final state hashes of reference episodes as the log format
// stands; a performance change must leave them as they are. When a change is meant to alter
// them, it is a new log format: say so in docs/architecture.md (how logs of the old one are read)
// and only then record the new values here.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { runEpisode } from "../services/kernel/episodes.ts";
import { verifyEpisode } from "../services/kernel/verify.ts";
import { logRecords, tempDir } from "./helpers.ts";

interface Golden {
  readonly world: string;
  readonly seed: number;
  readonly condition?: string;
  readonly config?: unknown;
  readonly ticks?: number;
  readonly records: number;
  readonly head: string;
  readonly stateHash: string;
}

const GOLDEN: readonly Golden[] = [
  // The default day (npm start), and another seed.
  { world: "auratown", seed: 42, records: 532, head: "2c12bc2a36b101a2", stateHash: "0adf5f86c961d563" },
  { world: "auratown", seed: 7, records: 527, head: "dee7e33c54eaaee0", stateHash: "35e4adeac769d9f7" },
  // Several days of a larger town: memory trimming (capacity 200), day rollover, attention limits.
  { world: "auratown", seed: 42, config: { extraAgents: 20 }, ticks: 180, records: 7206, head: "3b7744ad39512e2b", stateHash: "deb10c764ee30871" },
  { world: "auratown", seed: 42, config: { extraAgents: 95 }, records: 3828, head: "26a27a87e37bfebc", stateHash: "24929ad9b92bd1f4" },
  // The conditions a fork may take.
  { world: "auratown", seed: 42, condition: "no-conversation", config: { extraAgents: 20 }, ticks: 68, records: 2523, head: "241547f611aabcf2", stateHash: "7dcb1d939948f411" },
  { world: "auratown", seed: 42, condition: "no-reflection", config: { extraAgents: 20 }, ticks: 68, records: 2554, head: "c117527f3bfb6887", stateHash: "84fd2f0b48048f5c" },
  // EnvProbe: each world kind, a drift regime, a learning policy and an oracle. Values changed with
  // issue 21 (b₀ = g₀, the calibration model, the paper's Oracle; docs/envprobe.md "Log format").
  { world: "envprobe", seed: 5, condition: "envprobe-simple", config: { world: "objectstate", regime: "high" }, records: 176, head: "122b5798013a21d2", stateHash: "ee35a5d1525e7af0" },
  { world: "envprobe", seed: 5, condition: "oracle-tw", config: { world: "objectstate", regime: "medium" }, records: 199, head: "e402954d8ddb7b64", stateHash: "75af60c8a750ada8" },
  { world: "envprobe", seed: 5, condition: "envprobe-simple", config: { world: "tooldag", regime: "high" }, records: 259, head: "28837d76319cac96", stateHash: "3fba06c949405feb" },
  { world: "envprobe", seed: 5, condition: "oracle-tw", config: { world: "tooldag", regime: "medium" }, records: 97, head: "069e26cab8391282", stateHash: "1ae1378d619f2101" },
  { world: "envprobe", seed: 5, condition: "envprobe-simple", config: { world: "graphnav", regime: "high" }, records: 141, head: "d5719cbf8c888c11", stateHash: "662857bf9639e147" },
  { world: "envprobe", seed: 5, condition: "oracle-tw", config: { world: "graphnav", regime: "medium" }, records: 100, head: "418a207f90f7617f", stateHash: "d9bd8a359d10d80a" },
];

describe("golden logs: the log format as it stands", () => {
  it.each(GOLDEN.map((g) => [`${g.world} seed ${g.seed} ${g.condition ?? "baseline"} ${JSON.stringify(g.config ?? {})} ${g.ticks ?? "default"} ticks`, g] as const))(
    "%s: same records, chain head and state hash, and verify holds",
    async (_name, g) => {
      const dir = join(tempDir("golden"), "episode");
      const run = await runEpisode({
        world: g.world, seed: g.seed, dir, trace: { exporter: "none" }, fsync: "never", snapshotEvery: 0,
        ...(g.condition === undefined ? {} : { condition: g.condition }),
        ...(g.config === undefined ? {} : { config: g.config }),
        ...(g.ticks === undefined ? {} : { ticks: g.ticks }),
      });
      const records = logRecords(dir);
      expect({ records: records.length, head: records.at(-1)!.hash.slice(0, 16), stateHash: run.stateHash.slice(0, 16) }).toEqual({ records: g.records, head: g.head, stateHash: g.stateHash });
      const report = await verifyEpisode(dir);
      expect(report.ok, report.text).toBe(true);
    },
    60_000,
  );
});
