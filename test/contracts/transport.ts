// The Transport contract (DESIGN §7): the in-process transport and the NATS one must pass the same
// assertions. `open` gives two transports, `a` (serving) and `b` (requesting); they may be one and
// the same (in process) or sit on two connections, so that every message crosses the server.
// `settle`, when given, waits until subscriptions and stops made so far are in effect at the server
// (over NATS a subscription travels on its own connection, racing the other's requests).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoResponder, type Headers, type Transport } from "../../infra/transport.ts";

export interface TransportPair {
  readonly a: Transport;
  readonly b: Transport;
  readonly settle?: () => Promise<void>;
  close(): Promise<void>;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

let unique = 0;

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}

export function transportContract(name: string, open: () => Promise<TransportPair>): void {
  describe(`Transport contract: ${name}`, () => {
    let pair: TransportPair;
    const subject = (label: string) => `pt.contract.${label}.${process.pid}-${++unique}`;
    const settle = async () => pair.settle?.();

    beforeAll(async () => {
      pair = await open();
    }, 30_000);
    afterAll(async () => {
      await pair?.close();
    });

    it("carries a JSON request and its headers to the handler, and the JSON reply back", async () => {
      const s = subject("echo");
      const seen: { message: unknown; headers: Headers }[] = [];
      const stop = pair.a.serve<{ kind: string; record: unknown }, unknown>(s, (message, headers) => {
        seen.push({ message, headers: { ...headers } });
        return { replies: [[{ type: "x", to: null, payload: { n: 1, text: "é\n\"" } }], []], got: message.kind };
      });
      await settle();
      const headers = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "pt-event": "ep-1:42" };
      const message = { kind: "deliver", record: { type: "tick.started", payload: { tick: 3, list: [1, "two", null, { deep: true }] }, seq: 42 } };
      const reply = await pair.b.request(s, message, { headers });
      expect(reply).toEqual({ replies: [[{ type: "x", to: null, payload: { n: 1, text: "é\n\"" } }], []], got: "deliver" });
      expect(seen).toEqual([{ message, headers }]);
      const noHeaders = await pair.b.request(s, { kind: "digest", record: null });
      expect(noHeaders).toMatchObject({ got: "digest" });
      expect(seen[1]!.headers).toEqual({});
      stop();
    });

    it("handles concurrent requests to one subject one at a time, in arrival order", async () => {
      const s = subject("order");
      const events: string[] = [];
      let running = 0;
      let overlapped = false;
      const stop = pair.a.serve<{ i: number }, { i: number }>(s, async ({ i }) => {
        if (++running > 1) overlapped = true;
        events.push(`start ${i}`);
        await delay(i % 2 === 0 ? 15 : 1);
        events.push(`end ${i}`);
        running--;
        return { i };
      });
      await settle();
      const n = 8;
      const replies = await Promise.all(Array.from({ length: n }, (_, i) => pair.b.request<{ i: number }, { i: number }>(s, { i })));
      expect(replies.map((r) => r.i)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(overlapped).toBe(false);
      expect(events).toEqual(Array.from({ length: n }, (_, i) => [`start ${i}`, `end ${i}`]).flat());
      stop();
    });

    it("keeps order across synchronous and asynchronous replies and failures", async () => {
      const s = subject("mixed");
      const order: number[] = [];
      const stop = pair.a.serve<{ i: number }, number>(s, ({ i }) => {
        order.push(i);
        if (i % 3 === 0) return delay(5).then(() => i);
        if (i % 3 === 1) throw new Error(`bad ${i}`);
        return i;
      });
      await settle();
      const outcomes = await Promise.all(Array.from({ length: 9 }, (_, i) => pair.b.request<{ i: number }, number>(s, { i }).then((v) => v, (e: Error) => e.message)));
      expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      expect(outcomes.map((o, i) => (typeof o === "string" ? o.includes(`bad ${i}`) : o))).toEqual([0, true, 2, 3, true, 5, 6, true, 8]);
      stop();
    });

    it("rejects the request with the remote message when the handler throws, and keeps serving", async () => {
      const s = subject("fails");
      const stop = pair.a.serve<{ fail: boolean }, string>(s, async ({ fail }) => {
        if (fail) {
          const error = new TypeError("actor agent/ana cannot take 'tick.phase':\nno such state");
          throw error;
        }
        return "ok";
      });
      await settle();
      const error = await pair.b.request(s, { fail: true }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain("actor agent/ana cannot take 'tick.phase':\nno such state");
      expect(await pair.b.request(s, { fail: false })).toBe("ok");
      stop();
    });

    it("rejects with NoResponder when nothing serves the subject", async () => {
      const s = subject("nobody");
      const error = await pair.b.request(s, { x: 1 }, { timeoutMs: 5000 }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(NoResponder);
      expect((error as Error).message).toContain(s);
    });

    it("stops serving when stop() is called: later requests get NoResponder", async () => {
      const s = subject("stopped");
      let calls = 0;
      const stop = pair.a.serve(s, () => ++calls);
      await settle();
      expect(await pair.b.request(s, null)).toBe(1);
      stop();
      stop(); // idempotent
      await settle();
      const error = await pair.b.request(s, null, { timeoutMs: 5000 }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(NoResponder);
      expect(calls).toBe(1);
      // and the subject can be served again
      const again = pair.a.serve(s, () => "again");
      await settle();
      expect(await pair.b.request(s, null)).toBe("again");
      again();
    });

    it("refuses to serve a subject twice in one transport", async () => {
      const s = subject("twice");
      const stop = pair.a.serve(s, () => 1);
      expect(() => pair.a.serve(s, () => 2)).toThrow(/already served/);
      stop();
    });

    it("delivers published messages to subscribers, and stops after unsubscribe", async () => {
      const s = subject("events");
      const got: unknown[] = [];
      const unsubscribe = pair.b.subscribe<unknown>(s, (m) => got.push(m));
      await settle();
      pair.a.publish(s, { n: 1, text: "one" });
      pair.a.publish(s, { n: 2, list: [1, 2] });
      await until(() => got.length >= 2, "two published messages");
      expect(got).toEqual([{ n: 1, text: "one" }, { n: 2, list: [1, 2] }]);
      unsubscribe();
      await settle();
      pair.a.publish(s, { n: 3 });
      // a probe published after it on the same path arrives only after it would have
      const probe: unknown[] = [];
      const p = pair.b.subscribe<unknown>(`${s}.probe`, (m) => probe.push(m));
      await settle();
      pair.a.publish(`${s}.probe`, 1);
      await until(() => probe.length === 1, "the probe message");
      p();
      expect(got).toHaveLength(2);
    });
  });
}
