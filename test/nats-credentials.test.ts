// A NATS server that requires a user and password: the credentials in `--nats` are used to log in,
// and never printed (not on success, not when the server refuses them).
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNats, type TestNats } from "./natsServer.ts";
import { startCli } from "./helpers.ts";

const USER = "prober";
const PASS = "s3cret-Pa55";
let server: TestNats;

beforeAll(async () => {
  server = await startTestNats({ auth: { user: USER, pass: PASS } });
}, 30_000);
afterAll(() => server?.stop());

const withCredentials = (user: string, pass: string) => server.url.replace("nats://", `nats://${user}:${pass}@`);

describe("--nats with credentials", () => {
  it("logs in with the URL's user and password, runs and verifies, and never prints the password", async () => {
    const ns = server.namespace("auth");
    const url = withCredentials(USER, PASS);
    const run = await startCli(["run", "auratown", "--seed", "5", "--ticks", "3", "--nats", url, "--namespace", ns]).done;
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/log: +jetstream:/);
    // The printed verify command names the server with its credentials elided.
    expect(run.out).toContain("npx probetown verify auratown-s5-baseline --nats nats://…@127.0.0.1:");
    const verify = await startCli(["verify", "auratown-s5-baseline", "--nats", url, "--namespace", ns]).done;
    expect(verify.code).toBe(0);
    for (const text of [run.out, run.err, verify.out, verify.err]) expect(text).not.toContain(PASS);
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
    const unset = await startCli(["verify", "x", "--nats", "env"], { PROBETOWN_NATS_URL: "" }).done;
    expect(unset.code).toBe(2);
    expect(unset.err).toMatch(/--nats env: reads the server URL from PROBETOWN_NATS_URL, which is not set/);
  }, 60_000);

  it("a refused password or a missing one is a clear usage error (exit 2) that does not echo the password", async () => {
    const wrong = await startCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", withCredentials(USER, "not-the-password"), "--namespace", server.namespace("bad")]).done;
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/refused the credentials/);
    expect(wrong.err).not.toContain("not-the-password");
    const none = await startCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", server.url, "--namespace", server.namespace("none")]).done;
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
    const run = await startCli(["run", "auratown", "--seed", "5", "--ticks", "2", "--nats", url, "--namespace", ns]).done;
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const verify = await startCli(["verify", "auratown-s5-baseline", "--nats", url, "--namespace", ns]).done;
    expect(verify.code).toBe(0);
    const wrong = await startCli(["run", "auratown", "--seed", "5", "--ticks", "1", "--nats", tokenServer.url.replace("nats://", "nats://not-the-token@"), "--namespace", tokenServer.namespace("bad")]).done;
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
    const run = await startCli(["run", "auratown", "--seed", "5", "--ticks", "2", "--nats", url, "--namespace", ns]).done;
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toContain("npx probetown verify auratown-s5-baseline --nats nats://…@127.0.0.1:");
    const slash = await startCli(["verify", "x", "--nats", oddServer.url.replace("nats://", `nats://${USER}:pa/ss@`)]).done;
    expect(slash.code).toBe(2);
    expect(slash.err).toMatch(/refused the credentials/);
    const list = await startCli(["verify", "x", "--nats", `${oddServer.url},nats://${USER}:${ODD}@127.0.0.1:1`]).done;
    expect(list.code).toBe(2);
    expect(list.err).toMatch(/--nats: expected a NATS server URL like nats:\/\/127\.0\.0\.1:4222 .*, got 'nats:\/\/…@127\.0\.0\.1:1'/);
    for (const text of [run.out, run.err, slash.out, slash.err, list.out, list.err]) {
      for (const part of ["ss/w", "w%rd", "pa/ss", "pa/"]) expect(text).not.toContain(part);
    }
  }, 60_000);
});
