// nats-servers for tests (DESIGN §7): from PATH, JetStream on, random port, temp store.
// One is shared by the whole test run (test/globalSetup.ts starts it, or NATS_URL names it): tests
// keep apart by namespace. A test that stops, restarts or freezes its server, or needs credentials
// or other configuration, starts a private one (`own: true`, `auth`, `config`).
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, inject } from "vitest";
import { connectNats } from "../infra/nats.ts";
import { stopped, tempDir } from "./helpers.ts";

export interface TestNats {
  readonly url: string;
  /** A fresh namespace, so tests sharing a server never see each other's streams. */
  namespace(label: string): string;
  /**
   * Stops the server (SIGTERM, or SIGKILL when `hard`) and starts it again on the same port and
   * store, after `downMs`, or once `whileDown()`, called when it has stopped, has settled (what the
   * test does or waits to see while it is down).
   */
  restart(options?: { hard?: boolean; downMs?: number; whileDown?: () => Promise<unknown> }): Promise<void>;
  /** Freezes the server (SIGSTOP): it keeps its port and connections but answers nothing, as a hung server. Resolves once it is stopped. */
  pause(): Promise<void>;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitReady(url: string, deadline: number, auth: NatsAuth | undefined): Promise<void> {
  for (;;) {
    try {
      const nc = await connect({ servers: url, timeout: 500, reconnect: false, ...auth });
      await nc.close();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`nats-server at ${url} did not become ready: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

let counter = 0;

/**
 * `auth`: a server that requires this user and password, or this token; `config`: extra server configuration
 * (e.g. `max_pending: 1048576`). Either makes it a private server, even with NATS_URL set.
 */
export type NatsAuth = { user: string; pass: string } | { token: string };

/**
 * The test run's shared server (NATS_URL, or the one test/globalSetup.ts started); a private one of
 * its own with `own`, `auth` or `config`.
 */
export async function startTestNats(options: { own?: boolean; auth?: NatsAuth; config?: string } = {}): Promise<TestNats> {
  const run = `${process.pid}-${Date.now().toString(36)}`;
  const namespace = (label: string) => `t${run}-${label}-${++counter}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const auth = options.auth;
  if (options.own !== true && auth === undefined && options.config === undefined) {
    const external = process.env.NATS_URL;
    const shared = external !== undefined && external !== "" ? external : inject("natsUrl");
    const why = "the shared nats-server; start one of the test's own with startTestNats({ own: true })";
    return {
      url: shared,
      namespace,
      restart: async () => { throw new Error(`restart: not on ${why}`); },
      pause: async () => { throw new Error(`pause: not on ${why}`); },
      resume: () => { throw new Error(`resume: not on ${why}`); },
      stop: async () => {},
    };
  }
  const port = await freePort();
  const store = tempDir("nats");
  const url = `nats://127.0.0.1:${port}`;
  const configFile = join(store, "..", `nats-${port}.conf`);
  if (options.config !== undefined) writeFileSync(configFile, `${options.config}\n`);
  let child: ChildProcess | null = null;
  const start = async () => {
    const credentials = auth === undefined ? [] : "token" in auth ? ["--auth", auth.token] : ["--user", auth.user, "--pass", auth.pass];
    const config = options.config === undefined ? [] : ["-c", configFile];
    child = spawn("nats-server", [...config, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store, ...credentials], { stdio: "ignore" });
    const started = child;
    const failed = new Promise<never>((_, reject) => started.once("error", (e) => reject(new Error(`cannot start nats-server from PATH: ${e.message}`))));
    await Promise.race([waitReady(url, Date.now() + 10_000, auth), failed]);
  };
  const halt = async (signal: NodeJS.Signals) => {
    const c = child;
    if (c === null || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill(signal);
    await exited;
    child = null;
  };
  await start();
  return {
    url,
    namespace,
    async restart(options = {}) {
      await halt(options.hard === true ? "SIGKILL" : "SIGTERM");
      if (options.whileDown !== undefined) await options.whileDown().catch(() => undefined);
      else await new Promise((r) => setTimeout(r, options.downMs ?? 300));
      await start();
    },
    async pause() {
      const c = child;
      if (c === null) return;
      c.kill("SIGSTOP");
      await stopped(c.pid!);
    },
    resume() {
      child?.kill("SIGCONT");
    },
    async stop() {
      // A paused server does not act on SIGTERM until it goes on.
      child?.kill("SIGCONT");
      await halt("SIGTERM");
      rmSync(store, { recursive: true, force: true });
    },
  };
}

/**
 * The shared server (a private one with `own`) and a connection to it for the tests of one file or
 * describe block: connected before them, closed after.
 */
export function natsForSuite(options: { own?: boolean } = {}): { readonly nats: TestNats; readonly nc: NatsConnection } {
  const suite = {} as { nats: TestNats; nc: NatsConnection };
  beforeAll(async () => {
    suite.nats = await startTestNats(options);
    suite.nc = await connectNats(suite.nats.url);
  }, 30_000);
  afterAll(async () => {
    await suite.nc?.close();
    await suite.nats?.stop();
  });
  return suite;
}
