// The town replay's frame fetching while the scrubber moves (frameFetcher in
// services/auratown/ui/townView.js), driven with fake timers: a step or a jump fetches at once, a
// drag fetches where it rests, and every fetch of a tick scrubbed past is aborted.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

interface Fetcher {
  frameAt(tick: number): unknown;
  fetching(): number[];
  want(tick: number, beside?: Array<number | undefined>): void;
  close(): void;
}
type FrameFetcher = (
  part: (params: Record<string, string>, init: { signal: AbortSignal }) => Promise<unknown>,
  o: { onFrame: (tick: number) => void; onError: (message: string) => void; debounceMs?: number },
) => Fetcher;

const TOWN_VIEW: string = "../services/auratown/ui/townView.js";
const { frameFetcher, SCRUB_DEBOUNCE_MS } = (await import(TOWN_VIEW)) as { frameFetcher: FrameFetcher; SCRUB_DEBOUNCE_MS: number };

/** A fake `part`: every request is recorded and answered only when the test says so. */
function fakeServer() {
  const requests: Array<{ tick: number; signal: AbortSignal; answer: () => void }> = [];
  const part = (params: Record<string, string>, init: { signal: AbortSignal }) =>
    new Promise<unknown>((resolve, reject) => {
      const tick = Number(params.tick);
      init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      requests.push({ tick, signal: init.signal, answer: () => resolve({ tick }) });
    });
  return { part, requests };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("the town replay's frame fetches", () => {
  it("fetches a step's tick and its neighbours at once when nothing is on its way", async () => {
    const { part, requests } = fakeServer();
    const arrived: number[] = [];
    const f = frameFetcher(part, { onFrame: (t) => arrived.push(t), onError: (m) => { throw new Error(m); } });
    f.want(0, [1, undefined]);
    expect(requests.map((r) => r.tick)).toEqual([0, 1]);
    for (const r of requests) r.answer();
    await vi.runAllTimersAsync();
    expect(arrived).toEqual([0, 1]);
    expect(f.frameAt(1)).toEqual({ tick: 1 });
    // The next step's frame is kept: nothing waits, only the new neighbour is fetched.
    f.want(1, [2, 0]);
    expect(requests.map((r) => r.tick)).toEqual([0, 1, 2]);
  });

  it("a fast drag aborts the ticks passed over and fetches only where the scrubber rests", async () => {
    const { part, requests } = fakeServer();
    const errors: string[] = [];
    const f = frameFetcher(part, { onFrame: () => undefined, onError: (m) => errors.push(m) });
    f.want(0, [1]);
    expect(requests).toHaveLength(2);
    // 30 moves, 10 ms apart (faster than SCRUB_DEBOUNCE_MS), while tick 0 and 1 are still on their way.
    for (let tick = 1; tick <= 30; tick++) {
      f.want(tick, [tick + 1, tick - 1]);
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(SCRUB_DEBOUNCE_MS).toBeGreaterThan(10);
    // The first two requests were aborted once their ticks were passed; nothing new was asked yet.
    expect(requests).toHaveLength(2);
    expect(requests.every((r) => r.signal.aborted)).toBe(true);
    expect(f.fetching()).toEqual([]);
    await vi.advanceTimersByTimeAsync(SCRUB_DEBOUNCE_MS);
    expect(requests.slice(2).map((r) => r.tick)).toEqual([30, 31, 29]);
    expect(requests.slice(2).some((r) => r.signal.aborted)).toBe(false);
    expect(errors).toEqual([]); // an abort is no failure
  });

  it("keeps a wanted fetch going, and aborts everything on close", async () => {
    const { part, requests } = fakeServer();
    const f = frameFetcher(part, { onFrame: () => undefined, onError: () => undefined });
    f.want(5, [6, 4]);
    f.want(6, [7, 5]); // 5 and 6 are still wanted: not aborted; 4 is
    expect(requests.filter((r) => r.signal.aborted).map((r) => r.tick)).toEqual([4]);
    await vi.advanceTimersByTimeAsync(SCRUB_DEBOUNCE_MS);
    expect(requests.map((r) => r.tick)).toEqual([5, 6, 4, 7]);
    f.close();
    expect(requests.every((r) => r.signal.aborted)).toBe(true);
  });
});
