// At most `concurrency` model calls in flight at once: an effect `Semaphore`, first come first
// served (a call that arrives while others wait queues behind them), with a count of the calls
// waiting for a slot (what the waiting notice says).
import { Effect, Semaphore } from "effect";

export class CallSlots {
  private readonly semaphore: Semaphore.Semaphore;
  private waiting = 0;

  constructor(concurrency: number) {
    this.semaphore = Semaphore.makeUnsafe(Math.max(1, Math.floor(concurrency)));
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  /** Runs `call` in a slot, once one is free; the slot is freed when it ends, however it ends. */
  run<A, E, R>(call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.suspend(() => {
      this.waiting++;
      let inSlot = false;
      return this.semaphore
        .withPermit(
          Effect.suspend(() => {
            inSlot = true;
            this.waiting--;
            return call;
          }),
        )
        .pipe(
          Effect.ensuring(
            Effect.sync(() => {
              if (!inSlot) this.waiting--;
            }),
          ),
        );
    });
  }
}
