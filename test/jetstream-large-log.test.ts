// Reading back a log far larger than what the server will buffer for one client: a reader must
// pace its pulls by bytes, or the server cuts it off as a slow consumer and the log cannot be read
// (verify, replay, resume and follow of a large town's episode all failed that way).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../infra/nats.ts";
import { distributedBackend } from "../infra/natsBackend.ts";
import { followJetStreamLog, readJetStreamLog } from "../infra/jetStreamEventStore.ts";
import { runEpisode } from "../services/kernel/episodes.ts";
import { jetStreamWhere } from "../services/distributed/episodes.ts";
import { startTestNats, type TestNats } from "./natsServer.ts";

// The server's per-client send buffer: 1 MB here (64 MB by default), against a log of several MB;
// the readers' window scaled down with it (8 MB by default).
const MAX_PENDING = 1024 * 1024;
const WINDOW = 256 * 1024;
let server: TestNats;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startTestNats({ config: `max_pending: ${MAX_PENDING}` });
  nc = await connectNats(server.url);
}, 30_000);
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

describe("a JetStream log larger than the server's per-client buffer", () => {
  it("reads back whole, and follows to its end, without the reader being cut off", async () => {
    const ns = server.namespace("large");
    const result = await runEpisode({ world: "auratown", seed: 3, config: { extraAgents: 195 }, trace: { exporter: "none" }, snapshotEvery: 0, where: jetStreamWhere(ns) }, distributedBackend(nc, ns));
    const reader = await connectNats(server.url);
    try {
      const records = await readJetStreamLog(reader, ns, result.episode, { windowBytes: WINDOW });
      expect(records).toHaveLength(result.logRecords);
      const bytes = records.reduce((n, r) => n + JSON.stringify(r).length, 0);
      expect(bytes).toBeGreaterThan(3 * MAX_PENDING);
      const followed: number[] = [];
      for await (const record of followJetStreamLog(reader, ns, result.episode, 0, { windowBytes: WINDOW })) {
        followed.push(record.seq);
        if (followed.length === records.length) break;
      }
      expect(followed).toEqual(records.map((r) => r.seq));
    } finally {
      await reader.close();
    }
  }, 120_000);
});
