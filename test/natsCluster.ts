// A JetStream cluster of nats-servers on loopback, for the tests and the bench (DESIGN §7): each node
// from PATH with its own client, cluster-route and monitoring ports (random free ones) and its own
// store directory, routed to the others. Started, it has a meta leader (every node's /jsz names
// one, the same): streams can be created. A node can be killed (SIGKILL) and started again on its
// ports and store, as a crashed server restarted. No vitest import: the bench uses it too.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./natsServer.ts";

export interface ClusterNode {
  readonly name: string;
  /** Its client URL (nats://127.0.0.1:<port>). */
  readonly url: string;
  /** Whether its process runs (not killed or stopped). */
  readonly running: boolean;
  /** Ends the process with `signal` (SIGKILL: a crash) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and store; resolves once it takes clients. */
  start(): Promise<void>;
}

export interface NatsCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's client URL. */
  readonly urls: readonly string[];
  /** The node of that server name (`cluster.leader` in a stream's info names one). */
  node(name: string): ClusterNode;
  /**
   * Resolves with the meta leader's name once every running node names the same one (its /jsz),
   * and the leader sees `peers` peers at least current; fails after `ms`.
   */
  waitForMetaLeader(ms?: number, peers?: number): Promise<string>;
  stop(): Promise<void>;
}


const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Jsz {
  readonly meta_cluster?: { readonly leader?: string; readonly replicas?: readonly { readonly current?: boolean; readonly offline?: boolean }[] };
}

async function jsz(port: number): Promise<Jsz | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/jsz`, { signal: AbortSignal.timeout(2000) });
    return response.ok ? ((await response.json()) as Jsz) : null;
  } catch {
    return null;
  }
}

/** Starts `size` nodes (default 3) clustered under `name` and waits for their meta leader. */
export async function startNatsCluster(options: { readonly size?: number; readonly name?: string; readonly readyMs?: number } = {}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const root = mkdtempSync(join(tmpdir(), "probetown-nats-cluster-"));
  const ports = await Promise.all(Array.from({ length: size * 3 }, () => freePort()));
  const specs = Array.from({ length: size }, (_, i) => ({ name: `n${i + 1}`, client: ports[i * 3]!, route: ports[i * 3 + 1]!, monitor: ports[i * 3 + 2]! }));
  const routes = specs.map((s) => `nats-route://127.0.0.1:${s.route}`);
  const nodes = specs.map((spec) => {
    const config = join(root, `${spec.name}.conf`);
    writeFileSync(
      config,
      [
        `server_name: ${spec.name}`,
        `listen: 127.0.0.1:${spec.client}`,
        `http: 127.0.0.1:${spec.monitor}`,
        `jetstream { store_dir: "${join(root, spec.name)}" }`,
        `cluster { name: ${options.name ?? "probetown"}, listen: 127.0.0.1:${spec.route}, routes: [${routes.join(", ")}] }`,
        "",
      ].join("\n"),
    );
    let child: ChildProcess | null = null;
    const url = `nats://127.0.0.1:${spec.client}`;
    const node: ClusterNode & { readonly monitor: number } = {
      name: spec.name,
      url,
      monitor: spec.monitor,
      get running() {
        return child !== null && child.exitCode === null && child.signalCode === null;
      },
      async kill(signal: NodeJS.Signals = "SIGKILL") {
        const c = child;
        if (c === null || c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once("exit", r));
        c.kill(signal);
        await exited;
        child = null;
      },
      async start() {
        const c = spawn("nats-server", ["-c", config], { stdio: "ignore" });
        child = c;
        const failed = new Promise<never>((_, reject) => c.once("error", (e) => reject(new Error(`cannot start nats-server from PATH: ${e.message}`))));
        const ready = (async () => {
          const deadline = Date.now() + 20_000;
          // Its monitoring port answers once it listens for clients too.
          while ((await jsz(spec.monitor)) === null) {
            if (Date.now() > deadline) throw new Error(`nats-server ${spec.name} at ${url} did not start`);
            await sleep(50);
          }
        })();
        await Promise.race([ready, failed]);
      },
    };
    return node;
  });
  const cluster: NatsCluster = {
    nodes,
    urls: nodes.map((n) => n.url),
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (found === undefined) throw new Error(`no node ${name} in the cluster (${nodes.map((n) => n.name).join(", ")})`);
      return found;
    },
    async waitForMetaLeader(ms = 60_000, peers = size - 1) {
      const deadline = Date.now() + ms;
      for (;;) {
        const running = nodes.filter((n) => n.running);
        const seen = await Promise.all(running.map((n) => jsz(n.monitor)));
        const leaders = new Set(seen.map((j) => j?.meta_cluster?.leader ?? ""));
        const [leader] = leaders;
        // Only the leader knows its peers' state.
        const own = seen[running.findIndex((n) => n.name === leader)]?.meta_cluster?.replicas ?? [];
        const current = own.filter((r) => r.current === true && r.offline !== true).length >= peers;
        if (seen.length > 0 && leaders.size === 1 && leader !== "" && leader !== undefined && current) return leader;
        if (Date.now() > deadline) throw new Error(`the cluster has no meta leader after ${ms} ms (nodes name: ${[...leaders].join(", ") || "none"})`);
        await sleep(100);
      }
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.kill("SIGTERM")));
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    await cluster.waitForMetaLeader(options.readyMs ?? 60_000);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
