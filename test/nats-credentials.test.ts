// A NATS server that requires a user and password: the credentials in `--nats` are used to log in,
// and never printed (not on success, not when the server refuses them).
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startTestNats, type TestNats } from "./natsServer.ts";
import { repoRoot, runCli, startCli, tempDir } from "./helpers.ts";

const USER = "prober";
const PASS = "s3cret-Pa55";
let server: TestNats;

beforeAll(async () => {
  server = await startTestNats({ auth: { user: USER, pass: PASS } });
}, 30_000);
afterAll(() => server?.stop());

const withCredentials = (user: string, pass: string) => server.url.replace("nats://", `nats://${user}:${pass}@`);

/** A run's `check:` line: the command, and the URL it says to export first (null: nothing to export). */
function runnableHint(out: string): { command: string; exported: string | null } {
  const line = /^check: (.*)$/m.exec(out)?.[1] ?? "";
  const m = /^(.*?) \(first `export PROBETOWN_NATS_URL='([^']+)'`, the server's (?:user and password|token) in place of <(?:user>:<password|token)>\)$/.exec(line);
  return m === null ? { command: line, exported: null } : { command: m[1]!, exported: m[2]! };
}

/** Runs a printed `npx probetown …` command line (no quoting in it) with this repo's CLI. */
const runPrinted = (command: string, env: Record<string, string>) => runCli(command.replace(/^npx probetown /, "").split(" "), undefined, env);

describe("--nats with credentials", () => {
  it("logs in with the URL's user and password, runs and verifies, and never prints the password", async () => {
    const ns = server.namespace("auth");
    const url = withCredentials(USER, PASS);
    const run = await runCli(["run", "auratown", "--seed", "5", "--ticks", "3", "--nats", url, "--namespace", ns]);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/log: +jetstream:/);
    // The printed verify command reads the URL from PROBETOWN_NATS_URL and says what to export
    // there, the password a placeholder; filled in, it runs as printed (it named `nats://…@host`,
    // which cannot log in).
    const hint = runnableHint(run.out);
    expect(hint.command).toBe(`npx probetown verify auratown-s5-baseline --nats env --namespace ${ns}`);
    expect(hint.exported).toBe(server.url.replace("nats://", "nats://<user>:<password>@"));
    const verify = await runPrinted(hint.command, { PROBETOWN_NATS_URL: hint.exported!.replace("<user>:<password>", `${USER}:${PASS}`) });
    expect(verify.err).toBe("");
    expect(verify.out).toMatch(/^OK: auratown-s5-baseline: /);
    expect(verify.code).toBe(0);
    for (const text of [run.out, run.err, verify.out, verify.err]) expect(text).not.toContain(PASS);
    // Given `--nats env`, the hint needs nothing more: the variable holds the URL already.
    const fromEnv = await runCli(["run", "auratown", "--seed", "6", "--ticks", "2", "--nats", "env", "--namespace", ns], undefined, { PROBETOWN_NATS_URL: url });
    expect(fromEnv.code).toBe(0);
    expect(runnableHint(fromEnv.out)).toEqual({ command: `npx probetown verify auratown-s6-baseline --nats env --namespace ${ns}`, exported: null });
    expect((await runPrinted(runnableHint(fromEnv.out).command, { PROBETOWN_NATS_URL: url })).code).toBe(0);
    // So does a sweep's hint to start workers.
    const queued = startCli(["sweep", "auratown", "--seeds", "1", "--ticks", "1", "--nats", url, "--namespace", server.namespace("queued")]);
    let said = "";
    queued.child.stderr!.on("data", (d: Buffer) => (said += d.toString()));
    while (!said.includes("start workers with")) await new Promise((r) => setTimeout(r, 100));
    queued.child.kill("SIGINT");
    const sweep = await queued.done;
    expect(sweep.err).toMatch(/start workers with `probetown worker --nats env --namespace \S+` \(first `export PROBETOWN_NATS_URL='nats:\/\/<user>:<password>@127\.0\.0\.1:\d+'`, the server's user and password in place of <user>:<password>\)/);
    expect(sweep.err).not.toContain(PASS);
  }, 60_000);

  it("`--nats env` reads the URL from PROBETOWN_NATS_URL: a sweep and its local workers log in with no password on any command line", async () => {
    const ns = server.namespace("env");
    const sweep = startCli(["sweep", "auratown", "--seeds", "1-6", "--ticks", "3", "--nats", "env", "--namespace", ns, "--workers", "2"], { PROBETOWN_NATS_URL: withCredentials(USER, PASS) });
    // While it runs, read every process's command line, as `ps` shows them.
    const commandLines = new Set<string>();
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
          try {
            commandLines.add(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" "));
          } catch {
            // gone meanwhile
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const result = await sweep.done;
    running = false;
    await watching;
    expect(result.err).not.toContain(PASS);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/6 episodes: 6 ok/);
    expect([...commandLines].some((c) => c.includes("worker --nats env"))).toBe(true);
    expect([...commandLines].filter((c) => c.includes("cli/main.ts") && c.includes(PASS))).toEqual([]);
    const unset = await runCli(["verify", "x", "--nats", "env"], undefined, { PROBETOWN_NATS_URL: "" });
    expect(unset.code).toBe(2);
    expect(unset.err).toMatch(/--nats env: reads the server URL from PROBETOWN_NATS_URL, which is not set/);
  }, 60_000);

  it("a refused password or a missing one is a clear usage error (exit 2) that does not echo the password", async () => {
    const wrong = await runCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", withCredentials(USER, "not-the-password"), "--namespace", server.namespace("bad")]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/refused the credentials/);
    expect(wrong.err).not.toContain("not-the-password");
    const none = await runCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", server.url, "--namespace", server.namespace("none")]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/authori[sz]ation|credentials/i);
  }, 60_000);
});

describe("--nats with a token (nats://<token>@host, as the NATS CLI takes it)", () => {
  const TOKEN = "t0ken-S3CRET";
  let tokenServer: TestNats;
  beforeAll(async () => {
    tokenServer = await startTestNats({ auth: { token: TOKEN } });
  }, 30_000);
  afterAll(() => tokenServer?.stop());

  it("logs in with the token and never prints it; a wrong token is refused without echoing it", async () => {
    const ns = tokenServer.namespace("token");
    const url = tokenServer.url.replace("nats://", `nats://${TOKEN}@`);
    const run = await runCli(["run", "auratown", "--seed", "5", "--ticks", "2", "--nats", url, "--namespace", ns]);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    // Its hint says to export the URL with the token as a placeholder; filled in, it runs.
    const hint = runnableHint(run.out);
    expect(hint.exported).toBe(tokenServer.url.replace("nats://", "nats://<token>@"));
    const verify = await runPrinted(hint.command, { PROBETOWN_NATS_URL: hint.exported!.replace("<token>", TOKEN) });
    expect(verify.code).toBe(0);
    const wrong = await runCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", tokenServer.url.replace("nats://", "nats://not-the-token@"), "--namespace", tokenServer.namespace("bad")]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/refused the credentials.*nats:\/\/token@host/);
    for (const text of [run.out, run.err, verify.out, verify.err, wrong.out, wrong.err]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain("not-the-token");
    }
  }, 60_000);
});

describe("--nats with a password typed as it is ('@', '/' and '%' unescaped)", () => {
  const ODD = "p@ss/w%rd";
  let oddServer: TestNats;
  beforeAll(async () => {
    oddServer = await startTestNats({ auth: { user: USER, pass: ODD } });
  }, 30_000);
  afterAll(() => oddServer?.stop());

  it("logs in with it and never prints any of it; a list of servers is refused without echoing a password in it", async () => {
    const ns = oddServer.namespace("odd");
    // Before, the URL was split at its first '@' and refused, printing 'nats://…@ss/w%rd@…'; with a
    // '/' before the '@' nothing was taken for credentials and the whole URL was printed.
    const url = oddServer.url.replace("nats://", `nats://${USER}:${ODD}@`);
    const run = await runCli(["run", "auratown", "--seed", "5", "--ticks", "2", "--nats", url, "--namespace", ns]);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(runnableHint(run.out)).toEqual({ command: `npx probetown verify auratown-s5-baseline --nats env --namespace ${ns}`, exported: oddServer.url.replace("nats://", "nats://<user>:<password>@") });
    const slash = await runCli(["verify", "x", "--nats", oddServer.url.replace("nats://", `nats://${USER}:pa/ss@`)]);
    expect(slash.code).toBe(2);
    expect(slash.err).toMatch(/refused the credentials/);
    const list = await runCli(["verify", "x", "--nats", `${oddServer.url},nats://${USER}:${ODD}@127.0.0.1:1`]);
    expect(list.code).toBe(2);
    expect(list.err).toMatch(/--nats: expected a NATS server URL like nats:\/\/127\.0\.0\.1:4222 .*, got 'nats:\/\/…@127\.0\.0\.1:1'/);
    for (const text of [run.out, run.err, slash.out, slash.err, list.out, list.err]) {
      for (const part of ["ss/w", "w%rd", "pa/ss", "pa/"]) expect(text).not.toContain(part);
    }
  }, 60_000);
});

describe("docker-compose.yml's NATS server (infra/nats-server.conf) with its login", () => {
  const PASSWORD = "c0mpose-S3CRET";
  let port = 0;
  let store = "";
  let dir = "";
  let server: ReturnType<typeof spawn> | null = null;
  beforeAll(async () => {
    // The shipped file, only its addresses and store made local (the container's 0.0.0.0:4222 and /data).
    dir = tempDir("compose-nats");
    store = join(dir, "store");
    port = await freePort();
    const config = readFileSync(join(repoRoot, "infra/nats-server.conf"), "utf8")
      .replace("0.0.0.0:4222", `127.0.0.1:${port}`)
      .replace(/^http: .*$/m, "")
      .replace("/data/jetstream", store)
      .replace("20G", "1G");
    writeFileSync(join(dir, "nats.conf"), config);
    server = spawn("nats-server", ["-c", join(dir, "nats.conf")], { stdio: "ignore", env: { ...process.env, NATS_PASSWORD: PASSWORD } });
    for (let tries = 0; ; tries++) {
      try {
        await (await connect({ servers: `127.0.0.1:${port}`, user: "probetown", pass: PASSWORD, reconnect: false, timeout: 500 })).close();
        break;
      } catch (error) {
        if (tries > 200) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }, 30_000);
  afterAll(() => void server?.kill("SIGTERM"));

  /** Every file under `root`, read as bytes: the password must be in none. */
  const filesHolding = (root: string, text: string): string[] =>
    readdirSync(root, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && readFileSync(join(f.parentPath, f.name)).includes(text)).map((f) => join(f.parentPath, f.name));

  it("refuses a client without the password; probetown logs in with the compose URL and the password reaches no log record, meta, trace, job or output", async () => {
    const compose = parseYaml(readFileSync(join(repoRoot, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, { environment?: Record<string, string> }> };
    // The URL every probetown service gets, its password set (as PROBETOWN_NATS_PASSWORD would) and its host here.
    const url = compose.services.worker!.environment!.PROBETOWN_NATS_URL!.replace("${PROBETOWN_NATS_PASSWORD:-probetown-local}", PASSWORD).replace("@nats:4222", `@127.0.0.1:${port}`);
    expect(url).toBe(`nats://probetown:${PASSWORD}@127.0.0.1:${port}`);
    const anonymous = await runCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", `nats://127.0.0.1:${port}`, "--namespace", "anon"]);
    expect(anonymous.code).toBe(2);
    expect(anonymous.err).toMatch(/refused the credentials/);
    const env = { PROBETOWN_NATS_URL: url };
    const trace = join(dir, "run.trace.jsonl");
    const run = await runCli(["run", "auratown", "--seed", "5", "--ticks", "3", "--nats", "env", "--namespace", "compose", "--trace", `jsonl:${trace}`], undefined, env);
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const sweepTrace = join(dir, "sweep.trace.jsonl");
    const sweep = await runCli(["sweep", "auratown", "--seeds", "1-2", "--ticks", "2", "--nats", "env", "--namespace", "compose-sweep", "--workers", "1", "--trace", `jsonl:${sweepTrace}`], undefined, env);
    expect(sweep.code).toBe(0);
    const verify = await runCli(["verify", "auratown-s5-baseline", "--nats", "env", "--namespace", "compose"], undefined, env);
    expect(verify.code).toBe(0);
    // Records (their meta too), snapshots, locks, jobs and results are in the server's store; spans in the trace files.
    expect(readFileSync(trace, "utf8").length).toBeGreaterThan(0);
    expect(filesHolding(store, "auratown-s5-baseline").length).toBeGreaterThan(0);
    expect(filesHolding(dir, PASSWORD)).toEqual([]);
    for (const text of [run.out, run.err, sweep.out, sweep.err, verify.out, verify.err, anonymous.err]) expect(text).not.toContain(PASSWORD);
  }, 90_000);
});
