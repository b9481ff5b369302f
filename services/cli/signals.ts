// Ctrl-C (or SIGTERM) asks a file run, fork or embedded sweep to stop after the tick in progress,
// so its log ends on a committed tick with its writer lock released (Node died mid-tick, silently,
// exit 130); a second one exits at once.

/** The shell's exit code for a run stopped by `reason` (the signal's name). */
export const signalExitCode = (reason: unknown): number => (reason === "SIGTERM" ? 143 : 130);

/**
 * Listens for SIGINT and SIGTERM until `release`: the first aborts `signal` (after `beforeNotice`,
 * e.g. stopping a progress bar, and a line on stderr saying so), the second exits.
 */
export function stopAfterTickOnSignals(command: string, beforeNotice: () => void = () => {}): { readonly signal: AbortSignal; readonly release: () => void } {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) process.exit(signalExitCode(signal));
    beforeNotice();
    stop.abort(signal);
    process.stderr.write(`${command}: ${signal}: stopping after the tick in progress (once more stops at once)\n`);
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  return { signal: stop.signal, release: () => void process.off("SIGINT", onSignal).off("SIGTERM", onSignal) };
}

/**
 * SIGINT and SIGTERM, in the order they arrive, until `release`. One listener stays installed from
 * the start: a listener taken off after the first signal and put back for the second left a window
 * in which the second killed the process with the default action (a worker's "second Ctrl-C").
 */
export function signalsUntilRelease(): { readonly next: () => Promise<NodeJS.Signals>; readonly release: () => void } {
  const arrived: NodeJS.Signals[] = [];
  const waiting: ((signal: NodeJS.Signals) => void)[] = [];
  const onSignal = (signal: NodeJS.Signals): void => {
    const wake = waiting.shift();
    if (wake === undefined) arrived.push(signal);
    else wake(signal);
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  return {
    next: () => {
      const signal = arrived.shift();
      return signal === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(signal);
    },
    release: () => void process.off("SIGINT", onSignal).off("SIGTERM", onSignal),
  };
}
