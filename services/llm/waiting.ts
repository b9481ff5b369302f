// The waiting notice: while calls are in flight and none has had an answer for `waitNoticeMs`,
// `onWaiting` is told what they wait for (the CLI says it on stderr: a hung endpoint or a slow
// local model otherwise left a command silent for minutes), then again no oftener than every three
// times as long while no answer comes. The clock is the notice's alone (performance.now, an unref'd
// timer): nothing of it reaches an answer, the log or a span.

/**
 * What the gateway is waiting for, told to `onWaiting` when calls have had no answer for
 * `waitNoticeMs`: a hung endpoint or a slow local model otherwise left a command silent for
 * minutes (each attempt waits `timeoutMs`, up to `maxAttempts` a call).
 */
export interface LlmWaiting {
  /** The models of the calls in flight, sorted. */
  readonly models: readonly string[];
  /** host:port of the endpoint. */
  readonly server: string;
  /** Calls sent (or waiting to be, behind the first call to the endpoint), not answered yet. */
  readonly inFlight: number;
  /** Calls waiting for one of the `concurrency` slots. */
  readonly queued: number;
  /** How long the oldest call in flight has waited. */
  readonly oldestMs: number;
  /** Whether the endpoint has answered any call of the run (with anything, an error too). */
  readonly answeredBefore: boolean;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  /** The longest one call waits with no answer: every attempt's timeout and the backoffs between them. */
  readonly callLimitMs: number;
  /** Calls in a row without an answer after which the endpoint is given up (0: never). */
  readonly unreachableAfter: number;
  /** Calls in a row that ended without an answer so far. */
  readonly unansweredInARow: number;
}


export interface WaitingWatchOptions {
  /** 0: never (no one listens). */
  readonly waitNoticeMs: number;
  readonly onWaiting: ((waiting: LlmWaiting) => void) | undefined;
  readonly server: string;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly callLimitMs: number;
  readonly unreachableAfter: number;
  /** Calls waiting for a slot, now. */
  readonly queued: () => number;
  /** Calls in a row that ended without an answer, now. */
  readonly unansweredInARow: () => number;
}

export class WaitingWatch {
  private readonly o: WaitingWatchOptions;
  // Calls in flight by start (performance.now()).
  private readonly inFlight = new Map<number, { readonly model: string; readonly since: number }>();
  private nextCall = 0;
  // The last answer of any kind (a completion, an HTTP error, an invalid reply): the endpoint is there.
  private lastHeard = -Infinity;
  private heardOnce = false;
  private lastNotice = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(options: WaitingWatchOptions) {
    this.o = options;
  }

  /** The endpoint answered (with anything). */
  heard(): void {
    this.lastHeard = performance.now();
    this.heardOnce = true;
  }

  /** A call starts waiting for its answer; its id for `stop`. */
  start(model: string): number {
    const id = this.nextCall++;
    if (this.o.waitNoticeMs > 0) {
      this.inFlight.set(id, { model, since: performance.now() });
      if (this.timer === null) this.watch();
    }
    return id;
  }

  /** The call ended. */
  stop(id: number): void {
    if (!this.inFlight.delete(id) || this.inFlight.size > 0 || this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** Once no answer has come for `waitNoticeMs` while calls are in flight, and at most every three times that: one notice for them all. */
  private watch(): void {
    this.timer = null;
    if (this.inFlight.size === 0) return;
    const waitNoticeMs = this.o.waitNoticeMs;
    const now = performance.now();
    const oldest = Math.min(...[...this.inFlight.values()].map((c) => c.since));
    const due = (): number => Math.max(Math.max(this.lastHeard, oldest) + waitNoticeMs, this.lastNotice + 3 * waitNoticeMs);
    if (now >= due()) {
      this.lastNotice = now;
      this.o.onWaiting!({
        models: [...new Set([...this.inFlight.values()].map((c) => c.model))].sort(),
        server: this.o.server,
        inFlight: this.inFlight.size,
        queued: this.o.queued(),
        oldestMs: now - oldest,
        answeredBefore: this.heardOnce,
        timeoutMs: this.o.timeoutMs,
        maxAttempts: this.o.maxAttempts,
        callLimitMs: this.o.callLimitMs,
        unreachableAfter: this.o.unreachableAfter,
        unansweredInARow: this.o.unansweredInARow(),
      });
    }
    // Unref'd: a command whose calls are done never waits for it.
    this.timer = setTimeout(() => this.watch(), Math.max(1, due() - now));
    this.timer.unref();
  }
}
