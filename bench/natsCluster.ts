// What a replicated stream costs (docs/distributed.md, "A JetStream cluster"): the kernel's
// JetStream append of a 100-agent day's records into an R3 log stream against an R1 one, on the
// same 3-node cluster of nats-servers on loopback (test/natsCluster.ts), the runs alternating so
// both see the same machine state. An R3 publish is acked once two of the three servers have it.
import type { LogRecord } from "../events/record.ts";
import { connectNats } from "../infra/nats.ts";
import { startNatsCluster } from "../test/natsCluster.ts";
import { kernelPublish, type Row } from "./nats.ts";

const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(x >= 10 ? 1 : 3));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (s: string) => process.stderr.write(`${s}\n`);

export async function clusterRows(quick: boolean, sample: readonly LogRecord[]): Promise<Row[]> {
  const cluster = await startNatsCluster();
  // Both connect to the same node; the R1 stream lands on any of the three (the meta leader places it).
  const r1 = await connectNats(cluster.urls[0]!, { replicas: 1 });
  const r3 = await connectNats(cluster.urls[0]!, { replicas: 3 });
  try {
    log(`  JetStream cluster: 3 nats-servers at ${cluster.urls.join(", ")}`);
    await kernelPublish(r1, sample.slice(0, 200)); // warm-up: connections, the API's first requests
    await kernelPublish(r3, sample.slice(0, 200));
    // Pairs, R1 then R3: the ratio is the median of the pairs' ratios (a busy machine's load drifts
    // between pairs more than within one).
    const one: number[] = [];
    const three: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < (quick ? 5 : 11); i++) {
      one.push((await kernelPublish(r1, sample)).seconds);
      three.push((await kernelPublish(r3, sample)).seconds);
      ratios.push(three.at(-1)! / one.at(-1)!);
    }
    const [t1, t3, ratio] = [median(one), median(three), median(ratios)];
    log(`  cluster append: R1 ${fmt(sample.length / t1)}/s, R3 ${fmt(sample.length / t3)}/s (${ratio.toFixed(2)}× the R1 time, median of ${ratios.length} pairs; pairs from ${Math.min(...ratios).toFixed(2)}× to ${Math.max(...ratios).toFixed(2)}×)`);
    return [
      {
        figure: `JetStream append through the kernel into an R3 log stream (3-node cluster on loopback), ${sample.length} records of a 100-agent day, one message per tick`,
        measured: `${fmt(sample.length / t3)} events/s (${t3.toFixed(3)} s, median of ${three.length})`,
        ceiling: `the same into an R1 stream on the same cluster: ${fmt(sample.length / t1)} events/s (${t1.toFixed(3)} s)`,
        ratio: `${ratio.toFixed(2)}× the R1 time (median of ${ratios.length} R1/R3 pairs)`,
        target: "—",
        verdict: "—",
      },
    ];
  } finally {
    await r1.close().catch(() => undefined);
    await r3.close().catch(() => undefined);
    await cluster.stop();
  }
}
