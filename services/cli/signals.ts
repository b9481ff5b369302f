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
