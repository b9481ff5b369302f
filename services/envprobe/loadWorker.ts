// A report worker thread: reads a share of a sweep's episode logs and sends back their metrics, or
// the first damaged log's error (its fields: an Error's class does not cross threads).
import { parentPort, workerData } from "node:worker_threads";
import { LogCorrupted } from "../../events/errors.ts";
import { metricsOfLog } from "./metrics.ts";

const { dirs } = workerData as { dirs: string[] };
try {
  parentPort!.postMessage({ metrics: dirs.map((d) => metricsOfLog(d)) });
} catch (error) {
  parentPort!.postMessage({ damaged: error instanceof LogCorrupted ? { file: error.file, line: error.line, reason: error.reason } : null, message: (error as Error).message });
}
