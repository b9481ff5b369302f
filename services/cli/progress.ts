// The progress bar of the commands that read or run an episode tick by tick, on stderr.
import cliProgress from "cli-progress";

export function progressBar(enabled: boolean, label: string): { update: (done: number, total: number) => void; stop: () => void } {
  if (!enabled || !process.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} ticks · {eta_formatted} left`, stream: process.stderr, hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}
