// Runs the Transport contract against the in-process transport and against NATS (two transports on
// two connections, so every message crosses the server), plus what only NATS can show.
import { afterAll, describe, expect, it } from "vitest";
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../infra/nats.ts";
import { ERROR_HEADER, NatsTransport, RemoteError, REQUEST_ID_HEADER, RequestTimeout } from "../infra/natsTransport.ts";
import { NoResponder } from "../infra/transport.ts";
import { InProcessTransport } from "../infra/transport.ts";
import { transportContract } from "./contracts/transport.ts";
import { startTestNats } from "./natsServer.ts";
import { asleepWatch } from "./timing.ts";
import { until } from "./helpers.ts";

const nats = await startTestNats();
const connections: NatsConnection[] = [];
afterAll(async () => {
  await Promise.all(connections.map((nc) => nc.close().catch(() => undefined)));
  await nats.stop();
}, 30_000);

async function natsPair(options?: { defaultTimeoutMs?: number; livenessEveryMs?: number; lostAfterMs?: number }) {
  const [ncA, ncB] = await Promise.all([connectNats(nats.url, { name: "contract-a" }), connectNats(nats.url, { name: "contract-b" })]);
  connections.push(ncA, ncB);
  const a = new NatsTransport(ncA, options);
  const b = new NatsTransport(ncB, options);
  return {
    a,
    b,
    ncA,
    ncB,
    settle: async () => {
      await Promise.all([a.flush(), b.flush()]);
    },
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([ncA.close(), ncB.close()]);
    },
  };
}

transportContract("in-process", async () => {
  const t = new InProcessTransport();
  return { a: t, b: t, close: () => t.close() };
});

transportContract("NATS (two connections)", () => natsPair());

describe("NatsTransport specifics", () => {
  it("turns a remote handler error into a RemoteError naming the subject and the remote error", async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const stop = a.serve("pt.specific.fail", () => {
        throw new RangeError("tick 3 is out of range");
      });
      await settle();
      const error = await b.request("pt.specific.fail", {}).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteError);
      expect((error as RemoteError).message).toBe("pt.specific.fail: tick 3 is out of range");
      expect((error as RemoteError).remoteName).toBe("RangeError");
      stop();
    } finally {
      await close();
    }
  }, 30_000);

  it("times out with an error naming the subject and the timeout", async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const stop = a.serve("pt.specific.slow", () => new Promise((r) => setTimeout(() => r("late"), 1000)));
      await settle();
      const error = await b.request("pt.specific.slow", {}, { timeoutMs: 100 }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(RequestTimeout);
      expect((error as Error).message).toContain("pt.specific.slow");
      expect((error as Error).message).toContain("100 ms");
      stop();
    } finally {
      await close();
    }
  }, 30_000);

  it("uses the default timeout given to the constructor", async () => {
    const { a, b, settle, close } = await natsPair({ defaultTimeoutMs: 150 });
    try {
      const stop = a.serve("pt.specific.default", () => new Promise((r) => setTimeout(() => r("late"), 1000)));
      await settle();
      const waited = asleepWatch();
      await expect(b.request("pt.specific.default", {})).rejects.toThrow(/within 150 ms/);
      // The time waited, not the time a busy machine held this process up (test/timing.ts).
      expect(waited.asleepMs()).toBeLessThan(900);
      stop();
    } finally {
      await close();
    }
  }, 30_000);

  it("a request whose server process dies while it waits fails with NoResponder soon after, not at its timeout; a slow live server is waited for", async () => {
    const { a, b, ncA, settle, close } = await natsPair({ livenessEveryMs: 100, lostAfterMs: 300 });
    let hang = (): void => {};
    try {
      let calls = 0;
      a.serve("pt.specific.alive", () => {
        calls++;
        return new Promise((r) => setTimeout(() => r("late but here"), 800));
      });
      await settle();
      // Alive but slow: liveness checks are answered beside the handler, which runs once.
      await expect(b.request("pt.specific.alive", {}, { timeoutMs: 5000 })).resolves.toBe("late but here");
      expect(calls).toBe(1);

      a.serve("pt.specific.dies", () => new Promise<void>((r) => (hang = r))); // answers only after the test
      await settle();
      const waited = asleepWatch();
      const waiting = b.request("pt.specific.dies", {}, { timeoutMs: 20_000 }).then(() => null, (e: unknown) => e);
      setTimeout(() => void ncA.close(), 200); // the serving process is gone: its subscriptions with it
      const error = await waiting;
      expect(error).toBeInstanceOf(NoResponder);
      expect((error as Error).message).toContain("pt.specific.dies");
      expect(waited.asleepMs()).toBeLessThan(3000);
    } finally {
      hang();
      await close();
    }
  }, 30_000);

  it("answers undefined (an empty body) and carries a request of undefined", async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const seen: unknown[] = [];
      const stop = a.serve("pt.specific.empty", (m) => {
        seen.push(m);
        return undefined;
      });
      await settle();
      expect(await b.request("pt.specific.empty", undefined)).toBeUndefined();
      expect(seen).toEqual([undefined]);
      stop();
    } finally {
      await close();
    }
  }, 30_000);

  it("fails fast, naming the size, when a reply or a request exceeds the server's max_payload", async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const big = "x".repeat(1_500_000);
      let calls = 0;
      const stop = a.serve("pt.specific.big", (m: { big: boolean }) => (++calls, m.big ? { big } : "small"));
      await settle();
      const waited = asleepWatch();
      const error = await b.request("pt.specific.big", { big: true }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteError);
      expect((error as Error).message).toMatch(/reply of 1500\d{3} bytes.*max_payload/);
      expect(waited.asleepMs()).toBeLessThan(5000);
      expect(await b.request("pt.specific.big", { big: false })).toBe("small");
      await expect(b.request("pt.specific.big", { big: false, pad: big })).rejects.toThrow(/pt\.specific\.big.*max_payload/);
      expect(calls).toBe(2);
      stop();
    } finally {
      await close();
    }
  }, 30_000);

  it("close() leaves the connection open, finishes the request in hand, and stops serving", async () => {
    const { a, b, ncA, settle, close } = await natsPair();
    try {
      let inHand!: () => void;
      const taken = new Promise<void>((r) => (inHand = r));
      a.serve("pt.specific.close", () => {
        inHand();
        return new Promise((r) => setTimeout(() => r("done"), 50));
      });
      await settle();
      const pending = b.request("pt.specific.close", {});
      // Closed once the handler has the request (10 ms did not always get it there on a loaded machine).
      await taken;
      await a.close();
      expect(await pending).toBe("done");
      expect(ncA.isClosed()).toBe(false);
      await ncA.flush();
      await expect(b.request("pt.specific.close", {}, { timeoutMs: 2000 })).rejects.toThrow(/no actor host answers/);
      await expect(a.request("pt.specific.close", {})).rejects.toThrow(/closed/);
    } finally {
      await close();
    }
  }, 30_000);
});

describe("NatsTransport across a NATS outage (a server of its own, stopped and started again)", () => {
  const connect = (url: string, name: string, outageMs: number) => connectNats(url, { name, outageMs });

  it("a copy of a request (the same request id) is answered from the first answer: the handler runs once, an error too", async () => {
    const { a, ncB, settle, close } = await natsPair();
    try {
      let calls = 0;
      a.serve("pt.outage.once", (n: number) => {
        calls++;
        if (n < 0) throw new RangeError("negative");
        return n + calls;
      });
      await settle();
      const headers = (id: string) => {
        const h = natsHeaders();
        h.set(REQUEST_ID_HEADER, id);
        return h;
      };
      const replies = await Promise.all([1, 1].map(() => ncB.request("pt.outage.once", JSON.stringify(1), { timeout: 5000, headers: headers("r-1") })));
      expect(replies.map((m) => m.json())).toEqual([2, 2]);
      expect(calls).toBe(1);
      // Another id runs the handler again; a failure is answered alike to its copy.
      expect((await ncB.request("pt.outage.once", JSON.stringify(1), { timeout: 5000, headers: headers("r-2") })).json()).toBe(3);
      const failed = await Promise.all([1, 2].map(() => ncB.request("pt.outage.once", JSON.stringify(-1), { timeout: 5000, headers: headers("r-3") })));
      expect(failed.map((m) => JSON.parse(m.headers!.get(ERROR_HEADER)).message)).toEqual(["negative", "negative"]);
      expect(calls).toBe(3);
    } finally {
      await close();
    }
  });

  it("a request sent while the server is away, whose subject is served again only after it is back, is answered (once) instead of failing with NoResponder", async () => {
    const own = await startTestNats({ own: true });
    const [ncHost, ncAsker] = await Promise.all([connect(own.url, "outage-host", 10_000), connect(own.url, "outage-asker", 10_000)]);
    const host = new NatsTransport(ncHost);
    const asker = new NatsTransport(ncAsker);
    try {
      let calls = 0;
      let asked: Promise<unknown> = Promise.resolve();
      await own.restart({
        hard: true,
        whileDown: async () => {
          asked = asker.request("pt.outage.late", 41).then((v) => v, (e: unknown) => e);
        },
      });
      // The asker is back and its request has reached the server, which found nobody serving it.
      await until(() => ncAsker.flush().then(() => true, () => false), "the asker's reconnect");
      // Before, it had failed with NoResponder by now. The host serves again (late: it reconnects too).
      host.serve("pt.outage.late", (n: number) => {
        calls++;
        return n + 1;
      });
      expect(await asked).toBe(42);
      expect(calls).toBe(1);
    } finally {
      await Promise.all([host.close(), asker.close()]);
      await Promise.all([ncHost.close(), ncAsker.close()]);
      await own.stop();
    }
  }, 60_000);

  it("a request waiting while the server stays away past the window fails then (RequestTimeout), not at its own timeout", async () => {
    const own = await startTestNats({ own: true });
    const [ncHost, ncAsker] = await Promise.all([connect(own.url, "away-host", 1000), connect(own.url, "away-asker", 1000)]);
    const host = new NatsTransport(ncHost);
    const asker = new NatsTransport(ncAsker);
    try {
      host.serve("pt.outage.away", () => new Promise(() => undefined)); // never answers: only the outage decides
      await host.flush();
      let error: unknown = null;
      await own.restart({
        hard: true,
        whileDown: async () => {
          error = await asker.request("pt.outage.away", 1, { timeoutMs: 120_000 }).then(() => null, (e: unknown) => e);
        },
      });
      expect(error).toBeInstanceOf(RequestTimeout);
      expect((error as RequestTimeout).subject).toBe("pt.outage.away");
      expect((error as RequestTimeout).timeoutMs).toBeLessThan(120_000);
    } finally {
      await Promise.all([host.close(), asker.close()]);
      await Promise.all([ncHost.close(), ncAsker.close()]);
      await own.stop();
    }
  }, 60_000);
});
