// How the JetStream store tells the server's answers apart (infra/jetstream/errors.ts): by the
// JetStream API error code, as nats-server sends it, never by matching a message's text.
import { describe, expect, it } from "vitest";
import { JetStreamApiError } from "@nats-io/jetstream";
import { ApiCode, isApiError, isStorageFull, wrongLastSequenceAt } from "../infra/jetstream/errors.ts";
import { isJetStreamStorageFull } from "../infra/nats.ts";

const apiError = (err_code: number, description: string, code = 503) => new JetStreamApiError({ code, err_code, description });

/** The message match the code checks replaced, kept here to show that they agree on what the server sends. */
const formerStorageFull = (error: unknown) =>
  error instanceof Error && error.name === "JetStreamApiError" && /insufficient (storage|resources)|resources exceeded|maximum (bytes|messages) exceeded/i.test(error.message);

describe("JetStream API error codes", () => {
  it("uses nats.js's codes where it names them", () => {
    expect([ApiCode.StreamNotFound, ApiCode.StreamWrongLastSequence, ApiCode.StreamWrongLastSequenceUnknown]).toEqual([10059, 10071, 10164]);
    expect(isApiError(apiError(10059, "stream not found", 404), ApiCode.StreamNotFound)).toBe(true);
    expect(isApiError(apiError(10071, "wrong last sequence: 3", 400), ApiCode.StreamNotFound)).toBe(false);
    expect(isApiError(new Error("stream not found"), ApiCode.StreamNotFound)).toBe(false);
  });

  it("storage is full on the server's storage and stream-limit refusals, and only on those", () => {
    const cases: [JetStreamApiError | Error, boolean][] = [
      [apiError(10023, "insufficient resources"), true], // the server's max_file_store reached
      [apiError(10047, "insufficient storage resources available", 500), true],
      [apiError(10077, "maximum bytes exceeded"), true], // a stream's max_bytes, discard new
      [apiError(10077, "maximum messages exceeded"), true],
      [apiError(10077, "maximum messages per subject exceeded"), false],
      [apiError(10077, "message too large"), false],
      [apiError(10028, "insufficient memory resources available", 500), false],
      [apiError(10071, "wrong last sequence: 7", 400), false],
      [apiError(10059, "stream not found", 404), false],
      [new Error("insufficient resources"), false], // not the server's answer
    ];
    for (const [error, full] of cases) {
      expect(isStorageFull(error), error.message).toBe(full);
      expect(isJetStreamStorageFull(error), error.message).toBe(full);
      expect(formerStorageFull(error), error.message).toBe(full);
    }
  });

  it("reads the stream seq a refused append found from a wrong-last-sequence error", () => {
    expect(wrongLastSequenceAt(apiError(10071, "wrong last sequence: 42", 400))).toBe(42);
    expect(wrongLastSequenceAt(apiError(10071, "wrong last sequence: 0", 400))).toBe(0);
    expect(wrongLastSequenceAt(apiError(10164, "wrong last sequence", 400))).toBeNull();
    expect(wrongLastSequenceAt(apiError(10059, "stream not found: 42", 404))).toBeNull();
  });
});
