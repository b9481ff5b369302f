// What one sync of the log costs on this machine's disk (issue 26): a tick's records (~9 KB) appended
// and synced, 200 times, each way the file store could: fsync, fdatasync, O_DSYNC, and for scale an
// overwrite in place (no size change) and no sync at all. Alternated over three rounds, since a
// shared machine's disk moves between them. `node bench/fsyncCost.ts [dir]` (default: the OS temp dir).
import { closeSync, constants, fdatasyncSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(process.argv[2] ?? tmpdir(), "fsync-cost-"));
const tick = Buffer.from(`${"x".repeat(9000)}\n`);
const N = 200;

function perOp(open: () => number, op: (fd: number, i: number) => void): number {
  const fd = open();
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) op(fd, i);
  const micros = Number(process.hrtime.bigint() - started) / 1e3 / N;
  closeSync(fd);
  return micros;
}

const ways: Record<string, (file: string) => number> = {
  "write + fsync": (file) => perOp(() => openSync(file, "a"), (fd) => (writeSync(fd, tick), fsyncSync(fd))),
  "write + fdatasync": (file) => perOp(() => openSync(file, "a"), (fd) => (writeSync(fd, tick), fdatasyncSync(fd))),
  "write with O_DSYNC": (file) => perOp(() => openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_DSYNC), (fd) => writeSync(fd, tick)),
  "overwrite in place + fdatasync": (file) =>
    perOp(
      () => {
        const fd = openSync(file, "w");
        writeSync(fd, Buffer.alloc(tick.length * N));
        fsyncSync(fd);
        return fd;
      },
      (fd, i) => (writeSync(fd, tick, 0, tick.length, i * tick.length), fdatasyncSync(fd)),
    ),
  "write, no sync": (file) => perOp(() => openSync(file, "a"), (fd) => writeSync(fd, tick)),
};

const results: Record<string, number[]> = {};
for (let round = 0; round < 3; round++) {
  for (const [name, way] of Object.entries(ways)) {
    const file = join(dir, `${round}-${name.replace(/\W+/g, "-")}`);
    (results[name] ??= []).push(way(file));
    rmSync(file);
  }
}
rmSync(dir, { recursive: true, force: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of Object.entries(results)) console.log(`${name.padEnd(32)} median ${median(xs).toFixed(0).padStart(6)} µs per tick (rounds: ${xs.map((x) => x.toFixed(0)).join(", ")})`);
